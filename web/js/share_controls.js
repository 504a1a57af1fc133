// "Share this run" under a finished run of the learner's own on the Result tab (report.js puts it
// there): a link that shows that one run, read-only and without the learner's name, to whoever opens
// it (a teaching assistant, a friend; shared_view.js is what they see), made, copied and stopped here
// (POST, GET and DELETE /api/jobs/{id}/share). The server keeps only the link's digest, so the link is
// shown once, when it is made; after a reload the controls say the run is shared and offer "New
// link" (which stops the old one) and "Stop sharing", never the old link itself. The class's
// instructors may turn links off for the class (the server then refuses to make one, 403, and the
// controls say so instead of offering one) or stop one link; the controls say when staff stopped
// the learner's last link.

import { el } from "./dom.js";
import { api, localTime } from "./api.js";
import { copyText } from "./clipboard.js";

let made = 0;  // for unique ids on the page

// The controls for the learner's job `jobId`, as an element; they ask the server whether the run is
// shared and draw themselves. A job that is not the signed-in learner's (401, 403, 404) draws nothing.
export function shareControls(jobId) {
  const id = `share-${jobId}-${++made}`;
  const body = el("div", { class: "share-body" }, el("p", { class: "muted" }, "Checking whether this run is shared..."));
  const status = el("p", { class: "message", role: "status" });
  const box = el("section", { class: "share", "aria-labelledby": `${id}-title`, "data-job": jobId },
                 el("h3", { id: `${id}-title` }, "Share this run"), body, status);
  const path = `/api/jobs/${jobId}/share`;
  const say = (text, kind = "ok") => { status.textContent = text; status.className = `message ${kind}`; };
  const button = (text, onclick, attributes = {}) => el("button", { type: "button", class: "secondary", onclick, ...attributes }, text);

  // Each press of a button disables them all until the server answered, so one press is one request.
  async function act(request, after) {
    for (const pressed of body.querySelectorAll("button")) pressed.disabled = true;
    say("");
    try {
      after(await request());
    } catch (error) {
      for (const pressed of body.querySelectorAll("button")) pressed.disabled = false;
      say(`Not done: ${error.message}`, "bad");
    }
  }
  const share = () => act(() => api(path, { method: "POST", body: "{}" }), showLink);
  const stop = () => act(() => api(path, { method: "DELETE" }), () => {
    showOff();
    say("Not shared any more: the link no longer opens this run.");
    body.querySelector("button").focus();  // the button pressed is gone; the focus stays here
  });

  // Not shared: why, when staff stopped the last link; whether a new one may be made.
  function showOff(answer = {}) {
    const stoppedByStaff = answer.stopped_by_staff
      ? el("p", { class: "share-stopped" }, "A member of your class's staff stopped your link to this run: it opens nothing now.") : null;
    if (answer.sharing_open === false) {
      return body.replaceChildren(...[stoppedByStaff,
        el("p", { class: "share-closed" }, "Your class's instructors have turned links to runs off, so this run cannot be shared now.")]
        .filter(Boolean));
    }
    body.replaceChildren(...[stoppedByStaff,
      el("p", {}, "Make a link that shows this run, read-only (its verdict, the report and your source, not your name), to anyone who opens it: a teaching assistant, a friend. ",
        "If you are on this stage's leaderboard, its time can be matched to your name there."),
      el("div", { class: "button-row" }, button("Share this run", share, { class: "primary share-make" }))].filter(Boolean));
  }

  // Just made: the link itself, this once.
  function showLink(answer) {
    const url = new URL(answer.url, location.href).href;
    const input = el("input", { id: `${id}-link`, class: "share-link", readonly: "", spellcheck: "false", value: url });
    const copy = button("Copy", async () => { copy.textContent = (await copyText(url, input)) ? "Copied" : "Press Ctrl+C"; });
    body.replaceChildren(
      el("p", {}, "Anyone with this link sees this run, read-only. Copy it now: it is shown only this once."),
      el("div", { class: "token-row" }, el("label", { for: `${id}-link`, class: "visually-hidden" }, "Link to this run"), input, copy),
      el("div", { class: "button-row" }, button("Stop sharing", stop, { class: "secondary share-stop" })));
    say("Shared: the link is below.");
    input.focus();
    input.select();
  }

  // Shared before (another visit, another tab): the link cannot be shown again.
  function showOn(answer) {
    body.replaceChildren(
      el("p", {}, `This run is shared (since ${localTime(answer.created_at)}). Its link was shown once, when it was made, and cannot be shown again; `,
         "a new link replaces it (the old one then stops working)."),
      el("div", { class: "button-row" }, button("New link", share, { class: "secondary share-new" }),
         button("Stop sharing", stop, { class: "secondary share-stop" })));
  }

  api(path).then((answer) => (answer.shared ? showOn(answer) : showOff(answer))).catch((error) => {
    if ([401, 403, 404].includes(error.status)) box.remove();
    else body.replaceChildren(el("p", { class: "fail" }, `Cannot tell whether this run is shared: ${error.message}`));
  });
  return box;
}
