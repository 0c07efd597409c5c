#!/usr/bin/python3
"""Scripted test: capacity budgets, measured against DynamoDB's own figures.

A table of ITEMS items of about 1 KB is scanned (a parallel Scan, many
requests in flight) under max_read_units_per_second, and written under
max_write_units_per_second.  The proxy adds up the ConsumedCapacity that
DynamoDB Local answers with, by table; divided by the statement's wall
time it must be within 10 % of the budget (and not merely below it: the
budget is a pace, not only a ceiling).  The same scan without a budget
must run much faster, so that the pace is the budget's doing, and EXPLAIN
ANALYZE must show the time waited for the budget.

Run by test/check.sh; ends with "N passed, N failed".
"""

import re
import time

import bed

runner = bed.Runner()

DATABASE = bed.unique_name("budget")
ITEMS = 2000
READ_BUDGET = 25        # units per second: about ten seconds of Scan
WRITE_BUDGET = 100      # units per second: about four seconds of writes
WRITE_ROWS = 400
TOLERANCE = 0.10

client = None
tables = []
state = {}


def sql(text):
    """Run SQL in this script's database; fails on any error."""
    return bed.in_database(DATABASE)(text)


def consumed(table):
    """The capacity DynamoDB reported for table since the last call."""
    units = bed.stats()["consumed_capacity"].get(table, 0.0)
    bed.reset_proxy()
    return units


def timed(text):
    """Run text; the seconds it took."""
    started = time.monotonic()
    sql(text)
    return time.monotonic() - started


def set_up():
    """The database, the table, its items (written without a budget)."""
    global client
    client = bed.ddb()
    bed.psql(f"CREATE DATABASE {DATABASE}")
    state["table"] = bed.new_table(client, tables, "budget", "k")
    state["writes"] = bed.new_table(client, tables, "budget_w", "k")
    sql("CREATE EXTENSION shard_fdw;" + bed.server_sql() + f"""
        CREATE FOREIGN TABLE items (k text, pad text)
          SERVER ddb OPTIONS (table '{state["table"]}', partition_key 'k');
        CREATE FOREIGN TABLE sink (k text, pad text)
          SERVER ddb OPTIONS (table '{state["writes"]}', partition_key 'k');
        INSERT INTO items SELECT 'k' || i, repeat('x', 1000) FROM generate_series(1, {ITEMS}) i;""")
    bed.reset_proxy()


def tear_down():
    """Drop what set_up made."""
    bed.drop_scratch(client, tables, DATABASE)


@runner.test
def scan_keeps_to_the_read_budget():
    """A parallel Scan under max_read_units_per_second consumes, by
    DynamoDB's count, within 10 % of the budget per second."""
    free_s = timed("SELECT count(*) FROM items")
    units = consumed(state["table"])
    assert units > 5 * READ_BUDGET, f"the scan should cost several seconds of budget: {units}"
    sql(f"ALTER FOREIGN TABLE items OPTIONS (ADD max_read_units_per_second '{READ_BUDGET}')")
    paced_s = timed("SELECT count(*) FROM items")
    paced_units = consumed(state["table"])
    rate = paced_units / paced_s
    print(f"     {paced_units:.1f} units in {paced_s:.2f} s: {rate:.2f} units/s "
          f"(budget {READ_BUDGET}; {free_s:.2f} s without it)")
    assert abs(paced_units - units) < 1, (units, paced_units)
    assert abs(rate - READ_BUDGET) <= TOLERANCE * READ_BUDGET, rate
    assert paced_s > 3 * free_s, (free_s, paced_s)


@runner.test
def budget_waits_are_interruptible():
    """statement_timeout ends a scan held back by its budget promptly."""
    started = time.monotonic()
    result = bed.psql("SET statement_timeout = '1s'; SELECT count(*) FROM items",
                      check=False, database=DATABASE)
    seconds = time.monotonic() - started
    assert "canceling statement due to statement timeout" in result.stderr, result.stderr
    assert seconds < 3, seconds
    consumed(state["table"])


@runner.test
def server_budget_and_explain():
    """The server's option applies to a table without its own, and EXPLAIN
    ANALYZE shows the time waited for the budget."""
    sql(f"""ALTER FOREIGN TABLE items OPTIONS (DROP max_read_units_per_second);
            ALTER SERVER ddb OPTIONS (ADD max_read_units_per_second '{READ_BUDGET * 2}')""")
    out = sql("EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM items").stdout
    units = consumed(state["table"])
    total_ms = float(re.search(r"Execution Time: ([\d.]+) ms", out).group(1))
    wait_ms = float(re.search(r"DynamoDB Budget Wait: ([\d.]+) ms", out).group(1))
    rate = units / (total_ms / 1000)
    print(f"     {units:.1f} units in {total_ms:.0f} ms, {wait_ms:.0f} ms waiting: {rate:.2f} units/s")
    assert abs(rate - 2 * READ_BUDGET) <= TOLERANCE * 2 * READ_BUDGET, rate
    assert 0.5 * total_ms < wait_ms <= total_ms, (wait_ms, total_ms)
    sql("ALTER SERVER ddb OPTIONS (DROP max_read_units_per_second)")
    out = sql("EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM items").stdout
    assert "Budget Wait" not in out, out


@runner.test
def writes_keep_to_the_write_budget():
    """INSERT under max_write_units_per_second: within 10 % of the budget."""
    sql(f"ALTER FOREIGN TABLE sink OPTIONS (ADD max_write_units_per_second '{WRITE_BUDGET}')")
    consumed(state["writes"])
    seconds = timed(f"INSERT INTO sink SELECT 'w' || i, repeat('y', 900) "
                    f"FROM generate_series(1, {WRITE_ROWS}) i")
    units = consumed(state["writes"])
    rate = units / seconds
    print(f"     {units:.1f} units in {seconds:.2f} s: {rate:.2f} units/s (budget {WRITE_BUDGET})")
    assert units >= WRITE_ROWS, units
    assert abs(rate - WRITE_BUDGET) <= TOLERANCE * WRITE_BUDGET, rate
    assert sql("SELECT count(*) FROM sink").stdout.strip() == str(WRITE_ROWS)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
