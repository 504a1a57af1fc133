#!/usr/bin/env python3
"""docs/DEPLOY.md's class walkthrough, run as written against a server behind nginx.

    tests/deploy/walkthrough_test.py CUDOJO_BINARY

Every ```sh block that follows a `<!-- walkthrough -->` line in docs/DEPLOY.md runs, in order, in
bash with `set -euo pipefail`, in a folder of the test's own, while `cudojo serve --trusted-proxy
127.0.0.1` runs on the same data folder behind Debian's nginx configured as the document says. Only
the values the document asks the reader to fill in are the test's: the `export` lines naming PATH,
CUDOJO_DATA, SITE and TOKEN (TOKEN being the instructor's token that `cudojo class create` printed a
block earlier). Then what the commands should have made is checked: the class, its roster and
tokens, its deadlines, and the exports from the command line and through the API. The document's
table of limits is checked too: it names every limit `cudojo serve --list-limits` prints, with its
default. Exit 77 (a skip) when nginx is not installed. Standard library only.
"""
import csv
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from proxy import NGINX, ROOT, check, start_nginx, start_server, stop

DEPLOY = ROOT / "docs" / "DEPLOY.md"


def walkthrough_blocks(text):
    """The shell blocks that follow a walkthrough marker, in order."""
    return re.findall(r"<!-- walkthrough -->\n```sh\n(.*?)```", text, re.S)


def fill_in(block, values):
    """The block with each `export NAME=...` of a name in `values` given the test's value."""
    def export_line(match):
        names = re.findall(r"(\w+)=(?:\S+)", match.group(1))
        return "export " + " ".join(f"{name}={values[name]}" if name in values else f"{name}=UNKNOWN"
                                    for name in names)
    return re.sub(r"^export ((?:\w+=\S+ ?)+)$", export_line, block, flags=re.M)


def run_block(block, folder, environment_line):
    script = "set -euo pipefail\n" + environment_line + "\n" + block
    done = subprocess.run(["bash", "-c", script], cwd=folder, capture_output=True, text=True)
    print(f"$ {block.strip()}\n{done.stdout}{done.stderr}".rstrip())
    check(done.returncode == 0, f"the block ran ({done.returncode})")
    return done.stdout


def check_limits_table(binary, text):
    listed = subprocess.run([binary, "serve", "--list-limits"], capture_output=True, text=True, check=True).stdout
    missing = []
    for line in listed.splitlines()[1:]:
        name, value, unit = line.split()[:3]
        if not re.search(rf"^\| `{re.escape(name)}` \| {re.escape(value)} {re.escape(unit)} \|", text, re.M):
            missing.append(f"{name} ({value} {unit})")
    check(not missing, "docs/DEPLOY.md's table names every limit with its default" +
          (f"; missing or different: {', '.join(missing)}" if missing else ""))


def main():
    if not os.path.exists(NGINX):
        print("SKIP: nginx is not installed (scripts/setup.sh installs it)")
        return 77
    binary = pathlib.Path(sys.argv[1]).resolve()
    text = DEPLOY.read_text()
    check_limits_table(str(binary), text)
    blocks = walkthrough_blocks(text)
    check(len(blocks) >= 5, f"docs/DEPLOY.md has the walkthrough's blocks ({len(blocks)})")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="cudojo-walkthrough-"))
    data = folder / "data"
    work = folder / "work"
    work.mkdir()
    server = nginx = None
    try:
        server, server_port = start_server(str(binary), data, "--workers", "0", "--trusted-proxy", "127.0.0.1")
        nginx, proxy_port = start_nginx(folder / "nginx", server_port)
        values = {"PATH": f"{binary.parent}:$PATH", "CUDOJO_DATA": str(data), "SITE": f"http://127.0.0.1:{proxy_port}"}
        # The first block sets PATH and CUDOJO_DATA for the reader's shell; every later block runs with them.
        environment_line = fill_in(blocks[0].splitlines()[0], values)
        printed = ""
        for block in blocks:
            if "TOKEN=" in block:
                found = re.search(r"signs in with this token, shown this once:\s+([0-9a-f]{64})", printed)
                check(found is not None, "the instructor's token was printed by an earlier block")
                values["TOKEN"] = found.group(1)
            printed += run_block(fill_in(block, values), work, environment_line)

        listed = subprocess.run([str(binary), "class", "list", "--data-dir", str(data), "--json"],
                                capture_output=True, text=True, check=True).stdout
        made = [c for c in json.loads(listed) if c["name"] == "GPU Programming 2027"]
        check(len(made) == 1 and made[0]["id"] == 2 and made[0]["learners"] == 3,
              "the class is class 2, with the roster's 3 learners (the document's API path names it)")
        tokens = list(csv.DictReader((work / "tokens.csv").open()))
        check([row["student_id"] for row in tokens] == ["s1002", "s1001", "s1003"] and
              all(len(row["token"]) == 64 for row in tokens), "tokens.csv holds a token for each, by name")
        check((work / "tokens.csv").stat().st_mode & 0o077 == 0, "tokens.csv is readable by its owner only")
        grades = list(csv.reader((work / "grades.csv").open()))
        check(grades[0][:6] == ["student_id", "name", "email", "signed_in", "accepted", "on_time"] and
              [row[0] for row in grades[1:]] == ["s1001", "s1002", "s1003"], "grades.csv: one row per learner, student id first")
        check(grades[0] == list(csv.reader((work / "grades-from-the-api.csv").open()))[0],
              "the API's export has the same columns")
        exported = json.loads((work / "grades.json").read_text())
        check(set(exported["deadlines"]) == {"reduction/3", "reduction/4"} and
              exported["deadlines"]["reduction/3"]["hide_leaderboard"], "both deadlines were set, one hiding its leaderboard")
        classes = json.loads((work / "classes.json").read_text())["classes"]
        check([c["id"] for c in classes] == [2], "through the API the instructor sees their own class only")
        print("docs/DEPLOY.md's walkthrough: every command ran and did what it says")
        return 0
    finally:
        stop(nginx, server)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
