#!/usr/bin/env python3
"""cudojo behind Debian's nginx, configured with docs/deploy/cudojo-locations.conf, on loopback.

    tests/deploy/nginx_test.py CUDOJO_BINARY

Starts `cudojo serve --trusted-proxy 127.0.0.1` (as docs/DEPLOY.md runs it) and an nginx of its own
(a temporary prefix, the documented locations pointed at the server's port), then speaks the API
through nginx: health and stages, a learner, a job that is judged (a compile error needs no GPU),
its event stream opened with a one-use ticket and arriving as it is written (not buffered; a token
in the URL is refused), security headers passed on; byte ranges dropped (2,700 ranges and one range
both get the whole file); X-Forwarded-For believed, so the per-address sign-up limit (set to 2 here)
counts each client address (127.0.0.2 and 127.0.0.3 reach nginx on 127.0.0.1) and a client's own
X-Forwarded-For changes nothing; a 20 KB header refused (by nginx as one line, by cudojo as three)
with the server still answering; bodies over the limit refused by nginx with a JSON error, and a
JSON 503 once cudojo is down. (ctest api.via_nginx runs the whole API suite through the same
configuration.) Exit 77 (a skip) when nginx is not installed. Standard library only.
"""
import http.client
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

from proxy import NGINX, ROOT, call, check, start_nginx, start_server, stop


def sign_up(port, name, source, headers=None):
    response, body = call(port, "POST", "/api/learners", {"name": name}, source=source, headers=headers)
    return response.status


def read_event_stream(stream, started, seconds=60):
    """The stream's text up to the result event's data line (or its end, or `seconds`)."""
    text = ""
    while time.monotonic() - started < seconds:
        after = text.split("event: result", 1)[1] if "event: result" in text else ""
        if "data:" in after and after.split("data:", 1)[1].count("\n") >= 1:
            break
        line = stream.readline()
        if not line:
            break
        text += line.decode()
    return text


def main():
    if not os.path.exists(NGINX):
        print("SKIP: nginx is not installed (scripts/setup.sh installs it)")
        return 77
    binary = sys.argv[1]
    folder = pathlib.Path(tempfile.mkdtemp(prefix="cudojo-nginx-"))
    server = nginx = None
    try:
        # As docs/deploy/cudojo.service runs it (--trusted-proxy: nginx's X-Forwarded-For is believed),
        # with room for two sign-ups an hour per address, so that limit is seen per client below.
        server, server_port = start_server(binary, folder / "data", "--workers", "1", "--trusted-proxy", "127.0.0.1",
                                           "--limit", "max_new_learners_per_address_per_hour=2")
        nginx, proxy_port = start_nginx(folder / "nginx", server_port)

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
        # The stream, as the page opens it: a one-use ticket asked for with the token in the header.
        response, body = call(proxy_port, "POST", f"/api/jobs/{job}/ticket", {}, token)
        ticket = json.loads(body) if response.status == 201 else {}
        check(response.status == 201 and ticket.get("events", "").startswith(f"/api/jobs/{job}/events?ticket="),
              "a stream ticket is issued through nginx" + ("" if response.status == 201 else f": {response.status} {body[:200]!r}"))
        check(token not in ticket["events"], "the ticket's events path does not hold the token")
        connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=60)
        started = time.monotonic()
        connection.request("GET", ticket["events"])
        stream = connection.getresponse()
        first = stream.readline()
        first_ms = (time.monotonic() - started) * 1000
        check(stream.status == 200 and stream.getheader("Content-Type", "").startswith("text/event-stream") and first,
              "the event stream opens through nginx with the ticket")
        check(first_ms < 2000, f"its first line arrives unbuffered ({first_ms:.0f} ms)")
        text = first.decode() + read_event_stream(stream, started)
        ended = "event: result" in text and "compile_error" in text
        check(ended, "the stream ends with the verdict" + ("" if ended else ":\n" + text[-600:]))
        connection.close()
        response, body = call(proxy_port, "GET", ticket["events"])
        check(response.status == 401, f"the ticket opens one stream only (again: {response.status})")
        # Scripts send the token as a header, on the events location too; never in the URL.
        connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=30)
        connection.request("GET", f"/api/jobs/{job}/events", headers={"Authorization": f"Bearer {token}"})
        stream = connection.getresponse()
        text = read_event_stream(stream, time.monotonic(), 20)
        check(stream.status == 200 and "event: result" in text, "a stream opened with the Authorization header ends with the verdict")
        connection.close()
        response, body = call(proxy_port, "GET", f"/api/jobs/{job}/events?token={token}")
        check(response.status == 400 and "error" in json.loads(body), f"a token in the URL is refused ({response.status})")

        # Byte ranges are dropped on the way in: 2,700 ranges (one 8 KB header line, under nginx's
        # 8k buffer) and a single range both get the whole file, once.
        size = (ROOT / "web" / "node_modules" / "katex" / "dist" / "katex.min.js").stat().st_size
        for label, ranges in (("2,700 ranges", ",".join(["0-"] * 2700)), ("one range", "0-99")):
            response, body = call(proxy_port, "GET", "/vendor/katex/katex.min.js", headers={"Range": f"bytes={ranges}"})
            check(response.status == 200 and len(body) == size and response.getheader("Content-Range") is None,
                  f"{label}: the whole file through nginx ({response.status}, {len(body)} bytes of {size})")

        # X-Forwarded-For is believed: each client address has its own two sign-ups an hour.
        statuses = [sign_up(proxy_port, f"from-2-{n}", "127.0.0.2") for n in range(3)]
        check(statuses == [201, 201, 429], f"from 127.0.0.2: two sign-ups, then 429 ({statuses})")
        status = sign_up(proxy_port, "from-3", "127.0.0.3")
        check(status == 201, f"from 127.0.0.3 a sign-up still succeeds ({status})")
        status = sign_up(proxy_port, "posing", "127.0.0.2", headers={"X-Forwarded-For": "203.0.113.9"})
        check(status == 429, f"a client's own X-Forwarded-For is not believed: 127.0.0.2 is still counted ({status})")

        # A 20 KB header: as one line nginx refuses it (over its 8k buffer); as three lines of 6.8 KB it
        # passes nginx and cudojo refuses it (over 16 KiB). Either way the server keeps answering.
        for label, fields in (("one line", {"X-Filler": "a" * 20_000}),
                              ("three lines", {f"X-Filler-{n}": "a" * 6_800 for n in range(3)})):
            response, body = call(proxy_port, "GET", "/api/health", headers=fields)
            kind = "JSON" if response.getheader("Content-Type", "").startswith("application/json") else \
                response.getheader("Content-Type", "no type")
            by = "cudojo" if response.getheader("X-Content-Type-Options") == "nosniff" and kind == "JSON" else "nginx"
            check(response.status in (400, 431, 494), f"a 20 KB header as {label} is refused: {response.status} {kind} from {by}")
            response, body = call(proxy_port, "GET", "/api/health")
            check(response.status == 200, "... and the server keeps answering")

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
        stop(nginx, server)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
