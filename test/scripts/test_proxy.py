#!/usr/bin/python3
"""Scripted test of the DynamoDB proxy (test/proxy/ddbproxy.py) itself.

Checks that signature verification accepts boto3's requests and rejects
tampered ones, that every fault kind produces what it claims, and that the
write budgets throttle hot keys the way DynamoDB does.  Run by test/check.sh
against the proxy it started; ends with "N passed, N failed".
"""

import binascii
import datetime
import email.utils
import http.client
import json
import threading
import time
import urllib.parse

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

import bed

runner = bed.Runner()
client = None
HOT = None      # table with pk + sk, for writes and budgets
OTHER = None    # table with pk only, for matching faults by table
HOT_ARN = None


# ---------------------------------------------------------------- helpers


def endpoint():
    """(host, port) of the proxy's DynamoDB endpoint."""
    parsed = urllib.parse.urlsplit(bed.env("SHARD_FDW_ENDPOINT"))
    return parsed.hostname, parsed.port


def signed(action, payload, access_key=None, secret_key=None, when=None,
           token=None):
    """An AWSRequest for a DynamoDB action, SigV4-signed at time `when`."""
    host, port = endpoint()
    body = json.dumps(payload).encode()
    request = AWSRequest(method="POST", url=f"http://{host}:{port}/", data=body,
                         headers={"Host": f"{host}:{port}",
                                  "Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": f"DynamoDB_20120810.{action}"})
    stamp = (when or datetime.datetime.utcnow()).strftime("%Y%m%dT%H%M%SZ")
    request.context["timestamp"] = stamp
    request.headers["X-Amz-Date"] = stamp
    if token:
        request.headers["X-Amz-Security-Token"] = token
    auth = SigV4Auth(Credentials(access_key or bed.env("SHARD_FDW_ACCESS_KEY"),
                                 secret_key or bed.env("SHARD_FDW_SECRET_KEY")),
                     "dynamodb", "us-east-1")
    canonical = auth.canonical_request(request)
    signature = auth.signature(auth.string_to_sign(request, canonical), request)
    names = auth.signed_headers(auth.headers_to_sign(request))
    request.headers["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={auth.scope(request)}, "
        f"SignedHeaders={names}, Signature={signature}")
    return request


def send(request, connection=None):
    """Send an AWSRequest; returns (response, body bytes)."""
    host, port = endpoint()
    connection = connection or http.client.HTTPConnection(host, port, timeout=10)
    connection.request("POST", "/", request.data, dict(request.headers.items()))
    response = connection.getresponse()
    return response, response.read()


def call(action, payload, **signing):
    """A signed raw call; returns (status, headers, decoded JSON or raw body)."""
    response, body = send(signed(action, payload, **signing))
    try:
        doc = json.loads(body)
    except ValueError:
        doc = body
    return response.status, response, doc


def error_type(doc):
    """'ns#Name' -> 'Name'."""
    return doc.get("__type", "").rpartition("#")[2]


def client_error(function, **kwargs):
    """The ClientError a boto3 call raises (fails the test if none)."""
    try:
        function(**kwargs)
    except ClientError as err:
        return err
    raise AssertionError(f"{function.__name__} succeeded, expected an error")


def wait_for(condition, seconds=10):
    """Poll condition() until it holds; fail after seconds."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited in vain"
        time.sleep(0.01)


def crc32(data):
    return str(binascii.crc32(data) & 0xFFFFFFFF)


def put(pk, sk, table=None):
    """PutItem payload for the HOT table."""
    return {"TableName": table or HOT,
            "Item": {"pk": {"S": pk}, "sk": {"S": sk}}}


def stored(pk, sk):
    """Whether the item is in DynamoDB Local (read directly)."""
    item = bed.ddb(direct=True).get_item(
        TableName=HOT, Key={"pk": {"S": pk}, "sk": {"S": sk}},
        ConsistentRead=True)
    return "Item" in item


def get_item_payload():
    return {"TableName": HOT, "Key": {"pk": {"S": "g"}, "sk": {"S": "1"}}}


# ----------------------------------------------------------------- setup


def set_up():
    """Fresh proxy state and two tables created through the proxy."""
    global client, HOT, OTHER, HOT_ARN
    bed.reset_proxy()
    client = bed.ddb()
    HOT, OTHER = bed.unique_name("proxy_hot"), bed.unique_name("proxy_other")
    HOT_ARN = bed.create_table(client, HOT, "pk", "sk")["TableArn"]
    bed.create_table(client, OTHER, "pk")
    client.put_item(TableName=HOT, Item={"pk": {"S": "g"}, "sk": {"S": "1"}})


def tear_down():
    bed.drop_scratch(bed.ddb(direct=True), (HOT, OTHER))


# ------------------------------------------------------------ signatures


@runner.test
def boto3_requests_are_verified():
    before = bed.stats()["signatures"]
    client.get_item(**get_item_payload())
    after = bed.stats()["signatures"]
    assert after["verified"] == before["verified"] + 1, after
    assert after["rejected"] == before["rejected"], after


@runner.test
def tampered_body_is_rejected():
    request = signed("GetItem", get_item_payload())
    request.data = request.data.replace(b'"g"', b'"h"')
    response, body = send(request)
    doc = json.loads(body)
    assert response.status == 400, response.status
    assert error_type(doc) == "InvalidSignatureException", doc
    assert doc["message"].startswith("The request signature we calculated "
                                     "does not match"), doc
    assert bed.stats()["signatures"]["rejected"] >= 1


@runner.test
def wrong_secret_is_rejected():
    err = client_error(bed.ddb(secret_key="not-the-secret").get_item,
                       **get_item_payload())
    assert err.response["Error"]["Code"] == "InvalidSignatureException", err


@runner.test
def unknown_access_key_is_rejected():
    err = client_error(bed.ddb(access_key="AKIDUNKNOWN").get_item,
                       **get_item_payload())
    assert err.response["Error"]["Code"] == "UnrecognizedClientException", err


@runner.test
def missing_authorization_is_rejected():
    request = signed("GetItem", get_item_payload())
    del request.headers["Authorization"]
    response, body = send(request)
    assert response.status == 400
    assert error_type(json.loads(body)) == "MissingAuthenticationTokenException"


@runner.test
def session_token_must_be_signed():
    client_with_token = bed.ddb(session_token="regress-session-token")
    client_with_token.get_item(**get_item_payload())
    request = signed("GetItem", get_item_payload())
    request.headers["X-Amz-Security-Token"] = "added-after-signing"
    response, body = send(request)
    assert response.status == 400
    assert error_type(json.loads(body)) == "InvalidSignatureException", body


@runner.test
def stale_signature_is_rejected():
    old = datetime.datetime.utcnow() - datetime.timedelta(minutes=20)
    status, _, doc = call("GetItem", get_item_payload(), when=old)
    assert status == 400 and "Signature expired" in doc["message"], doc
    assert error_type(doc) == "InvalidSignatureException", doc
    future = datetime.datetime.utcnow() + datetime.timedelta(minutes=20)
    status, _, doc = call("GetItem", get_item_payload(), when=future)
    assert status == 400 and "Signature not yet current" in doc["message"], doc


@runner.test
def proxy_clock_can_be_set_off():
    """With its clock an hour ahead, the proxy refuses a signature of now
    as expired, accepts one of an hour ahead, and its Date says its time."""
    bed.configure(clock_offset_s=3600)
    try:
        status, response, doc = call("GetItem", get_item_payload())
        assert status == 400 and "Signature expired" in doc["message"], doc
        date = email.utils.parsedate_to_datetime(response.getheader("Date"))
        ahead = date.timestamp() - time.time()
        assert 3590 < ahead < 3610, response.getheader("Date")
        later = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        status, _, doc = call("GetItem", get_item_payload(), when=later)
        assert status == 200, doc
    finally:
        bed.configure(clock_offset_s=0)


# ---------------------------------------------------------------- faults


@runner.test
def status_500_then_success():
    bed.add_fault(kind="status", status=500, action="GetItem", table=HOT)
    err = client_error(client.get_item, **get_item_payload())
    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert err.response["Error"]["Code"] == "InternalServerError", err
    client.get_item(**get_item_payload())


@runner.test
def status_503():
    bed.add_fault(kind="status", status=503, action="GetItem")
    err = client_error(client.get_item, **get_item_payload())
    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert err.response["Error"]["Code"] == "ServiceUnavailableException", err


@runner.test
def status_after_forwarding_applies_the_write():
    bed.add_fault(kind="status", status=500, action="PutItem", when="after")
    err = client_error(client.put_item, **put("after500", "1"))
    assert err.response["Error"]["Code"] == "InternalServerError"
    assert stored("after500", "1"), "the write should have been applied"


@runner.test
def throttle_with_reasons():
    bed.add_fault(kind="throttle", action="PutItem",
                  reasons=["TableWriteKeyRangeThroughputExceeded"])
    status, _, doc = call("PutItem", put("throttled", "1"))
    assert status == 400, status
    assert error_type(doc) == "ProvisionedThroughputExceededException", doc
    assert doc["ThrottlingReasons"] == [
        {"reason": "TableWriteKeyRangeThroughputExceeded",
         "resource": HOT_ARN}], doc
    assert not stored("throttled", "1"), "a throttled write must not apply"


@runner.test
def throttling_exception_names_its_list_in_lower_camel_case():
    bed.add_fault(kind="throttle", action="GetItem", error="ThrottlingException",
                  reasons=[{"reason": "TableReadKeyRangeThroughputExceeded",
                            "resource": "arn:test"}])
    status, _, doc = call("GetItem", get_item_payload())
    assert status == 400 and error_type(doc) == "ThrottlingException", doc
    assert doc["throttlingReasons"][0]["resource"] == "arn:test", doc


@runner.test
def throttle_without_reasons():
    bed.add_fault(kind="throttle", action="GetItem")
    status, _, doc = call("GetItem", get_item_payload())
    assert status == 400 and "ThrottlingReasons" not in doc, doc


@runner.test
def reset_before_forwarding_drops_the_write():
    bed.add_fault(kind="reset", action="PutItem")
    try:
        call("PutItem", put("reset-before", "1"))
    except (ConnectionError, http.client.RemoteDisconnected):
        pass
    else:
        raise AssertionError("the connection was not reset")
    assert not stored("reset-before", "1")


@runner.test
def reset_after_forwarding_applies_the_write():
    bed.add_fault(kind="reset", action="PutItem", when="after")
    try:
        call("PutItem", put("reset-after", "1"))
    except (ConnectionError, http.client.RemoteDisconnected):
        pass
    else:
        raise AssertionError("the connection was not reset")
    assert stored("reset-after", "1")


@runner.test
def slow_body_drips():
    bed.add_fault(kind="slow", action="GetItem", delay_ms=800)
    host, port = endpoint()
    connection = http.client.HTTPConnection(host, port, timeout=10)
    request = signed("GetItem", get_item_payload())
    started = time.monotonic()
    connection.request("POST", "/", request.data, dict(request.headers.items()))
    response = connection.getresponse()
    headers_after = time.monotonic() - started
    body = response.read()
    total = time.monotonic() - started
    assert headers_after < 0.5, headers_after
    assert total >= 0.7, total
    assert json.loads(body)["Item"]["pk"] == {"S": "g"}
    assert response.getheader("x-amz-crc32") == crc32(body)


@runner.test
def malformed_body_has_valid_framing():
    bed.add_fault(kind="malformed", action="GetItem")
    status, response, doc = call("GetItem", get_item_payload())
    assert status == 200 and isinstance(doc, bytes), doc
    assert int(response.getheader("Content-Length")) == len(doc)
    assert response.getheader("x-amz-crc32") == crc32(doc)


@runner.test
def truncated_body():
    bed.add_fault(kind="truncate", action="GetItem")
    try:
        call("GetItem", get_item_payload())
    except http.client.IncompleteRead as err:
        assert err.expected > 0, err
    else:
        raise AssertionError("the body was not truncated")


@runner.test
def bad_crc():
    bed.add_fault(kind="badcrc", action="GetItem")
    host, port = endpoint()
    response, body = send(signed("GetItem", get_item_payload()),
                          http.client.HTTPConnection(host, port, timeout=10))
    assert response.status == 200 and json.loads(body)["Item"]
    assert response.getheader("x-amz-crc32") != crc32(body)


@runner.test
def faults_match_table_count_and_skip():
    bed.add_fault(kind="status", status=500, table=OTHER, count=2)
    client.get_item(**get_item_payload())
    key = {"TableName": OTHER, "Key": {"pk": {"S": "x"}}}
    for _ in range(2):
        client_error(client.get_item, **key)
    client.get_item(**key)
    bed.add_fault(kind="status", status=500, action="GetItem", skip=1)
    client.get_item(**get_item_payload())
    client_error(client.get_item, **get_item_payload())
    client.get_item(**get_item_payload())


@runner.test
def fault_queue_api():
    bed.add_fault(kind="status", action="Query", count=3)
    bed.proxy("POST", "/faults", [{"kind": "badcrc"}, {"kind": "truncate"}])
    pending = bed.proxy("GET", "/faults")
    assert [f["kind"] for f in pending] == ["status", "badcrc", "truncate"], pending
    bed.clear_faults()
    assert bed.proxy("GET", "/faults") == []
    for bad in ({"kind": "nonsense"}, {"kind": "reset", "delay_ms": 5}):
        try:
            bed.proxy("POST", "/faults", bad)
        except AssertionError as err:
            assert ": 400 " in str(err), err
        else:
            raise AssertionError(f"{bad} was accepted")


@runner.test
def request_given_up_takes_no_fault():
    # a request sent before the fault was queued, whose client closed the
    # connection before the proxy got to it, leaves the fault to the next
    bed.configure(latency_ms=500)
    try:
        host, port = endpoint()
        before = bed.stats()["requests"].get("GetItem", 0)
        connection = http.client.HTTPConnection(host, port, timeout=10)
        request = signed("GetItem", get_item_payload())
        connection.request("POST", "/", request.data, dict(request.headers.items()))
        wait_for(lambda: bed.stats()["requests"].get("GetItem", 0) > before)
        connection.close()
        bed.add_fault(kind="status", status=500, action="GetItem")
        wait_for(lambda: bed.stats()["in_flight"] == 0)
    finally:
        bed.configure(latency_ms=0)
    err = client_error(client.get_item, **get_item_payload())
    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 500, err.response


@runner.test
def stats_count_faults_and_actions():
    bed.reset_proxy()
    bed.add_fault(kind="status", action="GetItem")
    client_error(client.get_item, **get_item_payload())
    client.get_item(**get_item_payload())
    counters = bed.stats()
    assert counters["requests"]["GetItem"] == 2, counters
    assert counters["faults"] == {"status": 1}, counters
    assert counters["faults_pending"] == 0, counters


# --------------------------------------------------- latency and parallelism


@runner.test
def latency_is_added():
    bed.configure(latency_ms=300)
    try:
        started = time.monotonic()
        client.get_item(**get_item_payload())
        assert time.monotonic() - started >= 0.3
    finally:
        bed.configure(latency_ms=0)


@runner.test
def in_flight_high_water_mark():
    bed.reset_proxy()
    bed.configure(latency_ms=400)
    try:
        workers = [threading.Thread(target=bed.ddb().get_item,
                                    kwargs=get_item_payload())
                   for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        bed.configure(latency_ms=0)
    assert bed.stats()["in_flight_max"] >= 4, bed.stats()


@runner.test
def keep_alive():
    host, port = endpoint()
    connection = http.client.HTTPConnection(host, port, timeout=10)
    sockets = set()
    for _ in range(3):
        response, _ = send(signed("GetItem", get_item_payload()), connection)
        assert response.status == 200 and not response.will_close
        sockets.add(id(connection.sock))
    assert len(sockets) == 1, "the connection was not kept open"


# ---------------------------------------------------------------- budgets


@runner.test
def key_budget_throttles_the_hot_key():
    bed.configure(key_budget={"rate": 0, "burst": 3})
    try:
        for sk in ("1", "2", "3"):
            client.put_item(**put("hotkey", sk))
        status, _, doc = call("PutItem", put("hotkey", "4"))
        client.put_item(**put("coldkey", "1"))
    finally:
        bed.configure(key_budget=None)
    assert status == 400, doc
    assert error_type(doc) == "ProvisionedThroughputExceededException", doc
    assert doc["ThrottlingReasons"] == [
        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": HOT_ARN}]
    assert not stored("hotkey", "4")
    assert bed.stats()["throttles"]["requests"] >= 1


@runner.test
def batch_write_returns_unprocessed_items():
    bed.configure(key_budget={"rate": 0, "burst": 2})
    try:
        items = [{"PutRequest": {"Item": put("batchkey", str(n))["Item"]}}
                 for n in range(5)]
        answer = client.batch_write_item(RequestItems={HOT: items})
        unprocessed = answer["UnprocessedItems"].get(HOT, [])
        err = client_error(client.batch_write_item,
                           RequestItems={HOT: items[:2]})
    finally:
        bed.configure(key_budget=None)
    assert len(unprocessed) == 3, answer
    written = [n for n in range(5) if stored("batchkey", str(n))]
    assert len(written) == 2, written
    assert err.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert bed.stats()["throttles"]["unprocessed_items"] >= 3


@runner.test
def transact_write_is_throttled_whole():
    """A TransactWriteItems over budget is cancelled as DynamoDB cancels
    one: TransactionCanceledException, a ThrottlingError reason for each
    write refused; none of it is written, and it keeps no token.  A
    transactional write takes two tokens an item (two write units)."""
    bed.configure(key_budget={"rate": 0, "burst": 3})
    try:
        status, _, doc = call("TransactWriteItems", {"TransactItems": [
            {"Put": put("txkey", "1")}, {"Put": put("txkey", "2")}]})
        client.put_item(**put("txkey", "3"))
    finally:
        bed.configure(key_budget=None)
    assert status == 400, doc
    assert error_type(doc) == "TransactionCanceledException", doc
    assert [r["Code"] for r in doc["CancellationReasons"]] == ["None", "ThrottlingError"], doc
    assert not stored("txkey", "1") and not stored("txkey", "2")
    assert stored("txkey", "3"), "the refused transaction kept its tokens"


@runner.test
def table_budget_names_a_table_level_reason():
    bed.configure(table_budget={"rate": 0, "burst": 2})
    try:
        client.put_item(**put("t1", "1"))
        client.put_item(**put("t2", "1"))
        status, _, doc = call("PutItem", put("t3", "1"))
    finally:
        bed.configure(table_budget=None)
    assert status == 400, doc
    assert doc["ThrottlingReasons"] == [
        {"reason": "TableWriteProvisionedThroughputExceeded",
         "resource": HOT_ARN}], doc


def denial(doc, iam_action, resource):
    """Whether doc is the AccessDeniedException of iam_action on resource."""
    return (error_type(doc) == "AccessDeniedException" and
            doc["__type"].startswith("com.amazon.coral.service#") and
            f"is not authorized to perform: dynamodb:{iam_action} on resource: "
            f"{resource} because no identity-based policy allows the "
            f"dynamodb:{iam_action} action" in doc["message"])


@runner.test
def denied_actions_answer_access_denied():
    """deny_actions refuses an IAM action as DynamoDB does, on every table
    or on one, and forwards nothing; the others go through."""
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{HOT}"
    bed.configure(deny_actions=["dynamodb:GetItem",
                                {"action": "PutItem", "table": OTHER}])
    try:
        status, _, doc = call("GetItem", get_item_payload())
        assert status == 400 and denial(doc, "GetItem", arn), doc
        status, _, doc = call("PutItem", {"TableName": OTHER,
                                          "Item": {"pk": {"S": "d"}}})
        assert status == 400 and denial(doc, "PutItem", arn.replace(HOT, OTHER)), doc
        client.put_item(**put("d", "1"))
        assert bed.stats()["denied"] == {"GetItem": 1, "PutItem": 1}, bed.stats()
    finally:
        bed.configure(deny_actions=[])
    assert stored("d", "1")
    assert "Item" not in bed.ddb(direct=True).get_item(
        TableName=OTHER, Key={"pk": {"S": "d"}}, ConsistentRead=True)


@runner.test
def denials_follow_iam_actions():
    """A transaction needs its actions' own permissions, a query of an
    index is on the index's ARN, ListTables on every table."""
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{HOT}"
    bed.configure(deny_actions=["ConditionCheckItem", "Query", "ListTables"])
    try:
        status, _, doc = call("TransactWriteItems", {"TransactItems": [
            {"Put": put("tx", "1")},
            {"ConditionCheck": {"TableName": HOT,
                                "Key": {"pk": {"S": "tx"}, "sk": {"S": "2"}},
                                "ConditionExpression": "attribute_not_exists(pk)"}}]})
        assert status == 400 and denial(doc, "ConditionCheckItem", arn), doc
        status, _, doc = call("Query", {
            "TableName": HOT, "IndexName": "idx",
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "g"}}})
        assert denial(doc, "Query", arn + "/index/idx"), doc
        status, _, doc = call("ListTables", {})
        assert denial(doc, "ListTables",
                      "arn:aws:dynamodb:us-east-1:000000000000:table/*"), doc
        status, _, doc = call("PutItem", put("tx", "3"))
        assert status == 200, doc
    finally:
        bed.configure(deny_actions=[])
    assert not stored("tx", "1")


@runner.test
def deny_actions_are_checked():
    for bad in ("Query", [5], [{"table": "T"}], [{"action": "Query", "index": "I"}]):
        try:
            bed.configure(deny_actions=bad)
        except AssertionError as err:
            assert ": 400 " in str(err), err
        else:
            raise AssertionError(f"deny_actions {bad!r} accepted")
    assert bed.proxy("GET", "/config")["deny_actions"] == []


@runner.test
def reset_restores_the_start_up_state():
    bed.configure(latency_ms=5, key_budget={"rate": 1, "burst": 1},
                  deny_actions=["Scan"])
    bed.add_fault(kind="reset")
    bed.reset_proxy()
    config = bed.proxy("GET", "/config")
    assert config == {"latency_ms": 0, "verify_signatures": True, "clock_offset_s": 0,
                      "key_budget": None, "table_budget": None,
                      "deny_actions": []}, config
    counters = bed.stats()
    assert counters["requests_total"] == 0 and counters["faults_pending"] == 0


if __name__ == "__main__":
    runner.main(set_up, tear_down)
