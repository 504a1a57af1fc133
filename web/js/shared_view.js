// A run its learner shared (#shared/TOKEN, the link share_controls.js makes): the stage, the verdict
// in words, the report drawn as the learner saw it (report_view.js) and the source read-only
// (source_view.js); no editor, no Run, and nothing of who sent it, which the server does not say
// (GET /api/shared/{token}). Anyone may open it, signed out or as any account; the page's own token
// is not sent. A link that opens nothing (stopped, replaced by a newer one, mistyped) says so in
// words. stages.js draws it into #shared-job when the hash holds a link.

import { el } from "./dom.js";
import { api } from "./api.js";
import { languageBadge, languageName } from "./languages.js";
import { renderReport, verdictBadge } from "./report_view.js";
import { lineLinker, lineMarker, sourceView } from "./source_view.js";

// The link's token in a hash ("#shared/9f3c..."), or null when the hash holds no link.
export function sharedTokenOf(hash) {
  const found = /^#shared\/(.*)$/.exec(hash || "");
  if (!found) return null;
  try { return decodeURIComponent(found[1]); } catch { return found[1]; }
}

const title = (text) => el("h2", { class: "shared-title", tabindex: "-1" }, text);

// What a link that opens nothing shows: the server answers every such link alike (404), so the
// page cannot tell a stopped link from a mistyped one, and says both.
function closedLink() {
  return [title("This link no longer shows a run"),
    el("p", { class: "shared-gone" }, "Whoever shared the run stopped sharing it, or made a new link that replaced this one; ",
       "or the link was copied wrong. Ask them for a new link."),
    el("p", {}, el("a", { href: "#reduction/1" }, "Start the course at reduction/1"), " or choose a stage in the list.")];
}

// Draws the run `token` opens into `box`; `current()` says whether the page still wants it (the
// hash may have moved on while the answer came).
export async function showSharedJob(box, token, { current = () => true } = {}) {
  box.replaceChildren(el("p", { class: "muted" }, "Loading the shared run..."));
  let job;
  try {
    job = await api(`/api/shared/${encodeURIComponent(token)}`, { token: "" });
  } catch (error) {
    if (!current()) return;
    box.replaceChildren(...(error.status === 404 ? closedLink()
      : [title("Cannot show this run now"), el("p", { class: "fail" }, `The server did not answer as it should: ${error.message}. Try again shortly.`)]));
    return;
  }
  if (!current()) return;
  const language = job.language || "cuda";
  const source = sourceView(job.source, `Source of the shared run of ${job.stage}`);
  const report = el("div", { class: "report" });
  renderReport(report, job.report ? { language, ...job.report, stage: job.stage, stage_version_current: job.stage_version_current } : null,
               { lineLink: lineLinker(source), mark: lineMarker(source) });
  box.replaceChildren(
    title(`Shared run: ${job.stage}${job.stage_title ? ` · ${job.stage_title}` : ""}`),
    el("p", { class: "shared-note" }, "A learner shared this run with you, read-only: its verdict, the judge's report and the source. ",
       "Who sent it is not shown."),
    el("p", { class: "job-facts" }, job.verdict ? verdictBadge(job.verdict) : "not judged", " · submitted on ", job.submitted_on || "?",
       " · ", languageBadge(language), " ", languageName(language), job.gpu ? ` · judged on ${job.gpu}` : ""),
    el("div", { class: "job-columns" },
       el("section", { "aria-label": "Report" }, el("h3", {}, "Report"), report),
       el("section", { "aria-label": "Source" }, el("h3", {}, "Source (read-only)"), source)),
    el("p", {}, el("a", { href: `#${job.stage}` }, `Open ${job.stage} to write your own`)));
}
