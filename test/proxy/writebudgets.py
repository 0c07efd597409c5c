"""Write budgets: token buckets that throttle writes as DynamoDB does.

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

BudgetedWrites is a part of the request handler (proxyfront.Handler),
which gives it forward(), describe_table() and the shared state
(self.proxy).
"""

import json
import threading

from ddbprotocol import (DDB, BadControlRequest, ProxyError, Response, crc32,
                         now_s, throttle_error)

WRITE_ACTIONS = {
    "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem",
    "TransactWriteItems",
}
KEY_RANGE_REASON = "TableWriteKeyRangeThroughputExceeded"
TRANSACTION_THROTTLE = ("Throughput exceeds the current capacity of your table or index. "
                        "DynamoDB is automatically scaling your table or index so please "
                        "try again shortly.")
TABLE_REASON = "TableWriteProvisionedThroughputExceeded"


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


def check_limit(limit):
    """Validate a budget {"rate", "burst"} (or None)."""
    if limit is None:
        return None
    if not isinstance(limit, dict) or set(limit) != {"rate", "burst"}:
        raise BadControlRequest('a budget is {"rate": R, "burst": B} or null')
    if float(limit["rate"]) < 0 or float(limit["burst"]) < 1:
        raise BadControlRequest("a budget needs rate >= 0 and burst >= 1")
    return {"rate": float(limit["rate"]), "burst": float(limit["burst"])}


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


class BudgetedWrites:
    """The handler's forwarding of writes while budgets are on."""

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
