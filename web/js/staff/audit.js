// The audit logs: who changed what and when, newest first, a page at a time ("Older entries"
// follows next_before). A class's (#class/3/audit) for its staff; the whole server's (#audit)
// for administrators.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { heading, message, pager, scrolling, table } from "./ui.js";

const PAGE = 50;
const KIND_WORDS = { admin: "administrator", instructor: "instructor", ta: "teaching assistant", learner: "learner", console: "the server machine" };

async function showLog(box, context, path, title) {
  const first = await api(`${path}?limit=${PAGE}`);
  if (!context.current()) return;
  const log = table(`${title}, newest first`, ["When", "Who", "Action", "What"], []);
  const { more, add } = pager("Older entries", (before) => api(`${path}?limit=${PAGE}&before=${before}`), (page) => {
    log.tBodies[0].append(...page.entries.map((entry) => el("tr", { "data-entry": entry.id },
      el("td", {}, localTime(entry.at)),
      el("td", {}, entry.actor ? `${entry.actor.name} (${KIND_WORDS[entry.actor.kind] || entry.actor.kind})` : ""),
      el("td", { class: "mono" }, entry.action), el("td", {}, entry.detail || ""))));
  });
  box.replaceChildren(heading(3, title), first.entries.length ? scrolling(title, log) : message("Nothing has been changed yet."), more);
  add(first);
}

export const showClassAudit = (box, context) => showLog(box, context, `/api/classes/${context.cls.id}/audit`, `Audit log of ${context.cls.name}`);

export async function showServerAudit(box, context) {
  const crumbs = el("p", { class: "crumbs" }, el("a", { href: "#classes" }, "All classes"));
  const log = el("div");
  box.replaceChildren(crumbs, log);
  await showLog(log, context, "/api/audit", "Audit log of the whole server");
}
