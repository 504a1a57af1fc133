#!/usr/bin/env python3
"""Hostile load against a real `cudojo serve` on loopback, while a well-behaved client measures.

    tests/load/hostile_load.py CUDOJO_BINARY [--seconds 8] [--only slow,streams] [--json FILE]
                               [--old] [--server-command 'CMD {port}'] [limits, see --help]

What it does. For each attack of issues #13 and #21 it starts a server of its own (`cudojo serve
--port 0 --workers 0` on a temporary data folder, so nothing judges and rows do not depend on each
other), runs the attack, and meanwhile a good client, in a process of its own and from 127.0.0.2,
opens a new connection every 20 ms asking GET /api/health and GET /api/stages in turn. One row per
attack: the good client's requests, failures (a non-200 or any exception, 2 s timeout), p50, p99
and max latency, that attack's server's peak memory (VmHWM), a verdict, and a note with the
attack's own numbers. Exit 1 unless every row is "ok". A run at the defaults takes about 2 minutes.

How. Attackers come from other loopback addresses (127.0.<attack>.<n>, each address kept under the
per-address connection cap of 512, except the attack on that cap), on non-blocking sockets driven by
one `selectors` loop (Peer and Loop, in load_sockets.py), so this process stays cheap beside a
server on 2 cores.
The attack on live event streams plays a judge on another node: it writes the jobs' phase straight
into the server's SQLite file and times each stream's event. Every socket has a timeout or lives in
a loop with a deadline, and every attack has a wall-clock bound, so a frozen server still lets the
test finish. A server whose memory passes KILL_ABOVE_MIB is killed (the old build's multi-range
answers would otherwise take the machine); the next attack starts a fresh one.

Verdicts (an attack over the limit on the good client's p99 alone runs once more, on a fresh server,
and its row says so: --retries). "OVER LIMIT": the good client saw a failure or a p99 over --p99-limit-ms, the server's
peak passed --memory-limit-mib, or a stream change took over --stream-limit-ms or never came (a
stream answered 200 that the server then closed has missed every change). When good requests take
over the p99 limit the note says how many, when in the attack, and the p99 of each path.
"WRONG": the server did not do what issue #21 asks for that attack (cut slow requests at the 10 s
header deadline, 431 for 100,000 headers, 200 with the whole file for many ranges, 512 connections
per address, a dropped stream's slot free at once, a learner's 5th stream replacing its oldest, ...);
the note says what, after a "!". Attacks that need cudojo's API are skipped for --server-command.

--old: an older build (eec62b9, cpp-httplib) that knows neither --limit nor stream tickets nor the
new limits: streams are opened with ?token=, what it cannot do is skipped, every attack still runs.
The test raises its own RLIMIT_NOFILE to the hard limit (the server inherits it); an attack too big
for it is scaled down and says so. Standard library only (Python 3.11).

Files. This one parses the options, runs the attacks (ATTACKS) and prints the table; beside it in
tests/load/: load_limits.py (the limits and sizes), load_server.py (the server under test),
load_good_client.py (the good client, and the statistics), load_sockets.py (Peer, Loop, the HTTP
and event-stream parsing, the request helpers), attacks_transport.py (the attacks that need no API)
and attacks_api.py (those that use cudojo's).
"""
import argparse
import json
import os
import resource
import sys
import time
from dataclasses import dataclass, field

# Its modules lie beside it in tests/load/: found from any working directory, also where Python does
# not put the script's folder on sys.path itself (python3 -P, PYTHONSAFEPATH).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from attacks_api import dropped_event_streams, learner_flood, live_event_streams, refused_bursts
from attacks_transport import (baseline, chunked_body, connection_burst, huge_headers,
                               idle_keep_alive, multi_range_requests, one_address_over_cap,
                               silent_connections, slow_connections)
from load_good_client import GoodClient, median, percentile, tally
from load_limits import (DEFAULT_SECONDS, FD_RESERVE, GOOD_ADDRESS, GOOD_INTERVAL_S,
                         GOOD_PATHS, HEADER_DEADLINE_S, MEMORY_LIMIT_MIB, P99_LIMIT_MS,
                         STREAM_LIMIT_MS)
from load_server import Server, answers_health, start_server


# ================================================================================================
# The attacks: what each is handed (Run) and fills (Outcome), and their list (ATTACKS); the
# functions themselves are in attacks_transport.py (no API needed) and attacks_api.py (cudojo's)
# ================================================================================================

@dataclass
class Run:
    port: int
    seconds: float
    old: bool
    server: Server
    nofile: int
    stream_limit_ms: float

    def scaled(self, wanted, outcome):
        """How many sockets an attack may open at once: `wanted`, or fewer if RLIMIT_NOFILE is low."""
        allowed = max(1, self.nofile - FD_RESERVE)
        if wanted > allowed:
            outcome.note(f"scaled from {wanted} to {allowed} (RLIMIT_NOFILE hard limit {self.nofile})")
        return min(wanted, allowed)


@dataclass
class Outcome:
    notes: list = field(default_factory=list)
    wrong: list = field(default_factory=list)     # not what issue #21 asks of the server
    over: list = field(default_factory=list)      # a limit of its own (the streams' 200 ms) not held
    numbers: dict = field(default_factory=dict)   # stable keys for --json

    def note(self, text):
        self.notes.append(text)

    def expect(self, condition, text):
        if not condition:
            self.wrong.append(text)
        return condition


@dataclass
class Attack:
    key: str              # for --only
    title: str
    function: object
    needs_api: bool       # skipped for --server-command
    limits: tuple = ()    # --limit NAME=VALUE for this attack's server (new build only)


ATTACKS = [
    Attack("baseline", "none (baseline)", baseline, False),
    Attack("dropped", "dropped event streams", dropped_event_streams, True),
    Attack("chunked", "chunked 300 MB body", chunked_body, False),
    Attack("keepalive", "500 idle keep-alive", idle_keep_alive, False),
    Attack("burst", "bursts of 200 connections", connection_burst, False),
    Attack("flood", "new-learner flood", learner_flood, True),
    Attack("slow", "1,000 slow connections", slow_connections, False),
    Attack("silent", "10,000 silent connections", silent_connections, False),
    Attack("streams", "300 live event streams", live_event_streams, True, ("max_event_streams=300",)),
    Attack("ranges", "1,000 multi-range requests", multi_range_requests, False),
    Attack("headers", "100,000-header requests", huge_headers, False),
    Attack("refused", "bursts of refused requests", refused_bursts, True),
    Attack("one-address", "2,000 from one address", one_address_over_cap, False),
]


# ================================================================================================
# Running the attacks, the table
# ================================================================================================

def run_attack(attack, args, good, nofile):
    row = {"key": attack.key, "attack": attack.title}
    if args.server_command and attack.needs_api:
        row.update(verdict="skipped", note="needs cudojo's API")
        return row
    began = time.monotonic()
    try:
        server = start_server(args, attack)
    except (OSError, RuntimeError) as error:
        row.update(verdict="WRONG", wrong=[str(error)], note=f"!the server did not start: {error}")
        return row
    outcome = Outcome()
    try:
        good.start(server.port)
        try:
            attack.function(Run(server.port, args.seconds, args.old, server, nofile, args.stream_limit_ms), outcome)
        except Exception as error:   # a refused or frozen server stops the attack; the row says so
            outcome.wrong.append(f"the attack stopped: {type(error).__name__}: {error}")
        latencies, offsets, failures = good.stop()
        if server.killed_at_mib:
            outcome.wrong.append(f"server killed by the test at {server.killed_at_mib:.0f} MiB")
        elif not server.alive():
            outcome.wrong.append(f"server exited ({server.process.returncode}): {server.log_tail(1)}")
        elif not answers_health(server.port):
            outcome.wrong.append("no answer to /api/health within 5 s after the attack")
        peak = server.peak_mib()
    finally:
        server.stop()
    p99 = percentile(latencies, 0.99) if latencies else float("inf")
    over = list(outcome.over)
    if failures:
        over.append("failed good requests")
    if p99 > args.p99_limit_ms:
        over.append("good p99")
    if peak > args.memory_limit_mib:
        over.append("server memory")
    notes = outcome.notes + ["!" + text for text in outcome.wrong]
    if failures:
        notes.append(f"good failures: {tally(failures)}")
    slow = [offset for offset, ms in zip(offsets, latencies) if ms > args.p99_limit_ms]
    by_path = {path: percentile(latencies[i::2], 0.99) for i, path in enumerate(GOOD_PATHS) if latencies[i::2]}
    if slow:
        notes.append(f"good requests over {args.p99_limit_ms:g} ms: {len(slow)}, at {min(slow):.1f}-{max(slow):.1f} s "
                     f"into the attack (p99 " + ", ".join(f"{path} {ms:.0f} ms" for path, ms in by_path.items()) + ")")
    outcome.numbers["good_p99_ms_by_path"] = by_path
    row.update(good_requests=len(latencies), good_failed=len(failures),
               good_p50_ms=median(latencies) if latencies else None, good_p99_ms=p99 if latencies else None,
               good_max_ms=max(latencies) if latencies else None, server_peak_mib=round(peak, 1),
               verdict="OVER LIMIT" if over else "WRONG" if outcome.wrong else "ok",
               over=over, wrong=outcome.wrong, note="; ".join(notes), numbers=outcome.numbers,
               seconds=round(time.monotonic() - began, 1))
    return row


def number(value, width):
    return f"{value:>{width}.1f}" if isinstance(value, (int, float)) else f"{'-':>{width}}"


def print_row(row):
    if "good_requests" not in row:   # skipped, or its server did not start
        print(f"{row['attack']:<28} {'':>42}   {row['verdict']:<10}  {row['note']}", flush=True)
        return
    print(f"{row['attack']:<28} {row['good_requests']:>5} {row['good_failed']:>6} {number(row['good_p50_ms'], 7)}"
          f" {number(row['good_p99_ms'], 7)} {number(row['good_max_ms'], 7)} {number(row['server_peak_mib'], 8)}"
          f"   {row['verdict']:<10}  {row['note']}", flush=True)


def raise_open_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        return soft
    return hard


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", help="the cudojo binary (ignored with --server-command)")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="each attack's length")
    parser.add_argument("--only", help="comma-separated attacks: " + ",".join(a.key for a in ATTACKS))
    parser.add_argument("--json", help="write the rows here as JSON")
    parser.add_argument("--old", action="store_true", help="an older build: no --limit, no tickets")
    parser.add_argument("--server-command", help="another server to attack, '{port}' where its port goes")
    parser.add_argument("--server-limit", action="append", metavar="NAME=VALUE",
                        help="a limit for every cudojo server started (cudojo serve --limit; repeat for more)")
    parser.add_argument("--p99-limit-ms", type=float, default=P99_LIMIT_MS)
    parser.add_argument("--memory-limit-mib", type=float, default=MEMORY_LIMIT_MIB)
    parser.add_argument("--stream-limit-ms", type=float, default=STREAM_LIMIT_MS)
    parser.add_argument("--retries", type=int, default=1,
                        help="runs again, on a fresh server, an attack over the limit on the good client's p99 "
                             "alone (a moment of noise on a shared machine); its row says so. Default 1")
    args = parser.parse_args()
    attacks = ATTACKS
    if args.only:
        keys = args.only.split(",")
        unknown = [key for key in keys if key not in {a.key for a in ATTACKS}]
        if unknown:
            parser.error(f"no attack {', '.join(unknown)}; the attacks are {', '.join(a.key for a in ATTACKS)}")
        attacks = [a for a in ATTACKS if a.key in keys]

    nofile = raise_open_file_limit()
    target = args.server_command or args.binary + (" (old build)" if args.old else "")
    print(f"hostile load on {target}; each attack {args.seconds:g} s (slow connections at least "
          f"{1.5 * HEADER_DEADLINE_S:g} s); good client from {GOOD_ADDRESS}: GET /api/health and /api/stages, "
          f"a new connection every {GOOD_INTERVAL_S * 1000:.0f} ms; RLIMIT_NOFILE {nofile}")
    print(f"{'attack':<28} {'good':>5} {'failed':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'peak MiB':>8}"
          f"   {'verdict':<10}  note")
    started, rows = time.monotonic(), []
    good = GoodClient()
    try:
        for attack in attacks:
            row = run_attack(attack, args, good, nofile)
            # Only a p99 over the limit is tried again: a failed request, a wrong answer, memory or a
            # late stream change is a verdict at once. The second try is the row's figures.
            for _ in range(args.retries):
                if row.get("over") != ["good p99"] or row.get("wrong"):
                    break
                first_p99 = row["good_p99_ms"]
                row = run_attack(attack, args, good, nofile)
                row["note"] = f"second try (the first: good p99 {first_p99:.1f} ms); " + row["note"]
                row["first_try_p99_ms"] = first_p99
            rows.append(row)
            print_row(rows[-1])
    finally:
        good.close()
    run_seconds = time.monotonic() - started
    failed = [row for row in rows if row["verdict"] not in ("ok", "skipped")]
    print(f"limits: good p99 <= {args.p99_limit_ms:g} ms, no failed good request, server peak <= "
          f"{args.memory_limit_mib:g} MiB, every stream change within {args.stream_limit_ms:g} ms, and each "
          f"attack answered as issue #21 asks: {'held' if not failed else 'NOT held'} "
          f"({len(rows) - len(failed)}/{len(rows)} rows ok or skipped); {run_seconds:.0f} s in all")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"target": target, "old": args.old, "seconds": args.seconds, "run_seconds": round(run_seconds, 1),
                       "limits": {"good_p99_ms": args.p99_limit_ms, "server_peak_mib": args.memory_limit_mib,
                                  "stream_change_ms": args.stream_limit_ms},
                       "held": not failed, "rows": rows}, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
