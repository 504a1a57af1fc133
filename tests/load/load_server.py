"""The server under test of tests/load/hostile_load.py: Server (`cudojo serve` on a data folder
of its own, or --server-command's program, its memory watched and a runaway killed), starting one
for an attack (start_server), and whether one still answers (answers_health). Standard library
only."""
import http.client
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from load_limits import GOOD_ADDRESS, KILL_ABOVE_MIB
from load_sockets import api, readable


# ================================================================================================
# The server under test
# ================================================================================================

class Server:
    """A server under test: `cudojo serve` on a data folder of its own, or --server-command's
    program; its port is read from the line it prints once it listens. A thread watches its memory
    every 20 ms and kills it past KILL_ABOVE_MIB."""

    def __init__(self, command, data_dir=None):
        self.data_dir = data_dir
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=self.log)
        self.peak_kib = 0
        self.killed_at_mib = None
        line = self._first_line(timeout=30)
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"the server printed no address (got {line!r}); its log ends: {tail}")
        self.port = int(found.group(1))
        threading.Thread(target=self._drain_stdout, daemon=True).start()
        self._watching = True
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _first_line(self, timeout):
        end, line = time.monotonic() + timeout, b""
        while b"\n" not in line and time.monotonic() < end:
            if not readable(self.process.stdout, end - time.monotonic()):
                break
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
        return line.decode(errors="replace").split("\n")[0]

    def _drain_stdout(self):
        try:
            while os.read(self.process.stdout.fileno(), 65536):
                pass
        except OSError:
            pass

    def _status_kib(self):
        """VmHWM and VmRSS in KiB, or None once the process is gone."""
        values = {}
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith(("VmHWM:", "VmRSS:")):
                        values[line.split(":")[0]] = int(line.split()[1])
        except OSError:
            return None
        return values.get("VmHWM", 0), values.get("VmRSS", 0)

    def _watch(self):
        while self._watching and self.process.poll() is None:
            found = self._status_kib()
            if found:
                self.peak_kib = max(self.peak_kib, *found)
                if found[1] > KILL_ABOVE_MIB * 1024:
                    self.killed_at_mib = found[1] / 1024
                    self.process.kill()
                    return
            time.sleep(0.02)

    def alive(self):
        return self.process.poll() is None

    def peak_mib(self):
        found = self._status_kib() if self.alive() else None
        if found:
            self.peak_kib = max(self.peak_kib, found[0])
        return self.peak_kib / 1024

    def log_tail(self, lines=3):
        self.log.seek(0)
        return " | ".join(self.log.read().decode(errors="replace").strip().splitlines()[-lines:])

    def stop(self):
        self._watching = False
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.log.close()
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


# ================================================================================================
# Starting a server for an attack, and whether it answers
# ================================================================================================

def start_server(args, attack):
    if args.server_command:
        return Server(shlex.split(args.server_command.replace("{port}", "0")))
    folder = tempfile.mkdtemp(prefix="cudojo-load-")
    command = [args.binary, "serve", "--port", "0", "--workers", "0", "--data-dir", folder]
    if not args.old:
        for limit in list(attack.limits) + (args.server_limit or []):
            command += ["--limit", limit]
    try:
        return Server(command, folder)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def answers_health(port, timeout=5):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if api(port, "GET", "/api/health", source_address=GOOD_ADDRESS, timeout=2)[0] == 200:
                return True
        except (OSError, http.client.HTTPException):
            time.sleep(0.2)
    return False
