#!/usr/bin/env python3
"""A rejudging on three `cudojo serve` nodes sharing PostgreSQL, a judge killed mid-rerun.

    tests/cluster/rejudge.py --cudojo build/cudojo --work DIR [--jobs 50] [--clients 10] [--timeout 300]

Theory of operation. The test starts its own PostgreSQL cluster (tests/postgres/cluster.sh, in
DIR/pg) and three nodes on it, all judging with a copy of the course in DIR/course (CUDOJO_COURSE):
W answers HTTP and judges nothing (--workers 0); A and B judge, two workers each, with no HTTP and
a 4 s lease. An administrator made with `cudojo admin create` opens a class with an instructor;
the learners join it by its invite code and submit the jobs on reduction/3 through W, half the
starter (no_device on this GPU-less machine) and half a copy with a syntax error (compile_error).
Once all are done the test
  1. tightens the stage's gate in the copied course and sends every node SIGHUP: the class's
     /versions must show a new current version with every job under an older one;
  2. starts a rejudging of the stage's older jobs and cancels it at once: the grid (its
     generated_at aside) and the CSV export must be byte for byte as before, and no rerun row left;
  3. starts another, SIGKILLs A (and its workers) as soon as the database shows it running reruns,
     and starts A again under its name once B has taken back what A held, as a supervisor would.
     Each rerun must be recorded once (the nodes' `job ID recorded` lines), and the rejudging's
     matrix must match the originals' verdicts with nothing flipped: nothing a CPU judge sees moved;
  4. applies it: every original reports stage_version_current, /versions shows no older job, the
     export has the same statuses, and applying twice answers 409;
  5. asks as a learner for each rerun by id: 404, as a rerun is the instructor's.
It prints the checks and a summary and exits 0 when every check held, else 1. Everything it starts
(nodes, their workers, the cluster) is stopped at the end, whatever happened. The database is read
with psql, the API with http.client: standard library only.
"""
import collections
import csv
import http.client
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from cluster_harness import (EXPECTED_VERDICT, REPO, Checks, Client, Database, argument_parser, check_verdicts,
                             cluster, count_records, first, job_shares, judged_by_node, log, request,
                             started_at, starter_sources, stop_cluster, wait_for, wait_until_done)
from multi_node import HELD_BY_A, KillableNode

STAGE = "reduction/3"
STAGE_FILE = Path("reduction") / "03-block-tree" / "stage.toml"
GATE_BEFORE, GATE_AFTER = "max_time_ratio = 2.0", "max_time_ratio = 1.5"
JUDGE_WORKERS = 2
LEASE_SECONDS = 4
RETAKE_SECONDS = LEASE_SECONDS * 5 + 30  # a dead node's reruns go back to work a lease after its last renewal
GENERATED_AT = re.compile(rb'"generated_at":[-+0-9.eE]+,?')


def expect(status, wanted, what, body):
    """A step the rest of the run depends on: stop here when it did not answer as wanted."""
    if status not in wanted:
        raise RuntimeError(f"{what} answered {status}: {body}")
    return body


def fetch_raw(web, path, token):
    """(status, body bytes) of a GET: the export is CSV, and the grid is compared as sent."""
    connection = http.client.HTTPConnection(*web, timeout=30)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def stage_versions(web, path, token):
    """The stage's entry of the class's /versions: current, current_jobs, older_jobs..."""
    status, body = request(web, "GET", f"{path}/versions", token=token)
    expect(status, (200,), "GET /versions", body)
    return next(stage for stage in body["stages"] if stage["stage"] == STAGE)


def export_statuses(csv_bytes):
    """{learner name: the stage's status} and the number of rows, from the CSV export."""
    rows = list(csv.DictReader(io.StringIO(csv_bytes.decode())))
    return {row["name"]: row[f"{STAGE} status"] for row in rows}, len(rows)


def run(args, work, checks, nodes, facts):
    binary = str(Path(args.cudojo).resolve())
    course = work / "course"
    shutil.rmtree(course, ignore_errors=True)
    shutil.copytree(REPO / "course", course)
    # Every node (and `cudojo starter`) reads the copy, which step 1 edits; calibration stays the repo's.
    os.environ.update(CUDOJO_COURSE=str(course), CUDOJO_CALIBRATION=str(REPO / "calibration"))
    good_source, broken_source = starter_sources(binary, STAGE)

    cluster("stop", work / "pg")  # a cluster left by an earlier run would not be empty
    url = cluster("start", work / "pg")
    log(f"database {url}")
    database = Database(url)
    made = subprocess.run([binary, "admin", "create", "rejudge-admin", "--store", url, "--json"],
                          capture_output=True, text=True, check=True)
    admin = json.loads(made.stdout)["token"]

    judge_arguments = ["--no-http", "--workers", str(JUDGE_WORKERS), "--limit", f"job_lease_seconds={LEASE_SECONDS}"]
    nodes["W"] = KillableNode("W", binary, url, work, ["--workers", "0", "--node-name", "W"])
    nodes["A"] = KillableNode("A", binary, url, work, [*judge_arguments, "--node-name", "A"])
    nodes["B"] = KillableNode("B", binary, url, work, [*judge_arguments, "--node-name", "B"])
    for node in nodes.values():
        node.wait_started()
    web = ("127.0.0.1", nodes["W"].port)

    # The class, its learners, their jobs.
    status, made = request(web, "POST", "/api/classes", {"name": "Rejudging", "instructor": "Rejudge Prof"}, admin)
    expect(status, (201,), "POST /api/classes", made)
    cls, instructor = f"/api/classes/{made['class']['id']}", made["instructor"]["token"]
    tokens = []
    for index in range(args.clients):
        status, joined = request(web, "POST", "/api/join", {"invite": made["class"]["invite_code"],
                                                            "name": f"learner-{index:02d}"})
        tokens.append(expect(status, (200, 201), "POST /api/join", joined)["token"])
    deadline = time.monotonic() + 240
    clients = [Client(index, web, token, share, broken_source, good_source, deadline, parity=index, stage=STAGE)
               for index, (token, share) in enumerate(zip(tokens, job_shares(args.jobs, args.clients)))]
    facts["first_submit"] = time.monotonic()
    for client in clients:
        client.start()
    for client in clients:
        client.join(260)
    kinds = {job_id: kind for client in clients for job_id, kind in client.accepted}
    token_of = {job_id: client.token for client in clients for job_id, _ in client.accepted}
    checks("every job was accepted", len(kinds) == args.jobs, f"{len(kinds)} of {args.jobs}")
    jobs = wait_until_done(database, kinds, args.timeout, interval=0.5)
    facts["judged_s"] = time.monotonic() - facts["first_submit"]
    check_verdicts(checks, kinds, jobs)

    # 1. A stricter gate, reloaded by SIGHUP on every node.
    before = stage_versions(web, cls, instructor)
    stage_file = course / STAGE_FILE
    text = stage_file.read_text()
    if text.count(GATE_BEFORE) != 1:
        raise RuntimeError(f"{stage_file} has no single '{GATE_BEFORE}' line to change")
    stage_file.write_text(text.replace(GATE_BEFORE, GATE_AFTER))
    for node in nodes.values():
        os.kill(node.pid, signal.SIGHUP)
    reloaded = [label for label, node in nodes.items()
                if wait_for(lambda: any("SIGHUP: course reloaded" in line for line in list(node.lines)), 20)]
    checks("every node reloaded the course on SIGHUP", len(reloaded) == 3, f"reloaded: {reloaded}")
    after = stage_versions(web, cls, instructor)
    facts["versions"] = (before["current"], after["current"])
    checks(f"{STAGE}'s version changed and all its {args.jobs} jobs are older",
           after["current"] != before["current"] and after["older_jobs"] == len(kinds) and after["current_jobs"] == 0,
           f"{before['current'][:12]} -> {after['current'][:12]}, older_jobs {after['older_jobs']}, "
           f"current_jobs {after['current_jobs']}")

    # 2. A rejudging cancelled at once changes nothing.
    grid_before, export_before = fetch_raw(web, f"{cls}/grid", instructor), fetch_raw(web, f"{cls}/export", instructor)
    wanted = {"stage": STAGE, "older_versions": True, "reason": "max_time_ratio 2.0 -> 1.5"}
    status, first_rejudging = request(web, "POST", f"{cls}/rejudgings", wanted, instructor)
    expect(status, (201,), "POST rejudgings", first_rejudging)
    checks("a rejudging of the older jobs takes every one", first_rejudging["jobs"] == len(kinds),
           f"{first_rejudging['jobs']} jobs")
    status, cancelled = request(web, "POST", f"{cls}/rejudgings/{first_rejudging['id']}/cancel", token=instructor)
    checks("cancelling it answers 200, cancelled", status == 200 and cancelled.get("state") == "cancelled",
           f"{status} {cancelled.get('state') if cancelled else cancelled}")
    grid_after, export_after = fetch_raw(web, f"{cls}/grid", instructor), fetch_raw(web, f"{cls}/export", instructor)
    checks("the grid is byte-identical after the cancel (generated_at aside)",
           grid_before[0] == 200 and GENERATED_AT.sub(b"", grid_before[1]) == GENERATED_AT.sub(b"", grid_after[1]))
    checks("the CSV export is byte-identical after the cancel",
           export_before[0] == 200 and export_before[1] == export_after[1])
    left = database.integer(f"select count(*) from jobs where rejudging_id = {first_rejudging['id']}")
    checks("no rerun row of the cancelled rejudging remains", left == 0, f"{left} rows")

    # 3. Another, with A killed while it runs reruns.
    status, second = request(web, "POST", f"{cls}/rejudgings", wanted, instructor)
    expect(status, (201,), "POST rejudgings (again)", second)
    rid, path = second["id"], f"{cls}/rejudgings/{second['id']}"
    facts["rejudging_started"] = time.monotonic()
    running_on_a = f"select id from jobs where rejudging_id = {rid} and state = 'running' and {HELD_BY_A}"
    if not wait_for(lambda: database.ids(running_on_a), timeout=60, interval=0.05):
        raise RuntimeError(f"no rerun ran on A within 60 s; see {nodes['A'].err_path}")
    survivors = nodes["A"].kill()
    facts["kill_time"] = time.time()
    held_rows = [line.split("|") for line in database.query(
        f"select id, holder from jobs where rejudging_id = {rid} and state = 'running' and {HELD_BY_A}").splitlines()]
    facts["held"] = [int(job_id) for job_id, _ in held_rows]
    killed_holders = {holder for _, holder in held_rows}
    log(f"SIGKILLed A while it held reruns {first(facts['held'], 20)}")
    checks("A's workers ended with it", not survivors, f"still alive 2 s after: {survivors}" if survivors else "")
    holders = ",".join(f"'{holder}'" for holder in killed_holders) or "''"
    retaken = wait_for(lambda: database.integer(f"select count(*) from jobs where rejudging_id = {rid} "
                                                f"and state = 'running' and holder in ({holders})") == 0,
                       timeout=RETAKE_SECONDS, interval=0.2)
    checks("A's reruns went back to work once their lease ran out", retaken)
    nodes["A-restarted"] = KillableNode("A-restarted", binary, url, work, [*judge_arguments, "--node-name", "A"])
    nodes["A-restarted"].wait_started()

    def judged():
        status, body = request(web, "GET", path, token=instructor)
        return body if status == 200 and body["judged"] == body["jobs"] else None
    detail = wait_for(judged, timeout=args.timeout, interval=0.5)
    facts["rejudged_s"] = time.monotonic() - facts["rejudging_started"]
    checks("the rejudging shows judged == jobs", detail, f"in {facts['rejudged_s']:.1f} s")
    status, detail = request(web, "GET", f"{path}?items=all", token=instructor)
    expect(status, (200,), "GET rejudging", detail)
    items = detail["items"]
    reruns = {item["rerun"]: item["job"] for item in items}
    jobs = database.jobs()

    # Every line is in the logs once the judges have stopped (W stays: the API is asked below).
    for label in ("A-restarted", "B"):
        nodes[label].stop()
    records, recorded_by = count_records(nodes, ("A", "A-restarted", "B"))
    facts["rerun_records"] = collections.Counter(label for rerun in reruns for label in recorded_by[rerun])

    def recorded_just_before_the_kill(rerun):  # A wrote the result and died before its line was out
        job = jobs.get(rerun, {})
        return (records[rerun] == 0 and job.get("state") == "done" and judged_by_node(job) == "A"
                and (job.get("finished_at") or 0) <= facts["kill_time"])
    not_once = [f"{r} x{records[r]} {recorded_by[r]}" for r in reruns
                if records[r] != 1 and not recorded_just_before_the_kill(r)]
    checks("each rerun finished and was recorded once, by one node", len(reruns) == len(kinds) and not not_once
           and all(jobs[r]["state"] == "done" for r in reruns), first(not_once))
    again = [r for r in facts["held"] if (jobs[r].get("attempts") or 0) < 2 or "A" in recorded_by[r]]
    checks("A's reruns were judged again by B or the restarted A (attempts >= 2)", facts["held"] and not again,
           first(again))
    matrix = {(cell["before"], cell["after"]): cell["jobs"] for cell in detail["summary"]["matrix"]}
    expected = collections.Counter((EXPECTED_VERDICT[kind],) * 2 for kind in kinds.values())
    facts["matrix"] = matrix
    checks("the matrix is the originals' verdicts, each unchanged", matrix == dict(expected), f"{matrix}")
    checks("nothing flipped (summary.flipped == 0, flips empty)",
           detail["summary"]["flipped"] == 0 and detail["flips"] == [], f"flipped {detail['summary']['flipped']}")
    stale = [item["rerun"] for item in items if (item["after"] or {}).get("stage_version") != after["current"]]
    checks("every rerun was judged under the new version", not stale, first(stale))

    # 4. Apply.
    status, applied = request(web, "POST", f"{path}/apply", token=instructor)
    checks("applying answers 200, applied", status == 200 and applied.get("state") == "applied",
           f"{status} {applied.get('state') if applied else applied}")
    not_current = []
    for job_id in kinds:
        status, shown = request(web, "GET", f"{cls}/jobs/{job_id}", token=instructor)
        if status != 200 or shown.get("stage_version_current") is not True:
            not_current.append(f"{job_id} ({status}, {shown.get('stage_version_current') if shown else None})")
    checks("every original job now reports stage_version_current", not not_current, first(not_current))
    final = stage_versions(web, cls, instructor)
    checks(f"/versions shows no older job of {STAGE}", final["older_jobs"] == 0 and final["current_jobs"] == len(kinds),
           f"older_jobs {final['older_jobs']}, current_jobs {final['current_jobs']}")
    statuses_before, _ = export_statuses(export_before[1])
    statuses_after, rows = export_statuses(fetch_raw(web, f"{cls}/export", instructor)[1])
    checks("the export has one row per learner, with the same statuses",
           rows == args.clients and statuses_after == statuses_before, f"{rows} rows; {statuses_after}")
    status, body = request(web, "POST", f"{path}/apply", token=instructor)
    checks("applying again answers 409", status == 409, f"{status} {body}")

    # 5. A rerun is no learner's job.
    shown = {rerun: request(web, "GET", f"/api/jobs/{rerun}", token=token_of[job])[0] for rerun, job in reruns.items()}
    checks("a learner's GET /api/jobs/{rerun} answers 404", shown and set(shown.values()) == {404},
           f"{collections.Counter(shown.values())}")


def print_summary(args, checks, nodes, facts):
    checks.print_table(72)
    rows = [("jobs", f"{args.jobs} from {args.clients} learners on {STAGE}, "
                     f"judged in {facts.get('judged_s', 0):.1f} s"),
            ("stage version", " -> ".join(v[:12] for v in facts.get("versions", ()))),
            ("rejudging", f"judged in {facts.get('rejudged_s', 0):.1f} s; reruns recorded per node: "
                          f"{', '.join(f'{k} {v}' for k, v in sorted(facts.get('rerun_records', {}).items()))}"),
            ("held by A when killed", first(facts.get("held", []), 10)),
            ("matrix", ", ".join(f"{b}->{a} {n}" for (b, a), n in sorted(facts.get("matrix", {}).items()))),
            ("run time", f"{time.monotonic() - started_at:.1f} s")]
    for name, value in rows:
        print(f"{name:<24} {value}")
    print(f"logs: {Path(args.work).resolve()}/{{W,A,A-restarted,B}}.{{out,err}}")


def main():
    parser = argument_parser(__doc__.split("\n")[0], jobs=50, clients=10)
    parser.add_argument("--timeout", type=int, default=300, help="seconds to wait for the last verdict")
    args = parser.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    checks, nodes, facts = Checks(), {}, {}
    try:
        run(args, work, checks, nodes, facts)
    except Exception as error:  # the run stops here; what was checked so far is still printed
        checks(f"the scenario ran to its end ({type(error).__name__})", False, str(error))
    finally:
        for node in nodes.values():
            node.stop()
        stop_cluster(work)
    print_summary(args, checks, nodes, facts)
    return checks.exit_status("rejudge")


if __name__ == "__main__":
    sys.exit(main())
