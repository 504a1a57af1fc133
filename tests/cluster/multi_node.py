#!/usr/bin/env python3
"""Three `cudojo serve` nodes on one PostgreSQL database, under load, with a node killed and the
database restarted while jobs flow.

    tests/cluster/multi_node.py --cudojo build/cudojo --work DIR [--jobs 300] [--clients 30]
                                [--timeout 300]

Theory of operation. The test starts its own PostgreSQL cluster (tests/postgres/cluster.sh, in
DIR/pg) and three nodes on it: W answers HTTP and judges nothing; A and B judge, three workers
each, with no HTTP and a 4 s lease. One learner per client thread submits its share of the jobs
through W, half of them the stage's starter (it compiles: no_device on this GPU-less machine, a
real verdict on a GPU machine is not expected here) and half a copy with a syntax error
(compile_error), retrying on 429, 503 and dropped connections. Meanwhile the test
  1. SIGKILLs A as soon as the database shows it running jobs, and notes which jobs it held;
  2. restarts PostgreSQL (a fast restart on the same port) while submissions still arrive, and
     watches W's /api/health through it;
  3. waits until B has taken A's jobs back once their lease ran out, then starts A again under
     the same name, as a supervisor would.
Then it waits until every acknowledged job is done and checks: each has the verdict its source
calls for; each was recorded by exactly one node, once (the nodes' `job ID recorded` lines); A's
jobs were judged again elsewhere (attempts >= 2); W is healthy and lists the nodes. It prints the
checks, a summary with the measured throughput, and exits 0 when every check held, else 1.

Everything it starts (nodes, their workers, the cluster) is stopped at the end, whatever
happened. The database is read with psql, the API with http.client: standard library only.
"""
import collections
import os
import signal
import sys
import threading
import time
from pathlib import Path

from cluster_harness import (Checks, Client, Database, HealthWatch, Node, argument_parser, check_verdicts,
                             client_retries_row, cluster, count_records, create_learner, first, job_shares,
                             jobs_accepted_row, judged_by_node, log, request, starter_sources, stop_cluster,
                             wait_for, wait_until_done)

JUDGE_WORKERS = 3
LEASE_SECONDS = 4
SUBMIT_SECONDS = 240  # all clients together; a run that cannot submit in 4 minutes has failed
# A dead node's jobs go back to the others a lease after its last renewal; this allows for a
# database restart on the way.
RETAKE_SECONDS = LEASE_SECONDS * 5 + 30

# A job's holder names the node, and may add which run of it holds the job ("A#3f2a9c1e"), so that
# a node restarted under the same name does not inherit its dead self's claims.
HELD_BY_A = "(holder = 'A' or holder like 'A#%')"


# ---------------------------------------------------------------------------------------------
# Nodes that can crash
# ---------------------------------------------------------------------------------------------

class KillableNode(Node):
    """A node on this machine, listening on a port of its own choosing (W's is the one the clients
    use), that the test can kill as a crash would."""

    def __init__(self, label, binary, url, work, arguments):
        super().__init__(label, binary, url, work, ["--port", "0", *arguments])

    def kill(self):
        """SIGKILL the node's own process only, as a crash would: its workers must end by
        themselves. Returns those still alive 2 s later (and kills them, so they judge nothing)."""
        workers = descendants(self.pid)
        os.kill(self.pid, signal.SIGKILL)
        self.process.wait()
        time.sleep(2)
        survivors = [pid for pid in workers if is_alive(pid)]
        for pid in survivors:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.reader.join(timeout=5)
        return survivors


def descendants(pid):
    """Every process below pid, found through /proc."""
    children = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def is_alive(pid):
    # A zombie has ended; only its parent (here perhaps an init that never reaps) has not noticed.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------

def run(args, work, checks, nodes, facts):
    binary = str(Path(args.cudojo).resolve())
    good_source, broken_source = starter_sources(binary)

    cluster("stop", work / "pg")  # a cluster left by an earlier run would not be empty
    url = cluster("start", work / "pg")
    log(f"database {url}")
    database = Database(url)

    judge_arguments = ["--no-http", "--workers", str(JUDGE_WORKERS), "--lease-seconds", str(LEASE_SECONDS)]
    nodes["W"] = KillableNode("W", binary, url, work, ["--no-workers", "--node-name", "W", "--max-queue", "1000"])
    nodes["W"].wait_started()
    nodes["A"] = KillableNode("A", binary, url, work, [*judge_arguments, "--node-name", "A"])
    nodes["B"] = KillableNode("B", binary, url, work, [*judge_arguments, "--node-name", "B"])
    nodes["A"].wait_started()
    nodes["B"].wait_started()
    if nodes["W"].port is None:
        raise RuntimeError(f"W's first line names no port: {nodes['W'].banner}")
    web = ("127.0.0.1", nodes["W"].port)

    deadline = time.monotonic() + SUBMIT_SECONDS
    tokens = [create_learner(web, f"multi-node-{index}", deadline) for index in range(args.clients)]
    log(f"{len(tokens)} learners created through W")
    shares = job_shares(args.jobs, args.clients)
    # Each submission with an Idempotency-Key: the database restart drops answers, and a submission
    # sent again must not queue its job twice.
    clients = [Client(index, web, token, shares[index], broken_source, good_source, deadline, parity=index,
                      idempotency_keys=True)
               for index, token in enumerate(tokens)]
    facts["first_submit"] = time.time()
    for client in clients:
        client.start()
    log(f"{len(clients)} clients submitting {args.jobs} jobs through W")

    def accepted_so_far():
        return sum(len(client.accepted) for client in clients)

    # 1. Kill A once it is judging.
    running_on_a = f"select count(*) from jobs where state = 'running' and {HELD_BY_A}"
    if wait_for(lambda: database.integer(running_on_a) > 0, timeout=60):
        survivors = nodes["A"].kill()
        facts["kill_time"] = time.time()
        # A is dead now, so what the database says it held can no longer change under us.
        held_rows = [line.split("|") for line in database.query(
            f"select id, lease_until, holder from jobs where state = 'running' and {HELD_BY_A} order by id").splitlines()]
        facts["held"] = [int(job_id) for job_id, _, _ in held_rows]
        facts["held_leases"] = {int(job_id): float(lease_until) for job_id, lease_until, _ in held_rows}
        facts["killed_holders"] = {holder for _, _, holder in held_rows}
        log(f"SIGKILLed A (pid {nodes['A'].pid}); it held jobs {first(facts['held'], 20)} as "
            f"{', '.join(sorted(facts['killed_holders']))}; {accepted_so_far()} jobs accepted so far")
        checks("A's workers ended with it", not survivors,
               f"still alive 2 s after: {survivors}" if survivors else "none outlived it")

        # When the last of A's jobs is taken from it, timed while the rest of the scenario goes on.
        def watch_retaken():
            if wait_for(lambda: database.integer(running_on_a) == 0, timeout=RETAKE_SECONDS, interval=0.2):
                facts["retaken_after_s"] = time.time() - facts["kill_time"]
        retake_watch = threading.Thread(target=watch_retaken, daemon=True)
        retake_watch.start()
    else:
        # Nothing after this can be meaningful; stop now rather than wait out every timeout.
        raise RuntimeError(f"no job ran on A within 60 s of the first submission; see {nodes['A'].err_path}")

    # 2. Restart the database while submissions still arrive.
    wait_for(lambda: accepted_so_far() >= 0.4 * args.jobs or not any(c.is_alive() for c in clients),
             timeout=120, interval=0.2)
    facts["submitting_during_restart"] = any(client.is_alive() for client in clients)
    watch = HealthWatch(web, interval=0.1)
    watch.start()
    time.sleep(0.5)
    restart_began = time.monotonic()
    cluster("restart", work / "pg")
    facts["db_restart_s"] = time.monotonic() - restart_began
    log(f"restarted PostgreSQL in {facts['db_restart_s']:.1f} s; {accepted_so_far()} jobs accepted so far; "
        f"clients {'still' if facts['submitting_during_restart'] else 'no longer'} submitting")
    time.sleep(5)
    watch.running = False
    watch.join(timeout=10)
    facts["health_during_restart"] = collections.Counter(heard for _, heard in watch.seen)
    log(f"W's /api/health around the restart: {dict(facts['health_during_restart'])}")

    # 3. B takes A's jobs once their lease runs out; then A comes back under its own name.
    if "held" in facts:
        retake_watch.join(RETAKE_SECONDS + 5)
        retaken_after = facts.get("retaken_after_s")
        checks("A's jobs went back to work once their lease ran out", retaken_after is not None,
               f"{retaken_after:.1f} s after the kill (lease {LEASE_SECONDS} s)" if retaken_after is not None
               else f"some still held by A {RETAKE_SECONDS} s after the kill")
        nodes["A-restarted"] = KillableNode("A-restarted", binary, url, work, [*judge_arguments, "--node-name", "A"])
        nodes["A-restarted"].wait_started()

    for client in clients:
        client.join(max(0, deadline - time.monotonic()) + 15)
    submitted = [item for client in clients for item in client.accepted]
    facts["statuses"] = sum((client.statuses for client in clients), collections.Counter())
    unexpected = [item for client in clients for item in client.unexpected]
    log(f"submissions over: {len(submitted)} of {args.jobs} accepted; retries {dict(facts['statuses'])}")
    kinds = {job_id: kind for job_id, kind in submitted}
    token_of = {job_id: client.token for client in clients for job_id, _ in client.accepted}
    checks("every job was accepted", len(submitted) == args.jobs, f"{len(submitted)} of {args.jobs}")
    checks("no id was acknowledged twice", len(kinds) == len(submitted))
    facts["replayed"] = sum(client.replayed for client in clients)
    queued_rows = database.integer("select count(*) from jobs")
    keyed_rows = database.integer("select count(distinct client_key) from jobs")
    checks("each submission queued once (one row per Idempotency-Key, none without)",
           queued_rows == keyed_rows == len(submitted),
           f"{queued_rows} rows, {keyed_rows} keys, {len(submitted)} submissions; "
           f"{facts['replayed']} answered from an earlier try")
    checks("no answer but 202, 200 (a key seen before), 429 and 503", not unexpected, first(unexpected))

    # Wait until every accepted job is done, or none has finished for a while (then none will).
    jobs = wait_until_done(database, kinds, args.timeout, interval=1)
    check_verdicts(checks, kinds, jobs)
    judges = {judged_by_node(jobs[i]) for i in kinds if i in jobs and jobs[i]["state"] == "done"}
    checks("every done job names a judge node, A or B", judges <= {"A", "B"}, f"judged_by.node seen: {judges}")

    # W still serves, and knows the nodes.
    status, health = request(web, "GET", "/api/health")
    checks("W's /api/health is ok at the end",
           status == 200 and health.get("ok") is True and health.get("database") == "ok", f"{status} {health}")
    status, listing = request(web, "GET", "/api/nodes")
    listed = listing.get("nodes", listing) if isinstance(listing, dict) else listing
    named = {node.get("name"): node for node in listed or [] if isinstance(node, dict)}
    checks("W's /api/nodes lists A and B, each with a gpu",
           status == 200 and all(name in named and "gpu" in named[name] for name in ("A", "B")),
           f"{status} {[(n, named[n].get('gpu'), named[n].get('workers')) for n in named]}")

    # What the API says about A's jobs, asked as their learners: the same node as the database.
    held = facts.get("held", [])
    api_judges = {}
    for job_id in held:
        if job_id in token_of:
            status, body = request(web, "GET", f"/api/jobs/{job_id}", token=token_of[job_id])
            api_judges[job_id] = judged_by_node(body) if status == 200 and body else f"HTTP {status}"

    # The log checks need every line: stop the nodes first (no job is left to judge).
    for node in nodes.values():
        node.stop()
    records, recorded_by = count_records(nodes, ("A", "A-restarted", "B"))
    kill_time = facts.get("kill_time", float("inf"))

    def recorded_just_before_the_kill(job_id):
        # A wrote the result and died before its line reached the log: the one way a job can be
        # recorded with no line. Rare, and no fault of the server.
        job = jobs.get(job_id, {})
        return (records[job_id] == 0 and job.get("state") == "done" and judged_by_node(job) == "A"
                and (job.get("finished_at") or 0) <= kill_time)

    not_once = [f"{i} x{records[i]}" for i in kinds if records[i] != 1 and not recorded_just_before_the_kill(i)]
    twice_anywhere = [f"{i} by {recorded_by[i]}" for i in records if records[i] > 1]
    checks("each accepted job is recorded once, by one node (`job ID recorded` lines)",
           not not_once and not twice_anywhere, first(not_once + twice_anywhere))

    checks("A held jobs when it was killed", held, f"{len(held)}: {first(held, 20)}")
    rejudged_badly = []
    for job_id in held:
        job = jobs.get(job_id, {})
        recorders = recorded_by.get(job_id, [])
        if (job.get("state") != "done" or (job.get("attempts") or 0) < 2 or "A" in recorders
                or len(recorders) != 1 or (job.get("finished_at") or 0) <= kill_time
                or job.get("holder") in facts["killed_holders"]
                or judged_by_node(job) not in ("A", "B") or api_judges.get(job_id) != judged_by_node(job)):
            rejudged_badly.append(f"{job_id} (state {job.get('state')}, attempts {job.get('attempts')}, "
                                  f"holder {job.get('holder')}, recorded by {recorders}, "
                                  f"judged_by {judged_by_node(job)}, API says {api_judges.get(job_id)})")
    checks("A's jobs were judged again by B or the restarted A (attempts >= 2)", held and not rejudged_badly,
           first(rejudged_badly, 3))
    # started_at is when the last claim began, by the database's clock, as lease_until is: a claim
    # before the dead node's lease ran out would have judged a job that might still be judged.
    too_early = [f"{job_id} (claimed {jobs[job_id]['started_at'] - facts['held_leases'][job_id]:+.2f} s "
                 f"from the end of A's lease)" for job_id in held
                 if job_id in jobs and (jobs[job_id].get("started_at") or 0) < facts["held_leases"][job_id]]
    checks("no job of A's was claimed again before its lease ran out", held and not too_early, first(too_early, 3))

    facts.update(jobs=jobs, kinds=kinds, records=records, recorded_by=recorded_by)


def print_summary(args, checks, nodes, facts):
    checks.print_table(76)
    jobs, kinds = facts.get("jobs", {}), facts.get("kinds", {})
    done = [jobs[i] for i in kinds if i in jobs and jobs[i]["state"] == "done"]
    rows = [jobs_accepted_row(kinds, jobs, args.jobs)]
    if done and "first_submit" in facts:
        last_done = max(job["finished_at"] or 0 for job in done)
        wall = last_done - facts["first_submit"]
        rows.append(("first submit to last done", f"{wall:.1f} s"))
        rows.append(("throughput", f"{len(done) / wall * 60:.1f} jobs/min ({len(done)} jobs, "
                     f"{2 * JUDGE_WORKERS} judge workers)"))
    recorded_by = facts.get("recorded_by", {})
    per_label = collections.Counter(label for labels in recorded_by.values() for label in labels)
    rows.append(("recorded per node (log lines)", ", ".join(
        f"{label} {per_label[label]}" for label in ("A", "A-restarted", "B") if label in nodes)))
    rows.append(("judged_by.node (database)", ", ".join(
        f"{name} {count}" for name, count in sorted(collections.Counter(judged_by_node(j) or "none" for j in done).items()))))
    refused = {label: len(node.refused()) for label, node in nodes.items() if node.refused()}
    rows.append(("results refused (lease lost)", ", ".join(f"{l} {n}" for l, n in refused.items()) or "none"))
    requeued = [job for job in done if (job.get("attempts") or 0) >= 2]
    restarted = nodes.get("A-restarted")
    rows.append(("requeued", f"{len(facts.get('held', []))} held by A when killed; {len(requeued)} jobs with "
                 f"attempts >= 2; restarted A requeued {restarted.requeued if restarted else '-'} at start"))
    rows.append(client_retries_row(facts.get("statuses", {})))
    rows.append(("answered from an earlier try", f"{facts.get('replayed', 0)} submissions sent again after a lost "
                 "answer got the job their first try had queued (Idempotency-Key)"))
    if "db_restart_s" in facts:
        rows.append(("database restart", f"{facts['db_restart_s']:.1f} s, clients "
                     f"{'still submitting' if facts['submitting_during_restart'] else 'done submitting'}; "
                     f"W's health: {dict(facts['health_during_restart'])}"))
    for name, value in rows:
        print(f"{name:<30} {value}")
    print(f"logs: {Path(args.work).resolve()}/{{W,A,A-restarted,B}}.{{out,err}}")


def main():
    parser = argument_parser(__doc__.split("\n")[0], jobs=300, clients=30)
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
    return checks.exit_status("multi-node")


if __name__ == "__main__":
    sys.exit(main())
