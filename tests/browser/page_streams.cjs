// Following a run by event stream, and polling when no stream can be had (run by page_test.cjs).
"use strict";
const {
  binary, webDir, serve, checks, expect, tokensSeen, recordRequests, isPost, isEvents, isPoll, stored,
  readState, waitForState, serveVendorFallback, openStage,
} = require("./page_support.cjs");

// A server that judges nothing (its jobs stay queued). A ticket refused: the page polls GET
// /api/jobs/N once a second and opens no stream. A stream opened with a ticket, then the learner's
// four more (max_event_streams_per_learner is 4, sent as a script would, the token in the header):
// the page's stream, the oldest, gets "event: replaced", and the page polls instead of asking again.
async function checkStreamFallback(browser) {
  const { server, url } = await serve.startServer(binary, webDir, 0);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const others = new AbortController();
  try {
    await serveVendorFallback(context, webDir);
    recordRequests(context);
    const requests = [];
    context.on("request", (request) => requests.push(request));
    const page = await context.newPage();
    const pageErrors = [];
    page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
    await page.goto(url);
    await page.fill("#learner-name", "streams");
    await page.click("#signin-button");
    await page.waitForSelector("#who:has-text('signed in as streams')");
    await page.click("#token-done");
    const token = await stored(page, "cudojo.token");
    tokensSeen.add(token);
    await openStage(page, "reduction/1");

    // 1. The ticket is refused (503 once): the page polls.
    await page.route("**/api/jobs/*/ticket", (route) => route.fulfill({ status: 503, json: { error: "try again" } }), { times: 1 });
    let posted = page.waitForResponse((r) => isPost(r.request(), "/api/jobs"));
    await page.click("#run");
    const first = await (await posted).json();
    for (let n = 0; n < 2; n++) await page.waitForRequest((r) => isPoll(r, first.id), { timeout: 5000 });
    expect(requests.some((r) => isPost(r, `/api/jobs/${first.id}/ticket`)), "the page asked for a ticket");
    expect(!requests.some((r) => isEvents(r, first.id)), "with the ticket refused the page opens no stream ...");
    expect((await page.textContent("#status")).startsWith("queued"), `... and polls, showing the queue (${await page.textContent("#status")})`);

    // 2. The page's stream is replaced by the learner's fifth. (On another stage: reduction/1's Run
    // waits for its first job, which this server never judges.)
    await page.reload();
    await openStage(page, "reduction/2");
    posted = page.waitForResponse((r) => isPost(r.request(), "/api/jobs"));
    const opened = page.waitForResponse((r) => /^\/api\/jobs\/\d+\/events$/.test(new URL(r.url()).pathname));
    await page.click("#run");
    const second = await (await posted).json();
    const stream = await opened;
    expect(stream.status() === 200 && new URL(stream.url()).pathname === `/api/jobs/${second.id}/events`,
           `the page opens the job's stream (${stream.status()} ${stream.url()})`);
    expect(new URL(stream.url()).searchParams.get("ticket"), "... with ?ticket=");
    await waitForState(page, (state) => Boolean(state.events && state.events.readyState === EventSource.OPEN));
    await readState(page, (state) => state.events.addEventListener("replaced", () => { window.streamReplaced = true; }));
    for (let n = 0; n < 4; n++) {
      const response = await fetch(new URL(`/api/jobs/${second.id}/events`, url),
                                   { headers: { Authorization: `Bearer ${token}` }, signal: others.signal });
      expect(response.status === 200, `the learner's stream ${n + 2} opens (${response.status})`);
      await response.body.getReader().read();  // its first event: the stream is counted
    }
    await page.waitForFunction(() => window.streamReplaced === true, null, { timeout: 5000 });
    for (let n = 0; n < 2; n++) await page.waitForRequest((r) => isPoll(r, second.id), { timeout: 5000 });
    expect(requests.filter((r) => isEvents(r, second.id)).length === 1, "replaced, the page polls and opens no other stream");
    expect(await readState(page, (state) => state.events === null || state.events.readyState === EventSource.CLOSED),
           "... and its replaced stream is closed");
    expect(pageErrors.length === 0, `no script errors in the stream checks (got ${pageErrors.length})`);
  } finally {
    others.abort();
    await context.close();
    server.kill("SIGTERM");
  }
}


module.exports = { checkStreamFallback };
