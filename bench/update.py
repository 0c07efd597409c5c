"""Bulk UPDATE of one game's scores: shard_fdw against a 16-thread boto3 client.

Run by bench/update.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The table is the leaderboard hashed on player_id over 10 calculated shards
(pk = {game_id}#{shard}, sk = {score:020}#{player_id}), one game of ROWS
scores loaded straight into DynamoDB Local.  Every method then goes
through the proxy, which adds LATENCY_MS to every request, and updates
every row of the game:

  fdw_move       UPDATE lb SET score = score + 1 WHERE game_id = 'g': each
                 row moves to a new sort key, one TransactWriteItems
                 (Delete + Put) per row
  fdw_move_ret   the same, RETURNING player_id, score
  boto3_move     the game read (a Query per shard, all at once, every
                 page), then the same TransactWriteItems (the Delete on
                 condition that the item exists, the Put that its key is
                 free, a ClientRequestToken) 16 at a time
  fdw_note       UPDATE lb SET note = 'rN' WHERE game_id = 'g': one
                 UpdateItem per row, on condition that the item exists
  boto3_note     the game read, then the same UpdateItems 16 at a time

The boto3 client keeps 16 connections (botocore's pool holds 10 unless
told) and retries as the SDKs' standard mode does; shard_fdw runs in one
psql session kept open, as the client keeps its connections.  Each run
checks the row count and that the game still holds ROWS items.
"""

import os
import statistics
import time
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)

LATENCY_MS, ROWS, RUNS = benchdata.settings(LATENCY_MS=5, ROWS=2000, RUNS=3)
SHARDS = 10
THREADS = 16
TABLE = "update_bench"
# (shard_fdw's method, the boto3 method sending the same writes)
PAIRS = [("fdw_move", "boto3_move"), ("fdw_move_ret", "boto3_move"),
         ("fdw_note", "boto3_note")]
LOAD_BEFORE = os.getloadavg()[0]    # what else runs here weighs on every number


def say(message):
    print(f"==> {message}", flush=True)


def set_up():
    """The table and its two foreign tables (bed.leaderboard_pair), with a
    note column, and the game's scores loaded straight into DynamoDB Local."""
    bed.leaderboard_pair(TABLE, SHARDS)
    bed.psql("ALTER FOREIGN TABLE lb ADD COLUMN note text;"
             "ALTER FOREIGN TABLE lb_load ADD COLUMN note text;"
             f"INSERT INTO lb_load SELECT 'g', 'player' || i, i * 7 % 100000, 'n' "
             f"FROM generate_series(1, {ROWS}) i")


def items_left():
    return int(bed.query("SELECT count(*) FROM lb_load WHERE game_id = 'g'")[0][0])


# ------------------------------------------------------------------ boto3


def client():
    """A boto3 client through the proxy, with a connection per thread."""
    return boto3.client(
        "dynamodb", endpoint_url=bed.env("SHARD_FDW_ENDPOINT"),
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY"),
        config=Config(max_pool_connections=THREADS, retries={"mode": "standard"}))


def read_game(ddb, pool):
    """Every item of game 'g': a Query per shard, all at once, every page."""
    def shard(number):
        items, start = [], None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            page = ddb.query(TableName=TABLE, KeyConditionExpression="pk = :pk",
                             ExpressionAttributeValues={":pk": {"S": f"g#{number}"}},
                             **extra)
            items += page["Items"]
            start = page.get("LastEvaluatedKey")
            if not start:
                return items

    return [item for items in pool.map(shard, range(SHARDS)) for item in items]


def boto3_move(ddb, pool):
    """Each item to the sort key of its score + 1, 16 TransactWriteItems at once."""
    def move(item):
        score = int(item["score"]["N"]) + 1
        player = item["player_id"]["S"]
        new = dict(item, score={"N": str(score)}, sk={"S": f"{score:020}#{player}"})
        ddb.transact_write_items(ClientRequestToken=uuid.uuid4().hex, TransactItems=[
            {"Delete": {"TableName": TABLE, "Key": {"pk": item["pk"], "sk": item["sk"]},
                        "ConditionExpression": "attribute_exists(pk)"}},
            {"Put": {"TableName": TABLE, "Item": new,
                     "ConditionExpression": "attribute_not_exists(pk)"}}])

    items = read_game(ddb, pool)
    return len(list(pool.map(move, items)))


def boto3_note(ddb, pool, run):
    """SET note on each item, 16 UpdateItems at once."""
    def update(item):
        ddb.update_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]},
                        UpdateExpression="SET note = :n",
                        ConditionExpression="attribute_exists(pk)",
                        ExpressionAttributeValues={":n": {"S": f"r{run}"}})

    items = read_game(ddb, pool)
    return len(list(pool.map(update, items)))


# ---------------------------------------------------------------- runs


def statement(method, run):
    return {
        "fdw_move": "UPDATE lb SET score = score + 1 WHERE game_id = 'g'",
        "fdw_move_ret": "UPDATE lb SET score = score + 1 WHERE game_id = 'g' "
                        "RETURNING player_id, score",
        "fdw_note": f"UPDATE lb SET note = 'r{run}' WHERE game_id = 'g'",
    }[method]


def timed(method, run, session, ddb, pool):
    """Seconds one method took; checks its rows and the items left."""
    if method.startswith("fdw"):
        lines = session.run(statement(method, run) + ";\n\\echo @@rows :ROW_COUNT")
        rows = int(lines[-1].split()[1].rstrip(";"))
        returned = len(lines) - 1
        assert method != "fdw_move_ret" or returned == ROWS, \
            f"{method} returned {returned} rows, not {ROWS}"
        seconds = session.seconds
    else:
        started = time.perf_counter()
        rows = boto3_move(ddb, pool) if method == "boto3_move" else boto3_note(ddb, pool, run)
        seconds = time.perf_counter() - started
    assert rows == ROWS, f"{method} updated {rows} rows, not {ROWS}"
    left = items_left()
    assert left == ROWS, f"{method} left {left} items, not {ROWS}"
    return seconds


def main():
    methods = ["fdw_move", "fdw_move_ret", "boto3_move", "fdw_note", "boto3_note"]
    seconds = {method: [] for method in methods}
    session = None
    try:
        set_up()
        bed.configure(latency_ms=LATENCY_MS)
        session = bed.Session("postgres")
        ddb = client()
        say(f"{ROWS} rows of one game over {SHARDS} shards, {LATENCY_MS} ms added "
            f"per request, {RUNS} run(s) per method, boto3 {THREADS} threads")
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            for method in methods:       # warm-up: connections, catalog caches
                timed(method, 0, session, ddb, pool)
            for run in range(1, RUNS + 1):
                order = methods if run % 2 else list(reversed(methods))
                for method in order:
                    seconds[method].append(timed(method, run, session, ddb, pool))
                    say(f"run {run}/{RUNS}: {method:<13} {seconds[method][-1]:7.2f} s")
    finally:
        if session:
            session.close()
        bed.configure(latency_ms=0)
        direct = bed.ddb(direct=True)
        try:
            direct.delete_table(TableName=TABLE)
        except direct.exceptions.ResourceNotFoundException:
            pass        # set_up failed before it made the table
    median = {method: statistics.median(s) for method, s in seconds.items()}
    print()
    for method in methods:
        print(f"{method:<14}{median[method]:8.2f} s  {ROWS / median[method]:8.0f} rows/s")
    print(f"\nload average {LOAD_BEFORE:.1f} before, {os.getloadavg()[0]:.1f} after")
    print("summary: bulk UPDATE of " f"{ROWS} rows at {LATENCY_MS} ms per request, "
          "shard_fdw over boto3 16 threads: " +
          ", ".join(f"{fdw} {median[fdw] / median[boto]:.2f}x" for fdw, boto in PAIRS))


if __name__ == "__main__":
    main()
