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
tables = []
state = {}


def rows(database, port=None):
    """Every table of bed.EVERY_KIND_READS read in database (of the test bed's cluster,
    or of the cluster on port): {table: rows}."""
    found = {}
    for table, query in bed.EVERY_KIND_READS.items():
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


def set_up():
    """The DynamoDB tables, the front and the source database."""
    front = WireFront(bed.env("SHARD_FDW_ENDPOINT"))
    state["front"] = front
    bed.psql(f"DROP ROLE IF EXISTS {ROLE}; CREATE ROLE {ROLE};")
    bed.psql(f"CREATE DATABASE {SOURCE}")
    sql("CREATE EXTENSION shard_fdw")
    bed.every_kind_of_table(SOURCE, front.url, tables, ROLE)
    state["rows"] = rows(SOURCE)
    assert all(state["rows"].values()), state["rows"]
    state["work"] = tempfile.mkdtemp(prefix="shard_fdw_dump_")
    os.chmod(state["work"], 0o755)
    state["dump"] = os.path.join(state["work"], "source.dump")
    subprocess.run(["pg_dump", "-Fc", "-f", state["dump"], "-d", SOURCE], check=True)
    state["schema"] = bed.schema_dump(SOURCE)
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
    bed.drop_scratch(bed.ddb(direct=True), tables, SOURCE)
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
    restored = bed.schema_dump(RESTORED, port=cluster.port)
    assert restored == state["schema"], "\n".join(
        difflib.unified_diff(state["schema"], restored, "source", "restored", lineterm=""))


@runner.test
def region_missing_at_first_use():
    result = in_restored(bed.EVERY_KIND_READS["regional"], check=False)
    assert result.returncode != 0, result.stdout
    assert 'server "from_env" has no AWS region' in result.stderr, result.stderr
    assert state["front"].stats()["connections"] == 0


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
