#!/usr/bin/python3
"""A database of shard_fdw objects through pg_dump and pg_restore.

The source database, in the test bed's cluster, holds two servers (one
with option region, one whose region comes from the server's environment),
user mappings (the current user's, a role's and PUBLIC's), and foreign
tables: keys learnt at declaration, keys declared, one read through a
global secondary index, a dynamic table with its metadata table, a table
whose shard count changed while it held items (a non-empty
layout_history), and one declared while the event trigger was off (no
keys yet).  Its servers reach DynamoDB through a wire front
(test/proxy/wirefront.py) before the test bed's proxy, which can let
requests through or reset every connection as it is accepted.

pg_dump -Fc writes the database; pg_restore restores it into a cluster of
its own whose environment has no AWS_REGION, with the front resetting
every connection, as an unreachable DynamoDB would: the restore succeeds
without a warning, the front accepts no connection and the proxy sees no
request, and pg_dump --schema-only of the restored database is the
source's.  Without AWS_REGION, the server without option region fails at
its first use, naming the region it lacks.  With the front letting requests
through and AWS_REGION in the environment, every table of the restored
database reads the rows the source read.  Ends with "N passed, N failed".
"""

import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import bed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proxy"))
from wirefront import WireFront  # noqa: E402

runner = bed.Runner()
SOURCE = bed.unique_name("dump_source")
RESTORED = "restored"
ROLE = "regress_dump_reader"
sql = bed.in_database(SOURCE)
client = bed.ddb(direct=True)
tables = []
state = {}

# Each foreign table of the source and the query that reads its rows.
READS = {
    "learnt": "SELECT game, player, score FROM learnt ORDER BY game, player",
    "board": "SELECT game_id, player_id, score FROM board ORDER BY game_id, player_id",
    "by_score": "SELECT game, player, score FROM by_score WHERE game = 'g1' ORDER BY score",
    "files": "SELECT file_path, ts, who FROM files ORDER BY file_path, ts",
    "regional": "SELECT game, player, score FROM regional ORDER BY game, player",
}


def credentials():
    """The options of a user mapping with the test credentials."""
    return (f"access_key_id '{bed.env('SHARD_FDW_ACCESS_KEY')}', "
            f"secret_access_key '{bed.env('SHARD_FDW_SECRET_KEY')}'")


def rows(database, port=None):
    """Every table of READS read in database (of the test bed's cluster,
    or of the cluster on port): {table: rows}."""
    found = {}
    for table, query in READS.items():
        found[table] = run_psql(query, database, port)
    return found


def run_psql(text, database, port=None, check=True):
    """psql in database of the test bed's cluster, or of the cluster on
    port; with check, the rows it printed (a list of lines), else the
    CompletedProcess."""
    command = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", database]
    if port:
        command += ["-h", "127.0.0.1", "-p", str(port)]
    result = subprocess.run(command + ["-c", text], text=True, capture_output=True,
                            check=False)
    if not check:
        return result
    assert result.returncode == 0, f"{text}: {result.stderr}"
    return result.stdout.splitlines()


def schema_dump(database, port=None):
    """pg_dump --schema-only of database, as lines, without those that
    differ from one dump to the next (pg_dump's version, the random key of
    \\restrict)."""
    command = ["pg_dump", "--schema-only", "-d", database]
    if port:
        command += ["-h", "127.0.0.1", "-p", str(port)]
    text = subprocess.run(command, text=True, capture_output=True, check=True).stdout
    return [line for line in text.splitlines()
            if not line.startswith(("-- Dumped ", "\\restrict ", "\\unrestrict "))]


def set_up():
    """The DynamoDB tables, the front and the source database."""
    board = bed.new_table(client, tables, "dump_board", "pk", "sk")
    plain = bed.new_table(client, tables, "dump_plain", "game", "player",
                          gsi=("byScore", "game", "rank"))
    files = bed.new_table(client, tables, "dump_files", "pk", "ts", sort_type="N")
    meta = bed.new_table(client, tables, "dump_meta", "file_path")
    front = WireFront(bed.env("SHARD_FDW_ENDPOINT"))
    state["front"] = front
    bed.psql(f"DROP ROLE IF EXISTS {ROLE}; CREATE ROLE {ROLE};")
    bed.psql(f"CREATE DATABASE {SOURCE}")
    sql(f"""
        CREATE EXTENSION shard_fdw;
        CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (region 'us-east-1', endpoint '{front.url}', max_retries '1');
        CREATE SERVER from_env FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{front.url}', max_retries '1');
        CREATE USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS ({credentials()});
        CREATE USER MAPPING FOR {ROLE} SERVER ddb OPTIONS ({credentials()});
        CREATE USER MAPPING FOR PUBLIC SERVER from_env OPTIONS ({credentials()});

        -- keys learnt when declared, and read through an index
        CREATE FOREIGN TABLE learnt (game text, player text, score int, "rank" text)
          SERVER ddb OPTIONS (table '{plain}');
        CREATE FOREIGN TABLE by_score (game text, player text, score int, "rank" text)
          SERVER ddb OPTIONS (table '{plain}', index 'byScore');
        -- keys declared, with templates and calculated shards
        CREATE FOREIGN TABLE board (game_id text, player_id text, score bigint)
          SERVER ddb OPTIONS (table '{board}',
            partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
            sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
            shards '4', shard_strategy 'calculated', shard_by 'player_id',
            shard_hash 'fnv1a_32');
        -- dynamic sharding and its metadata table
        CREATE FOREIGN TABLE files (file_path text, ts bigint, who text)
          SERVER ddb OPTIONS (table '{files}',
            partition_key 'pk', partition_key_format '{{file_path}}_{{shard}}', sort_key 'ts',
            shard_strategy 'dynamic', metadata_table '{meta}', metadata_key 'file_path',
            cooldown_s '0', max_shards '4', metadata_cache_ms '0');
        -- a server whose region is the environment's
        CREATE FOREIGN TABLE regional (game text, player text, score int, "rank" text)
          SERVER from_env OPTIONS (table '{plain}');
        -- declared while the event trigger was off: no keys yet
        ALTER EVENT TRIGGER shard_fdw_check_ddl DISABLE;
        CREATE FOREIGN TABLE unlearnt (game text, player text) SERVER ddb
          OPTIONS (table '{plain}');
        ALTER EVENT TRIGGER shard_fdw_check_ddl ENABLE;
        GRANT SELECT ON board TO {ROLE};

        INSERT INTO learnt
          SELECT 'g' || (i % 3), 'p' || i, i * 7, to_char(i * 7, 'FM0000') FROM generate_series(1, 30) i;
        INSERT INTO board SELECT 'game' || (i % 2), 'p' || i, i * 11 FROM generate_series(1, 40) i;
        INSERT INTO files SELECT '/shared/f' || (i % 4) || '.txt', 1000 + i, 'u' || i
          FROM generate_series(1, 20) i;
        -- the shard count changes while the table holds items
        ALTER FOREIGN TABLE board OPTIONS (SET shards '8');
        INSERT INTO board SELECT 'game' || (i % 2), 'q' || i, i * 13 FROM generate_series(1, 10) i;
    """)
    history = bed.query("SELECT option_value FROM pg_options_to_table("
                        "(SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'board'::regclass))"
                        " WHERE option_name = 'layout_history'", database=SOURCE)
    assert history and json.loads(history[0][0])[0]["shards"] == "4", history
    state["rows"] = rows(SOURCE)
    assert all(state["rows"].values()), state["rows"]
    state["work"] = tempfile.mkdtemp(prefix="shard_fdw_dump_")
    os.chmod(state["work"], 0o755)
    state["dump"] = os.path.join(state["work"], "source.dump")
    subprocess.run(["pg_dump", "-Fc", "-f", state["dump"], "-d", SOURCE], check=True)
    state["schema"] = schema_dump(SOURCE)
    cluster = bed.Cluster(state["work"])
    state["cluster"] = cluster


def tear_down():
    """The front, the cluster and what the script made."""
    if "cluster" in state:
        state["cluster"].stop()
    if "front" in state:
        state["front"].stop()
    if "work" in state:
        shutil.rmtree(state["work"], ignore_errors=True)
    bed.drop_scratch(client, tables, SOURCE)
    bed.psql(f"DROP ROLE IF EXISTS {ROLE}")


def in_restored(text, check=True):
    """psql in the restored database."""
    return run_psql(text, RESTORED, state["cluster"].port, check)


@runner.test
def restore_sends_no_request():
    cluster, front = state["cluster"], state["front"]
    # a host without AWS_REGION, and a DynamoDB that resets every connection
    cluster.start(AWS_REGION="")
    front.configure(rates={"connect_reset": 1.0})
    front.reset()
    bed.reset_proxy()
    port = str(cluster.port)
    subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", port, "-d", "postgres",
                    "-c", f"CREATE ROLE {ROLE}", "-c", f"CREATE DATABASE {RESTORED}"],
                   check=True, capture_output=True)
    restore = subprocess.run(["pg_restore", "-h", "127.0.0.1", "-p", port, "-d", RESTORED,
                              state["dump"]], text=True, capture_output=True, check=False)
    assert restore.returncode == 0, restore.stderr
    assert restore.stderr == "", f"pg_restore said:\n{restore.stderr}"
    assert front.stats()["connections"] == 0, front.stats()
    assert bed.stats()["requests_total"] == 0, bed.stats()
    restored = schema_dump(RESTORED, cluster.port)
    assert restored == state["schema"], "\n".join(
        difflib.unified_diff(state["schema"], restored, "source", "restored", lineterm=""))


@runner.test
def region_missing_at_first_use():
    result = in_restored(READS["regional"], check=False)
    assert result.returncode != 0, result.stdout
    assert 'server "from_env" has no AWS region' in result.stderr, result.stderr
    assert front_connections() == 0


def front_connections():
    """The connections the front accepted since its last reset."""
    return state["front"].stats()["connections"]


@runner.test
def restored_tables_read_the_same_rows():
    state["cluster"].start()
    state["front"].configure(rates={})
    assert rows(RESTORED, state["cluster"].port) == state["rows"]
    # the restored layout history still places rows: an item written in
    # the older layout is read and moved
    assert in_restored("SELECT moved > 0, remaining FROM shard_fdw_reshard('board')") == ["t|0"]
    assert rows(RESTORED, state["cluster"].port)["board"] == state["rows"]["board"]


if __name__ == "__main__":
    runner.main(set_up, tear_down)
