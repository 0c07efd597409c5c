#!/usr/bin/python3
"""Cursors, savepoints and errors in random order, against a local twin.

One session declares cursors in pairs, one over a sharded foreign table and
its twin over a local table holding the same rows, and then drives both
with the same random statements: FETCH and MOVE of random sizes, SAVEPOINT,
ROLLBACK TO and RELEASE, CLOSE, COMMIT and ROLLBACK, cursors WITH HOLD,
errors in the middle of a scan (a division by zero at a given row) and
statements that fail outside any cursor.  The queries are every kind of
read: merged Queries with and without a Limit, BatchGetItem, a parallel
Scan, LATERAL and correlated subqueries that rescan.  Every answer and
every error of a foreign cursor must be its twin's, and the backend must
never die (test/check.sh also fails a stage whose server log shows a
backend killed by a signal).

The random generator's seed is printed first; SHARD_FDW_TEST_SEED sets it.
Talks to DynamoDB Local directly.  Ends with "N passed, N failed".
"""

import itertools
import os
import random

import bed

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "5107"))
DATABASE = bed.unique_name("lifetime")
ROWS = 400
SESSIONS = 6
STATEMENTS = 250
# {t} is the table; unordered queries are compared by row counts only
QUERIES = [
    ("SELECT seq FROM {t} WHERE topic = 't1' ORDER BY seq", True),
    ("SELECT seq FROM {t} WHERE topic = 't0' ORDER BY seq DESC LIMIT 60", True),
    ("SELECT seq FROM {t} WHERE topic = 't1' AND seq IN (1, 3, 5, 7, 9, 11, 13)", False),
    ("SELECT seq, 1000 / (seq - 151) FROM {t} WHERE topic = 't1' ORDER BY seq", True),
    ("SELECT g.t, f.seq FROM (VALUES ('t0'), ('t1')) g(t), LATERAL "
     "(SELECT seq FROM {t} WHERE topic = g.t ORDER BY seq LIMIT 25) f", True),
    ("SELECT i, (SELECT seq FROM {t} WHERE topic = 't' || (i % 2) AND seq = i) "
     "FROM generate_series(1, 40) i", True),
    ("SELECT seq FROM {t}", False),
]
client = None
dynamodb_tables = []
sessions = []


def open_session():
    """A psql session of this script's database.  The local twin reads in
    order through its index, row by row as a merge does, so that an error
    comes at the same row."""
    session = bed.Session(DATABASE)
    session.run("SET enable_seqscan = off; SET enable_sort = off")
    sessions.append(session)
    return session


sql = bed.in_database(DATABASE)


def set_up():
    """A database of its own, one foreign table and its local twin."""
    global client
    print(f"seed {SEED} (set SHARD_FDW_TEST_SEED to repeat another)")
    client = bed.ddb(direct=True)
    table = bed.new_table(client, dynamodb_tables, "lifetime", "pk", "sk")
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql(f"""CREATE EXTENSION shard_fdw;
            {bed.server_sql(direct=True)}
            CREATE FOREIGN TABLE feed (topic text NOT NULL, seq int NOT NULL, body text)
              SERVER ddb OPTIONS (table '{table}',
                partition_key 'pk', partition_key_format '{{topic}}#{{shard}}',
                sort_key 'sk', sort_key_format '{{seq:010}}',
                shards '4', shard_strategy 'calculated', shard_by 'seq',
                shard_hash 'fnv1a_32');
            CREATE TABLE local_feed AS
              SELECT 't' || (i % 2) AS topic, i AS seq, repeat('b', 1000) AS body
                FROM generate_series(1, {ROWS}) i;
            ALTER TABLE local_feed ADD PRIMARY KEY (topic, seq);
            ANALYZE local_feed;
            INSERT INTO feed SELECT * FROM local_feed;""")


def tear_down():
    bed.drop_scratch(client, dynamodb_tables, DATABASE)


def shape(lines):
    """How many lines, and which of them are errors."""
    return [len(lines)] + [line for line in lines if "ERROR" in line]


class Driver:
    """Random statements, each run on two sessions: one over the foreign
    table, the other over its local twin."""

    def __init__(self, rng):
        self.rng = rng
        self.foreign = open_session()
        self.local = open_session()
        self.cursors = {}       # name: whether its query has an order
        self.savepoints = []
        self.names = itertools.count(1)
        self.mismatches = []

    def both(self, statement, ordered=True):
        """Run statement ({t} the table) on both sessions; record any
        difference.  Returns the foreign session's output."""
        foreign = self.foreign.run(statement.format(t="feed"))
        local = self.local.run(statement.format(t="local_feed"))
        if not ordered:
            # rows in arrival order: the same number of them, the same errors
            foreign, local = shape(foreign), shape(local)
        if foreign != local:
            self.mismatches.append((statement, foreign[:6], local[:6]))
        return foreign

    def declare(self):
        query, ordered = self.rng.choice(QUERIES)
        name = f"c{next(self.names)}"
        scroll = "SCROLL " if self.rng.random() < 0.25 else "NO SCROLL "
        hold = "WITH HOLD " if self.rng.random() < 0.25 else ""
        self.cursors[name] = ordered
        self.both(f"DECLARE {name} {scroll}CURSOR {hold}FOR {query}")

    def fetch(self):
        name = self.rng.choice(sorted(self.cursors))
        count = self.rng.choice([1, 2, 3, 10, 40])
        form = self.rng.choice(["FETCH {n} FROM", "FETCH {n} FROM", "FETCH {n} FROM",
                                "MOVE {n} IN", "FETCH BACKWARD {n} FROM",
                                "FETCH ABSOLUTE {n} FROM", "FETCH FIRST FROM"])
        self.both(f"{form.format(n=count)} {name}", self.cursors[name])
        if form.startswith("MOVE"):
            # MOVE shows no count in psql's quiet mode: fetch a row after it
            self.both(f"FETCH 1 FROM {name}", self.cursors[name])

    def step(self):
        """One random statement."""
        r = self.rng.random()
        if r < 0.15 or not self.cursors:
            self.declare()
        elif r < 0.55:
            self.fetch()
        elif r < 0.65:
            name = f"s{next(self.names)}"
            self.both(f"SAVEPOINT {name}")
            self.savepoints.append(name)
        elif r < 0.75 and self.savepoints:
            self.both(f"ROLLBACK TO {self.rng.choice(self.savepoints)}")
        elif r < 0.8 and self.savepoints:
            self.both(f"RELEASE {self.savepoints.pop()}")
        elif r < 0.84:
            self.both("SELECT 1 / (count(*) - count(*)) FROM {t} WHERE topic = 't0'")
        elif r < 0.88:
            self.both("SELECT count(*), sum(seq) FROM {t} WHERE topic = 't1' AND seq < 100")
        elif r < 0.91:
            name = self.rng.choice(sorted(self.cursors))
            self.both(f"CLOSE {name}")
            del self.cursors[name]
        elif r < 0.95:
            self.both(self.rng.choice(["COMMIT", "ROLLBACK"]))
            self.both("BEGIN")
            self.savepoints = []
            held = self.both("SELECT string_agg(name, ' ') FROM pg_cursors")
            self.cursors = {n: o for n, o in self.cursors.items()
                            if n in " ".join(held).split()}
        else:
            self.both("BEGIN")

    def run(self, statements):
        self.both("BEGIN")
        for _ in range(statements):
            self.step()
        self.both("ROLLBACK")
        self.foreign.close()
        self.local.close()


@runner.test
def cursors_match_their_twins():
    rng = random.Random(SEED)
    mismatches = []
    for _ in range(SESSIONS):
        driver = Driver(random.Random(rng.random()))
        driver.run(STATEMENTS)
        mismatches += driver.mismatches
    print(f"{sum(s.count for s in sessions)} statements in {SESSIONS} sessions, "
          f"{len(mismatches)} differences")
    for statement, foreign, local in mismatches[:5]:
        print(f"  {statement}\n    foreign: {foreign}\n    local:   {local}")
    assert not mismatches


if __name__ == "__main__":
    runner.main(set_up, tear_down)
