#!/usr/bin/env python3
"""Judging at class scale, measured on one build: starts `BUILD/cudojo serve` on a fresh SQLite
store, drives it through the API, and writes what it saw as JSON (scripts/judge-scale.sh prints two
builds side by side). Standard library only; needs a GPU to mean anything.

    scripts/judge_scale.py BUILD OUT.json [--parts idle,burst,cold] [--bursts 1] [--shuffle SEED]

Parts:
  idle     one job at a time on the idle server (two per stage: its reference and a wrong kernel):
           queued-to-verdict of each
  burst    the mix (the corpus's 75 CUDA files over all twelve stages and the twelve references, about
           half wrong) plus 10 copies of one accepted kernel, submitted at once: jobs a minute, every
           verdict and finding, the copies' time ratios
  alone    the mix again, one job at a time: the verdicts and findings a burst must reproduce, and the
           accepted copies' ratios judged alone
  wide     the burst again on a server with --wide-slots slots (8): what more jobs at once give
  pairs    on a server with one slot: each kernel that leaves doubt (faults, hangs, heap, scribbles,
           prints) judged just before a correct kernel, whose verdict and findings must not move
  cold     `cudojo check` of every stage's reference, a fresh process each time
"""
import argparse
import json
import os
import pathlib
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from serve_load import call  # noqa: E402  (the same JSON call as the serve check's)
SUBMISSIONS = ROOT / "tests" / "submissions"
COPY_FILE = ("reduction/4", SUBMISSIONS / "reduction-4" / "warp_shuffle.cu")
# Kernels after which a worker must not be reused, each followed by the stage's reference.
DOUBTFUL = ["reduction-2/illegal_address.cu", "reduction-2/trap.cu", "reduction-3/hang.cu",
            "reduction-2/heap_leak.cu", "reduction-2/scribble_past_output.cu", "reduction-2/printf_hello.cu",
            "reduction-3/missing_barrier.cu"]


def stage_of(path):
    return path.parent.name.replace("-", "/")


def expectation(path):
    first = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    return dict(kv.split("=", 1) for kv in first.removeprefix("// expect: ").split() if "=" in kv)


def the_mix_files(folder):
    """The folder's CUDA files that a JSON body can carry (UTF-8)."""
    files = []
    for path in sorted(folder.glob("*.cu")):
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def the_mix(count=80):
    """`count` corpus files taken in turn from each stage's folder (CUDA, UTF-8), so every stage is
    in it and the corpus's own share of wrong kernels carries over."""
    folders = sorted(p for p in SUBMISSIONS.iterdir() if p.is_dir())
    queues = [the_mix_files(folder) for folder in folders]
    mix = []
    while len(mix) < count and any(queues):
        for files in queues:
            if files and len(mix) < count:
                mix.append(files.pop(0))
    return mix


def reference_of(stage):
    track, number = stage.split("/")
    folder = next((ROOT / "course" / track).glob(f"{int(number):02d}-*"))
    return folder / "reference.cu"


class Server:
    def __init__(self, build, workers=None):
        self.data = tempfile.mkdtemp(prefix="cudojo-scale-")
        self.log = open(os.path.join(self.data, "serve.log"), "w")
        command = [f"{build}/cudojo", "serve", "--port", "0", "--data-dir", self.data]
        if workers:
            command += ["--workers", str(workers)]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        self.url = None
        while time.time() < deadline and not self.url:
            time.sleep(0.2)
            found = re.search(r"http://[0-9.]+:[0-9]+/", open(os.path.join(self.data, "serve.log")).read())
            if found:
                self.url = found.group(0).rstrip("/")
        if not self.url:
            raise RuntimeError("the server did not start:\n" + open(os.path.join(self.data, "serve.log")).read())
        self.tokens = []
        # Workers start ahead of the first job: let them, so the first job is not timed cold.
        time.sleep(8)

    def token(self, index):
        while len(self.tokens) <= index:
            status, learner = call(f"{self.url}/api/learners", "POST", {"name": f"scale{len(self.tokens)}-{int(time.time())}"})
            assert status == 201, (status, learner)
            self.tokens.append(learner["token"])
        return self.tokens[index]

    def submit(self, stage, path, token):
        status, job = call(f"{self.url}/api/jobs", "POST", {"stage": stage, "source": path.read_text(encoding="utf-8")},
                           token)
        assert status == 202, (status, job)
        return job["id"]

    def wait(self, job_id, token):
        while True:
            status, job = call(f"{self.url}/api/jobs/{job_id}", token=token)
            if job.get("state") == "done":
                return job
            time.sleep(0.05)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        # JUDGE_SCALE_LOGS=DIR keeps each server's log there (to read why a job went as it did).
        if os.environ.get("JUDGE_SCALE_LOGS"):
            keep = pathlib.Path(os.environ["JUDGE_SCALE_LOGS"])
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(os.path.join(self.data, "serve.log"), keep / f"serve-{os.path.basename(self.data)}.log")
        shutil.rmtree(self.data, ignore_errors=True)


def summary(job, path):
    report = job.get("report") or {}
    metrics = report.get("metrics") or {}
    sanitizer = report.get("sanitizer") or {}
    return {
        "file": str(path.relative_to(ROOT)).removeprefix("tests/submissions/"),
        # What the corpus file says it should get (its first line); a stage's reference: accepted.
        "expected": expectation(path) if SUBMISSIONS in path.parents else {"verdict": "accepted"},
        "metrics_source": metrics.get("metrics_source"),
        "metrics_note": metrics.get("metrics_note") or "",
        "metrics_passes": metrics.get("metrics_passes"),
        # The profiled launch's own figures: a profile taken under load must read as one taken alone.
        "kernel_duration_ms": metrics.get("kernel_duration_ms"),
        "dram_throughput_pct": metrics.get("dram_throughput_pct"),
        # A verdict unlike the corpus file's is read from its words.
        "message": (report.get("message") or "")[:400],
        "sanitizer": {t["tool"]: t["errors"] for t in sanitizer.get("tools") or []},
        "sanitizer_skipped": sanitizer.get("skipped") or [],
        "sanitizer_note": sanitizer.get("note") or "",
        "verdict": job["verdict"],
        "findings": sorted(f"{f['code']}@{f.get('line')}" for f in report.get("findings") or []),
        "queued_to_verdict_s": job["queued_to_verdict_ms"] / 1000,
        "time_ratio": metrics.get("time_ratio"),
        "fresh_worker": "cuda_start" in (report.get("timings_ms") or {}),
        # The tests' shared-memory plantings went through the kernel's planted build (no turn alone).
        "planted_by_kernel": "load_planted" in (report.get("timings_ms") or {}),
        "timings_ms": report.get("timings_ms") or {},
    }


def show(label, result):
    timings = result["timings_ms"]
    print(f"  {label} {result['file']:44} {result['verdict']:20} q->v {result['queued_to_verdict_s']:5.2f} s "
          f"ratio {result['time_ratio'] or 0:6.3f} fresh {str(result['fresh_worker']):5} "
          f"planted {'kernel' if result.get('planted_by_kernel') else 'sms':6} "
          f"lease {timings.get('waited_for_gpu', 0):6.0f} ms metrics {result['metrics_source'] or '-':5} "
          f"tools {result['sanitizer']} skipped {result['sanitizer_skipped']} {result['sanitizer_note'][:60]} "
          f"findings {result['findings']}", flush=True)


def one_at_a_time(server, items, pause):
    results = []
    token = server.token(0)
    for stage, path in items:
        time.sleep(pause)
        job = server.wait(server.submit(stage, path, token), token)
        results.append(summary(job, path))
        show("one", results[-1])
    return results


def burst(server, items):
    started = time.time()
    submitted = []
    for index, (stage, path) in enumerate(items):
        token = server.token(1 + index // 4)  # four jobs a learner, the per-learner limit
        submitted.append((server.submit(stage, path, token), token, path))
    results = [summary(server.wait(job_id, token), path) for job_id, token, path in submitted]
    seconds = time.time() - started
    for result in results:
        show("burst", result)
    return {"jobs": len(items), "seconds": seconds, "jobs_per_minute": 60 * len(items) / seconds, "results": results}


def cold_checks(build, runs):
    rows = []
    for track in ("atomics", "reduction"):
        for folder in sorted((ROOT / "course" / track).glob("[0-9][0-9]-*")):
            stage = f"{track}/{int(folder.name[:2])}"
            walls, verdicts, timings = [], set(), []
            for _ in range(runs):
                start = time.time()
                out = subprocess.run([f"{build}/cudojo", "check", stage, str(folder / "reference.cu"), "--json"],
                                     capture_output=True, text=True)
                walls.append(time.time() - start)
                try:
                    report = json.loads(out.stdout)
                    verdicts.add(report["verdict"])
                    timings.append(report.get("timings_ms", {}))
                except (ValueError, KeyError):
                    verdicts.add(f"exit {out.returncode}")
            # Each run's phases, so where a cold check's time goes can be read afterwards.
            rows.append({"stage": stage, "median_s": statistics.median(walls), "walls": walls,
                         "verdicts": sorted(verdicts), "timings_ms": timings})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("out")
    parser.add_argument("--parts", default="idle,burst,cold")
    parser.add_argument("--bursts", type=int, default=1, help="bursts of the mix, each in its own order")
    parser.add_argument("--shuffle", type=int, help="seed: each burst in a random order (else the mix's order)")
    parser.add_argument("--cold-runs", type=int, default=2)
    parser.add_argument("--wide-slots", type=int, default=8,
                        help="part 'wide': the burst again on a server with this many slots")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    out = {"build": args.build, "parts": sorted(parts)}
    # The corpus's CUDA files and every stage's reference: about half of them wrong.
    mix = [(stage_of(p), p) for p in the_mix()]
    mix += [(stage, reference_of(stage)) for stage in sorted({stage for stage, _ in mix})]
    copies = [COPY_FILE] * 10

    if parts & {"idle", "burst", "alone"}:
        server = Server(args.build)
        try:
            if "idle" in parts:
                items = []
                for folder in sorted(p for p in SUBMISSIONS.iterdir() if p.is_dir()):
                    stage = folder.name.replace("-", "/")
                    wrong = next((p for p in the_mix_files(folder) if expectation(p).get("verdict") == "wrong_answer"),
                                 None)
                    items.append((stage, reference_of(stage)))
                    if wrong:
                        items.append((stage, wrong))
                out["idle"] = one_at_a_time(server, items, pause=0.3)
                waits = sorted(r["queued_to_verdict_s"] for r in out["idle"])
                print(f"{args.build}: idle, {len(waits)} jobs: median {statistics.median(waits):.2f} s, "
                      f"p90 {waits[int(0.9 * (len(waits) - 1))]:.2f} s", flush=True)
            if "burst" in parts:
                rng = random.Random(args.shuffle)
                out["bursts"] = []
                for _ in range(args.bursts):
                    items = mix + copies
                    if args.shuffle is not None:
                        rng.shuffle(items)
                    result = burst(server, items)
                    out["bursts"].append(result)
                    planted = sum(1 for r in result["results"] if r.get("planted_by_kernel"))
                    print(f"{args.build}: burst of {result['jobs']}: {result['seconds']:.1f} s, "
                          f"{result['jobs_per_minute']:.1f} jobs/min ({planted} planted by their kernel)",
                          flush=True)
            if "alone" in parts:
                out["alone"] = one_at_a_time(server, mix + copies, pause=0.0)
                print(f"{args.build}: {len(out['alone'])} jobs one at a time", flush=True)
        finally:
            server.stop()

    if "wide" in parts:
        server = Server(args.build, workers=args.wide_slots)
        try:
            items = mix + copies
            if args.shuffle is not None:
                random.Random(args.shuffle).shuffle(items)
            result = burst(server, items)
            result["slots"] = args.wide_slots
            out["wide"] = result
            print(f"{args.build}: burst of {result['jobs']} on {args.wide_slots} slots: {result['seconds']:.1f} s, "
                  f"{result['jobs_per_minute']:.1f} jobs/min", flush=True)
        finally:
            server.stop()

    if "pairs" in parts:
        server = Server(args.build, workers=1)
        try:
            out["pairs"] = []
            token = server.token(0)
            for name in DOUBTFUL:
                path = SUBMISSIONS / name
                if not path.exists():
                    continue
                stage = stage_of(path)
                first = summary(server.wait(server.submit(stage, path, token), token), path)
                after = summary(server.wait(server.submit(stage, reference_of(stage), token), token), reference_of(stage))
                show("first", first)
                show("then", after)
                out["pairs"].append({"first": first, "then_reference": after})
                print(f"{args.build}: {name} ({first['verdict']}), then the reference: {after['verdict']} "
                      f"{after['findings']}, fresh worker: {after['fresh_worker']}", flush=True)
        finally:
            server.stop()

    if "cold" in parts:
        out["cold"] = cold_checks(args.build, args.cold_runs)
        for row in out["cold"]:
            print(f"{args.build}: cold check {row['stage']}: median {row['median_s']:.2f} s {row['verdicts']}", flush=True)

    pathlib.Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
