// The header's message line (#account-message): where the account's news and problems are said,
// by account.js, and by leaderboard.js and run.js when an account call of theirs fails. Its own
// module, below all of them, so that none of them needs another to speak there.

import { $ } from "./dom.js";

// Shows `text` (nothing hides the line); `kind` is "bad" (the default) or "ok", for its colour, and
// the words say which on their own.
export function accountMessage(text, kind = "bad") {
  const box = $("#account-message");
  box.textContent = text || "";
  box.className = `message ${kind}`;
  box.hidden = !text;
}
