#!/usr/bin/python3
"""shard_fdw_stat outside the test run's cluster, which preloads shard_fdw.

A cluster of its own (test/scripts/bed.py's Cluster), first without
shard_fdw in shared_preload_libraries: the extension works, and the view
says how to enable it; then preloaded with shard_fdw.stat_max at 10: the
requests of the tables that find no row left count in the overflow row
until a reset frees the rows.  Ends with "N passed, N failed".
"""

import os

import bed

runner = bed.Runner()
state = {}
TABLES = 12


def sql(text):
    """Run SQL in the test's cluster; fails on any error."""
    return bed.in_database("postgres")(text)


def rows(text):
    """The rows of a query in the test's cluster."""
    return bed.query(text, database="postgres")


def read_every_table():
    """One GetItem through each foreign table."""
    sql("".join(f"SELECT * FROM kv{i} WHERE k = 'k1';\n" for i in range(TABLES)))


@runner.test
def without_preload_the_view_says_how():
    result = bed.psql("SELECT * FROM shard_fdw_stat", check=False, database="postgres")
    assert result.returncode != 0, "the view answered without the preload"
    assert "shard_fdw_stat needs shard_fdw in shared_preload_libraries" in result.stderr, \
        result.stderr
    assert "Add shard_fdw to shared_preload_libraries" in result.stderr, result.stderr
    result = bed.psql("SELECT shard_fdw_stat_reset()", check=False, database="postgres")
    assert "shared_preload_libraries" in result.stderr, result.stderr


@runner.test
def without_preload_the_rest_works():
    assert rows("SELECT count(*) FROM kv0") == [["3"]]
    assert rows("SELECT v FROM kv0 WHERE k = 'k2'") == [["2"]]
    sql("INSERT INTO kv0 VALUES ('k9', 9)")
    assert rows("SELECT v FROM kv0 WHERE k = 'k9'") == [["9"]]
    sql("DELETE FROM kv0 WHERE k = 'k9'")
    # shard_fdw_stats() is a backend's own and needs no preload
    assert rows("SELECT * FROM kv0 WHERE k = 'k1';\n"
                "SELECT requests, consumed_capacity FROM shard_fdw_stats()") == \
        [["k1", "1"], ["1", "0.5"]]


@runner.test
def preloaded_the_view_counts():
    # a setting of a library not loaded yet is refused by ALTER SYSTEM
    with open(os.path.join(state["cluster"].data, "postgresql.conf"), "a",
              encoding="utf-8") as conf:
        conf.write("shared_preload_libraries = 'shard_fdw'\nshard_fdw.stat_max = 10\n")
    state["cluster"].start()
    assert rows("SHOW shard_fdw.stat_max") == [["10"]]
    sql("SELECT shard_fdw_stat_reset()")
    assert rows("SELECT v FROM kv0 WHERE k = 'k1'") == [["1"]]
    assert rows("SELECT ftable, server, requests, items_read, read_units "
                "FROM shard_fdw_stat") == [["kv0", "ddb", "1", "1", "0.5"]]


@runner.test
def a_full_view_counts_the_rest_in_one_row():
    sql("SELECT shard_fdw_stat_reset()")
    read_every_table()
    named = rows("SELECT ftable, requests FROM shard_fdw_stat WHERE relid <> 0 ORDER BY relid")
    assert named == [[f"kv{i}", "1"] for i in range(10)], named
    assert rows("SELECT database, ftable, server, requests FROM shard_fdw_stat "
                "WHERE dbid = 0 AND relid = 0 AND serverid = 0") == [["", "", "", "2"]]
    # the tables with rows keep counting in them
    read_every_table()
    assert rows("SELECT sum(requests) FILTER (WHERE relid <> 0), "
                "sum(requests) FILTER (WHERE relid = 0) FROM shard_fdw_stat") == [["20", "4"]]
    # a reset frees the rows
    sql("SELECT shard_fdw_stat_reset()")
    sql("SELECT * FROM kv11 WHERE k = 'k1'")
    assert rows("SELECT ftable, requests FROM shard_fdw_stat") == [["kv11", "1"]]


def set_up():
    """A DynamoDB table of 3 items, and the cluster (not preloading
    shard_fdw) with TABLES foreign tables over it."""
    keys = bed.cluster_over_table(state, "stat", [{"k": {"S": f"k{i}"}, "v": {"N": str(i)}} for i in range(3)])
    sql(f"""CREATE EXTENSION shard_fdw;
            CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
              OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}');
            CREATE USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS ({keys});"""
        + "".join(f"""CREATE FOREIGN TABLE kv{i} (k text, v int) SERVER ddb
                        OPTIONS (table '{state["table"]}', partition_key 'k');"""
                  for i in range(TABLES)))


def tear_down():
    """Stop what set_up started."""
    bed.cluster_tear_down(state)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
