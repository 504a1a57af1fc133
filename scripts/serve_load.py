#!/usr/bin/env python3
"""Drives a running `cudojo serve` with submissions from the corpus and checks every verdict.

    scripts/serve_load.py URL [--count 50]

Signs in enough learners to stay under the per-learner limit, submits `count` files from
tests/submissions (cycled, in a fixed order), follows each job to its verdict, compares the verdict
with the expectation on the file's first line, and prints a table and the median queued-to-verdict
time. With --admin TOKEN (an administrator's, from `cudojo admin create`), the learners join a class
made for the run by its invite code instead, and once every job is judged the class's grid is
checked against the judged jobs themselves: each learner's attempts, accepted stages and best gate
ratio per stage, as read from their reports, and the CSV export's rows. Exit 0 only if every verdict
is right (and the grid agrees). Standard library only.
"""
import argparse
import collections
import http.client
import json
import pathlib
import statistics
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent


def call(url, method="GET", body=None, token=None):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def follow_stream(base, job_id, token):
    """Follows one job by its event stream, opened with a ticket as the page does: the (seconds since
    opening, event, phase) of every event, up to the result, and the finished job."""
    status, ticket = call(f"{base}/api/jobs/{job_id}/ticket", "POST", {}, token)
    assert status == 201, (status, ticket)
    host = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=120)
    opened = time.monotonic()
    connection.request("GET", ticket["events"])
    response = connection.getresponse()
    assert response.status == 200, response.status
    seen, event, job = [], None, None
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            job = json.loads(line[6:])
            seen.append((time.monotonic() - opened, event, job.get("phase")))
            if event == "result":
                break
    connection.close()
    return seen, job


def corpus():
    files = []
    for path in sorted((ROOT / "tests" / "submissions").glob("*/*.cu")):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            # A JSON body carries only Unicode text: a file that is not UTF-8 (the corpus has one, for
            # `cudojo check`) cannot be submitted through the API as it is.
            print(f"skipped {path.relative_to(ROOT)}: not UTF-8, so not sendable as JSON")
            continue
        expect = dict(kv.split("=", 1) for kv in text.splitlines()[0].removeprefix("// expect: ").split()
                      if "=" in kv)
        stage = path.parent.name.replace("-", "/")
        files.append((path, stage, expect["verdict"]))
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--idle", type=int, default=5,
                        help="first, this many correct stage-3 kernels one at a time on the idle server")
    parser.add_argument("--admin", help="an administrator's token: the learners join a class, whose grid is checked")
    args = parser.parse_args()
    base = args.url.rstrip("/")

    files = corpus()
    status, health = call(f"{base}/api/health")
    print(f"server: {health}")
    per_learner = 4
    tokens, learner_ids = [], []
    made = None
    if args.admin:
        status, made = call(f"{base}/api/classes", "POST", {"name": "Serve check", "instructor": f"check {int(time.time())}"},
                            args.admin)
        assert status == 201, made
        print(f"class {made['class']['id']} made; its learners join with invite code {made['class']['invite_code']}")
    for index in range((args.count + per_learner - 1) // per_learner):
        name = f"load{int(time.time())}-{index}"
        status, learner = (call(f"{base}/api/join", "POST", {"invite": made["class"]["invite_code"], "name": name})
                           if made else call(f"{base}/api/learners", "POST", {"name": name}))
        assert status == 201, learner
        tokens.append(learner["token"])
        learner_ids.append(learner["id"])

    # Queued-to-verdict of a correct kernel on an idle server (target: median <= 1.5 s on an H200):
    # one at a time, each after a pause such as a learner reading the last result would take.
    if args.idle:
        status, learner = call(f"{base}/api/learners", "POST", {"name": f"idle{int(time.time())}"})
        assert status == 201, learner
        source = (ROOT / "tests" / "submissions" / "reduction-3" / "tree.cu").read_text(encoding="utf-8")
        idle_waits = []
        for _ in range(args.idle):
            time.sleep(3)
            status, job = call(f"{base}/api/jobs", "POST", {"stage": "reduction/3", "source": source}, learner["token"])
            assert status == 202, (status, job)
            # Followed by its event stream: every phase as the judge reaches it, then the result.
            seen, job = follow_stream(base, job["id"], learner["token"])
            idle_waits.append(job["queued_to_verdict_ms"] / 1000)
            phases = ", ".join(f"{phase or event} {at:.2f}" for at, event, phase in seen)
            print(f"idle server, reduction-3/tree.cu: {job['verdict']}, queued-to-verdict {idle_waits[-1]:.2f} s; "
                  f"stream (s after opening): {phases}")
        print(f"idle server: queued-to-verdict median {statistics.median(idle_waits):.2f} s over {len(idle_waits)} "
              f"(target <= 1.5 s)")

    submitted = []
    started = time.time()
    for index in range(args.count):
        path, stage, expected = files[index % len(files)]
        token = tokens[index // per_learner]
        status, job = call(f"{base}/api/jobs", "POST", {"stage": stage, "source": path.read_text(encoding="utf-8")}, token)
        assert status == 202, (status, job)
        submitted.append((job["id"], token, path, stage, expected))
    print(f"submitted {len(submitted)} jobs in {time.time() - started:.2f} s")

    results = []
    finished = []  # (learner id, stage, verdict, report) of every judged job, for the grid's check
    judges = collections.Counter()  # (node, host, GPU) named by each report
    for job_id, token, path, stage, expected in submitted:
        while True:
            status, job = call(f"{base}/api/jobs/{job_id}", token=token)
            if job.get("state") == "done":
                break
            time.sleep(0.2)
        run_s = job["finished_at"] - job["started_at"]
        results.append((job_id, path, stage, expected, job["verdict"], job["queued_to_verdict_ms"] / 1000, run_s))
        finished.append((learner_ids[tokens.index(token)], stage, job["verdict"], job.get("report") or {}))
        judged_by = (job.get("report") or {}).get("judged_by") or {}
        judges[(judged_by.get("node"), judged_by.get("host"), judged_by.get("gpu"))] += 1
    total_s = time.time() - started

    wrong = 0
    print(f"\n{'job':>4} {'file':42} {'expected':20} {'got':20} {'queued->verdict':>15} {'run':>7}")
    for job_id, path, stage, expected, got, waited, run_s in results:
        mark = "ok" if got == expected else "WRONG"
        wrong += got != expected
        print(f"{job_id:>4} {str(path.relative_to(ROOT / 'tests' / 'submissions')):42} {expected:20} {got:20} "
              f"{waited:13.2f} s {run_s:5.2f} s {mark}")
    waits = [r[5] for r in results]
    runs = [r[6] for r in results]
    print(f"\n{len(results)} jobs, {len(results) - wrong} verdicts right, {wrong} wrong; all done {total_s:.1f} s "
          f"after the first submission (target for 50: <= 90 s)")
    print(f"queued-to-verdict: median {statistics.median(waits):.2f} s, min {min(waits):.2f} s, max {max(waits):.2f} s")
    print(f"run time per job (started to verdict): median {statistics.median(runs):.2f} s, "
          f"min {min(runs):.2f} s, max {max(runs):.2f} s")
    for (node, host, gpu), count in judges.most_common():
        print(f"judged by node {node} on host {host}, GPU {gpu}: {count} jobs")
    status, nodes = call(f"{base}/api/nodes")
    print(f"GET /api/nodes: {status} {json.dumps(nodes)}")
    disagreements = check_grid(base, made, finished) if made else 0
    return 1 if wrong or disagreements else 0


def check_grid(base, made, finished):
    """The class's grid against the judged jobs: attempts, accepted and best gate ratio for each
    learner and stage, read from the reports as the judge wrote them. Returns how many disagree."""
    expected = collections.defaultdict(lambda: {"attempts": 0, "accepted": False, "best": None})
    for learner, stage, verdict, report in finished:
        cell = expected[(learner, stage)]
        cell["attempts"] += 1
        metrics = report.get("metrics") or {}
        # The gate's ratio: the baseline's when the stage has one (a report may name it null), else the
        # reference's, as the grid reads it.
        ratio = metrics.get("baseline_ratio")
        if ratio is None:
            ratio = metrics.get("time_ratio")
        if verdict == "accepted":
            cell["accepted"] = True
            if ratio is not None:
                cell["best"] = ratio if cell["best"] is None else min(cell["best"], ratio)
    instructor = made["instructor"]["token"]
    class_id = made["class"]["id"]
    status, grid = call(f"{base}/api/classes/{class_id}/grid", token=instructor)
    assert status == 200, grid
    disagreements = 0
    for row in grid["learners"]:
        for stage, cell in row["cells"].items():
            want = expected.get((row["id"], stage), {"attempts": 0, "accepted": False, "best": None})
            got = (cell["attempts"], cell["status"] == "accepted", cell.get("best_ratio"))
            wanted = (want["attempts"], want["accepted"], want["best"])
            same = got[:2] == wanted[:2] and (got[2] == wanted[2] or (got[2] is not None and wanted[2] is not None
                                                                     and abs(got[2] - wanted[2]) < 1e-9))
            if not same:
                disagreements += 1
                print(f"GRID WRONG learner {row['id']} {stage}: grid {got}, jobs {wanted}")
    cells = sum(1 for row in grid["learners"] for cell in row["cells"].values() if cell["attempts"] > 0)
    request = urllib.request.Request(f"{base}/api/classes/{class_id}/export",
                                     headers={"Authorization": f"Bearer {instructor}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        rows = response.read().decode().strip().split("\r\n")
    print(f"class grid: {len(grid['learners'])} learners, {cells} cells with jobs, {len(expected)} expected from the "
          f"jobs, {disagreements} disagreeing; CSV export: {len(rows) - 1} rows")
    if cells != len(expected) or len(rows) - 1 != len(grid["learners"]):
        disagreements += 1
    return disagreements


if __name__ == "__main__":
    sys.exit(main())
