// The result tabs under the editor (Result, Driver, Metrics, Assembly, History, Leaderboard): which
// one is shown. report.js shows the Result tab when a report arrives; a tab's own module draws its
// panel.
//
// The keyboard follows the WAI-ARIA tabs pattern (automatic activation): the tab list is one stop
// of Tab, on the selected tab (a roving tabindex); Left and Right move to the previous and next tab
// (round the ends), Home and End to the first and last, and the tab moved to is shown at once.
// The next Tab goes to the panel shown.

import { loadAssembly } from "./assembly.js";
import { loadLeaderboard } from "./leaderboard.js";

const tabButtons = () => [...document.querySelectorAll(".tabs [role='tab']")];

export function showTab(name) {
  for (const button of tabButtons()) {
    const selected = button.dataset.tab === name;
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
  }
  for (const tab of document.querySelectorAll(".tab")) tab.hidden = tab.id !== `tab-${name}`;
  if (name === "leaderboard") loadLeaderboard();  // it loads only while shown
  if (name === "assembly") loadAssembly();  // compiles the editor's text, unless it is shown already
}

// The tab a key moves to from the one at `index` of `count`, or -1 for a key that moves nothing.
function tabIndexAfter(key, index, count) {
  switch (key) {
    case "ArrowLeft": return (index + count - 1) % count;
    case "ArrowRight": return (index + 1) % count;
    case "Home": return 0;
    case "End": return count - 1;
    default: return -1;
  }
}

function moveByKey(event) {
  const buttons = tabButtons();
  const to = tabIndexAfter(event.key, buttons.indexOf(event.currentTarget), buttons.length);
  if (to < 0 || event.altKey || event.ctrlKey || event.metaKey) return;
  event.preventDefault();  // Home and End would scroll the page
  showTab(buttons[to].dataset.tab);
  buttons[to].focus();
}

export function startTabs() {
  for (const button of tabButtons()) {
    button.addEventListener("click", () => showTab(button.dataset.tab));
    button.addEventListener("keydown", moveByKey);
  }
  const selected = tabButtons().find((button) => button.getAttribute("aria-selected") === "true");
  showTab(selected ? selected.dataset.tab : "result");
}
