"""The proxy's HTTP front: DynamoDB requests and the control API.

Each DynamoDB request (a POST outside /__proxy/) is read, delayed by
latency_ms, checked (signature, denied actions), handed to the fault it
fires, else forwarded to the backend (within the write budgets when they
are on), and logged as one line: action, tables, outcome, milliseconds.

Control API, JSON over HTTP on the same port:

  POST   /__proxy/faults   queue a fault spec (or a list of them)
  GET    /__proxy/faults   the faults still queued
  DELETE /__proxy/faults   drop every queued fault
  GET    /__proxy/config   the current settings
  POST   /__proxy/config   change settings (keys: latency_ms,
                           verify_signatures, key_budget, table_budget,
                           deny_actions, clock_offset_s: the proxy's
                           clock set off by that many seconds, for the
                           signatures' times and the answers' Date)
  GET    /__proxy/stats    counters (with the ConsumedCapacity DynamoDB
                           answered, by table, the bytes of the answers
                           DynamoDB Local gave, by action, the requests by
                           the access key that signed them, and the
                           denials by IAM action)
  GET    /__proxy/signatures  the latest verified requests since the last
                           reset, as [arrival time on the monotonic clock,
                           access key] pairs
  POST   /__proxy/reset    back to the start-up state (faults, budgets,
                           settings, counters, cached key schemas)
  GET    /__proxy/mutations  the log of mutations since the last reset
  DELETE /__proxy/mutations  answer the log and empty it
"""

import http.client
import json
import select
import socket
import struct
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from ddbprotocol import (DDB, JSON_TYPE, BadControlRequest, ProxyError,
                         Response, action_name, now_s, parse_json, tables_of)
from faultanswers import FAULT_HANDLERS, FaultAnswers
from faultspecs import Fault
from iamdenials import access_denied, first_denied
from sigv4check import parse_authorization
from writebudgets import WRITE_ACTIONS, BudgetedWrites

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-connection", "transfer-encoding",
    "te", "trailer", "upgrade", "expect", "content-length", "host",
    "date", "server",
}
SCHEMA_ACTIONS = {"CreateTable", "DeleteTable", "UpdateTable"}


class Handler(FaultAnswers, BudgetedWrites, BaseHTTPRequestHandler):
    """One client connection: DynamoDB requests and control calls."""

    protocol_version = "HTTP/1.1"
    server_version = "ddbproxy"

    def setup(self):
        """Per connection: no Nagle delay, no backend connection yet."""
        super().setup()
        # headers and body go out in separate writes: without this, Nagle's
        # algorithm meets the client's delayed ACK and stalls each answer
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.backend = None
        self.arrived = None

    def finish(self):
        """Close the backend connection with the client's."""
        super().finish()
        if self.backend is not None:
            self.backend.close()

    @property
    def proxy(self):
        """The shared Proxy state."""
        return self.server.proxy

    def log_request(self, code="-", size="-"):
        """DynamoDB requests are logged by handle_dynamodb instead."""

    def date_time_string(self, timestamp=None):
        """The Date of every answer: the proxy's time (Proxy.now)."""
        if timestamp is None:
            timestamp = time.time() + self.proxy.clock_offset_s
        return super().date_time_string(timestamp)

    def do_GET(self):
        """GET: control API only."""
        self.handle_control()

    def do_DELETE(self):
        """DELETE: control API only."""
        self.handle_control()

    def do_POST(self):
        """POST: control API under /__proxy/, DynamoDB otherwise."""
        if self.path.startswith("/__proxy/"):
            self.handle_control()
        else:
            self.handle_dynamodb()

    # ---- plumbing

    def read_body(self):
        """The request body (Content-Length is required)."""
        length = self.headers.get("Content-Length")
        if length is None:
            self.close_connection = True
            raise ProxyError(411, DDB + "ValidationException",
                             "Content-Length is required")
        return self.rfile.read(int(length))

    def client_waits(self):
        """Whether the client has not closed its end of the connection."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return not readable or self.connection.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def send(self, response):
        """Send a whole response."""
        self.send_head(response, len(response.body))
        self.wfile.write(response.body)

    def send_head(self, response, length):
        """Send the status line and headers, announcing length bytes."""
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def abort_connection(self):
        """Close the client connection with a TCP reset."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                   struct.pack("ii", 1, 0))
        self.rfile.close()
        self.connection.close()
        self.close_connection = True

    def backend_call(self, body, headers):
        """POST to the backend over this connection's persistent connection.

        A reused connection that the backend has closed is reopened once.
        """
        for attempt in (1, 2):
            reused = self.backend is not None
            if not reused:
                self.backend = http.client.HTTPConnection(
                    self.proxy.backend_host, self.proxy.backend_port, timeout=60)
            try:
                self.backend.request("POST", "/", body, headers)
                reply = self.backend.getresponse()
                data = reply.read()
            except (http.client.HTTPException, OSError) as err:
                self.backend.close()
                self.backend = None
                if reused and attempt == 1:
                    continue
                raise ProxyError(500, DDB + "InternalServerError",
                                 f"ddbproxy: backend request failed: {err}")
            if reply.will_close:
                self.backend.close()
                self.backend = None
            kept = [(k, v) for k, v in reply.getheaders()
                    if k.lower() not in HOP_BY_HOP]
            return Response(reply.status, kept, data)

    def forward(self, body):
        """Forward the client's request with this body."""
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in HOP_BY_HOP}
        return self.backend_call(body, headers)

    def describe_table(self, table):
        """DescribeTable on the backend, signed by the proxy; None if absent."""
        body = json.dumps({"TableName": table}).encode()
        request = AWSRequest(method="POST", url=self.proxy_backend_url(),
                             data=body, headers={
                                 "Content-Type": JSON_TYPE,
                                 "X-Amz-Target": "DynamoDB_20120810.DescribeTable"})
        SigV4Auth(self.proxy.signing_credentials(), "dynamodb",
                  "us-east-1").add_auth(request)
        reply = self.backend_call(body, dict(request.headers.items()))
        if reply.status != 200:
            return None
        return json.loads(reply.body)

    def proxy_backend_url(self):
        """The backend's URL, for signing the proxy's own requests."""
        return f"http://{self.proxy.backend_host}:{self.proxy.backend_port}/"

    # ---- control API

    def handle_control(self):
        """Serve one /__proxy/ call."""
        routes = {
            ("POST", "/__proxy/faults"): self.control_add_faults,
            ("GET", "/__proxy/faults"): lambda _: self.proxy.faults.pending(),
            ("DELETE", "/__proxy/faults"): self.control_clear_faults,
            ("GET", "/__proxy/config"): lambda _: self.proxy.config(),
            ("GET", "/__proxy/signatures"): lambda _: self.proxy.stats.signatures(),
            ("POST", "/__proxy/config"): self.control_configure,
            ("GET", "/__proxy/stats"): lambda _: self.proxy.stats.as_json(
                len(self.proxy.faults.pending())),
            ("POST", "/__proxy/reset"): self.control_reset,
            ("GET", "/__proxy/mutations"): lambda _: {
                "mutations": self.proxy.stats.take_mutation_log(False)},
            ("DELETE", "/__proxy/mutations"): lambda _: {
                "mutations": self.proxy.stats.take_mutation_log(True)},
        }
        route = routes.get((self.command, self.path.rstrip("/")))
        try:
            body = self.read_body() if self.headers.get("Content-Length") else b""
            if route is None:
                status, doc = 404, {"error": f"no {self.command} {self.path}"}
            else:
                status, doc = 200, route(json.loads(body) if body else {})
        except (BadControlRequest, ValueError, TypeError) as err:
            status, doc = 400, {"error": str(err)}
        payload = json.dumps(doc).encode()
        self.send(Response(status, [("Content-Type", "application/json")],
                           payload))

    def control_add_faults(self, spec):
        """POST /__proxy/faults: queue one spec or a list of them."""
        specs = spec if isinstance(spec, list) else [spec]
        faults = [Fault.from_spec(s) for s in specs]
        for fault in faults:
            self.proxy.faults.add(fault)
        return {"queued": len(faults)}

    def control_clear_faults(self, _):
        """DELETE /__proxy/faults."""
        self.proxy.faults.clear()
        return {"cleared": True}

    def control_configure(self, changes):
        """POST /__proxy/config: change settings, answer the new ones."""
        if not isinstance(changes, dict):
            raise BadControlRequest("config must be a JSON object")
        self.proxy.configure(changes)
        return self.proxy.config()

    def control_reset(self, _):
        """POST /__proxy/reset."""
        self.proxy.reset()
        return {"reset": True}

    # ---- DynamoDB requests

    def handle_dynamodb(self):
        """Verify, delay, maybe fault or throttle, forward one request."""
        started = self.arrived = now_s()
        action = action_name(self.headers.get("X-Amz-Target")) or "-"
        self.proxy.stats.count_request(action)
        tables, outcome = set(), "?"
        try:
            with self.proxy.stats.flight():
                body = self.read_body()
                request = parse_json(body)
                tables = tables_of(action, request)
                time.sleep(self.proxy.latency_ms / 1000.0)
                outcome = self.serve_dynamodb(action, body, request, tables)
        except ProxyError as err:
            self.send(Response.json_error(err))
            outcome = f"{err.status} {err.error_type.rpartition('#')[2]}"
        except (BrokenPipeError, ConnectionResetError) as err:
            self.close_connection = True
            outcome = f"client gone: {err}"
        elapsed_ms = (now_s() - started) * 1000
        self.log_message("%s %s -> %s (%.0f ms)", action,
                         ",".join(sorted(tables)), outcome, elapsed_ms)

    def serve_dynamodb(self, action, body, request, tables):
        """Answer a request that has been read; returns a log outcome."""
        if self.proxy.verify_signatures:
            self.verify(body)
        denied = first_denied(self.proxy.denials, action, request)
        if denied is not None:
            self.proxy.stats.count_denial(denied[0])
            raise access_denied(self.headers.get("Authorization"), *denied)
        fault = self.proxy.faults.take(action, tables, self.client_waits)
        if fault is not None:
            self.proxy.stats.count_fault(fault.kind)
            FAULT_HANDLERS[fault.kind](self, fault, body, tables)
            return f"fault {fault.kind}"
        if action in SCHEMA_ACTIONS:
            self.proxy.catalog.forget(request.get("TableName"))
        if action in WRITE_ACTIONS and self.proxy.budgets.enabled():
            response = self.forward_within_budget(action, request, body)
        else:
            response = self.forward(body)
        if response.status == 200:
            self.proxy.stats.consumed(response.body)
        self.proxy.stats.answered(action, response.body)
        self.send(response)
        return str(response.status)

    def verify(self, body):
        """Check the signature and count the verdict."""
        try:
            access_key = self.proxy.verifier.verify(self.command, self.path,
                                                    self.headers, body)
        except ProxyError:
            self.proxy.stats.signature(False)
            raise
        region = parse_authorization(self.headers["Authorization"]).region
        self.proxy.stats.signature(True, access_key, self.arrived, region)


class Server(ThreadingHTTPServer):
    """The listening socket; a parallel Scan opens many connections at once."""

    request_queue_size = 128
    daemon_threads = True
