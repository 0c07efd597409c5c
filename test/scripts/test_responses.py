#!/usr/bin/python3
"""Response fuzzing: SELECTs whose DynamoDB answers the proxy mutates.

Three DynamoDB tables hold items with a column of every type the extension
maps (text, numeric, double, boolean, bytea, timestamptz, jsonb maps and
lists, text[], numeric[] and bytea[] sets, and the whole item as jsonb
through attribute '*'): one plain (partition and number sort key), one
sharded by a calculated hash over 4 shards and one by random over 3, with
the leaderboard's templates (hashed on player_id).  A pool of queries over
them (Query, Scan, GetItem, BatchGetItem, COUNT, FilterExpression, merges of
shards with ORDER BY ... LIMIT) is answered once without faults.  Then each
statement runs with one to three "mutate" faults queued in the proxy (see
the docstring of test/proxy/answermutations.py for the mutations), and the proxy's
log says which mutations were applied and where.  Each statement must end:
* without a crash (the psql session survives; the server log shows no
  "terminated by signal") and without a hang (statement_timeout, and this
  script's own patience beyond it);
* with exactly the answer read without faults when every mutation applied
  was benign, or changed nothing;
* with an error when a malformed value was in an attribute the query uses
  (of an item it reaches), or a LastEvaluatedKey repeated; the error's
  SQLSTATE is not XX000 and its text names the attribute (and the item's
  partition key) or the part of the answer that was wrong;
* otherwise (a mutation of an attribute the query does not use, or of the
  transport, which a retry may mend) with the right answer or such an
  error; values past DynamoDB's limits (32 levels, 400 KB) may also be
  read faithfully.

Never a different answer.  A 32-level value, the deepest DynamoDB stores,
must read back.  The seed is printed first (SHARD_FDW_TEST_SEED sets it);
SHARD_FDW_RESPONSES_STATEMENTS sets how many statements run and
SHARD_FDW_RESPONSES_TIMEOUT_MS the statement_timeout.  A summary gives, per
mutation class, how many responses were mutated and how the statements
ended.  Ends with "N passed, N failed".
"""

import base64
import collections
import decimal
import itertools
import json
import os
import random
import re
import sys
import time

import bed

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "90210"))
STATEMENTS = int(os.environ.get("SHARD_FDW_RESPONSES_STATEMENTS", "2500"))
TIMEOUT_MS = int(os.environ.get("SHARD_FDW_RESPONSES_TIMEOUT_MS", "8000"))
PATIENCE_S = TIMEOUT_MS / 1000 + 15
rng = random.Random(SEED)
DATABASE = bed.unique_name("responses")
ROW_MARK = "@r"
LEK_COUNT = 64
HUGE_FILL_MIN = 1000
DEEP_KEY = "__deep__"
ALL = "*"
VALUE_COLUMNS = {
    "t": "text", "n": "numeric", "d": "double precision", "b": "boolean",
    "raw": "bytea", "ts": "timestamptz", "jm": "jsonb", "jl": "jsonb",
    "tags": "text[]", "nums": "numeric[]", "blobs": "bytea[]",
}
VALUES_DDL = ", ".join(f"{name} {kind}" for name, kind in VALUE_COLUMNS.items())
LEADERBOARD = """partition_key 'pk', partition_key_format '{{game}}#{{shard}}',
    sort_key 'sk', sort_key_format '{{score:020}}#{{id}}', shards '{shards}',
    shard_strategy '{strategy}'"""
SHARDED = {
    "calc": LEADERBOARD.format(shards=4, strategy="calculated")
    + ", shard_by 'id', shard_hash 'fnv1a_32'",
    "rand": LEADERBOARD.format(shards=3, strategy="random"),
}
PLAIN_KEYS = ["p1", "p2", "p3"]
GAMES = ["g1", "g2"]
# the mutations of each class (the proxy refuses a name it does not know)
CLASSES = {
    "shape": ["s_not_string", "n_not_string", "m_not_object", "l_not_array",
              "bool_not_bool", "null_false", "set_not_array", "set_member_type",
              "set_empty", "two_tags", "no_tag"],
    "tag": ["tag_unknown", "tag_lowercase", "tag_empty"],
    "utf8": ["utf8_raw", "utf8_surrogate"],
    "base64": ["b_bad", "bs_bad"],
    "number": ["n_garbage", "n_empty", "n_overflow", "n_40digits"],
    "depth": ["deep_33", "deep_500"],
    "huge": ["huge_string", "huge_number"],
    "key": ["key_missing", "key_malformed", "key_wrong_type"],
    "response": ["items_not_array", "item_not_object", "count_not_number",
                 "responses_not_object", "not_object", "error_200"],
    "body": ["truncate_body", "truncate_stream", "bad_crc"],
    "lek": ["lek_repeat", "lek_cycle", "lek_malformed"],
    "benign": ["shuffle_members", "whitespace", "unicode_escapes",
               "number_spellings"],
}
VALUE_CLASSES = {"shape", "tag", "utf8", "base64", "number", "depth", "huge", "key"}
LENIENT = {"deep_33", "deep_500", "huge_string"}   # may also read faithfully
EITHER = {"truncate_body", "truncate_stream", "bad_crc", "not_object", "error_200"}
# what an error must name (any case) when a part of the answer was wrong;
# a malformed LastEvaluatedKey may be caught when it goes back as a start key
PART_NAMES = {"items_not_array": ["items"], "item_not_object": ["item"],
              "responses_not_object": ["responses", "has no items"], "count_not_number": ["count"],
              "lek_malformed": ["lastevaluatedkey", "exclusivestartkey", "start key"],
              "lek_repeat": ["lastevaluatedkey"], "lek_cycle": ["lastevaluatedkey"],
              # found in the body before parsing: no attribute is known yet
              "deep_500": ["nesting too deep"], "utf8_surrogate": ["surrogate"],
              "error_200": ["http 200"]}
FAILURES = ("crash", "hang", "internal", "unclear error", "wrong answer",
            "accepted", "spurious error")
client = None
created = []       # the DynamoDB tables made, for tear_down
tables = {}        # foreign table -> DynamoDB table
leaders = {}       # sharded foreign table -> its (game, id, score) rows
pool = []          # the queries, with their answers read without faults
pg_log = None


# ---------------------------------------------------------------- helpers


def sql(text):
    """Run SQL in this script's database; an error carries psql's message."""
    result = bed.psql(text, check=False, database=DATABASE)
    assert result.returncode == 0, f"{result.stderr.strip()}\nin: {text.strip()[:300]}"
    return result


def literal(value):
    """A value as an SQL literal (None is NULL)."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray)):
        return f"'\\x{value.hex()}'::bytea"
    if isinstance(value, (list, dict)):
        return "'" + json.dumps(value, ensure_ascii=False).replace("'", "''") + "'"
    return "'" + str(value).replace("'", "''") + "'"


def array_literal(values, kind):
    """ARRAY[...]::kind[] (None is NULL)."""
    if values is None:
        return "NULL"
    return f"ARRAY[{', '.join(literal(v) for v in values)}]::{kind}[]"


def word(low=1, high=12):
    """A random string: ASCII, accents, CJK, an emoji, quotes, slashes."""
    letters = "abcdefxyzABC éü日本🎲/\\\"'<>&%_#"
    return "".join(rng.choice(letters) for _ in range(rng.randint(low, high)))


def number_text():
    """A random decimal as DynamoDB stores it."""
    return str(decimal.Decimal(rng.randint(-10**9, 10**9)).scaleb(-rng.randint(0, 6))
               .normalize())


def maybe(value, chance=0.15):
    """value, or None with the given chance."""
    return None if rng.random() < chance else value


def json_value(depth=0):
    """A random JSON value for the jsonb columns."""
    pick = rng.randrange(7 if depth < 3 else 4)
    if pick == 0:
        return word()
    if pick == 1:
        return json.loads(number_text())
    if pick == 2:
        return rng.random() < 0.5
    if pick == 3:
        return None
    if pick in (4, 5):
        return {word(1, 5): json_value(depth + 1) for _ in range(rng.randint(0, 3))}
    return [json_value(depth + 1) for _ in range(rng.randint(0, 3))]


def value_columns():
    """Random values for VALUE_COLUMNS, as SQL literals in order."""
    tags = sorted({word(1, 6) for _ in range(rng.randint(1, 3))})
    nums = sorted({number_text() for _ in range(rng.randint(1, 3))})
    blobs = sorted({bytes(rng.randrange(256) for _ in range(rng.randint(0, 5)))
                    for _ in range(rng.randint(1, 3))})
    values = [
        literal(maybe(word())), literal(maybe(number_text())),
        literal(maybe(repr(rng.uniform(-1e6, 1e6)))),
        literal(maybe(rng.choice(["true", "false"]))),
        literal(maybe(bytes(rng.randrange(256) for _ in range(rng.randint(0, 9))))),
        literal(maybe(f"20{rng.randint(10, 29)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} "
                      f"0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:00.{rng.randint(0, 999999):06}+00")),
        literal(maybe({word(1, 5): json_value(1) for _ in range(rng.randint(1, 4))})),
        literal(maybe([json_value(1) for _ in range(rng.randint(1, 4))])),
        array_literal(maybe(tags), "text"), array_literal(maybe(nums), "numeric"),
        array_literal(maybe(blobs), "bytea"),
    ]
    return ", ".join(values)


def canonical(value):
    """A value with what faithful reads of deep_* and huge_string add
    taken away: {"__deep__": x} wrappers and long runs of "~"."""
    if isinstance(value, dict):
        while isinstance(value, dict) and list(value) == [DEEP_KEY]:
            value = value[DEEP_KEY]
        if not isinstance(value, dict):
            return canonical(value)
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, str) and value.endswith("~" * HUGE_FILL_MIN):
        return value.rstrip("~")
    return value


def parse_rows(lines):
    """The rows of a wrapped query's output (numbers as Decimal)."""
    return [json.loads(line[len(ROW_MARK):], parse_float=decimal.Decimal,
                       parse_int=decimal.Decimal)
            for line in lines if line.startswith(ROW_MARK)]


def server_log_path():
    """The PostgreSQL server's log: SHARD_FDW_PG_LOG, or postgres.log
    beside the data directory (where test/lib.sh puts it)."""
    path = os.environ.get("SHARD_FDW_PG_LOG")
    if path:
        return path
    data = bed.query("SHOW data_directory")[0][0]
    return os.path.join(os.path.dirname(data), "postgres.log")


class ServerLog:
    """The part of the server log written since this script began."""

    def __init__(self, path):
        self.path = path
        self.offset = os.path.getsize(path)

    def crashes(self):
        """The "terminated by signal" lines written since the start."""
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            text = log.read().decode("utf-8", "replace")
        return [line for line in text.splitlines() if "terminated by signal" in line]


# ---------------------------------------------------------------- session


def open_session():
    """A psql session of this script's database, with verbose errors (so
    that they come with their SQLSTATE) and the statement_timeout; its
    backend's pid in .pid.  Waits while the server restarts."""
    deadline = time.monotonic() + 60
    while True:
        session = bed.Session(DATABASE, patience_s=PATIENCE_S)
        try:
            session.run("\\set VERBOSITY verbose\n"
                        f"SET statement_timeout = {TIMEOUT_MS}")
            session.pid = session.backend_pid()
            return session
        except (bed.SessionLost, ValueError):   # the server is restarting
            session.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


# ------------------------------------------------------------------ setup


def set_up():
    """The database, the servers, the tables and their items."""
    global client, pg_log
    sys.setrecursionlimit(20000)   # rows holding values 500 levels deep
    print(f"seed {SEED} (SHARD_FDW_TEST_SEED), {STATEMENTS} statements, "
          f"statement_timeout {TIMEOUT_MS} ms")
    client = bed.ddb(direct=True)
    pg_log = ServerLog(server_log_path())
    bed.psql(f"CREATE DATABASE {DATABASE}")
    credentials = (f"access_key_id '{bed.env('SHARD_FDW_ACCESS_KEY')}', "
                   f"secret_access_key '{bed.env('SHARD_FDW_SECRET_KEY')}'")
    sql(f"""CREATE EXTENSION shard_fdw;
        CREATE SERVER direct FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_DIRECT_ENDPOINT")}');
        CREATE SERVER proxied FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}', max_retries '2');
        CREATE USER MAPPING FOR CURRENT_USER SERVER direct OPTIONS ({credentials});
        CREATE USER MAPPING FOR CURRENT_USER SERVER proxied OPTIONS ({credentials});""")
    tables["plain"] = bed.new_table(client, created, "responses", "pk", "sk", "N")
    for server, name in (("proxied", "plain"), ("direct", "plain_load")):
        sql(f"""CREATE FOREIGN TABLE {name} (pk text NOT NULL, sk bigint NOT NULL,
                  {VALUES_DDL}) SERVER {server}
                OPTIONS (table '{tables["plain"]}', partition_key 'pk', sort_key 'sk')""")
    sql(f"""CREATE FOREIGN TABLE plain_items (pk text, sk bigint,
              item jsonb OPTIONS (attribute '*')) SERVER proxied
            OPTIONS (table '{tables["plain"]}', partition_key 'pk', sort_key 'sk')""")
    sql("INSERT INTO plain_load VALUES " + ",\n".join(
        f"('{pk}', {sk}, {value_columns()})"
        for pk in PLAIN_KEYS for sk in range(1, 9)))
    scores = rng.sample(range(1, 100000), 2 * len(GAMES) * 16)
    for kind, options in SHARDED.items():
        tables[kind] = bed.new_table(client, created, "responses", "pk", "sk")
        for server, name in (("proxied", kind), ("direct", f"{kind}_load")):
            sql(f"""CREATE FOREIGN TABLE {name} (game text NOT NULL, id text NOT NULL,
                      score bigint NOT NULL, {VALUES_DDL}) SERVER {server}
                    OPTIONS (table '{tables[kind]}', {options})""")
        leaders[kind] = [(game, f"id{i:02}", scores.pop())
                         for game in GAMES for i in range(16)]
        sql(f"INSERT INTO {kind}_load VALUES " + ",\n".join(
            f"('{game}', '{player}', {score}, {value_columns()})"
            for game, player, score in leaders[kind]))
    make_pool()


def tear_down():
    bed.drop_scratch(client, created, DATABASE)


# ---------------------------------------------------------------- queries


class Query:
    """A query of the pool: its SQL, the attributes it uses, and its answer."""

    def __init__(self, text, table, used, limit=False, shown=()):
        self.text = text
        self.table = table        # the foreign table it reads
        self.used = used          # attribute names, or ALL
        self.limit = limit        # a LIMIT: items past it need not be read
        self.shown = list(shown)  # value columns only shown, in no condition
        self.rows = None
        self.ids = set()

    def wrapped(self):
        """The statement, each row one JSON line after ROW_MARK."""
        return f"SELECT '{ROW_MARK}' || to_jsonb(q)::text FROM ({self.text}) q"

    def uses(self, attribute):
        """Whether the query reads this attribute."""
        return self.used == ALL or attribute in self.used

    def reaches(self, item_key):
        """Whether the query reads the item to answer (every item it is
        sent, unless a LIMIT lets it stop before)."""
        if not self.limit:
            return True
        sort_key = (item_key or {}).get("sk", {})
        text = sort_key.get("S") if isinstance(sort_key, dict) else None
        return not isinstance(text, str) or text.partition("#")[2] in self.ids


def columns():
    """A random non-empty subset of the value columns."""
    return rng.sample(sorted(VALUE_COLUMNS), rng.randint(1, len(VALUE_COLUMNS)))


def plain_query():
    """A query over the plain table."""
    cols = columns()
    pk = rng.choice(PLAIN_KEYS)
    select = ", ".join(["sk"] + cols)
    used = set(cols) | {"pk", "sk"}
    shape = rng.randrange(8)
    if shape == 0:
        return Query(f"SELECT {select} FROM plain WHERE pk = '{pk}' ORDER BY sk",
                     "plain", used, shown=cols)
    if shape == 1:
        return Query(f"SELECT pk, {select} FROM plain ORDER BY pk, sk", "plain", used,
                     shown=cols)
    if shape == 2:
        return Query(f"SELECT {select} FROM plain WHERE pk = '{pk}' "
                     f"AND sk = {rng.randint(1, 8)}", "plain", used, shown=cols)
    if shape == 3:
        keys = ", ".join(map(str, rng.sample(range(1, 9), 3)))
        return Query(f"SELECT {select} FROM plain WHERE pk = '{pk}' "
                     f"AND sk IN ({keys}) ORDER BY sk", "plain", used, shown=cols)
    if shape == 4:
        return Query(f"SELECT count(*) FROM plain WHERE pk = '{pk}'", "plain", set())
    if shape == 5:
        return Query(f"SELECT {select} FROM plain WHERE pk = '{pk}' AND n > 0 "
                     "ORDER BY sk", "plain", used | {"n"})
    if shape == 6:
        keys = ", ".join(map(str, rng.sample(range(1, 9), 3)))
        return Query(f"SELECT sk, item FROM plain_items WHERE pk = '{pk}' "
                     f"AND sk IN ({keys}) ORDER BY sk", "plain", ALL)
    return Query(f"SELECT pk, sk, item FROM plain_items WHERE sk <= {rng.randint(1, 8)} "
                 "ORDER BY pk, sk", "plain", ALL)


def sharded_query(kind):
    """A query over a sharded table; a merge of shards reads sk."""
    cols = columns()
    game = rng.choice(GAMES)
    select = ", ".join(["id", "score"] + cols)
    used = set(cols) | {"game", "id", "score"}
    shape = rng.randrange(6)
    if shape == 5:
        game, player, score = rng.choice(leaders[kind])
        return Query(f"SELECT {select} FROM {kind} WHERE game = '{game}' "
                     f"AND id = '{player}' AND score = {score}", kind, used, shown=cols)
    if shape == 0:
        order = rng.choice(["score DESC, id DESC", "score"])
        return Query(f"SELECT {select} FROM {kind} WHERE game = '{game}' "
                     f"ORDER BY {order} LIMIT {rng.randint(1, 12)}",
                     kind, used | {"sk"}, limit=True, shown=cols)
    if shape == 1:
        return Query(f"SELECT {select} FROM {kind} WHERE game = '{game}' "
                     "ORDER BY score DESC, id DESC", kind, used | {"sk"}, shown=cols)
    if shape == 2:
        return Query(f"SELECT {select} FROM {kind} WHERE game = '{game}' "
                     f"AND id = 'id{rng.randrange(16):02}'", kind, used, shown=cols)
    if shape == 3:
        return Query(f"SELECT {select} FROM {kind} ORDER BY game, id", kind, used,
                     shown=cols)
    return Query(f"SELECT count(*) FROM {kind} WHERE game = '{game}'", kind, set())


def make_pool():
    """The queries and their answers without faults (one statement each)."""
    seen = set()
    session = open_session()
    try:
        while len(pool) < 160:
            kind = rng.choice(["plain", "plain", "calc", "rand"])
            query = plain_query() if kind == "plain" else sharded_query(kind)
            if query.text in seen:
                continue
            seen.add(query.text)
            lines = session.run(query.wrapped())
            assert all(line.startswith(ROW_MARK) for line in lines), (
                f"{query.text}\n" + "\n".join(lines))
            query.rows = parse_rows(lines)
            query.ids = {row["id"] for row in query.rows if "id" in row}
            pool.append(query)
    finally:
        session.close()


# ------------------------------------------------------------ expectation


def expectation(query, entry):
    """What one logged mutation allows: "right", "either", "lenient"
    (error, or the answer read faithfully) or "error"."""
    name = entry["mutation"]
    if not entry["applied"] or entry["class"] == "benign":
        return "right"
    if name in EITHER:
        return "either"
    if entry["class"] in VALUE_CLASSES:
        needed = query.uses(entry["attribute"]) and query.reaches(entry.get("item_key"))
        if not needed:
            return "either"
        return "lenient" if name in LENIENT else "error"
    if name in ("lek_repeat", "lek_cycle"):
        return "error" if entry["repeated"] else "either"
    if name == "count_not_number":
        return "error" if entry["select"] == "COUNT" else "either"
    if name == "item_not_object":
        return "error" if query.reaches(entry.get("item_key")) else "either"
    return "either" if query.limit else "error"


def named(entry, text):
    """Whether an error text names what the mutation made wrong."""
    if any(part in text.lower() for part in PART_NAMES.get(entry["mutation"], [])):
        return True
    if entry["class"] in VALUE_CLASSES:
        attribute = entry["attribute"]
        key = (entry.get("item_key") or {}).get("pk", {})
        key_text = key.get("S") if isinstance(key, dict) else None
        named_path = re.search(r'"' + re.escape(attribute) + r'[".\[]', text)
        return (named_path is not None
                and (attribute == "pk" or not key_text or key_text in text))
    return any(part in text.lower() for part in PART_NAMES.get(entry["mutation"], [""]))


def verdict(query, entries, lines):
    """The outcome of one statement: "right", "error" or a FAILURES name."""
    text = "\n".join(line for line in lines if not line.startswith(ROW_MARK))
    wants = {expectation(query, e) for e in entries}
    if "ERROR:" in text:
        state = re.search(r"ERROR:\s+([0-9A-Z]{5}):", text)
        if state is None or state.group(1) == "XX000":
            return "internal"
        if state.group(1) == "57014":
            return "hang"
        if wants == {"right"} or not wants:
            return "spurious error"
        demanding = [e for e in entries if expectation(query, e) in ("error", "lenient")]
        if demanding and not any(named(e, text) for e in entries if e["applied"]):
            return "unclear error"
        return "error"
    rows = parse_rows(lines)
    if rows == query.rows:
        return "accepted" if "error" in wants else "right"
    if "lenient" in wants and "error" not in wants and canonical(rows) == canonical(query.rows):
        return "right"
    return "wrong answer"


# ------------------------------------------------------------------ tests


@runner.test
def the_deepest_value_dynamodb_stores_reads_back():
    """A jsonb value at DynamoDB's 32 levels reads back whole."""
    name = bed.new_table(client, created, "responses", "pk")
    leaf, levels = {"S": "bottom"}, 40
    while True:
        value = leaf
        for _ in range(levels):
            value = {"M": {"d": value}}
        try:
            client.put_item(TableName=name, Item={"pk": {"S": "deep"}, "jm": value})
            break
        except client.exceptions.ClientError:
            levels -= 1
    expected = "bottom"
    for _ in range(levels):
        expected = {"d": expected}
    sql(f"""CREATE FOREIGN TABLE nested (pk text, jm jsonb) SERVER proxied
            OPTIONS (table '{name}', partition_key 'pk')""")
    print(f"     {levels} levels of M around an S: {levels + 1} levels in all")
    got = json.loads(sql("SELECT jm FROM nested WHERE pk = 'deep'").stdout)
    assert got == expected, f"read back {json.dumps(got)[:300]}"


@runner.test
def a_last_evaluated_key_that_goes_back_is_an_error():
    """A page of three items whose LastEvaluatedKey names its first item:
    the read from there would return the second and third again, so the
    LIMIT 4 would end in a duplicate.  The page is refused instead."""
    name = bed.new_table(client, created, "responses", "pk", "sk", "N")
    for sk in (1, 2, 3):
        client.put_item(TableName=name, Item={"pk": {"S": "back"}, "sk": {"N": str(sk)}})
    sql(f"""CREATE FOREIGN TABLE going_back (pk text, sk bigint) SERVER proxied
            OPTIONS (table '{name}', partition_key 'pk', sort_key 'sk')""")
    bed.proxy("POST", "/faults", [{"kind": "mutate", "mutation": "lek_cycle",
                                   "table": name, "seed": 1, "count": LEK_COUNT}])
    try:
        result = bed.psql("SELECT sk FROM going_back WHERE pk = 'back' ORDER BY sk LIMIT 4",
                          check=False, database=DATABASE)
    finally:
        bed.clear_faults()
    print(f"     {(result.stdout + result.stderr).strip()[:300]}")
    assert result.returncode != 0, f"read {result.stdout.split()}"
    assert "LastEvaluatedKey" in result.stderr and "Items[0]" in result.stderr, result.stderr


def mutations_for(query):
    """One to three mutate faults for a statement, as proxy specs.  The
    values a faithful read may keep (LENIENT) go only into columns the query
    shows and tests in no condition, where the faithful answer is known."""
    specs = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 2, 3])):
        name = rng.choice(CLASSES[rng.choice(sorted(CLASSES))])
        if name in LENIENT and query.used != ALL and not query.shown:
            continue
        lek = name.startswith("lek_")
        spec = {"kind": "mutate", "mutation": name, "table": tables[query.table],
                "seed": rng.randrange(1 << 30), "count": LEK_COUNT if lek else 1,
                "skip": 0 if lek else rng.choice([0, 0, 0, 1, 2, 3])}
        if name in LENIENT and query.used != ALL:
            spec["attributes"] = query.shown
        specs.append(spec)
    return specs


def settle():
    """Wait until no request is in flight at the proxy (a statement that
    stopped early, at a LIMIT or an error, leaves its read-ahead requests
    to finish), then drop the mutations logged meanwhile: they belong to no
    statement still running."""
    deadline = time.monotonic() + 5
    while bed.stats()["in_flight"] > 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    bed.proxy("DELETE", "/mutations")


def run_mutated(session, query):
    """Queue mutations, run the query; (outcome, entries, output lines)."""
    settle()
    bed.proxy("POST", "/faults", mutations_for(query))
    try:
        lines = session.run(query.wrapped())
        outcome = None
    except bed.SessionLost as lost:
        lines, outcome = lost.args[0], "crash"
    except bed.SessionHung as hung:
        lines, outcome = hung.args[0], "hang"
    bed.clear_faults()
    entries = bed.proxy("DELETE", "/mutations")["mutations"]
    if outcome is None:
        outcome = verdict(query, entries, lines)
    return outcome, entries, lines


def describe(query, entries, lines, outcome):
    """A failure, for the report (repeated firings counted once)."""
    changes = collections.Counter(
        f"{e['mutation']} on {e['action']} "
        + (f"at {e.get('path', '(whole response)')}"
           + (f" of item {json.dumps(e['item_key'])}" if e.get("item_key") else "")
           if e["applied"] else "(not applied)")
        + f" -> wants {expectation(query, e)}" for e in entries)
    changes = "; ".join(f"{text}{f' (x{n})' if n > 1 else ''}"
                        for text, n in changes.items()) or "no mutation fired"
    shown = "\n        ".join(line[:300] for line in lines[:6])
    return f"{outcome}: {query.text}\n      {changes}\n        {shown}"


@runner.test
def mutated_responses_give_the_right_answer_or_a_clean_error():
    outcomes = collections.defaultdict(collections.Counter)   # class -> outcome
    mutated = collections.Counter()                           # name -> applied
    failures = []
    session = open_session()
    started = time.monotonic()
    try:
        for _ in range(STATEMENTS):
            query = rng.choice(pool)
            outcome, entries, lines = run_mutated(session, query)
            if outcome in ("crash", "hang"):
                if outcome == "hang":
                    bed.psql(f"SELECT pg_terminate_backend({session.pid})", check=False)
                session.close()
                session = open_session()
            applied = [e for e in entries if e["applied"]]
            mutated.update(e["mutation"] for e in applied)
            for cls in {e["class"] for e in applied} or {"(none applied)"}:
                outcomes[cls][outcome] += 1
            if outcome in FAILURES:
                failures.append(describe(query, entries, lines, outcome))
    finally:
        session.close()
    crashes = pg_log.crashes()
    print(f"     {STATEMENTS} statements in {time.monotonic() - started:.0f} s, "
          f"{sum(mutated.values())} responses mutated")
    print("     statements by the classes of the mutations applied to their answers:")
    print(f"     {'class':15} " + " ".join(f"{h:>8}" for h in
                                             ("right", "error") + FAILURES))
    for cls in sorted(outcomes):
        print(f"     {cls:15} " + " ".join(f"{outcomes[cls][h]:8}" for h in
                                             ("right", "error") + FAILURES))
    never = sorted(set(itertools.chain(*CLASSES.values())) - set(mutated))
    print(f"     never applied: {', '.join(never) or 'none'}")
    for failure in failures[:40]:
        print("     " + failure)
    for line in crashes[:10]:
        print(f"     server log: {line}")
    assert not crashes, f"{len(crashes)} backends terminated by a signal"
    assert not failures, f"{len(failures)} of {STATEMENTS} statements failed"
    unused = sorted(set(CLASSES) - set(outcomes))
    assert not unused, f"no mutation of these classes was applied: {unused}"


if __name__ == "__main__":
    runner.main(set_up, tear_down)
