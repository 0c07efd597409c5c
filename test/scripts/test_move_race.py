#!/usr/bin/python3
"""UPDATEs racing shard_fdw_reshard: no change is ever lost.

A leaderboard (the article's templates, calculated fnv1a_32 shards of
player_id, a non-key column hits) is loaded, its shard count changed from
20 to 5, and shard_fdw_reshard moves its items while updater sessions
UPDATE random rows beside it: half move the row (a new score, in the sort
key), half change hits only.  Each UPDATE names one row that exists (no row
is ever deleted), so it must either report that row (RETURNING) or fail
with SQLSTATE 40001 and a message or hint that says to run it again,
which the updater does.  An UPDATE that reports no row has lost its
change.  When the move is done the table goes back to 20 shards and the
items move again, then to 5 random shards (where a row moved meanwhile
has no one key to be sought at) and back, round after round, for
SHARD_FDW_RACE_SECONDS (default 35) seconds.  At the end every row must hold every change reported done,
stored once, as boto3 reads the DynamoDB table.

The random generator's seed is printed first; SHARD_FDW_TEST_SEED sets it.
Prints how many UPDATEs ran, met a move (40001) and lost their change, and
ends with "N passed, N failed".
"""

import os
import random
import re
import threading
import time

import bed

runner, DATABASE, run, client, tables = bed.scratch("move_race")
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "2025"))
SECONDS = float(os.environ.get("SHARD_FDW_RACE_SECONDS", "35"))
rng = random.Random(SEED)
ROWS = 1500
GAMES = 3
UPDATERS = 4
RETRIES = 5
# the layouts the table goes through, round after round: each ALTER's options
LAYOUTS = ("SET shards '5'",
           "SET shards '20'",
           "SET shards '5', SET shard_strategy 'random', DROP shard_by, DROP shard_hash",
           "SET shards '20', SET shard_strategy 'calculated', ADD shard_by 'player_id', "
           "ADD shard_hash 'fnv1a_32'")
ERROR = re.compile(r"ERROR:\s+([0-9A-Z]{5}): (.*)")


def set_up():
    print(f"seed {SEED}; {SECONDS:.0f} s of moves")
    bed.psql(f"CREATE DATABASE {DATABASE}")
    table = bed.new_table(client, tables, "move_race", "pk", "sk")
    run(f"""CREATE EXTENSION shard_fdw;
            {bed.server_sql(direct=True)}
            CREATE FOREIGN TABLE lb (game_id text NOT NULL, player_id text NOT NULL,
                                     score bigint NOT NULL, hits integer NOT NULL)
              SERVER ddb OPTIONS (table '{table}',
                partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
                sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
                shards '20', shard_strategy 'calculated', shard_by 'player_id',
                shard_hash 'fnv1a_32', insert_mode 'upsert');
            INSERT INTO lb SELECT 'g' || (i % {GAMES}), 'p' || lpad(i::text, 5, '0'),
                                  (i * 7919) % 100000, 0
              FROM generate_series(0, {ROWS - 1}) i;""")
    state["table"] = table


def tear_down():
    bed.drop_scratch(client, tables, DATABASE)


state = {}


def expected_rows():
    """The rows as loaded: (game, player) to [score, hits]."""
    return {(f"g{i % GAMES}", f"p{i:05d}"): [(i * 7919) % 100000, 0] for i in range(ROWS)}


def updater(number, rows, lock, stop, tally):
    """A session running UPDATEs of random rows until told to stop; each
    reported row's change is applied to rows, a 40001 is run again."""
    mine = random.Random(SEED * 100 + number)
    session = bed.Session(DATABASE, field_separator="|")
    # each row is updated by one session, so that its expected state is known
    keys = sorted(k for k in rows if int(k[1][1:]) % UPDATERS == number)
    session.run("\\set VERBOSITY verbose\nSELECT 1")
    try:
        while not stop.is_set():
            game, player = mine.choice(keys)
            with lock:
                score, hits = rows[(game, player)]
            if mine.random() < 0.5:
                change = ("score = score + 1", (1, 0))
            else:
                change = ("hits = hits + 1", (0, 1))
            statement = (f"UPDATE lb SET {change[0]} WHERE game_id = '{game}' "
                         f"AND player_id = '{player}' RETURNING score, hits")
            for attempt in range(RETRIES + 1):
                lines = session.run(statement)
                tally["statements"] += 1
                error = next((ERROR.search(line) for line in lines if ERROR.search(line)), None)
                if error is None:
                    break
                text = " ".join(lines)
                if error[1] != "40001" or "retr" not in text.lower() and "again" not in text.lower():
                    tally["errors"].append((statement, lines))
                    return
                tally["retried"] += 1
            else:
                tally["errors"].append((statement, "still 40001 after retries"))
                continue
            want = [score + change[1][0], hits + change[1][1]]
            if lines == [f"{want[0]}|{want[1]}"]:
                with lock:
                    rows[(game, player)] = want
                tally["done"] += 1
            elif lines == []:
                tally["lost"].append(statement)
            else:
                tally["errors"].append((statement, lines))
                return
    finally:
        session.close()


@runner.test
def test_updates_racing_a_move_lose_nothing():
    rows = expected_rows()
    lock = threading.Lock()
    stop = threading.Event()
    tally = {"statements": 0, "done": 0, "retried": 0, "lost": [], "errors": []}
    threads = [threading.Thread(target=updater, args=(n, rows, lock, stop, tally))
               for n in range(UPDATERS)]
    for thread in threads:
        thread.start()
    mover = bed.Session(DATABASE, field_separator="|")
    rounds = []
    deadline = time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline or not rounds:
            layout = LAYOUTS[len(rounds) % len(LAYOUTS)]
            lines = mover.run(f"ALTER FOREIGN TABLE lb OPTIONS ({layout})")
            assert not any("ERROR" in line for line in lines), lines
            runs = []
            for _ in range(20):
                lines = mover.run("SELECT moved, remaining FROM shard_fdw_reshard('lb')")
                runs.append(lines[-1])
                if lines[-1].endswith("|0"):
                    break
            rounds.append((layout, runs))
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        mover.close()
    moved = sum(int(r.split("|")[0]) for _, runs in rounds for r in runs if "|" in r)
    print(f"   {len(rounds)} moves ({moved} items moved); {tally['statements']} UPDATEs run, "
          f"{tally['done']} done, {tally['retried']} met a move (40001) and ran again, "
          f"{len(tally['lost'])} lost their change")
    assert not tally["errors"], tally["errors"][:3]
    assert not tally["lost"], f"{len(tally['lost'])} UPDATEs found no row: {tally['lost'][:3]}"
    assert all(runs[-1].endswith("|0") for _, runs in rounds), rounds
    # every change reported done is stored, each row once
    items = bed.stored_items(client, state["table"])
    got = {(i["game_id"]["S"], i["player_id"]["S"]): [int(i["score"]["N"]), int(i["hits"]["N"])]
           for i in items}
    assert len(items) == len(rows), (len(items), len(rows))
    wrong = [(k, got.get(k), v) for k, v in rows.items() if got.get(k) != v]
    assert not wrong, f"{len(wrong)} rows differ: {wrong[:3]}"


if __name__ == "__main__":
    runner.main(set_up, tear_down)
