// A rejudging and a stage version in words, for rejudge.js and rejudging.js: pure functions of
// the API's objects (docs/openapi.yaml: Rejudging, RejudgeItem, StageVersions), so both only draw.

import { localTime } from "../api.js";

// The verdicts a filter may name, in docs/verdicts.md's order of priority.
export const VERDICTS = ["accepted", "too_slow", "wrong_answer", "time_limit_exceeded", "runtime_error",
                         "compile_error", "no_device", "internal_error"];

export const STATE_WORDS = { judging: "judging", applied: "applied", cancelled: "cancelled" };

export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// A version digest (16 hex digits) as people compare it: its first 8. null: judged before
// versions were recorded.
export const shortVersion = (digest) => (digest ? digest.slice(0, 8) : "not recorded");

// "0.93×", or "" without a ratio.
export const ratioText = (ratio) => (typeof ratio === "number" ? `${ratio.toFixed(2)}×` : "");

// The filter a rejudging was started with, in words: "reduction/3, judged under older versions,
// verdict accepted". `names`: learner id -> name, where known.
export function filterWords(filter, names = new Map()) {
  if (!filter || typeof filter !== "object") return String(filter || "");
  const parts = [];
  if (filter.stage) parts.push(filter.stage);
  if (filter.not_version) parts.push(`judged under versions other than ${shortVersion(filter.not_version)}`);
  if (filter.verdict) parts.push(`verdict ${filter.verdict}`);
  if (filter.learner) parts.push(`learner ${names.get(filter.learner) || `#${filter.learner}`}`);
  if (filter.since !== undefined) parts.push(`sent since ${localTime(filter.since)}`);
  if (filter.until !== undefined) parts.push(`sent before ${localTime(filter.until)}`);
  return parts.length ? parts.join(", ") : "every finished job";
}

// Where a rejudging stands: "judging: 3 of 5 jobs judged again", "applied 2 Dec 2026, 14:05".
export function progressWords(rejudging) {
  if (rejudging.state === "applied") return `Applied ${localTime(rejudging.ended_at)}: the new verdicts are in place.`;
  if (rejudging.state === "cancelled") return `Cancelled ${localTime(rejudging.ended_at)}: no verdict changed.`;
  if (rejudging.judged < rejudging.jobs) {
    return `Judging: ${rejudging.judged} of ${plural(rejudging.jobs, "job")} judged again (reruns wait behind learners' jobs).`;
  }
  return `Judged: all ${plural(rejudging.jobs, "job")} judged again; apply or cancel.`;
}

// Why Apply cannot be pressed yet, or null when it can.
export function applyBlocked(rejudging) {
  if (rejudging.state !== "judging") return `It was ${rejudging.state} already.`;
  if (rejudging.judged < rejudging.jobs) {
    return `Apply waits until every job is judged again: ${rejudging.judged} of ${rejudging.jobs} so far.`;
  }
  return null;
}

// What applying changes, for the confirm dialog: "2 of 5 jobs change verdict (accepted → too_slow: 2)".
export function changeWords(detail) {
  const { jobs, flipped, matrix } = detail.summary;
  if (!flipped) return `None of its ${plural(jobs, "job")} changes verdict; their reports are replaced by the new ones.`;
  const moves = matrix.filter((cell) => cell.before !== cell.after).map((cell) => `${cell.before} → ${cell.after}: ${cell.jobs}`);
  return `${flipped} of ${plural(jobs, "job")} ${flipped === 1 ? "changes" : "change"} verdict (${moves.join("; ")}); the others keep theirs, with new reports.`;
}
