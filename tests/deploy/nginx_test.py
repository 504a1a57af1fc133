#!/usr/bin/env python3
"""cudojo behind Debian's nginx, configured with docs/deploy/cudojo-locations.conf, on loopback.

    tests/deploy/nginx_test.py CUDOJO_BINARY

Starts `cudojo serve` and an nginx of its own (a temporary prefix, the documented locations pointed
at the server's port), then speaks the API through nginx: health and stages, a learner, a job that
is judged (a compile error needs no GPU), its event stream arriving as it is written (not
buffered), security headers passed on, bodies over the limit refused by nginx with a JSON error,
and a JSON 503 once cudojo is down. (ctest api.via_nginx runs the whole API suite through the same
configuration.) Exit 77 (a
skip) when nginx is not installed. Standard library only.
"""
import http.client
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
NGINX = "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def call(port, method, path, body=None, token=None, raw=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (None if body is None else json.dumps(body))
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    return response, response.read()


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok: {what}")


def main():
    if not os.path.exists(NGINX):
        print("SKIP: nginx is not installed (scripts/setup.sh installs it)")
        return 77
    binary = sys.argv[1]
    folder = pathlib.Path(tempfile.mkdtemp(prefix="cudojo-nginx-"))
    server = nginx = None
    try:
        server = subprocess.Popen([binary, "serve", "--port", "0", "--workers", "1", "--data-dir", str(folder / "data")],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        server_port = int(server.stdout.readline().split("http://127.0.0.1:")[1].split("/")[0])
        proxy_port = free_port()
        locations = (ROOT / "docs" / "deploy" / "cudojo-locations.conf").read_text()
        (folder / "cudojo-locations.conf").write_text(locations.replace("127.0.0.1:8080", f"127.0.0.1:{server_port}"))
        temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        (folder / "nginx.conf").write_text(
            ("user root;\n" if os.geteuid() == 0 else "") +
            f"worker_processes 1;\ndaemon off;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
            "events { worker_connections 256; }\nhttp {\n  access_log off;\n"
            f"  client_body_temp_path {temp['body']};\n  proxy_temp_path {temp['proxy']};\n"
            f"  fastcgi_temp_path {temp['fastcgi']};\n  uwsgi_temp_path {temp['uwsgi']};\n"
            f"  scgi_temp_path {temp['scgi']};\n"
            f"  server {{\n    listen 127.0.0.1:{proxy_port};\n    include {folder}/cudojo-locations.conf;\n  }}\n}}\n")
        nginx = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for_port(proxy_port)

        response, body = call(proxy_port, "GET", "/api/health")
        check(response.status == 200 and json.loads(body)["ok"], "health through nginx")
        check(response.getheader("X-Content-Type-Options") == "nosniff", "security headers pass through")
        response, body = call(proxy_port, "GET", "/api/stages")
        check(response.status == 200 and len(json.loads(body)) >= 4, "stages through nginx")
        response, body = call(proxy_port, "POST", "/api/learners", {"name": "via-nginx"})
        check(response.status == 201, "a learner is created through nginx")
        token = json.loads(body)["token"]

        response, body = call(proxy_port, "POST", "/api/jobs",
                              {"stage": "reduction/3", "source": "__global__ void reduce(oops) {}"}, token)
        check(response.status == 202, "a job is queued through nginx")
        job = json.loads(body)["id"]
        connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=60)
        started = time.monotonic()
        connection.request("GET", f"/api/jobs/{job}/events?token={token}")
        stream = connection.getresponse()
        first = stream.readline()
        first_ms = (time.monotonic() - started) * 1000
        check(stream.status == 200 and first, "the event stream opens through nginx")
        check(first_ms < 2000, f"its first line arrives unbuffered ({first_ms:.0f} ms)")
        text = first.decode()
        # Up to the result event and its data line.
        while not ("event: result" in text and "\n" in text.split("event: result", 1)[1].split("data:", 1)[-1]
                   and "data:" in text.split("event: result", 1)[1]) and time.monotonic() - started < 60:
            line = stream.readline()
            if not line:
                break
            text += line.decode()
        ended = "event: result" in text and "compile_error" in text
        check(ended, "the stream ends with the verdict" + ("" if ended else ":\n" + text[-600:]))
        connection.close()

        response, body = call(proxy_port, "POST", "/api/jobs", raw=json.dumps(
            {"stage": "reduction/3", "source": "x" * 300_000}), token=token)
        check(response.status == 413, "a body over 256 KiB is refused by nginx (413)")
        check("error" in json.loads(body) and response.getheader("X-Content-Type-Options") == "nosniff",
              "nginx's refusal is JSON with an error, and carries the security headers")
        connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=30)
        try:
            connection.request("POST", "/api/learners", body=iter([b"x" * 65536] * 16),
                               headers={"Content-Type": "application/json"}, encode_chunked=True)
            status = connection.getresponse().status
        except OSError:
            status = 413  # closed while sending: refused before the whole body arrived
        check(status in (411, 413), f"a chunked body of 1 MiB is refused ({status})")
        server.terminate()
        server.wait(timeout=10)
        response, body = call(proxy_port, "GET", "/api/health")
        check(response.status == 503 and "error" in json.loads(body),
              "with cudojo down, nginx answers 503 with a JSON error")
        print("cudojo behind nginx: every check held")
        return 0
    finally:
        for process in (nginx, server):
            if process and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
