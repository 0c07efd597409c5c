#!/usr/bin/python3
"""A wire-level chaos front for shard_fdw's tests.

It listens on loopback (plain TCP, or TLS with a certificate made for the
run) and relays each client connection to a connection of its own to an
upstream HTTP endpoint (the test bed's DynamoDB proxy).  Unlike the proxy,
which fails requests the way an HTTP server would, the front breaks the
bytes: it parses the HTTP/1.1 framing of the requests and of the answers
(Content-Length, chunked, or to the end of the connection), so that it
knows where each answer ends, and injects faults chosen by a seeded random
generator with a configurable rate per fault kind.

Fault kinds (a name each; the front counts them):

  per connection, when it is accepted
    connect_reset       accept, then reset (RST: SO_LINGER 0) at once

  per request that arrives on a kept-alive connection idle for more than
  idle_ms (it has carried an answer before)
    idle_close          read the request, close (FIN) without forwarding it
    idle_close_applied  forward it (the write is applied), close without
                        answering
    idle_reset          read the request, reset without forwarding it

  per answer
    split               the answer in many small writes of random sizes
                        (TCP_NODELAY; at most MAX_PIECES), split_sleep_ms
                        at most after one write in ten
    rechunk             the body sent again as Transfer-Encoding: chunked
                        in chunks of random sizes (with a chunk extension
                        and a trailer now and then): a valid answer, split
                        into small writes as well
    trickle             the first trickle_bytes bytes one at a time,
                        trickle_ms apart, then the rest
    double_copy         the answer and a second copy of it in one write
    double_other        the answer and another full response in one write:
                        the previous answer of the connection (a real
                        DynamoDB answer to another request), or a made-up
                        DynamoDB answer on a connection's first
    stale_copy          the answer, then after 0 to stale_gap_ms a copy of
                        it, unasked (not sent once the client's next
                        request is already there: counted as
                        stale_copy_skipped)
    extra_bytes         the answer and 1 to 64 bytes more, past its
                        Content-Length (or its last chunk)
    late                forward, hold the answer late_ms (longer than the
                        client's timeout), then send it if the client is
                        still there
    reset_header        part of the status line and headers, then a reset
    reset_body          the headers and part of the body, then a reset
    close_after_headers the headers, then a clean close (FIN; over TLS a
                        close_notify first)
    tls_abrupt          TLS only: part of the answer, then the connection
                        closed without close_notify and reset
    tls_close_notify    TLS only: part of the answer, then close_notify
                        (the TLS layer unwrapped) and a close

split, rechunk, trickle, double_copy, double_other, stale_copy and
extra_bytes leave a whole, right answer where the client reads it first:
a client may close the connection after them, but a request must not fail
for them alone (BENIGN).  The others lose or delay an answer.

Each answer takes at most one fault.  The random choice is made from a
generator seeded with (seed, connection number, answer number), so a run
with the same seed and the same traffic injects the same faults.  Faults
can also be queued, as the DynamoDB proxy's are: {"kind", "action"
(X-Amz-Target operation, default any), "count" (default 1), "skip"
(default 0)}; a queued fault matching an answer wins over the random
choice.  Faults fire only while the front is active (config "active").

In-process use (the test scripts): WireFront(upstream, tls=..., seed=...,
rates={...}), .url, .ca_file, .configure(...), .stats(), .take_log(),
.queue(...), .stop(); make_certificate() and accepted() for fronts of
their own.  Run alone it serves until killed, with a control API of JSON
over HTTP on its own loopback port:

  GET    /config   the settings      POST /config  change them (keys:
                   seed, rates ({kind: probability}), active, idle_ms,
                   late_ms, split_sleep_ms, trickle_ms, trickle_bytes,
                   stale_gap_ms)
  GET    /stats    counters: connections, requests, answers, faults by
                   kind, requests by action
  GET    /log      the faults injected since the last DELETE /log, each
                   {conn, answer, kind, action, at}; DELETE /log takes it
  POST   /faults   queue a fault (or a list);  DELETE /faults  drop them
  POST   /reset    counters, log and queue back to empty

  wirefront.py --upstream http://127.0.0.1:PORT [--tls] [--cert-dir DIR]
      [--listen-port N] [--control-port N] [--seed S] [--rate KIND=P ...]
      [--config FILE.json]

prints one JSON line: {"url", "control", "ca_file"}.  Python 3.11 stdlib.
"""

import argparse
import binascii
import collections
import contextlib
import json
import os
import random
import select
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONNECTION_KINDS = ("connect_reset",)
IDLE_KINDS = ("idle_close", "idle_close_applied", "idle_reset")
ANSWER_KINDS = ("split", "rechunk", "trickle", "double_copy", "double_other",
                "stale_copy", "extra_bytes", "late", "reset_header", "reset_body",
                "close_after_headers", "tls_abrupt", "tls_close_notify")
TLS_ONLY = {"tls_abrupt", "tls_close_notify"}
KINDS = CONNECTION_KINDS + IDLE_KINDS + ANSWER_KINDS
BENIGN = frozenset({"split", "rechunk", "trickle", "double_copy", "double_other",
                    "stale_copy", "extra_bytes"})
DEFAULTS = {
    "seed": 1,
    "rates": {},
    "active": True,
    "idle_ms": 150,
    "late_ms": 4000,
    "split_sleep_ms": 3,
    "trickle_ms": 3,
    "trickle_bytes": 200,
    "stale_gap_ms": 4,
}
MAX_HEAD = 64 * 1024
# The most writes an answer is split into (split, rechunk): a split answer
# must come well within a client's timeout.
MAX_PIECES = 400


class Closed(Exception):
    """The peer closed (or reset) its end; holds the bytes read of the
    message that was coming, if any."""

    def __init__(self, partial=b""):
        super().__init__(f"closed after {len(partial)} bytes")
        self.partial = partial


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 in directory (cert.pem,
    key.pem), readable by any user (the backend reads it as ca_file)."""
    os.chmod(directory, 0o755)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", f"{directory}/key.pem", "-out", f"{directory}/cert.pem",
                    "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    for name in ("key.pem", "cert.pem"):
        os.chmod(f"{directory}/{name}", 0o644)
    return f"{directory}/cert.pem", f"{directory}/key.pem"


def accepted(listener):
    """The connections listener accepts, one after another, until it is
    closed."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        yield conn


# ----------------------------------------------------------------- framing


class Message:
    """One HTTP/1.1 message as read: the head's bytes, the start line, the
    headers (name lowercased, value), the body (de-chunked), and the raw
    bytes exactly as they came."""

    def __init__(self, head, body, raw):
        self.head = head
        lines = head.split(b"\r\n")
        self.start = lines[0].decode("latin-1")
        self.headers = []
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(b":")
            self.headers.append((name.strip().lower().decode("latin-1"),
                                 value.strip().decode("latin-1")))
        self.body = body
        self.raw = raw

    def header(self, name):
        """The value of the first header called name, or None."""
        for key, value in self.headers:
            if key == name:
                return value
        return None

    @property
    def status(self):
        """A response's status code."""
        parts = self.start.split(" ")
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0

    @property
    def action(self):
        """A request's DynamoDB operation (X-Amz-Target's), or its method
        and path."""
        target = self.header("x-amz-target")
        if target:
            return target.rpartition(".")[2]
        return " ".join(self.start.split(" ")[:2])

    def keeps_alive(self):
        """Whether the connection stays open after this message."""
        value = (self.header("connection") or "").lower()
        if self.start.startswith("HTTP/1.0") or self.start.endswith("HTTP/1.0"):
            return "keep-alive" in value
        return "close" not in value


class Reader:
    """Reads HTTP/1.1 messages from a socket (plain or TLS), keeping the
    bytes read past one message for the next."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _more(self, partial):
        try:
            data = self.sock.recv(65536)
        except (OSError, ssl.SSLError):
            data = b""
        if not data:
            raise Closed(partial)
        self.buf += data

    def pending(self):
        """Whether bytes are already waiting (in the buffer or the socket)."""
        if self.buf:
            return True
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return True
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _line(self, start, raw_start):
        while True:
            end = self.buf.find(b"\r\n", start)
            if end >= 0:
                return end
            self._more(self.buf[raw_start:])

    def read(self, response=False, request_method=None):
        """The next whole message; Closed when the peer closes before it
        ends (with the bytes of it read so far)."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEAD:
                raise Closed(self.buf)
            self._more(self.buf)
        head_end = self.buf.index(b"\r\n\r\n")
        head = self.buf[:head_end]
        message = Message(head, b"", b"")
        pos = head_end + 4
        status = message.status if response else 0
        length = message.header("content-length")
        chunked = "chunked" in (message.header("transfer-encoding") or "").lower()
        body = b""
        if response and (100 <= status < 200 or status in (204, 304)
                         or request_method == "HEAD"):
            pass
        elif chunked:
            while True:
                end = self._line(pos, 0)
                size = int(self.buf[pos:end].split(b";")[0].strip() or b"0", 16)
                pos = end + 2
                if size == 0:
                    # trailers up to an empty line
                    while True:
                        end = self._line(pos, 0)
                        line = self.buf[pos:end]
                        pos = end + 2
                        if not line:
                            break
                    break
                while len(self.buf) < pos + size + 2:
                    self._more(self.buf)
                body += self.buf[pos:pos + size]
                pos += size + 2
        elif length is not None:
            n = int(length)
            while len(self.buf) < pos + n:
                self._more(self.buf)
            body = self.buf[pos:pos + n]
            pos += n
        elif response:
            # to the end of the connection
            while True:
                try:
                    self._more(self.buf)
                except Closed:
                    break
            body = self.buf[pos:]
            pos = len(self.buf)
        raw = self.buf[:pos]
        self.buf = self.buf[pos:]
        return Message(head, body, raw)


def crc32_text(body):
    """x-amz-crc32 of a body."""
    return str(binascii.crc32(body) & 0xFFFFFFFF)


def made_up_answer():
    """A DynamoDB-looking answer of nothing: 200, {} with its CRC."""
    body = b"{}"
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\n"
            b"x-amzn-RequestId: " + uuid.uuid4().hex.encode() + b"\r\n"
            b"x-amz-crc32: " + crc32_text(body).encode() + b"\r\n"
            b"Content-Length: 2\r\n\r\n" + body)


def rechunked(message, rng):
    """message's bytes again with its body chunked in random sizes."""
    lines = [message.start.encode("latin-1")]
    for name, value in message.headers:
        if name not in ("content-length", "transfer-encoding"):
            lines.append(f"{name}: {value}".encode("latin-1"))
    lines.append(b"Transfer-Encoding: chunked")
    out = [b"\r\n".join(lines) + b"\r\n\r\n"]
    body, pos = message.body, 0
    least = len(body) // MAX_PIECES + 1
    while pos < len(body):
        n = min(len(body) - pos, rng.randint(1, max(least, rng.choice((7, 64, 900, 20000)))))
        ext = b";ext=1" if rng.random() < 0.1 else b""
        out.append(f"{n:x}".encode() + ext + b"\r\n" + body[pos:pos + n] + b"\r\n")
        pos += n
    out.append(b"0\r\n")
    if rng.random() < 0.2:
        out.append(b"X-Trailer: t\r\n")
    out.append(b"\r\n")
    return b"".join(out)


# -------------------------------------------------------------------- front


class WireFront:
    """The front: a listener, a thread per client connection relaying it
    to its own upstream connection, the settings and the counters."""

    def __init__(self, upstream, tls=False, cert_dir=None, listen_port=0, **settings):
        scheme, _, rest = upstream.partition("://")
        host, _, port = rest.rstrip("/").rpartition(":")
        self.upstream = (host, int(port))
        self.lock = threading.Lock()
        self.settings = json.loads(json.dumps(DEFAULTS))
        self.configure(**settings)
        self.context = None
        self.ca_file = None
        self._own_cert_dir = None
        if tls:
            if cert_dir is None:
                cert_dir = self._own_cert_dir = tempfile.mkdtemp(prefix="wirefront_")
            cert, key = make_certificate(cert_dir)
            self.ca_file = cert
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", listen_port))
        self.conns = set()
        self.queued = []
        self.reset()
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    # ---- settings and counters

    @property
    def url(self):
        """The URL clients use."""
        scheme = "https" if self.context else "http"
        return f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}"

    def configure(self, **changes):
        """Change settings; unknown keys and kinds are errors."""
        with self.lock:
            for key, value in changes.items():
                if key not in DEFAULTS:
                    raise ValueError(f"unknown setting {key!r}: one of {sorted(DEFAULTS)}")
                if key == "rates":
                    unknown = set(value) - set(KINDS)
                    if unknown:
                        raise ValueError(f"unknown fault kinds {sorted(unknown)}: "
                                         f"one of {list(KINDS)}")
                    value = {k: float(v) for k, v in value.items()}
                self.settings[key] = value
            return json.loads(json.dumps(self.settings))

    def config(self):
        """The current settings."""
        with self.lock:
            return json.loads(json.dumps(self.settings))

    def reset(self):
        """Counters, the fault log and the queue back to empty."""
        with self.lock:
            self.connections = 0
            self.requests = 0
            self.answers = 0
            self.faults = collections.Counter()
            self.actions = collections.Counter()
            self.log = []
            self.queued = []
        return {"reset": True}

    def stats(self):
        """The counters."""
        with self.lock:
            return {"connections": self.connections, "requests": self.requests,
                    "answers": self.answers, "faults": dict(self.faults),
                    "actions": dict(self.actions), "open": len(self.conns),
                    "queued": len(self.queued)}

    def take_log(self, keep=False):
        """The faults injected since the last take."""
        with self.lock:
            log = list(self.log)
            if not keep:
                self.log = []
        return log

    def queue(self, *specs):
        """Queue faults ({"kind", "action", "count", "skip"})."""
        with self.lock:
            for spec in specs:
                spec = dict(spec)
                if spec.get("kind") not in KINDS:
                    raise ValueError(f"unknown fault kind {spec.get('kind')!r}")
                spec.setdefault("count", 1)
                spec.setdefault("skip", 0)
                self.queued.append(spec)
        return {"queued": len(specs)}

    def clear_queue(self):
        """Drop the queued faults."""
        with self.lock:
            self.queued = []
        return {"cleared": True}

    def _record(self, conn_no, answer_no, kind, action, **extra):
        with self.lock:
            self.faults[kind] += 1
            self.log.append(dict({"conn": conn_no, "answer": answer_no, "kind": kind,
                                  "action": action, "at": time.monotonic()}, **extra))

    def _choose(self, kinds, conn_no, answer_no, action, stage):
        """The fault (or None) of one connection, request or answer: a
        queued one that matches, else one drawn with the rates."""
        with self.lock:
            if not self.settings["active"]:
                return None
            for spec in self.queued:
                if spec["kind"] not in kinds:
                    continue
                if spec.get("action") not in (None, action):
                    continue
                if spec["skip"] > 0:
                    spec["skip"] -= 1
                    continue
                spec["count"] -= 1
                if spec["count"] <= 0:
                    self.queued.remove(spec)
                return spec["kind"]
            rates = self.settings["rates"]
            seed = self.settings["seed"]
        rng = random.Random(f"{seed}/{conn_no}/{answer_no}/{stage}")
        draw = rng.random()
        total = 0.0
        for kind in kinds:
            total += rates.get(kind, 0.0)
            if draw < total:
                return kind
        return None

    # ---- connections

    def _accept(self):
        for conn in accepted(self.listener):
            with self.lock:
                self.connections += 1
                number = self.connections
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def stop(self):
        """Stop listening and close every connection."""
        self.stopped = True
        with contextlib.suppress(OSError):
            self.listener.close()
        with self.lock:
            conns = list(self.conns)
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self._own_cert_dir:
            shutil.rmtree(self._own_cert_dir, ignore_errors=True)

    @staticmethod
    def _reset(sock):
        """Close sock with a TCP reset (no close_notify on TLS)."""
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            sock.close()

    @staticmethod
    def _close(sock, notify=True):
        """Close sock cleanly: close_notify first on TLS, then FIN."""
        if isinstance(sock, ssl.SSLSocket) and notify:
            with contextlib.suppress(OSError, ssl.SSLError, ValueError):
                sock.settimeout(0.3)
                sock = sock.unwrap()
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()

    def _serve(self, raw, number):
        """One client connection, request by request."""
        if self._choose(CONNECTION_KINDS, number, 0, "connect", "c") == "connect_reset":
            self._record(number, 0, "connect_reset", "connect")
            self._reset(raw)
            return
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = raw
        if self.context:
            try:
                raw.settimeout(10)
                conn = self.context.wrap_socket(raw, server_side=True)
                conn.settimeout(None)
            except (OSError, ssl.SSLError):
                self._close(raw, notify=False)
                return
        with self.lock:
            self.conns.add(conn)
        up = None
        try:
            up = socket.create_connection(self.upstream, timeout=10)
            up.settimeout(None)
            up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._relay(conn, up, number)
        except (OSError, ssl.SSLError, Closed, ValueError):
            pass
        finally:
            with self.lock:
                self.conns.discard(conn)
            self._close(conn)
            if up is not None:
                self._close(up)

    def _relay(self, conn, up, number):
        client, upstream = Reader(conn), Reader(up)
        answered_at = None          # when the last answer went out
        previous = None             # the last answer's bytes
        answer_no = 0
        while not self.stopped:
            try:
                request = client.read()
            except Closed:
                return
            answer_no += 1
            action = request.action
            with self.lock:
                self.requests += 1
                self.actions[action] += 1
                idle_ms = self.settings["idle_ms"]
            idle = (answered_at is not None and
                    (time.monotonic() - answered_at) * 1000 > idle_ms)
            if idle:
                kind = self._choose(IDLE_KINDS, number, answer_no, action, "i")
                if kind:
                    self._record(number, answer_no, kind, action,
                                 idle_ms=round((time.monotonic() - answered_at) * 1000))
                    if kind == "idle_close_applied":
                        up.sendall(request.raw)
                        try:
                            upstream.read(response=True)
                        except Closed:
                            pass
                    if kind == "idle_reset":
                        self._reset(conn)
                    else:
                        self._close(conn)
                    return
            up.sendall(request.raw)
            method = request.start.split(" ")[0]
            while True:
                try:
                    answer = upstream.read(response=True, request_method=method)
                except Closed as closed:
                    # the upstream went away mid-answer: so does the client
                    if closed.partial:
                        conn.sendall(closed.partial)
                    self._reset(conn)
                    return
                if 100 <= answer.status < 200:
                    conn.sendall(answer.raw)
                    continue
                break
            with self.lock:
                self.answers += 1
            kind = self._choose(tuple(k for k in ANSWER_KINDS
                                      if self.context or k not in TLS_ONLY),
                                number, answer_no, action, "a")
            rng = random.Random(f"{self.settings['seed']}/{number}/{answer_no}/x")
            if kind:
                self._record(number, answer_no, kind, action)
            if not self._answer(conn, client, answer, previous, kind, rng, number,
                                answer_no, action):
                return
            answered_at = time.monotonic()
            previous = answer.raw
            if not answer.keeps_alive():
                return

    def _send_pieces(self, conn, data, rng, sleep_ms, largest=40):
        """data in writes of 1 to largest bytes (at most MAX_PIECES of
        them), sleeping up to sleep_ms after one in ten."""
        largest = max(largest, len(data) // MAX_PIECES + 1)
        pos = 0
        while pos < len(data):
            n = rng.randint(1, largest)
            conn.sendall(data[pos:pos + n])
            pos += n
            if sleep_ms and rng.random() < 0.1:
                time.sleep(rng.random() * sleep_ms / 1000.0)

    def _answer(self, conn, client, answer, previous, kind, rng, number, answer_no, action):
        """Send answer to the client with fault kind; returns whether the
        connection goes on."""
        data = answer.raw
        head_len = len(answer.head) + 4
        s = self.config()
        if kind is None:
            conn.sendall(data)
        elif kind == "split":
            self._send_pieces(conn, data, rng, s["split_sleep_ms"],
                              largest=rng.choice((3, 40, 400)))
        elif kind == "rechunk":
            self._send_pieces(conn, rechunked(answer, rng), rng, s["split_sleep_ms"],
                              largest=rng.choice((5, 100, 4000)))
        elif kind == "trickle":
            n = min(len(data), s["trickle_bytes"])
            for i in range(n):
                conn.sendall(data[i:i + 1])
                time.sleep(s["trickle_ms"] / 1000.0)
            conn.sendall(data[n:])
        elif kind == "double_copy":
            conn.sendall(data + data)
        elif kind == "double_other":
            conn.sendall(data + (previous if previous else made_up_answer()))
        elif kind == "stale_copy":
            conn.sendall(data)
            time.sleep(rng.random() * s["stale_gap_ms"] / 1000.0)
            if client.pending():
                self._record(number, answer_no, "stale_copy_skipped", action)
            else:
                conn.sendall(data)
        elif kind == "extra_bytes":
            junk = rng.choice((b"\r\n", b"HTTP/1.1 200 OK\r\n", b"0\r\n\r\n",
                               bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))))
            conn.sendall(data + junk)
        elif kind == "late":
            time.sleep(s["late_ms"] / 1000.0)
            try:
                conn.sendall(data)
            except OSError:
                return False
        elif kind == "reset_header":
            conn.sendall(data[:rng.randint(1, max(1, head_len - 1))])
            self._reset(conn)
            return False
        elif kind == "reset_body":
            conn.sendall(data[:rng.randint(head_len, max(head_len, len(data) - 1))])
            self._reset(conn)
            return False
        elif kind == "close_after_headers":
            conn.sendall(data[:head_len])
            self._close(conn)
            return False
        elif kind == "tls_abrupt":
            conn.sendall(data[:rng.randint(1, max(1, len(data) - 1))])
            self._reset(conn)
            return False
        elif kind == "tls_close_notify":
            conn.sendall(data[:rng.randint(1, max(1, len(data) - 1))])
            self._close(conn, notify=True)
            return False
        else:
            raise ValueError(f"unknown fault kind {kind!r}")
        return True


# ------------------------------------------------------------- control API


def control_server(front, port=0):
    """The control API of front on 127.0.0.1:port, served on a thread."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002
            pass

        def _reply(self, status, doc):
            payload = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _route(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else {}
            routes = {
                ("GET", "/config"): front.config,
                ("POST", "/config"): lambda: front.configure(**body),
                ("GET", "/stats"): front.stats,
                ("GET", "/log"): lambda: front.take_log(keep=True),
                ("DELETE", "/log"): front.take_log,
                ("POST", "/faults"): lambda: front.queue(
                    *(body if isinstance(body, list) else [body])),
                ("DELETE", "/faults"): front.clear_queue,
                ("POST", "/reset"): front.reset,
            }
            route = routes.get((self.command, self.path.rstrip("/")))
            try:
                if route is None:
                    self._reply(404, {"error": f"no {self.command} {self.path}"})
                else:
                    self._reply(200, route())
            except (ValueError, TypeError) as err:
                self._reply(400, {"error": str(err)})

        do_GET = do_POST = do_DELETE = _route

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--cert-dir")
    parser.add_argument("--listen-port", type=int, default=0)
    parser.add_argument("--control-port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    parser.add_argument("--rate", action="append", default=[], metavar="KIND=P")
    parser.add_argument("--config", help="a JSON file of settings")
    args = parser.parse_args(argv)
    settings = {"seed": args.seed}
    if args.config:
        with open(args.config, encoding="utf-8") as f:
            settings.update(json.load(f))
    rates = dict(settings.get("rates", {}))
    for item in args.rate:
        kind, _, p = item.partition("=")
        rates[kind] = float(p)
    settings["rates"] = rates
    front = WireFront(args.upstream, tls=args.tls, cert_dir=args.cert_dir,
                      listen_port=args.listen_port, **settings)
    control = control_server(front, args.control_port)
    print(json.dumps({"url": front.url, "ca_file": front.ca_file,
                      "control": f"http://127.0.0.1:{control.server_address[1]}"}),
          flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        front.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
