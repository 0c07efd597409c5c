#!/usr/bin/python3
"""The connections to DynamoDB as production has them: resets on a
backend's first request, stalled attempts, idle connections closed by the
other side, TCP keepalive, and a host whose clock is off.

Each case runs through a wire-level front (test/proxy/wirefront.py) before
the test bed's DynamoDB proxy, over plain http and over TLS, with faults
queued for the requests the case makes, and reads in a fresh backend so
that its first request is the one that meets them:

* a backend's first request gets through connections reset at accept (on
  TLS: during the handshake) and answers cut short, as any later request
  does, after as many attempts as faults; so does the DescribeTable with
  which CREATE FOREIGN TABLE checks the declared keys;
* an attempt whose answer stalls is abandoned after attempt_timeout_ms and
  retried, well within request_timeout_ms, which still bounds the whole;
* a connection idle longer than max_idle_connection_s is not used again:
  a front that closes connections idle longer than that, as load
  balancers do, never sees a request on one (and with the limit above the
  front's, it does, which is what the limit prevents);
* the connections are kept alive by TCP keepalive (ss shows the timer);
* when DynamoDB's clock is an hour off (the proxy's clock set off), the
  first request is refused as "Signature expired" (or "not yet current"),
  signed again with the time of the answer's Date, and succeeds; later
  requests of the backend are signed right the first time.  A signature
  refused for another reason is not retried.

Ends with "N passed, N failed".
"""

import os
import re
import subprocess
import sys
import time

import bed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proxy"))
from wirefront import WireFront  # noqa: E402

runner, DATABASE, sql, client, tables = bed.scratch("conns")
fronts = {}
ROWS = 40


def declare(server, url, ca_file=None, **options):
    """Server over url (its own options given), its user mapping and
    foreign table kv_<server> over the test's table."""
    given = {"endpoint": url, **options}
    if ca_file:
        given["ca_file"] = ca_file
    sql(f"""DROP SERVER IF EXISTS {server} CASCADE;
            CREATE SERVER {server} FOREIGN DATA WRAPPER shard_fdw OPTIONS
              ({", ".join(f"{k} '{v}'" for k, v in given.items())});
            CREATE USER MAPPING FOR CURRENT_USER SERVER {server}
              OPTIONS (access_key_id '{bed.env("SHARD_FDW_ACCESS_KEY")}',
                       secret_access_key '{bed.env("SHARD_FDW_SECRET_KEY")}');
            CREATE FOREIGN TABLE kv_{server} (k text, v int) SERVER {server}
              OPTIONS (table '{tables[0]}', partition_key 'k');""")


STATS = "SELECT requests, attempts, retries FROM shard_fdw_stats()"


def fresh_read(server):
    """In a fresh backend: the sum read through server (a Scan of 16
    segments, 16 requests in flight together), and the backend's requests,
    attempts and retries; the sum is None when the read failed, with
    psql's message."""
    result = bed.psql(f"SELECT sum(v) FROM kv_{server}; {STATS};",
                      check=False, database=DATABASE)
    if result.returncode != 0:
        return None, result.stderr
    lines = result.stdout.splitlines()
    return int(lines[0]), tuple(int(n) for n in lines[1].split(bed.FIELD_SEPARATOR))


def retried(stats, times):
    """The stats of a read whose requests were retried times in all."""
    requests, attempts, retries = stats
    return retries == times and attempts == requests + times


def each_front(function):
    """Run a test on the plain front and on the TLS front."""
    def both():
        for name, front in fronts.items():
            front.reset()
            front.clear_queue()
            function(name, front)
    both.__name__ = function.__name__
    return both


@runner.test
@each_front
def first_request_gets_through_resets(name, front):
    declare(f"first_{name}", front.url, front.ca_file)
    front.queue({"kind": "connect_reset", "count": 2})
    total, stats = fresh_read(f"first_{name}")
    assert total == sum(range(ROWS)), stats
    assert retried(stats, 2), f"requests, attempts, retries: {stats}"
    assert front.stats()["faults"].get("connect_reset") == 2, front.stats()
    cut = ["reset_header", "close_after_headers"] + (["tls_abrupt"] if name == "tls" else [])
    for kind in cut:
        front.queue({"kind": kind, "action": "Scan"})
        total, stats = fresh_read(f"first_{name}")
        assert total == sum(range(ROWS)), f"{kind}: {stats}"
        assert retried(stats, 1), f"{kind}: requests, attempts, retries: {stats}"
    print(f"     {name}: first requests through connect_reset x2, {', '.join(cut)}")


@runner.test
@each_front
def declaration_check_gets_through_a_reset(name, front):
    """CREATE FOREIGN TABLE checks the declared keys with DescribeTable, in
    a fresh backend: a reset there is retried, not a WARNING."""
    declare(f"decl_{name}", front.url, front.ca_file)
    front.queue({"kind": "connect_reset"})
    result = bed.psql(f"""CREATE FOREIGN TABLE decl_{name}_again (k text, v int)
                            SERVER decl_{name} OPTIONS (table '{tables[0]}', partition_key 'k')""",
                      check=False, database=DATABASE)
    assert result.returncode == 0 and "WARNING" not in result.stderr, result.stderr
    assert front.stats()["faults"].get("connect_reset") == 1, front.stats()


@runner.test
@each_front
def stalled_attempt_is_retried(name, front):
    declare(f"stall_{name}", front.url, front.ca_file, attempt_timeout_ms=400,
            request_timeout_ms=20000)
    front.configure(late_ms=5000)
    front.queue({"kind": "late", "action": "Scan"})
    started = time.monotonic()
    total, stats = fresh_read(f"stall_{name}")
    seconds = time.monotonic() - started
    assert total == sum(range(ROWS)), stats
    assert retried(stats, 1), f"requests, attempts, retries: {stats}"
    # 0.4 s for the stalled attempt, a backoff of 25 ms at most, the rest
    assert seconds < 3.0, f"{seconds:.2f} s"
    print(f"     {name}: a stalled Scan retried, the read took {seconds:.2f} s")


@runner.test
@each_front
def request_timeout_bounds_the_retries(name, front):
    declare(f"bound_{name}", front.url, front.ca_file, attempt_timeout_ms=300,
            request_timeout_ms=1000, max_retries=50)
    front.configure(late_ms=5000)
    front.queue({"kind": "late", "action": "Scan", "count": 100})
    started = time.monotonic()
    total, message = fresh_read(f"bound_{name}")
    seconds = time.monotonic() - started
    assert total is None, "the read succeeded"
    # the last attempt ends at the request's deadline, or at its own a little
    # before it, when no time is left for another
    assert re.search(r"no answer within the (request's 1000 ms \(request_timeout_ms\)|"
                     r"attempt's 300 ms \(attempt_timeout_ms\))", message), message
    assert seconds < 3.0, f"{seconds:.2f} s"
    attempts = int(re.search(r"\((\d+) attempts\)", message).group(1))
    assert 3 <= attempts <= 5, message
    print(f"     {name}: {message.splitlines()[1].strip()} after {seconds:.2f} s")


def idle_closes(front, server, pause_s):
    """Two reads in one backend pause_s apart, the front closing
    connections idle past 1.5 s when a request comes on one; the idle
    closes the front made."""
    front.configure(idle_ms=1500, rates={"idle_close": 1.0})
    session = bed.Session(DATABASE)
    try:
        assert session.run(f"SELECT sum(v) FROM kv_{server}") == [str(sum(range(ROWS)))]
        time.sleep(pause_s)
        assert session.run(f"SELECT sum(v) FROM kv_{server}") == [str(sum(range(ROWS)))]
    finally:
        session.close()
        front.configure(rates={})
    return front.stats()["faults"].get("idle_close", 0)


@runner.test
@each_front
def idle_connections_expire(name, front):
    declare(f"idle_{name}", front.url, front.ca_file, max_idle_connection_s=1)
    assert idle_closes(front, f"idle_{name}", 2.0) == 0
    declare(f"idle_{name}", front.url, front.ca_file, max_idle_connection_s=30)
    stale = idle_closes(front, f"idle_{name}", 2.0)
    assert stale > 0, "the front closed no idle connection: the test shows nothing"
    print(f"     {name}: no stale connection used with max_idle_connection_s 1; "
          f"{stale} closed under a request with 30")


@runner.test
def connections_use_tcp_keepalive():
    front = fronts["plain"]
    declare("keepalive", front.url)
    port = front.url.rsplit(":", 1)[1]
    session = bed.Session(DATABASE)
    try:
        session.run("SELECT sum(v) FROM kv_keepalive")
        shown = subprocess.run(["ss", "-tnoH", "state", "established", f"dport = :{port}"],
                               capture_output=True, text=True, check=True).stdout
    finally:
        session.close()
    assert shown.strip(), "no connection to the front"
    assert all("timer:(keepalive" in line for line in shown.splitlines()), shown
    print("     " + shown.splitlines()[0].split()[-1])


def clock_case(offset_s, words):
    """The proxy's clock set off by offset_s: each request of the first
    read of a backend is refused once, then succeeds, and the server log
    says words; the next read needs no retry."""
    declare("clock", bed.env("SHARD_FDW_ENDPOINT"))
    bed.reset_proxy()
    bed.configure(clock_offset_s=offset_s)
    try:
        session = bed.Session(DATABASE, field_separator=bed.FIELD_SEPARATOR)
        try:
            assert session.run("SELECT sum(v) FROM kv_clock") == [str(sum(range(ROWS)))]
            first = [int(n) for n in session.run(STATS)[0].split(bed.FIELD_SEPARATOR)]
            session.run("SELECT sum(v) FROM kv_clock")
            second = [int(n) for n in session.run(STATS)[0].split(bed.FIELD_SEPARATOR)]
        finally:
            session.close()
        rejected = bed.stats()["signatures"]["rejected"]
    finally:
        bed.reset_proxy()
    # every request of the first read signed again once, none of the second
    assert retried(first, first[0]), first
    assert retried([second[0] - first[0], second[1] - first[1], second[2] - first[2]], 0), second
    assert rejected == first[0], rejected
    with open(bed.env("SHARD_FDW_PG_LOG"), encoding="utf-8", errors="replace") as log:
        assert re.search(words, log.read()), f"no {words!r} in the server log"


@runner.test
def clock_behind_aws_is_corrected():
    # the Date has whole seconds: the offset learnt is within one of the hour
    clock_case(3600, r"clock is 3(599|600|601) s behind DynamoDB's")


@runner.test
def clock_ahead_of_aws_is_corrected():
    clock_case(-3600, r"clock is 3(599|600|601) s ahead of DynamoDB's")


@runner.test
def clock_is_mended_with_no_retries_left():
    """max_retries 0 still signs again once: the refusal was the clock's."""
    declare("clock0", bed.env("SHARD_FDW_ENDPOINT"), max_retries=0)
    bed.configure(clock_offset_s=1800)
    try:
        total, stats = fresh_read("clock0")
    finally:
        bed.reset_proxy()
    assert total == sum(range(ROWS)), stats


@runner.test
def other_signature_errors_are_not_retried():
    declare("badkey", bed.env("SHARD_FDW_ENDPOINT"))
    sql("""ALTER USER MAPPING FOR CURRENT_USER SERVER badkey
           OPTIONS (SET secret_access_key 'not-the-secret')""")
    total, message = fresh_read("badkey")
    assert total is None and "InvalidSignatureException" in message, message
    assert "(HTTP 400, 1 attempt)" in message, message


def set_up():
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql("CREATE EXTENSION shard_fdw")
    table = bed.new_table(client, tables, "conns", "k")
    for i in range(ROWS):
        client.put_item(TableName=table, Item={"k": {"S": f"k{i}"}, "v": {"N": str(i)}})
    upstream = bed.env("SHARD_FDW_ENDPOINT")
    fronts["plain"] = WireFront(upstream)
    fronts["tls"] = WireFront(upstream, tls=True)
    os.chmod(os.path.dirname(fronts["tls"].ca_file), 0o755)
    os.chmod(fronts["tls"].ca_file, 0o644)


def tear_down():
    for front in fronts.values():
        front.stop()
    bed.drop_scratch(client, tables, DATABASE)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
