// The one way the page talks to the server (the JSON API, docs/openapi.yaml), the bearer token
// it sends, and how to read the API's times. Every module that asks the server calls api(), or
// apiFile() for a download (an export, a CSV of tokens).
//
// A 401 to a call made with the stored token means the server no longer knows that token (an
// instructor reset it, or the learner was removed): the call still fails, and TOKEN_REFUSED
// (events.js) tells account.js to sign the page out. A call with its own token (signing in) does
// not send it: a mistyped token is that form's business.

import { TOKEN_REFUSED, send } from "./events.js";

const TOKEN_KEY = "cudojo.token";  // localStorage

export const token = () => localStorage.getItem(TOKEN_KEY);
export const storeToken = (bearer) => localStorage.setItem(TOKEN_KEY, bearer);
export const forgetToken = () => localStorage.removeItem(TOKEN_KEY);

// The fetch behind api() and apiFile(): the headers, and an Error carrying the HTTP status
// (`status`), the API's own fields (`body`, e.g. a roster's `problems`) and the seconds Retry-After
// asks for (`retryAfter`) for any answer but 2xx,
// so callers can tell a refused token (401) from a route this server does not have yet (404).
// `options.token` replaces the stored token for one call (signing in with a token);
// `options.keepalive` lets the request outlive the page (a draft saved on pagehide).
async function request(path, options) {
  const { token: override, idempotencyKey, ...rest } = options;
  const headers = { "Content-Type": "application/json" };
  const bearer = override ?? token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const response = await fetch(path, { ...rest, headers });
  if (response.ok) return response;
  const body = await response.json().catch(() => ({}));
  if (response.status === 401 && override === undefined && bearer) send(TOKEN_REFUSED);
  const retry = response.headers.get("Retry-After");
  const error = new Error((body.error || `HTTP ${response.status}`) + (retry ? ` (retry in ${retry} s)` : ""));
  error.status = response.status;
  error.body = body;
  error.retryAfter = retry ? Number(retry) : null;
  throw error;
}

// A JSON call: resolves to the answer's body.
export async function api(path, options = {}) {
  const response = await request(path, options);
  return response.json().catch(() => ({}));
}

// A file the server sends as an attachment: resolves to { blob, filename }, the name from the
// Content-Disposition header, else `fallbackName`.
export async function apiFile(path, options = {}, fallbackName = "download") {
  const response = await request(path, options);
  const disposition = response.headers.get("Content-Disposition") || "";
  const named = /filename="?([^";]+)"?/.exec(disposition);
  return { blob: await response.blob(), filename: named ? named[1] : fallbackName };
}

// A time from the API: seconds since 1970 (created_at), or an ISO 8601 string.
export function toDate(value) {
  return new Date(typeof value === "number" ? value * 1000 : value);
}

// "2 Dec 2026, 14:05" in the browser's language and time zone; "" for no time.
export function localTime(value) {
  if (value === null || value === undefined) return "";
  return toDate(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
