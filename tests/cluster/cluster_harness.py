"""What the cluster tests (multi_node.py, partition.py, rejudge.py) share: `cudojo serve` nodes on
a private PostgreSQL cluster, learners submitting jobs to the web node over HTTP, and the checks and
waits around them. Each test keeps its scenario (what it breaks, when, and what it then expects);
this module keeps the machinery, so that a change to how a node is started, how a job is submitted
or how the database is read is made once and holds for every test.

The tests run as scripts (`python3 tests/cluster/X.py`), so Python puts this folder first on
sys.path and `import cluster_harness` finds this file; nothing needs installing. Standard library
only: the database is read with psql, the API with http.client.
"""
import argparse
import collections
import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SCRIPT = REPO / "tests" / "postgres" / "cluster.sh"
STAGE = "reduction/1"
# Verdicts a machine without a GPU gives: the source's compile fails, or it compiles and then
# finds no GPU. Anything else means the job was judged wrongly or not at all.
EXPECTED_VERDICT = {"broken": "compile_error", "good": "no_device"}
RETRY_SLEEP_S = 0.3
STALL_SECONDS = 90  # no job finished for this long, with jobs left: the nodes have stopped judging

RECORDED_LINE = re.compile(r"^cudojo serve: job (\d+) recorded: (\S+)")
REFUSED_LINE = re.compile(r"^cudojo serve: job (\d+): result not recorded, node (\S+) no longer holds it")

started_at = time.monotonic()


def log(message):
    print(f"[{time.monotonic() - started_at:6.1f} s] {message}", flush=True)


def first(items, count=5):
    items = list(items)
    return ", ".join(map(str, items[:count])) + (f" and {len(items) - count} more" if len(items) > count else "")


def wait_for(condition, timeout, interval=0.1):
    """Calls condition() until it is true or timeout seconds passed; returns the last result."""
    give_up_at = time.monotonic() + timeout
    while True:
        result = condition()
        if result or time.monotonic() > give_up_at:
            return result
        time.sleep(interval)


def argument_parser(description, jobs, clients):
    """The options every cluster test takes, in the order its --help lists them; the test adds its
    own after these."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cudojo", required=True, help="the cudojo binary (build/cudojo)")
    parser.add_argument("--work", required=True, help="folder for logs and the database cluster")
    parser.add_argument("--jobs", type=int, default=jobs)
    parser.add_argument("--clients", type=int, default=clients, help="client threads, one learner each")
    return parser


def starter_sources(binary, stage=STAGE):
    """(good, broken): the stage's starter, which compiles, and a copy with a syntax error."""
    good_source = subprocess.run([binary, "starter", stage], capture_output=True, text=True,
                                 check=True).stdout
    return good_source, good_source + "\nthis line is not C++ {\n"


# ---------------------------------------------------------------------------------------------
# The database: the cluster script, and psql
# ---------------------------------------------------------------------------------------------

def cluster(command, folder, environment=None):
    """tests/postgres/cluster.sh COMMAND FOLDER, with `environment` added to ours; its stdout."""
    done = subprocess.run([str(CLUSTER_SCRIPT), command, str(folder)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **(environment or {})))
    if done.returncode != 0:
        raise RuntimeError(f"cluster.sh {command} failed:\n{done.stderr}")
    return done.stdout.strip()


def stop_cluster(work):
    """The last step of a run, whatever happened before it: a failure here is logged, not raised,
    so that the checks made so far are still printed."""
    try:
        cluster("stop", work / "pg")
    except Exception as error:
        log(f"could not stop the database cluster: {error}")


class Database:
    """psql against the test cluster. A query that fails (the database is restarting) is asked
    again for a while before it counts as an error."""

    def __init__(self, url):
        self.url = url
        self.environment = dict(os.environ, PGCONNECT_TIMEOUT="5")

    def query(self, sql, retry_seconds=30):
        give_up_at = time.monotonic() + retry_seconds
        while True:
            try:
                done = subprocess.run(["psql", self.url, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                      capture_output=True, text=True, timeout=30, env=self.environment)
                if done.returncode == 0:
                    return done.stdout.strip()
                problem = done.stderr.strip()
            except subprocess.TimeoutExpired:
                problem = "psql took over 30 s"
            if time.monotonic() > give_up_at:
                raise RuntimeError(f"psql failed: {problem}\n  query: {sql}")
            time.sleep(0.5)

    def integer(self, sql):
        return int(self.query(sql) or 0)

    def real(self, sql):
        text = self.query(sql)
        return float(text) if text else None

    def ids(self, sql):
        return [int(line) for line in self.query(sql).splitlines() if line]

    def jobs(self):
        # One JSON array, so reports (which hold newlines) survive the trip through psql.
        text = self.query(
            "select coalesce(json_agg(json_build_object('id', id, 'state', state, 'verdict', verdict, "
            "'attempts', attempts, 'holder', holder, 'started_at', started_at, 'finished_at', finished_at, "
            "'report', report) order by id), '[]') from jobs")
        jobs = {}
        for job in json.loads(text):
            # A report kept as text arrives as a string holding JSON; as jsonb, as an object.
            if isinstance(job["report"], str):
                try:
                    job["report"] = json.loads(job["report"])
                except ValueError:
                    pass
            jobs[job["id"]] = job
        return jobs


def judged_by_node(job):
    report = job.get("report")
    if isinstance(report, dict) and isinstance(report.get("judged_by"), dict):
        return report["judged_by"].get("node")
    return None


def wait_until_done(database, job_ids, timeout, interval):
    """Waits until every one of job_ids is done, timeout seconds pass, or none has finished for
    STALL_SECONDS (then none will); returns every job in the database, as Database.jobs."""
    ids_text = ",".join(map(str, job_ids)) or "0"
    not_done_sql = f"select count(*) from jobs where id in ({ids_text}) and state <> 'done'"
    give_up_at = time.monotonic() + timeout
    last_count, last_progress = None, time.monotonic()
    while True:
        count = database.integer(not_done_sql)
        if count != last_count:
            last_count, last_progress = count, time.monotonic()
        if count == 0 or time.monotonic() > give_up_at or time.monotonic() - last_progress > STALL_SECONDS:
            break
        time.sleep(interval)
    jobs = database.jobs()
    log(f"{'every accepted job is done' if count == 0 else f'gave up waiting with {count} not done'}; "
        f"{len(jobs)} jobs in the database")
    return jobs


# ---------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------

class Node:
    """One `cudojo serve` process. Its stdout is copied line by line into LABEL.out and kept in
    memory: the first line says where it listens, later ones which jobs it recorded. Its stderr
    goes to LABEL.err. Started in a session of its own, so the test's Ctrl+C does not reach it and
    its process group can be ended as one at the end. `launcher` goes before the command (a test
    that puts the node in a network namespace passes `ip netns exec NAMESPACE`)."""

    def __init__(self, label, binary, url, work, arguments, launcher=()):
        self.label = label
        self.lines = []
        self.banner = None
        self.port = None
        self.requeued = None
        self.out_path = work / f"{label}.out"
        self.err_path = work / f"{label}.err"
        # Each node its own data folder: should the server still keep anything on disk beside the
        # database (a lock file), three nodes must not share it.
        environment = dict(os.environ, CUDOJO_DATA=str(work / f"{label}-data"))
        command = [*launcher, binary, "serve", "--store", url, *arguments]
        log(f"start {label}: {' '.join(command)}")
        with open(self.err_path, "w") as err:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True,
                                            env=environment, start_new_session=True)
        self.pid = self.process.pid
        self.first_line = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        with open(self.out_path, "w") as out:
            for line in self.process.stdout:
                out.write(line)
                out.flush()
                self.lines.append(line.rstrip("\n"))
                self.first_line.set()
        self.first_line.set()

    def wait_started(self, timeout=60):
        """Waits for the first line; returns it, and keeps the port and the requeued count it names."""
        self.first_line.wait(timeout)
        if not self.lines or not self.lines[0].startswith("cudojo serve: "):
            self.stop()
            raise RuntimeError(f"{self.label} did not start: first line {self.lines[:1]}; "
                               f"stderr ({self.err_path}):\n{self.err_path.read_text()[-2000:]}")
        self.banner = self.lines[0]
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", self.banner)
        self.port = int(port.group(1)) if port else None
        requeued = re.search(r"requeued (\d+)", self.banner)
        self.requeued = int(requeued.group(1)) if requeued else None
        log(f"{self.label}: {self.banner}")
        return self.banner

    def recorded(self):
        """(job id, verdict) for every `job ID recorded` line so far."""
        return [(int(m.group(1)), m.group(2)) for m in map(RECORDED_LINE.match, list(self.lines)) if m]

    def refused(self):
        return [int(m.group(1)) for m in map(REFUSED_LINE.match, list(self.lines)) if m]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                log(f"{self.label} did not stop within 15 s of SIGTERM; killing it")
                self.process.kill()
                self.process.wait()
        # Anything left in the node's process group (a worker that outlived it).
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.reader.join(timeout=5)


def count_records(nodes, labels):
    """(records, recorded_by): how many `job ID recorded` lines each job has in the logs of the
    nodes named in labels (those that ran), and which nodes wrote them. Read once the nodes have
    stopped, so that no line is still on its way."""
    records = collections.Counter()
    recorded_by = collections.defaultdict(list)
    for label in labels:
        if label in nodes:
            for job_id, _ in nodes[label].recorded():
                records[job_id] += 1
                recorded_by[job_id].append(label)
    return records, recorded_by


# ---------------------------------------------------------------------------------------------
# HTTP clients: web is the web node's (address, port)
# ---------------------------------------------------------------------------------------------

def request(web, method, path, body=None, token=None, timeout=10, key=None):
    """(status, JSON body or None). Raises OSError when no answer came."""
    connection = http.client.HTTPConnection(*web, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if key:
        headers["Idempotency-Key"] = key
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        text = response.read()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        return response.status, parsed
    except http.client.HTTPException as error:
        raise OSError(str(error)) from error
    finally:
        connection.close()


def create_learner(web, name, deadline):
    # Retried like a submission: the database may be restarting when we ask.
    attempt = 0
    while time.monotonic() < deadline:
        attempt += 1
        try:
            status, body = request(web, "POST", "/api/learners", {"name": f"{name}-{attempt}"})
            if status == 201:
                return body["token"]
            if status not in (409, 429, 503):  # 409: an earlier try got through unanswered
                raise RuntimeError(f"POST /api/learners answered {status}: {body}")
        except OSError:
            pass
        time.sleep(RETRY_SLEEP_S)
    raise RuntimeError(f"could not create learner {name} before the deadline")


def job_shares(jobs, clients):
    """How many of the jobs each of the clients submits: as even as they divide."""
    return [jobs // clients + (index < jobs % clients) for index in range(clients)]


class Client(threading.Thread):
    """One learner submitting its share of the jobs one after another, as fast as the server lets
    it: a 429 (its 4 pending jobs, or the queue) or a 503 (the database) means wait a little and
    ask again, as does a dropped connection. Every 202 is kept: id, which kind of source; half the
    jobs are broken, which half set by parity.

    With idempotency_keys, every submission carries its own Idempotency-Key, so sending it again
    after a lost answer cannot queue it twice: the server then answers 200 with the job the first
    try queued, which is kept too and counted in `replayed`. Without, a 200 is unexpected."""

    def __init__(self, tag, web, token, count, broken_source, good_source, deadline, parity=0,
                 idempotency_keys=False, stage=STAGE):
        super().__init__(daemon=True)
        self.tag, self.web, self.token, self.count = tag, web, token, count
        self.broken_source, self.good_source, self.deadline = broken_source, good_source, deadline
        self.parity, self.idempotency_keys, self.stage = parity, idempotency_keys, stage
        self.accepted = []  # (id, kind)
        self.statuses = collections.Counter()  # every answer but 202, and "no answer"
        self.unexpected = []  # (status, body) of answers no retry will fix
        self.replayed = 0  # 200s: a submission sent again found the job its first try queued

    def run(self):
        for number in range(self.count):
            kind = "broken" if (self.parity + number) % 2 else "good"
            # Each source differs, so nothing upstream can answer a job from an earlier one.
            source = f"// client {self.tag} job {number}\n" + (
                self.broken_source if kind == "broken" else self.good_source)
            body = {"stage": self.stage, "source": source, "language": "cuda"}
            key = f"client-{self.tag}-job-{number}" if self.idempotency_keys else None
            while True:
                if time.monotonic() > self.deadline:
                    return
                try:
                    status, answer = request(self.web, "POST", "/api/jobs", body, self.token, key=key)
                except OSError:
                    self.statuses["no answer"] += 1
                    time.sleep(RETRY_SLEEP_S)
                    continue
                if (status == 202 or (key and status == 200)) and isinstance(answer, dict) and "id" in answer:
                    self.accepted.append((answer["id"], kind))
                    self.replayed += status == 200
                    break
                self.statuses[status] += 1
                if status in (429, 503):
                    time.sleep(RETRY_SLEEP_S)
                    continue
                self.unexpected.append((status, answer))
                break


class HealthWatch(threading.Thread):
    """Asks W's /api/health every `interval` seconds and keeps what it heard, with when:
    (time.time(), "200 ok"), else the status or "no answer"; with details, also the body or the
    error, for a test that prints what went wrong rather than counts it."""

    def __init__(self, web, interval, details=False):
        super().__init__(daemon=True)
        self.web, self.interval, self.details = web, interval, details
        self.running, self.seen = True, []

    def run(self):
        while self.running:
            try:
                status, body = request(self.web, "GET", "/api/health", timeout=5)
                heard = ("200 ok" if status == 200 and body and body.get("ok")
                         else f"{status} {body}" if self.details else str(status))
            except OSError as error:
                heard = f"no answer ({error})" if self.details else "no answer"
            self.seen.append((time.time(), heard))
            time.sleep(self.interval)


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

class Checks:
    """Every check the run made, logged as it is made and printed as a table at the end."""

    def __init__(self):
        self.results = []  # (name, held, detail)

    def __call__(self, name, held, detail=""):
        self.results.append((name, bool(held), detail))
        log(f"{'ok  ' if held else 'FAIL'} {name}{': ' + detail if detail else ''}")

    def all_held(self):
        return all(held for _, held, _ in self.results)

    def exit_status(self, test):
        """Says, as the run's last line, whether the test passed; returns the exit status that says it."""
        passed = self.all_held()
        print(f"\n{test} test {'PASSED' if passed else 'FAILED'}")
        return 0 if passed else 1

    def print_table(self, width):
        """A line a check, ok or FAILED, between blank lines; width fits the test's longest name."""
        print()
        print(f"{'check':<{width}} result")
        for name, held, _ in self.results:
            print(f"{name:<{width}} {'ok' if held else 'FAILED'}")
        print()


def check_verdicts(checks, kinds, jobs):
    """Every accepted job (kinds: id to "broken" or "good") is in the database, done, with the
    verdict its source calls for."""
    missing = [job_id for job_id in kinds if job_id not in jobs]
    not_done = [job_id for job_id in kinds if job_id in jobs and jobs[job_id]["state"] != "done"]
    wrong = [f"{job_id} ({kinds[job_id]}: {jobs[job_id]['verdict']})" for job_id in kinds
             if job_id in jobs and jobs[job_id]["state"] == "done"
             and jobs[job_id]["verdict"] != EXPECTED_VERDICT[kinds[job_id]]]
    checks("every accepted id is in the database", not missing, first(missing))
    checks("every accepted job is done", not not_done,
           first(f"{i} ({jobs[i]['state']}, holder {jobs[i]['holder']})" for i in not_done))
    checks("each verdict matches its source (broken: compile_error, good: no_device)", not wrong, first(wrong))


# ---------------------------------------------------------------------------------------------
# The summary's rows both tests print: (name, value)
# ---------------------------------------------------------------------------------------------

def jobs_accepted_row(kinds, jobs, submitted):
    """How many of the `submitted` jobs were accepted, of which kinds, and how many rows the
    database holds (more than accepted: a submission queued whose answer was lost)."""
    return ("jobs accepted", f"{len(kinds)} of {submitted} "
            f"({sum(k == 'broken' for k in kinds.values())} broken, {sum(k == 'good' for k in kinds.values())} good); "
            f"{len(jobs)} rows in the database")


def client_retries_row(statuses):
    """Every answer the clients asked again after (statuses: Client.statuses summed), by status."""
    return ("client retries", ", ".join(f"{k} x{v}" for k, v in sorted(statuses.items(), key=str)) or "none")
