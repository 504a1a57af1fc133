#!/usr/bin/env python3
"""Hostile load against a real `cudojo serve` on loopback, while a well-behaved client measures.

    tests/load/hostile_load.py CUDOJO_BINARY [--seconds 3] [--p99-limit-ms 500]

Starts a server of its own (a temporary data folder, no judging workers), then runs each attack
of issue #13 for a few seconds while a good client asks for /api/health and /api/stages every
20 ms: dropped event streams, a chunked body of 300 MB, slow header lines, idle keep-alive
connections, a burst of 200 connections, and a flood of new learners. Prints one row per attack
(the good client's p50 and p99 latency, its failures, the server's peak memory) and exits 1 if any
good request failed or took past the limit, or the server's memory grew past 256 MiB. Bounded:
every socket has a timeout, and the server is stopped at the end whatever happened.
Standard library only.
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PEAK_MEMORY_LIMIT_KIB = 256 * 1024


class Server:
    def __init__(self, binary):
        self.folder = tempfile.mkdtemp(prefix="cudojo-load-")
        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--workers", "0", "--data-dir", self.folder],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        self.port = int(line.split("http://127.0.0.1:")[1].split("/")[0])

    def peak_memory_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def request(port, method, path, body=None, token=None, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class GoodClient(threading.Thread):
    """Asks every 20 ms and records how long each answer took (a failure counts as one)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.latencies_ms, self.failures, self.running = port, [], 0, True

    def run(self):
        paths = ["/api/health", "/api/stages"]
        while self.running:
            started = time.monotonic()
            try:
                status, _ = request(self.port, "GET", paths[len(self.latencies_ms) % 2], timeout=5)
                if status != 200:
                    self.failures += 1
            except OSError:
                self.failures += 1
            self.latencies_ms.append((time.monotonic() - started) * 1000)
            time.sleep(0.02)


def dropped_event_streams(port, seconds, job_path, token):
    # Open streams on a queued job and drop them without a word, over and over.
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sockets = []
        for _ in range(16):
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(f"GET {job_path}/events?token={token} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sockets.append(s)
        time.sleep(0.2)
        for s in sockets:
            s.close()


def chunked_body(port, seconds, *_):
    # A chunked body with no end in sight: the server must refuse it, not store it.
    end = time.monotonic() + seconds
    chunk = b"x" * 65536
    while time.monotonic() < end:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        try:
            s.sendall(b"POST /api/learners HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            sent = 0
            while sent < 300 * 1024 * 1024 and time.monotonic() < end:
                s.sendall(b"10000\r\n" + chunk + b"\r\n")
                sent += len(chunk)
        except OSError:
            pass  # refused and closed: what should happen
        finally:
            s.close()


def slow_headers(port, seconds, *_):
    # Connections that send one header line at a time, slowly.
    sockets = []
    for _ in range(16):
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /api/health HTTP/1.1\r\n")
        sockets.append(s)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for s in sockets:
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass
        time.sleep(0.5)
    for s in sockets:
        s.close()


def idle_keep_alive(port, seconds, *_):
    # Connections that ask once and then hold the connection open, saying nothing.
    sockets = []
    for _ in range(16):
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
        sockets.append(s)
    time.sleep(seconds)
    for s in sockets:
        s.close()


def connection_burst(port, seconds, *_):
    # 200 connections at once, each asking for health.
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        threads = [threading.Thread(target=lambda: _quiet(lambda: request(port, "GET", "/api/health", timeout=5)))
                   for _ in range(200)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def learner_flood(port, seconds, *_):
    # New learners as fast as one address can ask: refused after the hourly limit.
    end, made = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        _quiet(lambda: request(port, "POST", "/api/learners", {"name": f"flood{made}"}, timeout=5))
        made += 1


def _quiet(action):
    try:
        action()
    except OSError:
        pass


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--p99-limit-ms", type=float, default=500)
    args = parser.parse_args()

    server = Server(args.binary)
    failed = False
    try:
        status, body = request(server.port, "POST", "/api/learners", {"name": "loadtester"})
        token = json.loads(body)["token"]
        status, body = request(server.port, "POST", "/api/jobs", {"stage": "reduction/3", "source": "//"}, token)
        job_path = f"/api/jobs/{json.loads(body)['id']}"
        attacks = [("none (baseline)", lambda *a: time.sleep(args.seconds)),
                   ("dropped event streams", dropped_event_streams),
                   ("chunked 300 MB body", chunked_body),
                   ("slow header lines", slow_headers),
                   ("idle keep-alive", idle_keep_alive),
                   ("burst of 200 connections", connection_burst),
                   ("new-learner flood", learner_flood)]
        print(f"cudojo serve on 127.0.0.1:{server.port}; each attack {args.seconds:g} s; "
              f"good client: GET /api/health and /api/stages every 20 ms")
        print(f"{'attack':<26} {'requests':>8} {'failed':>6} {'p50 ms':>8} {'p99 ms':>8} {'peak MiB':>9}")
        for name, attack in attacks:
            good = GoodClient(server.port)
            good.start()
            attack(server.port, args.seconds, job_path, token)
            good.running = False
            good.join(timeout=10)
            p50 = statistics.median(good.latencies_ms) if good.latencies_ms else float("inf")
            p99 = percentile(good.latencies_ms, 0.99) if good.latencies_ms else float("inf")
            peak = server.peak_memory_kib()
            ok = good.failures == 0 and p99 <= args.p99_limit_ms and peak <= PEAK_MEMORY_LIMIT_KIB
            failed |= not ok
            print(f"{name:<26} {len(good.latencies_ms):>8} {good.failures:>6} {p50:>8.1f} {p99:>8.1f} "
                  f"{peak / 1024:>9.1f}  {'ok' if ok else 'OVER LIMIT'}")
            sys.stdout.flush()
        health = json.loads(request(server.port, "GET", "/api/health")[1])
        print(f"health after the attacks: {health}")
    finally:
        server.stop()
    print(f"limits: p99 <= {args.p99_limit_ms:g} ms, no failed good request, peak memory <= "
          f"{PEAK_MEMORY_LIMIT_KIB // 1024} MiB: {'held' if not failed else 'NOT held'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
