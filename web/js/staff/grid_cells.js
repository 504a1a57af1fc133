// The progress grid's data in words, and its sorting and filtering: pure functions of the grid
// (GET /api/classes/ID/grid), so grid.js only draws. A stage missing from a learner's cells is new
// and not yet due.

const STATUS_WORDS = { accepted: "✓ accepted", attempted: "… attempted", new: "– new" };
const TIMING_WORDS = { on_time: "on time", late: "accepted late", missing: "missing: past due" };
const STATUS_RANK = { accepted: 0, attempted: 1, new: 2 };
const plural = (n, one) => `${n} ${n === 1 ? one : `${one}s`}`;

export const cellOf = (learner, stage) => learner.cells[stage] || { status: "new", timing: "open", attempts: 0 };

// A cell's lines, status first: "✓ accepted", "3 runs, best 0.95×", "accepted late", "2 late runs".
export function cellLines(cell) {
  const lines = [STATUS_WORDS[cell.status] || cell.status];
  if (cell.attempts) lines.push(plural(cell.attempts, "run") + (cell.best_ratio ? `, best ${cell.best_ratio.toFixed(2)}×` : ""));
  if (TIMING_WORDS[cell.timing]) lines.push(TIMING_WORDS[cell.timing]);
  if (cell.late_jobs) lines.push(plural(cell.late_jobs, "late run"));
  return lines;
}

// The sort choices: [value, words]; a stage sorts its accepted first, best ratio first among them.
export function sortChoices(stages) {
  return [["name", "name"], ["student", "student id"], ["accepted", "stages accepted (most first)"],
          ...stages.map((stage) => [`stage:${stage}`, `${stage} (best first)`])];
}

export function sortLearners(learners, sort) {
  const byName = (a, b) => a.name.localeCompare(b.name);
  let compare = byName;
  if (sort === "student") {
    compare = (a, b) => (a.student_id || "\uffff").localeCompare(b.student_id || "\uffff", undefined, { numeric: true }) || byName(a, b);
  } else if (sort === "accepted") {
    compare = (a, b) => b.accepted - a.accepted || b.on_time - a.on_time || byName(a, b);
  } else if (sort.startsWith("stage:")) {
    const stage = sort.slice("stage:".length);
    compare = (a, b) => {
      const x = cellOf(a, stage);
      const y = cellOf(b, stage);
      return STATUS_RANK[x.status] - STATUS_RANK[y.status] || (x.best_ratio ?? Infinity) - (y.best_ratio ?? Infinity) || byName(a, b);
    };
  }
  return [...learners].sort(compare);
}

export const STATUS_FILTERS = [
  ["", "any status"], ["accepted", "accepted"], ["attempted", "attempted, not accepted"], ["new", "not tried"],
  ["late", "late (a late run, or accepted late)"], ["missing", "missing (past due, not accepted)"],
  ["not-signed-in", "not signed in yet"],
];

function cellMatches(cell, status) {
  if (status === "late") return cell.timing === "late" || (cell.late_jobs || 0) > 0;
  if (status === "missing") return cell.timing === "missing";
  return cell.status === status;
}

// The learners whose name, student id or email holds `q`, and with `status` in `stage` (any
// stage when empty).
export function filterLearners(learners, stages, { q = "", status = "", stage = "" }) {
  const words = q.trim().toLowerCase();
  return learners.filter((learner) => {
    if (words && ![learner.name, learner.student_id, learner.email].some((v) => v && v.toLowerCase().includes(words))) return false;
    if (!status) return true;
    if (status === "not-signed-in") return !learner.signed_in;
    return (stage ? [stage] : stages).some((id) => cellMatches(cellOf(learner, id), status));
  });
}
