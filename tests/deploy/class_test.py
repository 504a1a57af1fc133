#!/usr/bin/env python3
"""A class of 300 behind Debian's nginx, configured as docs/DEPLOY.md says, on loopback.

    tests/deploy/class_test.py CUDOJO_BINARY

With the proxy trusted (`--trusted-proxy 127.0.0.1`, as docs/deploy/cudojo.service runs it) and the
server's default limits: the first administrator is made on the store from the command line; through
nginx, the administrator makes a class and its instructor, the instructor imports a 300-row roster
and hands out its tokens (every one signs in), and 300 more learners join with the class's invite
code, all from one client address (a school's NAT), none refused. Open sign-up from that address
still stops at its hourly limit (60), while another address is not held up. Then the same server
with the proxy not trusted: every learner is nginx's own address, the per-address limit holds for
all of them together, and an X-Forwarded-For a client writes is not believed. Exit 77 (a skip) when
nginx is not installed. Standard library only.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from proxy import NGINX, call, check, start_nginx, start_server, stop

CLASS_SIZE = 300
SIGN_UPS_PER_ADDRESS = 60  # max_new_learners_per_address_per_hour's default


def admin_token(binary, data_dir):
    made = subprocess.run([binary, "admin", "create", "Ops Team", "--data-dir", str(data_dir), "--json"],
                          capture_output=True, text=True, check=True)
    return json.loads(made.stdout)["token"]


def sign_ups(port, source, count, prefix, headers=None):
    statuses = []
    for n in range(count):
        response, _ = call(port, "POST", "/api/learners", {"name": f"{prefix} {n}"}, source=source, headers=headers)
        statuses.append(response.status)
    return statuses


def trusted_proxy(binary, folder):
    data = folder / "data"
    admin = admin_token(binary, data)
    server, server_port = start_server(binary, data, "--workers", "0", "--trusted-proxy", "127.0.0.1")
    nginx, port = start_nginx(folder / "nginx", server_port)
    try:
        response, body = call(port, "POST", "/api/classes", {"name": "GPU Programming", "instructor": "Prof Ada"},
                              token=admin)
        check(response.status == 201, f"the administrator makes a class and its instructor ({response.status})")
        made = json.loads(body)
        class_id, invite, instructor = made["class"]["id"], made["class"]["invite_code"], made["instructor"]["token"]

        roster = "student_id,name,email\n" + "".join(
            f"s{n:04d},Student {n},s{n:04d}@example.edu\n" for n in range(CLASS_SIZE))
        started = time.monotonic()
        response, body = call(port, "POST", f"/api/classes/{class_id}/roster", {"csv": roster}, token=instructor)
        check(response.status == 200 and json.loads(body)["created"] == CLASS_SIZE,
              f"the instructor imports a {CLASS_SIZE}-row roster ({response.status}, "
              f"{(time.monotonic() - started) * 1000:.0f} ms)")
        response, body = call(port, "POST", f"/api/classes/{class_id}/tokens", {}, token=instructor)
        tokens = json.loads(body)["tokens"] if response.status == 200 else []
        check(len(tokens) == CLASS_SIZE, f"... and hands out {len(tokens)} tokens")
        signed_in = sum(call(port, "GET", "/api/me", token=entry["token"], source="127.0.0.2")[0].status == 200
                        for entry in tokens)
        check(signed_in == CLASS_SIZE, f"every roster token signs in through nginx ({signed_in})")

        started = time.monotonic()
        statuses = []
        for n in range(CLASS_SIZE):
            response, _ = call(port, "POST", "/api/join", {"invite": invite, "name": f"Joiner {n}"}, source="127.0.0.2")
            statuses.append(response.status)
        refused = [status for status in statuses if status != 201]
        check(not refused, f"{CLASS_SIZE} learners join with the invite code from one address, none refused "
                           f"({len(refused)} refused; {(time.monotonic() - started):.1f} s)")
        response, body = call(port, "GET", f"/api/classes/{class_id}/grid", token=instructor)
        check(response.status == 200 and len(json.loads(body)["learners"]) == 2 * CLASS_SIZE,
              "the grid lists all of them")

        statuses = sign_ups(port, "127.0.0.2", SIGN_UPS_PER_ADDRESS + 1, "open")
        check(statuses == [201] * SIGN_UPS_PER_ADDRESS + [429],
              f"open sign-up from that address stops at {SIGN_UPS_PER_ADDRESS} an hour")
        check(sign_ups(port, "127.0.0.3", 1, "elsewhere") == [201], "another address still signs up")
    finally:
        stop(nginx, server)
    return data


def untrusted_proxy(binary, folder, data):
    # The same data, the server started without --trusted-proxy: nginx's connections are the client.
    server, server_port = start_server(binary, data, "--workers", "0")
    nginx, port = start_nginx(folder / "nginx-untrusted", server_port)
    try:
        statuses = []
        for n in range(SIGN_UPS_PER_ADDRESS + 1):
            # Each request from another client address, each claiming yet another in X-Forwarded-For.
            response, _ = call(port, "POST", "/api/learners", {"name": f"behind {n}"}, source=f"127.0.1.{n + 1}",
                               headers={"X-Forwarded-For": f"198.51.100.{n + 1}"})
            statuses.append(response.status)
        check(statuses == [201] * SIGN_UPS_PER_ADDRESS + [429],
              f"with the proxy not trusted, every client is nginx's address: {SIGN_UPS_PER_ADDRESS} sign-ups, "
              "then 429, whatever X-Forwarded-For says")
    finally:
        stop(nginx, server)


def main():
    if not os.path.exists(NGINX):
        print("SKIP: nginx is not installed (scripts/setup.sh installs it)")
        return 77
    binary = sys.argv[1]
    folder = pathlib.Path(tempfile.mkdtemp(prefix="cudojo-class-"))
    try:
        data = trusted_proxy(binary, folder)
        untrusted_proxy(binary, folder, data)
        print("a class of 300 behind nginx: every check held")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
