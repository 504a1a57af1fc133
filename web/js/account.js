// Who is signed in: sign-up with a name (the token shown once, with Copy), sign-in with a token,
// sign-out, and on load whether the stored token is still known. Owns the header's account area
// (#account) and its message line; run.js signs up before a first run, leaderboard.js reports its
// errors here. After every change of learner it sends ACCOUNT_CHANGED (events.js).
//
// localStorage: cudojo.token (the bearer token, api.js), cudojo.name, cudojo.drafts-owner
// (drafts.js). "Sign in with a token" checks the token with GET /api/me; a token the server no
// longer knows (401 on load) signs out.

import { $ } from "./dom.js";
import { state } from "./state.js";
import { api, forgetToken, storeToken, token } from "./api.js";
import { forgetDraftsOwner, setDraftsOwner } from "./drafts.js";
import { ACCOUNT_CHANGED, send } from "./events.js";

const NAME_KEY = "cudojo.name";

// kind: "bad" (an error, the default) or "ok"; no text hides the line.
export function accountMessage(text, kind = "bad") {
  const box = $("#account-message");
  box.textContent = text || "";
  box.className = `message ${kind}`;
  box.hidden = !text;
}

// The header as the stored token says: the name and "Sign out", or the two forms. The leaderboard
// opt-in is only for someone signed in.
export function showLearner() {
  const name = localStorage.getItem(NAME_KEY);
  const signedIn = Boolean(token());
  $("#who").textContent = signedIn ? `signed in as ${name || "(unnamed)"}` : "";
  $("#signed-in").hidden = !signedIn;
  $("#signed-out").hidden = signedIn;
  $("#leaderboard-optin").disabled = !signedIn;
}

// Stores what the server said about the learner (their name and id) and, given, their token.
function remember(learner, bearer = null) {
  if (bearer !== null) storeToken(bearer);
  localStorage.setItem(NAME_KEY, learner.name || "");
  setDraftsOwner(learner.id);
  state.me = learner;
}

// Signs up as a new learner named `name`; the token is shown once.
export async function signIn(name) {
  if (!name) throw new Error("Type a display name first.");
  const learner = await api("/api/learners", { method: "POST", body: JSON.stringify({ name }), token: "" });
  remember(learner, learner.token);
  showLearner();
  accountMessage("");
  $("#token-value").value = learner.token;
  $("#token-reveal").hidden = false;
  send(ACCOUNT_CHANGED);
}

async function signInWithToken(bearer) {
  if (!bearer) throw new Error("Paste your token first.");
  let learner;
  try {
    learner = await api("/api/me", { token: bearer });
  } catch (error) {
    if (error.status === 401) throw new Error("That token is not known here; check it, or sign up with a name.");
    if (error.status === 404) throw new Error("This server cannot check tokens (no /api/me).");
    throw error;
  }
  remember(learner, bearer);
  showLearner();
  accountMessage("");
  send(ACCOUNT_CHANGED);
}

function signOut(message = "") {
  forgetToken();
  localStorage.removeItem(NAME_KEY);
  forgetDraftsOwner();
  state.me = null;
  state.progress = null;
  $("#token-reveal").hidden = true;
  $("#token-value").value = "";
  showLearner();
  accountMessage(message, message ? "bad" : "ok");
  send(ACCOUNT_CHANGED);
}

// On load: is the stored token still known? 401 signs out with a message; a server without
// /api/me (404) or one that cannot be reached keeps the stored name.
export async function checkStoredToken() {
  if (!token()) return;
  try {
    remember(await api("/api/me"));
    showLearner();
  } catch (error) {
    if (error.status === 401) {
      signOut("Your saved sign-in is no longer known to this server, so you are signed out. " +
              "Sign in with your token again, or sign up with a name.");
    }
  }
}

export function startAccount() {
  $("#signin").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await signIn($("#learner-name").value.trim());
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
    $("#run").focus();
  });
}
