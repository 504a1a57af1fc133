// The one way the page talks to the server (the JSON API, docs/openapi.yaml), the bearer token
// it sends, and how to read the API's times. Every module that asks the server calls api().

const TOKEN_KEY = "cudojo.token";  // localStorage

export const token = () => localStorage.getItem(TOKEN_KEY);
export const storeToken = (bearer) => localStorage.setItem(TOKEN_KEY, bearer);
export const forgetToken = () => localStorage.removeItem(TOKEN_KEY);

// Every call goes through here. A failure throws an Error carrying the HTTP status (`status`), so
// callers can tell a refused token (401) from a route this server does not have yet (404).
// `options.token` replaces the stored token for one call (signing in with a token).
export async function api(path, options = {}) {
  const { token: override, idempotencyKey, ...rest } = options;
  const headers = { "Content-Type": "application/json" };
  const bearer = override ?? token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const response = await fetch(path, { ...rest, headers });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const retry = response.headers.get("Retry-After");
    const error = new Error((body.error || `HTTP ${response.status}`) + (retry ? ` (retry in ${retry} s)` : ""));
    error.status = response.status;
    throw error;
  }
  return body;
}

// A time from the API: seconds since 1970 (created_at), or an ISO 8601 string.
export function toDate(value) {
  return new Date(typeof value === "number" ? value * 1000 : value);
}
