// The Leaderboard tab: the open stage's best accepted runs (GET /api/stages/ID/leaderboard), and
// the learner's choice to be listed there (PUT /api/me). tabs.js loads it when the tab is shown;
// stages.js and main.js when the stage or the learner changes. It loads nothing while hidden. A
// class may hide a stage's board until its deadline (hidden_until): the tab says until when. Each
// row names the GPU that judged it; the learner's own row is marked "you".

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { api, localTime, toDate } from "./api.js";
import { languageBadge } from "./languages.js";
import { accountMessage } from "./message.js";

export async function loadLeaderboard() {
  if (!state.stage || $("#tab-leaderboard").hidden) return;
  const box = $("#leaderboard-table");
  const stageId = state.stage.id;
  const board = await api(`/api/stages/${stageId}/leaderboard`).catch((error) => ({ error }));
  if (!state.stage || state.stage.id !== stageId) return;
  if (board.error) {
    box.replaceChildren(el("p", { class: "muted" }, board.error.status === 404
      ? "This server has no leaderboards yet." : `Cannot load the leaderboard: ${board.error.message}`));
    return;
  }
  if (board.hidden_until) {
    box.replaceChildren(el("p", { class: "muted leaderboard-hidden" },
      `Your class hides this leaderboard until the deadline: hidden until ${localTime(board.hidden_until)}.`));
    return;
  }
  if (!board.entries || !board.entries.length) {
    box.replaceChildren(el("p", { class: "muted" }, "No accepted runs on the leaderboard yet."));
    return;
  }
  // Each row names the GPU that judged it (ratios from different GPUs are not the same race), and
  // the learner's own row says so in words, not only in colour.
  box.replaceChildren(el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Leaderboard" },
    el("table", { class: "leaderboard" },
      el("tr", {}, el("th", {}, "rank"), el("th", {}, "name"), el("th", {}, "time ratio"), el("th", {}, "time"),
         el("th", {}, "GPU"), el("th", {}, "language"), el("th", {}, "when")),
      ...board.entries.map((entry) => el("tr", { "data-rank": entry.rank, class: entry.mine ? "mine" : "" },
        el("td", { class: "num" }, entry.rank),
        el("td", {}, entry.name, ...(entry.mine ? [" ", el("span", { class: "badge you" }, "you")] : [])),
        el("td", { class: "num" }, entry.time_ratio ? `${entry.time_ratio.toFixed(2)} ×` : ""),
        el("td", { class: "num" }, entry.time_ms ? `${entry.time_ms.toFixed(4)} ms` : ""),
        el("td", { class: "gpu" }, entry.gpu || "unknown"),
        el("td", {}, languageBadge(entry.language || "cuda")),
        el("td", {}, entry.at ? toDate(entry.at).toLocaleDateString() : ""))))));
}

// The opt-in box as the server last said (state.me); unchecked when signed out.
export function showOptIn() {
  $("#leaderboard-optin").checked = Boolean(state.me && state.me.leaderboard);
}

export function startLeaderboard() {
  $("#leaderboard-optin").addEventListener("change", async (event) => {
    const wanted = event.target.checked;
    try {
      state.me = { ...(state.me || {}), ...(await api("/api/me", { method: "PUT", body: JSON.stringify({ leaderboard: wanted }) })) };
      event.target.checked = Boolean(state.me.leaderboard ?? wanted);
      loadLeaderboard();
    } catch (error) {
      event.target.checked = !wanted;
      accountMessage(`Cannot change the leaderboard setting: ${error.message}`);
    }
  });
}
