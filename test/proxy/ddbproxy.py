#!/usr/bin/python3
"""A DynamoDB proxy for shard_fdw's tests.

It stands between the extension and DynamoDB Local and adds what DynamoDB
Local lacks:

* SigV4 verification of every request, computed by botocore, so the
  extension's own signer is checked by an independent implementation.
* Latency added before each request is forwarded.
* Faults, queued through the control API and consumed by the requests
  they match: error statuses, throttles, connection resets, slow,
  malformed, truncated and corrupted (bad x-amz-crc32) responses.
* Write budgets: token buckets per partition-key value and per table that
  answer ProvisionedThroughputExceededException with ThrottlingReasons, as
  DynamoDB does for hot keys.
* Denied actions: IAM actions refused with AccessDeniedException, as
  DynamoDB refuses what the caller's policy does not allow.

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

A fault spec, its kinds and their keys: faultspecs.py; what each kind does:
faultanswers.py; the mutations of a "mutate" fault, and their log:
answermutations.py.

Budgets cost one token per item written by PutItem, UpdateItem, DeleteItem
and BatchWriteItem, two per item a TransactWriteItems writes (a
transactional write takes two write units in DynamoDB); a throttled
TransactWriteItems is cancelled as DynamoDB cancels one,
TransactionCanceledException with a ThrottlingError reason for each write
refused.  "key_budget" and "table_budget" are
{"rate": tokens per second, "burst": bucket size} or null (off, the
default).  A BatchWriteItem returns its throttled items in UnprocessedItems
and fails only when every item is throttled; the other operations fail
whole.  Key schemas and table ARNs come from DescribeTable on the backend.

Denied actions.  "deny_actions" is a list of IAM actions the caller is not
allowed: each an action name ("Query", or "dynamodb:Query"), denied on
every table, or {"action": "Query", "table": "T"}, denied on table T (and
its indexes) only; [] (the default) denies nothing.  A request is checked
as IAM checks it, after its signature: a TransactWriteItems needs PutItem,
UpdateItem, DeleteItem or ConditionCheckItem for each of its actions'
tables (there is no TransactWriteItems permission), a TransactGetItems
GetItem, a batch its own action on each of its tables, any other request
its action on its TableName (the table's index when it names one), or on
every table (ListTables).  The first permission missing is answered as
DynamoDB answers: HTTP 400, __type
com.amazon.coral.service#AccessDeniedException, and the message "User:
arn:aws:sts::000000000000:assumed-role/shard_fdw_tests/<access key> is not
authorized to perform: dynamodb:<Action> on resource:
arn:aws:dynamodb:<region>:000000000000:table/<T>[/index/<I>] because no
identity-based policy allows the dynamodb:<Action> action", the region
that of the signature; nothing is forwarded.
"""

import argparse
import collections
import contextlib
import datetime
import http.client
import json
import select
import socket
import struct
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ddbprotocol import (CORAL, DDB, JSON_TYPE, BadControlRequest, ProxyError,
                         Response, action_name, crc32, now_s, parse_json,
                         tables_of, throttle_error)
from faultanswers import FAULT_HANDLERS, FaultAnswers
from faultspecs import Fault, FaultQueue
from sigv4check import SignatureVerifier, parse_authorization

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-connection", "transfer-encoding",
    "te", "trailer", "upgrade", "expect", "content-length", "host",
    "date", "server",
}
WRITE_ACTIONS = {
    "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem",
    "TransactWriteItems",
}
SCHEMA_ACTIONS = {"CreateTable", "DeleteTable", "UpdateTable"}
KEY_RANGE_REASON = "TableWriteKeyRangeThroughputExceeded"
TRANSACTION_THROTTLE = ("Throughput exceeds the current capacity of your table or index. "
                        "DynamoDB is automatically scaling your table or index so please "
                        "try again shortly.")
TABLE_REASON = "TableWriteProvisionedThroughputExceeded"
# The IAM action each action of a transaction is authorized as.
TRANSACT_PERMISSIONS = {"Put": "PutItem", "Update": "UpdateItem",
                        "Delete": "DeleteItem",
                        "ConditionCheck": "ConditionCheckItem",
                        "Get": "GetItem"}
# The account of the ARNs a denial names (DynamoDB Local's).
DENIAL_ACCOUNT = "000000000000"


# ---------------------------------------------------------------- parsing


def write_items(action, request):
    """(table, item-or-key) for every item a write request writes."""
    if action == "PutItem":
        return [(request.get("TableName"), request.get("Item", {}))]
    if action in ("UpdateItem", "DeleteItem"):
        return [(request.get("TableName"), request.get("Key", {}))]
    if action == "BatchWriteItem":
        return [
            (table, batch_item_key(entry))
            for table, entries in request.get("RequestItems", {}).items()
            for entry in entries
        ]
    if action == "TransactWriteItems":
        writes = []
        for entry in request.get("TransactItems", []):
            for kind, op in entry.items():
                if kind in ("Put", "Update", "Delete"):
                    writes.append((op.get("TableName"),
                                   op.get("Item", op.get("Key", {}))))
        return writes
    return []


def batch_item_key(entry):
    """The item or key of one BatchWriteItem entry."""
    if "PutRequest" in entry:
        return entry["PutRequest"].get("Item", {})
    return entry.get("DeleteRequest", {}).get("Key", {})


def permissions_of(action, request):
    """(IAM action, table or None, index or None) for every permission a
    request needs, as IAM checks them (see "Denied actions")."""
    if action in ("TransactWriteItems", "TransactGetItems"):
        return [(TRANSACT_PERMISSIONS[kind], op.get("TableName"), None)
                for entry in request.get("TransactItems", [])
                for kind, op in entry.items() if kind in TRANSACT_PERMISSIONS]
    if action in ("BatchGetItem", "BatchWriteItem"):
        return [(action, table, None) for table in request.get("RequestItems", {})]
    if "TableName" in request:
        return [(action, request["TableName"], request.get("IndexName"))]
    return [(action, None, None)]


def check_denials(entries):
    """Validate a deny_actions list; returns it as {"action", "table"} objects."""
    if not isinstance(entries, list):
        raise BadControlRequest("deny_actions is a list")
    denials = []
    for entry in entries:
        if isinstance(entry, str):
            entry = {"action": entry}
        if (not isinstance(entry, dict) or not isinstance(entry.get("action"), str)
                or set(entry) - {"action", "table"}):
            raise BadControlRequest('a denied action is "Action" or '
                                    '{"action": "Action", "table": "T"}')
        denials.append({"action": entry["action"].removeprefix("dynamodb:"),
                        "table": entry.get("table")})
    return denials


# ----------------------------------------------------------------- budgets


class TokenBucket:
    """A token bucket that starts full."""

    def __init__(self, rate, burst, now):
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def try_take(self, now, cost):
        """Take cost tokens if there are as many."""
        self.tokens = min(self.burst,
                          self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def give_back(self, cost):
        """Return tokens taken by try_take."""
        self.tokens += cost


class Budgets:
    """Write budgets per partition-key value and per table."""

    def __init__(self):
        self.lock = threading.Lock()
        self.key_limit = None    # {"rate", "burst"} or None
        self.table_limit = None
        self.buckets = {}

    def configure(self, key_limit, table_limit):
        """Set both limits (None turns one off) and refill every bucket."""
        with self.lock:
            self.key_limit = key_limit
            self.table_limit = table_limit
            self.buckets.clear()

    def enabled(self):
        """Whether any budget is on."""
        return self.key_limit is not None or self.table_limit is not None

    def admit(self, writes, all_or_nothing, cost=1):
        """Take cost tokens for each of the (table, key) writes.

        Returns one throttling reason per write (None when admitted).  With
        all_or_nothing, a single refusal gives back every token taken.
        """
        now = now_s()
        with self.lock:
            verdicts, taken = [], []
            for table, key in writes:
                reason, buckets = self.admit_one(table, key, now, cost)
                verdicts.append(reason)
                taken.extend(buckets)
            if all_or_nothing and any(verdicts):
                for bucket in taken:
                    bucket.give_back(cost)
            return verdicts

    def admit_one(self, table, key, now, cost):
        """Take cost tokens from each bucket of one write, or none at all."""
        taken = []
        for bucket, reason in self.buckets_of(table, key, now):
            if not bucket.try_take(now, cost):
                for done in taken:
                    done.give_back(cost)
                return reason, []
            taken.append(bucket)
        return None, taken

    def buckets_of(self, table, key, now):
        """The (bucket, reason when empty) pairs a write draws from."""
        pairs = []
        if self.table_limit is not None:
            pairs.append((self.bucket(("table", table), self.table_limit, now),
                          TABLE_REASON))
        if self.key_limit is not None and key is not None:
            pairs.append((self.bucket(("key", table, key), self.key_limit, now),
                          KEY_RANGE_REASON))
        return pairs

    def bucket(self, name, limit, now):
        """The bucket of that name, created full on first use."""
        if name not in self.buckets:
            self.buckets[name] = TokenBucket(float(limit["rate"]),
                                             float(limit["burst"]), now)
        return self.buckets[name]


@dataclass
class TableInfo:
    """What the proxy needs to know of a table."""

    partition_key: str
    arn: str
    sort_key: str = None

    def key_names(self):
        """The key attribute names."""
        return {self.partition_key} | ({self.sort_key} if self.sort_key else set())


class TableCatalog:
    """Key schemas and ARNs learnt from DescribeTable, cached per table."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tables = {}

    def lookup(self, table, describe):
        """TableInfo of a table, or None when the backend does not know it."""
        with self.lock:
            if table in self.tables:
                return self.tables[table]
        description = describe(table)
        if description is None:
            return None
        schema = description["Table"]
        hash_key = next(k["AttributeName"] for k in schema["KeySchema"]
                        if k["KeyType"] == "HASH")
        range_key = next((k["AttributeName"] for k in schema["KeySchema"]
                          if k["KeyType"] == "RANGE"), None)
        info = TableInfo(hash_key, schema["TableArn"], range_key)
        with self.lock:
            self.tables[table] = info
        return info

    def forget(self, table=None):
        """Drop one table's entry, or all of them."""
        with self.lock:
            if table is None:
                self.tables.clear()
            else:
                self.tables.pop(table, None)


# ------------------------------------------------------------------- stats

# The verified requests whose arrival time and key the stats keep.
SIGNATURE_LOG_MAX = 10000


class Stats:
    """Counters shown by GET /__proxy/stats."""

    def __init__(self):
        self.lock = threading.Lock()
        self.in_flight = 0
        self.reset()

    def reset(self):
        """Zero every counter (requests still in flight stay counted)."""
        with self.lock:
            self.requests = {}
            self.faults = {}
            self.throttle_reasons = {}
            self.throttled_requests = 0
            self.unprocessed_items = 0
            self.verified = 0
            self.rejected = 0
            self.access_keys = {}
            self.regions = {}
            self.signature_log = collections.deque(maxlen=SIGNATURE_LOG_MAX)
            self.capacity = {}
            self.answer_bytes = {}
            self.in_flight_max = self.in_flight
            self.mutations = {}
            self.mutation_log = []
            self.denied = {}

    def log_mutation(self, entry):
        """Log one mutate firing; count it by name when it changed something."""
        with self.lock:
            self.mutation_log.append(entry)
            if entry["applied"]:
                name = entry["mutation"]
                self.mutations[name] = self.mutations.get(name, 0) + 1

    def signatures(self):
        """The log of verified requests: [arrival, access key] pairs."""
        with self.lock:
            return list(self.signature_log)

    def take_mutation_log(self, clear):
        """The mutation log, emptied when clear is true."""
        with self.lock:
            log = self.mutation_log
            if clear:
                self.mutation_log = []
            return list(log)

    def count_request(self, action):
        """Count a DynamoDB request by action."""
        with self.lock:
            self.requests[action] = self.requests.get(action, 0) + 1

    def count_fault(self, kind):
        """Count an injected fault by kind."""
        with self.lock:
            self.faults[kind] = self.faults.get(kind, 0) + 1

    def count_denial(self, iam_action):
        """Count a request denied (deny_actions) by the IAM action refused."""
        with self.lock:
            self.denied[iam_action] = self.denied.get(iam_action, 0) + 1

    def signature(self, ok, access_key=None, arrived=None, region=None):
        """Count a verified or rejected signature; a verified one by the
        access key it was signed with and the region of its scope, logged
        with the request's arrival."""
        with self.lock:
            if ok:
                self.verified += 1
                self.access_keys[access_key] = self.access_keys.get(access_key, 0) + 1
                self.regions[region] = self.regions.get(region, 0) + 1
                self.signature_log.append([arrived, access_key])
            else:
                self.rejected += 1

    def consumed(self, body):
        """Add up the ConsumedCapacity of a DynamoDB answer, by table."""
        try:
            answer = json.loads(body)
        except ValueError:
            return
        entries = answer.get("ConsumedCapacity") if isinstance(answer, dict) else None
        if isinstance(entries, dict):
            entries = [entries]
        with self.lock:
            for entry in entries or []:
                if isinstance(entry, dict) and "TableName" in entry:
                    table = str(entry["TableName"])
                    self.capacity[table] = (self.capacity.get(table, 0.0) +
                                            float(entry.get("CapacityUnits", 0)))

    def answered(self, action, body):
        """Count the bytes of an answer DynamoDB Local gave, by action."""
        with self.lock:
            self.answer_bytes[action] = self.answer_bytes.get(action, 0) + len(body)

    def throttled(self, reasons, unprocessed_items=0):
        """Count a budget throttle: a refused request, or batch items
        returned unprocessed when unprocessed_items > 0."""
        with self.lock:
            for reason in reasons:
                self.throttle_reasons[reason] = (
                    self.throttle_reasons.get(reason, 0) + 1)
            if unprocessed_items:
                self.unprocessed_items += unprocessed_items
            else:
                self.throttled_requests += 1

    @contextlib.contextmanager
    def flight(self):
        """Track one request in flight and the high-water mark."""
        with self.lock:
            self.in_flight += 1
            self.in_flight_max = max(self.in_flight_max, self.in_flight)
        try:
            yield
        finally:
            with self.lock:
                self.in_flight -= 1

    def as_json(self, pending_faults):
        """The counters as the control API shows them."""
        with self.lock:
            return {
                "requests": dict(self.requests),
                "requests_total": sum(self.requests.values()),
                "faults": dict(self.faults),
                "faults_pending": pending_faults,
                "throttles": {
                    "requests": self.throttled_requests,
                    "unprocessed_items": self.unprocessed_items,
                    "reasons": dict(self.throttle_reasons),
                },
                "signatures": {"verified": self.verified,
                               "rejected": self.rejected,
                               "access_keys": dict(self.access_keys),
                               "regions": dict(self.regions)},
                "in_flight": self.in_flight,
                "in_flight_max": self.in_flight_max,
                "mutations": dict(self.mutations),
                "consumed_capacity": dict(self.capacity),
                "answer_bytes": dict(self.answer_bytes),
                "denied": dict(self.denied),
            }


# ------------------------------------------------------------------- proxy


class Proxy:
    """Everything the request handlers share."""

    def __init__(self, backend, credentials, verify_signatures, latency_ms):
        parsed = urllib.parse.urlsplit(backend)
        self.backend_host = parsed.hostname
        self.backend_port = parsed.port or 80
        self.credentials = credentials
        self.verifier = SignatureVerifier(credentials, clock=self.now)
        self.initial = {"latency_ms": latency_ms,
                        "verify_signatures": verify_signatures}
        self.faults = FaultQueue()
        self.budgets = Budgets()
        self.catalog = TableCatalog()
        self.stats = Stats()
        self.reset()

    def reset(self):
        """Back to the start-up state."""
        self.latency_ms = self.initial["latency_ms"]
        self.verify_signatures = self.initial["verify_signatures"]
        self.clock_offset_s = 0
        self.denials = []
        self.faults.clear()
        self.budgets.configure(None, None)
        self.catalog.forget()
        self.stats.reset()

    def config(self):
        """The current settings."""
        return {"latency_ms": self.latency_ms,
                "verify_signatures": self.verify_signatures,
                "clock_offset_s": self.clock_offset_s,
                "key_budget": self.budgets.key_limit,
                "table_budget": self.budgets.table_limit,
                "deny_actions": list(self.denials)}

    def configure(self, changes):
        """Apply a POST /__proxy/config body."""
        unknown = set(changes) - set(self.config())
        if unknown:
            raise BadControlRequest(f"unknown config keys: {sorted(unknown)}")
        if "latency_ms" in changes:
            self.latency_ms = max(0, int(changes["latency_ms"]))
        if "verify_signatures" in changes:
            self.verify_signatures = bool(changes["verify_signatures"])
        if "clock_offset_s" in changes:
            self.clock_offset_s = int(changes["clock_offset_s"])
        if "deny_actions" in changes:
            self.denials = check_denials(changes["deny_actions"])
        if "key_budget" in changes or "table_budget" in changes:
            self.budgets.configure(
                check_limit(changes.get("key_budget", self.budgets.key_limit)),
                check_limit(changes.get("table_budget",
                                        self.budgets.table_limit)))

    def now(self):
        """The proxy's time: the host's, set off by clock_offset_s (a host
        whose clock is wrong, seen from DynamoDB's side); the signatures'
        times are checked against it, and the answers' Date says it."""
        return datetime.datetime.utcnow() + datetime.timedelta(seconds=self.clock_offset_s)

    def denied(self, action, request):
        """The first permission of a request that deny_actions refuses, as
        (IAM action, table, index), or None."""
        for permission in permissions_of(action, request):
            for denial in self.denials:
                if (denial["action"] == permission[0] and
                        denial["table"] in (None, permission[1])):
                    return permission
        return None

    def signing_credentials(self):
        """Credentials for the proxy's own requests to the backend."""
        access_key, (secret, token) = next(iter(self.credentials.items()),
                                           ("proxy", ("proxy", None)))
        return Credentials(access_key, secret, token)


def check_limit(limit):
    """Validate a budget {"rate", "burst"} (or None)."""
    if limit is None:
        return None
    if not isinstance(limit, dict) or set(limit) != {"rate", "burst"}:
        raise BadControlRequest('a budget is {"rate": R, "burst": B} or null')
    if float(limit["rate"]) < 0 or float(limit["burst"]) < 1:
        raise BadControlRequest("a budget needs rate >= 0 and burst >= 1")
    return {"rate": float(limit["rate"]), "burst": float(limit["burst"])}


class Handler(FaultAnswers, BaseHTTPRequestHandler):
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
        denied = self.proxy.denied(action, request)
        if denied is not None:
            self.proxy.stats.count_denial(denied[0])
            raise self.access_denied(*denied)
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

    def access_denied(self, iam_action, table, index):
        """The AccessDeniedException of a permission deny_actions refuses."""
        try:
            auth = parse_authorization(self.headers.get("Authorization") or "")
            access_key, region = auth.access_key, auth.region
        except ProxyError:
            access_key, region = "anonymous", "us-east-1"
        resource = (f"arn:aws:dynamodb:{region}:{DENIAL_ACCOUNT}:table/"
                    f"{table if table is not None else '*'}"
                    f"{f'/index/{index}' if index else ''}")
        return ProxyError(
            400, CORAL + "AccessDeniedException",
            f"User: arn:aws:sts::{DENIAL_ACCOUNT}:assumed-role/shard_fdw_tests/"
            f"{access_key} is not authorized to perform: dynamodb:{iam_action} "
            f"on resource: {resource} because no identity-based policy allows "
            f"the dynamodb:{iam_action} action")

    def forward_within_budget(self, action, request, body):
        """Forward a write, throttling the items over budget."""
        writes = write_items(action, request)
        infos = {t: self.proxy.catalog.lookup(t, self.describe_table)
                 for t in {t for t, _ in writes}}
        keyed = [(t, partition_value(infos.get(t), item)) for t, item in writes]
        batch = action == "BatchWriteItem"
        transaction = action == "TransactWriteItems"
        verdicts = self.proxy.budgets.admit(keyed, all_or_nothing=not batch,
                                            cost=2 if transaction else 1)
        refused = [r for r in verdicts if r]
        if not refused:
            return self.forward(body)
        if transaction:
            self.proxy.stats.throttled(sorted(set(refused)))
            raise transaction_throttled(request, verdicts)
        if not batch or len(refused) == len(writes):
            self.proxy.stats.throttled(sorted(set(refused)))
            raise throttle_error(
                "ProvisionedThroughputExceededException",
                throttling_reasons([t for t, _ in writes], verdicts, infos))
        self.proxy.stats.throttled(sorted(set(refused)), len(refused))
        return self.forward_partial_batch(request, verdicts)

    def forward_partial_batch(self, request, verdicts):
        """Forward the admitted part of a batch; the rest comes back unprocessed."""
        admitted, unprocessed = {}, {}
        entries = [(t, e) for t, es in request["RequestItems"].items()
                   for e in es]
        for (table, entry), verdict in zip(entries, verdicts):
            (unprocessed if verdict else admitted).setdefault(table, []).append(
                entry)
        partial = dict(request, RequestItems=admitted)
        response = self.forward(json.dumps(partial).encode())
        if response.status != 200:
            return response
        answer = json.loads(response.body)
        merged = answer.setdefault("UnprocessedItems", {})
        for table, entries in unprocessed.items():
            merged.setdefault(table, []).extend(entries)
        new_body = json.dumps(answer).encode()
        return Response(200, response.headers, new_body).with_header(
            "x-amz-crc32", crc32(new_body))



def partition_value(info, item):
    """A hashable form of an item's partition-key value (None if unknown)."""
    if info is None or info.partition_key not in item:
        return None
    return json.dumps(item[info.partition_key], sort_keys=True)


def throttling_reasons(tables, verdicts, infos):
    """One {"reason", "resource"} per distinct (reason, table) refused."""
    seen = []
    for table, verdict in zip(tables, verdicts):
        if verdict and (verdict, table) not in seen:
            seen.append((verdict, table))
    return [{"reason": reason,
             "resource": infos[table].arn if infos.get(table) else table}
            for reason, table in seen]


def transaction_throttled(request, verdicts):
    """The TransactionCanceledException DynamoDB answers a throttled
    TransactWriteItems with: a CancellationReasons entry per action,
    ThrottlingError for each write refused (verdicts, in the order of
    write_items), None for the others."""
    writes = iter(verdicts)
    reasons = []
    for entry in request.get("TransactItems", []):
        refused = any(kind in ("Put", "Update", "Delete") and next(writes)
                      for kind in entry)
        reasons.append({"Code": "ThrottlingError", "Message": TRANSACTION_THROTTLE}
                       if refused else {"Code": "None"})
    codes = ", ".join(r["Code"] for r in reasons)
    return ProxyError(400, DDB + "TransactionCanceledException",
                      "Transaction cancelled, please refer cancellation reasons "
                      f"for specific reasons [{codes}]",
                      {"CancellationReasons": reasons})


def parse_credentials(values):
    """--credentials AKID:SECRET[:TOKEN] values -> {akid: (secret, token)}."""
    credentials = {}
    for value in values:
        parts = value.split(":", 2)
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise SystemExit(f"--credentials wants AKID:SECRET[:TOKEN], not {value!r}")
        credentials[parts[0]] = (parts[1], parts[2] if len(parts) == 3 else None)
    return credentials


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen-host", default="127.0.0.1")
    parser.add_argument("--listen-port", type=int, required=True)
    parser.add_argument("--backend", required=True,
                        help="DynamoDB Local's URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--credentials", action="append", default=[],
                        metavar="AKID:SECRET[:TOKEN]",
                        help="a key pair the proxy accepts (repeatable)")
    parser.add_argument("--verify-signatures", default=True,
                        action=argparse.BooleanOptionalAction)
    parser.add_argument("--latency-ms", type=int, default=0)
    return parser.parse_args(argv)


class Server(ThreadingHTTPServer):
    """The listening socket; a parallel Scan opens many connections at once."""

    request_queue_size = 128
    daemon_threads = True


def main(argv):
    """Run the proxy until it is killed."""
    args = parse_args(argv)
    credentials = parse_credentials(args.credentials)
    if args.verify_signatures and not credentials:
        raise SystemExit("--verify-signatures needs at least one --credentials")
    server = Server((args.listen_host, args.listen_port), Handler)
    server.proxy = Proxy(args.backend, credentials, args.verify_signatures,
                         args.latency_ms)
    host, port = server.server_address[:2]
    print(f"ddbproxy: listening on http://{host}:{port}, backend {args.backend}",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])
