#!/usr/bin/env python3
"""One table from several runs of tests/load/hostile_load.py (their --json files), side by side.

    tests/load/load_table.py LABEL=FILE [LABEL=FILE ...]

Each attack is a row; each run (old build, library candidate, new build, ...) a column group with
the good client's failures out of its requests, its p99, the server's peak memory and the verdict.
The attacks' own notes follow, run by run. A FILE that is missing or unreadable becomes a column
that says so, so one failed run does not hide the others. Standard library only.
"""
import json
import sys


def load(argument):
    label, _, path = argument.partition("=")
    try:
        with open(path) as file:
            return label, json.load(file)
    except (OSError, ValueError) as error:
        return label, {"rows": [], "error": f"{path}: {error}"}


def cell(row):
    if row is None:
        return f"{'not run':<37}"
    if "good_requests" not in row:   # skipped, or its server did not start
        return f"{row['verdict']:<37}"
    p99 = row.get("good_p99_ms")
    p99_text = f"{p99:.1f}" if isinstance(p99, (int, float)) else "-"
    failed = f"{row['good_failed']}/{row['good_requests']}"
    return f"{failed:>11} {p99_text:>7} {row['server_peak_mib']:>6.0f} {row['verdict']:<10}"


HEADER = f"{'failed/good':>11} {'p99 ms':>7} {'MiB':>6} {'verdict':<10}"


def main(arguments):
    if not arguments:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    runs = [load(argument) for argument in arguments]
    order, titles = [], {}
    for _, run in runs:
        for row in run["rows"]:
            if row["key"] not in titles:
                order.append(row["key"])
                titles[row["key"]] = row["attack"]
    by_key = [{row["key"]: row for row in run["rows"]} for _, run in runs]

    print(f"{'':<28}" + "".join(f" | {label:<37}" for label, _ in runs))
    print(f"{'attack':<28}" + f" | {HEADER}" * len(runs))
    for key in order:
        print(f"{titles[key]:<28}" + "".join(f" | {cell(rows.get(key))}" for rows in by_key))
    print()
    for (label, run) in runs:
        if "error" in run:
            print(f"{label}: no results ({run['error']})")
        else:
            print(f"{label}: {run['target']}; {run['seconds']:g} s an attack, {run['run_seconds']:.0f} s in all; "
                  f"limits {'held' if run['held'] else 'NOT held'}")
    print()
    print("notes (! marks what the server did other than issue #21 asks)")
    for key in order:
        print(titles[key])
        for (label, _), rows in zip(runs, by_key):
            if key in rows and rows[key].get("note"):
                print(f"  {label}: {rows[key]['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
