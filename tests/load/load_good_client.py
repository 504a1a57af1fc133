"""The good client of tests/load/hostile_load.py, which measures while an attack runs: a process
of its own (good_client_process) that opens a new connection every GOOD_INTERVAL_S from
GOOD_ADDRESS and times each answer, its handle in the test (GoodClient), and the statistics of its
latencies and of the attacks' answers (percentile, median, tally). Standard library only."""
import collections
import http.client
import multiprocessing
import time

from load_limits import GOOD_ADDRESS, GOOD_INTERVAL_S, GOOD_PATHS, GOOD_TIMEOUT_S


# ================================================================================================
# The good client (a process of its own, so the attackers' Python work cannot delay it)
# ================================================================================================

def good_client_process(pipe):
    """Waits for ("measure", port); asks every GOOD_INTERVAL_S until ("stop",), then sends back
    (latencies_ms, start offsets in s, failures). ("quit",) ends it."""
    while True:
        command = pipe.recv()
        if command[0] == "quit":
            return
        port, latencies, offsets, failures = command[1], [], [], []
        began = next_start = time.monotonic()
        while not pipe.poll(max(0.0, next_start - time.monotonic())):
            started = time.monotonic()
            path = GOOD_PATHS[len(latencies) % 2]
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=GOOD_TIMEOUT_S,
                                                    source_address=(GOOD_ADDRESS, 0))
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    failures.append(f"{response.status}")
            except (OSError, http.client.HTTPException) as error:
                failures.append(type(error).__name__)
            finally:
                connection.close()
            latencies.append((time.monotonic() - started) * 1000)
            offsets.append(started - began)
            next_start = started + GOOD_INTERVAL_S
        pipe.recv()
        pipe.send((latencies, offsets, failures))


class GoodClient:
    def __init__(self):
        context = multiprocessing.get_context("spawn")
        self.pipe, child = context.Pipe()
        self.process = context.Process(target=good_client_process, args=(child,), daemon=True)
        self.process.start()

    def start(self, port):
        self.pipe.send(("measure", port))

    def stop(self):
        self.pipe.send(("stop",))
        if self.pipe.poll(GOOD_TIMEOUT_S * 4 + 5):
            return self.pipe.recv()
        return [], [], ["the good client did not report"]

    def close(self):
        try:
            self.pipe.send(("quit",))
        except OSError:
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.terminate()


# ================================================================================================
# Statistics
# ================================================================================================

def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def median(values):
    return percentile(values, 0.5)


def tally(values):
    """'200 x 998, 429 x 2' from a list of statuses (None reads 'no answer')."""
    counts = collections.Counter("no answer" if value is None else value for value in values)
    return ", ".join(f"{value} x {count}" for value, count in counts.most_common()) or "none"
