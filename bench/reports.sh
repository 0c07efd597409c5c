#!/usr/bin/env bash
# bench/reports.sh — reports over the leaderboard hashed on player_id (pk =
# {game_id}#{shard}, shard = FNV-1a-32(player_id) mod 10, sk =
# {score:020}#{player_id}), shard_fdw against Python boto3 clients doing the
# same work, every request through the test proxy with the same added
# latency. Each section prints median milliseconds, requests and items read
# per query and ratios measured in this run, then summary lines:
#
#   count  count(*) of a game and a player's rank (count above a score):
#          shard_fdw's Select COUNT per shard against boto3's Select COUNT
#          reader (a Query per shard on a thread pool) and against reading
#          every item                                 (bench/reports_count.py)
#   topn   top-100 with a tie-breaker: items DynamoDB reads per query with
#          the order pushed down (both keys, or the score alone under a
#          linguistic tie-breaker) against an order nothing of which is
#          claimed (every item of the game)           (bench/reports_count.py)
#   lookup the player's own position: its score (a lookup of its shard)
#          and rank (a count above that score, the lookup in its
#          InitPlan): items and bytes DynamoDB returns, shard_fdw's
#          filter against the shard read whole (what shard_fdw sent
#          before it filtered on player_id) and against boto3's Query with
#          a FilterExpression                         (bench/reports_count.py)
#   join   a local table of 10, 1,000 and BENCH_BIG_WATCHED watched players
#          joined with the leaderboard on game and player, against boto3
#          sending one Query per player 16 at a time, and boto3 reading the
#          game's 10 shards at once and joining in memory
#                                                     (bench/reports_join.py,
#                                                      in its own database)
#   units  the read units EXPLAIN estimates for each report above, after
#          ANALYZE, against those it consumed (shard_fdw_stat, and the
#          proxy's sum of DynamoDB Local's ConsumedCapacity), measured in
#          this run                 (bench/reports_count.py, reports_join.py)
#
# Environment (all optional):
#   BENCH_SECTIONS         comma-separated sections to run
#                          (count,topn,lookup,join,units)
#   BENCH_LATENCY_MS       latency the proxy adds to each request (5)
#   BENCH_RUNS             timed runs per method and case; medians are
#                          printed (15 for count and topn, 5 for join)
#   BENCH_WARMUP           untimed runs before them (3 for count and topn,
#                          1 for join)
#   BENCH_PLAYERS          players of the game (3000)
#   BENCH_BIG_WATCHED      players of a second game, all watched in the
#                          largest join (100000; 0 leaves that join out)
#   BENCH_LOOKUP_CAP       in the largest join, only this many lookups of
#                          the one-Query-per-player client are timed (each
#                          reads a whole shard), its time scaled up to the
#                          whole join (100)
#   BENCH_SKIP_BUILD=1     use the extension already installed instead of
#                          building and installing this tree
#   BENCH_DATA_DIR         also write the measurements there as TSV files
#                          (bench/benchdata.py; bench/plots.sh draws them)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh
start_bench reports

sections=",${BENCH_SECTIONS:-count,topn,lookup,join,units},"
count_sections="$(tr ',' '\n' <<<"$sections" | grep -xE 'count|topn|lookup|units' | paste -sd, -)" || true
if [ -n "$count_sections" ]; then
    BENCH_SECTIONS="$count_sections" "$PYTHON" bench/reports_count.py
fi
join_sections="$(tr ',' '\n' <<<"$sections" | grep -xE 'join|units' | paste -sd, -)" || true
if [ -n "$join_sections" ]; then
    createdb reports_join
    BENCH_SECTIONS="$join_sections" PGDATABASE=reports_join "$PYTHON" bench/reports_join.py
fi
