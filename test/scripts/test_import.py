#!/usr/bin/python3
"""IMPORT FOREIGN SCHEMA against tables written by the AWS SDK.

boto3 writes, into DynamoDB Local: the sharded leaderboard of the
write-sharding article (pk = game_id#(FNV-1a(player_id) % 10), sk = the
score zero-padded to 20 digits#player_id), once with the game, player and
score also as attributes and once with the keys alone; a plain table; a
table with a global and a local secondary index; and a table whose
attributes have every DynamoDB type, some of them mixed.  The schema is
imported, and every imported table is read back against what boto3
wrote: the leaderboards come back sharded and calculated, their
ORDER BY score DESC LIMIT 100 pushed down (EXPLAIN) and exact.  Ends with
"N passed, N failed".
"""

import base64
import json
import os
import random

import bed

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "20240607"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("import")
sql = bed.in_database(DATABASE)
client = None
tables = []
names = {}


def rows(text):
    """The rows of a query in the test database."""
    return bed.query(text, database=DATABASE)


def ident(name):
    """A quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def options_of(relname):
    """The options of an imported foreign table, as a dict."""
    found = rows(f"""SELECT option_name, option_value
                       FROM pg_options_to_table((SELECT ftoptions FROM pg_foreign_table
                                                 WHERE ftrelid = 'imported.{ident(relname)}'::regclass))""")
    return dict(found)


def column_types(relname):
    """{column: type} of an imported foreign table."""
    return dict(rows(f"""SELECT attname, format_type(atttypid, atttypmod)
                           FROM pg_attribute
                          WHERE attrelid = 'imported.{ident(relname)}'::regclass
                            AND attnum > 0 AND NOT attisdropped"""))


# ------------------------------------------------------------- the writers


def leaderboard_pk(game_id, player_id):
    """pk = game_id#hash(player_id) % 10, the hash FNV-1a."""
    return f"{game_id}#{bed.fnv1a_32(player_id.encode('utf-8')) % 10}"


def leaderboard_sk(score, player_id):
    """sk = the score zero-padded, #, the player."""
    return f"{score:020}#{player_id}"


def write_leaderboard(with_attributes):
    """A Leaderboards table and its scores, put one item at a time with
    PutItem as the article's application does; returns (name, records)."""
    name = bed.new_table(client, tables, "Leaderboards", "pk", "sk")
    players = rng.sample(range(10 ** 6), 400)
    records = []
    for i, p in enumerate(players):
        game = "game_X" if i % 4 else "game_Y"
        player = f"player_{p}"
        score = rng.randrange(10 ** 9)
        records.append((game, player, score))
        item = {"pk": {"S": leaderboard_pk(game, player)},
                "sk": {"S": leaderboard_sk(score, player)}}
        if with_attributes:
            item.update(game_id={"S": game}, player_id={"S": player},
                        score={"N": str(score)},
                        achieved={"S": f"2024-05-{1 + i % 28:02}T10:00:00.000000Z"})
        client.put_item(TableName=name, Item=item)
    return name, records


def write_plain():
    """A table of users keyed by name: nothing to infer."""
    name = bed.new_table(client, tables, "users", "user")
    users = {}
    for who in ("alice", "bob", "carol", "dave", "erin"):
        age = rng.randrange(18, 90)
        users[who] = age
        client.put_item(TableName=name, Item={"user": {"S": who}, "age": {"N": str(age)}})
    return name, users


def write_indexed():
    """A table with a GSI on city and age and an LSI on its date."""
    name = bed.unique_name("people")
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "org", "KeyType": "HASH"},
                   {"AttributeName": "id", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in
                              (("org", "S"), ("id", "S"), ("city", "S"),
                               ("age", "N"), ("joined", "S"))],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_city",
            "KeySchema": [{"AttributeName": "city", "KeyType": "HASH"},
                          {"AttributeName": "age", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_joined",
            "KeySchema": [{"AttributeName": "org", "KeyType": "HASH"},
                          {"AttributeName": "joined", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}])
    tables.append(name)
    people = []
    for i in range(30):
        person = ("acme" if i % 2 else "initech", f"id{i:03}", rng.choice(["Oslo", "Lima"]),
                  rng.randrange(20, 60), f"2020-01-{1 + i % 28:02}")
        people.append(person)
        org, pid, city, age, joined = person
        client.put_item(TableName=name, Item={
            "org": {"S": org}, "id": {"S": pid}, "city": {"S": city},
            "age": {"N": str(age)}, "joined": {"S": joined}})
    return name, people


def write_mixed():
    """Attributes of every DynamoDB type; "v" an S in some items and an N
    in others, "price" with fractions."""
    name = bed.new_table(client, tables, "mixed", "k")
    items = []
    for i in range(12):
        item = {"k": {"S": f"k{i:02}"},
                "v": {"S": f"text{i}"} if i % 3 else {"N": str(i * 7)},
                "price": {"N": f"{i}.{i}5"},
                "count": {"N": str(i * 1000000007)},
                "flag": {"BOOL": i % 2 == 0},
                "blob": {"B": bytes([i, 255 - i])},
                "tags": {"SS": [f"t{i}", "all"]},
                "nums": {"NS": [str(i), str(i + 100)]},
                "doc": {"M": {"a": {"N": str(i)}, "b": {"L": [{"S": "x"}, {"BOOL": True}]}}},
                "list": {"L": [{"N": str(i)}, {"S": "y"}]}}
        if i == 5:
            item["gone"] = {"NULL": True}
        items.append(item)
        client.put_item(TableName=name, Item=item)
    return name, items


# -------------------------------------------------------------------- tests


@runner.test
def leaderboard_is_imported_sharded_and_calculated():
    name, records = names["leaderboard"]
    opts = options_of(name)
    want = {"table": name, "partition_key": "pk",
            "partition_key_format": "{game_id}#{shard}", "shards": "10",
            "shard_base": "0", "sort_key": "sk",
            "sort_key_format": "{score:020}#{player_id}",
            "shard_strategy": "calculated", "shard_by": "player_id",
            "shard_hash": "fnv1a_32"}
    assert opts == want, opts
    types = column_types(name)
    assert types == {"game_id": "text", "score": "bigint", "player_id": "text",
                     "achieved": "timestamp with time zone"}, types
    check_top_100(name, "game_id", "score", "player_id", records)
    got = rows(f"SELECT min(achieved), max(achieved), count(*) FROM imported.{ident(name)}")
    assert got == [["2024-05-01 10:00:00+00", "2024-05-28 10:00:00+00", str(len(records))]], got


@runner.test
def keys_alone_get_generic_names_and_the_same_sharding():
    name, records = names["bare"]
    opts = options_of(name)
    assert opts["partition_key_format"] == "{pk_base}#{shard}", opts
    assert opts["sort_key_format"] == "{sk_number:020}#{sk_text}", opts
    assert (opts["shards"], opts["shard_strategy"], opts["shard_by"], opts["shard_hash"]) == \
        ("10", "calculated", "sk_text", "fnv1a_32"), opts
    check_top_100(name, "pk_base", "sk_number", "sk_text", records)


def check_top_100(name, game_col, score_col, player_col, records):
    """ORDER BY score DESC LIMIT 100 is pushed down and is exact; a
    player's score is one Query of one shard."""
    top = (f"SELECT {player_col}, {score_col} FROM imported.{ident(name)} "
           f"WHERE {game_col} = 'game_X' ORDER BY {score_col} DESC LIMIT 100")
    plan = "\n".join(r[0] for r in rows("EXPLAIN (COSTS OFF) " + top))
    assert "Sort" not in plan.replace("Merge: sk DESC", ""), plan
    assert "Merge: sk DESC" in plan and "Limit per Shard" in plan, plan
    assert "Shards: 10" in plan, plan
    expected = sorted(((s, p) for g, p, s in records if g == "game_X"), reverse=True)[:100]
    got = rows(top)
    assert got == [[p, str(s)] for s, p in expected], (got[:3], expected[:3])
    game, player, score = rng.choice(records)
    plan = "\n".join(r[0] for r in rows(
        f"EXPLAIN (COSTS OFF) SELECT {score_col} FROM imported.{ident(name)} "
        f"WHERE {game_col} = '{game}' AND {player_col} = '{player}'"))
    assert "Shards: 1 of 10 (calculated on fnv1a_32)" in plan, plan
    got = rows(f"SELECT {score_col} FROM imported.{ident(name)} "
               f"WHERE {game_col} = '{game}' AND {player_col} = '{player}'")
    assert got == [[str(score)]], got


@runner.test
def plain_table_is_imported_plain():
    name, users = names["plain"]
    opts = options_of(name)
    assert opts == {"table": name, "partition_key": "user"}, opts
    assert column_types(name) == {"user": "text", "age": "bigint"}
    got = rows(f'SELECT "user", age FROM imported.{ident(name)} ORDER BY 1')
    assert got == [[u, str(a)] for u, a in sorted(users.items())], got


@runner.test
def indexes_are_read_only_tables():
    name, people = names["indexed"]
    gsi = f"{name}_by_city"
    lsi = f"{name}_by_joined"
    assert options_of(gsi) == {"table": name, "index": "by_city",
                               "partition_key": "city", "sort_key": "age"}, options_of(gsi)
    assert options_of(lsi)["index"] == "by_joined"
    got = rows(f"SELECT id, age FROM imported.{ident(gsi)} WHERE city = 'Oslo' ORDER BY age, id")
    expected = sorted((age, pid) for _, pid, city, age, _ in people if city == "Oslo")
    assert got == [[pid, str(age)] for age, pid in expected], got
    plan = "\n".join(r[0] for r in rows(
        f"EXPLAIN (COSTS OFF) SELECT id FROM imported.{ident(gsi)} WHERE city = 'Oslo'"))
    assert "DynamoDB Index: by_city" in plan and "Query" in plan, plan
    got = rows(f"SELECT id FROM imported.{ident(lsi)} WHERE org = 'acme' "
               "AND joined >= '2020-01-10' ORDER BY id")
    expected = sorted(pid for org, pid, _, _, joined in people
                      if org == "acme" and joined >= "2020-01-10")
    assert got == [[pid] for pid in expected], got
    result = bed.psql(f"INSERT INTO imported.{ident(gsi)} (city, age, org, id) "
                      "VALUES ('Rome', 1, 'x', 'y')", check=False, database=DATABASE)
    assert result.returncode != 0, "an index table took an INSERT"
    people_rows = rows(f"SELECT org, id, city, age, joined FROM imported.{ident(name)} ORDER BY id")
    assert people_rows == [[o, i, c, str(a), j] for o, i, c, a, j in sorted(people, key=lambda p: p[1])]


@runner.test
def mixed_types_are_typed_and_read_back():
    name, items = names["mixed"]
    types = column_types(name)
    want = {"k": "text", "v": "jsonb", "price": "numeric", "count": "bigint",
            "flag": "boolean", "blob": "bytea", "tags": "text[]", "nums": "bigint[]",
            "doc": "jsonb", "list": "jsonb", "gone": "text", "item": "jsonb"}
    assert types == want, types
    got = rows(f"""SELECT k, v::text, price, count, flag, encode(blob, 'hex'),
                          (SELECT string_agg(x, ',' ORDER BY x) FROM unnest(tags) x),
                          (SELECT string_agg(x::text, ',' ORDER BY x) FROM unnest(nums) x),
                          doc::text, list::text, gone, item ? 'doc'
                     FROM imported.{ident(name)} ORDER BY k""")
    expected = []
    for item in items:
        v = item["v"]
        expected.append([
            item["k"]["S"],
            json.dumps(v["S"]) if "S" in v else v["N"],
            item["price"]["N"], item["count"]["N"],
            "t" if item["flag"]["BOOL"] else "f",
            base64.b16encode(item["blob"]["B"]).decode().lower(),
            ",".join(sorted(item["tags"]["SS"])),
            ",".join(sorted(item["nums"]["NS"], key=int)),
            json.dumps({"a": int(item["doc"]["M"]["a"]["N"]), "b": ["x", True]}),
            json.dumps([int(item["list"]["L"][0]["N"]), "y"]),
            "", "t"])
    assert got == expected, (got[:2], expected[:2])


@runner.test
def limit_to_and_except_choose_tables():
    plain, _ = names["plain"]
    mixed, _ = names["mixed"]
    sql(f"""CREATE SCHEMA only_plain;
            IMPORT FOREIGN SCHEMA dynamodb LIMIT TO ({ident(plain)}, {ident(mixed)})
              FROM SERVER ddb INTO only_plain;
            CREATE SCHEMA all_but;
            IMPORT FOREIGN SCHEMA dynamodb EXCEPT ({ident(plain)})
              FROM SERVER ddb INTO all_but OPTIONS (detect_shards 'false', sample_size '20');""")
    got = rows("SELECT relname FROM pg_class WHERE relnamespace = 'only_plain'::regnamespace "
               "ORDER BY 1")
    assert got == sorted([[plain], [mixed]]), got
    got = {r[0] for r in rows("SELECT relname FROM pg_class "
                              "WHERE relnamespace = 'all_but'::regnamespace")}
    assert plain not in got and mixed in got and names["leaderboard"][0] in got, got
    lb = names["leaderboard"][0]
    opts = dict(rows(f"""SELECT option_name, option_value FROM pg_options_to_table(
                           (SELECT ftoptions FROM pg_foreign_table
                             WHERE ftrelid = 'all_but.{ident(lb)}'::regclass))"""))
    assert opts == {"table": lb, "partition_key": "pk", "sort_key": "sk"}, opts


def set_up():
    global client
    print(f"seed {SEED} (set SHARD_FDW_TEST_SEED to repeat another)")
    client = bed.ddb(direct=True)
    names["leaderboard"] = write_leaderboard(with_attributes=True)
    names["bare"] = write_leaderboard(with_attributes=False)
    names["plain"] = write_plain()
    names["indexed"] = write_indexed()
    names["mixed"] = write_mixed()
    bed.psql(f"CREATE DATABASE {DATABASE}")
    listed = ", ".join(ident(n) for n, _ in names.values())
    listed += ", " + ", ".join(ident(f"{names['indexed'][0]}_{i}") for i in ("by_city", "by_joined"))
    sql("CREATE EXTENSION shard_fdw;" + bed.server_sql(direct=True) + f"""
        CREATE SCHEMA imported;
        IMPORT FOREIGN SCHEMA dynamodb LIMIT TO ({listed})
          FROM SERVER ddb INTO imported OPTIONS (item_column 'item');""")
    # the catch-all column only where the test reads it
    for key, (name, _) in names.items():
        if key != "mixed":
            sql(f"ALTER FOREIGN TABLE imported.{ident(name)} DROP COLUMN item")
    for index in ("by_city", "by_joined"):
        sql(f"ALTER FOREIGN TABLE imported.{ident(names['indexed'][0] + '_' + index)} "
            "DROP COLUMN item")


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
