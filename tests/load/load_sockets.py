"""Sockets of tests/load/hostile_load.py: the loopback addresses attackers come from (source),
waiting on a descriptor (readable), one blocking request for setup (api), a request's bytes
(get_request, post_request), and many non-blocking connections driven by one `selectors` loop
(Peer, Loop), each reading its HTTP answer as the bytes arrive (Answer), an event stream's body
parsed into server-sent events (EventStream). Standard library only."""
import errno
import http.client
import json
import os
import select
import selectors
import socket
import time

from load_limits import PER_ADDRESS


# ================================================================================================
# Socket helpers: blocking requests for setup, and non-blocking peers in one selector loop
# ================================================================================================

def readable(fd, timeout):
    """Whether fd has something to read within timeout seconds (poll: descriptors may pass 1024)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(max(0, timeout) * 1000))


def source(block, index, per=PER_ADDRESS, first=1):
    """The loopback address attacker `index` of an attack uses: 127.0.<block>.<first + index // per>."""
    return f"127.0.{block}.{first + index // per}"


def api(port, method, path, body=None, token=None, source_address="127.0.0.1", timeout=5):
    """One request on a connection of its own: (status, the answer's JSON or None)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                            source_address=(source_address, 0))
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
        try:
            return response.status, json.loads(data)
        except ValueError:
            return response.status, None
    finally:
        connection.close()


def get_request(path, token=None, close=False):
    """A GET's bytes: the token, when given, in the Authorization header."""
    lines = [f"GET {path} HTTP/1.1", "Host: load"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def post_request(path, body):
    data = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: load\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


class Answer:
    """One HTTP answer read as its bytes arrive: the status and header, then the body framed by
    Content-Length, by chunked coding (the old build's event streams), or by the connection's end
    (the new build's). Body bytes are counted, the first 512 kept, and each piece handed to on_body
    when set. `oversize` is set once the body passes max_body."""

    def __init__(self, on_body=None, max_body=None):
        self.status = None
        self.headers = {}
        self.head_at = None
        self.body_bytes = 0
        self.body_start = b""
        self.complete = False
        self.oversize = False
        self.on_body, self.max_body = on_body, max_body
        self._buffer = bytearray()
        self._framing = "head"          # head, length, chunked, close
        self._remaining = 0             # bytes of the body (length) or of this chunk (chunked) to come
        self._chunk_crlf = False        # a chunk's data is done; its CRLF is next

    def feed(self, data):
        if self.complete:
            return
        if self._framing == "head":
            self._buffer += data
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self._read_head(bytes(self._buffer[:end]).decode("latin-1"))
            data, self._buffer = bytes(self._buffer[end + 4:]), bytearray()
        if self._framing == "length":
            take = data[:self._remaining]
            self._remaining -= len(take)
            self._body(take)
            self.complete = self._remaining == 0
        elif self._framing == "chunked":
            self._buffer += data
            self._read_chunks()
        elif self._framing == "close":
            self._body(data)

    def _read_head(self, head):
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.head_at = time.monotonic()
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            self._framing = "chunked"
        elif "content-length" in self.headers:
            self._framing, self._remaining = "length", int(self.headers["content-length"] or 0)
            self.complete = self._remaining == 0
        elif self.status in (204, 304):
            self.complete = True
        else:
            self._framing = "close"

    def _read_chunks(self):
        while True:
            if self._chunk_crlf:
                if len(self._buffer) < 2:
                    return
                del self._buffer[:2]
                self._chunk_crlf = False
            if self._remaining:
                take = bytes(self._buffer[:self._remaining])
                if not take:
                    return
                del self._buffer[:len(take)]
                self._remaining -= len(take)
                self._body(take)
                self._chunk_crlf = self._remaining == 0
                continue
            line_end = self._buffer.find(b"\r\n")
            if line_end < 0:
                return
            size = int(bytes(self._buffer[:line_end]).split(b";")[0] or b"0", 16)
            del self._buffer[:line_end + 2]
            if size == 0:
                self.complete = True
                return
            self._remaining = size

    def _body(self, data):
        if not data:
            return
        self.body_bytes += len(data)
        if len(self.body_start) < 512:
            self.body_start += data[:512 - len(self.body_start)]
        if self.on_body:
            self.on_body(data)
        if self.max_body is not None and self.body_bytes > self.max_body:
            self.oversize = True


class Loop:
    """One selector for many Peers: run() drives them until a deadline, calling tick() every
    `every` seconds; tick returning True ends the run early."""

    def __init__(self, port):
        self.port = port
        self.selector = selectors.DefaultSelector()
        self.peers = set()

    def run(self, until, tick=None, every=0.05):
        next_tick = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= until:
                return False
            if tick and now >= next_tick:
                if tick(now):
                    return True
                next_tick = now + every
            wake = min(until, next_tick) if tick else until
            for key, mask in self.selector.select(max(0.0, wake - time.monotonic())):
                key.data.on_ready(mask)

    def wait(self, condition, timeout):
        """Runs until condition() holds (checked every 5 ms) or timeout seconds pass; True if it held."""
        return self.run(time.monotonic() + timeout, lambda now: condition(), every=0.005)

    def wait_all(self, peers, timeout):
        """Runs until every one of peers is done (answered whole, or ended), or timeout passes."""
        first_pending = 0

        def all_done():
            nonlocal first_pending
            while first_pending < len(peers) and peers[first_pending].done:
                first_pending += 1
            return first_pending == len(peers)
        return self.wait(all_done, timeout)

    def close_all(self):
        for peer in list(self.peers):
            peer.close()


class Peer:
    """One non-blocking connection from a chosen loopback address, driven by a Loop. It connects,
    sends its request (more with send()), reads one Answer, and notices the server closing it.
    on_done(peer) is called once, when the answer is complete or the connection ends before that;
    on_close(peer) when the server (not the test) ends the connection."""

    def __init__(self, loop, source_address, request=b"", on_body=None, max_body=None, on_done=None,
                 on_close=None):
        self.loop, self.source = loop, source_address
        self.started = time.monotonic()
        self.connected_at = self.closed_at = self.first_byte_at = None
        self.close_reason = None
        self.by_server = False
        self.out, self.sent = bytearray(request), 0
        self.answer = Answer(on_body, max_body)
        self.on_done, self.on_close = on_done, on_close
        self._done_called = False
        self._mask = 0
        try:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except OSError as error:
            self.sock = None
            self._end(f"socket: {error.strerror}")
            return
        self.sock.setblocking(False)
        try:
            # The port is chosen at connect(), per destination, so 10,000 sockets need not share a
            # bind-time port range.
            self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_BIND_ADDRESS_NO_PORT, 1)
            self.sock.bind((source_address, 0))
            code = self.sock.connect_ex(("127.0.0.1", loop.port))
        except OSError as error:
            code = error.errno
        if code not in (0, errno.EINPROGRESS):
            self._end(f"connect: {os.strerror(code)}")
            return
        self._mask = selectors.EVENT_WRITE
        loop.selector.register(self.sock, self._mask, self)
        loop.peers.add(self)

    @property
    def open(self):
        return self.closed_at is None

    @property
    def done(self):
        """Answered whole, or ended before that."""
        return self._done_called

    def send(self, data):
        if self.open:
            self.out += data
            if self.connected_at is not None:
                self._update()

    def on_ready(self, mask):
        if not self.open:
            return
        if self.connected_at is None:
            code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                return self._end(f"connect: {os.strerror(code)}")
            self.connected_at = time.monotonic()
            self._update()
            mask |= selectors.EVENT_WRITE
        if mask & selectors.EVENT_READ:
            self._receive()
        if self.open and self.out and mask & selectors.EVENT_WRITE:
            try:
                sent = self.sock.send(self.out[:262144])
                del self.out[:sent]
                self.sent += sent
            except BlockingIOError:
                pass
            except OSError as error:
                self._receive()   # an answer (a 431) may have come before the server closed
                return self._end(error.strerror or str(error))
            if not self.out:
                self._update()

    def _receive(self):
        while self.open:
            try:
                data = self.sock.recv(262144)
            except BlockingIOError:
                return
            except OSError as error:
                return self._end(error.strerror or str(error))
            if not data:
                return self._end("closed by the server")
            if self.first_byte_at is None:
                self.first_byte_at = time.monotonic()
            self.answer.feed(data)
            if self.answer.oversize:
                return self.close("the answer is larger than expected")
            if self.answer.complete:
                self._done()
            if len(data) < 262144:
                return

    def _update(self):
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.out else 0)
        if mask != self._mask and self.open:
            self._mask = mask
            self.loop.selector.modify(self.sock, mask, self)

    def _done(self):
        if not self._done_called:
            self._done_called = True
            if self.on_done:
                self.on_done(self)

    def _finish(self, reason):
        self.closed_at, self.close_reason = time.monotonic(), reason
        if self.sock is not None:
            if self._mask:
                self.loop.selector.unregister(self.sock)
            self.sock.close()
        self.loop.peers.discard(self)

    def _end(self, reason):
        """The server (or the network) ended the connection."""
        if not self.open:
            return
        self.by_server = True
        self._finish(reason)
        self._done()
        if self.on_close:
            self.on_close(self)

    def close(self, reason="closed by the test"):
        if self.open:
            self._finish(reason)
            self._done()


class EventStream:
    """Server-sent events parsed from a stream's body: feed() returns the (event, data) pairs it
    completed. Comments (": still here") are dropped."""

    def __init__(self):
        self._text = ""

    def feed(self, data):
        self._text += data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        events = []
        while "\n\n" in self._text:
            block, self._text = self._text.split("\n\n", 1)
            name, lines = "message", []
            for line in block.split("\n"):
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    lines.append(line[5:].lstrip())
            if lines or name != "message":
                events.append((name, "\n".join(lines)))
        return events
