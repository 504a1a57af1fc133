// The staff view's state lives in the URL's hash, so a link reproduces what someone saw:
//
//   #classes (or nothing)           the classes, and for an administrator the staff accounts
//   #audit                          the whole server's audit log (administrators)
//   #class/3  #class/3/grid         a class's progress grid; ?q=&status=&stage=&sort= its filters
//   #class/3/learner/17             a learner's runs; ?stage= one stage's
//   #class/3/job/55                 one run: source, report, diff against the run before
//   #class/3/rejudge                stage versions, a new rejudging, the class's rejudgings
//   #class/3/rejudge/7              one rejudging; ?items=all lists every job
//   #class/3/links                  the live links learners made to their runs
//   #class/3/roster, /deadlines, /staff, /audit, /settings
//   #reduction/3, #course           the course's lessons, read as a learner would
//   #shared/TOKEN                   a run a learner shared, as anyone sees it (stages.js)
//
// Pure functions: parseHash reads a hash, classHref writes one, replaceParams changes the query of
// the hash in place (a filter being typed is not a step of the browser's history).

export const CLASS_VIEWS = ["grid", "roster", "deadlines", "rejudge", "staff", "links", "audit", "settings"];

const number = (text) => (/^\d+$/.test(text || "") ? Number(text) : null);

export function parseHash(hash) {
  const text = hash.replace(/^#/, "");
  const cut = text.indexOf("?");
  const path = cut < 0 ? text : text.slice(0, cut);
  const params = new URLSearchParams(cut < 0 ? "" : text.slice(cut + 1));
  const parts = path.split("/");
  if (path === "" || path === "classes") return { view: "classes", params };
  if (path === "audit") return { view: "server-audit", params };
  const classId = parts[0] === "class" ? number(parts[1]) : null;
  if (classId === null) return { view: "course", stageId: decodeURIComponent(path), params };
  const sub = parts[2] || "grid";
  if (sub === "learner" && number(parts[3]) !== null) return { view: "learner", classId, learnerId: number(parts[3]), params };
  if (sub === "job" && number(parts[3]) !== null) return { view: "job", classId, jobId: number(parts[3]), params };
  if (sub === "rejudge" && number(parts[3]) !== null) return { view: "rejudging", classId, rejudgingId: number(parts[3]), params };
  return { view: CLASS_VIEWS.includes(sub) ? sub : "grid", classId, params };
}

// "#class/3/learner/17?stage=reduction%2F2": `params` an object or URLSearchParams; empty values
// are left out.
export function classHref(classId, sub = "grid", params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of params instanceof URLSearchParams ? params : Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") query.set(key, value);
  }
  const tail = String(query);
  return `#class/${classId}/${sub}${tail ? `?${tail}` : ""}`;
}

// The hash's path stays, its query becomes `params`; no hashchange, no history entry.
export function replaceParams(params) {
  const text = location.hash.replace(/^#/, "");
  const path = text.includes("?") ? text.slice(0, text.indexOf("?")) : text;
  const query = String(params);
  history.replaceState(history.state, "", `${location.pathname}${location.search}#${path}${query ? `?${query}` : ""}`);
}
