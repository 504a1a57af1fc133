"""The attacks of tests/load/hostile_load.py that need no API of cudojo's, so they also run
against --server-command's program: none (the baseline), a chunked 300 MB body, 500 idle keep-alive
connections, bursts of 200 connections, 1,000 slow and 10,000 silent connections, 1,000 multi-range
requests, 100,000-header requests and 2,000 connections from one address (the per-address cap).
Each is a function of a Run and an Outcome (hostile_load.py), listed in hostile_load.py's ATTACKS.
Standard library only."""
import http.client
import socket
import time

from load_good_client import median, tally
from load_limits import CONNECTIONS_PER_ADDRESS_CAP, HEADER_DEADLINE_S, KATEX, ROUND_LIMIT_S
from load_sockets import Loop, Peer, get_request, readable, source


# ================================================================================================
# Attacks: each takes a Run and fills an Outcome; each is bounded by run.seconds (or says why not)
# ================================================================================================

def baseline(run, outcome):
    # No attack: what the good client sees of an idle server.
    time.sleep(run.seconds)


def chunked_body(run, outcome):
    # A chunked POST body with no end in sight (300 MB, 64 KiB chunks), again and again: the server
    # should refuse it (413) or close once it passes max_request_bytes (256 KiB), never store it.
    end, chunk, attempts = time.monotonic() + run.seconds, b"x" * 65536, []
    while time.monotonic() < end:
        sent, status = 0, None
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(2)
        try:
            sock.bind(("127.0.8.2", 0))
            sock.connect(("127.0.0.1", run.port))
            sock.sendall(b"POST /api/learners HTTP/1.1\r\nHost: load\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
            while sent < 300 * 1024 * 1024 and time.monotonic() < end:
                if readable(sock, 0):
                    break   # the server answered (or closed) while we sent
                sock.sendall(b"10000\r\n" + chunk + b"\r\n")
                sent += len(chunk)
            sock.settimeout(1)
            head = sock.recv(4096)
            status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else None
        except (OSError, ValueError, IndexError):
            pass   # refused and closed: what should happen
        finally:
            sock.close()
        attempts.append((sent, status))
        if not run.server.alive():
            break
    largest = max((sent for sent, _ in attempts), default=0)
    whole = sum(1 for sent, _ in attempts if sent >= 300 * 1024 * 1024)
    outcome.note(f"{len(attempts)} bodies: {tally([s for _, s in attempts])}; at most "
                 f"{largest / 1048576:.1f} MiB sent before the server stopped it")
    outcome.expect(whole == 0, f"{whole} bodies of 300 MB were taken whole")
    outcome.numbers.update(bodies=len(attempts), largest_sent_bytes=largest)


def idle_keep_alive(run, outcome):
    # 500 connections (2 addresses) that each ask once for /api/health and then hold the
    # connection open saying nothing: each should cost the server memory, not a thread, so others
    # are still answered; the server may close them after its header deadline (10 s).
    loop = Loop(run.port)
    count = run.scaled(500, outcome)
    peers = [Peer(loop, source(8, i, first=3), get_request("/api/health")) for i in range(count)]
    loop.run(time.monotonic() + run.seconds)
    answered = sum(1 for p in peers if p.answer.status == 200)
    closed = [p.closed_at - (p.answer.head_at or p.started) for p in peers if p.by_server]
    loop.close_all()
    outcome.note(f"{answered}/{count} answered 200, then held; closed by the server while idle: {len(closed)}"
                 + (f" (median {median(closed):.1f} s after the answer)" if closed else ""))
    outcome.expect(answered == count, f"only {answered} of {count} were answered 200")
    outcome.numbers.update(answered=answered, closed_by_server=len(closed))


def connection_burst(run, outcome):
    # 200 connections at once, each asking for /api/health, over and over: the server should answer
    # them all without the good client waiting behind them.
    loop, statuses, slowest, rounds = Loop(run.port), [], 0.0, 0
    end = time.monotonic() + run.seconds
    while time.monotonic() < end and run.server.alive():
        started = time.monotonic()
        peers = [Peer(loop, "127.0.8.5", get_request("/api/health", close=True)) for _ in range(200)]
        loop.wait_all(peers, ROUND_LIMIT_S)
        statuses += [p.answer.status if p.answer.complete else None for p in peers]
        slowest = max(slowest, time.monotonic() - started)
        loop.close_all()
        rounds += 1
    outcome.note(f"{rounds} bursts: {tally(statuses)}; slowest burst {slowest * 1000:.0f} ms")
    outcome.expect(all(status == 200 for status in statuses), "some burst requests were not answered 200")
    outcome.numbers.update(bursts=rounds, slowest_burst_ms=slowest * 1000)


def slow_connections(run, outcome):
    # 1,000 connections (4 addresses x 250) that each send a request line and then one header line
    # every 4.5 s, never ending the header; held for 15 s (past the 10 s header deadline) and
    # reopened when closed. The server's whole-request deadline should cut each at 10 s after it
    # opened, however it trickles, and keep answering everyone else.
    hold = max(run.seconds, 1.5 * HEADER_DEADLINE_S)
    count = run.scaled(1000, outcome)
    loop, cut_ages, reopened = Loop(run.port), [], 0
    end = time.monotonic() + hold

    def open_one(index, first=False):
        peer = Peer(loop, source(1, index), b"GET /api/health HTTP/1.1\r\n", on_close=closed)
        peer.index, peer.lines, peer.first = index, 0, first
        return peer

    def closed(peer):
        nonlocal reopened
        if peer.connected_at is None:
            return   # never connected (a refused or full server): not reopened, or it would spin
        if peer.first:
            cut_ages.append(peer.closed_at - peer.connected_at)
        if time.monotonic() < end - 1 and run.server.alive():
            reopened += 1
            open_one(peer.index)

    def trickle(now):
        for peer in list(loop.peers):
            if peer.connected_at is not None and now >= peer.connected_at + 4.5 * (peer.lines + 1):
                peer.lines += 1
                peer.send(b"X-Slow-%d: 1\r\n" % peer.lines)

    first = [open_one(i, first=True) for i in range(count)]
    loop.run(end, trickle, every=0.1)
    connected = sum(1 for p in first if p.connected_at is not None)
    answers = [p.answer.status for p in first if p.by_server and p.answer.status]
    loop.close_all()
    ages = f" at median {median(cut_ages):.1f} s ({min(cut_ages):.1f}-{max(cut_ages):.1f} s)" if cut_ages else ""
    outcome.note(f"held {hold:.0f} s: {connected}/{count} connected, {len(cut_ages)} cut{ages}"
                 + (f", answered {tally(answers)} first" if answers else "") + f", {reopened} reopened")
    if outcome.expect(len(cut_ages) >= 0.9 * count, f"only {len(cut_ages)} of {count} cut by the header deadline"):
        outcome.expect(9.0 <= median(cut_ages) <= 11.5, f"cut at median {median(cut_ages):.1f} s, not ~10 s")
    outcome.numbers.update(connected=connected, cut=len(cut_ages), reopened=reopened,
                           cut_age_s_median=median(cut_ages) if cut_ages else None)


def silent_connections(run, outcome):
    # 10,000 connections (40 addresses x 250) that connect and send nothing, held for the attack's
    # length and reopened when closed. The server should hold them all (max_connections 16,384) at a
    # few KiB each and keep answering the good client; its header deadline closes each at 10 s.
    count = run.scaled(10000, outcome)
    loop, cut_ages, reopened, all_connected_s = Loop(run.port), [], 0, None
    end = time.monotonic() + run.seconds

    def closed(peer):
        nonlocal reopened
        if peer.connected_at is not None:
            cut_ages.append(peer.closed_at - peer.connected_at)
            if time.monotonic() < end - 1 and run.server.alive():
                reopened += 1
                Peer(loop, peer.source, on_close=closed)

    started = time.monotonic()
    peers = [Peer(loop, source(2, i), on_close=closed) for i in range(count)]

    def watch(now):
        nonlocal all_connected_s
        if all_connected_s is None and all(p.connected_at is not None for p in peers):
            all_connected_s = now - started

    loop.run(end, watch, every=0.1)
    connected = sum(1 for p in peers if p.connected_at is not None)
    held = sum(1 for p in loop.peers if p.connected_at is not None)
    loop.close_all()
    when = f" in {all_connected_s:.1f} s" if all_connected_s is not None else ""
    ages = f" (median age {median(cut_ages):.1f} s)" if cut_ages else ""
    outcome.note(f"{connected}/{count} connected{when}, {held} held at the end; cut {len(cut_ages)}{ages}, "
                 f"reopened {reopened}")
    outcome.expect(connected == count, f"only {connected} of {count} silent connections got through")
    outcome.numbers.update(connected=connected, held_at_end=held, cut=len(cut_ages))


def multi_range_requests(run, outcome):
    # 1,000 connections at once (4 addresses x 250), each GET /vendor/katex/katex.min.js with
    # `Range: bytes=0-,0-,...` (2,700 copies of `0-`, 8 KB), every answer read whole; again and
    # again. The server should answer each 200 with the whole file once, never a multipart answer
    # (which the old build builds in memory, ~1.7 GB a request).
    status, size = None, 0
    try:
        connection = http.client.HTTPConnection("127.0.0.1", run.port, timeout=5)
        connection.request("GET", KATEX)
        response = connection.getresponse()
        status, size = response.status, len(response.read())
        connection.close()
    except (OSError, http.client.HTTPException):
        pass
    if status != 200:
        outcome.expect(False, f"GET {KATEX} answered {status}")
        return
    count = run.scaled(1000, outcome)
    request = (f"GET {KATEX} HTTP/1.1\r\nHost: load\r\nConnection: close\r\n"
               f"Range: bytes={','.join(['0-'] * 2700)}\r\n\r\n").encode()
    loop, answers, rounds, slowest = Loop(run.port), [], 0, 0.0
    end = time.monotonic() + run.seconds
    while time.monotonic() < end and run.server.alive():
        started = time.monotonic()
        peers = [Peer(loop, source(4, i), request, max_body=2 * size) for i in range(count)]
        loop.wait_all(peers, ROUND_LIMIT_S)   # a round started before the end is read to its end
        for p in peers:
            a = p.answer
            if a.oversize:
                answers.append("larger than the file")
            elif not a.complete:
                answers.append("no whole answer")
            elif "multipart" in a.headers.get("content-type", ""):
                answers.append(f"{a.status} multipart")
            else:
                answers.append(f"{a.status} of {a.body_bytes} bytes")
        slowest = max(slowest, time.monotonic() - started)
        loop.close_all()
        rounds += 1
    good = answers.count(f"200 of {size} bytes")
    outcome.note(f"{rounds} rounds of {count}: {good}/{len(answers)} answered 200 of {size} bytes"
                 + ("" if good == len(answers) else f" ({tally(answers)})") + f"; slowest round {slowest:.1f} s")
    outcome.expect(good == len(answers) and answers, "not every multi-range request got 200 with the whole file")
    outcome.numbers.update(rounds=rounds, answers=len(answers), whole_200=good, file_bytes=size)


def huge_headers(run, outcome):
    # Requests with 100,000 header lines (about 2 MB) each, 8 connections at a time, sent while the
    # answer is read: the server should answer 431 as soon as the header passes max_header_fields
    # (100) or max_header_bytes (16 KiB) and close, without reading or keeping the rest.
    request = (b"GET /api/health HTTP/1.1\r\nHost: load\r\n"
               + b"".join(b"X-Load-%d: %d\r\n" % (i, i) for i in range(100000)) + b"\r\n")
    loop, results = Loop(run.port), []
    end = time.monotonic() + run.seconds

    def done(peer):
        first = (peer.first_byte_at - peer.connected_at) * 1000 if peer.first_byte_at and peer.connected_at else None
        results.append((peer.answer.status, first, peer.sent))
        peer.close()
        if time.monotonic() < end and run.server.alive():
            Peer(loop, "127.0.5.1", request, on_done=done)

    for _ in range(8):
        Peer(loop, "127.0.5.1", request, on_done=done)
    loop.run(end)
    loop.wait(lambda: not loop.peers, ROUND_LIMIT_S)   # those in flight at the end, to their answer
    loop.close_all()
    statuses = [status for status, _, _ in results]
    times = [first for _, first, _ in results if first is not None]
    sent = [count for status, _, count in results if status]
    outcome.note(f"{len(results)} requests: {tally(statuses)}"
                 + (f"; answered after median {median(times):.1f} ms (max {max(times):.1f} ms), "
                    f"{median(sent) / 1024:.0f} KiB sent by then" if times and sent else ""))
    outcome.expect(results and all(status == 431 for status in statuses), "not every 100,000-header request got 431")
    outcome.numbers.update(requests=len(results), answered_431=statuses.count(431),
                           answer_ms_median=median(times) if times else None)


def one_address_over_cap(run, outcome):
    # 2,000 connections from one address (127.0.7.1) that send nothing: the server should hold 512
    # (max_connections_per_address), accept and close the rest at once, and answer the 512 when
    # they ask; the good client, from another address, should not notice.
    count = run.scaled(2000, outcome)
    loop = Loop(run.port)
    end = time.monotonic() + run.seconds
    peers = [Peer(loop, "127.0.7.1") for _ in range(count)]
    loop.wait(lambda: all(p.connected_at is not None or not p.open for p in peers), 3)
    loop.run(time.monotonic() + 1)   # the server closes what is over the cap
    connected = sum(1 for p in peers if p.connected_at is not None)
    held = [p for p in peers if p.open and p.connected_at is not None]
    for p in held:
        p.send(get_request("/api/health"))
    loop.wait_all(held, 3)
    answered = sum(1 for p in held if p.answer.status == 200)
    loop.run(end)
    loop.close_all()
    outcome.note(f"{connected}/{count} connected, {len(held)} held, {connected - len(held)} closed at once; "
                 f"{answered}/{len(held)} held answered 200")
    outcome.expect(len(held) == min(count, CONNECTIONS_PER_ADDRESS_CAP),
                   f"{len(held)} held from one address, not {CONNECTIONS_PER_ADDRESS_CAP}")
    outcome.expect(answered == len(held), f"only {answered} of the {len(held)} held were answered 200")
    outcome.numbers.update(connected=connected, held=len(held), held_answered=answered)
