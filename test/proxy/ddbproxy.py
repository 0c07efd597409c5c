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

A fault spec is an object.  Common keys: "kind" (required), "action"
(X-Amz-Target operation such as "PutItem"; default any), "table" (default
any), "count" (requests it fires on, default 1), "skip" (matching requests
let through before it fires, default 0), "rate" (the share of the matching
requests it fires on, drawn from a generator seeded by "seed", default 1:
every one; with a large "count", faults at a rate).  A request whose client has
closed the connection by the time the proxy gets to it (a statement that
failed while its other requests were in flight) neither fires nor is
counted as skipped: it is forwarded, and the fault waits for the next.
Kinds and their own keys:

  status     answer an error: "status" (default 500), "error" (__type,
             default by status), "message", "when": "before" (default) or
             "after" forwarding (the write is then applied)
  throttle   answer 400 "error": ProvisionedThroughputExceededException
             (default), ThrottlingException or RequestLimitExceeded, with
             "reasons": a list of reason strings or {"reason", "resource"}
             objects; a bare string gets the table's ARN as its resource
  reset      close the connection with a TCP reset instead of answering,
             "when": "before" (default) or "after" forwarding
  slow       forward, send the headers, then drip the body over "delay_ms"
             (default 2000)
  malformed  answer 200 with a body that is not JSON ("body" to choose
             it; "\\udcXX" in it stands for the raw byte XX, so that bodies
             may hold bytes that are not UTF-8), correct Content-Length and
             x-amz-crc32; not forwarded
  truncate   forward, announce the full Content-Length, send half the
             body, close the connection
  badcrc     forward, answer the real body with a wrong x-amz-crc32
  web        answer as a plain web server would: "status" (default 404)
             with an HTML page and none of DynamoDB's headers; not
             forwarded
  unprocessed  BatchGetItem and BatchWriteItem: forward only the first
             "processed" keys or items of the request (default 0: nothing
             is forwarded) and answer the rest in UnprocessedKeys or
             UnprocessedItems (other actions go through unchanged)
  set_attribute  forward, then set top-level attribute "attribute" to
             "value" (an AttributeValue) in every item of a read's answer
             (GetItem, BatchGetItem, Query, Scan): the table's item as
             another writer left it after the read of an index, which
             lags behind its table
  mutate     forward, then rewrite the real answer before it goes back:
             "mutation" names one of the mutations below, or "seed" (an
             integer, default 0) picks one at random, the same for the
             same seed; "attributes", a list of attribute names, limits
             a value mutation to those top-level attributes.  Each firing
             is logged (see "Mutations" below).

Throttling reasons follow DynamoDB's API reference (ThrottlingReason):
"reason" is ResourceType+OperationType+LimitType, e.g.
TableWriteKeyRangeThroughputExceeded or TableWriteProvisionedThroughputExceeded,
and "resource" is the table's ARN.  The list is named "ThrottlingReasons"
in ProvisionedThroughputExceededException and RequestLimitExceeded, and
"throttlingReasons" in ThrottlingException.

Mutations.  A "mutate" fault changes a 200 answer of a read (GetItem,
BatchGetItem, Query, Scan); other answers go back unchanged, logged as not
applied.  A value mutation picks one AttributeValue of one item in the
answer at random (seeded) among those it fits (an S value for an S
mutation...), nested M and L members included, key attributes excluded;
when none fits, nothing is changed and the log says "applied": false.
Each mutation belongs to a class:

  shape     a tag with a value of the wrong JSON type: s_not_string {"S":5},
            n_not_string {"N":true}, m_not_object {"M":[]}, l_not_array
            {"L":{}}, bool_not_bool {"BOOL":"yes"}, null_false
            {"NULL":false}, set_not_array {"SS":"a"}, set_member_type
            ({"NS":[1]}, {"SS":["a",5]}), set_empty {"SS":[]}, two_tags
            (a second tag beside the first), no_tag {}
  tag       an unknown tag: tag_unknown "Z", tag_lowercase ("s", "bool"),
            tag_empty ""
  utf8      strings that are not UTF-8: utf8_raw (raw bytes such as 0xFF,
            an overlong or cut sequence, an encoded surrogate) and
            utf8_surrogate (a lone \\ud800 escape), in S values or SS members
  base64    b_bad, bs_bad: B and BS values that are not base64
  number    n_garbage "12abc", n_empty "", n_overflow "1e999", n_40digits
            (40 significant digits), in N values or NS members
  depth     deep_33, deep_500: the value wrapped in 33 or 500 levels of
            {"M": {"__deep__": ...}}, past DynamoDB's 32
  huge      huge_string: an S value with 450,000 "~" appended (past the
            400 KB item limit); huge_number: 5,000 nines
  key       key_missing: a key attribute removed from an item;
            key_malformed: its value made {"S":5} or {}; key_wrong_type:
            the key sent as B (its text in base64)
  response  items_not_array (Items an object or a string), item_not_object
            (one element of Items, or Item, not an object),
            count_not_number (Count a string or null), responses_not_object
            (BatchGetItem's Responses an array), not_object (the body is
            JSON but not an object), error_200 (an error body with status
            200)
  body      truncate_body (the body cut short, Content-Length and
            x-amz-crc32 of the cut body), truncate_stream (full length
            announced, part sent, connection closed), bad_crc
  lek       Query and Scan only.  lek_repeat: the first page gets a
            LastEvaluatedKey (the key of its first item), and a request that
            starts from that key gets the same key back; lek_cycle: the first
            page gets K1 (first item), the request from K1 gets K2 (its
            last item), the request from K2 gets K1 again.  The state is per
            stream of pages (the request without its ExclusiveStartKey);
            give the fault a "count" of a few dozen so that it outlives the
            pages.  lek_malformed: LastEvaluatedKey a string, an array or a
            key of the wrong shape.
  benign    rewrites that do not change the answer: shuffle_members
            (object members in random order at every level, arrays kept),
            whitespace (between every token), unicode_escapes (\\uXXXX and
            \\/ escapes in strings and member names, surrogate pairs for
            characters past U+FFFF), number_spellings (every N value and NS
            member as an equal number: leading zeros, trailing fractional
            zeros, or exponent form such as 4.2E+1)

  GET    /__proxy/mutations  the log of mutations since the last reset
  DELETE /__proxy/mutations  answer the log and empty it

A log entry: "mutation", "class", "action", "table", "select" (the
request's Select), "applied" (whether anything changed), and where:
"attribute" (top-level attribute name), "path" (e.g. "jm.a[2]"),
"item_key" (the key attributes of the item, as AttributeValues, before the
change); lek entries add "stream" and "repeated": true when the served
LastEvaluatedKey is one that stream had already been given.  Stats count
applied mutations by name under "mutations".

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
import base64
import collections
import contextlib
import datetime
import decimal
import http.client
import json
import random
import select
import socket
import struct
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ddbprotocol import (CORAL, DDB, JSON_TYPE, THROTTLE_ERRORS,
                         BadControlRequest, ProxyError, Response, action_name,
                         crc32, now_s, parse_json, tables_of, throttle_error)
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
STATUS_ERRORS = {
    500: ("InternalServerError", "Internal server error"),
    503: ("ServiceUnavailableException", "Service unavailable"),
}
KEY_RANGE_REASON = "TableWriteKeyRangeThroughputExceeded"
TRANSACTION_THROTTLE = ("Throughput exceeds the current capacity of your table or index. "
                        "DynamoDB is automatically scaling your table or index so please "
                        "try again shortly.")
TABLE_REASON = "TableWriteProvisionedThroughputExceeded"
FAULT_KEYS = {
    "status": {"status", "error", "message", "when"},
    "throttle": {"error", "reasons", "message"},
    "reset": {"when"},
    "slow": {"delay_ms"},
    "malformed": {"body"},
    "truncate": set(),
    "badcrc": set(),
    "web": {"status"},
    "mutate": {"mutation", "seed", "attributes"},
    "unprocessed": {"processed"},
    "set_attribute": {"attribute", "value"},
}
COMMON_FAULT_KEYS = {"kind", "action", "table", "count", "skip", "rate", "seed"}
# The IAM action each action of a transaction is authorized as.
TRANSACT_PERMISSIONS = {"Put": "PutItem", "Update": "UpdateItem",
                        "Delete": "DeleteItem",
                        "ConditionCheck": "ConditionCheckItem",
                        "Get": "GetItem"}
# The account of the ARNs a denial names (DynamoDB Local's).
DENIAL_ACCOUNT = "000000000000"
DEFAULT_MALFORMED_BODY = '{"Count":1,"Items":[{"pk":{"S":"trunc'


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


# ------------------------------------------------------------------ faults


@dataclass
class Fault:
    """One queued fault and the requests it applies to."""

    kind: str
    action: str = None
    table: str = None
    count: int = 1
    skip: int = 0
    params: dict = field(default_factory=dict)
    rate: float = 1.0
    rng: random.Random = None
    fired: int = 0
    state: dict = field(default_factory=dict)

    @classmethod
    def from_spec(cls, spec):
        """Build a Fault from its JSON spec; raise BadControlRequest."""
        if not isinstance(spec, dict) or spec.get("kind") not in FAULT_KEYS:
            raise BadControlRequest(
                f"fault spec needs a \"kind\" among {sorted(FAULT_KEYS)}")
        kind = spec["kind"]
        unknown = set(spec) - COMMON_FAULT_KEYS - FAULT_KEYS[kind]
        if unknown:
            raise BadControlRequest(
                f"unknown keys for a {kind} fault: {sorted(unknown)}")
        params = {k: v for k, v in spec.items() if k in FAULT_KEYS[kind]}
        if kind == "mutate" and "mutation" in params and params["mutation"] not in MUTATIONS:
            raise BadControlRequest(
                f"unknown mutation {params['mutation']!r}: one of {sorted(MUTATIONS)}")
        return cls(kind=kind, action=action_name(spec.get("action")) or None,
                   table=spec.get("table"), count=int(spec.get("count", 1)),
                   skip=int(spec.get("skip", 0)), params=params,
                   rate=float(spec.get("rate", 1.0)),
                   rng=random.Random(spec.get("seed", 0)))

    def matches(self, action, tables):
        """Whether a request of this action on these tables is targeted."""
        return ((self.action is None or self.action == action)
                and (self.table is None or self.table in tables))

    def as_json(self):
        """The spec as the control API shows it."""
        doc = {"kind": self.kind, "action": self.action, "table": self.table,
               "count": self.count, "skip": self.skip, "rate": self.rate}
        doc.update(self.params)
        return doc


class FaultQueue:
    """Faults in the order they were queued, consumed by matching requests."""

    def __init__(self):
        self.lock = threading.Lock()
        self.faults = []

    def add(self, fault):
        """Append a fault."""
        with self.lock:
            self.faults.append(fault)

    def clear(self):
        """Drop every fault."""
        with self.lock:
            self.faults.clear()

    def pending(self):
        """The faults still queued, as JSON."""
        with self.lock:
            return [f.as_json() for f in self.faults]

    def take(self, action, tables, client_waits):
        """The first fault this request triggers, or None.

        client_waits() says whether the request's client still waits for
        the answer; it is asked under the lock, after the fault was queued,
        so a request its client gave up on before then (a statement that
        failed and closed its other transfers) takes and skips nothing:
        the fault goes to the request that was meant to see it.
        """
        with self.lock:
            for fault in self.faults:
                if not fault.matches(action, tables):
                    continue
                if not client_waits():
                    return None
                if fault.skip > 0:
                    fault.skip -= 1
                    return None
                if fault.rate < 1.0 and fault.rng.random() >= fault.rate:
                    return None
                fault.count -= 1
                fault.fired += 1
                if fault.count <= 0:
                    self.faults.remove(fault)
                return fault
        return None


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


class Handler(BaseHTTPRequestHandler):
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

    # ---- faults

    def fault_status(self, fault, body, _tables):
        """Answer an error status, before or after forwarding."""
        status = int(fault.params.get("status", 500))
        error, message = STATUS_ERRORS.get(
            status, ("ValidationException" if status < 500
                     else "InternalServerError", f"HTTP {status}"))
        error = fault.params.get("error", error)
        if fault.params.get("when") == "after":
            self.forward(body)
        raise ProxyError(status, error if "#" in error else DDB + error,
                         fault.params.get("message", message))

    def fault_throttle(self, fault, _body, tables):
        """Answer a throttling error with the fault's reasons."""
        error = fault.params.get("error", "ProvisionedThroughputExceededException")
        if error not in THROTTLE_ERRORS:
            raise ProxyError(500, DDB + "InternalServerError",
                             f"ddbproxy: unknown throttle error {error}")
        reasons = [self.expand_reason(r, tables)
                   for r in fault.params.get("reasons", [])]
        raise throttle_error(error, reasons, fault.params.get("message"))

    def expand_reason(self, reason, tables):
        """A reason string becomes {"reason", "resource": the table ARN}."""
        if isinstance(reason, dict):
            return reason
        table = fault_table(tables)
        info = self.proxy.catalog.lookup(table, self.describe_table)
        arn = info.arn if info else (
            f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}")
        return {"reason": reason, "resource": arn}

    def fault_reset(self, fault, body, _tables):
        """Reset the connection, before or after forwarding."""
        if fault.params.get("when") == "after":
            self.forward(body)
        self.abort_connection()

    def fault_slow(self, fault, body, _tables):
        """Forward, then drip the body out over delay_ms."""
        response = self.forward(body)
        delay_s = float(fault.params.get("delay_ms", 2000)) / 1000.0
        pieces = max(1, min(10, len(response.body)))
        step = -(-len(response.body) // pieces)
        self.send_head(response, len(response.body))
        for start in range(0, len(response.body), step):
            time.sleep(delay_s / pieces)
            self.wfile.write(response.body[start:start + step])

    def fault_malformed(self, fault, _body, _tables):
        """Answer 200 with a body that is not JSON, framed correctly."""
        text = fault.params.get("body", DEFAULT_MALFORMED_BODY)
        self.send(Response.of_body(200, text.encode("utf-8", "surrogateescape")))

    def fault_truncate(self, _fault, body, _tables):
        """Forward, send half the body announced, close."""
        response = self.forward(body)
        self.send_head(response, len(response.body))
        self.wfile.write(response.body[:len(response.body) // 2])
        self.close_connection = True

    def fault_badcrc(self, _fault, body, _tables):
        """Forward, answer with a wrong x-amz-crc32."""
        response = self.forward(body)
        good = int(crc32(response.body))
        self.send(response.with_header("x-amz-crc32", str(good ^ 0x5A5A5A5A)))

    def fault_web(self, fault, _body, _tables):
        """Answer like a web server that is not DynamoDB: HTML, no
        x-amzn-RequestId or x-amz-crc32."""
        status = int(fault.params.get("status", 404))
        page = (f"<html><head><title>{status}</title></head>"
                f"<body><h1>{status}</h1></body></html>\n").encode()
        self.send(Response(status, [("Content-Type", "text/html")], page))

    def fault_unprocessed(self, fault, body, _tables):
        """Answer a batch with all but its first "processed" entries left
        unprocessed."""
        request = parse_json(body)
        action = action_name(self.headers.get("X-Amz-Target"))
        if action not in ("BatchGetItem", "BatchWriteItem"):
            self.send(self.forward(body))
            return
        processed = int(fault.params.get("processed", 0))
        kept, left = {}, {}
        for table, entries in request.get("RequestItems", {}).items():
            if action == "BatchGetItem":
                keys = entries.get("Keys", [])
                take, rest = keys[:processed], keys[processed:]
                if take:
                    kept[table] = dict(entries, Keys=take)
                if rest:
                    left[table] = dict(entries, Keys=rest)
            else:
                take, rest = entries[:processed], entries[processed:]
                if take:
                    kept[table] = take
                if rest:
                    left[table] = rest
            processed = max(0, processed - len(take))
        name = "UnprocessedKeys" if action == "BatchGetItem" else "UnprocessedItems"
        answer = {"Responses": {t: [] for t in request.get("RequestItems", {})}} \
            if action == "BatchGetItem" else {}
        if kept:
            response = self.forward(json.dumps(dict(request, RequestItems=kept)).encode())
            if response.status != 200:
                self.send(response)
                return
            answer = json.loads(response.body)
        answer.setdefault(name, {}).update(left)
        self.send(Response.of_body(200, json.dumps(answer).encode()))

    def fault_mutate(self, fault, body, tables):
        """Forward, rewrite the answer with one mutation, log it, send it."""
        response = self.forward(body)
        request = parse_json(body)
        action = action_name(self.headers.get("X-Amz-Target"))
        rng = random.Random(f"{fault.params.get('seed', 0)}:{fault.fired}")
        name = fault.params.get("mutation") or rng.choice(sorted(MUTATIONS))
        entry = {"mutation": name, "class": MUTATIONS[name][0],
                 "action": action, "table": fault_table(tables),
                 "select": request.get("Select"), "applied": False}
        doc = parse_json(response.body) if response.status == 200 else {}
        change = None
        if doc and action in READ_ACTIONS:
            change = Mutation(doc, request, action, rng, fault.state,
                              lambda table: self.key_names(table, tables),
                              fault.params.get("attributes"))
            entry["applied"] = MUTATIONS[name][1](change)
            entry.update(change.where)
        self.proxy.stats.log_mutation(entry)
        if not entry["applied"]:
            self.send(response)
            return
        new_body = change.encoded()
        mutated = Response(change.status, response.headers, new_body).with_header(
            "x-amz-crc32", crc32(new_body))
        if change.delivery == "bad_crc":
            mutated = mutated.with_header(
                "x-amz-crc32", str(int(crc32(new_body)) ^ 0x5A5A5A5A))
        if change.delivery == "truncate_stream":
            self.send_head(mutated, len(new_body))
            self.wfile.write(new_body[:change.cut])
            self.close_connection = True
            return
        self.send(mutated)

    def fault_set_attribute(self, fault, body, tables):
        """Forward, then set an attribute in every item the read answers."""
        response = self.forward(body)
        doc = parse_json(response.body) if response.status == 200 else None
        action = action_name(self.headers.get("X-Amz-Target"))
        if not isinstance(doc, dict) or action not in READ_ACTIONS:
            self.send(response)
            return
        items = [doc["Item"]] if isinstance(doc.get("Item"), dict) else \
            list(doc.get("Items") or []) + \
            [i for page in (doc.get("Responses") or {}).values() for i in page]
        for item in items:
            item[fault.params["attribute"]] = fault.params["value"]
        new_body = json.dumps(doc).encode()
        self.send(Response(response.status, response.headers, new_body).with_header(
            "x-amz-crc32", crc32(new_body)))

    def key_names(self, table, tables):
        """The key attribute names of a table (of the request's when None)."""
        info = self.proxy.catalog.lookup(table or fault_table(tables),
                                         self.describe_table)
        return info.key_names() if info else set()


FAULT_HANDLERS = {
    "status": Handler.fault_status,
    "throttle": Handler.fault_throttle,
    "reset": Handler.fault_reset,
    "slow": Handler.fault_slow,
    "malformed": Handler.fault_malformed,
    "unprocessed": Handler.fault_unprocessed,
    "truncate": Handler.fault_truncate,
    "badcrc": Handler.fault_badcrc,
    "web": Handler.fault_web,
    "mutate": Handler.fault_mutate,
    "set_attribute": Handler.fault_set_attribute,
}


# ------------------------------------------------------ response mutations


READ_ACTIONS = {"GetItem", "BatchGetItem", "Query", "Scan"}
RAW_MARK = "\x01raw{}\x01"       # stands for raw bytes until encoded()
RAW_VALUE_MARK = "\x01value{}\x01"  # stands for raw JSON text, quotes and all
DEEP_KEY = "__deep__"
HUGE_FILL = "~" * 450000
BAD_UTF8 = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\x80abc"]
BAD_BASE64 = ["!!!!", "QUJ", "Q===", "QU JD", "QUJD*A=="]
SET_TAGS = ("SS", "NS", "BS")


class Mutation:
    """One response being mutated: its document and what was changed."""

    def __init__(self, doc, request, action, rng, streams, key_names,
                 attributes=None):
        self.doc = doc
        self.request = request
        self.action = action
        self.rng = rng
        self.streams = streams      # the fault's lek state, per stream
        self.key_names = key_names  # table (None: the request's) -> names
        self.attributes = attributes  # the only attributes to change, or None
        self.where = {}             # for the log
        self.raw = []               # byte strings behind RAW_MARK
        self.raw_values = []        # JSON texts behind RAW_VALUE_MARK
        self.serialize = lambda doc: json.dumps(doc, ensure_ascii=False)
        self.body = None            # a body replacing the document
        self.status = 200
        self.delivery = "normal"    # or "bad_crc", "truncate_stream"
        self.cut = 0

    def raw_text(self, data):
        """A placeholder that encoded() turns into these raw bytes."""
        self.raw.append(data)
        return RAW_MARK.format(len(self.raw) - 1)

    def raw_value(self, text):
        """A placeholder that encoded() turns into this JSON text, which
        may be nested deeper than json.dumps can go."""
        self.raw_values.append(text.encode())
        return RAW_VALUE_MARK.format(len(self.raw_values) - 1)

    def encoded(self):
        """The response body after the mutation."""
        body = self.body
        if body is None:
            body = self.serialize(self.doc).encode()
        for i, data in enumerate(self.raw_values):
            body = body.replace(json.dumps(RAW_VALUE_MARK.format(i)).encode(), data)
        for i, data in enumerate(self.raw):
            mark = json.dumps(RAW_MARK.format(i))[1:-1].encode()
            body = body.replace(mark, data)
        return body

    def items(self):
        """(table or None, item) for every item of the answer."""
        found = []
        for name in ("Items", "Item"):
            value = self.doc.get(name)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    found.append((None, item))
        responses = self.doc.get("Responses")
        if isinstance(responses, dict):
            for table, items in responses.items():
                found.extend((table, i) for i in items if isinstance(i, dict))
        return found

    def targets(self, wants, keys=False):
        """(item, table, attribute, container, slot, value, path) of every
        AttributeValue wants() accepts: key attributes when keys, else the
        others and the members of their M and L values."""
        found = []
        for table, item in self.items():
            key_names = self.key_names(table)
            for name, value in item.items():
                if (name in key_names) != keys or (
                        self.attributes is not None and name not in self.attributes):
                    continue
                for container, slot, node, path in av_slots(
                        item, name, value, name, nested=not keys):
                    if wants(node):
                        found.append((item, table, name, container, slot,
                                      node, path))
        return found

    def change_one(self, wants, replace, keys=False):
        """Replace one AttributeValue that wants() accepts by
        replace(value, mutation); False when there is none."""
        found = self.targets(wants, keys)
        if not found:
            return False
        item, table, name, container, slot, value, path = self.rng.choice(found)
        self.note_item(item, table, name, path)
        new = replace(value, self)
        if new is None:
            del container[slot]
        else:
            container[slot] = new
        return True

    def note_item(self, item, table, name, path):
        """Log where a change is made (before it is made)."""
        key_names = self.key_names(table)
        self.where = {"attribute": name, "path": path,
                      "item_key": {k: item[k] for k in sorted(key_names)
                                   if k in item}}

    def item_key(self, item):
        """The key attributes of an item of the request's table."""
        return {k: item[k] for k in sorted(self.key_names(None)) if k in item}


def av_slots(container, slot, value, path, nested):
    """(container, slot, value, path) of an AttributeValue and, when
    nested, of every AttributeValue inside its M and L values."""
    yield container, slot, value, path
    if not nested or tag_of(value) not in ("M", "L"):
        return
    inner = value[tag_of(value)]
    if isinstance(inner, dict):
        for name, member in inner.items():
            yield from av_slots(inner, name, member, f"{path}.{name}", True)
    elif isinstance(inner, list):
        for i, member in enumerate(inner):
            yield from av_slots(inner, i, member, f"{path}[{i}]", True)


def tag_of(value):
    """The tag of an AttributeValue ({"S": "x"} -> "S"), or None."""
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    return None


def tagged(*tags):
    """A wants() for AttributeValues with one of these tags."""
    return lambda value: tag_of(value) in tags


def any_value(value):
    """A wants() for every well-formed AttributeValue."""
    return tag_of(value) is not None


def value_mutation(wants, replace, keys=False):
    """A mutation that replaces one AttributeValue wants() accepts."""
    return lambda m: m.change_one(wants, replace, keys)


def in_string(value, m, make):
    """An S value, or one SS member, rewritten by make(text, m)."""
    tag = tag_of(value)
    if tag == "S":
        return {"S": make(value["S"], m)}
    members = list(value[tag])
    i = m.rng.randrange(len(members))
    members[i] = make(members[i], m)
    return {tag: members}


def in_number(value, m, text):
    """An N value, or one NS member, replaced by text."""
    if tag_of(value) == "N":
        return {"N": text}
    members = list(value["NS"])
    members[m.rng.randrange(len(members))] = text
    return {"NS": members}


def strings_or_members(value):
    """S values and non-empty SS values."""
    return tag_of(value) == "S" or (tag_of(value) == "SS" and value["SS"])


def numbers_or_members(value):
    """N values and non-empty NS values."""
    return tag_of(value) == "N" or (tag_of(value) == "NS" and value["NS"])


def split_at(text, m):
    """A random place in text."""
    return m.rng.randint(0, len(text))


def with_raw_bytes(text, m):
    """text with bytes that are not UTF-8 inside."""
    at = split_at(text, m)
    return text[:at] + m.raw_text(m.rng.choice(BAD_UTF8)) + text[at:]


def with_lone_surrogate(text, m):
    """text with a \\ud800 escape that no low surrogate follows."""
    at = split_at(text, m)
    return text[:at] + m.raw_text(b"\\ud800") + text[at:]


def wrong_member(value, _m):
    """A set with a member of the wrong JSON type."""
    tag = tag_of(value)
    wrong = {"SS": 5, "NS": 1, "BS": True}[tag]
    return {tag: list(value[tag]) + [wrong]}


def second_tag(value, _m):
    """The value with another tag beside its own."""
    extra = ("N", "1") if tag_of(value) != "N" else ("S", "x")
    return dict(value, **{extra[0]: extra[1]})


def bad_base64_member(value, m):
    """A BS with one member that is not base64."""
    members = list(value["BS"])
    members[m.rng.randrange(len(members))] = m.rng.choice(BAD_BASE64)
    return {"BS": members}


def wrapped(levels):
    """The value wrapped in levels of {"M": {DEEP_KEY: ...}}."""
    def wrap(value, m):
        opening = json.dumps({"M": {DEEP_KEY: 0}})[:-3]
        return m.raw_value(opening * levels + json.dumps(value, ensure_ascii=False)
                           + "}}" * levels)
    return wrap


def wrong_key_type(value, _m):
    """A key as B, its text base64-encoded (no column reads B as text)."""
    text = value[tag_of(value)]
    return {"B": base64.b64encode(str(text).encode()).decode()}


# ---- whole-response mutations


def response_member(m, name, choices):
    """Replace a top-level member of the answer that is there."""
    if name not in m.doc:
        return False
    m.where = {"path": name}
    m.doc[name] = m.rng.choice(choices)
    return True


def item_not_object(m):
    """One element of Items (or Item) is not an object."""
    bad = m.rng.choice([5, [], "x", None])
    if isinstance(m.doc.get("Items"), list) and m.doc["Items"]:
        i = m.rng.randrange(len(m.doc["Items"]))
        m.where = {"path": f"Items[{i}]", "item_key": m.item_key(m.doc["Items"][i])}
        m.doc["Items"][i] = bad
        return True
    if isinstance(m.doc.get("Item"), dict):
        m.where = {"path": "Item", "item_key": m.item_key(m.doc["Item"])}
        m.doc["Item"] = [] if bad is None else bad
        return True
    return False


def not_object(m):
    """A body that is JSON, but not an object."""
    m.body = m.rng.choice([b"[]", b"null", b"5", b'"Items"'])
    return True


def error_200(m):
    """An error body answered with status 200."""
    error = m.rng.choice([("ResourceNotFoundException", "Requested resource not found"),
                          ("ValidationException", "One or more parameter values were invalid"),
                          ("InternalServerError", "Internal server error")])
    m.body = json.dumps({"__type": DDB + error[0], "message": error[1]}).encode()
    m.where = {"path": error[0]}
    return True


def truncate_body(m):
    """The body cut short, framed as if it were whole."""
    whole = m.encoded()
    m.body = whole[:m.rng.randint(1, len(whole) - 1)]
    return True


def truncate_stream(m):
    """The full length announced, part of the body sent."""
    m.cut = m.rng.randint(0, len(m.encoded()) - 1)
    m.delivery = "truncate_stream"
    return True


def bad_crc(m):
    """The real body with a wrong x-amz-crc32."""
    m.delivery = "bad_crc"
    return True


def lek_mutation(cycle):
    """lek_repeat (cycle False) and lek_cycle: see the module docstring."""
    def mutate(m):
        if m.action not in ("Query", "Scan"):
            return False
        start = m.request.get("ExclusiveStartKey")
        stream_id = json.dumps({k: v for k, v in m.request.items()
                                if k != "ExclusiveStartKey"}, sort_keys=True)
        stream = m.streams.get(stream_id)
        if start is None:
            items = [i for i in m.doc.get("Items") or [] if isinstance(i, dict)]
            if not items:
                return False
            stream = {"keys": [m.item_key(items[0]), m.item_key(items[-1])],
                      "given": []}
            m.streams[stream_id] = stream
            served = stream["keys"][0]
        elif stream is None:
            return False
        elif cycle:
            first, last = stream["keys"]
            served = last if start == first else first
        else:
            served = start
        m.where = {"path": "LastEvaluatedKey", "stream": stream_id[:200],
                   "repeated": served in stream["given"]}
        stream["given"].append(served)
        m.doc["LastEvaluatedKey"] = served
        return True
    return mutate


def lek_malformed(m):
    """A LastEvaluatedKey of the wrong shape."""
    if m.action not in ("Query", "Scan"):
        return False
    key_names = sorted(m.key_names(None))
    m.where = {"path": "LastEvaluatedKey"}
    m.doc["LastEvaluatedKey"] = m.rng.choice(
        ["x", [], {name: {"S": 5} for name in key_names}])
    return True


# ---- benign rewrites


def shuffle_members(m):
    """Object members in random order, at every level."""
    def shuffle(value):
        if isinstance(value, dict):
            pairs = [(k, shuffle(v)) for k, v in value.items()]
            m.rng.shuffle(pairs)
            return dict(pairs)
        if isinstance(value, list):
            return [shuffle(v) for v in value]
        return value
    m.doc = shuffle(m.doc)
    return True


def rewrite_json(m, spaces, escapes):
    """Serialise with whitespace between tokens and/or escaped strings."""
    rng = m.rng

    def gap():
        return rng.choice(["", " ", "\n", "\t", "\r\n  ", "   "]) if spaces else ""

    def string(text):
        if not escapes:
            return json.dumps(text, ensure_ascii=False)
        out = []
        for ch in text:
            if rng.random() < 0.5:
                out.append(json.dumps(ch, ensure_ascii=False)[1:-1])
            elif ch == "/":
                out.append("\\/")
            elif ord(ch) > 0xFFFF:
                code = ord(ch) - 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04X}")
            else:
                out.append(f"\\u{ord(ch):04{rng.choice('xX')}}")
        return '"' + "".join(out) + '"'

    def emit(value):
        if isinstance(value, dict):
            members = [gap() + string(k) + gap() + ":" + gap() + emit(v) + gap()
                       for k, v in value.items()]
            return "{" + ",".join(members) + gap() + "}"
        if isinstance(value, list):
            return "[" + ",".join(gap() + emit(v) + gap() for v in value) + gap() + "]"
        if isinstance(value, str):
            return string(value)
        return json.dumps(value)

    m.serialize = lambda doc: gap() + emit(doc) + gap()
    return True


def respell(text, rng):
    """An equal number, spelt differently (DynamoDB accepts each form)."""
    try:
        number = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return text
    sign, digits, exponent = number.as_tuple()
    minus = "-" if sign else ""
    body = text.lstrip("-")
    choice = rng.randrange(3)
    if choice == 0:
        return f"{minus}00{body}"
    if choice == 1 and "e" not in body.lower():
        return text + ("00" if "." in body else ".000")
    shown = "".join(map(str, digits))
    mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
    power = exponent + len(shown) - 1
    return f"{minus}{mantissa}{rng.choice('eE')}{rng.choice(['+', ''])}{power}".replace("+-", "-")


def number_spellings(m):
    """Every N value and NS member spelt differently."""
    found = [False]

    def visit(value):
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "N" and isinstance(v, str):
                    value[k] = respell(v, m.rng)
                    found[0] = True
                elif k == "NS" and isinstance(v, list):
                    value[k] = [respell(x, m.rng) if isinstance(x, str) else x
                                for x in v]
                    found[0] = True
                else:
                    visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)
    for name in ("Items", "Item", "Responses", "LastEvaluatedKey"):
        visit(m.doc.get(name))
    return found[0]


# name -> (class, function(Mutation) -> whether anything changed)
MUTATIONS = {
    "s_not_string": ("shape", value_mutation(tagged("S"), lambda v, m: {"S": 5})),
    "n_not_string": ("shape", value_mutation(tagged("N"), lambda v, m: {"N": True})),
    "m_not_object": ("shape", value_mutation(tagged("M"), lambda v, m: {"M": []})),
    "l_not_array": ("shape", value_mutation(tagged("L"), lambda v, m: {"L": {}})),
    "bool_not_bool": ("shape", value_mutation(tagged("BOOL"),
                                              lambda v, m: {"BOOL": "yes"})),
    "null_false": ("shape", value_mutation(any_value, lambda v, m: {"NULL": False})),
    "set_not_array": ("shape", value_mutation(
        tagged(*SET_TAGS), lambda v, m: {tag_of(v): "a"})),
    "set_member_type": ("shape", value_mutation(tagged(*SET_TAGS), wrong_member)),
    "set_empty": ("shape", value_mutation(tagged(*SET_TAGS),
                                          lambda v, m: {tag_of(v): []})),
    "two_tags": ("shape", value_mutation(any_value, second_tag)),
    "no_tag": ("shape", value_mutation(any_value, lambda v, m: {})),
    "tag_unknown": ("tag", value_mutation(any_value,
                                          lambda v, m: {"Z": v[tag_of(v)]})),
    "tag_lowercase": ("tag", value_mutation(
        any_value, lambda v, m: {tag_of(v).lower(): v[tag_of(v)]})),
    "tag_empty": ("tag", value_mutation(any_value, lambda v, m: {"": v[tag_of(v)]})),
    "utf8_raw": ("utf8", value_mutation(
        strings_or_members, lambda v, m: in_string(v, m, with_raw_bytes))),
    "utf8_surrogate": ("utf8", value_mutation(
        strings_or_members, lambda v, m: in_string(v, m, with_lone_surrogate))),
    "b_bad": ("base64", value_mutation(
        tagged("B"), lambda v, m: {"B": m.rng.choice(BAD_BASE64)})),
    "bs_bad": ("base64", value_mutation(tagged("BS"), bad_base64_member)),
    "n_garbage": ("number", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, "12abc"))),
    "n_empty": ("number", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, ""))),
    "n_overflow": ("number", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, "1e999"))),
    "n_40digits": ("number", value_mutation(
        numbers_or_members,
        lambda v, m: in_number(v, m, "1234567890123456789012345678901234567890"))),
    "deep_33": ("depth", value_mutation(any_value, wrapped(33))),
    "deep_500": ("depth", value_mutation(any_value, wrapped(500))),
    "huge_string": ("huge", value_mutation(
        tagged("S"), lambda v, m: {"S": v["S"] + HUGE_FILL})),
    "huge_number": ("huge", value_mutation(
        numbers_or_members, lambda v, m: in_number(v, m, "9" * 5000))),
    "key_missing": ("key", value_mutation(any_value, lambda v, m: None, keys=True)),
    "key_malformed": ("key", value_mutation(
        any_value, lambda v, m: m.rng.choice([{"S": 5}, {}]), keys=True)),
    "key_wrong_type": ("key", value_mutation(any_value, wrong_key_type, keys=True)),
    "items_not_array": ("response", lambda m: response_member(m, "Items", [{}, "x"])),
    "item_not_object": ("response", item_not_object),
    "count_not_number": ("response", lambda m: response_member(m, "Count", ["3", None])),
    "responses_not_object": ("response",
                             lambda m: response_member(m, "Responses", [[]])),
    "not_object": ("response", not_object),
    "error_200": ("response", error_200),
    "truncate_body": ("body", truncate_body),
    "truncate_stream": ("body", truncate_stream),
    "bad_crc": ("body", bad_crc),
    "lek_repeat": ("lek", lek_mutation(cycle=False)),
    "lek_cycle": ("lek", lek_mutation(cycle=True)),
    "lek_malformed": ("lek", lek_malformed),
    "shuffle_members": ("benign", shuffle_members),
    "whitespace": ("benign", lambda m: rewrite_json(m, spaces=True, escapes=False)),
    "unicode_escapes": ("benign", lambda m: rewrite_json(m, spaces=False, escapes=True)),
    "number_spellings": ("benign", number_spellings),
}


def partition_value(info, item):
    """A hashable form of an item's partition-key value (None if unknown)."""
    if info is None or info.partition_key not in item:
        return None
    return json.dumps(item[info.partition_key], sort_keys=True)


def fault_table(tables):
    """The table a fault's reasons name: the request's first."""
    return sorted(tables)[0] if tables else "unknown"


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
