#!/usr/bin/python3
"""Changing a loaded leaderboard's shard count, and moving its items.

A leaderboard (hashed on player_id: calculated fnv1a_32 shards) is loaded
with the same rows as a local table, then grown from 10 to 20 shards and
shrunk to 5.  At every step, reads must give what the local table gives:
counts, the top 100, point lookups, and random WHERE clauses.  Random
INSERTs (a row alone, or several under ON CONFLICT DO NOTHING) of rows
stored under earlier layouts' keys, and of new ones, must end as on a
local table with a primary key: refused (23505) or skipped, never stored
twice.  Then shard_fdw_reshard moves the items while writer sessions insert rows into
another game, a reader session compares reads of the game being moved
(unordered, and ordered with and without a LIMIT) with the local table,
and the proxy injects 5xx answers (some after the
write was applied) and throttles.  After the runs: nothing lost, nothing
doubled, no earlier layout left, and every item, read with boto3, sits
under the key the newest layout gives, computed here as the leaderboard
article does (fnv1a_32 of player_id mod the shard count).  Last, a move to 7
shards under max_write_units_per_second takes at least the time its units
need.
Then ordered reads (both directions, with and without a LIMIT) of a table
of big items, whose shards take several pages, are held by a cursor
after their first rows while boto3 moves items their earlier layout's
pages have not reached yet: each must still return every row once, in
order; and a LIMIT read asks for pages of its page Limit, not whole shards.
Last, a whole-table read (a Scan in one segment, whose order of partition
keys is learnt first from a scratch table) is held by a cursor once it has
passed the partition rows will move into, while boto3 moves rows from a
partition it has not reached: it must return every row once, in two passes.

The random generator's seed is printed first; SHARD_FDW_TEST_SEED sets it.
Ends with "N passed, N failed".
"""

import itertools
import os
import random
import threading

import bed

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "1414"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("reshard")
client = bed.ddb()
tables = []
run = bed.in_database(DATABASE)
ROWS = 600
WRITERS = 3
WRITES_EACH = 40
state = {}


def rows(sql):
    """The rows of a query in the test database."""
    return bed.query(sql, database=DATABASE)


def set_up():
    print(f"seed {SEED}")
    bed.psql(f"CREATE DATABASE {DATABASE}")
    table = bed.new_table(client, tables, "reshard", "pk", "sk")
    state["table"] = table
    run(f"""CREATE EXTENSION shard_fdw;
            {bed.server_sql()}
            CREATE FOREIGN TABLE lb (game_id text NOT NULL, player_id text NOT NULL,
                                     score bigint NOT NULL)
              SERVER ddb OPTIONS (table '{table}',
                partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
                sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
                shards '10', shard_strategy 'calculated', shard_by 'player_id',
                shard_hash 'fnv1a_32');
            CREATE TABLE local_lb (game_id text, player_id text, score bigint);""")
    values = ", ".join(f"('g{i % 2}', 'p{i:05d}', {rng.randrange(100000)})" for i in range(ROWS))
    run(f"INSERT INTO local_lb VALUES {values}; INSERT INTO lb SELECT * FROM local_lb;")


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


def same(foreign_sql, local_sql, ordered=False):
    """The foreign query gives the local one's rows (in order when ordered)."""
    got = rows(foreign_sql)
    want = rows(local_sql)
    if not ordered:
        got, want = sorted(got), sorted(want)
    assert got == want, f"{foreign_sql}\n got {got[:5]}... ({len(got)} rows)\n" \
                        f"want {want[:5]}... ({len(want)} rows)"


def random_where():
    """A random condition on the leaderboard's columns."""
    lo = rng.randrange(100000)
    players = ", ".join(f"'p{rng.randrange(ROWS + 200):05d}'" for _ in range(rng.randrange(1, 6)))
    return rng.choice([
        f"score >= {lo}", f"score < {lo}", f"score BETWEEN {lo} AND {lo + 20000}",
        f"player_id IN ({players})", f"player_id LIKE 'p001%'",
        f"score > {lo} AND player_id >= 'p00300'",
    ])


def compare_game(game, checks=10):
    """Counts, the top 100, point lookups and random WHERE clauses of one
    game, against the local table."""
    same(f"SELECT count(*) FROM lb WHERE game_id = '{game}'",
         f"SELECT count(*) FROM local_lb WHERE game_id = '{game}'")
    same(f"""SELECT player_id, score FROM lb WHERE game_id = '{game}'
              ORDER BY score DESC, player_id DESC LIMIT 100""",
         f"""SELECT player_id, score FROM local_lb WHERE game_id = '{game}'
              ORDER BY score DESC, player_id DESC LIMIT 100""", ordered=True)
    players = [r[0] for r in rows(f"SELECT player_id FROM local_lb WHERE game_id = '{game}'")]
    for player in rng.sample(players, min(checks, len(players))):
        same(f"SELECT score FROM lb WHERE game_id = '{game}' AND player_id = '{player}'",
             f"SELECT score FROM local_lb WHERE game_id = '{game}' AND player_id = '{player}'")
    for _ in range(checks):
        where = random_where()
        same(f"SELECT player_id, score FROM lb WHERE game_id = '{game}' AND {where}",
             f"SELECT player_id, score FROM local_lb WHERE game_id = '{game}' AND {where}")


def compare_all():
    """compare_game for both games, and the whole table's count."""
    for game in ("g0", "g1"):
        compare_game(game)
    same("SELECT count(*) FROM lb", "SELECT count(*) FROM local_lb")


@runner.test
def test_grow_and_shrink_stay_exact():
    compare_all()
    run("ALTER FOREIGN TABLE lb OPTIONS (SET shards '20')")
    compare_all()
    # updates find rows of the earlier layout (and move them), deletes too
    run("""UPDATE lb SET score = score + 1 WHERE game_id = 'g0' AND player_id < 'p00040';
           UPDATE local_lb SET score = score + 1 WHERE game_id = 'g0' AND player_id < 'p00040';
           DELETE FROM lb WHERE game_id = 'g1' AND player_id BETWEEN 'p00041' AND 'p00061';
           DELETE FROM local_lb WHERE game_id = 'g1' AND player_id BETWEEN 'p00041' AND 'p00061';""")
    compare_all()
    run("ALTER FOREIGN TABLE lb OPTIONS (SET shards '5')")
    compare_all()
    history = rows("""SELECT option_value FROM pg_options_to_table(
                        (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'lb'::regclass))
                       WHERE option_name = 'layout_history'""")
    assert '"shards":"20"' in history[0][0] and '"shards":"10"' in history[0][0], history


def insert_statement(existing, fresh):
    """A random INSERT of rows some of which the table has (the rows in
    existing, mostly of earlier layouts), with {table} for the table: a
    row alone, or several under ON CONFLICT DO NOTHING (a batch)."""
    def row():
        if rng.random() < 0.7:
            return rng.choice(existing)
        player = f"n{next(fresh):05d}"
        return (rng.choice(("g0", "g1")), player, rng.randrange(100000))
    if rng.random() < 0.4:
        game, player, score = row()
        return f"INSERT INTO {{table}} VALUES ('{game}', '{player}', {score})"
    values = ", ".join(f"('{g}', '{p}', {s})" for g, p, s in
                       dict.fromkeys(row() for _ in range(rng.randrange(2, 12))))
    if rng.random() < 0.5:
        return f"INSERT INTO {{table}} VALUES {values} ON CONFLICT DO NOTHING"
    return (f"INSERT INTO {{table}} SELECT * FROM (VALUES {values}) v "
            f"ON CONFLICT DO NOTHING")


@runner.test
def test_conditional_inserts_of_rows_in_earlier_layouts():
    # rows stored under a key the newest layout (5 shards) does not give
    newest = {}
    for item in bed.stored_items(client, state["table"]):
        game, player = item["game_id"]["S"], item["player_id"]["S"]
        row = (game, player, int(item["score"]["N"]))
        newest[row] = item["pk"]["S"] == f"{game}#{bed.fnv1a_32(player.encode()) % 5}"
    earlier = [row for row, at_newest in newest.items() if not at_newest]
    existing = earlier + rng.sample(sorted(newest), 20)
    assert len(earlier) > 100, len(earlier)
    run("""CREATE TABLE local_keyed (game_id text, player_id text, score bigint,
                                     PRIMARY KEY (game_id, player_id, score));
           INSERT INTO local_keyed SELECT * FROM local_lb;""")
    foreign = bed.Session(DATABASE)
    local = bed.Session(DATABASE)
    fresh = itertools.count()
    outcomes = {}
    try:
        for session in (foreign, local):
            session.run("\\set VERBOSITY sqlstate\nSELECT 1")
        for _ in range(60):
            statement = insert_statement(existing, fresh)
            got = foreign.run(statement.format(table="lb"))
            want = local.run(statement.format(table="local_keyed"))
            assert got == want, f"{statement}\n got {got}\nwant {want}"
            outcome = "refused" if want else "done"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    finally:
        foreign.close()
        local.close()
    print(f"   {len(earlier)} rows in earlier layouts; statements: {outcomes}")
    assert outcomes.get("refused", 0) > 5, outcomes
    run("""TRUNCATE local_lb; INSERT INTO local_lb SELECT * FROM local_keyed;
           DROP TABLE local_keyed;""")
    compare_all()
    # no row stored twice
    local_count = int(rows("SELECT count(*) FROM local_lb")[0][0])
    stored = len(bed.stored_items(client, state["table"]))
    assert stored == local_count, (stored, local_count)


def writer(number, inserted, errors):
    """A session inserting rows into game g1 while items move."""
    session = bed.Session(DATABASE)
    try:
        for i in range(WRITES_EACH):
            player = f"w{number}_{i:03d}"
            score = rng.randrange(100000)
            lines = session.run(f"INSERT INTO lb VALUES ('g1', '{player}', {score})")
            if any("ERROR" in line for line in lines):
                errors.append(lines)
            else:
                inserted.append(("g1", player, score))
    finally:
        session.close()


def reader(stop, errors):
    """A session comparing reads of game g0 with the local table until told
    to stop: every row exactly once while its items move."""
    want_count = rows("SELECT count(*) FROM local_lb WHERE game_id = 'g0'")[0][0]
    want_rows = sorted(rows("SELECT player_id, score FROM local_lb WHERE game_id = 'g0'"))
    want_ordered = rows("""SELECT player_id, score FROM local_lb WHERE game_id = 'g0'
                            ORDER BY score DESC, player_id DESC""")
    session = bed.Session(DATABASE, field_separator="|")
    try:
        while not stop.is_set():
            count = session.run("SELECT count(*) FROM lb WHERE game_id = 'g0'")
            if count != [want_count]:
                errors.append(("count", count, want_count))
            got = sorted(line.split("|") for line in
                         session.run("SELECT player_id, score FROM lb WHERE game_id = 'g0'"))
            if got != want_rows:
                errors.append(("rows", len(got), len(want_rows)))
            # ordered, merged across the layouts, with and without a LIMIT
            for limit in ("", "LIMIT 50"):
                got = [line.split("|") for line in session.run(
                    f"""SELECT player_id, score FROM lb WHERE game_id = 'g0'
                         ORDER BY score DESC, player_id DESC {limit}""")]
                want = want_ordered[:50] if limit else want_ordered
                if got != want:
                    errors.append(("ordered " + (limit or "read"), len(got), len(want)))
            state["reads"] = state.get("reads", 0) + 4
    finally:
        session.close()


@runner.test
def test_move_beside_writers_readers_and_faults():
    table = state["table"]
    bed.add_fault(kind="status", status=500, action="TransactWriteItems", table=table,
                  count=3, skip=10)
    bed.add_fault(kind="status", status=500, when="after", action="TransactWriteItems",
                  table=table, count=3, skip=40)
    bed.add_fault(kind="throttle", action="Scan", table=table, count=2)
    bed.add_fault(kind="throttle", action="TransactWriteItems", table=table, count=4, skip=80)
    inserted, write_errors, read_errors, results = [], [], [], []
    stop = threading.Event()
    threads = [threading.Thread(target=writer, args=(n, inserted, write_errors))
               for n in range(WRITERS)]
    threads.append(threading.Thread(target=reader, args=(stop, read_errors)))
    for thread in threads:
        thread.start()
    mover = bed.Session(DATABASE, field_separator="|")
    try:
        # one game first, then every key, until nothing remains
        results.append(mover.run("""SELECT moved, remaining
                                      FROM shard_fdw_reshard('lb', '{"game_id": "g0"}')"""))
        for _ in range(5):
            lines = mover.run("SELECT moved, remaining FROM shard_fdw_reshard('lb')")
            results.append(lines)
            if lines and lines[-1] == "0|0":
                break
    finally:
        mover.close()
        for thread in threads[:-1]:
            thread.join()
        stop.set()
        threads[-1].join()
    print(f"   reshard runs: {results}; reads compared during the move: {state.get('reads', 0)}")
    left = bed.proxy("GET", "/faults")
    assert left == [], f"faults that did not fire: {left}"
    assert not write_errors, write_errors
    assert not read_errors, read_errors[:5]
    assert len(inserted) == WRITERS * WRITES_EACH
    moved = sum(int(lines[-1].split("|")[0]) for lines in results if "|" in lines[-1])
    assert moved > 0, results
    assert results[-1][-1] == "0|0", results
    assert any("holds no item any more" in line for lines in results for line in lines), results
    values = ", ".join(f"('{g}', '{p}', {s})" for g, p, s in inserted)
    run(f"INSERT INTO local_lb VALUES {values}")
    compare_all()
    # no layout left in the history, and no row stored twice
    assert rows("""SELECT count(*) FROM pg_options_to_table(
                     (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'lb'::regclass))
                    WHERE option_name = 'layout_history'""") == [["0"]]
    items = bed.stored_items(client, state["table"])
    local_count = int(rows("SELECT count(*) FROM local_lb")[0][0])
    assert len(items) == local_count, (len(items), local_count)
    # every item under the key the newest layout gives: fnv1a_32 mod 5
    for item in items:
        game = item["game_id"]["S"]
        player = item["player_id"]["S"]
        shard = bed.fnv1a_32(player.encode()) % 5
        assert item["pk"]["S"] == f"{game}#{shard}", item
        assert item["sk"]["S"] == f"{int(item['score']['N']):020d}#{player}", item
    print(f"   {moved} items moved; {len(items)} items, each at its newest key")


@runner.test
def test_move_keeps_to_the_write_budget():
    rate = 60
    run(f"""ALTER FOREIGN TABLE lb OPTIONS (SET shards '7',
                                           ADD max_write_units_per_second '{rate}')""")
    compare_all()
    session = bed.Session(DATABASE, field_separator="|")
    try:
        lines = session.run("SELECT moved, remaining FROM shard_fdw_reshard('lb')")
        seconds = session.seconds
    finally:
        session.close()
    moved, remaining = (int(v) for v in lines[-1].split("|"))
    assert remaining == 0 and moved > 100, lines
    # a move is a TransactWriteItems: twice the write units of its item
    floor = moved * 2 / rate
    print(f"   {moved} items moved in {seconds:.1f} s under {rate} WCU/s "
          f"(at least {floor:.1f} s of units)")
    assert seconds >= 0.8 * floor, (seconds, floor)
    compare_all()


MV_ROWS = 400
MV_PAD = 25000


def mv_key(player, shards):
    """The partition key table mv gives a player under a shard count."""
    return f"g#{bed.fnv1a_32(player.encode()) % shards}"


def big_table(name, count):
    """Foreign table name over a new DynamoDB table (state["mv_table"]) of
    count rows of big items in game 'g', written with 4 shards, then
    declared with 8, and the same rows as a dict of player to score."""
    table = bed.new_table(client, tables, f"reshard_{name}", "pk", "sk")
    state["mv_table"] = table
    run(f"""CREATE FOREIGN TABLE {name} (game_id text NOT NULL, player_id text NOT NULL,
                                       score bigint NOT NULL, pad text)
              SERVER ddb OPTIONS (table '{table}',
                partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
                sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
                shards '4', shard_strategy 'calculated', shard_by 'player_id',
                shard_hash 'fnv1a_32');
            INSERT INTO {name} SELECT 'g', '{name[0]}' || lpad(i::text, 4, '0'),
                                      (i * 7919) % 100000, repeat('x', {MV_PAD})
              FROM generate_series(0, {count - 1}) i;
            ALTER FOREIGN TABLE {name} OPTIONS (SET shards '8');""")
    return {f"{name[0]}{i:04d}": (i * 7919) % 100000 for i in range(count)}


def move_with_boto3(rows_to_move):
    """Move the items of rows (player, score) from mv's 4-shard layout to
    its 8-shard one as shard_fdw_reshard does: one TransactWriteItems that
    deletes the old item and puts it under its new key."""
    table = state["mv_table"]
    for player, score in rows_to_move:
        sk = {"S": f"{score:020d}#{player}"}
        old = {"pk": {"S": mv_key(player, 4)}, "sk": sk}
        item = client.get_item(TableName=table, Key=old, ConsistentRead=True)["Item"]
        item["pk"] = {"S": mv_key(player, 8)}
        client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": table, "Key": old,
                        "ConditionExpression": "attribute_exists(pk)"}},
            {"Put": {"TableName": table, "Item": item,
                     "ConditionExpression": "attribute_not_exists(pk)"}}])


@runner.test
def test_ordered_reads_see_rows_moved_while_they_run():
    # big items, so that a shard takes several 1 MB pages
    local = big_table("mv", MV_ROWS)
    # the rows still in the 4-shard layout (those whose shard number stays
    # the same are where the 8-shard layout puts them)
    waiting = sorted((score, player) for player, score in local.items()
                     if mv_key(player, 4) != mv_key(player, 8))
    session = bed.Session(DATABASE, field_separator="|")
    rounds, failures = [], []
    try:
        # a LIMIT read stays bounded: pages of its page Limit, not whole shards
        for limit in ("LIMIT 20", ""):
            plan = session.run(f"""EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
                                    SELECT player_id, score FROM mv WHERE game_id = 'g'
                                     ORDER BY score, player_id {limit}""")
            scanned = next(int(line.split(":")[1]) for line in plan if "Items Scanned" in line)
            requests = next(int(line.split(":")[1]) for line in plan
                            if "DynamoDB Requests" in line)
            print(f"   {limit or 'no LIMIT'} over 4 + 8 shards: {requests} requests, "
                  f"{scanned} items scanned")
            if limit:
                assert scanned < MV_ROWS / 2, plan
        for order, limit in (("", ""), ("DESC", ""), ("", "LIMIT 150"),
                             ("DESC", "LIMIT 150"), ("", "LIMIT 300"), ("DESC", "")):
            want = sorted(((s, p) for p, s in local.items()), reverse=order == "DESC")
            if limit:
                want = want[:int(limit.split()[1])]
            sql = (f"SELECT player_id, score FROM mv WHERE game_id = 'g' "
                   f"ORDER BY score {order}, player_id {order} {limit}")
            plan = "\n".join(session.run(f"EXPLAIN (COSTS OFF) {sql}"))
            assert "Sort" not in plan and "Merge: sk" in plan, plan
            # the first rows read every shard's first page; then rows the
            # earlier layout's pages have not reached move, past the first
            # ones in the read's order
            got = session.run(f"BEGIN; DECLARE c CURSOR FOR {sql}; FETCH 5 FROM c")
            ahead = [r for r in waiting if (r > want[4] if order == "" else r < want[4])]
            ahead = ahead[len(ahead) // 3:] if order == "" else ahead[:2 * len(ahead) // 3]
            chosen = rng.sample(ahead, min(25, len(ahead)))
            move_with_boto3([(p, s) for s, p in chosen])
            waiting = [r for r in waiting if r not in chosen]
            got += session.run("FETCH ALL FROM c; COMMIT")
            got = [(int(line.split("|")[1]), line.split("|")[0]) for line in got]
            rounds.append((order or "ASC", limit or "no LIMIT", len(chosen)))
            if got != want:
                failures.append(f"{sql}: {len(got)} rows, want {len(want)}; missing "
                                f"{sorted(set(want) - set(got))[:3]}, moved {len(chosen)}")
    finally:
        session.close()
    print(f"   reads (order, limit, rows moved during the read): {rounds}")
    assert not failures, "\n".join(failures)


SC_ROWS = 480


def scan_order(table):
    """The partition keys of table in the order a one-segment Scan meets
    them (DynamoDB Local orders a Scan by a hash of the partition key)."""
    order = []
    pages = client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True,
                                                 ProjectionExpression="pk")
    for page in pages:
        for item in page["Items"]:
            if item["pk"]["S"] not in order:
                order.append(item["pk"]["S"])
    return order


@runner.test
def test_whole_table_scan_sees_rows_moved_while_it_runs():
    # big items: a partition takes several 1 MB pages; one segment, so
    # that the Scan meets the partitions in an order known beforehand
    probe = bed.new_table(client, tables, "reshard_probe", "pk", "sk")
    for k in range(8):
        client.put_item(TableName=probe, Item={"pk": {"S": f"g#{k}"}, "sk": {"S": "-"}})
    order = scan_order(probe)
    local = big_table("sc", SC_ROWS)
    assert [k for k in order if int(k[2:]) < 4] == scan_order(state["mv_table"])
    # an earlier partition g#k whose rows move to g#(k + 4), met before it
    old = next(f"g#{k}" for k in range(4) if order.index(f"g#{k + 4}") < order.index(f"g#{k}"))
    new = f"g#{int(old[2:]) + 4}"
    # the first earlier partition after the new one: once the Scan returns
    # its first row, it has passed the new partition, not the old one (a
    # page and the next one fetched ahead hold fewer rows than a partition)
    after = next(k for k in order[order.index(new):] if int(k[2:]) < 4)
    assert after != old or len([p for p in local if mv_key(p, 4) == old]) > 90
    moving = sorted((s, p) for p, s in local.items()
                    if mv_key(p, 4) == old and mv_key(p, 8) == new)[-10:]
    sql = "SELECT player_id, score FROM sc"
    run("ALTER SERVER ddb OPTIONS (ADD max_concurrency '1')")
    session = bed.Session(DATABASE, field_separator="|")
    try:
        plan = "\n".join(session.run(f"EXPLAIN (COSTS OFF) {sql}"))
        assert "Scan Passes: 2 (" in plan, plan
        got = session.run(f"BEGIN; DECLARE c CURSOR FOR {sql}")
        while not any(mv_key(line.split("|")[0], 4) == after for line in got):
            got += session.run("FETCH 1 FROM c")
        move_with_boto3([(p, s) for s, p in moving])
        got += session.run("FETCH ALL FROM c; COMMIT")
        plan = session.run(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {sql}")
    finally:
        session.close()
        run("ALTER SERVER ddb OPTIONS (DROP max_concurrency)")
    got = [(line.split("|")[0], int(line.split("|")[1])) for line in got]
    want = sorted(local.items())
    print(f"   {len(moving)} rows moved from {old} to {new} during a Scan met {after} "
          f"first; {len(got)} rows read, {len(want)} stored")
    assert "Scan Passes Read: 2" in "\n".join(plan), plan
    missing = sorted(set(want) - set(got))
    assert not missing and len(got) == len(set(got)), \
        f"missing {missing[:3]} ({len(missing)}), {len(got) - len(set(got))} twice"
    assert sorted(got) == want


if __name__ == "__main__":
    runner.main(set_up, tear_down)
