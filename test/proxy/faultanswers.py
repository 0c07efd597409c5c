"""What a fault does to the request it fires on, one method per kind.

FaultAnswers is a part of the request handler (proxyfront.Handler), which
gives it forward(), send(), send_head(), abort_connection(),
describe_table() and the shared state (self.proxy); FAULT_HANDLERS maps a
fault's kind to its method.  The kinds and their keys are listed in
faultspecs.py, the mutations of a "mutate" fault in answermutations.py.
"""

import json
import random
import time

from answermutations import MUTATIONS, READ_ACTIONS, Mutation
from ddbprotocol import (DDB, THROTTLE_ERRORS, ProxyError, Response,
                         action_name, crc32, parse_json, throttle_error)

STATUS_ERRORS = {
    500: ("InternalServerError", "Internal server error"),
    503: ("ServiceUnavailableException", "Service unavailable"),
}
DEFAULT_MALFORMED_BODY = '{"Count":1,"Items":[{"pk":{"S":"trunc'


class FaultAnswers:
    """The handler's answers to the requests a fault fires on."""

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
    "status": FaultAnswers.fault_status,
    "throttle": FaultAnswers.fault_throttle,
    "reset": FaultAnswers.fault_reset,
    "slow": FaultAnswers.fault_slow,
    "malformed": FaultAnswers.fault_malformed,
    "unprocessed": FaultAnswers.fault_unprocessed,
    "truncate": FaultAnswers.fault_truncate,
    "badcrc": FaultAnswers.fault_badcrc,
    "web": FaultAnswers.fault_web,
    "mutate": FaultAnswers.fault_mutate,
    "set_attribute": FaultAnswers.fault_set_attribute,
}


def fault_table(tables):
    """The table a fault's reasons name: the request's first."""
    return sorted(tables)[0] if tables else "unknown"
