// The Links tab (#class/3/links): the links the class's learners made to their runs that open now
// (share_controls.js makes them; GET /api/classes/ID/shares), newest first, each with its learner
// (leading to the run, job.js), stage, verdict and since when. An instructor stops one with "Stop"
// (it then opens nothing, for good; the learner sees that staff stopped it); a teaching assistant
// reads the list. Whether learners may make links at all is the class's switch in Settings
// (settings.js), said here when it is off. The server never keeps a link itself, so none is shown.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { verdictBadge } from "../report_view.js";
import { classHref } from "./router.js";
import { button, heading, message, say, scrolling, statusLine, table } from "./ui.js";

const LIMIT = 100;  // the most the API gives in one answer

export async function showLinks(box, context) {
  const { cls, canChange } = context;
  const answer = await api(`/api/classes/${cls.id}/shares?limit=${LIMIT}`);
  if (!context.current()) return;
  const title = heading(3, "Links to runs");
  const status = statusLine();
  const none = () => message(answer.sharing_open ? "No live links: none of the class's learners has a run shared by link now."
    : "No live links.");
  const off = answer.sharing_open ? null
    : el("p", { class: "message links-off" }, "Links to runs are turned off for this class: every link made before was stopped, ",
      "and learners cannot make new ones until links are turned on again in ", el("a", { href: classHref(cls.id, "settings") }, "Settings"), ".");

  const stop = async (share, row) => {
    const who = share.learner.name;
    if (!(await confirmDialog(`Stop ${who}'s link to job #${share.job_id}? It stops opening the run for good; `
        + "the learner sees that staff stopped it and may make a new one while the class allows links.", "Stop the link"))) return;
    try {
      await api(`/api/classes/${cls.id}/jobs/${share.job_id}/share`, { method: "DELETE" });
    } catch (error) {
      return say(status, `Not stopped: ${error.message}`, "bad");
    }
    // The pressed button goes with its row: the focus moves to the next row's Stop, else the heading.
    const next = (row.nextElementSibling || row.previousElementSibling)?.querySelector("button");
    const body = row.parentElement;
    row.remove();
    if (!body.rows.length) list.replaceChildren(none());
    say(status, `Stopped ${who}'s link to job #${share.job_id}: it opens nothing now.`);
    (next || title).focus();
  };

  const rows = answer.shares.map((share) => {
    const row = el("tr", { "data-job": share.job_id },
      el("th", { scope: "row" }, el("a", { href: classHref(cls.id, `job/${share.job_id}`) }, share.learner.name)),
      el("td", { class: "num" }, `#${share.job_id}`),
      el("td", { class: "mono" }, share.stage),
      el("td", {}, share.verdict ? verdictBadge(share.verdict) : "not judged"),
      el("td", {}, localTime(share.created_at)));
    if (canChange) {
      row.append(el("td", { class: "actions" }, button("Stop", () => stop(share, row),
        { class: "secondary link-stop", "aria-label": `Stop ${share.learner.name}'s link to job #${share.job_id}` })));
    }
    return row;
  });
  const headers = ["Learner", "Job", "Stage", "Verdict", "Shared since", ...(canChange ? ["Stop"] : [])];
  const list = el("div", {}, rows.length
    ? scrolling(`Live links of ${cls.name}`, table(`Live links to runs of ${cls.name}, newest first`, headers, rows))
    : none());
  box.replaceChildren(...[title, off, status, list,
    answer.more ? el("p", { class: "staff-note" }, `These are the newest ${LIMIT} live links; more are live.`) : null,
    el("p", { class: "staff-note" }, "A link shows its run read-only, without the learner's name, to whoever opens it. ",
      "The links themselves are not kept on the server, so they cannot be shown here.")].filter(Boolean));
}
