// Saving a file the server sends as an attachment (an export, a CSV of tokens). The API wants the
// token in a header, so a plain link cannot fetch it: the page fetches it (api.js's apiFile) and
// hands the browser the Blob through a temporary <a download> with an object URL.

import { el } from "../dom.js";
import { apiFile } from "../api.js";

// Resolves to the file's name once the browser has been given it.
export async function saveFile(path, options = {}, fallbackName = "download") {
  const { blob, filename } = await apiFile(path, options, fallbackName);
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: filename, hidden: "" });
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started by then; the URL is not needed after it.
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  return filename;
}
