// What more than one module of the page needs to know about it right now. A value only one module
// uses stays inside that module. The browser tests (tests/browser/*_test.cjs) read stage, me and
// events by importing this module.

export const state = {
  view: "learner",  // "learner" or "staff": which view main.js started
  stages: [],      // every stage of the course in the order of the page (stages.js)
  stage: null,     // the open stage, as GET /api/stages/ID gave it (stages.js)
  language: "cuda",  // the language the editor holds (source.js)
  me: null,        // who is signed in, as GET /api/me says: a learner or a member of staff (account.js)
  deadlines: {},   // the learner's class's deadlines: {STAGE: {due_at, hide_leaderboard}} (account.js, stages.js)
  progress: null,  // per stage id: { status, best_time_ratio, ... }, or null when unknown (stages.js)
  events: null,    // the EventSource following the job now running, if any (run.js)
};
