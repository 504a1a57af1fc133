#!/usr/bin/env python3
"""Three `cudojo serve` nodes as separate hosts (network namespaces) on one PostgreSQL database at
its own address, with one judge host cut off from the network while it judges, then restored.

    tests/cluster/partition.py --cudojo build/cudojo --work DIR [--jobs 60] [--clients 6]
                               [--extra-jobs 10] [--timeout 240] [--min-cut 15]

Exit status: 0 every check held, 1 a check failed, 77 skipped (not root, or no network namespace,
veth pair or bridge can be made here: a container without CAP_NET_ADMIN); the reason is printed.

Theory of operation. The database is a cluster from tests/postgres/cluster.sh (in DIR/pg) that
also listens on 10.77.N.1, the address of a bridge in the root namespace; N comes from the test's
pid, so parallel runs do not clash. Each host is a namespace (cjp<pid>-W, -A, -B) joined to that
bridge by a veth pair, with an address on the bridge's /24 and a default route through 10.77.N.1:
    W  `serve --host 0.0.0.0 --no-workers`: the web node; the test's clients reach it at its
       namespace address, from the root namespace;
    A, B  `serve --no-http --workers 2 --lease-seconds 4`: the judges.
Clients submit the jobs through W (half the stage's starter, which compiles and then finds no GPU:
no_device; half a copy with a syntax error: compile_error). Once a fifth of the jobs are done and
the database shows A running some, the test takes down the root-side end of A's veth, as a pulled
cable would: A keeps running, judging what it holds, but reaches nothing. It notes which jobs A
held and keeps A cut off until B has judged every one of them (A's leases run out; a heartbeat
puts the jobs back; B takes them) and at least --min-cut seconds (15: longer than libpq's
tcp_user_timeout, so A's calls fail rather than merely stall), then brings A's link back. A must
then find that it no longer holds those jobs (`result not recorded` for each, never `recorded`),
reconnect by itself, and judge again: after the restore the test submits a few more jobs and
expects A and B both to take some. Throughout, W (never cut off) must answer /api/health with 200.

The checks: every accepted job done exactly once (one `job ID recorded` line in all the judges'
logs) with the verdict its source calls for; A's held jobs done by B with attempts >= 2, none
claimed again before A's lease ran out; A's `result not recorded` lines name exactly the jobs it
held; A's heartbeat stopped during the cut and came back after it; A judged jobs after the
restore; W healthy all along and listing A, B and W. A table of checks and a summary with the
timings follow.

Everything made (processes, namespaces, links, the cluster) is removed at the end, whatever
happened; namespaces and links left by an earlier run that was killed (its pid gone) are removed
at the start. Standard library only; the database is read with psql from the root namespace.
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from cluster_harness import (REFUSED_LINE, Checks, Client, Database, HealthWatch, Node, argument_parser,
                             check_verdicts, client_retries_row, cluster, count_records, create_learner, first,
                             job_shares, jobs_accepted_row, judged_by_node, log, request, starter_sources,
                             stop_cluster, wait_for, wait_until_done)

JUDGE_WORKERS = 2
LEASE_SECONDS = 4
SUBMIT_SECONDS = 240  # a run that cannot submit its jobs in 4 minutes has failed
CUT_SECONDS = 60  # longest A stays cut off waiting for B to judge A's jobs
# Shortest cut: past libpq's tcp_user_timeout (10 s) and connect_timeout (5 s) in
# PostgresStore::connect, so A's calls in flight at the cut fail rather than just stall, and A's
# dispatcher goes through its keep-the-result-and-retry path. A shorter cut (--min-cut 0) tests the
# other path: calls stalled in TCP retransmission complete once the link is back.
MIN_CUT_SECONDS = 15
RECOVER_SECONDS = 60  # longest A may take, once restored, to reach the database again

SKIP = 77
PREFIX = "cjp"  # every namespace and link this test makes: cjp<pid>...
NETWORK_OCTET = 77  # hosts live in 10.77.N.0/24

CANNOT_RECORD_LINE = re.compile(r"^cudojo serve: cannot record job (\d+)")
WAITING_LINE = re.compile(r"^cudojo serve: job (\d+) waits to be recorded")


# ---------------------------------------------------------------------------------------------
# The network: a bridge with the database's address, one namespace per host
# ---------------------------------------------------------------------------------------------

def ip(*arguments, namespace=None, check=True):
    command = ["ip", *(["-n", namespace] if namespace else []), *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return done


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def kill_namespace_processes(namespace):
    """SIGKILL whatever still runs in one of this test's namespaces (a node or worker that outlived
    its stop); deleting a namespace does not end its processes."""
    done = ip("netns", "pids", namespace, check=False)
    for pid in [int(word) for word in done.stdout.split() if word.isdigit()]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def clean_leftovers():
    """Namespaces and links of earlier runs of this test whose process is gone (a run killed before
    its own cleanup): the processes in them, then the namespaces, then the links."""
    pattern = re.compile(rf"^{PREFIX}(\d+)")
    removed = []
    for line in ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        match = pattern.match(name)
        if match and not pid_alive(int(match.group(1))):
            kill_namespace_processes(name)
            ip("netns", "delete", name, check=False)
            removed.append(name)
    for line in ip("-o", "link", "show", check=False).stdout.splitlines():
        # "12: cjp123Ar@if11: <...>"
        fields = line.split(":")
        name = fields[1].strip().split("@")[0] if len(fields) > 1 else ""
        match = pattern.match(name)
        if match and not pid_alive(int(match.group(1))):
            ip("link", "delete", name, check=False)
            removed.append(name)
    if removed:
        log(f"removed leftovers of earlier runs: {', '.join(removed)}")


def probe_network():
    """None when namespaces, veth pairs and bridges can be made here, else why not."""
    if os.geteuid() != 0:
        return "not root: network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN)"
    if not shutil.which("ip"):
        return "no `ip` command (iproute2)"
    tag = f"{PREFIX}{os.getpid()}"
    namespace, outside, inside, bridge = f"{tag}-probe", f"{tag}p0", f"{tag}p1", f"{tag}pb"
    steps = [("a network namespace (ip netns add)", ["netns", "add", namespace]),
             ("a veth pair", ["link", "add", outside, "type", "veth", "peer", "name", inside]),
             ("moving a veth end into a namespace", ["link", "set", inside, "netns", namespace]),
             ("a bridge", ["link", "add", bridge, "type", "bridge"])]
    try:
        for what, arguments in steps:
            done = ip(*arguments, check=False)
            if done.returncode != 0:
                return f"cannot make {what} here: {done.stderr.strip()}"
        done = subprocess.run(["ip", "netns", "exec", namespace, "true"], capture_output=True, text=True,
                              timeout=30)
        if done.returncode != 0:
            return f"cannot run a command in a namespace (ip netns exec): {done.stderr.strip()}"
        return None
    finally:
        ip("link", "delete", bridge, check=False)
        ip("link", "delete", outside, check=False)
        ip("netns", "delete", namespace, check=False)


class Network:
    """The bridge (the database's own address) and one namespace per host, each joined to the
    bridge by a veth pair whose root-side end is the host's cable."""

    def __init__(self, labels):
        self.tag = f"{PREFIX}{os.getpid()}"
        self.octet = self._free_octet()
        self.subnet = f"10.{NETWORK_OCTET}.{self.octet}.0/24"
        self.database_address = f"10.{NETWORK_OCTET}.{self.octet}.1"
        self.bridge = f"{self.tag}br"
        self.labels = list(labels)
        self.namespaces, self.cables, self.addresses = {}, {}, {}
        for number, label in enumerate(self.labels, start=2):
            self.namespaces[label] = f"{self.tag}-{label}"
            self.cables[label] = f"{self.tag}{label}r"  # root side: taken down to cut the host off
            self.addresses[label] = f"10.{NETWORK_OCTET}.{self.octet}.{number}"

    @staticmethod
    def _free_octet():
        """A /24 under 10.77 that no address or route here uses yet, starting from the pid."""
        taken = ip("-4", "-o", "addr", "show", check=False).stdout + ip("-4", "route", "show", "table", "all",
                                                                       check=False).stdout
        for step in range(250):
            octet = (os.getpid() + step) % 250 + 1
            if f"10.{NETWORK_OCTET}.{octet}." not in taken:
                return octet
        raise RuntimeError(f"every 10.{NETWORK_OCTET}.N.0/24 is in use here")

    def create(self):
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.database_address}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for label in self.labels:
            namespace, cable, inside = self.namespaces[label], self.cables[label], f"{self.tag}{label}n"
            ip("netns", "add", namespace)
            ip("link", "add", cable, "type", "veth", "peer", "name", inside)
            ip("link", "set", inside, "netns", namespace)
            ip("link", "set", cable, "master", self.bridge)
            ip("link", "set", cable, "up")
            ip("link", "set", "lo", "up", namespace=namespace)
            ip("addr", "add", f"{self.addresses[label]}/24", "dev", inside, namespace=namespace)
            ip("link", "set", inside, "up", namespace=namespace)
            ip("route", "add", "default", "via", self.database_address, namespace=namespace)
        log(f"network: database at {self.database_address} on bridge {self.bridge}; "
            + ", ".join(f"{label} {self.addresses[label]} in {self.namespaces[label]}" for label in self.labels))

    def cut(self, label):
        ip("link", "set", self.cables[label], "down")

    def restore(self, label):
        ip("link", "set", self.cables[label], "up")

    def remove(self):
        for label in self.labels:
            namespace = self.namespaces[label]
            kill_namespace_processes(namespace)
            ip("netns", "delete", namespace, check=False)  # takes its veth pair with it
            ip("link", "delete", self.cables[label], check=False)
        ip("link", "delete", self.bridge, check=False)


# ---------------------------------------------------------------------------------------------
# The database, through psql (root namespace, loopback)
# ---------------------------------------------------------------------------------------------

def sessions_report(database, address):
    """What the database's sessions are doing, for a failure's detail: a transaction a cut-off host
    left open keeps its row locks until the server notices the connection is dead, and every sweep
    of expired leases waits on them."""
    return "sessions of the cut-off host: " + database.query(
        f"select coalesce(string_agg(pid || ' ' || state || coalesce(' xid ' || backend_xid, '') || ': ' "
        f"|| left(query, 60), '; '), 'none') from pg_stat_activity where client_addr = '{address}'") + \
        "; sessions waiting on a lock: " + database.query(
            "select coalesce(string_agg(pid || ' from ' || coalesce(host(client_addr), 'local') || ' blocked by ' "
            "|| pg_blocking_pids(pid)::text || ': ' || left(query, 60), '; '), 'none') from pg_stat_activity "
            "where wait_event_type = 'Lock'")


# ---------------------------------------------------------------------------------------------
# Nodes, each in its host's namespace
# ---------------------------------------------------------------------------------------------

class HostNode(Node):
    """A node started with `ip netns exec` (which execs it: the pid is the server's), so that it
    reaches the database and the clients reach it only through its host's link. What it says on
    stderr about results it could not record tells how it rode out a cut."""

    def __init__(self, label, namespace, binary, url, work, arguments):
        super().__init__(label, binary, url, work, arguments, launcher=["ip", "netns", "exec", namespace])

    def stderr_lines(self):
        try:
            return self.err_path.read_text(errors="replace").splitlines()
        except OSError:
            return []

    def waited(self):
        """Jobs whose result this node could not record at once (the store was away)."""
        return [int(m.group(1)) for m in map(WAITING_LINE.match, self.stderr_lines()) if m]

    def gave_up(self):
        """Jobs whose result this node dropped on an error other than the store being away."""
        return [int(m.group(1)) for m in map(CANNOT_RECORD_LINE.match, self.stderr_lines()) if m]


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------

def start_clients(tag, web, count, clients, broken_source, good_source, deadline):
    tokens = [create_learner(web, f"partition-{tag}-{index}", deadline) for index in range(clients)]
    shares = job_shares(count, clients)
    started = [Client(f"{tag}{index}", web, token, shares[index], broken_source, good_source, deadline, index)
               for index, token in enumerate(tokens)]
    for client in started:
        client.start()
    return started


def run(args, work, checks, nodes, facts, network):
    binary = str(Path(args.cudojo).resolve())
    good_source, broken_source = starter_sources(binary)

    network.create()
    cluster("stop", work / "pg")  # a cluster left by an earlier run would not be empty
    local_url = cluster("start", work / "pg", {"CUDOJO_PG_LISTEN": f"127.0.0.1,{network.database_address}",
                                               "CUDOJO_PG_TRUST": network.subnet})
    port = re.search(r"@127\.0\.0\.1:(\d+)/", local_url).group(1)
    url = local_url.replace("@127.0.0.1:", f"@{network.database_address}:")
    log(f"database {url} (the test itself reads it at {local_url})")
    database = Database(local_url)

    judge_arguments = ["--no-http", "--workers", str(JUDGE_WORKERS), "--lease-seconds", str(LEASE_SECONDS)]
    nodes["W"] = HostNode("W", network.namespaces["W"], binary, url, work,
                      ["--host", "0.0.0.0", "--port", "0", "--no-workers", "--node-name", "W", "--max-queue", "1000"])
    nodes["A"] = HostNode("A", network.namespaces["A"], binary, url, work, [*judge_arguments, "--node-name", "A"])
    nodes["B"] = HostNode("B", network.namespaces["B"], binary, url, work, [*judge_arguments, "--node-name", "B"])
    store = re.escape(f"store postgresql://cudojo@{network.database_address}:{port}/cudojo")
    formats = {
        "W": re.compile(rf"^cudojo serve: http://0\.0\.0\.0:(\d+)/  {store}  node W  workers 0 \(\d+ GPUs?[^)]*\)"
                        rf"  requeued \d+$"),
        "A": re.compile(rf"^cudojo serve: no HTTP  {store}  node A  workers {JUDGE_WORKERS} \(\d+ GPUs?[^)]*\)"
                        rf"  requeued \d+$"),
        "B": re.compile(rf"^cudojo serve: no HTTP  {store}  node B  workers {JUDGE_WORKERS} \(\d+ GPUs?[^)]*\)"
                        rf"  requeued \d+$"),
    }
    banners = {label: nodes[label].wait_started() for label in ("W", "A", "B")}
    mismatched = [f"{label}: {banners[label]!r}" for label in banners if not formats[label].match(banners[label])]
    checks("each node's first line names its store at the database's address, its name and workers",
           not mismatched, "; ".join(mismatched))
    listening = re.search(r"^cudojo serve: http://[^/]+:(\d+)/", banners["W"])
    if not listening:
        raise RuntimeError(f"W's first line names no port: {banners['W']}")
    web = (network.addresses["W"], int(listening.group(1)))

    watch = HealthWatch(web, interval=0.2, details=True)
    watch.start()
    facts["health"] = watch

    deadline = time.monotonic() + SUBMIT_SECONDS
    clients = start_clients("main", web, args.jobs, args.clients, broken_source, good_source, deadline)
    facts["first_submit"] = time.time()
    facts["clients"] = clients
    log(f"{len(clients)} clients submitting {args.jobs} jobs through W at {web[0]}:{web[1]}")

    # 1. Cut A off while it is judging, once the cluster is in its stride (a fifth of the jobs done,
    # some by A: its connections are open and in use).
    holder_is_a = "holder like 'A#%'"
    running_on_a = f"select count(*) from jobs where state = 'running' and {holder_is_a}"
    in_stride = (f"select (select count(*) from jobs where state = 'done') >= {max(1, args.jobs // 5)} "
                 f"and (select count(*) from jobs where state = 'done' and {holder_is_a}) > 0 "
                 f"and ({running_on_a}) > 0")
    if not wait_for(lambda: database.query(in_stride) == "t", timeout=120):
        raise RuntimeError(f"A was not judging jobs within 120 s of the first submission; see {nodes['A'].err_path}")
    network.cut("A")
    cut_time = facts["cut_time"] = time.time()
    # A reaches nothing now, so what the database says it held can no longer change under us.
    rows = [line.split("|") for line in database.query(
        f"select id, lease_until, holder from jobs where state = 'running' and {holder_is_a} order by id").splitlines()]
    held = facts["held"] = [int(job_id) for job_id, _, _ in rows]
    held_leases = {int(job_id): float(lease) for job_id, lease, _ in rows}
    facts["a_holder"] = ", ".join(sorted({holder for _, _, holder in rows}))
    accepted_so_far = sum(len(client.accepted) for client in clients)
    log(f"cut A off (link {network.cables['A']} down); it held {first(held, 20)} as {facts['a_holder']}; "
        f"{accepted_so_far} jobs accepted so far")
    checks("A held running jobs when it was cut off", held, f"{len(held)}: {first(held, 20)}")
    if not held:
        raise RuntimeError("A's jobs finished between the look and the cut; nothing to take back")
    held_sql = ",".join(map(str, held))
    log(f"at the cut, {sessions_report(database, network.addresses['A'])}")

    # 2. Keep A cut off until B has judged every job A held (their leases run out first), and at
    # least --min-cut seconds.
    requeued_at, taken_back_at = None, None
    give_up_at = time.monotonic() + max(CUT_SECONDS, args.min_cut)
    while time.monotonic() < give_up_at:
        still_a = database.integer(f"select count(*) from jobs where id in ({held_sql}) and {holder_is_a}")
        if still_a == 0 and requeued_at is None:
            requeued_at = time.time()
        done_by_b = database.integer(
            f"select count(*) from jobs where id in ({held_sql}) and state = 'done' and holder like 'B#%'")
        if done_by_b == len(held) and taken_back_at is None:
            taken_back_at = time.time()
        if taken_back_at and time.time() - cut_time >= args.min_cut:
            break
        time.sleep(0.2)
    facts["requeued_after_s"] = requeued_at - cut_time if requeued_at else None
    facts["taken_back_after_s"] = taken_back_at - cut_time if taken_back_at else None
    a_seen_during_cut = database.real("select last_seen from nodes where name = 'A'")
    facts["cut_seconds"] = time.time() - cut_time
    checks("B judged every job A held while A was cut off", taken_back_at is not None,
           f"{facts['taken_back_after_s']:.1f} s after the cut (lease {LEASE_SECONDS} s; none was A's any more "
           f"after {facts['requeued_after_s']:.1f} s)" if taken_back_at else
           f"not within {CUT_SECONDS} s: " + database.query(
               f"select string_agg(id || ' ' || state || ' ' || coalesce(holder, '-'), ', ') from jobs "
               f"where id in ({held_sql})") + "; " + sessions_report(database, network.addresses["A"]))
    checks("A's heartbeat did not reach the database while it was cut off",
           a_seen_during_cut is not None and a_seen_during_cut < cut_time + 1.0,
           f"A last seen {a_seen_during_cut - cut_time:+.1f} s from the cut, {facts['cut_seconds']:.1f} s into it"
           if a_seen_during_cut is not None else "A is not in the nodes table")
    checks("A kept running while cut off", nodes["A"].process.poll() is None,
           f"exit status {nodes['A'].process.poll()}")

    # 3. Restore A: it must reach the database again by itself, refuse what it lost, and judge again.
    network.restore("A")
    restore_time = facts["restore_time"] = time.time()
    log(f"restored A's link after {restore_time - cut_time:.1f} s cut off")
    back = wait_for(lambda: (database.real("select last_seen from nodes where name = 'A'") or 0) > restore_time,
                    timeout=RECOVER_SECONDS, interval=0.2)
    facts["heartbeat_back_after_s"] = time.time() - restore_time if back else None
    checks("A's heartbeat reached the database again after the restore", back,
           f"{facts['heartbeat_back_after_s']:.1f} s after the restore" if back else
           f"A's last_seen not updated within {RECOVER_SECONDS} s; see {nodes['A'].err_path}")

    # A judges each job it held to its end and then offers the result (again every second while the
    # store is away); wait until it has said what became of every one.
    def refusals_settled():
        answered = (set(nodes["A"].refused()) | {job_id for job_id, _ in nodes["A"].recorded()}
                    | set(nodes["A"].gave_up()))
        return set(held) <= answered
    settled = wait_for(refusals_settled, timeout=RECOVER_SECONDS, interval=0.2)
    facts["refusals_after_s"] = time.time() - restore_time if settled else None

    # More jobs now that A is back: both judges should take some.
    for client in clients:
        client.join(max(0, deadline - time.monotonic()) + 15)
    extra_deadline = time.monotonic() + SUBMIT_SECONDS
    extra_clients = start_clients("extra", web, args.extra_jobs, max(1, (args.extra_jobs + 1) // 2), broken_source,
                                  good_source, extra_deadline) if args.extra_jobs else []
    facts["extra_submit"] = time.time()
    for client in extra_clients:
        client.join(max(0, extra_deadline - time.monotonic()) + 15)
    every_client = clients + extra_clients
    submitted = [item for client in every_client for item in client.accepted]
    extra_ids = {job_id for client in extra_clients for job_id, _ in client.accepted}
    facts["statuses"] = sum((client.statuses for client in every_client), collections.Counter())
    unexpected = [item for client in every_client for item in client.unexpected]
    kinds = {job_id: kind for job_id, kind in submitted}
    log(f"submissions over: {len(submitted)} of {args.jobs + args.extra_jobs} accepted "
        f"({len(extra_ids)} after the restore); retries {dict(facts['statuses'])}")
    checks("every job was accepted", len(submitted) == args.jobs + args.extra_jobs,
           f"{len(submitted)} of {args.jobs + args.extra_jobs}")
    checks("no id was acknowledged twice", len(kinds) == len(submitted))
    checks("no answer but 202, 429 and 503", not unexpected, first(unexpected))

    jobs = wait_until_done(database, kinds, args.timeout, interval=0.5)

    # W still serves, and knows every node; then the health watch ends.
    status, health = request(web, "GET", "/api/health")
    checks("W's /api/health is ok at the end",
           status == 200 and health.get("ok") is True and health.get("database") == "ok", f"{status} {health}")
    status, listing = request(web, "GET", "/api/nodes")
    named = {node.get("name"): node for node in (listing if isinstance(listing, list) else []) if isinstance(node, dict)}
    checks("W's /api/nodes lists A, B and W", status == 200 and {"A", "B", "W"} <= set(named),
           f"{status}: {sorted(named)}")
    watch.running = False
    watch.join(timeout=10)
    heard = collections.Counter(what for _, what in watch.seen)
    facts["health_counts"] = heard
    during_cut = collections.Counter(what for when, what in watch.seen if cut_time <= when <= restore_time)
    checks("W's /api/health answered 200 throughout, the cut included",
           watch.seen and set(heard) == {"200 ok"} and during_cut.get("200 ok", 0) > 0,
           f"{dict(heard)}; during the cut {dict(during_cut)}")

    alive = {label: node.process.poll() for label, node in nodes.items()}
    checks("no node exited on its own", all(code is None for code in alive.values()),
           ", ".join(f"{label} exit {code}" for label, code in alive.items() if code is not None))

    # The log checks need every line: stop the nodes first (nothing is left to judge).
    for node in nodes.values():
        node.stop()
    records, recorded_by = count_records(nodes, ("A", "B"))

    check_verdicts(checks, kinds, jobs)
    mismatched_judge = [f"{i} (holder {jobs[i]['holder']}, judged_by {judged_by_node(jobs[i])})" for i in kinds
                        if i in jobs and jobs[i]["state"] == "done"
                        and (jobs[i]["holder"] or "").split("#")[0] != judged_by_node(jobs[i])]
    checks("every done job's judged_by.node is the node that held it, A or B",
           not mismatched_judge and {judged_by_node(jobs[i]) for i in kinds if i in jobs} <= {"A", "B"},
           first(mismatched_judge))
    not_once = [f"{i} x{records[i]} {recorded_by[i]}" for i in kinds if records[i] != 1]
    twice = [f"{i} by {recorded_by[i]}" for i in records if records[i] > 1]
    checks("each accepted job is recorded once, by one node (`job ID recorded` lines)", not not_once and not twice,
           first(not_once + twice))
    wrong_recorder = [f"{i} (recorded by {recorded_by[i]}, judged_by {judged_by_node(jobs[i])})" for i in records
                      if i in jobs and recorded_by[i] != [judged_by_node(jobs[i])]]
    checks("the node that logged `recorded` is the judged_by.node in the database", not wrong_recorder,
           first(wrong_recorder))

    # A's jobs: judged again by B, after A's lease ran out.
    rejudged_badly = []
    for job_id in held:
        job = jobs.get(job_id, {})
        if (job.get("state") != "done" or (job.get("attempts") or 0) < 2 or judged_by_node(job) != "B"
                or not (job.get("holder") or "").startswith("B#") or recorded_by.get(job_id) != ["B"]):
            rejudged_badly.append(f"{job_id} (state {job.get('state')}, attempts {job.get('attempts')}, "
                                  f"holder {job.get('holder')}, judged_by {judged_by_node(job)}, "
                                  f"recorded by {recorded_by.get(job_id)})")
    checks("A's held jobs were judged again by B (attempts >= 2, judged_by.node B, recorded by B only)",
           not rejudged_badly, first(rejudged_badly, 3))
    too_early = [f"{job_id} (claimed {jobs[job_id]['started_at'] - held_leases[job_id]:+.2f} s from the end of "
                 f"A's lease)" for job_id in held
                 if job_id in jobs and (jobs[job_id].get("started_at") or 0) < held_leases[job_id]]
    checks("no job of A's was claimed again before A's lease ran out", not too_early, first(too_early, 3))

    # What A said about the results it could not record.
    refused, waited, gave_up = nodes["A"].refused(), nodes["A"].waited(), nodes["A"].gave_up()
    a_recorded = [job_id for job_id, _ in nodes["A"].recorded()]
    facts.update(refused=refused, waited=waited, gave_up=gave_up)
    checks("A said what became of every job it held once restored (its retries ended)", settled,
           f"{facts['refusals_after_s']:.1f} s after the restore" if settled else
           f"no line yet for {sorted(set(held) - set(refused) - set(a_recorded) - set(gave_up))}")
    checks("A's `result not recorded` lines name exactly the jobs it held when cut off, once each",
           sorted(refused) == sorted(held), f"refused {sorted(refused)}; held {held}")
    checks("A kept its results while the store was away (`waits to be recorded` only for jobs it held)",
           set(waited) <= set(held),
           f"waited {sorted(waited)}; held {held}" + ("" if waited else
                                                       " (none: its calls stalled until the link came back)"))
    checks("A dropped no result on an error (`cannot record job`)", not gave_up, first(gave_up))
    refused_lines = [line for line in nodes["A"].lines if REFUSED_LINE.match(line)]
    wrong_holder = [line for line in refused_lines if REFUSED_LINE.match(line).group(2) != facts["a_holder"]]
    checks("A's refusals name the claim it lost", not wrong_holder, first(wrong_holder, 2))
    b_named = [job_id for job_id in a_recorded if judged_by_node(jobs.get(job_id, {})) == "B"]
    checks("no `job ID recorded` line of A's names a job judged by B", not b_named, first(b_named))
    held_recorded_by_a = [job_id for job_id in a_recorded if job_id in held]
    checks("A recorded none of the jobs it held when cut off", not held_recorded_by_a, first(held_recorded_by_a))

    # A judged again after the restore.
    after_restore = [job for job in jobs.values() if job["state"] == "done" and judged_by_node(job) == "A"
                     and (job.get("started_at") or 0) > restore_time]
    extra_by = collections.Counter(judged_by_node(jobs[i]) for i in extra_ids if i in jobs)
    facts.update(a_after_restore=len(after_restore), extra_by=extra_by)
    checks("A judged jobs again after the restore", after_restore,
           f"{len(after_restore)} claimed after the restore; of the {len(extra_ids)} submitted after it: "
           + ", ".join(f"{name} {count}" for name, count in sorted(extra_by.items(), key=str)))
    if args.extra_jobs:
        checks("both judges took jobs submitted after the restore", extra_by.get("A", 0) > 0 and extra_by.get("B", 0) > 0,
               ", ".join(f"{name} {count}" for name, count in sorted(extra_by.items(), key=str)))
    # A call that failed during the cut (a heartbeat, a claim) is said once, and its recovery once.
    # A short cut may fail none: calls stalled in TCP retransmission complete once the link is back.
    a_stderr = nodes["A"].stderr_lines()
    failed_lines = [line for line in a_stderr if "heartbeat failed" in line or "cannot take a job" in line]
    recovered_lines = [line for line in a_stderr if "answers again" in line]
    checks("A's log says the store answers again after each failure it logged",
           len(recovered_lines) >= len(failed_lines) and (failed_lines or args.min_cut < MIN_CUT_SECONDS),
           f"{len(failed_lines)} failure(s) logged, {len(recovered_lines)} recovery line(s)"
           + ("" if failed_lines else " (no call failed: they stalled until the link came back)"))
    facts.update(jobs=jobs, kinds=kinds, recorded_by=recorded_by, a_stderr=a_stderr)


def print_summary(args, checks, nodes, facts):
    checks.print_table(92)
    jobs, kinds = facts.get("jobs", {}), facts.get("kinds", {})
    done = [jobs[i] for i in kinds if i in jobs and jobs[i]["state"] == "done"]

    def seconds(key):
        return f"{facts[key]:.1f} s" if facts.get(key) is not None else "-"
    rows = [jobs_accepted_row(kinds, jobs, args.jobs + args.extra_jobs)]
    if done and "first_submit" in facts:
        wall = max(job["finished_at"] or 0 for job in done) - facts["first_submit"]
        rows.append(("first submit to last done", f"{wall:.1f} s ({len(done) / wall * 60:.1f} jobs/min, "
                     f"{2 * JUDGE_WORKERS} judge workers)"))
    if "held" in facts:
        rows.append(("A held when cut off", f"{len(facts['held'])}: {first(facts['held'], 10)} ({facts.get('a_holder')})"))
        rows.append(("A's jobs no longer A's", f"{seconds('requeued_after_s')} after the cut (lease {LEASE_SECONDS} s)"))
        rows.append(("A's jobs judged by B", f"{seconds('taken_back_after_s')} after the cut"))
        rows.append(("A cut off for", seconds("cut_seconds")))
    if "refused" in facts:
        rows.append(("A's results refused", f"{len(facts['refused'])} ({first(sorted(facts['refused']))}); "
                     f"{len(facts['waited'])} of them waited to be recorded while cut off "
                     f"({first(sorted(facts['waited']))})"))
    rows.append(("A's heartbeat back", f"{seconds('heartbeat_back_after_s')} after the restore"))
    rows.append(("A's refusals answered", f"{seconds('refusals_after_s')} after the restore"))
    if "a_after_restore" in facts:
        rows.append(("A after the restore", f"{facts['a_after_restore']} jobs judged; the later submissions went "
                     + ", ".join(f"{name} {count}" for name, count in sorted(facts['extra_by'].items(), key=str))))
    recorded_by = facts.get("recorded_by", {})
    per_label = collections.Counter(label for labels in recorded_by.values() for label in labels)
    rows.append(("recorded per node (log lines)", ", ".join(f"{label} {per_label[label]}" for label in ("A", "B"))))
    rows.append(("jobs with attempts >= 2", str(sum((job.get("attempts") or 0) >= 2 for job in done))))
    rows.append(client_retries_row(facts.get("statuses", {})))
    if "health_counts" in facts:
        rows.append(("W's /api/health", ", ".join(f"{k} x{v}" for k, v in facts["health_counts"].items())))
    for name, value in rows:
        print(f"{name:<30} {value}")
    a_stderr = facts.get("a_stderr") or (nodes["A"].stderr_lines() if "A" in nodes else [])
    if a_stderr:
        print("A's stderr (first 12 lines):")
        for line in a_stderr[:12]:
            print(f"    {line}")
    print(f"logs: {Path(args.work).resolve()}/{{W,A,B}}.{{out,err}}")


def main():
    parser = argument_parser(__doc__.split("\n")[0], jobs=60, clients=6)
    parser.add_argument("--extra-jobs", type=int, default=10, help="jobs submitted after A is restored")
    parser.add_argument("--timeout", type=int, default=240, help="seconds to wait for the last verdict")
    parser.add_argument("--min-cut", type=float, default=MIN_CUT_SECONDS,
                        help="shortest time A stays cut off, in seconds (it stays until B has judged A's jobs)")
    args = parser.parse_args()

    reason = probe_network()
    if reason:
        print(f"partition test SKIPPED: {reason}")
        return SKIP

    # A stop signal ends the run through the finally below, so nothing is left behind.
    def stop_signal(number, _frame):
        raise KeyboardInterrupt(f"signal {number}")
    signal.signal(signal.SIGTERM, stop_signal)

    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    checks, nodes, facts = Checks(), {}, {}
    network = None
    try:
        clean_leftovers()
        network = Network(["W", "A", "B"])
        run(args, work, checks, nodes, facts, network)
    except (Exception, KeyboardInterrupt) as error:  # what was checked so far is still printed
        checks(f"the scenario ran to its end ({type(error).__name__})", False, str(error))
    finally:
        health = facts.get("health")
        if health:
            health.running = False
        for node in nodes.values():
            node.stop()
        if network:
            network.remove()
        stop_cluster(work)
    print_summary(args, checks, nodes, facts)
    return checks.exit_status("partition")


if __name__ == "__main__":
    sys.exit(main())
