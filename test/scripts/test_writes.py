#!/usr/bin/python3
"""Differential test of the write path: foreign tables against local twins.

Every shard strategy (none, calculated, range, random, dynamic), each in
insert mode and in upsert mode, is a foreign table with a local PostgreSQL
twin.  Random statements run on both, one after the other in one session:
INSERT of one or several rows (keys repeated inside a statement and across
statements, ON CONFLICT DO NOTHING, RETURNING), COPY, UPDATE (of other
columns, to NULL, of several columns, moving an item to a new key,
RETURNING; a bulk UPDATE of a group's rows with RETURNING, their writes
in flight together, some moving, some meeting a key taken) and DELETE
(inside the scan, and with RETURNING).  After every statement the outcome
(SQLSTATE, row count, RETURNING rows) and the whole contents must match
the twin's.  An upsert-mode table's twin writes each
row with INSERT ... ON CONFLICT DO UPDATE, one row at a time, since a
later row of a statement wins.

A random or dynamic shard is chosen per row, so only the shard's key is
unique there: those tables get fresh keys only.  A statement that fails
leaves what DynamoDB wrote before the failure (no multi-item atomicity):
the SQLSTATEs must match, an INSERT's or COPY's extra items must be rows of
the statement, as many as its error context says were written, an
UPDATE that moves rows must have moved at least as many as its error
context says were written and at most those it says may have been too,
and the twin then takes the foreign table's contents.

The calculated and random tables' partitions also hold an item of
another entity each (sort key "META", single-table design): reads take
it as a row without an id, which the contents leave out, and no UPDATE or
DELETE may touch it: it must be there unchanged at the end.

A second phase injects faults through the proxy before statements: a 500
or a reset after the write was applied, a truncated body, a bad CRC, a
throttle, a 503; counts and contents must still match.

The seed is printed first; SHARD_FDW_TEST_SEED sets it.
SHARD_FDW_WRITES_STATEMENTS sets the statements per table and phase
(default 20: 400 statements in all).  Ends with "N passed, N failed".
"""

import collections
import itertools
import json
import os
import random
import re

import bed
from bed import sql_literal

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "7341"))
STATEMENTS = int(os.environ.get("SHARD_FDW_WRITES_STATEMENTS", "20"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("writes")
MARK = "@@"
COLUMNS = "grp text NOT NULL, id text NOT NULL, score bigint NOT NULL, n integer, name text"
NAMES = ["grp", "id", "score", "n", "name"]
LEADERBOARD = ("partition_key 'pk', partition_key_format '{grp}#{shard}', "
               "sort_key 'sk', sort_key_format '{score:020}#{id}'")
# strategy: (DynamoDB key attributes, table options, key columns, whether
# a key may be written again: random and dynamic shards are per row)
STRATEGIES = {
    "none": (("grp", "id"), "partition_key 'grp', sort_key 'id'", ("grp", "id"), True),
    "calculated": (("pk", "sk"), LEADERBOARD + """, shards '5',
        shard_strategy 'calculated', shard_by 'id', shard_hash 'fnv1a_32'""",
                   ("grp", "score", "id"), True),
    "range": (("pk", "id"), """partition_key 'pk', partition_key_format '{grp}#{shard}',
        sort_key 'id', shard_strategy 'range', shard_by 'id', range_normalize 'none',
        range_boundaries '["", "k3", "k6"]'""", ("grp", "id"), True),
    "random": (("pk", "sk"), LEADERBOARD + ", shards '4', shard_strategy 'random'",
               ("grp", "score", "id"), False),
    "dynamic": (("pk", "id"), """partition_key 'pk', partition_key_format '{grp}_{shard}',
        sort_key 'id', shard_strategy 'dynamic', metadata_table '{meta}',
        metadata_key 'base', cooldown_s '0', max_shards '4', metadata_cache_ms '0'""",
                ("grp", "id"), False),
}
MODES = ("insert", "upsert")
WRITE_ACTIONS = ["PutItem", "BatchWriteItem", "UpdateItem", "DeleteItem",
                 "TransactWriteItems"]
FAULTS = [
    {"kind": "status", "status": 500, "when": "after"},
    {"kind": "reset", "when": "after"},
    {"kind": "truncate"},
    {"kind": "badcrc"},
    {"kind": "throttle"},
    {"kind": "status", "status": 503},
]
WRITTEN = re.compile(r"(\d+) rows? of this statement (?:written|deleted)"
                     r"(?:, and up to (\d+) more may have been)?")
client = None
dynamodb_tables = []
fresh = itertools.count(1)
figures = collections.Counter()


# ---------------------------------------------------------------- helpers


def row_text(row):
    """A row as psql -A prints it: texts, NULL as ''."""
    return tuple("" if v is None else str(v) for v in row)


def sql(text):
    """Run SQL in this script's database; an error carries psql's message."""
    result = bed.psql(text, check=False, database=DATABASE)
    assert result.returncode == 0, f"{result.stderr.strip()}\nin: {text.strip()[:300]}"
    return result


class Table:
    """A foreign table and its local twin, and the random statements on them."""

    def __init__(self, strategy, mode, phase):
        attributes, options, key, reusable = STRATEGIES[strategy]
        self.name = f"{phase}_{strategy}_{mode}"
        self.twin = f"{self.name}_twin"
        self.key = key
        self.reusable = reusable
        self.upsert = mode == "upsert"
        table = bed.new_table(client, dynamodb_tables, "writes", *attributes)
        if strategy == "dynamic":
            meta = bed.new_table(client, dynamodb_tables, "writes_meta", "base")
            options = options.replace("{meta}", meta)
        sql(f"""CREATE FOREIGN TABLE {self.name} ({COLUMNS}) SERVER ddb
                  OPTIONS (table '{table}', insert_mode '{mode}', {options});
                CREATE TABLE {self.twin} ({COLUMNS}, PRIMARY KEY ({', '.join(key)}));""")
        self.table = table
        self.strays = []
        if "sort_key_format" in options:
            self.strays = [{"pk": {"S": f"{grp}#0"}, "sk": {"S": "META"},
                            "note": {"S": "another entity's"}} for grp in ("a", "b")]
            for item in self.strays:
                client.put_item(TableName=table, Item=item)

    def strays_changed(self):
        """The items of another entity that are gone or changed."""
        return [item for item in self.strays
                if client.get_item(TableName=self.table, ConsistentRead=True,
                                   Key={"pk": item["pk"], "sk": item["sk"]}
                                   ).get("Item") != item]

    # ------------------------------------------------------------ values

    def new_id(self):
        """An id: from a small pool where keys may repeat, else fresh."""
        if self.reusable and rng.random() < 0.85:
            return f"k{rng.randint(0, 9)}"
        return f"f{next(fresh)}"

    def new_row(self):
        return (rng.choice(["a", "b"]), self.new_id(), rng.randint(0, 5),
                rng.choice([None, rng.randint(0, 9)]),
                rng.choice([None, "x", "y'z", "ü"]))

    def predicate(self):
        """A WHERE clause, or none."""
        return rng.choice([
            "", f"WHERE grp = {sql_literal(rng.choice(['a', 'b']))}",
            f"WHERE id = {sql_literal(self.new_id())}",
            f"WHERE n > {rng.randint(0, 9)}", "WHERE n IS NULL",
            f"WHERE score <= {rng.randint(0, 5)} AND name IS NOT NULL",
        ])

    # -------------------------------------------------------- statements

    def insert(self, rows, suffix):
        """The foreign statement and the twin's for an INSERT of rows."""
        values = ", ".join("(" + ", ".join(map(sql_literal, r)) + ")" for r in rows)
        foreign = f"INSERT INTO {self.name} VALUES {values}{suffix}"
        if not self.upsert or "DO NOTHING" in suffix:
            return foreign, [f"INSERT INTO {self.twin} VALUES {values}{suffix}"]
        update = ", ".join(f"{c} = EXCLUDED.{c}" for c in NAMES if c not in self.key)
        return foreign, [f"INSERT INTO {self.twin} VALUES ({', '.join(map(sql_literal, r))}) "
                         f"ON CONFLICT ({', '.join(self.key)}) DO UPDATE SET {update}"
                         f"{suffix}" for r in rows]

    def statement(self):
        """A random statement: (kind, foreign text, twin texts, rows written
        by an INSERT or COPY, COPY data lines or None)."""
        kind = rng.choice(["insert"] * 4 + ["copy", "update", "update", "move", "bulk",
                                            "delete", "delete"])
        returning = " RETURNING *" if rng.random() < 0.3 else ""
        if kind == "insert":
            rows = [self.new_row() for _ in range(rng.choice([1, 1, 2, 3, 5]))]
            if self.reusable and len(rows) > 1 and rng.random() < 0.4:
                repeated = rng.choice(rows[:-1])
                rows.append(repeated[:3] + self.new_row()[3:])
            suffix = " ON CONFLICT DO NOTHING" if rng.random() < 0.3 else ""
            return (kind, *self.insert(rows, suffix + returning), rows, None)
        if kind == "copy":
            rows = [self.new_row() for _ in range(rng.randint(1, 5))]
            lines = ["\t".join("\\N" if v is None else str(v) for v in r) for r in rows]
            if self.upsert:
                twin = self.insert(rows, "")[1]
            else:
                twin = [f"COPY {self.twin} FROM stdin"]
            return kind, f"COPY {self.name} FROM stdin", twin, rows, lines
        if kind == "update":
            sets = rng.choice([
                f"n = {sql_literal(rng.choice([None, rng.randint(0, 9)]))}",
                "n = NULL, name = NULL",
                f"name = {sql_literal(rng.choice(['u', 'v']))}, n = coalesce(n, 0) + 1",
                "name = NULL",
            ])
            text = f"UPDATE {{t}} SET {sets} {self.predicate()}{returning}"
        elif kind == "move":
            if self.reusable:
                # one row, so that which of two moves meets a key first
                # cannot depend on the order the rows come in
                change = rng.choice([f"id = {sql_literal(self.new_id())}",
                                     f"score = {rng.randint(0, 5)}",
                                     f"grp = {sql_literal(rng.choice(['a', 'b']))}"])
                where = (f"WHERE id = {sql_literal(self.new_id())} "
                         f"AND grp = {sql_literal(rng.choice(['a', 'b']))}")
                if "score" in self.key:
                    where += f" AND score = {rng.randint(0, 5)}"
            else:
                change = rng.choice([f"id = id || '_{next(fresh)}'",
                                     "score = score + 1, n = 7"])
                where = self.predicate()
            text = f"UPDATE {{t}} SET {change} {where}{returning}"
        elif kind == "bulk":
            text = self.bulk_update()
        else:
            text = f"DELETE FROM {{t}} {self.predicate()}{returning}"
        return kind, text.format(t=self.name), [text.format(t=self.twin)], None, None


    def bulk_update(self):
        """An UPDATE of a group's rows at once with RETURNING, their writes
        in flight together: in place, or moving each row to a new key (a
        fresh id, which no other row has; where keys are written again, not
        the score, as two rows of one id could pass each other), or, where
        the key is the group and the id, moving one row onto the key of a
        row the statement leaves alone, a unique violation whichever row
        comes first."""
        grp = sql_literal(rng.choice(["a", "b"]))
        suffix = f"id || '_{next(fresh)}'"
        if self.reusable and "score" not in self.key and rng.random() < 0.3:
            one, other = (sql_literal(f"k{i}") for i in rng.sample(range(10), 2))
            return (f"UPDATE {{t}} SET id = CASE id WHEN {one} THEN {other} ELSE {suffix} END, "
                    f"n = 8 WHERE grp = {grp} AND id <> {other} RETURNING *")
        change = rng.choice([f"id = {suffix}, n = 6", "n = coalesce(n, 0) + 1, name = 'bulk'"] +
                            ([] if self.reusable else ["score = score + 1, name = 'moved'"]))
        return f"UPDATE {{t}} SET {change} WHERE grp = {grp} RETURNING *"


def fault_command():
    """A psql line that queues a random fault on a write action."""
    spec = dict(rng.choice(FAULTS), action=rng.choice(WRITE_ACTIONS),
                skip=rng.randint(0, 2), count=rng.randint(1, 2))
    body = json.dumps(spec).replace("'", "")
    return f"\\! curl -s -o /dev/null -X POST \"$SHARD_FDW_PROXY/faults\" -d '{body}'"


# ---------------------------------------------------------------- running


def script(table, statements, faults):
    """The psql script of a run and, by script line, the statement (its
    number, and 0 for the foreign one or 1 + the twin's) on that line."""
    order = ", ".join(NAMES)
    lines = ["\\set ON_ERROR_STOP off", "\\set VERBOSITY verbose"]
    line_of = {}
    for i, (kind, foreign, twin, rows, data) in enumerate(statements):
        if faults and rng.random() < 0.6:
            lines.append(fault_command())
            figures["faults queued"] += 1
        lines.append(f"\\echo {MARK}foreign {i}")
        for j, text in enumerate([foreign] + twin):
            if j == 1:
                lines.append(f"\\echo {MARK}twin")
            lines.append(text + ";")
            if data is not None and text.startswith("COPY"):
                lines += data + ["\\."]
            # psql names the end of COPY's data as the line of its errors
            line_of[len(lines)] = (i, j)
            # psql leaves ROW_COUNT (and SQLSTATE) alone when COPY fails:
            # the SQLSTATE comes from the error message
            lines.append(f"\\echo {MARK}outcome :ROW_COUNT")
        lines.append(f"\\echo {MARK}contents")
        # another entity's items read as rows without an id: left out
        lines.append(f"SELECT * FROM {table.name} WHERE id <> '' ORDER BY {order};")
        lines.append(f"\\echo {MARK}twin contents")
        lines.append(f"SELECT * FROM {table.twin} ORDER BY {order};")
        # every statement starts from the same rows on both sides, also
        # after a failure left what DynamoDB wrote before it
        lines.append(f"DELETE FROM {table.twin}; INSERT INTO {table.twin} "
                     f"SELECT * FROM {table.name} WHERE id <> '';")
    return "\n".join(lines) + "\n", line_of


def parse(output, count):
    """Each statement's foreign and twin results from psql's stdout."""
    results = [{"foreign": [], "twin": [], "contents": [], "twin contents": [],
                "outcomes": []} for _ in range(count)]
    current = None
    section = None
    for line in output.splitlines():
        if line.startswith(MARK):
            words = line[len(MARK):].split(" ")
            if words[0] == "foreign":
                current = results[int(words[1])]
                section = "foreign"
            elif words[0] == "outcome":
                current["outcomes"].append(int(words[1]) if words[1].isdigit() else 0)
            else:
                section = " ".join(words)
        elif line and current is not None:
            current[section].append(tuple(line.split(bed.FIELD_SEPARATOR)))
    return results


def errors(stderr, line_of):
    """The error text of each failed statement, by (statement, 0 for the
    foreign one or 1 + the twin's)."""
    found = {}
    for message in stderr.split("psql:<stdin>:")[1:]:
        number, _, text = message.partition(":")
        if number.isdigit() and int(number) in line_of and "ERROR:" in text:
            found[line_of[int(number)]] = " ".join(text.split())
    return found


def sqlstate(error):
    """The SQLSTATE of an error in VERBOSITY verbose, or 00000 without one."""
    return error.split("ERROR:", 1)[1].split(":", 1)[0].strip() if error else "00000"


def check(table, statement, result, before, failures):
    """The differences between a foreign statement's outcome and its twin's;
    failures holds their errors, 0 for the foreign one, 1 + the twin's."""
    kind, foreign, twin, rows, _ = statement
    error = failures.get(0)
    state = sqlstate(error)
    twin_state = next((sqlstate(failures[j]) for j in range(1, len(twin) + 1)
                       if j in failures), "00000")
    count, twin_count = result["outcomes"][0], sum(result["outcomes"][1:])
    contents = result["contents"]
    problems = []
    if state != twin_state:
        problems.append(f"SQLSTATE {state}, twin {twin_state}: {error or ''}")
    elif state == "00000":
        figures["succeeded"] += 1
        if count != twin_count:
            problems.append(f"row count {count}, twin {twin_count}")
        if collections.Counter(result["foreign"]) != collections.Counter(result["twin"]):
            problems.append(f"RETURNING {sorted(result['foreign'])}, "
                            f"twin {sorted(result['twin'])}")
        if contents != result["twin contents"]:
            problems.append("contents differ")
    else:
        figures["failed " + state] += 1
        added = collections.Counter(contents) - collections.Counter(before)
        if kind in ("insert", "copy") and not table.upsert:
            written = WRITTEN.search(error or "")
            lost = collections.Counter(before) - collections.Counter(contents)
            if lost:
                problems.append(f"a failed {kind} removed {sorted(lost)}")
            if not written or int(written.group(1)) != sum(added.values()):
                problems.append(f"{sum(added.values())} rows added, the error says: {error}")
            if added - collections.Counter(row_text(r) for r in rows):
                problems.append(f"a failed {kind} added rows it did not have: {sorted(added)}")
        if kind in ("move", "bulk") and "SET id = " in foreign:
            # each row the UPDATE wrote left its key for a new one
            written = WRITTEN.search(error or "")
            moved = sum(added.values())
            if not written or not (int(written.group(1)) <= moved <=
                                   int(written.group(1)) + int(written.group(2) or 0)):
                problems.append(f"{moved} rows moved, the error says: {error}")
    if problems:
        return (f"\n  {foreign}\n    " + "\n    ".join(problems) +
                f"\n    foreign: {contents}\n    twin:    {result['twin contents']}")
    return None


def run(table, count, faults):
    """count random statements on a table; returns the failure reports."""
    statements = [table.statement() for _ in range(count)]
    text, line_of = script(table, statements, faults)
    bed.clear_faults()
    result = bed.psql(text, check=False, database=DATABASE)
    bed.clear_faults()
    results = parse(result.stdout, len(statements))
    failed = errors(result.stderr, line_of)
    failures = []
    before = []
    for i, (statement, outcome) in enumerate(zip(statements, results)):
        figures["statements"] += 1
        figures[statement[0]] += 1
        if len(outcome["outcomes"]) < 2:
            failures.append(f"\n  {statement[1]}\n    no outcome: {result.stderr[-2000:]}")
            break
        report = check(table, statement, outcome, before,
                       {j: e for (k, j), e in failed.items() if k == i})
        if report:
            failures.append(report)
        before = outcome["contents"]
    return failures


def check_tables(faults):
    """Every strategy in both modes, STATEMENTS statements each."""
    failures = []
    for strategy in STRATEGIES:
        for mode in MODES:
            table = Table(strategy, mode, "faults" if faults else "plain")
            failures += [f"[{table.name}]" + f for f in run(table, STATEMENTS, faults)]
            failures += [f"[{table.name}] another entity's item changed: {item}"
                         for item in table.strays_changed()]
    assert not failures, (f"{len(failures)} statements differ (seed {SEED}):"
                          + "".join(failures[:10]))


# ------------------------------------------------------------------ setup


def set_up():
    global client
    print(f"seed {SEED} (set SHARD_FDW_TEST_SEED to repeat another)")
    client = bed.ddb(direct=True)
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql(f"""CREATE EXTENSION shard_fdw;
            {bed.server_sql(direct=False)}""")


def tear_down():
    print("ran " + ", ".join(f"{k}: {v}" for k, v in sorted(figures.items())))
    bed.drop_scratch(client, dynamodb_tables, DATABASE)


# ------------------------------------------------------------------ tests


@runner.test
def statements_match_local_twins():
    check_tables(faults=False)


@runner.test
def statements_match_local_twins_under_faults():
    check_tables(faults=True)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
