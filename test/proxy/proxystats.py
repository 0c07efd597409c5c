"""The proxy's counters and logs, as GET /__proxy/stats shows them.

Requests by action, faults fired by kind, budget throttles and their
reasons, signatures verified and rejected (by access key and region, with
a log of the latest verified requests for GET /__proxy/signatures), the
ConsumedCapacity DynamoDB answered by table, the bytes of its answers by
action, requests in flight and their high-water mark, mutations applied
and their log (GET /__proxy/mutations), and denials by IAM action.
"""

import collections
import contextlib
import json
import threading

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
