// What more than one module of the learner's view needs to know about the page right now. A value
// only one module uses stays inside that module. The browser test (tests/browser/page_test.cjs)
// reads stage, me and events by importing this module.

export const state = {
  stages: [],      // every stage of the course in the order of the page (stages.js)
  stage: null,     // the open stage, as GET /api/stages/ID gave it (stages.js)
  language: "cuda",  // the language the editor holds (source.js)
  me: null,        // the signed-in learner from the server: { id, name, leaderboard } (account.js)
  progress: null,  // per stage id: { status, best_time_ratio, ... }, or null when unknown (stages.js)
  events: null,    // the EventSource following the job now running, if any (run.js)
};
