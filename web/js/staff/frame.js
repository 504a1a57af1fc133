// What every view of one class shares: the class's name and the viewer's role in it, the links to
// its views (Progress, Roster, Deadlines, Rejudge, Staff, Links, Audit log, Settings) with the current one marked,
// and the box the view draws into. view.js draws it before each class view.

import { el } from "../dom.js";
import { classHref } from "./router.js";
import { heading } from "./ui.js";

const TABS = [["grid", "Progress"], ["roster", "Roster"], ["deadlines", "Deadlines"], ["rejudge", "Rejudge"],
              ["staff", "Staff"], ["links", "Links"], ["audit", "Audit log"], ["settings", "Settings"]];
// A view inside another marks that one's tab.
const TAB_OF = { learner: "grid", job: "grid", rejudging: "rejudge" };
const ROLE_WORDS = { instructor: "instructor", ta: "teaching assistant (reads only)", admin: "administrator" };

// Draws the frame of class `cls` (GET /api/classes/ID) into `box` and gives the box for the view.
export function classFrame(box, cls, view) {
  const current = TAB_OF[view] || view;
  const content = el("div", { class: "staff-content" });
  box.replaceChildren(
    el("p", { class: "crumbs" }, el("a", { href: "#classes" }, "All classes")),
    heading(2, cls.name, " ", el("span", { class: "role-note" }, `your role: ${ROLE_WORDS[cls.your_role] || cls.your_role}`)),
    el("nav", { class: "class-tabs", "aria-label": `Views of the class ${cls.name}` },
       ...TABS.map(([id, label]) => el("a", { href: classHref(cls.id, id), "data-view": id,
         ...(id === current ? { "aria-current": "page" } : {}) }, label))),
    content);
  return content;
}

export const canChange = (cls) => cls.your_role === "instructor" || cls.your_role === "admin";
