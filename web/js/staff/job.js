// One run, for office hours (#class/3/job/55): who sent it and when (with "late" after the
// deadline), the stage version it was judged under and, for a rejudging's rerun, which rejudging
// made it; its report drawn as the learner saw it (report_view.js), its source read-only with
// line numbers (source_view.js; the report's line links lead there), and a diff against the
// learner's run before it in the same stage (diff.js); for a profiled run, its hot spots and the
// Nsight Compute report to download (hot_spots.js), as its learner sees them. Whether the learner shared it by link
// (share_controls.js): since when, or who stopped the link; an instructor may stop a live one.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { languageBadge, languageName } from "../languages.js";
import { lateMark, renderReport, verdictBadge } from "../report_view.js";
import { confirmDialog } from "../dialog.js";
import { diffView } from "../diff.js";
import { showHotSpots } from "../hot_spots.js";
import { lineLinker, lineMarker, sourceView } from "../source_view.js";
import { classHref } from "./router.js";
import { button, heading, message, say, statusLine } from "./ui.js";

// The learner's run of the same stage just before this one, with its source, or null.
async function previousRun(cls, job) {
  const query = `stage=${encodeURIComponent(job.stage)}&before=${job.id}&limit=1`;
  const page = await api(`/api/classes/${cls.id}/learners/${job.learner.id}/jobs?${query}`);
  return page.jobs.length ? api(`/api/classes/${cls.id}/jobs/${page.jobs[0].id}`) : null;
}

// The run's link in words (job.share: null when it was never shared), with "Stop the link" for
// those who may change the class; stopping draws the line again from the server's answer.
function linkLine(cls, job, canChange) {
  const line = el("div", { class: "link-state" });
  const status = statusLine();
  const draw = (share) => {
    if (!share) return line.replaceChildren();
    const words = share.live ? `Shared by link since ${localTime(share.created_at)}.`
      : share.stopped_by ? `Link stopped by ${share.stopped_by} on ${localTime(share.stopped_at)}.`
        : `Link stopped by the learner${share.stopped_at ? ` on ${localTime(share.stopped_at)}` : ""}.`;
    const stop = share.live && canChange ? button("Stop the link", async () => {
      if (!(await confirmDialog(`Stop ${job.learner.name}'s link to job #${job.id}? It stops opening this run for good; `
          + "the learner sees that staff stopped it and may make a new one while the class allows links.", "Stop the link"))) return;
      stop.disabled = true;
      try {
        await api(`/api/classes/${cls.id}/jobs/${job.id}/share`, { method: "DELETE" });
      } catch (error) {
        stop.disabled = false;
        return say(status, `Not stopped: ${error.message}`, "bad");
      }
      // Who stopped it and when, as the server wrote it; if that cannot be read, plain words.
      const fresh = await api(`/api/classes/${cls.id}/jobs/${job.id}`).catch(() => null);
      if (fresh) draw(fresh.share);
      else line.replaceChildren(el("p", { class: "link-words" }, "Link stopped."), status);
      say(status, "The link is stopped: it opens nothing now.");
      const said = line.querySelector(".link-words") || status;
      said.setAttribute("tabindex", "-1");
      said.focus();  // the button pressed is gone; the focus stays on the line that replaced it
    }, { class: "secondary link-stop" }) : null;
    line.replaceChildren(el("p", { class: "button-row link-words" }, words, stop), status);
  };
  draw(job.share);
  return line;
}

export async function showJob(box, context) {
  const { cls, jobId } = context;
  const job = await api(`/api/classes/${cls.id}/jobs/${jobId}`);
  if (!context.current()) return;
  const language = job.language || "cuda";
  const source = sourceView(job.source, `Source of job ${job.id}`);
  const mark = lineMarker(source);
  const report = el("div", { class: "report" });
  renderReport(report, job.report ? { language, ...job.report, late: job.late, stage_version_current: job.stage_version_current } : null,
               { lineLink: lineLinker(source), mark });
  if (job.report) showHotSpots(report, { ...job.report, job_id: job.id, ncu_report: job.ncu_report }, { lineLink: lineLinker(source) });
  const diff = el("div", {}, message("Looking for the run before..."));
  box.replaceChildren(
    el("p", { class: "crumbs" }, el("a", { href: classHref(cls.id) }, "← Progress grid"), " · ",
       el("a", { href: classHref(cls.id, `learner/${job.learner.id}`, { stage: job.stage }) }, `${job.learner.name}'s runs of ${job.stage}`)),
    heading(3, `Job #${job.id}: ${job.learner.name}, ${job.stage}`),
    el("p", { class: "job-facts" }, job.verdict ? verdictBadge(job.verdict) : job.state, " ",
       job.late ? lateMark() : "on time", " · submitted ", localTime(job.created_at), " · ",
       languageBadge(language), " ", languageName(language)),
    linkLine(cls, job, context.canChange),
    job.rejudging ? el("p", { class: "rerun-note" }, "This run is a rerun of ",
      el("a", { href: classHref(cls.id, `rejudge/${job.rejudging}`) }, `rejudging #${job.rejudging}`),
      ": until that rejudging is applied it holds the new result; after, the one it replaced.") : null,
    el("div", { class: "job-columns" },
       el("section", { "aria-label": "Report" }, heading(4, "Report"), report),
       el("section", { "aria-label": "Source" }, heading(4, "Source (read-only)"), source)),
    el("section", { "aria-label": "Changes since the run before" }, heading(4, "Changes since the run before"), diff));
  const before = await previousRun(cls, job).catch((error) => ({ error }));
  if (!context.current()) return;
  if (!before) return diff.replaceChildren(message(`This is ${job.learner.name}'s first run of ${job.stage}.`));
  if (before.error) return diff.replaceChildren(message(`Cannot load the run before: ${before.error.message}`, "bad"));
  const shown = diffView(before.source, job.source, `diff of job ${before.id} against job ${job.id}`);
  diff.replaceChildren(
    el("p", {}, "Against ", el("a", { href: classHref(cls.id, `job/${before.id}`) }, `job #${before.id}`),
       ` (${localTime(before.created_at)}): lines marked - were only in #${before.id}, + are new in #${job.id}.`,
       (before.language || "cuda") !== language ? ` It was in ${languageName(before.language)}.` : ""),
    shown ? (shown.changed ? shown.view : message("No differences.")) : message("The diff library did not load.", "bad"));
}
