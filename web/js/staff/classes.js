// The class list (#classes): every class this member of staff is on, with their role, its
// learners, whether it takes new learners, and its invite code. An administrator also makes a new
// class here, naming its instructor (a new account's token is shown once), and sees the staff
// accounts (accounts.js) and the whole server's audit log.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { classHref } from "./router.js";
import { failure, field, heading, message, scrolling, statusLine, say, table } from "./ui.js";
import { secretBox } from "./secret.js";
import { showAccounts } from "./accounts.js";

const ROLE_WORDS = { instructor: "instructor", ta: "teaching assistant", admin: "administrator" };

function classTable(classes) {
  return scrolling("Classes", table(`Your classes (${classes.length})`,
    ["Class", "Your role", "Learners", "Joining", "Invite code", "Created"],
    classes.map((cls) => el("tr", { "data-class": cls.id },
      el("th", { scope: "row" }, el("a", { href: classHref(cls.id) }, cls.name),
         cls.is_default ? el("span", { class: "staff-note" }, " (open sign-up)") : null),
      el("td", {}, ROLE_WORDS[cls.role] || cls.role), el("td", { class: "num" }, cls.learners),
      el("td", {}, cls.joining_open ? "open" : "closed"), el("td", { class: "mono" }, cls.invite_code || ""),
      el("td", {}, localTime(cls.created_at))))));
}

// An administrator's form: a class and its instructor (a name; a new one gets an account).
function newClassForm(onMade) {
  const name = el("input", { required: "", maxlength: "80", autocomplete: "off" });
  const instructor = el("input", { maxlength: "40", autocomplete: "off" });
  // A name an account already has is refused unless the administrator says that account is meant.
  const existing = el("input", { type: "checkbox" });
  const status = statusLine();
  const shown = el("div");
  const form = el("form", { class: "staff-form", "aria-label": "New class" },
    field("Class name", name), field("Instructor's name", instructor, "a new name gets a staff account"),
    el("label", { class: "check" }, existing, " if the name has an account already, make that account the instructor"),
    el("button", { type: "submit" }, "Make the class"), status, shown);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const made = await api("/api/classes", { method: "POST", body: JSON.stringify({
        name: name.value.trim(),
        ...(instructor.value.trim() ? { instructor: instructor.value.trim(), existing: existing.checked } : {}) }) });
      say(status, `Made the class ${made.class.name}; its invite code is ${made.class.invite_code}.`);
      const who = made.instructor;
      shown.replaceChildren(!who ? message("No instructor named: you run it as an administrator.")
        : who.token ? secretBox(`Token of ${who.name}, the new instructor`, who.token)
          : message(`${who.name}'s existing account is the instructor; its token is unchanged.`));
      name.value = "";
      instructor.value = "";
      onMade();
    } catch (error) {
      say(status, `Cannot make the class: ${error.message}`, "bad");
    }
  });
  return form;
}

export async function showClasses(box, context) {
  const list = el("div");
  const load = async () => {
    const { classes } = await api("/api/classes");
    if (!context.current()) return;
    list.replaceChildren(classes.length ? classTable(classes) : message("You are on no class's staff yet; an administrator adds you."));
    return classes;
  };
  const classes = await load();
  if (!context.current()) return;
  const admin = Boolean(context.me && context.me.admin);
  box.replaceChildren(heading(2, "Classes"), list);
  if (!admin) return;
  const accounts = el("section", { "aria-label": "Staff accounts" });
  const showStaff = (known) => showAccounts(accounts, known).catch((error) => accounts.replaceChildren(failure("Cannot load the staff accounts", error)));
  // A new class may bring a new instructor's account: both lists are asked again.
  const made = () => load().then((known) => known && showStaff(known)).catch(() => {});
  box.append(el("section", { "aria-label": "New class" }, heading(3, "New class"), newClassForm(made)),
             accounts,
             el("p", {}, el("a", { href: "#audit" }, "The whole server's audit log")));
  showStaff(classes);
}
