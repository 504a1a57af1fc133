#!/usr/bin/env python3
"""The class's grid and export at class scale, on both stores: server time per request.

    tests/bench/class_bench.py --cudojo build/cudojo [--postgres URL] [--jobs 30000] [--samples 30]

For each store (SQLite in a fresh data folder; PostgreSQL when --postgres names a server, in a fresh
database on it): an administrator and a class made with `cudojo admin create` / `cudojo class create`,
a 300-learner roster imported with `cudojo class roster`, deadlines on every stage, and 30,000 finished
jobs written straight into the jobs table (12 stages, every learner, a mix of verdicts, reports of
about 6 KB as the judge writes them, submitted over the course's weeks). Then `cudojo serve` on that
store, and each request asked --samples times after two warm-ups: the class's grid (JSON), its CSV
export, and one learner's progress and history. The server's own time is its Server-Timing header
where the route sends one; the client's wall time on loopback is beside it. Prints one table; the
issue's target is 200 ms of server time for the grid and the CSV. Standard library only (psql for
PostgreSQL).
"""
import argparse
import http.client
import json
import pathlib
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

STAGES = ["reduction/1", "reduction/2", "reduction/3", "reduction/4", "reduction/5", "reduction/6",
          "reduction/7", "reduction/8", "reduction/9", "atomics/1", "atomics/2", "atomics/3"]
LEARNERS = 300
VERDICTS = ["accepted"] * 5 + ["wrong_answer"] * 2 + ["too_slow", "compile_error", "runtime_error"]
TARGET_MS = 200.0


def report(verdict, ratio):
    metrics = {"time_ratio": ratio, "time_ms": {"median": 0.05 * ratio, "min": 0.045 * ratio}}
    return json.dumps({"verdict": verdict, "metrics": metrics if verdict in ("accepted", "too_slow") else {},
                       "message": "x" * 200, "tests": [{"name": f"case {n}", "ok": True, "detail": "y" * 300}
                                                       for n in range(18)]})


def job_rows(learner_ids, count, seed=7):
    rng = random.Random(seed)
    start = 1_790_000_000.0
    for i in range(count):
        verdict = rng.choice(VERDICTS)
        created = start + rng.uniform(0, 60 * 86400)
        yield (learner_ids[i % len(learner_ids)], STAGES[(i // len(learner_ids)) % len(STAGES)], verdict,
               report(verdict, round(rng.uniform(0.8, 4.0), 3)), created)


def cli(binary, *arguments):
    done = subprocess.run([binary, *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"cudojo {' '.join(arguments)}: {done.stdout}{done.stderr}")
    return done.stdout


def make_class(binary, store):
    cli(binary, "admin", "create", "Bench admin", "--store", store, "--json")
    made = json.loads(cli(binary, "class", "create", "Bench class", "--instructor", "Bench instructor",
                          "--store", store, "--json"))
    roster = pathlib.Path(tempfile.mktemp(suffix=".csv"))
    roster.write_text("student_id,name,email\n" + "".join(
        f"b{n:04d},Learner {n},b{n:04d}@example.edu\n" for n in range(LEARNERS)))
    cli(binary, "class", "roster", str(made["id"]), str(roster), "--store", store)
    roster.unlink()
    for n, stage in enumerate(STAGES):
        cli(binary, "class", "deadline", str(made["id"]), stage, f"2026-10-{n + 1:02d}T23:59:00Z", "--store", store)
    tokens = json.loads(cli(binary, "class", "tokens", str(made["id"]), "--store", store, "--json"))
    return made["id"], made["instructor"]["token"], tokens[0]["token"]


def fill_sqlite(file, class_id, jobs):
    with sqlite3.connect(file) as db:
        ids = [row[0] for row in db.execute("SELECT id FROM learners WHERE class_id = ? ORDER BY id", (class_id,))]
        db.executemany("INSERT INTO jobs (learner_id, stage, source, state, phase, attempts, verdict, report,"
                       " created_at, started_at, finished_at) VALUES (?, ?, 'source', 'done', 'done', 1, ?, ?, ?, ?, ?)",
                       ((l, s, v, r, c, c + 1, c + 2) for l, s, v, r, c in job_rows(ids, jobs)))


def psql(url, sql, stdin=None):
    return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url, "-c", sql] if stdin is None
                          else ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                          input=stdin, capture_output=True, text=True, check=True).stdout


def fill_postgres(url, class_id, jobs):
    ids = [int(x) for x in psql(url, f"SELECT id FROM learners WHERE class_id = {class_id} ORDER BY id").split()]
    lines = []
    for learner, stage, verdict, text, created in job_rows(ids, jobs):
        escaped = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
        lines.append(f"{learner}\t{stage}\tsource\tdone\tdone\t1\t{verdict}\t{escaped}\t{created}\t{created + 1}\t{created + 2}")
    psql(url, "COPY jobs (learner_id, stage, source, state, phase, attempts, verdict, report, created_at, started_at,"
              " finished_at) FROM STDIN", "\n".join(lines) + "\n")
    psql(url, "ANALYZE")


def measure(port, path, token, samples):
    server, client, size = [], [], 0
    for n in range(samples + 2):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        started = time.perf_counter()
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - started) * 1000
        connection.close()
        if response.status != 200:
            raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
        if n < 2:
            continue  # warm-up
        size = len(body)
        client.append(elapsed)
        timing = response.getheader("Server-Timing") or ""
        if "dur=" in timing:
            server.append(float(timing.split("dur=")[1].split(",")[0]))
    return server, client, size


def p95(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def bench_store(binary, kind, store, fill, jobs, samples):
    class_id, instructor, learner = make_class(binary, store)
    started = time.monotonic()
    fill(class_id, jobs)
    filled_s = time.monotonic() - started
    data = pathlib.Path(tempfile.mkdtemp(prefix="cudojo-bench-data-"))
    server = subprocess.Popen([binary, "serve", "--port", "0", "--workers", "0", "--store", store, "--data-dir", str(data)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(server.stdout.readline().split("http://127.0.0.1:")[1].split("/")[0])
        rows = []
        for label, path, token in (("grid (JSON)", f"/api/classes/{class_id}/grid", instructor),
                                   ("export (CSV)", f"/api/classes/{class_id}/export", instructor),
                                   ("export (JSON)", f"/api/classes/{class_id}/export?format=json", instructor),
                                   ("a learner's progress", "/api/progress", learner),
                                   ("a learner's history", "/api/history?limit=100", learner)):
            server_ms, client_ms, size = measure(port, path, token, samples)
            rows.append((kind, label, server_ms, client_ms, size))
        return rows, filled_s
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(data, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cudojo", required=True)
    parser.add_argument("--postgres", help="a PostgreSQL server's URL; a fresh database is made on it")
    parser.add_argument("--jobs", type=int, default=30_000)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="cudojo-class-bench-"))
    rows = []
    try:
        file = folder / "cudojo.sqlite3"
        found, filled = bench_store(args.cudojo, "sqlite", str(file),
                                    lambda class_id, jobs: fill_sqlite(file, class_id, jobs), args.jobs, args.samples)
        rows += found
        print(f"sqlite: {args.jobs} jobs written in {filled:.1f} s; file {file.stat().st_size / 2**20:.0f} MiB",
              file=sys.stderr)
        if args.postgres:
            name = f"cudojo_bench_{int(time.time())}"
            psql(args.postgres, f"CREATE DATABASE {name}")
            url = args.postgres.rsplit("/", 1)[0] + "/" + name
            try:
                found, filled = bench_store(args.cudojo, "postgresql", url,
                                            lambda class_id, jobs: fill_postgres(url, class_id, jobs), args.jobs,
                                            args.samples)
                rows += found
                print(f"postgresql: {args.jobs} jobs written in {filled:.1f} s", file=sys.stderr)
            finally:
                psql(args.postgres, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{LEARNERS} learners x {len(STAGES)} stages, {args.jobs} finished jobs; {args.samples} samples after 2 warm-ups")
    print(f"{'store':<11} {'request':<22} {'server median':>13} {'server p95':>10} {'client median':>13} "
          f"{'client p95':>10} {'bytes':>9}  target")
    for kind, label, server_ms, client_ms, size in rows:
        median = f"{statistics.median(server_ms):.1f} ms" if server_ms else "-"
        tail = f"{p95(server_ms):.1f} ms" if server_ms else "-"
        target = ""
        if label.startswith(("grid", "export (CSV)")):
            worst = p95(server_ms)
            target = f"< {TARGET_MS:.0f} ms: {'met' if worst < TARGET_MS else 'MISSED'}"
        print(f"{kind:<11} {label:<22} {median:>13} {tail:>10} {statistics.median(client_ms):>10.1f} ms "
              f"{p95(client_ms):>7.1f} ms {size:>9}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
