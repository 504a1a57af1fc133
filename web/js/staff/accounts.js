// Staff accounts, for an administrator (on the class list): everyone who can sign in as staff,
// whether they administer the server, their role in each class; a new account (its token shown
// once) and a new token for an account that lost theirs (the old one stops working).

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { button, field, heading, scrolling, statusLine, say, table, yesNo } from "./ui.js";
import { secretBox } from "./secret.js";

function rolesText(roles, classes) {
  const names = new Map(classes.map((cls) => [String(cls.id), cls.name]));
  const parts = Object.entries(roles || {}).map(([id, role]) => `${names.get(id) || `class ${id}`}: ${role === "ta" ? "TA" : role}`);
  return parts.length ? parts.join(", ") : "none";
}

// `classes`: GET /api/classes's list, to name the classes in each account's roles.
export async function showAccounts(box, classes) {
  const shown = el("div");
  const status = statusLine();
  const list = el("div");
  const load = async () => {
    const { staff } = await api("/api/staff");
    list.replaceChildren(scrolling("Staff accounts", table(`Staff accounts (${staff.length})`,
      ["Name", "Administrator", "Classes", "Created", "Token"],
      staff.map((member) => el("tr", { "data-staff": member.id },
        el("th", { scope: "row" }, member.name), el("td", {}, yesNo(member.admin)),
        el("td", {}, rolesText(member.roles, classes)), el("td", {}, localTime(member.created_at)),
        el("td", {}, button("Reset token", () => reset(member), { "aria-label": `Reset token of ${member.name}` })))))));
  };
  const reset = async (member) => {
    if (!(await confirmDialog(`Give ${member.name} a new token? Their old one stops working at once.`, "Reset"))) return;
    try {
      const answer = await api(`/api/staff/${member.id}/token`, { method: "POST", body: "{}" });
      shown.replaceChildren(secretBox(`New token of ${answer.name}`, answer.token));
    } catch (error) {
      say(status, `Cannot reset the token: ${error.message}`, "bad");
    }
  };
  const name = el("input", { required: "", maxlength: "40", autocomplete: "off" });
  const admin = el("input", { type: "checkbox" });
  const form = el("form", { class: "staff-form", "aria-label": "New staff account" },
    field("Name", name), el("label", { class: "check" }, admin, " an administrator"),
    el("button", { type: "submit" }, "Make the account"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const made = await api("/api/staff", { method: "POST", body: JSON.stringify({ name: name.value.trim(), admin: admin.checked }) });
      shown.replaceChildren(secretBox(`Token of ${made.name}`, made.token));
      name.value = "";
      admin.checked = false;
      await load();
    } catch (error) {
      say(status, `Cannot make the account: ${error.message}`, "bad");
    }
  });
  box.replaceChildren(heading(3, "Staff accounts"), form, status, shown, list);
  await load();
}
