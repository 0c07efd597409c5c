"""Items moved per second by shard_fdw_reshard.

Run by bench/reshard.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

ROWS scores of the leaderboard hashed on player_id (5 games, calculated
fnv1a_32 shards) are loaded over 10 shards straight into DynamoDB Local; then,
through the proxy, which adds LATENCY_MS to every request:

  grow    ALTER ... SET shards '20', then shard_fdw_reshard over the table
  shrink  ALTER ... SET shards '5', then one shard_fdw_reshard per game
          (column_values), then one over the table to drop the layouts

After each, every item is read with boto3: as many as loaded, each under
the key the newest layout gives (fnv1a_32 of player_id mod N).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)

LATENCY_MS = int(os.environ.get("BENCH_LATENCY_MS", "2"))
ROWS = int(os.environ.get("BENCH_ROWS", "5000"))
GAMES = 5
TABLE = "reshard_bench"


def say(message):
    print(f"==> {message}", flush=True)


def set_up():
    """The table and its two foreign tables (bed.leaderboard_pair): lb
    through the proxy and lb_load straight to DynamoDB Local."""
    bed.leaderboard_pair(TABLE, 10)
    bed.psql(f"INSERT INTO lb_load SELECT 'g' || (i % {GAMES}), 'player' || i, "
             f"i * 7 % 100000 FROM generate_series(1, {ROWS}) i")


def check(shards):
    """Every item read with boto3 sits at its key under `shards` shards."""
    client = bed.ddb(direct=True)
    items, start = [], {}
    while True:
        page = client.scan(TableName=TABLE, ConsistentRead=True, **start)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            break
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
    assert len(items) == ROWS, f"{len(items)} items, not {ROWS}"
    for item in items:
        player = item["player_id"]["S"]
        want = f"{item['game_id']['S']}#{bed.fnv1a_32(player.encode()) % shards}"
        assert item["pk"]["S"] == want, f"{item['pk']['S']} is not {want}"


def reshard(calls):
    """Run the shard_fdw_reshard calls; (items moved, seconds)."""
    moved = 0
    started = time.perf_counter()
    for call in calls:
        row = bed.query(f"SELECT moved, remaining FROM {call}")[0]
        assert row[1] == "0", f"{call} left {row[1]} items"
        moved += int(row[0])
    return moved, time.perf_counter() - started


def main():
    set_up()
    bed.configure(latency_ms=LATENCY_MS)
    results = {}
    try:
        say(f"{ROWS} rows over 10 shards, {LATENCY_MS} ms added per request")
        bed.psql("ALTER FOREIGN TABLE lb OPTIONS (SET shards '20')")
        results["grow 10 -> 20, whole table"] = reshard(["shard_fdw_reshard('lb')"])
        check(20)
        bed.psql("ALTER FOREIGN TABLE lb OPTIONS (SET shards '5')")
        results["shrink 20 -> 5, per game"] = reshard(
            [f"shard_fdw_reshard('lb', '{{\"game_id\": \"g{g}\"}}')" for g in range(GAMES)]
            + ["shard_fdw_reshard('lb')"])
        check(5)
    finally:
        bed.configure(latency_ms=0)
        bed.ddb(direct=True).delete_table(TableName=TABLE)
    print()
    for name, (moved, seconds) in results.items():
        print(f"{name:<28}{moved:7d} items moved in {seconds:6.2f} s  "
              f"{moved / seconds:7.0f} items/s")
    total_moved = sum(m for m, _ in results.values())
    total_seconds = sum(s for _, s in results.values())
    print(f"\nsummary: shard_fdw_reshard moved {total_moved} items at "
          f"{total_moved / total_seconds:.0f} items/s ({LATENCY_MS} ms per request), "
          f"each checked with boto3")


if __name__ == "__main__":
    main()
