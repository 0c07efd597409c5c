#!/usr/bin/python3
"""The README's quick start, run as typed.

The quick start follows the playground (bash test/demo.sh --keep): the
demo's test/demo.sql has run in the database psql reaches, against
DynamoDB Local itself.  So does this test, in a database of its own; then
every SQL block of the README's "Quick start in psql" section runs, in
order, in one psql session, changed only where the test bed differs from
the playground: DynamoDB Local's address, and names that must not clash
with other tests' (the database and the new DynamoDB table).  Its output
must hold what the text around the blocks says, and no raw DynamoDB JSON.
The shell block's commands must be the ones test/demo.sh prints.  Ends
with "N passed, N failed".
"""

import os
import re
import subprocess
import sys

import bed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from quickstart import blocks  # noqa: E402  (test/quickstart.py)

runner = bed.Runner()
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEMO_DB = bed.unique_name("readme_demo")
QUICK_DB = bed.unique_name("readme_quick")
TABLE = bed.unique_name("GameScores")
client = None
output = []


def run_quick_start():
    """The SQL blocks, adapted to the test bed, in one psql session from the
    database psql reaches on the playground; returns the output lines."""
    script = "\n".join(blocks("sql"))
    assert "'http://127.0.0.1:8000'" in script and "quickstart" in script
    script = (script.replace("'http://127.0.0.1:8000'",
                             f"'{bed.env('SHARD_FDW_DIRECT_ENDPOINT')}'")
              .replace("quickstart", QUICK_DB)
              .replace("GameScores", TABLE)
              .replace("\\c postgres", f"\\c {DEMO_DB}"))
    result = subprocess.run(["psql", "-X", "-A", "-F", "|", "-v", "ON_ERROR_STOP=1",
                             "-d", DEMO_DB, "-f", "-"],
                            input=script, text=True, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr + result.stdout[-2000:]
    return result.stdout.splitlines()


def following(header, count, nth=1):
    """The count lines after the nth line equal to header."""
    at = [i for i, line in enumerate(output) if line == header][nth - 1]
    return output[at + 1:at + 1 + count]


@runner.test
def shell_block_is_what_the_demo_prints():
    sh = blocks("sh")[0]
    with open(os.path.join(ROOT, "test", "demo.sh"), encoding="utf-8") as demo:
        code = demo.read()
    ddb_port = re.search(r"^PLAYGROUND_DDB_PORT=(\d+)$", code, re.M).group(1)
    pg_port = re.search(r"^PLAYGROUND_PG_PORT=(\d+)$", code, re.M).group(1)
    assert "bash test/demo.sh --keep" in sh and "bash test/demo.sh --stop" in sh, sh
    assert f"psql -h 127.0.0.1 -p {pg_port} -U postgres" in sh, sh
    assert 'echo "  connect:  psql -h $PGHOST -p $PGPORT -U postgres"' in code
    assert 'echo "  stop:     bash test/demo.sh --stop"' in code
    assert f"endpoint 'http://127.0.0.1:{ddb_port}'" in "\n".join(blocks("sql"))


@runner.test
def table_is_created_before_it_is_written():
    assert following("status", 1) == ["ACTIVE"], output[:10]
    assert not any('"TableDescription"' in line or len(line) > 400 for line in output), \
        max(output, key=len)


@runner.test
def top_5_is_exact_and_merged_from_ten_queries():
    expected = sorted(((i * 7919) % 100000, f"player{i}") for i in range(1, 501))[::-1][:5]
    assert following("player_id|score", 5) == [f"{p}|{s}" for s, p in expected], output
    plan = "\n".join(output)
    assert "Shards: 10" in plan and "Merge: sk DESC" in plan and "Limit per Shard: 4" in plan, plan
    assert "Shards: 1 of 10 (calculated on fnv1a_32)" in plan, plan
    assert "Shard Chosen By: player_id = 'player42'" in plan, plan


@runner.test
def demo_table_is_imported_sharded():
    options = next(line for line in output if line.startswith("FDW options:"))
    for want in ("partition_key_format '{game_id}#{shard}'", "shards '10'",
                 "sort_key_format '{score:020}#{player_id}'",
                 "shard_strategy 'calculated'", "shard_by 'player_id'",
                 "shard_hash 'fnv1a_32'"):
        assert want in options, options
    scores = sorted(((i * 7919) % 1000000, f"player{i}") for i in range(1, 5001) if i % 2 == 1)
    assert following("player_id|score", 3, nth=2) == \
        [f"{p}|{s}" for s, p in scores[::-1][:3]], output


@runner.test
def start_over_leaves_nothing():
    assert following("deleted", 1) == [TABLE]
    names = client.list_tables()["TableNames"]
    assert TABLE not in names
    assert bed.query(f"SELECT count(*) FROM pg_database WHERE datname = '{QUICK_DB}'") == [["0"]]


def set_up():
    global client, output
    client = bed.ddb(direct=True)
    bed.psql(f"CREATE DATABASE {DEMO_DB}")
    demo = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", DEMO_DB,
                           "-f", os.path.join(ROOT, "test", "demo.sql")],
                          env=dict(os.environ, SHARD_FDW_ENDPOINT=bed.env("SHARD_FDW_DIRECT_ENDPOINT")),
                          text=True, capture_output=True, check=False)
    assert demo.returncode == 0, demo.stderr
    output = run_quick_start()


def tear_down():
    names = client.list_tables()["TableNames"]
    bed.drop_scratch(client, [t for t in ("Leaderboards", TABLE) if t in names])
    for database in (QUICK_DB, DEMO_DB):
        bed.psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


if __name__ == "__main__":
    try:
        set_up()
        runner.run()
    finally:
        tear_down()
