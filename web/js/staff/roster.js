// The roster (#class/3/roster): for an instructor, importing learners from CSV (pasted or from a
// file; student id, name, email; a line with a problem stops the whole import and is listed with
// its line number) and "issue tokens", which saves a CSV of new tokens to hand out; then the
// roster itself (roster_table.js). A teaching assistant sees the roster only.

import { el } from "../dom.js";
import { api } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { button, failure, field, heading, say, scrolling, statusLine, table } from "./ui.js";
import { saveFile } from "./download.js";
import { showRosterTable } from "./roster_table.js";

function problemsTable(problems) {
  return scrolling("Problems in the roster", table("Problems: nothing was imported; fix these lines and import again",
    ["Line", "Problem"],
    problems.map((problem) => el("tr", {}, el("td", { class: "num" }, problem.line || "whole file"), el("td", {}, problem.problem)))));
}

function importForm(cls, imported) {
  const csv = el("textarea", { rows: "6", spellcheck: "false", class: "roster-csv",
                               placeholder: "student_id,name,email\ns1001,Ada Lovelace,ada@example.org" });
  const file = el("input", { type: "file", accept: ".csv,text/csv,text/plain" });
  file.addEventListener("change", async () => { if (file.files[0]) csv.value = await file.files[0].text(); });
  const status = statusLine();
  const problems = el("div");
  const form = el("form", { class: "staff-form stacked", "aria-label": "Import a roster" },
    field("Roster as CSV", csv, "one learner a line: student id, name, email (optional); a header line may name the columns"),
    field("or choose a CSV file", file),
    el("div", { class: "button-row" }, el("button", { type: "submit" }, "Import")), status, problems);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problems.replaceChildren();
    try {
      const counts = await api(`/api/classes/${cls.id}/roster`, { method: "POST", body: JSON.stringify({ csv: csv.value }) });
      say(status, `Imported: ${counts.created} new, ${counts.updated} updated, ${counts.unchanged} unchanged.`);
      imported();
    } catch (error) {
      say(status, `Not imported: ${error.message}`, "bad");
      if (error.body && Array.isArray(error.body.problems)) problems.replaceChildren(problemsTable(error.body.problems));
    }
  });
  return form;
}

function tokensForm(cls) {
  const which = el("select", {}, el("option", { value: "not_signed_in" }, "learners who have not signed in yet"),
                   el("option", { value: "all" }, "every learner (signs everyone out)"));
  const status = statusLine();
  const issue = async () => {
    if (which.value === "all" && !(await confirmDialog(
      "Give every learner of the class a new token? Everyone signed in is signed out until they use their new one.", "Issue"))) return;
    try {
      const name = await saveFile(`/api/classes/${cls.id}/tokens`,
        { method: "POST", body: JSON.stringify({ learners: which.value, format: "csv" }) }, `class-${cls.id}-tokens.csv`);
      say(status, `Saved ${name}: hand each learner their line. Their old tokens no longer work.`);
    } catch (error) {
      say(status, `Cannot issue tokens: ${error.message}`, "bad");
    }
  };
  return el("form", { class: "staff-form", "aria-label": "Issue tokens", onsubmit: (event) => event.preventDefault() },
    field("New tokens for", which), button("Issue tokens (CSV)", issue), status);
}

export async function showRoster(box, context) {
  const { cls, canChange } = context;
  const list = el("section", { "aria-label": "Learners" });
  const reload = () => showRosterTable(list, cls, canChange).catch((error) => list.replaceChildren(failure("Cannot load the roster", error)));
  const parts = [heading(3, "Roster")];
  if (canChange) {
    parts.push(el("section", { "aria-label": "Import a roster" }, heading(4, "Import a roster"), importForm(cls, reload)),
               el("section", { "aria-label": "Issue tokens" }, heading(4, "Issue tokens"),
                  el("p", { class: "staff-note" }, "A CSV of student id, name, email and a new token for each learner, to hand out. A token is stored only as a hash, so issuing one replaces the old."),
                  tokensForm(cls)));
  }
  parts.push(list);
  box.replaceChildren(...parts);
  await showRosterTable(list, cls, canChange);
}
