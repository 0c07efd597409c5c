"""Fault specs: how a fault is queued, and which requests it fires on.

A fault is queued through the control API (POST /__proxy/faults) as a spec,
an object.  Common keys: "kind" (required), "action"
(X-Amz-Target operation such as "PutItem"; default any), "table" (default
any), "count" (requests it fires on, default 1), "skip" (matching requests
let through before it fires, default 0), "rate" (the share of the matching
requests it fires on, drawn from a generator seeded by "seed", default 1:
every one; with a large "count", faults at a rate).  A request whose client has
closed the connection by the time the proxy gets to it (a statement that
failed while its other requests were in flight) neither fires nor is
counted as skipped: it is forwarded, and the fault waits for the next.
Kinds and their own keys (what each does is in faultanswers.py):

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
             "mutation" names one of the mutations of answermutations.py,
             or "seed" (an integer, default 0) picks one at random, the
             same for the same seed; "attributes", a list of attribute
             names, limits a value mutation to those top-level attributes.
             Each firing is logged (see answermutations.py).

Throttling reasons follow DynamoDB's API reference (ThrottlingReason):
"reason" is ResourceType+OperationType+LimitType, e.g.
TableWriteKeyRangeThroughputExceeded or TableWriteProvisionedThroughputExceeded,
and "resource" is the table's ARN.  The list is named "ThrottlingReasons"
in ProvisionedThroughputExceededException and RequestLimitExceeded, and
"throttlingReasons" in ThrottlingException.
"""

import random
import threading
from dataclasses import dataclass, field

from answermutations import MUTATIONS
from ddbprotocol import BadControlRequest, action_name

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
