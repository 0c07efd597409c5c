#!/usr/bin/python3
"""Promptness and robustness of one backend: cancels, timeouts, fan-out, memory.

With the proxy holding every request for seconds, a statement_timeout and a
pg_cancel_backend must end the statement within a second, and the same
session must then answer the next query correctly (the aborted requests'
connections are not reused).  A query over 10 shards must have its 10
requests in flight at once (the proxy's high-water mark) and take about one
round trip, not ten; over 60 shards, all 60 (more than the 16 a server
with max_concurrency unset uses otherwise), unless the server's
max_concurrency says fewer.  Reading a million rows in one statement must not
raise the backend's memory as it goes, and scanning thousands of items
statement after statement must not raise its resident floor.  Ends with
"N passed, N failed".
"""

import statistics
import threading
import time

import bed

runner = bed.Runner()
DATABASE = bed.unique_name("cancel")
SHARDS = 10
WIDE_SHARDS = 60        # more than max_concurrency's old fixed 16
CAPPED = 8              # the max_concurrency of server capped
SLOW_MS = 3000
FANOUT_MS = 200
BIG_ITEMS = 3000
PAYLOAD = 1000
RESCANS = 334
MEDIAN_SLACK_KIB = 1024
STATEMENTS = 40
FLOOR_SLACK_KIB = 2048
client = None
tables = []
leaderboard = []


# ---------------------------------------------------------------- helpers


def open_session():
    """A psql session of this script's database, its backend's pid in .pid."""
    opened = bed.Session(DATABASE, field_separator=bed.FIELD_SEPARATOR)
    opened.pid = opened.backend_pid()
    return opened


sql = bed.in_database(DATABASE)


def status_kib(pid, field):
    """A memory figure of a process from /proc (RssAnon), in KiB."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    return int(fields[field].split()[0])


def wait_for_idle_proxy():
    """Wait until requests left sleeping by an aborted statement are done."""
    deadline = time.monotonic() + SLOW_MS / 1000 + 5
    while bed.stats()["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bed.stats()["in_flight"] == 0, bed.stats()


def new_table(partition_key, sort_key=None):
    """A fresh DynamoDB table with string keys, deleted at the end."""
    return bed.new_table(client, tables, "cancel", partition_key, sort_key)


def assert_did_not_wait(seconds):
    """The query after an abort did not wait for the aborted requests'
    answers, which come SLOW_MS after they were sent."""
    limit = SLOW_MS / 1000 / 2
    assert seconds < limit, (f"the next query took {seconds:.3f} s: did it wait "
                             "for the aborted requests?")


def expect_error(lines, message):
    """The output holds the error message."""
    assert any(message in line for line in lines), f"expected {message!r}, got {lines}"


# ------------------------------------------------------------------ setup


def set_up():
    """A database with two servers, one straight to DynamoDB Local (for
    loading) and one through the proxy (for the timing tests), and the
    tables: kv (key-value), lb (10 calculated shards), big (thousands of
    items of 1 KB)."""
    global client
    client = bed.ddb(direct=True)
    bed.psql(f"CREATE DATABASE {DATABASE}")
    credentials = (f"access_key_id '{bed.env('SHARD_FDW_ACCESS_KEY')}', "
                   f"secret_access_key '{bed.env('SHARD_FDW_SECRET_KEY')}'")
    kv, lb, big = new_table("k"), new_table("pk", "sk"), new_table("k")
    sql(f"""
        CREATE EXTENSION shard_fdw;
        CREATE SERVER direct FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_DIRECT_ENDPOINT")}');
        CREATE SERVER proxied FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}');
        CREATE SERVER capped FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}',
                   max_concurrency '{CAPPED}');
        CREATE USER MAPPING FOR CURRENT_USER SERVER direct OPTIONS ({credentials});
        CREATE USER MAPPING FOR CURRENT_USER SERVER proxied OPTIONS ({credentials});
        CREATE USER MAPPING FOR CURRENT_USER SERVER capped OPTIONS ({credentials});
        CREATE FOREIGN TABLE kv (k text, v integer)
          SERVER proxied OPTIONS (table '{kv}', partition_key 'k');
        CREATE FOREIGN TABLE kv_load (k text, v integer)
          SERVER direct OPTIONS (table '{kv}', partition_key 'k');
        CREATE FOREIGN TABLE big (k text, payload text)
          SERVER direct OPTIONS (table '{big}', partition_key 'k');
        INSERT INTO kv_load SELECT 'k' || i, i * 11 FROM generate_series(1, 20) i;""")
    wide = new_table("pk", "sk")
    for server, name, table, shards in (
            ("proxied", "lb", lb, SHARDS), ("direct", "lb_load", lb, SHARDS),
            ("proxied", "wide", wide, WIDE_SHARDS), ("capped", "wide_capped", wide, WIDE_SHARDS),
            ("direct", "wide_load", wide, WIDE_SHARDS)):
        sql(f"""CREATE FOREIGN TABLE {name} (
                  game_id text NOT NULL, player_id text NOT NULL, score bigint NOT NULL)
                SERVER {server} OPTIONS (table '{table}',
                  partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
                  sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
                  shards '{shards}', shard_strategy 'calculated', shard_by 'player_id',
                  shard_hash 'fnv1a_32')""")
    leaderboard.extend(("g1", f"player{i}", i * 37 % 1000) for i in range(200))
    for name in ("lb_load", "wide_load"):
        sql(f"INSERT INTO {name} VALUES " +
            ", ".join(f"('{g}', '{p}', {s})" for g, p, s in leaderboard))
    load_big(big)


def load_big(table):
    """BIG_ITEMS items of about PAYLOAD bytes, written with BatchWriteItem."""
    items = [{"PutRequest": {"Item": {"k": {"S": f"item{i:05}"},
                                      "payload": {"S": f"{i:05}" * (PAYLOAD // 5)}}}}
             for i in range(BIG_ITEMS)]
    for start in range(0, len(items), 25):
        pending = {table: items[start:start + 25]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending)["UnprocessedItems"]


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


# ------------------------------------------------------------------ tests


def fan_out(query):
    """Run query with the proxy slow: (rows, seconds, in flight at most)."""
    wait_for_idle_proxy()
    session = open_session()
    try:
        session.run("SELECT count(*) FROM kv")          # connections warmed up
        bed.reset_proxy()
        bed.configure(latency_ms=FANOUT_MS)
        lines = session.run(query)
        seconds = session.seconds
        high_water = bed.stats()["in_flight_max"]
    finally:
        bed.configure(latency_ms=0)
        session.close()
    return lines, seconds, high_water


@runner.test
def requests_to_ten_shards_are_in_flight_together():
    lines, seconds, high_water = fan_out(
        "SELECT count(*), sum(score) FROM lb WHERE game_id = 'g1'")
    print(f"     {SHARDS} shards in {seconds:.3f} s, {high_water} requests in flight at most")
    expected = f"{len(leaderboard)}{bed.FIELD_SEPARATOR}{sum(s for _, _, s in leaderboard)}"
    assert lines == [expected], lines
    assert high_water >= SHARDS, f"at most {high_water} requests were in flight at once"
    limit = 2 * FANOUT_MS / 1000 + 0.2
    assert seconds < limit, f"{seconds:.3f} s for {SHARDS} shards (limit {limit:.1f} s)"


def top_ten(table):
    """A top-10 of table with the proxy slow: (rows, in flight at most)."""
    lines, _, high_water = fan_out(f"SELECT player_id FROM {table} WHERE game_id = 'g1' "
                                   "ORDER BY score DESC, player_id LIMIT 10")
    return lines, high_water


@runner.test
def concurrency_follows_the_shards_read():
    """Without max_concurrency, a read of 60 shards has all 60 requests in
    flight at once; with max_concurrency 8, at most 8, same rows."""
    top = [p for _, p, _ in sorted(leaderboard, key=lambda r: (-r[2], r[1]))[:10]]
    lines, high_water = top_ten("wide")
    assert lines == top, lines
    assert high_water >= WIDE_SHARDS, f"at most {high_water} requests in flight"
    lines, capped_water = top_ten("wide_capped")
    assert lines == top, lines
    assert capped_water <= CAPPED, f"{capped_water} requests in flight"
    print(f"     {WIDE_SHARDS} shards: {high_water} in flight at most; "
          f"max_concurrency {CAPPED}: {capped_water}")


@runner.test
def statement_timeout_ends_a_keyed_query_promptly():
    session = open_session()
    try:
        session.run("SET statement_timeout = '200ms'")
        bed.configure(latency_ms=SLOW_MS)
        lines = session.run("SELECT v FROM kv WHERE k = 'k1'")
        seconds = session.seconds
        bed.configure(latency_ms=0)
        session.run("RESET statement_timeout")
        after = session.run("SELECT k, v FROM kv WHERE k = 'k2'")
        after_seconds = session.seconds
    finally:
        bed.configure(latency_ms=0)
        session.close()
    print(f"     ended after {seconds:.3f} s")
    expect_error(lines, "canceling statement due to statement timeout")
    assert seconds < 1.0, f"the timeout took {seconds:.3f} s to end the query"
    assert after == [f"k2{bed.FIELD_SEPARATOR}22"], f"next query in the session: {after}"
    assert_did_not_wait(after_seconds)


@runner.test
def cancel_ends_a_slow_scan_promptly():
    session = open_session()
    outcome = {}

    def scan():
        outcome["lines"] = session.run("SELECT count(*) FROM lb")
        outcome["ended"] = time.monotonic()

    try:
        bed.configure(latency_ms=SLOW_MS)
        worker = threading.Thread(target=scan)
        worker.start()
        time.sleep(0.5)
        cancelled = time.monotonic()
        bed.psql(f"SELECT pg_cancel_backend({session.pid})")
        worker.join(timeout=SLOW_MS / 1000 + 10)
        assert not worker.is_alive(), "the scan did not end"
        bed.configure(latency_ms=0)
        after = session.run("SELECT count(*), min(player_id) FROM lb")
        after_seconds = session.seconds
    finally:
        bed.configure(latency_ms=0)
        session.close()
    expect_error(outcome["lines"], "canceling statement due to user request")
    took = outcome["ended"] - cancelled
    print(f"     ended {took:.3f} s after the cancel")
    assert took < 1.0, f"the cancel took {took:.3f} s to end the scan"
    expected = f"{len(leaderboard)}{bed.FIELD_SEPARATOR}{min(p for _, p, _ in leaderboard)}"
    assert after == [expected], f"next query in the session: {after}"
    assert_did_not_wait(after_seconds)


@runner.test
def a_million_row_scan_does_not_grow_the_backend():
    """One statement reads the table's items RESCANS times over (a nested
    loop rescans the foreign scan), a million rows in all, while this test
    samples the backend's anonymous resident memory: its median over the
    second half of the statement must be within MEDIAN_SLACK_KIB of its
    median over the first half.  Anything kept per row or per page (a
    palloc in the query's context, a parsed page, a curl handle) would
    climb steadily: two bytes a row is a megabyte over the second half.
    Peaks are not compared: a sample taken while several pages are parsed
    at once reads 15 to 25 MB whether or not anything is kept.  JIT is
    off: the LLVM pages it maps are not ours."""
    session = open_session()
    samples = []
    outcome = {}

    def scan():
        outcome["lines"] = session.run(rescanning_scan(RESCANS))
        outcome["seconds"] = session.seconds

    try:
        session.run("SET jit = off")
        session.run("SET enable_material = off")
        plan = session.run("EXPLAIN (COSTS OFF) " + rescanning_scan(RESCANS))
        assert not any("Materialize" in line for line in plan), plan
        assert rescanned(plan), plan
        worker = threading.Thread(target=scan)
        worker.start()
        while worker.is_alive():
            samples.append(status_kib(session.pid, "RssAnon"))
            time.sleep(0.05)
        worker.join()
    finally:
        session.close()
    rows = RESCANS * BIG_ITEMS
    assert outcome["lines"] == [scan_totals(RESCANS)], outcome["lines"]
    assert len(samples) >= 10, f"only {len(samples)} samples in {outcome['seconds']:.2f} s"
    half = len(samples) // 2
    first, second = statistics.median(samples[:half]), statistics.median(samples[half:])
    print(f"     {rows} rows ({rows * PAYLOAD // 2**20} MiB) in {outcome['seconds']:.2f} s; "
          f"RssAnon median {first:.0f} KiB in the first half, {second:.0f} KiB in the second "
          f"(peak {max(samples)} KiB)")
    assert second - first < MEDIAN_SLACK_KIB, (
        f"anonymous memory grew by {second - first:.0f} KiB over {rows // 2} rows")


@runner.test
def repeated_scans_do_not_grow_the_backend():
    """Anonymous resident memory after each of STATEMENTS scans in one
    session: the floor of the last ten must not be more than
    FLOOR_SLACK_KIB above the floor of the ten after the warm-up (freed
    memory comes and goes; a leak raises the floor statement after
    statement)."""
    session = open_session()
    resident = []
    try:
        for _ in range(STATEMENTS):
            lines = session.run(rescanning_scan(1))
            assert lines == [scan_totals(1)], lines
            resident.append(status_kib(session.pid, "RssAnon"))
    finally:
        session.close()
    before, after = min(resident[5:15]), min(resident[-10:])
    print(f"     RssAnon after each scan (KiB): {resident}")
    assert after - before < FLOOR_SLACK_KIB, (
        f"anonymous memory grew by {after - before} KiB over {STATEMENTS - 15} scans "
        f"of {BIG_ITEMS * PAYLOAD // 1024} KiB each")


def rescanning_scan(passes):
    """A statement that reads every item of big `passes` times."""
    return ("SELECT count(*), sum(length(b.payload)) "
            f"FROM generate_series(1, {passes}) g, "
            "LATERAL (SELECT payload FROM big WHERE g > 0 OFFSET 0) b")


def rescanned(plan):
    """The plan reads big on the inner side of the nested loop (printed
    after the outer side), so the foreign scan itself runs once per pass."""
    lines = [line.strip() for line in plan]
    outer = next(i for i, line in enumerate(lines) if "Function Scan" in line)
    inner = next(i for i, line in enumerate(lines) if "Foreign Scan on big" in line)
    return outer < inner


def scan_totals(passes):
    """What rescanning_scan(passes) returns."""
    return f"{passes * BIG_ITEMS}{bed.FIELD_SEPARATOR}{passes * BIG_ITEMS * PAYLOAD}"


if __name__ == "__main__":
    runner.main(set_up, tear_down)
