#!/usr/bin/env python3
"""Drives a rejudging on a running `cudojo serve` (scripts/rejudge-check.sh starts one on a copy of
the course) and checks that its summary tells exactly what applying it changes.

    scripts/rejudge_load.py URL --admin TOKEN --course DIR --server-pid PID [--count 50]

A class of learners sends `count` kernels to reduction/3 (the reference, corpus kernels that pass,
the starter, and ones that fail), all judged. Then the stage's gate in DIR is tightened to the
median time ratio of the accepted jobs, the server reloads the course on SIGHUP, and the stage's
version is checked to have changed with every job under the older one. A first rejudging of those
jobs is cancelled: the grid and the export must not move. A second is judged to the end; its
summary (the before -> after matrix and the list of jobs that flip) is read, it is applied, and
every job's verdict is read again: the jobs whose verdict changed must be exactly the listed flips,
and each flip an accepted job now slower than the new gate. Exit 0 only if every check held.
Standard library only.
"""
import argparse
import os
import pathlib
import re
import signal
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_load import ROOT, call  # noqa: E402

STAGE = "reduction/3"
KERNELS = ["course/reduction/03-block-tree/reference.cu", "tests/submissions/reduction-3/tree.cu",
           "tests/submissions/reduction-3/warp_shuffle_atomic.cu", "course/reduction/03-block-tree/starter.cu",
           "tests/submissions/reduction-3/missing_barrier.cu"]


def wait_jobs(base, jobs):
    """Each (job id, token) until done: {job id: job}."""
    done = {}
    for job_id, token in jobs:
        while True:
            status, job = call(f"{base}/api/jobs/{job_id}", token=token)
            if job.get("state") == "done":
                done[job_id] = job
                break
            time.sleep(0.3)
    return done


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--admin", required=True)
    parser.add_argument("--course", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--count", type=int, default=50)
    args = parser.parse_args()
    base = args.url.rstrip("/")
    failures = []

    def check(condition, what):
        print(f"{'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            failures.append(what)

    status, made = call(f"{base}/api/classes", "POST", {"name": "Rejudge check", "instructor": f"Prof {int(time.time())}"},
                        args.admin)
    assert status == 201, made
    class_id, teacher = made["class"]["id"], made["instructor"]["token"]
    learners = []
    for index in range((args.count + 3) // 4):
        status, learner = call(f"{base}/api/join", "POST", {"invite": made["class"]["invite_code"], "name": f"L{index}"})
        assert status == 201, learner
        learners.append(learner["token"])
    started = time.time()
    jobs = []
    for index in range(args.count):
        source = (ROOT / KERNELS[index % len(KERNELS)]).read_text(encoding="utf-8")
        token = learners[index // 4]
        status, job = call(f"{base}/api/jobs", "POST", {"stage": STAGE, "source": source}, token)
        assert status == 202, (status, job)
        jobs.append((job["id"], token))
    before = wait_jobs(base, jobs)
    print(f"{len(before)} jobs judged in {time.time() - started:.1f} s")
    ratios = sorted(job["report"]["metrics"]["time_ratio"] for job in before.values() if job["verdict"] == "accepted")
    verdicts = {}
    for job in before.values():
        verdicts[job["verdict"]] = verdicts.get(job["verdict"], 0) + 1
    print(f"verdicts: {verdicts}; accepted time ratios: {', '.join(f'{r:.3f}' for r in ratios)}")
    check(len(ratios) >= 4, "at least four accepted jobs to tighten the gate against")
    new_limit = round(statistics.median(ratios), 3)

    def versions():
        status, shown = call(f"{base}/api/classes/{class_id}/versions", token=teacher)
        return next(stage for stage in shown["stages"] if stage["stage"] == STAGE)

    old_version = versions()
    stage_file = pathlib.Path(args.course) / "reduction" / "03-block-tree" / "stage.toml"
    text = stage_file.read_text()
    stage_file.write_text(re.sub(r"max_time_ratio = [0-9.]+", f"max_time_ratio = {new_limit}", text))
    print(f"gate of {STAGE}: max_time_ratio 2.0 -> {new_limit} (the median accepted ratio); SIGHUP")
    os.kill(args.server_pid, signal.SIGHUP)
    for _ in range(100):
        if versions()["current"] != old_version["current"]:
            break
        time.sleep(0.1)
    new_version = versions()
    check(new_version["current"] != old_version["current"],
          f"the stage's version changed: {old_version['current']} -> {new_version['current']}")
    check(new_version["older_jobs"] == args.count, f"{new_version['older_jobs']} jobs under an older version")

    grid_before = call(f"{base}/api/classes/{class_id}/grid", token=teacher)[1]
    export_before = call_text(f"{base}/api/classes/{class_id}/export", teacher)
    body = {"stage": STAGE, "older_versions": True, "reason": f"gate 2.0 -> {new_limit}"}
    status, first = call(f"{base}/api/classes/{class_id}/rejudgings", "POST", body, teacher)
    check(status == 201 and first["jobs"] == args.count, f"a first rejudging takes {first.get('jobs')} jobs")
    status, cancelled = call(f"{base}/api/classes/{class_id}/rejudgings/{first['id']}/cancel", "POST", {}, teacher)
    check(status == 200 and cancelled["state"] == "cancelled", "cancelled")
    check(call(f"{base}/api/classes/{class_id}/grid", token=teacher)[1]["learners"] == grid_before["learners"],
          "the grid did not move")
    check(call_text(f"{base}/api/classes/{class_id}/export", teacher) == export_before, "the export did not move")

    started = time.time()
    status, second = call(f"{base}/api/classes/{class_id}/rejudgings", "POST", body, teacher)
    check(status == 201 and second["jobs"] == args.count, f"a second rejudging takes {second.get('jobs')} jobs")
    path = f"{base}/api/classes/{class_id}/rejudgings/{second['id']}"
    while True:
        status, shown = call(f"{path}?items=all", token=teacher)
        if shown["judged"] == shown["jobs"]:
            break
        time.sleep(1)
    took = time.time() - started
    print(f"rejudged {shown['jobs']} jobs in {took:.1f} s ({shown['jobs'] / took * 60:.0f} jobs a minute)")
    print("\n  before               after                jobs")
    for cell in shown["summary"]["matrix"]:
        print(f"  {cell['before']:<20} {cell['after']:<20} {cell['jobs']:>4}")
    listed = {item["job"] for item in shown["flips"]}
    print(f"\n{len(listed)} jobs flip:")
    for item in shown["flips"]:
        print(f"  job {item['job']:>4} {item['learner']['name']:<6} {item['before']['verdict']} "
              f"{item['before']['ratio']} -> {item['after']['verdict']} {item['after']['ratio']}")
        check(item["before"]["verdict"] == "accepted" and item["after"]["verdict"] == "too_slow"
              and item["after"]["ratio"] > new_limit,
              f"job {item['job']}: an accepted job now slower than {new_limit}")
    check(all(item["after"]["stage_version"] == new_version["current"] for item in shown["items"]),
          "every rerun was judged under the new version")

    status, applied = call(f"{path}/apply", "POST", {}, teacher)
    check(status == 200 and applied["state"] == "applied", "applied")
    after = wait_jobs(base, jobs)
    changed = {job_id for job_id in before if before[job_id]["verdict"] != after[job_id]["verdict"]}
    check(changed == listed, f"the jobs that changed ({len(changed)}) are exactly the listed flips ({len(listed)})")
    check(all(job["stage_version_current"] for job in after.values()), "every job is now under the current version")
    check(versions()["older_jobs"] == 0, "no job left under an older version")
    # The grid counts the applied verdicts: a learner has the stage accepted iff one of their jobs is.
    accepted_by = {}
    for job_id, token in jobs:
        accepted_by[token] = accepted_by.get(token, False) or after[job_id]["verdict"] == "accepted"
    grid = call(f"{base}/api/classes/{class_id}/grid", token=teacher)[1]["learners"]
    status_of = {row["name"]: row["cells"].get(STAGE, {}).get("status") for row in grid}
    names = {token: f"L{index}" for index, token in enumerate(learners)}
    check(all((status_of[names[token]] == "accepted") == accepted for token, accepted in accepted_by.items()),
          "the grid's status of every learner follows the applied verdicts")
    print(f"\n{len(failures)} check(s) failed" if failures else "\nall checks held")
    return 1 if failures else 0


def call_text(url, token):
    import urllib.request
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode()


if __name__ == "__main__":
    sys.exit(main())
