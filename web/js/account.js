// Who is signed in: joining a class with its invite code or signing up on one's own (the token
// shown once, with Copy), signing in with a token, signing out, and whether the stored token is
// still known: on load, on every call (a 401, TOKEN_REFUSED from api.js) and whenever the tab is
// shown again. Owns the header's account area (#account); run.js signs up
// before a first run. The message line itself is message.js's. After every change of who is signed
// in it sends ACCOUNT_CHANGED (events.js). Staff sign in with a token here too; main.js then shows
// their view.
//
// localStorage: cudojo.token (the bearer token, api.js), cudojo.name, cudojo.class-name and
// cudojo.learner-id (what the header shows, and whose drafts this browser holds, before the
// server has answered). sessionStorage: cudojo.notice, a message kept across one reload.

import { $ } from "./dom.js";
import { accountMessage } from "./message.js";
import { state } from "./state.js";
import { api, forgetToken, storeToken, token } from "./api.js";
import { confirmDialog } from "./dialog.js";
import { flushDrafts, forgetDraftsOwner, hasUnsentDrafts, setDraftsOwner } from "./drafts.js";
import { forgetResults } from "./report.js";
import { ACCOUNT_CHANGED, TOKEN_REFUSED, on, send } from "./events.js";

const NAME_KEY = "cudojo.name";
const CLASS_KEY = "cudojo.class-name";
const ID_KEY = "cudojo.learner-id";
const NOTICE_KEY = "cudojo.notice";
const REFUSED = "Your token is no longer valid (this server does not know it any more: an instructor may have " +
  "reset it), so you are signed out. Ask your instructor for your new token and sign in with it below, " +
  "or join again with your class's invite code.";
const REFUSED_STAFF = "Your token is no longer valid (an administrator may have reset it), so you are signed out. " +
  "Ask an administrator for a new one (cudojo admin reset-token on the server machine) and sign in with it.";

// kind: "bad" (an error, the default) or "ok"; no text hides the line.
// The header as the stored token says: the name, the class and "Sign out", or the two forms.
// The leaderboard opt-in is only for someone signed in.
export function showLearner() {
  const signedIn = Boolean(token());
  $("#who").textContent = signedIn ? `signed in as ${localStorage.getItem(NAME_KEY) || "(unnamed)"}` : "";
  $("#who-class").textContent = signedIn && localStorage.getItem(CLASS_KEY) ? localStorage.getItem(CLASS_KEY) : "";
  $("#signed-in").hidden = !signedIn;
  $("#signed-out").hidden = signedIn;
  $("#leaderboard-optin").disabled = !signedIn;
}

// Stores what the server said about who this is and, given, their token. A learner's drafts are
// theirs from here on (drafts.js sends what this browser holds for them).
async function remember(me, bearer = null) {
  if (bearer !== null) storeToken(bearer);
  const staff = me.kind === "staff";
  localStorage.setItem(NAME_KEY, me.name || "");
  localStorage.setItem(CLASS_KEY, staff ? (me.admin ? "administrator" : "staff") : me.class ? `class: ${me.class.name}` : "");
  state.me = me;
  state.deadlines = me.deadlines || {};
  if (staff) return;
  localStorage.setItem(ID_KEY, String(me.id));
  await setDraftsOwner(me.id);
}

const JOIN_ERRORS = {
  404: "No class has that invite code; check it with your instructor.",
  403: "That class is not taking new learners now; ask your instructor.",
  409: "That name is taken in this class: choose another name, or sign in with the token you were given.",
  429: "Many learners joined this class in the last hour; try again in a while.",
};

// Signs up from the form: with an invite code into that class (POST /api/join), without one on
// one's own (POST /api/learners). The token is shown once.
export async function signUp() {
  const name = $("#learner-name").value.trim();
  const invite = $("#invite-code").value.trim();
  if (!name) throw new Error("Type a display name first.");
  if (!invite && $("#invite-code").required) throw new Error("Type your class's invite code first.");
  let learner;
  try {
    learner = invite
      ? await api("/api/join", { method: "POST", token: "",
        body: JSON.stringify({ invite, name }) })
      : await api("/api/learners", { method: "POST", body: JSON.stringify({ name }), token: "" });
  } catch (error) {
    if (invite && JOIN_ERRORS[error.status]) throw new Error(JOIN_ERRORS[error.status]);
    throw error;
  }
  await remember({ kind: "learner", ...learner }, learner.token);
  // The form is empty for whoever signs up next at this browser.
  for (const id of ["#learner-name", "#invite-code"]) $(id).value = "";
  showLearner();
  accountMessage("");
  $("#token-value").value = learner.token;
  $("#token-reveal").hidden = false;
  send(ACCOUNT_CHANGED);
}

async function signInWithToken(bearer) {
  if (!bearer) throw new Error("Paste your token first.");
  let me;
  try {
    me = await api("/api/me", { token: bearer });
  } catch (error) {
    if (error.status === 401) throw new Error("That token is not known here; check it, or sign up with a name.");
    if (error.status === 404) throw new Error("This server cannot check tokens (no /api/me).");
    throw error;
  }
  await remember(me, bearer);
  showLearner();
  accountMessage("");
  send(ACCOUNT_CHANGED);
}

// forced: the server refused the token, so nothing can be sent any more; the learner's unsent
// drafts stay for their next sign-in (drafts.js). Otherwise drafts are sent first, and a learner
// whose edits cannot reach the server is asked before they are lost.
async function signOut(message = "", { forced = false } = {}) {
  if (!token()) return;
  if (!forced) {
    await flushDrafts();
    if (hasUnsentDrafts() && !(await confirmDialog(
      "Your latest edits have not reached the server. Sign out anyway? They are lost.", "Sign out"))) return;
  }
  forgetToken();
  for (const key of [NAME_KEY, CLASS_KEY, ID_KEY]) localStorage.removeItem(key);
  forgetDraftsOwner({ keepUnsent: forced });
  forgetResults();
  state.me = null;
  state.progress = null;
  state.deadlines = {};
  $("#token-reveal").hidden = true;
  $("#token-value").value = "";
  showLearner();
  accountMessage(message, message ? "bad" : "ok");
  send(ACCOUNT_CHANGED);
}

// On load: who the stored token is (null for nobody). A refused token signs out (TOKEN_REFUSED);
// a server without /api/me or one that cannot be reached keeps the stored name, and a learner
// their drafts in this browser.
export async function checkStoredToken() {
  if (!token()) return null;
  try {
    const me = await api("/api/me");
    await remember({ kind: "learner", ...me });
    showLearner();
    return state.me;
  } catch (error) {
    if (error.status !== 401 && localStorage.getItem(ID_KEY)) await setDraftsOwner(localStorage.getItem(ID_KEY));
    return null;
  }
}

// A message that must outlive a reload (main.js reloads when a member of staff signs in or out).
export function keepNoticeForReload() {
  const box = $("#account-message");
  if (!box.hidden && box.textContent) sessionStorage.setItem(NOTICE_KEY, box.textContent);
}

export function startAccount() {
  const notice = sessionStorage.getItem(NOTICE_KEY);
  if (notice) { sessionStorage.removeItem(NOTICE_KEY); accountMessage(notice); }
  on(TOKEN_REFUSED, () => signOut(state.view === "staff" ? REFUSED_STAFF : REFUSED, { forced: true }));
  // A token reset while the tab was in the background signs out as soon as the tab is shown.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && token()) api("/api/me").catch(() => {});
  });
  // Without open sign-up a name alone is refused (403): the form says so before anyone tries.
  api("/api/health").then((health) => {
    // A server started with --no-profiling refuses profiled jobs: no box to tick then.
    if (health.profiling === false) $(".profile-choice").hidden = true;
    if (health.open_sign_up !== false) return;
    $("#invite-code").required = true;
    $("#signup-note").textContent = "This server takes learners by invite code only: ask your instructor for your class's code.";
  }).catch(() => {});

  $("#signin").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await signUp();
    } catch (error) {
      accountMessage(`Sign-up failed: ${error.message}`);
    }
  });

  $("#token-signin").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await signInWithToken($("#token-input").value.trim());
      $("#token-input").value = "";
    } catch (error) {
      accountMessage(`Sign-in failed: ${error.message}`);
    }
  });

  $("#signout").addEventListener("click", () => signOut());

  $("#token-copy").addEventListener("click", async () => {
    const value = $("#token-value").value;
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      $("#token-value").select();
      document.execCommand("copy");
    }
    $("#token-copy").textContent = "Copied";
  });

  $("#token-done").addEventListener("click", () => {
    $("#token-reveal").hidden = true;
    $("#token-value").value = "";
    $("#token-copy").textContent = "Copy";
    ($("#run") && !$("#workbench").hidden ? $("#run") : $("#signout")).focus();
  });
}
