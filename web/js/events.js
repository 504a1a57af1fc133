// The events the modules send each other on `document`. They are for the few places where a
// module must start something another module owns without importing it: stages.js shows reports,
// so report.js cannot import stages.js back. Everything else is an imported function.
//
//   ACCOUNT_CHANGED  sent by account.js after sign-up, sign-in and sign-out; main.js redraws
//                    what depends on who is signed in.
//   OPEN_STAGE       sent by report.js ("Next stage") and run.js (a stage judged while another
//                    was open), detail { id }; stages.js opens it.
//   STAGE_OPENED     sent by stages.js once a stage's editor and tabs are the learner's, detail
//                    { id }; run.js shows that stage's job (run.js imports stages.js, so stages.js
//                    cannot import it back).
//   TOKEN_REFUSED    sent by api.js when the server answers 401 to the stored token; account.js
//                    signs the page out and says why.

export const ACCOUNT_CHANGED = "cudojo:account-changed";
export const OPEN_STAGE = "cudojo:open-stage";
export const STAGE_OPENED = "cudojo:stage-opened";
export const TOKEN_REFUSED = "cudojo:token-refused";

// Listeners run before send returns, in the order they were added.
export function send(name, detail = null) {
  document.dispatchEvent(new CustomEvent(name, { detail }));
}

export function on(name, listener) {
  document.addEventListener(name, (event) => listener(event.detail));
}
