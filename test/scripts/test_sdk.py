#!/usr/bin/python3
"""The AWS SDK's view of what shard_fdw stores and reads.

Rows written through foreign tables are read back with boto3's low-level
client and must hold exactly the DynamoDB types and values of the README's
Types table; items put with boto3 must read back as the right PostgreSQL
values.  For each article's key format (the leaderboard hashed on player_id,
the audit log, the catalog's range and hashed album shards, the time series)
the partition key an INSERT chooses is recomputed here with the article's
own formula (hashlib, bisect, unicodedata, FNV-1a written out in Python),
and items written by code that follows the articles are read through the
FDW: the right rows, and the leaderboard's top-N in Python's order.  Talks
to DynamoDB Local directly: the proxy adds nothing to these checks.  Ends
with "N passed, N failed".
"""

import bisect
import datetime
import hashlib
import json
import os
import random
import re
import unicodedata
import uuid
from decimal import Decimal

from boto3.dynamodb.types import TypeSerializer

import bed

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "20240229"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("sdk")
client = None
tables = []

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

# the range-sharded catalog: the article's boundaries, as saved in its code
ALBUM_TITLE_BOUNDARIES = [
    '', 'agartha', 'barstow / crazy', 'can you feel it', 'cyan rot',
    'dreams take over eve', 'feud semiotics (rb. ', 'grave poetry', 'i live',
    'kannaval', 'live in florence', "mir ist's gleich / i", 'notice',
    'platforms ep', 'rituals', 'skylten', 'surtr / absorbed',
    'the human touch', 'tonttujen jouluyö: ', 'walking away', 'голос',
]


# ---------------------------------------------------------------- helpers


def sql(text):
    """Run SQL in this script's database; an error carries psql's message."""
    result = bed.psql(text, check=False, database=DATABASE)
    assert result.returncode == 0, f"{result.stderr.strip()}\nin: {text.strip()[:300]}"
    return result


def rows(text):
    """The rows of a query in this script's database."""
    output = sql(text).stdout
    return [line.split(bed.FIELD_SEPARATOR) for line in output.splitlines() if line]


def literal(value):
    """A value as an SQL literal (None is NULL)."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"'\\x{value.hex()}'"
    return "'" + str(value).replace("'", "''") + "'"


def values_list(records):
    """A VALUES list of records (tuples of Python values)."""
    return ",\n".join("(" + ", ".join(map(literal, r)) + ")" for r in records)


def array(values, element_type):
    """An SQL array constructor of literals."""
    return f"ARRAY[{', '.join(map(literal, values))}]::{element_type}[]"


def json_texts(table, expressions, where):
    """The expressions' texts (None for NULL) for the one row matching where."""
    select = ", ".join(f"({e})::text" for e in expressions)
    result = rows(f"SELECT json_build_array({select}) FROM {table} WHERE {where}")
    assert len(result) == 1, f"{len(result)} rows match {where}"
    return json.loads(result[0][0])


def new_table(partition_key, sort_key, sort_type="S"):
    """A fresh DynamoDB table (string partition key), deleted at the end."""
    return bed.new_table(client, tables, "sdk", partition_key, sort_key, sort_type)


def scan(table):
    """Every item of a DynamoDB table, as low-level AttributeValue maps."""
    items = []
    for page in client.get_paginator("scan").paginate(TableName=table):
        items.extend(page["Items"])
    return items


def placed(table, partition_key, sort_key):
    """{sort key value: partition key value} of every item of a table."""
    found = {}
    for item in scan(table):
        (_, sort_value), = item[sort_key].items()
        assert sort_value not in found, f"two items with {sort_key} {sort_value}"
        found[sort_value] = item[partition_key]["S"]
    return found


def assert_same(got, expected, what):
    """Equality with both sides printed on failure."""
    assert got == expected, f"{what}:\n  got      {got!r}\n  expected {expected!r}"


def assert_placement(got, expected):
    """Compare {sort key: partition key} maps, naming the misplaced items."""
    wrong = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    extra = set(got) - set(expected)
    assert not wrong and not extra, (
        f"{len(wrong)} misplaced (sort key: (got, expected)): "
        f"{dict(list(wrong.items())[:10])}; unexpected items: {sorted(extra)[:10]}")


# ------------------------------------------------- AttributeValue helpers


def av(value):
    """The AttributeValue the README maps a JSON-like Python value to."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, float)):
        return {"N": repr(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, list):
        return {"L": [av(v) for v in value]}
    return {"M": {k: av(v) for k, v in value.items()}}


def comparable(value):
    """An AttributeValue in a form where equal values compare equal:
    numbers as Decimal, sets as frozensets, B as bytes."""
    (kind, inner), = value.items()
    if kind == "N":
        return kind, Decimal(inner)
    if kind == "NS":
        return kind, frozenset(Decimal(v) for v in inner)
    if kind in ("SS", "BS"):
        return kind, frozenset(bytes(v) if kind == "BS" else v for v in inner)
    if kind == "B":
        return kind, bytes(inner)
    if kind == "M":
        return kind, {k: comparable(v) for k, v in inner.items()}
    if kind == "L":
        return kind, [comparable(v) for v in inner]
    return kind, inner


def plain(value):
    """An M/L AttributeValue as the JSON value it stands for (numbers as Decimal)."""
    (kind, inner), = value.items()
    if kind == "M":
        return {k: plain(v) for k, v in inner.items()}
    if kind == "L":
        return [plain(v) for v in inner]
    if kind == "N":
        return Decimal(inner)
    return None if kind == "NULL" else inner


def loads(text):
    """JSON with every number as Decimal."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def iso_utc(moment):
    """ISO-8601 UTC text with six fractional digits, as the README says."""
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ------------------------------------------------ the articles' formulas


def leaderboard_pk(game_id, player_id):
    """The leaderboard: pk = game_id#hash(player_id) % 10, with FNV-1a."""
    return f"{game_id}#{bed.fnv1a_32(player_id.encode('utf-8')) % 10}"


def leaderboard_sk(score, player_id):
    """The leaderboard: sk = zero-padded score#player_id."""
    return f"{score:020}#{player_id}"


def audit_log_pk(file_path, ts):
    """The audit log: <File Path>_<md5(<File Path> + timestamp) % 10 + 1>."""
    digest = hashlib.md5((file_path + str(ts)).encode("utf-8")).hexdigest()
    return f"{file_path}_{int(digest, 16) % 10 + 1}"


def album_shard_id(album_title):
    """The range-sharded catalog's shard: the article's function, verbatim."""
    normalized = unicodedata.normalize('NFKD', album_title.lower())
    return bisect.bisect(ALBUM_TITLE_BOUNDARIES, normalized) - 1


def album_hash_shard_id(album_title):
    """The catalog's hashed shard: the 256-bit sha256 digest mod 21."""
    return int.from_bytes(hashlib.sha256(album_title.encode()).digest(), "big") % 21


def time_series_shard_id(key_string, shard_count):
    """The time-series article's CalculatedShardedWriter._calculate_shard_id."""
    hashed = hashlib.sha256(key_string.encode('utf-8')).hexdigest()
    return int(hashed[:8], 16) % shard_count


# ------------------------------------------------------- random inputs


def word(alphabet="abcdefghijklmnopqrstuvwxyzéü日本ß", low=3, high=10):
    """A random string of low to high letters of the alphabet."""
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def album_titles():
    """The article's examples, each boundary itself, just below and just
    above it (upper-cased, so normalization matters), odd Unicode, and
    random titles."""
    titles = {"2 Pie Island", "Heavy Migration", "Leaving Home", "Space Cadet",
              "Über Alles", "Ｆｕｌｌｗｉｄｔｈ", "ﬁre walk", "Ǆemal", "Ωmega",
              "Голос", "голос ii", "Ångström", "ÉCOLE", "e\u0301cole", "zzz",
              "TONTTUJEN JOULUYÖ: ", "Tonttujen jouluyo\u0308: x", "!", "~"}
    for boundary in ALBUM_TITLE_BOUNDARIES[1:]:
        titles.update({boundary.upper(), boundary[:-1].title(), boundary + "z"})
    while len(titles) < 160:
        titles.add(word("abcdefghijklmnopqrstuvwxyz ABCÉÖйцу", 1, 14).strip() or "x")
    return sorted(titles)


# ------------------------------------------------------------------ setup


def set_up():
    """A database of its own with the extension and a server that talks
    straight to DynamoDB Local."""
    global client
    print(f"seed {SEED} (set SHARD_FDW_TEST_SEED to repeat another)")
    client = bed.ddb(direct=True)
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql(f"""
        CREATE EXTENSION shard_fdw;
        {bed.server_sql(direct=True)}
        CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');""")


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


# --------------------------------------------------------------- (a) types

TYPED_COLUMNS = """
    pk text, sk text, i2 smallint, i4 integer, i8 bigint, n numeric,
    nf numeric, r real, d double precision, t text, u uuid, dt date,
    ts timestamptz, raw bytea, flag boolean, jo json, ja json, jb jsonb,
    tags text[], nums numeric[], blobs bytea[], m mood, gone text"""


def typed_table():
    """A DynamoDB table and a foreign table with a column of every type."""
    table = new_table("pk", "sk")
    name = bed.unique_name("typed")
    sql(f"CREATE FOREIGN TABLE {name} ({TYPED_COLUMNS}) SERVER ddb "
        f"OPTIONS (table '{table}', partition_key 'pk', sort_key 'sk')")
    return table, name


def written_rows():
    """Rows to INSERT: {column: (SQL literal, expected AttributeValue or
    None for a missing attribute)}."""
    moment = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456,
                               datetime.timezone(datetime.timedelta(hours=2)))
    midnight = datetime.datetime(2024, 6, 30, 23, 59, 59, tzinfo=datetime.timezone.utc)
    uid = uuid.UUID(int=rng.getrandbits(128), version=4)
    raw = bytes(range(256))
    jo = {"a": [1, 2.5, "x", None, False], "b": {"c": "ü", "d": {}},
          "e": 12345678901234567890123456789012345678}
    ja = [1, [2, [3]], {"k": "v"}, None, True, "s"]
    jb = {"deep": {"er": [[]]}, "n": -0.5}
    tags = ["red", "green", "日本"]
    nums = ["1", "2.5", "-3E-10", "12345678901234567890123456789012345678"]
    blobs = [b"\x00", b"\xff\x01", b"\x80"]
    text = 'naïve 日本 🎲 "q" \\ it\'s'
    full = {
        "pk": ("'sdk'", {"S": "sdk"}),
        "sk": ("'full'", {"S": "full"}),
        "i2": ("-32768", {"N": str(-2 ** 15)}),
        "i4": ("2147483647", {"N": str(2 ** 31 - 1)}),
        "i8": ("-9223372036854775808", {"N": str(-2 ** 63)}),
        "n": ("12345678901234567890123456789012345678",
              {"N": "12345678901234567890123456789012345678"}),
        "nf": ("-1.2345678901234567890123456789012345678e-100",
               {"N": "-1.2345678901234567890123456789012345678E-100"}),
        "r": ("3.25", av(3.25)),
        "d": ("0.1", av(0.1)),
        "t": (literal(text), {"S": text}),
        "u": (literal(str(uid).upper()), {"S": str(uid)}),
        "dt": ("'2024-02-29'", {"S": datetime.date(2024, 2, 29).isoformat()}),
        "ts": ("'2024-01-02 03:04:05.123456+02'", {"S": iso_utc(moment)}),
        "raw": (literal(raw), {"B": raw}),
        "flag": ("true", {"BOOL": True}),
        "jo": (literal(json.dumps(jo, ensure_ascii=False)), av(jo)),
        "ja": (literal(json.dumps(ja)), av(ja)),
        "jb": (literal(json.dumps(jb)), av(jb)),
        "tags": (array(tags, "text"), {"SS": tags}),
        "nums": (array(nums, "numeric"), {"NS": nums}),
        "blobs": (array(blobs, "bytea"), {"BS": blobs}),
        "m": ("'happy'", {"S": "happy"}),
        "gone": ("NULL", None),
    }
    sparse = {column: ("NULL", None) for column in full}
    sparse.update({
        "pk": full["pk"], "sk": ("'sparse'", {"S": "sparse"}),
        "i2": ("0", {"N": "0"}),
        "ts": ("'2024-06-30 23:59:59+00'", {"S": iso_utc(midnight)}),
        "jo": ("'null'", {"NULL": True}),
        "ja": ("'123.450'", {"N": "123.45"}),
        "jb": ("'\"just a string\"'", {"S": "just a string"}),
        "t": ("''", {"S": ""}),
        "m": ("'sad'", {"S": "sad"}),
    })
    return [full, sparse]


@runner.test
def fdw_writes_every_type_as_the_readme_says():
    table, name = typed_table()
    for row in written_rows():
        columns = ", ".join(row)
        sql(f"INSERT INTO {name} ({columns}) VALUES "
            f"({', '.join(text for text, _ in row.values())})")
        key = {"pk": row["pk"][1], "sk": row["sk"][1]}
        item = client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
        expected = {c: v for c, (_, v) in row.items() if v is not None}
        # insert_mode 'insert' (the default) stores its put token beside the
        # columns (doc/writes.md): 16 hex digits
        token = item.pop("shard_fdw_put", None)
        assert token and re.fullmatch(r"[0-9a-f]{16}", token.get("S", "")), token
        assert_same(sorted(item), sorted(expected), f"attributes of {key}")
        for column, value in expected.items():
            assert_same(comparable(item[column]), comparable(value),
                        f"{column} of {key}")
        assert ISO_UTC.match(item["ts"]["S"]), item["ts"]
        if "n" in expected:
            assert_same(item["n"]["N"], expected["n"]["N"], "38-digit number text")


# ----------------------------------------------------------- (b) reverse


def sdk_items():
    """Items put with boto3: {column: (AttributeValue or None, check)}.

    check(text) judges the column's text read through the FDW (None for SQL
    NULL); each is computed from the AttributeValue, not from the FDW."""
    raw = bytes(range(255, -1, -1))
    nested = {"M": {"list": {"L": [{"N": "1"}, {"S": "two"}, {"NULL": True},
                                   {"BOOL": True}, {"L": []}, {"M": {}}]},
                    "deep": {"M": {"x": {"N": "-0.5"}, "y": {"S": "é"}}},
                    "big": {"N": "12345678901234567890123456789012345678"}}}
    listed = {"L": [{"N": "3"}, {"M": {"k": {"S": "v"}}}, {"BOOL": False}]}
    stamp = "2024-01-02T01:04:05.123456Z"
    uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    text = "naïve 日本 🎲 \\ 'q'"

    def floating(n):
        return lambda got: got is not None and float(got) == float(n)

    def equal(value):
        return lambda got: got == value

    def json_of(value):
        return lambda got: got is not None and loads(got) == plain(value)

    def same_json(value):
        return value, json_of(value)

    def set_of(values, convert=str):
        return lambda got: (got is not None and
                            sorted(map(convert, loads(got))) == sorted(map(convert, values)))

    full = {
        "pk": ({"S": "sdk"}, equal("sdk")),
        "sk": ({"S": "put1"}, equal("put1")),
        "i2": ({"N": "-32768"}, equal(str(-2 ** 15))),
        "i4": ({"N": "2147483647"}, equal(str(2 ** 31 - 1))),
        "i8": ({"N": "9223372036854775807"}, equal(str(2 ** 63 - 1))),
        "n": ({"N": "12345678901234567890123456789012345678"},
              equal("12345678901234567890123456789012345678")),
        "nf": ({"N": "-1.5E-10"}, equal(format(Decimal("-1.5E-10"), "f"))),
        "r": ({"N": "3.25"}, floating("3.25")),
        "d": ({"N": "0.1"}, floating("0.1")),
        "t": ({"S": text}, equal(text)),
        "u": ({"S": uid}, equal(uid)),
        "dt": ({"S": "2024-02-29"}, equal("2024-02-29")),
        "ts": ({"S": stamp}, equal(stamp)),
        "raw": ({"B": raw}, equal(raw.hex())),
        "flag": ({"BOOL": False}, equal("false")),
        "jo": same_json(nested),
        "ja": same_json(listed),
        "jb": same_json({"M": {"a": {"L": [{"N": "1.50"}]}}}),
        "tags": ({"SS": ["b", "a", "日本"]}, set_of(["a", "b", "日本"])),
        "nums": ({"NS": ["1", "-2.5", "1E+20"]},
                 set_of(["1", "-2.5", "1E+20"], Decimal)),
        "blobs": ({"BS": [b"\x00", b"\xff"]}, set_of(["00", "ff"])),
        "m": ({"S": "ok"}, equal("ok")),
        "gone": ({"NULL": True}, equal(None)),
    }
    sparse = {
        "pk": full["pk"], "sk": ({"S": "put2"}, equal("put2")),
        "jo": same_json({"NULL": True}),
        "ja": same_json({"N": "-7.25"}),
        "jb": same_json({"S": "scalar"}),
        "t": ({"NULL": True}, equal(None)),
    }
    sparse.update({c: (None, equal(None)) for c in full if c not in sparse})
    return [full, sparse]


READ_EXPRESSIONS = {
    "ts": "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
    "raw": "encode(raw, 'hex')",
    "tags": "array_to_json(tags)",
    "nums": "array_to_json(nums)",
    "blobs": "(SELECT json_agg(encode(b, 'hex')) FROM unnest(blobs) b)",
}


@runner.test
def sdk_items_read_as_the_right_postgresql_values():
    table, name = typed_table()
    for row in sdk_items():
        item = {c: v for c, (v, _) in row.items() if v is not None}
        client.put_item(TableName=table, Item=item)
        columns = list(row)
        texts = json_texts(name, [READ_EXPRESSIONS.get(c, c) for c in columns],
                           f"pk = 'sdk' AND sk = {literal(item['sk']['S'])}")
        wrong = {c: t for c, t in zip(columns, texts) if not row[c][1](t)}
        assert not wrong, f"{item['sk']['S']}: columns read wrong: {wrong}"


# ------------------------------------------------------- (c) placement


def leaderboard_table():
    """The leaderboard's Leaderboards table and its foreign table."""
    table = new_table("pk", "sk")
    name = bed.unique_name("leaderboard")
    sql(f"""CREATE FOREIGN TABLE {name} (
              game_id text NOT NULL, player_id text NOT NULL,
              score bigint NOT NULL, achieved timestamptz)
            SERVER ddb OPTIONS (table '{table}',
              partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
              sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
              shards '10', shard_strategy 'calculated', shard_by 'player_id',
              shard_hash 'fnv1a_32')""")
    return table, name


def scores(games, count):
    """(game_id, player_id, score) with unique players and scores."""
    players = set()
    while len(players) < count:
        players.add("p_" + word())
    score_values = rng.sample(range(10 ** 9), count)
    return [(rng.choice(games), player, score)
            for player, score in zip(sorted(players), score_values)]


@runner.test
def leaderboard_rows_land_where_fnv1a_puts_them():
    table, name = leaderboard_table()
    records = scores(["game_X", "gäme_Y"], 150)
    sql(f"INSERT INTO {name} (game_id, player_id, score) VALUES {values_list(records)}")
    expected = {leaderboard_sk(s, p): leaderboard_pk(g, p) for g, p, s in records}
    assert_placement(placed(table, "pk", "sk"), expected)


def audit_table(strategy):
    """The audit log: pk <File Path>_<Shard>, sort key the access
    timestamp (a number), shards 1..10."""
    table = new_table("pk", "ts", sort_type="N")
    name = bed.unique_name("audit")
    hashing = (", shard_by 'file_path, ts', shard_hash 'md5'"
               if strategy == "calculated" else "")
    sql(f"""CREATE FOREIGN TABLE {name} (
              file_path text NOT NULL, ts bigint NOT NULL, user_name text)
            SERVER ddb OPTIONS (table '{table}',
              partition_key 'pk', partition_key_format '{{file_path}}_{{shard}}',
              sort_key 'ts', shards '10', shard_base '1',
              shard_strategy '{strategy}'{hashing})""")
    return table, name


def accesses(paths, count):
    """(file_path, ts, user_name) with unique epoch-like timestamps."""
    stamps = rng.sample(range(100000000000, 999999999999), count)
    return [(rng.choice(paths), ts, word()) for ts in stamps]


@runner.test
def audit_log_rows_land_where_md5_puts_them():
    table, name = audit_table("calculated")
    records = accesses(["/shared/firetvGen2.txt", "/home/ü/日本.txt"], 150)
    sql(f"INSERT INTO {name} VALUES {values_list(records)}")
    expected = {str(ts): audit_log_pk(path, ts) for path, ts, _ in records}
    assert_placement(placed(table, "pk", "ts"), expected)


def album_tables():
    """The catalog's GSI1 as a table (gsi1pk, gsi1sk = title), once with
    ordered shards and once with sha256 shards, and their foreign tables."""
    made = {}
    for kind, options in (
            ("range", "shard_strategy 'range', range_boundaries "
                      + literal(json.dumps(ALBUM_TITLE_BOUNDARIES, ensure_ascii=False))),
            ("calculated", "shards '21', shard_strategy 'calculated', "
                           "shard_hash 'sha256'")):
        table = new_table("gsi1pk", "gsi1sk")
        name = bed.unique_name(f"albums_{kind}")
        sql(f"""CREATE FOREIGN TABLE {name} (
                  title text OPTIONS (attribute 'gsi1sk') COLLATE "C" NOT NULL,
                  artist text)
                SERVER ddb OPTIONS (table '{table}',
                  partition_key 'gsi1pk', partition_key_format 'album#{{shard}}',
                  sort_key 'gsi1sk', shard_by 'title', {options})""")
        made[kind] = (table, name)
    return made


@runner.test
def album_rows_land_in_the_articles_shards():
    titles = album_titles()
    formulas = {"range": album_shard_id, "calculated": album_hash_shard_id}
    for kind, (table, name) in album_tables().items():
        records = [(title, word()) for title in titles]
        sql(f"INSERT INTO {name} VALUES {values_list(records)}")
        expected = {t: f"album#{formulas[kind](t)}" for t in titles}
        assert_placement(placed(table, "gsi1pk", "gsi1sk"), expected)


def sensor_table(strategy, shard_count):
    """The time series: PK {base}#_{shard}, SK {timestamp}#{id}."""
    table = new_table("PK", "SK")
    name = bed.unique_name(f"sensor_{strategy}")
    hashing = (", shard_by 'device_id', shard_hash 'sha256_32'"
               if strategy == "calculated" else "")
    sql(f"""CREATE FOREIGN TABLE {name} (
              base text NOT NULL, ts text COLLATE "C" NOT NULL,
              device_id text NOT NULL, payload jsonb)
            SERVER ddb OPTIONS (table '{table}',
              partition_key 'PK', partition_key_format '{{base}}#_{{shard}}',
              sort_key 'SK', sort_key_format '{{ts}}#{{device_id}}',
              shards '{shard_count}', shard_strategy '{strategy}'{hashing})""")
    return table, name


def readings(count, devices):
    """(timestamp isoformat, device_id, temperature) in time order."""
    start = datetime.datetime(2023, 10, 27, tzinfo=datetime.timezone.utc)
    offsets = sorted(rng.sample(range(86400 * 10 ** 6), count))
    return [((start + datetime.timedelta(microseconds=us)).isoformat(),
             rng.choice(devices), Decimal(rng.randint(-400, 400)) / 10)
            for us in offsets]


@runner.test
def time_series_rows_land_where_sha256_32_puts_them():
    table, name = sensor_table("calculated", 20)
    base = "SENSOR_READING#2023-10-27"
    devices = [f"dev-{word('abcxyz0123456789', 3, 3)}-{n}" for n in range(40)]
    records = readings(150, devices)
    sql(f"INSERT INTO {name} (base, ts, device_id) VALUES "
        + values_list((base, ts, device) for ts, device, _ in records))
    expected = {f"{ts}#{device}": f"{base}#_{time_series_shard_id(device, 20)}"
                for ts, device, _ in records}
    assert_placement(placed(table, "PK", "SK"), expected)


# -------------------------------------------------- (d) reverse placement


@runner.test
def leaderboard_items_put_by_the_article_read_back_in_order():
    table, name = leaderboard_table()
    records = scores(["game_X", "gäme_Y"], 300)
    for game, player, score in records:
        item = {"pk": {"S": leaderboard_pk(game, player)},
                "sk": {"S": leaderboard_sk(score, player)}}
        if rng.random() < 0.5:      # half keep the score only inside sk
            item.update(game_id={"S": game}, player_id={"S": player},
                        score={"N": str(score)})
        client.put_item(TableName=table, Item=item)
    for game in ("game_X", "gäme_Y"):
        ranked = sorted(((s, p) for g, p, s in records if g == game), reverse=True)
        for limit, offset in ((10, 0), (100, 0), (7, 13), (len(ranked) + 5, 0)):
            got = rows(f"SELECT player_id, score FROM {name} "
                       f"WHERE game_id = {literal(game)} "
                       f"ORDER BY score DESC LIMIT {limit} OFFSET {offset}")
            expected = [[p, str(s)] for s, p in ranked[offset:offset + limit]]
            assert_same(got, expected, f"top {limit} offset {offset} of {game}")
        ascending = rows(f"SELECT score FROM {name} WHERE game_id = {literal(game)} "
                         "ORDER BY score LIMIT 5")
        assert_same(ascending, [[str(s)] for s, _ in sorted(ranked)[:5]],
                    f"bottom 5 of {game}")
    for game, player, score in rng.sample(records, 20):
        got = rows(f"SELECT score FROM {name} WHERE game_id = {literal(game)} "
                   f"AND player_id = {literal(player)}")
        assert_same(got, [[str(score)]], f"{player} in {game}")


@runner.test
def audit_log_items_put_by_the_article_read_back():
    for strategy in ("calculated", "random"):
        table, name = audit_table(strategy)
        paths = ["/shared/firetvGen2.txt", "/home/ü/日本.txt"]
        records = accesses(paths, 120)
        for path, ts, user in records:
            pk = (audit_log_pk(path, ts) if strategy == "calculated"
                  else f"{path}_{rng.randint(1, 10)}")
            client.put_item(TableName=table, Item={
                "pk": {"S": pk}, "ts": {"N": str(ts)}, "user_name": {"S": user}})
        for path in paths:
            got = rows(f"SELECT ts, user_name FROM {name} "
                       f"WHERE file_path = {literal(path)} ORDER BY ts")
            expected = [[str(ts), user] for p, ts, user in sorted(records, key=lambda r: r[1])
                        if p == path]
            assert_same(got, expected, f"{strategy}: accesses of {path}")
        for path, ts, user in rng.sample(records, 10):
            got = rows(f"SELECT user_name FROM {name} "
                       f"WHERE file_path = {literal(path)} AND ts = {ts}")
            assert_same(got, [[user]], f"{strategy}: access {path} at {ts}")


@runner.test
def album_items_put_by_the_article_read_back():
    titles = album_titles()
    artists = {title: word() for title in titles}
    formulas = {"range": album_shard_id, "calculated": album_hash_shard_id}
    for kind, (table, name) in album_tables().items():
        for title in titles:
            client.put_item(TableName=table, Item={
                "gsi1pk": {"S": f"album#{formulas[kind](title)}"},
                "gsi1sk": {"S": title}, "artist": {"S": artists[title]}})
        got = rows(f"SELECT title, artist FROM {name} ORDER BY title")
        expected = [[t, artists[t]] for t in sorted(titles, key=str.encode)]
        assert_same(got, expected, f"{kind}: every album in title order")
        for title in rng.sample(titles, 25):
            got = rows(f"SELECT artist FROM {name} WHERE title = {literal(title)}")
            assert_same(got, [[artists[title]]], f"{kind}: album {title!r}")


@runner.test
def time_series_items_put_by_the_article_read_back():
    serializer = TypeSerializer()
    base = "SENSOR_READING#2023-10-27"
    devices = [f"dev-{word('abcxyz0123456789', 3, 3)}-{n}" for n in range(30)]
    for strategy in ("calculated", "random"):
        table, name = sensor_table(strategy, 20)
        records = readings(150, devices)
        for ts, device, temperature in records:
            shard = (time_series_shard_id(device, 20) if strategy == "calculated"
                     else rng.randint(0, 19))
            payload = {"device_id": device, "temperature": temperature}
            client.put_item(TableName=table, Item={
                "PK": {"S": f"{base}#_{shard}"}, "SK": {"S": f"{ts}#{device}"},
                "payload": serializer.serialize(payload)})
        got = rows(f"SELECT ts, device_id, payload->>'temperature' FROM {name} "
                   f"WHERE base = {literal(base)} ORDER BY ts")
        expected = [[ts, device, format(temp, "f")] for ts, device, temp
                    in sorted(records, key=lambda r: f"{r[0]}#{r[1]}")]
        assert_same(got, expected, f"{strategy}: every reading in SK order")
        for device in rng.sample(devices, 5):
            got = rows(f"SELECT ts FROM {name} WHERE base = {literal(base)} "
                       f"AND device_id = {literal(device)} ORDER BY ts")
            assert_same(got, [[ts] for ts, d, _ in records if d == device],
                        f"{strategy}: readings of {device}")
        start, end = sorted(rng.sample([ts for ts, _, _ in records], 2))
        got = rows(f"SELECT ts FROM {name} WHERE base = {literal(base)} "
                   f"AND ts BETWEEN {literal(start)} AND {literal(end)} ORDER BY ts DESC")
        assert_same(got, [[ts] for ts, _, _ in reversed(records) if start <= ts <= end],
                    f"{strategy}: readings between {start} and {end}")


if __name__ == "__main__":
    runner.main(set_up, tear_down)
