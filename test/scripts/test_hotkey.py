#!/usr/bin/python3
"""Scripted test: one hot key written by concurrent sessions under a per-key
write budget, through one static shard and through the audit log's
dynamic sharding.

The proxy's key budget throttles every (table, partition key value) beyond
RATE writes a second with TableWriteKeyRangeThroughputExceeded, as DynamoDB
throttles a hot key.  SESSIONS psql sessions at once each INSERT ROWS rows
of the same logical key:

* through a table with one static shard the key is throttled: the proxy
  counts key-range throttles, and each session either succeeds after its
  retries or fails with the throttling error (53000), whose context says
  how many of its rows were written; exactly those rows are stored, once;
* through a dynamically sharded table the key's shard count grows, every
  session succeeds, and the multiset of rows read back through the foreign
  table is exactly the multiset inserted; the sessions' counters add up to
  one metadata item created and one growth per later history entry;
* the same holds for a dynamic table in upsert mode (rows written by
  BatchWriteItem, throttled items coming back unprocessed) and for COPY
  into a dynamic table in insert mode (rows gathered into batches of
  conditional puts in flight together), each with its own metadata table;
* the metadata item, read with boto3, has exactly the audit-log article's
  attributes and types, and its shard_history is a valid growth record (see
  check_history).

Run by test/check.sh; ends with "N passed, N failed".
"""

import collections
import time

import bed

runner = bed.Runner()

DATABASE = bed.unique_name("hotkey")
RATE = 40               # key budget: tokens per second, and bucket size
SESSIONS = 4            # concurrent psql sessions
ROWS = 150              # rows each session inserts
COOLDOWN_S = 1
MAX_SHARDS = 16
HOT_KEY = "/shared/firetvGen2.txt"
SEQ_STRIDE = 100000     # a row's seq is session * SEQ_STRIDE + its number
KEY_REASON = "TableWriteKeyRangeThroughputExceeded"
CONTEXT_WRITTEN = " of this statement written"

client = None
tables = []             # DynamoDB tables this script made
METADATA = None         # the dynamic foreign table's metadata table
METADATA_OF = {}        # foreign table: its metadata table


# ---------------------------------------------------------------- helpers


def sql(text):
    """Run SQL in this script's database; an error carries psql's message."""
    result = bed.psql(text, check=False, database=DATABASE)
    assert result.returncode == 0, f"{result.stderr.strip()}\nin: {text.strip()[:300]}"
    return result


def rows(text):
    """The rows of a query in this script's database, as lists of texts."""
    return [line.split(bed.FIELD_SEPARATOR)
            for line in sql(text).stdout.splitlines() if line]


def new_table(prefix, partition_key, sort_key=None):
    """A fresh table (string partition key, numeric sort key), deleted at
    the end."""
    return bed.new_table(client, tables, prefix, partition_key, sort_key, sort_type="N")


def inserted_rows():
    """Every (session, seq) the sessions insert, each once."""
    return collections.Counter(
        (s, s * SEQ_STRIDE + i)
        for s in range(1, SESSIONS + 1) for i in range(1, ROWS + 1))


def session_script(table, session, copy=False):
    """One session: the burst in one INSERT (or one COPY), then its
    backend's counters."""
    if copy:
        lines = "".join(f"{HOT_KEY}\t{session * SEQ_STRIDE + g}\t{session}\n"
                        for g in range(1, ROWS + 1))
        burst = f"COPY {table} (file_path, seq, session) FROM STDIN;\n{lines}\\.\n"
    else:
        burst = f"""INSERT INTO {table} (file_path, seq, session)
  SELECT '{HOT_KEY}', {session} * {SEQ_STRIDE} + g, {session}
    FROM generate_series(1, {ROWS}) g;
"""
    return f"""\\set VERBOSITY verbose
{burst}SELECT metadata_created, shard_growths FROM shard_fdw_stats();
"""


def run_sessions(table, copy=False):
    """Run the sessions at once; returns {session: (CompletedProcess, seconds)}."""
    results = {}

    def session(number):
        started = time.monotonic()
        done = bed.psql(session_script(table, number, copy), check=False,
                        database=DATABASE)
        results[number] = (done, time.monotonic() - started)

    bed.run_together(session, [(n,) for n in range(1, SESSIONS + 1)])
    return results


def rows_read(table):
    """Counter of (session, seq) read back through the foreign table."""
    return collections.Counter(
        (int(s), int(q)) for s, q in
        rows(f"SELECT session, seq FROM {table} WHERE file_path = '{HOT_KEY}'"))


def key_throttles():
    """The key-range throttles the proxy has answered so far."""
    return bed.stats()["throttles"]["reasons"].get(KEY_REASON, 0)


def rows_written(stderr):
    """N of a failed INSERT's context "N rows of this statement written"."""
    line = next(line for line in stderr.splitlines() if CONTEXT_WRITTEN in line)
    return int(line.split(CONTEXT_WRITTEN)[0].split()[-2])


def check_history(entries, shards, last_updated):
    """Check a shard_history; returns its (epoch, count) pairs by count.

    Every entry is "epoch:count"; the first count is 1; each later count
    doubles the one before, capped at MAX_SHARDS (so counts are distinct
    and increasing); the epochs of consecutive entries are at least
    COOLDOWN_S apart (what the cooldown guarantees with whole-second
    timestamps: a growth at epoch E allows the next at E + cooldown_s); the
    last entry is (last_updated, number_of_shards).
    """
    pairs = []
    for entry in entries:
        epoch, colon, count = entry.partition(":")
        assert colon and epoch.isdigit() and count.isdigit(), \
            f"history entry {entry!r} is not epoch:count"
        pairs.append((int(epoch), int(count)))
    pairs.sort(key=lambda pair: pair[1])
    assert pairs[0][1] == 1, f"the history does not start at one shard: {pairs}"
    for (epoch, count), (next_epoch, next_count) in zip(pairs, pairs[1:]):
        assert next_count == min(2 * count, MAX_SHARDS), \
            f"{count} shards grew to {next_count}: {pairs}"
        assert next_epoch - epoch >= COOLDOWN_S, \
            f"two growths less than cooldown_s = {COOLDOWN_S} s apart: {pairs}"
    assert pairs[-1] == (last_updated, shards), \
        f"last_updated {last_updated}, number_of_shards {shards}, history {pairs}"
    return pairs


# ------------------------------------------------------------------ setup


def set_up():
    """A database of its own, a server through the proxy, a static and a
    dynamic foreign table over two DynamoDB tables, and the key budget."""
    global client, METADATA
    bed.reset_proxy()
    client = bed.ddb(direct=True)
    static = new_table("hot_static", "pk", "seq")
    dynamic = {name: new_table(name, "pk", "seq")
               for name in ("hot_dynamic", "hot_upsert", "hot_copy")}
    for name in dynamic:
        METADATA_OF[name] = new_table(f"{name}_shards", "file_path")
    METADATA = METADATA_OF["hot_dynamic"]
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql(f"""
        CREATE EXTENSION shard_fdw;
        CREATE SERVER proxied FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}');
        CREATE USER MAPPING FOR CURRENT_USER SERVER proxied
          OPTIONS (access_key_id '{bed.env("SHARD_FDW_ACCESS_KEY")}',
                   secret_access_key '{bed.env("SHARD_FDW_SECRET_KEY")}');
        CREATE FOREIGN TABLE hot_static (file_path text, seq bigint, session int)
          SERVER proxied OPTIONS (table '{static}',
            partition_key 'pk', partition_key_format '{{file_path}}_{{shard}}',
            sort_key 'seq', shard_strategy 'random', shards '1', shard_base '1');""")
    for name, mode in (("hot_dynamic", "insert"), ("hot_upsert", "upsert"),
                       ("hot_copy", "insert")):
        sql(f"""
            CREATE FOREIGN TABLE {name} (file_path text, seq bigint, session int)
              SERVER proxied OPTIONS (table '{dynamic[name]}',
                partition_key 'pk', partition_key_format '{{file_path}}_{{shard}}',
                sort_key 'seq', shard_strategy 'dynamic', insert_mode '{mode}',
                metadata_table '{METADATA_OF[name]}', metadata_key 'file_path',
                cooldown_s '{COOLDOWN_S}', max_shards '{MAX_SHARDS}',
                metadata_cache_ms '100');""")
    bed.configure(key_budget={"rate": RATE, "burst": RATE})


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


# ------------------------------------------------------------------ tests


@runner.test
def static_shard_is_throttled_and_loses_nothing():
    """One static shard: the key is throttled; each session succeeds or
    fails with the throttling error, and exactly the rows it wrote are
    stored, each once."""
    before = key_throttles()
    results = run_sessions("hot_static")
    throttled = key_throttles() - before
    assert throttled > 0, "the proxy throttled no write of the hot key"

    read = rows_read("hot_static")
    unknown = read - inserted_rows()
    assert not unknown, f"rows read more than once or never inserted: {unknown}"
    per_session = collections.Counter(session for session, _ in read.elements())
    outcomes = []
    for number, (done, seconds) in sorted(results.items()):
        if done.returncode == 0:
            assert per_session[number] == ROWS, (
                f"session {number} succeeded, yet {per_session[number]} of "
                f"its {ROWS} rows are stored")
            outcomes.append(f"session {number} succeeded in {seconds:.1f} s")
            continue
        assert "53000" in done.stderr and \
            "ProvisionedThroughputExceededException" in done.stderr, \
            f"session {number} failed otherwise: {done.stderr}"
        written = rows_written(done.stderr)
        assert per_session[number] == written, (
            f"session {number}'s error says {written} rows written, "
            f"{per_session[number]} are stored")
        outcomes.append(f"session {number} throttled out after {written} "
                        f"rows in {seconds:.1f} s")
    print(f"     {throttled} key throttles; {sum(read.values())} of "
          f"{SESSIONS * ROWS} rows stored; " + "; ".join(outcomes))


def check_dynamic(table, copy=False):
    """The sessions write into dynamic table table: the shard count grows
    under the throttles, every session succeeds, every row is read back
    exactly once, the sessions' counters match the history."""
    before = key_throttles()
    started = time.monotonic()
    results = run_sessions(table, copy)
    seconds = time.monotonic() - started
    for number, (done, _) in sorted(results.items()):
        assert done.returncode == 0, f"session {number} failed: {done.stderr}"
    throttled = key_throttles() - before
    assert throttled > 0, "the proxy throttled no write of the hot key"

    read, expected = rows_read(table), inserted_rows()
    missing, extra = expected - read, read - expected
    assert not missing and not extra, (
        f"{sum(missing.values())} rows missing (e.g. {sorted(missing)[:5]}), "
        f"{sum(extra.values())} doubled or unknown (e.g. {sorted(extra)[:5]})")

    (shards, last_updated, history), = rows(
        "SELECT number_of_shards, last_updated, shard_history "
        f"FROM shard_fdw_metadata('{table}', '{{\"file_path\": \"{HOT_KEY}\"}}')")
    shards = int(shards)
    pairs = check_history(history.strip("{}").split(","), shards, int(last_updated))
    assert shards > 1, "the shard count did not grow"

    counters = [map(int, done.stdout.splitlines()[-1].split(bed.FIELD_SEPARATOR))
                for done, _ in results.values()]
    created, growths = map(sum, zip(*counters))
    assert created == 1, f"{created} sessions created the metadata item"
    assert growths == len(pairs) - 1, (
        f"the sessions made {growths} growths, the history has "
        f"{len(pairs)} entries")

    items = {int(shard): int(n) for shard, n in rows(
        "SELECT shard, items FROM shard_fdw_shard_counts("
        f"'{table}', '{{\"file_path\": \"{HOT_KEY}\"}}')")}
    assert set(items) == set(range(1, shards + 1)), f"shards counted: {sorted(items)}"
    assert sum(items.values()) == SESSIONS * ROWS, f"items per shard: {items}"
    used = sum(1 for n in items.values() if n)
    assert used > 1, f"every row is in one shard: {items}"
    print(f"     {throttled} key throttles, {growths} growths, history "
          f"{' '.join(f'{e}:{c}' for e, c in pairs)}, rows in {used} of "
          f"{shards} shards, {SESSIONS * ROWS} rows in {seconds:.1f} s")


@runner.test
def dynamic_table_grows_and_keeps_every_row():
    """Insert mode: conditional puts of each INSERT in flight together."""
    check_dynamic("hot_dynamic")


@runner.test
def dynamic_upsert_batches_grow_and_keep_every_row():
    """Upsert mode: BatchWriteItem, throttled items left unprocessed."""
    check_dynamic("hot_upsert")


@runner.test
def dynamic_copy_batches_grow_and_keep_every_row():
    """COPY in insert mode: rows gathered into batches."""
    check_dynamic("hot_copy", copy=True)


@runner.test
def metadata_item_has_the_audit_log_schema():
    """The metadata item has exactly the audit-log article's attributes and
    types."""
    item = client.get_item(TableName=METADATA, Key={"file_path": {"S": HOT_KEY}},
                           ConsistentRead=True)["Item"]
    types = {name: next(iter(value)) for name, value in item.items()}
    assert types == {"file_path": "S", "number_of_shards": "N",
                     "last_updated": "N", "shard_history": "SS"}, types
    assert item["file_path"]["S"] == HOT_KEY, item
    check_history(item["shard_history"]["SS"], int(item["number_of_shards"]["N"]),
                  int(item["last_updated"]["N"]))


if __name__ == "__main__":
    runner.main(set_up, tear_down)
