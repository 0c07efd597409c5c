#!/usr/bin/python3
"""Writes whose answers are lost: no crash, no row miscounted.

The proxy applies a write and then resets the connection instead of
answering (or answers with a bad CRC, or cuts the answer short), at a
rate, on kept-alive connections that the statements reuse.  Over the
leaderboard hashed on player_id (10 shards, insert mode):

* COPY of 2,000 rows, the statement that killed the backend when a
  kept-alive connection was found closed and the attempt's answer was
  started afresh in COPY's per-row memory;
* INSERT ... ON CONFLICT DO NOTHING of rows half of which are stored
  already, identical: the count is the rows DynamoDB did not hold before,
  though a retry of a put whose answer was lost finds the key taken;
* a plain INSERT of a row stored identically, its answer lost: still a
  unique violation, not taken for the put's own earlier attempt;
* UPDATE of a column that is not a key on an upsert-mode table, and
  DELETE, under the same faults;
* UPDATE moving every row of a game to a new sort key, its moves in flight
  together, with RETURNING, under the same faults, every item keeping
  the attributes no column maps;
* a statement that fails partway (an INSERT meeting a stored key, an
  UPDATE moving a row onto one): what its error says was written, or may
  have been, is what DynamoDB holds.

Each statement runs in a session kept open (its connections kept alive);
the backend must survive every one, and its outcome is checked against
DynamoDB Local itself.  SHARD_FDW_TEST_SEED sets the seed of the faults.
Ends with "N passed, N failed".
"""

import os
import random
import re
import shutil
import tempfile

import bed

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "20261128"))
rng = random.Random(SEED)
DATABASE = bed.unique_name("lost")
sql = bed.in_database(DATABASE)
direct = bed.ddb(direct=True)
tables = []
SHARDS = 10
SCRATCH = tempfile.mkdtemp(prefix="shard_fdw_lost_")
PROGRESS = re.compile(r"(\d+) rows? of this statement (?:written|deleted)"
                      r"(?:, and up to (\d+) more may have been)?")


def leaderboard(name, mode="insert"):
    """A foreign table over a new DynamoDB table with the leaderboard
    article's keys; returns the DynamoDB table's name."""
    table = bed.new_table(direct, tables, "lost", "pk", "sk")
    sql(f"""CREATE FOREIGN TABLE {name} (game_id text NOT NULL, player_id text NOT NULL,
              score bigint NOT NULL, note text) SERVER ddb
              OPTIONS (table '{table}', partition_key 'pk',
                partition_key_format '{{game_id}}#{{shard}}', sort_key 'sk',
                sort_key_format '{{score:020}}#{{player_id}}', shards '{SHARDS}',
                shard_strategy 'calculated', shard_by 'player_id',
                shard_hash 'fnv1a_32', insert_mode '{mode}')""")
    return table


def stored(table):
    """The items of a DynamoDB table, read straight from DynamoDB Local, by
    (game, player): (score, note)."""
    items = {}
    for page in direct.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        for item in page["Items"]:
            game = item["pk"]["S"].rsplit("#", 1)[0]
            items[(game, item["player_id"]["S"])] = (
                int(item["score"]["N"]), item.get("note", {}).get("S"))
    return items


def faults(kind, action, rate, **extra):
    """Faults on a share (rate) of the requests of action, seeded."""
    bed.clear_faults()
    spec = dict(kind=kind, action=action, rate=rate, count=1_000_000,
                seed=rng.randrange(1 << 30), **extra)
    if kind in ("reset", "status"):
        spec.setdefault("when", "after")
    bed.add_fault(**spec)


def run(session, statement):
    """Run a statement (or a psql meta-command) in session; fails the test if
    the backend is gone.  Returns (the rows it processed, None after an
    error; the error line or None; the context line's counts (done, doubt)
    or None)."""
    text = statement if statement.startswith("\\") else statement + ";"
    try:
        lines = session.run(text + "\n\\echo @@rows :ROW_COUNT\n")
    except bed.SessionLost as lost:
        raise AssertionError(f"the backend died running: {statement[:80]}\n{lost}") from None
    error = next((line for line in lines if line.startswith("ERROR:")), None)
    tag = next((int(line.split()[1]) for line in lines if line.startswith("@@rows ")), None)
    tag = None if error else tag
    match = next((PROGRESS.search(line) for line in lines if PROGRESS.search(line)), None)
    progress = (int(match.group(1)), int(match.group(2) or 0)) if match else None
    return tag, error, progress


def under_resets(ftable, action, statement):
    """Run statement in a session of its own, its connection kept alive (a
    read of ftable first), the connection reset after a share of action's
    requests: run()'s (rows, error, progress)."""
    session = bed.Session(DATABASE, patience_s=300)
    try:
        run(session, f"SELECT count(*) FROM {ftable}")
        faults("reset", action, 0.3)
        result = run(session, statement)
        bed.clear_faults()
    finally:
        session.close()
    return result


def rows(count, game="g", start=0):
    """count rows of game: (player, score)."""
    return [(f"p{i:05d}", (i * 7919) % 1_000_003) for i in range(start, start + count)]


def copy_text(table, game, players):
    """A \\copy of players' rows into table: psql reads a file of them and
    sends it as COPY ... FROM STDIN."""
    path = os.path.join(SCRATCH, f"{table}.tsv")
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(f"{game}\t{p}\t{s}\n" for p, s in players)
    return f"\\copy {table} (game_id, player_id, score) FROM '{path}'"


def check_partial(before, after, wanted, progress, what):
    """A failed write statement: DynamoDB holds at least the rows its error
    says were written and at most those plus the ones it says may have
    been, all of them rows the statement wrote."""
    new = {k: v for k, v in after.items() if before.get(k) != v}
    assert set(new) <= set(wanted), f"{what}: items that are not rows of the statement"
    assert progress is not None, f"{what}: the error does not say how far it got"
    done, doubt = progress
    assert done <= len(new) <= done + doubt, (
        f"{what}: DynamoDB holds {len(new)} new rows, the error says {done} "
        f"written and up to {doubt} more")


def set_up():
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql("CREATE EXTENSION shard_fdw;" + bed.server_sql())


@runner.test
def copy_with_lost_answers():
    """COPY of 2,000 rows while a third of the puts are applied and then
    their connection reset: the backend lives, and every row is stored
    once, or the error says how many were."""
    table = leaderboard("lb_copy")
    players = rows(2000)
    tag, error, progress = under_resets("lb_copy", "PutItem",
                                        copy_text("lb_copy", "g", players))
    after = stored(table)
    wanted = {("g", p): (s, None) for p, s in players}
    if error is None:
        assert tag == 2000, tag
        assert after == wanted, "COPY's rows and DynamoDB's items differ"
    else:
        check_partial({}, after, wanted, progress, "COPY")
    assert bed.stats()["faults"].get("reset", 0) > 100, bed.stats()["faults"]


@runner.test
def copy_with_damaged_answers():
    """COPY while a tenth of the puts' answers come with a bad CRC, and a
    tenth are cut short, on every action (the reads that check a lost put
    included): every row is stored once."""
    table = leaderboard("lb_damaged")
    players = rows(1000)
    session = bed.Session(DATABASE, patience_s=300)
    try:
        run(session, "SELECT count(*) FROM lb_damaged")
        bed.clear_faults()
        for kind in ("badcrc", "truncate"):
            bed.add_fault(kind=kind, rate=0.1, count=1_000_000, seed=rng.randrange(1 << 30))
        tag, error, progress = run(session, copy_text("lb_damaged", "g", players))
        bed.clear_faults()
    finally:
        session.close()
    assert error is None, error
    assert tag == 1000, tag
    assert stored(table) == {("g", p): (s, None) for p, s in players}


@runner.test
def on_conflict_counts_what_was_new():
    """INSERT ... ON CONFLICT DO NOTHING of 500 rows, 250 of them stored
    already, identical, while a third of the puts lose their answers: the
    count is the 250 new rows, which DynamoDB then holds."""
    table = leaderboard("lb_conflict")
    players = rows(500)
    sql("CREATE TABLE conflict_src (game_id text, player_id text, score bigint);"
        "INSERT INTO conflict_src VALUES " +
        ", ".join(f"('g', '{p}', {s})" for p, s in players) + ";"
        "INSERT INTO lb_conflict (game_id, player_id, score) "
        "  SELECT * FROM conflict_src WHERE player_id < 'p00250'")
    before = stored(table)
    assert len(before) == 250
    tag, error, _ = under_resets("lb_conflict", "PutItem",
                                 "INSERT INTO lb_conflict (game_id, player_id, score) "
                                 "SELECT * FROM conflict_src ON CONFLICT DO NOTHING")
    after = stored(table)
    assert error is None, error
    assert tag == len(after) - len(before), (tag, len(after) - len(before))
    assert len(after) == 500


@runner.test
def duplicate_with_a_lost_answer():
    """A plain INSERT of a row stored identically already, whose put's
    answer is lost (the put fails its condition, and so does its retry):
    a unique violation, each of several times."""
    leaderboard("lb_dup")
    sql("INSERT INTO lb_dup VALUES ('g', 'p1', 10, NULL)")
    session = bed.Session(DATABASE, patience_s=120)
    try:
        run(session, "SELECT count(*) FROM lb_dup")
        for _ in range(5):
            bed.clear_faults()
            bed.add_fault(kind="reset", action="PutItem", when="after")
            _, error, _ = run(session, "INSERT INTO lb_dup VALUES ('g', 'p1', 10, NULL)")
            assert error and "duplicate key value" in error, error
            assert bed.stats()["faults"].get("reset", 0) >= 1
            bed.reset_proxy()
    finally:
        session.close()


@runner.test
def update_and_delete_with_lost_answers():
    """UPDATE of a column that is not a key on an upsert-mode table, then
    DELETE with and without RETURNING, while a third of their writes lose
    their answers: the counts are the rows, and DynamoDB holds the result."""
    table = leaderboard("lb_upd", mode="upsert")
    players = rows(300)
    sql("INSERT INTO lb_upd (game_id, player_id, score) VALUES " +
        ", ".join(f"('g', '{p}', {s})" for p, s in players))
    session = bed.Session(DATABASE, patience_s=300)
    try:
        run(session, "SELECT count(*) FROM lb_upd")
        faults("reset", "UpdateItem", 0.3)
        tag, error, _ = run(session, "UPDATE lb_upd SET note = 'seen' WHERE game_id = 'g'")
        assert error is None, error
        assert tag == 300, tag
        assert all(note == "seen" for _, note in stored(table).values())
        faults("reset", "DeleteItem", 0.3)
        tag, error, _ = run(session, "DELETE FROM lb_upd WHERE game_id = 'g' "
                                     "AND player_id < 'p00100'")
        assert error is None, error
        assert tag == 100, tag
        tag, error, _ = run(session, "DELETE FROM lb_upd WHERE game_id = 'g' "
                                     "AND player_id < 'p00200' RETURNING player_id")
        assert error is None, error
        assert tag == 100, tag
        bed.clear_faults()
    finally:
        session.close()
    assert sorted(p for _, p in stored(table)) == [p for p, _ in players[200:]]


@runner.test
def failed_statement_says_what_may_be_written():
    """An INSERT of many rows that fails on a duplicate while other puts
    are in flight and some of their answers lost: DynamoDB holds at least
    what the error says was written, and at most that plus what it says may
    have been."""
    table = leaderboard("lb_fail")
    players = rows(300)
    player, score = players[150]
    sql(f"INSERT INTO lb_fail VALUES ('g', '{player}', {score}, 'first')")
    before = stored(table)
    values = ", ".join(f"('g', '{p}', {s}, NULL)" for p, s in players)
    _, error, progress = under_resets("lb_fail", "PutItem", f"INSERT INTO lb_fail VALUES {values}")
    assert error and "duplicate key value" in error, error
    wanted = {("g", p): (s, None) for p, s in players}
    check_partial(before, stored(table), wanted, progress, "INSERT")


def stored_rows(table):
    """Every item of a DynamoDB table as (player, score, note)."""
    return {(item["player_id"]["S"], int(item["score"]["N"]), item.get("note", {}).get("S"))
            for page in direct.get_paginator("scan").paginate(TableName=table,
                                                               ConsistentRead=True)
            for item in page["Items"]}


LEADERBOARD_ATTRIBUTES = {"pk", "sk", "game_id", "player_id", "score", "note"}


def unmapped(table):
    """By player, what each item of a DynamoDB table holds that no column of
    the leaderboard maps, and no key."""
    return {item["player_id"]["S"]: {a: v for a, v in item.items()
                                     if a not in LEADERBOARD_ATTRIBUTES}
            for page in direct.get_paginator("scan").paginate(TableName=table,
                                                               ConsistentRead=True)
            for item in page["Items"]}


def give_unmapped(table):
    """Give every item of a DynamoDB table attributes another application
    keeps beside the leaderboard's columns: a TTL, a string, a map."""
    for page in direct.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        for item in page["Items"]:
            player = item["player_id"]["S"]
            item.update(expires={"N": "4102444800"}, app={"S": f"kept by {player}"},
                        doc={"M": {"n": {"N": "1.50"}, "l": {"L": [{"S": player}]}}})
            direct.put_item(TableName=table, Item=item)


@runner.test
def bulk_move_with_lost_answers():
    """UPDATE moving 300 rows to a new sort key, a TransactWriteItems each,
    their moves in flight together and a third of their answers lost,
    with RETURNING: the count and the rows returned are the 300 rows as
    moved, once each, and DynamoDB holds them there, each keeping the
    attributes no column maps."""
    table = leaderboard("lb_bulk")
    players = rows(300)
    sql("INSERT INTO lb_bulk VALUES " + ", ".join(f"('g', '{p}', {s}, NULL)" for p, s in players))
    give_unmapped(table)
    kept = unmapped(table)
    session = bed.Session(DATABASE, patience_s=300)
    try:
        run(session, "SELECT count(*) FROM lb_bulk")
        faults("reset", "TransactWriteItems", 0.3)
        lines = session.run("UPDATE lb_bulk SET score = score + 1 WHERE game_id = 'g' "
                            "RETURNING player_id, score;\n\\echo @@rows :ROW_COUNT\n")
        bed.clear_faults()
    except bed.SessionLost as lost:
        raise AssertionError(f"the backend died: {lost}") from None
    finally:
        session.close()
    moved = {(p, s + 1, None) for p, s in players}
    returned = [tuple(line.split("|")) for line in lines if not line.startswith("@@rows")]
    assert lines[-1] == "@@rows 300", lines[-5:]
    assert sorted(returned) == sorted((p, str(s)) for p, s, _ in moved), returned[:5]
    assert stored_rows(table) == moved
    assert unmapped(table) == kept, "an item lost attributes no column maps"
    assert bed.stats()["faults"].get("reset", 0) > 30, bed.stats()["faults"]


@runner.test
def failed_update_says_what_may_be_written():
    """UPDATE moving 300 rows that fails on one moving onto a stored key
    while other moves are in flight and a third of their answers lost: the
    rows moved are at least what the error says were written, at most that
    plus what it says may have been, and no row is lost."""
    table = leaderboard("lb_move_fail")
    players = rows(300)
    player, score = players[150]
    sql("INSERT INTO lb_move_fail VALUES " +
        ", ".join(f"('g', '{p}', {s}, NULL)" for p, s in players) +
        f", ('g', '{player}', {score + 1}, 'twin')")
    before = stored_rows(table)
    _, error, progress = under_resets("lb_move_fail", "TransactWriteItems",
                                      "UPDATE lb_move_fail SET score = score + 1 "
                                      "WHERE game_id = 'g' AND note IS NULL")
    after = stored_rows(table)
    assert error and "duplicate key value" in error, error
    assert progress is not None, "the error does not say how far it got"
    new = after - before
    assert new == {(p, s + 1, n) for p, s, n in before - after}, "a row was lost or doubled"
    done, doubt = progress
    assert done <= len(new) <= done + doubt, (
        f"{len(new)} rows moved, the error says {done} written and up to {doubt} more")


def tear_down():
    bed.drop_scratch(direct, tables, DATABASE)
    shutil.rmtree(SCRATCH, ignore_errors=True)


if __name__ == "__main__":
    print(f"seed {SEED}")
    runner.main(set_up, tear_down)
