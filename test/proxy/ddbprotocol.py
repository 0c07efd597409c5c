"""DynamoDB's JSON protocol as the proxy speaks it, shared by its modules.

The namespaces of DynamoDB's error types, the errors the proxy answers
itself (ProxyError, and BadControlRequest for a control API call), the
answers it sends (Response: DynamoDB's headers and x-amz-crc32), the
throttling errors and the members that carry their reasons, and how a
request's action, body and tables are read.
"""

import binascii
import json
import time
import uuid
from dataclasses import dataclass

DDB = "com.amazonaws.dynamodb.v20120810#"
CORAL = "com.amazon.coral.service#"
JSON_TYPE = "application/x-amz-json-1.0"
THROTTLE_ERRORS = {
    "ProvisionedThroughputExceededException": (
        "ThrottlingReasons",
        "The level of configured provisioned throughput for the table was "
        "exceeded. Consider increasing your provisioning level with the "
        "UpdateTable API."),
    "ThrottlingException": (
        "throttlingReasons",
        "Throughput exceeds the current capacity of your table or index."),
    "RequestLimitExceeded": (
        "ThrottlingReasons",
        "Throughput exceeds the current throughput limit for your account."),
}


class ProxyError(Exception):
    """A request the proxy answers itself with a DynamoDB-style error."""

    def __init__(self, status, error_type, message, extra=None):
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.extra = extra or {}

    def body(self):
        """The JSON error body DynamoDB would send."""
        doc = {"__type": self.error_type, "message": self.message}
        doc.update(self.extra)
        return json.dumps(doc).encode()


class BadControlRequest(Exception):
    """A control API call that cannot be honoured."""


def crc32(data):
    """The x-amz-crc32 header value of a body."""
    return str(binascii.crc32(data) & 0xFFFFFFFF)


def action_name(target):
    """'DynamoDB_20120810.PutItem' -> 'PutItem'."""
    return (target or "").rpartition(".")[2]


def now_s():
    """A monotonic clock, in seconds."""
    return time.monotonic()


def tables_of(action, request):
    """The table names a DynamoDB request touches."""
    if "TableName" in request:
        return {request["TableName"]}
    if action in ("BatchGetItem", "BatchWriteItem"):
        return set(request.get("RequestItems", {}))
    if action in ("TransactGetItems", "TransactWriteItems"):
        return {
            op["TableName"]
            for entry in request.get("TransactItems", [])
            for op in entry.values() if "TableName" in op
        }
    return set()


def parse_json(body):
    """The request body as a dict ({} when it is not a JSON object)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def throttle_error(error, reasons, message=None):
    """A throttling error with its reasons under the right member name."""
    member, default_message = THROTTLE_ERRORS[error]
    extra = {member: reasons} if reasons else {}
    return ProxyError(400, DDB + error, message or default_message, extra)


@dataclass
class Response:
    """A response about to be sent to the client."""

    status: int
    headers: list
    body: bytes

    @classmethod
    def json_error(cls, error):
        """The response for a ProxyError."""
        return cls.of_body(error.status, error.body())

    @classmethod
    def of_body(cls, status, body):
        """A response with DynamoDB's usual headers."""
        return cls(status, [("Content-Type", JSON_TYPE),
                            ("x-amzn-RequestId", uuid.uuid4().hex),
                            ("x-amz-crc32", crc32(body))], body)

    def with_header(self, name, value):
        """A copy with one header replaced."""
        headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()]
        return Response(self.status, headers + [(name, value)], self.body)
