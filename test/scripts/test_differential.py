#!/usr/bin/python3
"""Differential test: foreign tables against a local table holding the same rows.

One set of random rows (game, player, score, level, name, flag, ratio; some
NULLs, tied scores) is loaded into a local PostgreSQL table and into DynamoDB
through four foreign tables sharded differently: unsharded with a plain
sort key, calculated (fnv1a_32) with the leaderboard's templates,
random over 4 shards, and calculated with legacy_unsharded, where some rows
are put under the bare key with boto3 instead; and, read-only, through
a global secondary index whose partition key spreads each game over 3
keys ('{game_id}#{bucket}', written by a table of the same DynamoDB table
with index templates) and sorted by score alone, which rows share:
declared with 2 random shards, then altered to 3, so that its reads
cover two layouts that share partitions and must return each of their
items once, rows with one index key included.  Two more foreign tables
read the rows through their tables' own secondary indexes, chosen by the
planner: one keyed by player alone, with GSIs on game and score
(KEYS_ONLY: the rows' other columns are got by key), on level (sparse,
INCLUDE name and flag), on name (sparse) and on ratio and score (sparse);
one keyed by game and player, with LSIs on score (KEYS_ONLY) and level
(sparse, INCLUDE name) and a GSI on player (the table's sort key,
KEYS_ONLY); the first is analyzed, the second not.  The DynamoDB tables of
the calculated and random tables also hold items that are not their rows,
which a Scan must pass over as their Queries do: one under a game's bare
key, one under a shard past the count, and another application's under a
key no template writes; and a sixth of their rows are kept as another
application keeps them, game_id, player_id and score only inside the keys
(the leaderboard's own writer), or the score as a string, which every filter on those
columns must let through for PostgreSQL to decode and check.  Those two
foreign tables and the unsharded one name a TTL attribute: their DynamoDB
tables also hold players whose time to live has passed (not deleted yet,
as DynamoDB leaves them for days), which no read may return, whole keys
got included, and some rows carry TTLs that keep them: to come, passed
more than five years ago, a string, NULL.  Hundreds of random queries
(key equalities, IN lists or none; comparisons, BETWEEN, IN, = ANY, NOT IN,
OR, LIKE and IS NULL on key and non-key columns of every type, with NULLs in
the lists and expression-level collations; ORDER BY score with and without
a tiebreak, and on several columns in both directions under "C", "C.utf8"
and "und-x-icu"; LIMIT and OFFSET; aggregates with GROUP BY; joins with
local tables, as the planner likes them (half the foreign tables are
analyzed, so its estimates come from statistics or from the defaults),
as nested loops with parameters and as batched lookup joins (in small
batches too), on whole keys and on partition keys; prepared statements
under force_generic_plan; LATERAL subqueries run again for each row of a
local table (count(*), min and max with the row's values as key
condition and sort key bound, and lookup joins whose key conditions take
the row's values); keyed reads ordered by the sort key's fields,
score and player_id, in one direction or two, the tiebreak under any of the
collations, with a LIMIT; count(*), min(score) and max(score) with key
equalities, sort key bounds and filters, grouped by game_id or not) must
give what the local table gives, and again planned in parallel wherever
PostgreSQL may (the whole-table Scans shared out among 2 to 4 workers,
the aggregates and joins over them): the same
multiset without ORDER BY, the same sequence under a total order, and under
ORDER BY score alone the same scores in the same places with rows drawn
from the right ties.  The name column uses an ICU collation, where text
order is not DynamoDB's byte order.

The rows are then updated too: random UPDATEs (of columns that are no
key, of the score in the sort key, of the game and the player, so that
items move between partitions and shards; run inside the scan, with
RETURNING, inside a WITH, and joined to a local table, row by row) on a
fresh foreign table of each writable kind and on a copy of the local
table, each followed by a read of the whole table: row counts, RETURNING
rows and every read must match, stray items are left alone, and every
row item, moved or not, keeps the attributes no column maps (another
application's, TTLs, put tokens).

The random generator's seed is printed first; SHARD_FDW_TEST_SEED sets it.
Talks to DynamoDB Local directly: the proxy adds nothing to these checks.
Prints how many statements it compared, and ends with "N passed, N failed".
"""

import collections
import os
import random
import re
import time
from dataclasses import dataclass, field

import bed
from bed import sql_literal

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "7341"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("differential")
LOCAL = "local_rows"
MARK = "@@query "
ROW_COUNT = 1200
EXPIRED_COUNT = 40
QUERY_COUNT = 400
CORRELATED_COUNT = 40
GAMES = ["g1", "g2", "g3", "gäme"]
NAME_LETTERS = "abcdefghijklmnopqrstuvwxyzABCPZéÉü"
# numbers without trailing zeros: DynamoDB keeps no display scale
RATIOS = ["-3", "0", "1.5", "2.25", "7", "10.125", "0.001"]
COLLATIONS = ['"C"', '"C.utf8"', '"und-x-icu"']
COLUMNS = """game_id text NOT NULL, player_id text NOT NULL,
             score bigint NOT NULL, level integer,
             name text COLLATE "und-x-icu", flag boolean, ratio numeric"""
LEADERBOARD_KEYS = """partition_key 'pk', partition_key_format '{game_id}#{shard}',
                      sort_key 'sk', sort_key_format '{score:020}#{player_id}'"""
FOREIGN_TABLES = {
    "unsharded": "partition_key 'game_id', sort_key 'player_id', ttl_attribute 'expires'",
    "calculated": LEADERBOARD_KEYS + """, shards '10',
        shard_strategy 'calculated', shard_by 'player_id', shard_hash 'fnv1a_32',
        ttl_attribute 'expires'""",
    "random": LEADERBOARD_KEYS + ", shards '4', shard_strategy 'random', ttl_attribute 'expires'",
    "legacy": LEADERBOARD_KEYS + """, shards '4', shard_strategy 'calculated',
        shard_by 'player_id', shard_hash 'fnv1a_32', legacy_unsharded 'true'""",
    "indexed": """index 'byScore', partition_key 'gpk', partition_key_format '{game_id}#{shard}',
        sort_key 'gsk', sort_key_format '{score:020}', shards '2', shard_strategy 'random'""",
    "gsis": "",
    "lsis": "",
}
# the tables read through their own secondary indexes: key schema
# (attribute, DynamoDB type) pairs, the GSIs and the LSIs as (name, keys,
# projection: "ALL", "KEYS_ONLY" or the attributes of an INCLUDE)
SECONDARY_INDEXED = {
    "gsis": ([("player_id", "S")], [
        ("byGame", [("game_id", "S"), ("score", "N")], "KEYS_ONLY"),
        ("byLevel", [("level", "N")], ["name", "flag"]),
        ("byName", [("name", "S")], "ALL"),
        ("byRatio", [("ratio", "N"), ("score", "N")], "KEYS_ONLY")], []),
    "lsis": ([("game_id", "S"), ("player_id", "S")], [
        ("byPlayer", [("player_id", "S")], "KEYS_ONLY")], [
        ("byScore", [("game_id", "S"), ("score", "N")], "KEYS_ONLY"),
        ("byLevel", [("game_id", "S"), ("level", "N")], ["name"])]),
}
# the writer of the index's items: their index keys, and the bucket in gpk
INDEX_WRITER = """partition_key 'player_id',
    index_partition_key 'gpk', index_partition_key_format '{game_id}#{bucket}',
    index_sort_key 'gsk', index_sort_key_format '{score:020}'"""
INDEX_BUCKETS = 3
NESTED_LOOP = ("SET enable_hashjoin = off;\nSET enable_mergejoin = off;\n"
               "SET shard_fdw.enable_lookup_join = off;\n")
LOOKUP_JOIN = ("SET enable_hashjoin = off;\nSET enable_mergejoin = off;\n"
               "SET enable_nestloop = off;\nSET work_mem = '64kB';\n")
# plans in parallel wherever PostgreSQL may: a whole-table Scan shared out
# among the workers (their number set per table), under a Gather
PARALLEL = ("SET parallel_setup_cost = 0;\nSET parallel_tuple_cost = 0;\n"
            "SET min_parallel_table_scan_size = 0;\n"
            "SET max_parallel_workers_per_gather = {workers};\n")
PARALLEL_SHAPES = {
    "parallel Scan": r"Parallel Foreign Scan",
    "partial aggregates": r"Partial (Hash|Group)?Aggregate\n(?:[^\n]*\n){0,2}[^\n]*Parallel Foreign Scan",
    "join over a parallel Scan": r"Join[^\n]*\n(?:[^\n]*\n){0,6}[^\n]*Parallel Foreign Scan",
}
WATCHED_COUNT = 300
ANALYZED = ("calculated", "legacy", "gsis")
client = None
dynamodb_tables = []
data = []           # the rows, as tuples in column order
expired = []        # (player, game, score, TTL) whose time has passed: no row
QUERIES = []        # the random queries, made once for every table
local_cache = {}    # statements: the local table's results
compared = [0]      # statements run on a foreign table and compared


# ---------------------------------------------------------------- helpers


def sql(text):
    """Run SQL in this script's database; an error carries psql's message."""
    result = bed.psql(text, check=False, database=DATABASE)
    assert result.returncode == 0, f"{result.stderr.strip()}\nin: {text.strip()[:300]}"
    return result


class Failed(str):
    """The error a statement raised, in place of its rows."""


def run_batch(statements, prologue="", counts=False):
    """Run statements in one session, after the prologue; returns each
    statement's rows (tuples of column texts, NULL as '') or, for a
    statement that failed, its error as Failed.  Every statement is one
    line, so psql's "psql:<stdin>:LINE: ERROR" names the statement.  With
    counts, each statement's rows end with its row count, as a row
    ("@@count N",)."""
    lines = ["\\set ON_ERROR_STOP off"] + prologue.splitlines()
    line_of = {}
    for i, statement in enumerate(statements):
        lines.append(f"\\echo {MARK}{i}")
        lines.append(statement.replace("\n", " ") + ";")
        line_of[len(lines)] = i
        if counts:
            lines.append("\\echo @@count :ROW_COUNT")
    result = bed.psql("\n".join(lines) + "\n", check=False, database=DATABASE)
    results = [[] for _ in statements]
    current = None
    for line in result.stdout.splitlines():
        if line.startswith(MARK):
            current = results[int(line[len(MARK):])]
        elif line:
            current.append(tuple(line.split(bed.FIELD_SEPARATOR)))
    for message in result.stderr.split("psql:<stdin>:")[1:]:
        number, _, text = message.partition(":")
        if not text.lstrip().startswith("ERROR:"):
            continue
        assert int(number) in line_of, f"the prologue failed: {message}"
        results[line_of[int(number)]] = Failed(" ".join(text.split()))
    return results


def word(letters, low, high):
    """A random string of low to high letters."""
    return "".join(rng.choice(letters) for _ in range(rng.randint(low, high)))


def maybe(value, chance=0.15):
    """value, or None with the given chance."""
    return None if rng.random() < chance else value


# ------------------------------------------------------------------- data


def make_rows():
    """Random rows; player_id is unique, scores tie often.  Players of no
    row go to expired."""
    players = set()
    while len(players) < ROW_COUNT + EXPIRED_COUNT:
        players.add("p" + word("abcdefghijklmnopqrstuvwxyz", 2, 6))
    now = int(time.time())
    for player in rng.sample(sorted(players), EXPIRED_COUNT):
        players.remove(player)
        expired.append((player, rng.choice(GAMES), rng.randint(0, 400),
                        rng.choice([str(now - rng.randint(100, 4 * 365 * 86400)),
                                    f"{now - 100}.5"])))
    return [(rng.choice(GAMES), player, rng.randint(0, 400),
             maybe(rng.randint(1, 60)), maybe(word(NAME_LETTERS, 1, 8)),
             maybe(rng.random() < 0.5), maybe(rng.choice(RATIOS)))
            for player in sorted(players)]


def values_list(rows):
    """A VALUES list of rows."""
    return ",\n".join("(" + ", ".join(map(sql_literal, r)) + ")" for r in rows)


def new_table(partition_key, sort_key):
    """A fresh DynamoDB table with string keys, deleted at the end."""
    return bed.new_table(client, dynamodb_tables, "differential", partition_key, sort_key)


def legacy_item(row):
    """A row as another application put it under the bare key: keys and
    its non-NULL attributes, the score and player only inside sk for some."""
    game, player, score, level, name, flag, ratio = row
    item = {"pk": {"S": game}, "sk": {"S": f"{score:020}#{player}"}}
    if rng.random() < 0.5:
        item.update(game_id={"S": game}, player_id={"S": player},
                    score={"N": str(score)})
    if level is not None:
        item["level"] = {"N": str(level)}
    if name is not None:
        item["name"] = {"S": name}
    if flag is not None:
        item["flag"] = {"BOOL": flag}
    if ratio is not None:
        item["ratio"] = {"N": ratio}
    return item


def as_others_keep(table):
    """Rewrite a sixth of the rows of a DynamoDB table as another application
    keeps them: without the attributes game_id, player_id and score, whose
    values only the keys hold, or with the score as a string."""
    for item in bed.stored_items(client, table):
        if rng.random() >= 1 / 6:
            continue
        if rng.random() < 0.7:
            for name in ("game_id", "player_id", "score"):
                del item[name]
        else:
            item["score"] = {"S": item["score"]["N"]}
        client.put_item(TableName=table, Item=item)


def give_ttls(table):
    """Give a fifth of the rows of a DynamoDB table a TTL that keeps them:
    to come, passed more than five years ago (DynamoDB never deletes those),
    a string or NULL (DynamoDB's TTL ignores both)."""
    now = int(time.time())
    kept = [{"N": str(now + 30 * 86400)}, {"N": f"{now + 86400}.25"},
            {"N": str(now - 6 * 365 * 86400)}, {"N": "0"},
            {"S": str(now - 1000)}, {"NULL": True}]
    for item in bed.stored_items(client, table):
        if rng.random() < 0.2:
            item["expires"] = rng.choice(kept)
            client.put_item(TableName=table, Item=item)


def expired_items(kind, options):
    """Items of the players in expired, whose time to live passed within the
    last five years, under the keys the kind of table gives them (the
    shard of a calculated table, any of a random one's)."""
    items = []
    for player, game, score, ttl in expired:
        item = {"game_id": {"S": game}, "player_id": {"S": player},
                "score": {"N": str(score)}, "level": {"N": "3"}, "expires": {"N": ttl}}
        if kind != "unsharded":
            shards = int(re.search(r"shards '(\d+)'", options)[1])
            shard = (bed.fnv1a_32(player.encode()) if kind == "calculated"
                     else rng.randrange(shards)) % shards
            item.update(pk={"S": f"{game}#{shard}"}, sk={"S": f"{score:020}#{player}"})
        items.append(item)
    return items


def stray_items(shards):
    """Items in a sharded table's DynamoDB table that are not its rows:
    under a game's bare key (no legacy_unsharded), under a shard past the
    count, and another application's under a key no template writes."""
    def player(game, score, name):
        return {"game_id": {"S": game}, "player_id": {"S": name},
                "score": {"N": str(score)}, "level": {"N": "3"}}
    return [
        {"pk": {"S": "g1"}, "sk": {"S": f"{150:020}#pstray"}, **player("g1", 150, "pstray")},
        {"pk": {"S": f"g2#{shards + 7}"}, "sk": {"S": f"{200:020}#pout"},
         **player("g2", 200, "pout")},
        {"pk": {"S": "settings"}, "sk": {"S": "main"}, "name": {"S": "not a row"}},
    ]


def watched_rows():
    """Rows of the local table watched: players of the right game mostly,
    of another game, unknown ones, NULLs, and duplicates."""
    rows = []
    for n in range(WATCHED_COUNT):
        game, player = rng.choice(data)[:2]
        if rng.random() < 0.1:
            game = rng.choice(GAMES + ["g9"])
        if rng.random() < 0.05:
            player = rng.choice(["pnobody", None])
        if rng.random() < 0.05:
            game = None
        rows.append((game, player, n))
    return rows + rng.sample(rows, 10)


def load():
    """The local table, the foreign tables and their DynamoDB tables."""
    sql(f"""CREATE TABLE {LOCAL} ({COLUMNS});
            INSERT INTO {LOCAL} VALUES {values_list(data)};
            CREATE TABLE games (game_id text PRIMARY KEY, title text, region text,
                                floor integer);
            INSERT INTO games VALUES ('g1', 'One', 'eu', 150), ('g2', 'Two', 'us', 0),
              ('gäme', 'Umlaut', 'eu', 390), ('g9', 'Nobody plays', 'eu', NULL),
              ('g3', 'Three', 'us', 401);
            ANALYZE {LOCAL}, games;
            CREATE TABLE watched (game_id text, player_id text, n integer);
            INSERT INTO watched VALUES {values_list(watched_rows())};
            ANALYZE watched;""")
    for kind, options in FOREIGN_TABLES.items():
        if kind == "indexed":
            load_indexed(options)
            continue
        if kind in SECONDARY_INDEXED:
            load_secondary_indexed(kind)
            continue
        load_foreign(kind, kind)
        if kind in ANALYZED:
            sql(f"ANALYZE {kind}")


def load_foreign(kind, name):
    """Foreign table name of the given kind over a DynamoDB table of its
    own, holding the rows (a fifth of them under the bare key for legacy;
    some as another application keeps them, some with TTLs, and expired
    players, for the kinds that name a TTL attribute) and, for the
    calculated and random kinds, stray items; returns the DynamoDB table
    and the items put that are no rows (the expired and the stray)."""
    keys = ("game_id", "player_id") if kind == "unsharded" else ("pk", "sk")
    table = new_table(*keys)
    options = FOREIGN_TABLES[kind]
    sql(f"CREATE FOREIGN TABLE {name} ({COLUMNS}) SERVER ddb "
        f"OPTIONS (table '{table}', {options})")
    rows = data
    if kind == "legacy":
        legacy = set(rng.sample(range(len(data)), len(data) // 5))
        for i in sorted(legacy):
            client.put_item(TableName=table, Item=legacy_item(data[i]))
        rows = [r for i, r in enumerate(data) if i not in legacy]
    sql(f"INSERT INTO {name} VALUES {values_list(rows)}")
    strays = []
    if kind in ("unsharded", "calculated", "random"):
        if kind != "unsharded":
            as_others_keep(table)
        give_ttls(table)
        strays += expired_items(kind, options)
    if kind in ("calculated", "random"):
        strays += stray_items(int(re.search(r"shards '(\d+)'", options)[1]))
    for item in strays:
        client.put_item(TableName=table, Item=item)
    return table, strays


def load_indexed(options):
    """The rows written with their index keys, each game's spread over
    INDEX_BUCKETS partitions of the index; the foreign table over the index
    declared with 2 shards, then given INDEX_BUCKETS, so that its reads
    cover both layouts."""
    table = bed.new_table(client, dynamodb_tables, "differential", "player_id",
                          gsi=("byScore", "gpk", "gsk"))
    sql(f"""CREATE FOREIGN TABLE indexed_writer ({COLUMNS}, bucket integer)
              SERVER ddb OPTIONS (table '{table}', {INDEX_WRITER});
            INSERT INTO indexed_writer
              SELECT *, abs(hashtext(player_id)) % {INDEX_BUCKETS} FROM {LOCAL};
            CREATE FOREIGN TABLE indexed ({COLUMNS}) SERVER ddb
              OPTIONS (table '{table}', {options});
            ALTER FOREIGN TABLE indexed OPTIONS (SET shards '{INDEX_BUCKETS}');""")


def index_schema(name, keys, projection):
    """The CreateTable description of a secondary index."""
    kinds = ["HASH", "RANGE"]
    schema = {"IndexName": name,
              "KeySchema": [{"AttributeName": a, "KeyType": kinds[i]}
                            for i, (a, _) in enumerate(keys)],
              "Projection": {"ProjectionType": projection}}
    if isinstance(projection, list):
        schema["Projection"] = {"ProjectionType": "INCLUDE", "NonKeyAttributes": projection}
    return schema


def load_secondary_indexed(kind, name=None):
    """A DynamoDB table with the secondary indexes of SECONDARY_INDEXED[kind],
    and the foreign table of it (name, or kind), which learns them, loaded
    with the rows; returns the DynamoDB table."""
    keys, gsis, lsis = SECONDARY_INDEXED[kind]
    table = bed.unique_name("differential")
    name = name or kind
    definitions = dict(keys)
    for _, index_keys, _ in gsis + lsis:
        definitions.update(index_keys)
    extra = {}
    if gsis:
        extra["GlobalSecondaryIndexes"] = [index_schema(*i) for i in gsis]
    if lsis:
        extra["LocalSecondaryIndexes"] = [index_schema(*i) for i in lsis]
    client.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": a, "KeyType": ["HASH", "RANGE"][i]}
                   for i, (a, _) in enumerate(keys)],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                              for a, t in definitions.items()], **extra)
    dynamodb_tables.append(table)
    sql(f"""CREATE FOREIGN TABLE {name} ({COLUMNS}) SERVER ddb
              OPTIONS (table '{table}', insert_mode 'upsert');
            INSERT INTO {name} SELECT * FROM {LOCAL};""")
    unread = sql(f"SELECT index_name, unusable FROM shard_fdw_refresh_indexes('{name}') "
                 "WHERE unusable IS NOT NULL").stdout.strip()
    assert not unread, f"{kind}: indexes queries cannot read: {unread}"
    return table


# ---------------------------------------------------------------- queries


@dataclass
class Query:
    """One random query over table {t}, compared with the local table."""
    select: list
    where: list = field(default_factory=list)
    order: str = ""          # '', 'score ASC', 'score DESC, player_id DESC'...
    limit: int = None
    offset: int = 0
    source: str = "{t}"
    group: str = ""

    def render(self, table, limited=True):
        text = f"SELECT {', '.join(self.select)} FROM {self.source.format(t=table)}"
        if self.where:
            text += " WHERE " + " AND ".join(self.where)
        if self.group:
            text += f" GROUP BY {self.group}"
        if self.order:
            text += f" ORDER BY {self.order}"
        if limited and self.limit is not None:
            text += f" LIMIT {self.limit}"
        if limited and self.offset:
            text += f" OFFSET {self.offset}"
        return text

    @property
    def total_order(self):
        return "player_id" in self.order

    @property
    def score_order_only(self):
        return bool(self.order) and not self.total_order


def some_player():
    """A player that exists, mostly; else one that does not, one whose time
    to live has passed, or the empty string, which no key can be."""
    return (rng.choice(data)[1] if rng.random() < 0.9
            else rng.choice(["pnobody", "", rng.choice(expired)[0]]))


def value_list(values, null_chance=0.2):
    """An SQL list of literals, with a NULL among them by chance."""
    values = list(values)
    if rng.random() < null_chance:
        values.insert(rng.randint(0, len(values)), None)
    return ", ".join(map(sql_literal, values))


def some_players(low=1, high=6):
    """A few players, mostly ones that exist."""
    return [some_player() for _ in range(rng.randint(low, high))]


def some_names(low=1, high=5):
    """A few names: some stored, some made up."""
    return [rng.choice([r[4] for r in data if r[4] is not None])
            if rng.random() < 0.6 else word(NAME_LETTERS, 1, 3)
            for _ in range(rng.randint(low, high))]


def some_ratios():
    """Numbers as stored, and equal ones written with other scales."""
    return [rng.choice(RATIOS + ["1.50", "7.0", "-3.000", "2.250", "99"])
            for _ in range(rng.randint(1, 4))]


def in_list(column, values, cast=""):
    """column IN (...), = ANY (ARRAY[...]), NOT IN (...) or <> ALL
    (ARRAY[...]) of values; cast types the array."""
    form = rng.choice(["IN", "IN", "= ANY", "NOT IN", "<> ALL"])
    items = value_list(values)
    if form in ("IN", "NOT IN"):
        return f"{column} {form} ({items})"
    return f"{column} {form} (ARRAY[{items}]{cast})"


def filter_predicate():
    """One random condition on a column other than game_id."""
    op = rng.choice(["=", "<", "<=", ">", ">="])
    collation = rng.choice(COLLATIONS)
    return rng.choice([
        lambda: f"score {op} {rng.randint(-5, 405)}",
        lambda: f"score BETWEEN {rng.randint(0, 300)} AND {rng.randint(100, 410)}",
        lambda: in_list("score", [rng.randint(0, 400) for _ in range(rng.randint(1, 8))]),
        lambda: f"level {op} {rng.randint(0, 61)}",
        lambda: "level IS NULL",
        lambda: "level IS NOT NULL",
        lambda: f"level BETWEEN {rng.randint(0, 30)} AND {rng.randint(20, 61)}",
        lambda: in_list("level", [rng.randint(0, 61) for _ in range(rng.randint(1, 120))]),
        lambda: f"ratio {op} {sql_literal(rng.choice(some_ratios()))}",
        lambda: in_list("ratio", some_ratios(), "::numeric[]"),
        lambda: f"ratio BETWEEN {sql_literal(rng.choice(RATIOS))} "
                f"AND {sql_literal(rng.choice(RATIOS))}",
        lambda: "ratio IS NULL",
        lambda: f"ratio {op} 'NaN'",
        lambda: "name LIKE 'p%'",
        lambda: f"name LIKE {sql_literal(rng.choice(NAME_LETTERS) + '%')}",
        lambda: f"name COLLATE {collation} LIKE {sql_literal(rng.choice(NAME_LETTERS) + '%')}",
        lambda: "name IS NULL",
        lambda: f"name {op} {sql_literal(word(NAME_LETTERS, 1, 3))}",
        lambda: f"name COLLATE {collation} {op} {sql_literal(word(NAME_LETTERS, 1, 3))}",
        lambda: f"name BETWEEN {sql_literal(word(NAME_LETTERS, 1, 2))} AND "
                f"{sql_literal(word(NAME_LETTERS, 1, 2))}",
        lambda: in_list("name", some_names()),
        lambda: in_list(f"name COLLATE {collation}", some_names()),
        lambda: "flag",
        lambda: "NOT flag",
        lambda: "flag = false",
        lambda: "flag IS NULL",
        lambda: "flag IS NOT TRUE",
        lambda: in_list("flag", rng.sample([True, False], rng.randint(1, 2))),
        lambda: f"player_id = {sql_literal(some_player())}",
        lambda: in_list("player_id", some_players()),
        lambda: f"player_id LIKE {sql_literal('p' + word('abcdefghijklmnop', 0, 2) + '%')}",
        lambda: f"player_id {op} {sql_literal('p' + word('abcdefghijklmnopqrstuvwxyz', 1, 3))}",
        lambda: f"player_id BETWEEN {sql_literal('p' + word('abcdefghijklm', 1, 2))} AND "
                f"{sql_literal('p' + word('nopqrstuvwxyz', 1, 2))}",
        lambda: f"({filter_predicate()} OR {filter_predicate()})",
    ])()


def where_clause(key_chance=0.6):
    """Zero to three filters, with an equality or an IN list on game_id by
    chance."""
    where = [filter_predicate() for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    if rng.random() < key_chance:
        games = rng.sample(GAMES + ["g9", ""], rng.randint(1, 3))
        where.insert(0, f"game_id = {sql_literal(games[0])}" if len(games) == 1
                     else f"game_id IN ({value_list(games)})")
    return where


def several_columns_order():
    """ORDER BY on two or three columns in either direction, under any of
    the collations, ending in player_id so that the order is total."""
    keys = rng.sample(["score", "level", "ratio", "flag", "game_id", "name"],
                      rng.randint(1, 3))
    terms = []
    for key in keys:
        if key in ("name", "game_id") and rng.random() < 0.7:
            key += f" COLLATE {rng.choice(COLLATIONS)}"
        terms.append(key + rng.choice(["", " ASC", " DESC"])
                     + rng.choice(["", "", " NULLS FIRST", " NULLS LAST"]))
    return ", ".join(terms + ["player_id" + rng.choice(["", " DESC"])])


def plain_query():
    """SELECT with filters, maybe ordered, maybe limited."""
    columns = ["game_id", "player_id", "level", "name", "flag", "ratio"]
    select = rng.sample(columns, rng.randint(1, len(columns)))
    order = rng.choice(["", "", "score ASC", "score DESC",
                        "score ASC, player_id", "score DESC, player_id DESC",
                        several_columns_order(), several_columns_order()])
    query = Query(select=["score"] + select, where=where_clause(), order=order)
    if order and rng.random() < 0.7:
        query.limit = rng.choice([1, 3, 10, 50, 100])
        query.offset = rng.choice([0, 0, 0, 2, 17])
    return query


def aggregate_query():
    """Counts, sums and extremes per game, flag or level, or over all."""
    group = rng.choice(["game_id", "flag", "level", "game_id, flag", ""])
    return Query(select=([group] if group else [])
                 + ["count(*)", "sum(score)", "min(level)", "max(player_id)",
                    "count(name)", "bool_or(flag)", "sum(ratio)", "max(ratio)",
                    f"min(name COLLATE {rng.choice(COLLATIONS)})"],
                 where=where_clause(key_chance=0.3), group=group)


def join_query():
    """A join with the small local table games."""
    where = ["g.region = 'eu'"] + where_clause(key_chance=0.2)
    query = Query(select=["g.title", "player_id", "score", "level"], where=where,
                  source="games g JOIN {t} USING (game_id)")
    if rng.random() < 0.4:
        query.order = rng.choice(["score DESC, player_id", "score, player_id DESC",
                                  several_columns_order()])
        query.limit = rng.choice([5, 20])
        query.offset = rng.choice([0, 0, 3])
    return query


def keyed_order_query():
    """A keyed read ordered by the sort key template's fields, score and
    player_id: in one direction (the merge serves it all) or two, the
    tiebreak under any collation (the merge serves the score order and
    PostgreSQL sorts each score's players), with a LIMIT."""
    first = rng.choice(["ASC", "DESC"])
    second = first if rng.random() < 0.6 else rng.choice(["ASC", "DESC"])
    collation = rng.choice(["", ""] + [f" COLLATE {c}" for c in COLLATIONS])
    query = Query(select=["score", "player_id", "level"],
                  where=where_clause(key_chance=1.0),
                  order=f"score {first}, player_id{collation} {second}")
    query.limit = rng.choice([1, 3, 10, 25, 50, 100])
    query.offset = rng.choice([0, 0, 0, 2, 17])
    return query


def sort_key_bound():
    """A bound on score, the sort key's leading field, or none."""
    op = rng.choice(["=", "<", "<=", ">", ">="])
    return rng.choice([
        [], [],
        [f"score {op} {rng.randint(-5, 405)}"],
        [f"score BETWEEN {rng.randint(0, 300)} AND {rng.randint(100, 410)}"],
    ])


def keyed_aggregate_query():
    """count(*), min(score) and max(score) of a keyed read (a player's rank
    among them), with sort key bounds, filters or a player."""
    games = rng.sample(GAMES + ["g9"], rng.randint(1, 2))
    where = [f"game_id = {sql_literal(games[0])}" if len(games) == 1
             else f"game_id IN ({value_list(games, null_chance=0)})"]
    where += sort_key_bound()
    if rng.random() < 0.3:
        where.append(filter_predicate())
    if rng.random() < 0.1:
        where.append(f"player_id = {sql_literal(some_player())}")
    select = rng.sample(["count(*)", "count(*) + 1", "min(score)", "max(score)"],
                        rng.randint(1, 3))
    if rng.random() < 0.3:
        return Query(select=["game_id"] + select, where=where, group="game_id")
    return Query(select=select, where=where)
def watched_join_query():
    """A join with the local table watched: on whole keys (game and
    player), or on the game alone for a few of its rows."""
    if rng.random() < 0.6:
        return Query(select=["w.n", "player_id", "score", "level"],
                     where=where_clause(key_chance=0.1)
                     + ([] if rng.random() < 0.5 else [f"w.n < {rng.randint(1, 300)}"]),
                     source="watched w JOIN {t} USING (game_id, player_id)")
    return Query(select=["w.n", "player_id", "score"],
                 where=[f"w.n < {rng.randint(1, 6)}"] + where_clause(key_chance=0),
                 source="(SELECT game_id, n FROM watched) w JOIN {t} USING (game_id)")


def correlated_query():
    """Per game of the local table games, a LATERAL subquery on the foreign
    table, run again with each game's values as parameters (a rescan):
    count(*), min(score) and max(score) with the game's floor as a sort
    key bound and maybe a filter, or the rows of watched joined through
    the foreign table on whole keys (a lookup join rescanned)."""
    bound = rng.choice(["", " AND score >= g.floor", " AND score < g.floor",
                        " AND score > g.floor", " AND score <= g.floor",
                        " AND score > g.floor - 7"])
    if rng.random() < 0.7:
        where = bound
        if rng.random() < 0.3:
            where += " AND " + filter_predicate().replace("{", "{{").replace("}", "}}")
        sub = ("SELECT count(*) AS n, min(score) AS lo, max(score) AS hi FROM {t} "
               f"WHERE game_id = g.game_id{where}")
        select = ["g.game_id", "a.n", "a.lo", "a.hi"]
    else:
        sub = ("SELECT count(*) AS n, sum(w.n) AS s, max(level) AS l FROM watched w "
               f"JOIN {{t}} USING (game_id, player_id) WHERE w.game_id = g.game_id{bound}")
        select = ["g.game_id", "a.n", "a.s", "a.l"]
    return Query(select=select, source=f"games g CROSS JOIN LATERAL ({sub}) a")


def make_queries():
    """QUERY_COUNT random queries, most of them plain SELECTs, then
    CORRELATED_COUNT correlated ones."""
    makers = [plain_query] * 8 + [aggregate_query, join_query, watched_join_query] + \
        [keyed_order_query, keyed_aggregate_query] * 2
    return ([rng.choice(makers)() for _ in range(QUERY_COUNT)]
            + [correlated_query() for _ in range(CORRELATED_COUNT)])


# ------------------------------------------------------------- comparison


def describe(statement, got, expected):
    """A failure report: the statement, both results, their differences."""
    if isinstance(got, Failed) or isinstance(expected, Failed):
        return f"\n  {statement}\n  foreign: {got!s:.600}\n  local:   {expected!s:.600}"
    extra = collections.Counter(got) - collections.Counter(expected)
    missing = collections.Counter(expected) - collections.Counter(got)
    return (f"\n  {statement}\n"
            f"  foreign: {len(got)} rows {got[:12]}\n"
            f"  local:   {len(expected)} rows {expected[:12]}\n"
            f"  only in foreign: {sorted(extra.elements())[:10]}\n"
            f"  only in local:   {sorted(missing.elements())[:10]}")


def matches(query, got, local_limited, local_all):
    """Whether the foreign table's rows are what the local table gives."""
    if isinstance(got, Failed) or isinstance(local_limited, Failed):
        return got == local_limited
    if query.total_order:
        return got == local_limited
    if not query.score_order_only:
        return collections.Counter(got) == collections.Counter(local_limited)
    # ORDER BY score alone: ties may come in any order and any of them may
    # be cut by LIMIT/OFFSET; scores are the first column
    stop = None if query.limit is None else query.offset + query.limit
    window = local_all[query.offset:stop]
    return ([r[0] for r in got] == [r[0] for r in window]
            and not collections.Counter(got) - collections.Counter(local_all))


def local_results(queries, limited):
    """The local table's results, run once for every foreign table and
    prologue (which choose the foreign table's plans)."""
    statements = tuple(q.render(LOCAL, limited) for q in queries)
    if statements not in local_cache:
        local_cache[statements] = run_batch(statements)
    return local_cache[statements]


def compare(queries, table, prologue=""):
    """Run the queries on a foreign table, after the prologue, and on the
    local table; returns the failure reports."""
    got = run_batch([q.render(table) for q in queries], prologue)
    compared[0] += len(queries)
    local = local_results(queries, limited=True)
    local_all = local_results(queries, limited=False)
    return [describe(q.render(table), g, e)
            for q, g, e, a in zip(queries, got, local, local_all)
            if not matches(q, g, e, a)]


def assert_no_failures(failures, count):
    """Fail with the first reports, the count and the seed."""
    assert not failures, (f"{len(failures)} of {count} queries differ "
                          f"(seed {SEED}):" + "".join(failures[:10]))


def check_table(kind, queries=None):
    """Every random query (or those of queries) on one foreign table, then
    the joins again with nested loops forced (the foreign table
    parameterized by the local one) and with batched lookup joins forced,
    in small batches."""
    queries = QUERIES if queries is None else queries
    failures = compare(queries, kind)
    joins = [q for q in queries if "JOIN" in q.source]
    failures += compare(joins, kind, NESTED_LOOP)
    failures += compare(joins, kind, LOOKUP_JOIN)
    assert_no_failures(failures, len(queries) + 2 * len(joins))


# ------------------------------------------------------------------ setup


def set_up():
    """A database of its own, the rows, the tables, the queries."""
    global client
    print(f"seed {SEED} (set SHARD_FDW_TEST_SEED to repeat another)")
    client = bed.ddb(direct=True)
    data.extend(make_rows())
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql(f"""CREATE EXTENSION shard_fdw;
            {bed.server_sql(direct=True)}""")
    load()
    QUERIES.extend(make_queries())


def tear_down():
    print(f"{compared[0]} statements compared with the local table (seed {SEED})")
    bed.drop_scratch(client, dynamodb_tables, DATABASE)


# ------------------------------------------------------------------ tests


@runner.test
def every_row_is_read_back():
    failures = []
    for kind in FOREIGN_TABLES:
        failures += compare([Query(select=["*"])], kind)
    assert_no_failures(failures, len(FOREIGN_TABLES))


@runner.test
def unsharded_matches_local():
    check_table("unsharded")


@runner.test
def calculated_matches_local():
    check_table("calculated")


@runner.test
def random_matches_local():
    check_table("random")


@runner.test
def legacy_unsharded_matches_local():
    check_table("legacy")


@runner.test
def index_with_two_layouts_matches_local():
    check_table("indexed")


# the two tables read through their indexes share the queries: half each
@runner.test
def secondary_indexes_match_local():
    check_table("gsis", QUERIES[0::2])


@runner.test
def local_secondary_indexes_match_local():
    check_table("lsis", QUERIES[1::2])
@runner.test
def expired_players_are_never_read():
    """Every read of an expired player's item, by its whole key (GetItem),
    by several (BatchGetItem), by its partition (a Query filtered), joined,
    counted, finds nothing on the tables that name the TTL attribute."""
    keys = values_list([(g, p, s) for p, g, s, _ in expired])
    statements = []
    for kind in ("unsharded", "calculated", "random"):
        for player, game, score, _ in expired[:10]:
            statements.append(f"SELECT player_id FROM {kind} WHERE game_id = "
                              f"{sql_literal(game)} AND player_id = {sql_literal(player)} "
                              f"AND score = {score}")
        statements += [
            f"SELECT player_id FROM {kind} WHERE game_id = 'g1' AND player_id IN "
            f"({value_list([p for p, _, _, _ in expired], null_chance=0)})",
            f"SELECT player_id FROM {kind} k JOIN (VALUES {keys}) e(g, p, s) "
            f"ON k.game_id = e.g AND k.player_id = e.p",
            f"SELECT count(*) FROM {kind} WHERE player_id IN "
            f"({value_list([p for p, _, _, _ in expired], null_chance=0)})",
        ]
    results = run_batch(statements)
    compared[0] += len(statements)
    found = [(s, r) for s, r in zip(statements, results)
             if r not in ([], [("0",)])]
    assert not found, f"expired players read (seed {SEED}): {found[:5]}"


@runner.test
def parallel_plans_match_local():
    """The random queries again, planned in parallel wherever PostgreSQL
    may, with 2 to 4 workers: whole-table Scans shared out among them, the
    aggregates and joins over those, give what the local table gives.  The
    plans reach each parallel shape."""
    failures = []
    plans = []
    count = 0
    for i, kind in enumerate(("unsharded", "calculated", "random", "legacy")):
        queries = QUERIES[i % 2::2]
        prologue = PARALLEL.format(workers=rng.randint(2, 4))
        failures += compare(queries, kind, prologue)
        count += len(queries)
        plans += run_batch([f"EXPLAIN (COSTS OFF) {q.render(kind)}" for q in queries],
                           prologue)
    assert_no_failures(failures, count)
    text = "\n".join(line[0] for plan in plans for line in plan)
    missing = [name for name, pattern in PARALLEL_SHAPES.items()
               if not re.search(pattern, text)]
    assert not missing, f"no parallel plan has: {missing} (seed {SEED})"


# what EXPLAIN shows when a query reaches each kind of pushdown
PUSHDOWNS = {
    "Scan": r"DynamoDB Operation: Scan",
    "Query": r"DynamoDB Operation: Query",
    "GetItem": r"DynamoDB Operation: GetItem",
    "one calculated shard": r"Shards: 1 of",
    "sort key condition": r"Sort Key Condition:",
    "filter expression": r"DynamoDB Filter:",
    "IN filter": r"DynamoDB Filter:.* = ANY",
    "filter keeping the items a key holds the column of":
        r"DynamoDB Filter:.*player_id = '[^']*' \(or not stored as S\)",
    "IN filter keeping them": r"DynamoDB Filter:.*player_id = ANY .*\(or not stored as S\)",
    "expired items filtered": r"Expired Items: left out by DynamoDB's filter",
    "expired items got and checked": r"Expired Items: left out as they arrive",
    "Query per IN value": r"Key Condition: game_id = ANY",
    "ordered merge": r"Merge:",
    "limit per shard": r"Limit per Shard:",
    "parameterized by a join": r"Key Condition: .*\$\d",
    "incremental sort over the merge": r"Presorted Key: score",
    "count by Select COUNT": r"Select: COUNT",
    "min or max by Limit 1": r"DynamoDB Aggregate: m(in|ax)\(score\)",
    "lookup join": r"Custom Scan \(Shard Lookup Join\)",
    "lookup join by whole keys":
        r"GetItem[^\n]*\n(?:[^\n]*\n){0,4}[^\n]*Key Condition: [^\n]*outer rows' values",
    "lookup join by partition":
        r"Query\n(?:[^\n]*\n){0,4}[^\n]*Key Condition: [^\n]*outer rows' values",
    "aggregate of a rescanned subquery":
        r"DynamoDB Aggregate: [^\n]*\n(?:[^\n]*\n){0,6}[^\n]*Key Condition: game_id = \$\d",
    "read through a GSI": r"DynamoDB Index: \w+ \(global",
    "read through an LSI": r"DynamoDB Index: \w+ \(local",
    "a GSI's items got from the table": r"Items From Table: got by key",
    "an LSI's items read from the table": r"Items From Table: read by the Query",
    "merged in an index's order":
        r"DynamoDB Index: [^\n]*\n(?:[^\n]*\n){0,6}[^\n]*Merge: score",
    "aggregate through an index":
        r"DynamoDB Aggregate: [^\n]*\n(?:[^\n]*\n){0,2}[^\n]*DynamoDB Index:",
    "parameterized Query of an index":
        r"DynamoDB Index: [^\n]*\n(?:[^\n]*\n){0,4}[^\n]*Key Condition: [^\n]*\$\d",
    "lookup join of a rescanned subquery":
        r"Key Condition: [^\n]*(outer rows' values AND game_id = \$\d"
        r"|game_id = \$\d\n[^\n]*Shard Chosen By: [^\n]*outer rows' values)",
}


@runner.test
def queries_reach_every_pushdown():
    """The random queries exercise every pushdown, so the comparisons
    above test them (EXPLAIN sends no request)."""
    def explain(queries, kind, prologue=""):
        return run_batch([f"EXPLAIN (COSTS OFF) {q.render(kind)}" for q in queries],
                         prologue)

    plans = []
    joins = [q for q in QUERIES if "JOIN" in q.source]
    for kind in FOREIGN_TABLES:
        plans += (explain(QUERIES, kind) + explain(joins, kind, NESTED_LOOP)
                  + explain(joins, kind, LOOKUP_JOIN))
    text = "\n".join(line[0] for plan in plans for line in plan)
    missing = [name for name, pattern in PUSHDOWNS.items()
               if not re.search(pattern, text)]
    assert not missing, f"no query reaches: {missing} (seed {SEED})"


def game_argument():
    """A game, or one nobody plays."""
    return sql_literal(rng.choice(GAMES + ["g9"]))


def player_argument():
    """A player, mostly one that exists."""
    return sql_literal(some_player())


def prefix_argument():
    """A LIKE pattern: the first letters of a player and %."""
    return sql_literal(some_player()[:rng.randint(1, 3)] + "%")


# (parameter types, statement, whether its order is total, arguments)
PREPARED = [
    ("text, bigint", "SELECT $1, score, player_id, level FROM {t} "
                     "WHERE game_id = $1 AND score >= $2", False,
     lambda: [game_argument(), str(rng.randint(0, 400))]),
    ("text", "SELECT score, player_id FROM {t} WHERE game_id = $1 "
             "ORDER BY score DESC, player_id DESC LIMIT 10", True,
     lambda: [game_argument()]),
    ("text, text", "SELECT game_id, player_id, score, name FROM {t} "
                   "WHERE game_id = $1 AND player_id = $2", False,
     lambda: [game_argument(), player_argument()]),
    ("text, text", "SELECT score, player_id FROM {t} WHERE game_id = $1 "
                   "AND player_id LIKE $2 ORDER BY score, player_id", True,
     lambda: [game_argument(), prefix_argument()]),
]


def run_prepared(types, statement, table, executions):
    """The rows of each EXECUTE of one generic plan, in one session."""
    return run_batch(executions,
                     "SET plan_cache_mode = force_generic_plan;\n"
                     f"PREPARE q({types}) AS {statement.format(t=table)};\n")


@runner.test
def prepared_generic_plans_match_local():
    failures = []
    for types, statement, ordered, arguments in PREPARED:
        executions = [f"EXECUTE q({', '.join(arguments())})" for _ in range(12)]
        local = run_prepared(types, statement, LOCAL, executions)
        for kind in FOREIGN_TABLES:
            got = run_prepared(types, statement, kind, executions)
            compared[0] += len(executions)
            for execution, g, e in zip(executions, got, local):
                same = (g == e if ordered or isinstance(g, Failed)
                        else collections.Counter(g) == collections.Counter(e))
                if not same:
                    failures.append(describe(f"{statement.format(t=kind)}; {execution}",
                                             g, e))
    assert not failures, (f"{len(failures)} executions differ (seed {SEED}):"
                          + "".join(failures[:10]))


# ----------------------------------------------------------------- updates

UPDATED_KINDS = ("unsharded", "calculated", "random", "legacy", "gsis")
UPDATE_COUNT = 30


def update_change():
    """The SET list of a random UPDATE: columns that are no key, the score
    (the leaderboard's sort key), the game (a partition key) or the player
    (what a calculated shard is chosen by), alone or together.  player_id
    stays unique (a suffix no player has), so no two rows meet on a key."""
    changes = {
        "score": [lambda: f"score + {rng.randint(1, 30)}"],
        "level": [lambda: "coalesce(level, 0) + 1",
                  lambda: sql_literal(maybe(rng.randint(1, 60), 0.3))],
        "name": [lambda: f"name || {sql_literal(word(NAME_LETTERS, 1, 2))}",
                 lambda: "NULL"],
        "flag": [lambda: "NOT flag", lambda: sql_literal(maybe(rng.random() < 0.5, 0.3))],
        "ratio": [lambda: sql_literal(maybe(rng.choice(RATIOS), 0.3))],
        "game_id": [lambda: sql_literal(rng.choice(GAMES))],
        "player_id": [lambda: f"player_id || '_{rng.randint(1, 99)}'"],
    }
    columns = rng.sample(sorted(changes), rng.choice([1, 1, 2, 3]))
    return ", ".join(f"{column} = {rng.choice(changes[column])()}" for column in columns)


def update_statement():
    """A random UPDATE of table {t}: of the rows a WHERE clause picks (run
    inside the scan), maybe with RETURNING, or inside a WITH whose SELECT
    sums what it returns, or joined to the local table watched (row by
    row)."""
    where = where_clause(key_chance=0.7)
    change = update_change()
    form = rng.choice(["plain", "plain", "returning", "returning", "with", "join"])
    if form == "join" and "level" not in change and rng.random() < 0.5:
        change = "level = w.wn, " + change
    text = f"UPDATE {{t}} SET {change}"
    if form == "join":
        text += (" FROM (SELECT DISTINCT ON (game_id, player_id) game_id AS wg, "
                 "player_id AS wp, n AS wn FROM watched ORDER BY game_id, player_id, n) w")
        where = ["game_id = w.wg", "player_id = w.wp", f"w.wn < {rng.randint(20, 300)}"] + where
    if where:
        text += " WHERE " + " AND ".join(where)
    if form == "returning" or (form == "join" and rng.random() < 0.5):
        text += " RETURNING " + rng.choice(["*", "player_id, score, level",
                                            "game_id, player_id, name, ratio"])
    if form == "with":
        text = (f"WITH u AS ({text} RETURNING score, level, player_id) "
                "SELECT count(*), sum(score), max(level), min(player_id) FROM u")
    return text


COLUMN_NAMES = {column.split()[0] for column in COLUMNS.split(",")}


def unmapped(item, keys):
    """What an item holds that no column maps and that is no key."""
    return {a: v for a, v in item.items() if a not in keys and a not in COLUMN_NAMES}


def mark_rows(table, strays):
    """Give every row item of a DynamoDB table (no stray) an attribute no
    column maps, origin: a map naming the item's first key, with a list
    and a number written as another application writes them.  Returns the
    key attributes, and by origin what each row item then holds that no
    column maps (the TTLs and put tokens too)."""
    keys = [k["AttributeName"]
            for k in client.describe_table(TableName=table)["Table"]["KeySchema"]]
    kept = {}
    for item in bed.stored_items(client, table):
        if item in strays:
            continue
        origin = "|".join(next(iter(item[k].values())) for k in keys)
        item["origin"] = {"M": {"first": {"S": origin},
                                "more": {"L": [{"N": "1.50"}, {"BOOL": True}, {"NULL": True}]}}}
        client.put_item(TableName=table, Item=item)
        kept[origin] = unmapped(item, keys)
    return keys, kept


def unmapped_lost(name, table, strays, keys, kept):
    """Failures where a row item of a DynamoDB table, moved or updated, no
    longer holds what mark_rows left it that no column maps, or is gone or
    doubled."""
    failures, seen = [], collections.Counter()
    for item in bed.stored_items(client, table):
        origin = item.get("origin", {}).get("M", {}).get("first", {}).get("S")
        if origin is None and item not in strays:
            failures.append(f"\n  {name}: item {[item[k] for k in keys]} lost what no column maps: {item}")
        if origin is None:
            continue
        seen[origin] += 1
        if unmapped(item, keys) != kept[origin]:
            failures.append(f"\n  {name}: item {origin} now keeps {unmapped(item, keys)}, "
                            f"not {kept[origin]}")
    failures += [f"\n  {name}: item {origin} is there {seen[origin]} times"
                 for origin in kept if seen[origin] != 1]
    return failures


@runner.test
def updates_match_local():
    """UPDATE_COUNT random UPDATEs, each followed by a read of the whole
    table, on a copy of the local table and on a fresh foreign table of
    each writable kind (one with secondary indexes among them): every UPDATE's row count, RETURNING rows (in any
    order) or WITH's sums, and every read must match the local copy's; the
    stray items are left as they were put, and every row item, moved or
    not, keeps what it held that no column maps (mark_rows).  The
    statements reach both the UPDATE run inside its scan and the row-by-row
    one."""
    statements = [update_statement() for _ in range(UPDATE_COUNT)]
    batch = [text for statement in statements
             for text in (statement, "SELECT * FROM {t}")]
    sql(f"CREATE TABLE local_updated ({COLUMNS}); "
        f"INSERT INTO local_updated VALUES {values_list(data)}")
    local = run_batch([text.replace("{t}", "local_updated") for text in batch], counts=True)
    assert not any(isinstance(r, Failed) for r in local), \
        [(t, r) for t, r in zip(batch, local) if isinstance(r, Failed)][:3]
    failures, plans = [], []
    for kind in UPDATED_KINDS:
        name = f"{kind}_updated"
        if kind in SECONDARY_INDEXED:
            table, strays = load_secondary_indexed(kind, name), []
        else:
            table, strays = load_foreign(kind, name)
        keys, kept = mark_rows(table, strays)
        texts = [text.replace("{t}", name) for text in batch]
        plans += run_batch([f"EXPLAIN (COSTS OFF) {text}" for text in texts[::2]])
        got = run_batch(texts, counts=True)
        compared[0] += len(texts)
        failures += [describe(text, g, e) for text, g, e in zip(texts, got, local)
                     if g != e and (isinstance(g, Failed) or isinstance(e, Failed) or
                                    collections.Counter(g) != collections.Counter(e))]
        schema = client.describe_table(TableName=table)["Table"]["KeySchema"]
        for item in strays:
            key = {k["AttributeName"]: item[k["AttributeName"]] for k in schema}
            stored = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
            if stored != item:
                failures.append(f"\n  {name}: stray item {key} is now {stored}")
        failures += unmapped_lost(name, table, strays, keys, kept)
    assert_no_failures(failures, len(batch) * len(UPDATED_KINDS))
    text = "\n".join(line[0] for plan in plans for line in plan)
    assert re.search(r"Foreign Update on \w+_updated", text), "no UPDATE ran inside its scan"
    assert re.search(r"Update on \w+_updated\n(?:.*\n)*?.*Foreign Scan on", text), \
        "no UPDATE went row by row"


if __name__ == "__main__":
    runner.main(set_up, tear_down)
