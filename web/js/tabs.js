// The result tabs under the editor (Result, Driver, Metrics, History, Leaderboard): which one is
// shown. report.js shows the Result tab when a report arrives; a tab's own module draws its panel.

import { loadLeaderboard } from "./leaderboard.js";

export function showTab(name) {
  for (const button of document.querySelectorAll(".tabs button")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === name));
  }
  for (const tab of document.querySelectorAll(".tab")) tab.hidden = tab.id !== `tab-${name}`;
  if (name === "leaderboard") loadLeaderboard();  // it loads only while shown
}

export function startTabs() {
  for (const button of document.querySelectorAll(".tabs button")) {
    button.addEventListener("click", () => showTab(button.dataset.tab));
  }
}
