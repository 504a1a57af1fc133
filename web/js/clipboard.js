// Copying a text the page shows once (a token, a link to a run): the learner's page (share_controls.js)
// and the staff's (staff/secret.js, staff/settings.js, through staff/ui.js).

// Copies `text`; where the clipboard is refused (a page on plain HTTP, an older browser), selects it
// in `input` for Ctrl+C and resolves to false.
export async function copyText(text, input = null) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (input) input.select();
    return false;
  }
}
