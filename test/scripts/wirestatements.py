"""The statements test_wire.py runs under wire faults, and their checks.

GENERATORS maps each statement kind to a generator: given a front's
server name, it draws a statement of that kind at random (the rows it
writes, the keys it targets, a RETURNING clause or not) and returns it as a
Statement whose check judges the outcome (Outcome, the statement's psql
output) against the truth, DynamoDB's content read with boto3 straight from
DynamoDB Local (read_truth) before the statement and again after it.

Every random draw, here and in test_wire.py, comes from rng, seeded with
SHARD_FDW_TEST_SEED: a seed gives the same statements.  truth, state, tally
and claims are shared with test_wire.py, whose set-up fills them (connect,
the tables in state["tables"], read_truth) and whose runner runs the
statements.
"""

import collections
import csv
import json
import os
import random
import re

import bed
from bed import sql_literal

SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "4242"))
DATABASE = bed.unique_name("wire")
SEP = "\x1f"
ROW = "R"
LB_SHARDS = 6
# "N rows of this statement written[, and up to M more may have been ...]"
WRITTEN = re.compile(r"(\d+) rows? of this statement (written|deleted)"
                     r"(?:, and up to (\d+) more may have been)?")
SQLSTATE = re.compile(r"^ERROR:  ([0-9A-Z]{5}): (.+)")
UNCLEAN = ("server closed the connection", "connection to server was lost",
           "no connection to the server", "SSL SYSCALL", "FATAL:", "PANIC:",
           "terminating connection", "could not receive data from server")

rng = random.Random(SEED)
client = None
truth = {}
tally = collections.Counter()
claims = []
state = {}


def connect():
    """The boto3 client straight on DynamoDB Local that reads the truths."""
    global client
    client = bed.ddb(direct=True)
    return client


# ---------------------------------------------------------------- helpers


def sql(text, database=DATABASE):
    """Run SQL in the test's database; fails on any error."""
    return bed.in_database(database)(text)


def shard_of(player, shards):
    """The shard of a player under the leaderboard's hash."""
    return bed.fnv1a_32(player.encode()) % shards


def lb_key(game, player, score, shards):
    """The DynamoDB key of a leaderboard row."""
    return f"{game}#{shard_of(player, shards)}", f"{score:020}#{player}"


def plain(value):
    """An AttributeValue as a Python value."""
    (tag, inner), = value.items()
    if tag == "N":
        return int(inner) if re.fullmatch(r"-?\d+", inner) else float(inner)
    if tag == "NULL":
        return None
    return inner


def scan_items(table):
    """Every item of a DynamoDB table (strongly consistent), plain values."""
    items, start = [], None
    while True:
        kwargs = {"TableName": table, "ConsistentRead": True}
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = client.scan(**kwargs)
        items += [{k: plain(v) for k, v in item.items()} for item in page["Items"]]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


class Board:
    """A leaderboard table's truth: rows (game, player, score) -> name, and
    the items not where the key templates put them (layouts: the shard
    counts an item may be under)."""

    def __init__(self, table, layouts):
        self.rows = {}
        self.misplaced = []
        self.twice = []
        self.items = scan_items(table)
        for item in self.items:
            try:
                row = (item["game_id"], item["player_id"], int(item["score"]))
            except KeyError:
                self.misplaced.append(item)
                continue
            if row in self.rows:
                self.twice.append(row)
            self.rows[row] = item.get("name")
            if not any((item["pk"], item["sk"]) == lb_key(*row, n) for n in layouts):
                self.misplaced.append(item)

    def problems(self):
        """What no statement may leave: misplaced items, rows stored twice."""
        out = []
        if self.misplaced:
            out.append(f"items not under their key: {self.misplaced[:3]}")
        if self.twice:
            out.append(f"rows stored twice: {self.twice[:3]}")
        return out


def read_truth(name):
    """Read one table's truth into truth[name]."""
    if name == "lbw":
        truth[name] = Board(state["tables"]["lbw"], [LB_SHARDS])
    elif name == "lbr":
        truth[name] = Board(state["tables"]["lbr"], [LB_SHARDS])
    elif name.startswith("rs_"):
        truth[name] = Board(state["tables"][name], state["rs_layouts"][name])
    elif name == "kv":
        truth[name] = {i["id"]: (i.get("v"), i.get("note")) for i in scan_items(state["tables"]["kv"])}
    elif name == "meta":
        truth[name] = {i["grp"]: i for i in scan_items(state["tables"]["meta"])}
    return truth[name]


# ------------------------------------------------------------- outcomes


class Outcome:
    """A statement's output: its rows (lines starting with ROW), command
    tags, errors (SQLSTATE, message), the written/deleted claim, and any
    sign of an unclean end."""

    def __init__(self, lines):
        self.lines = lines
        self.rows = [tuple(l.split(SEP)[1:]) for l in lines if l.split(SEP)[0] == ROW]
        self.tags = [l for l in lines if re.fullmatch(r"(INSERT \d+ \d+|UPDATE \d+|DELETE \d+|COPY \d+)", l)]
        self.errors = [SQLSTATE.match(l).groups() for l in lines if SQLSTATE.match(l)]
        self.bare_errors = [l for l in lines if l.startswith("ERROR:") and not SQLSTATE.match(l)]
        self.unclean = [l for l in lines if any(u in l for u in UNCLEAN)]
        claim = [WRITTEN.search(l) for l in lines if WRITTEN.search(l)]
        self.claimed = int(claim[0].group(1)) if claim else None
        self.maybe = int(claim[0].group(3) or 0) if claim else 0

    @property
    def error(self):
        """The first error's (SQLSTATE, message), or None."""
        return self.errors[0] if self.errors else None

    def count(self):
        """The count of the command tag (INSERT's second number)."""
        return int(self.tags[-1].split()[-1]) if self.tags else None

    def text(self):
        return "\n".join(self.lines[:12])


class Statement:
    """A statement to run: its kind, SQL, the truths it may change, and
    check(outcome) -> list of problems, run once those truths are read
    again; prepare() and finish() run with the faults off."""

    def __init__(self, kind, text, check, touches=(), prepare=None, finish=None,
                 expect_error=None):
        self.kind = kind
        self.text = text
        self.check = check
        self.touches = touches
        self.prepare = prepare
        self.finish = finish
        self.expect_error = expect_error


def rows_equal(got, want, ordered=False):
    """Problems when the rows differ."""
    got = list(got) if ordered else sorted(got)
    want = list(want) if ordered else sorted(want)
    if got == want:
        return []
    missing = [r for r in want if r not in got][:3]
    extra = [r for r in got if r not in want][:3]
    return [f"rows differ: {len(got)} got, {len(want)} wanted; missing {missing}, "
            f"extra {extra}"]


def text_row(*values):
    """Values as psql prints them."""
    return tuple("" if v is None else str(v) for v in values)


# ------------------------------------------------------------------ reads


def gen_select_topn(srv):
    n = rng.randint(1, 60)
    board = truth["lbr"]
    ranked = sorted(((s, p) for (g, p, s) in board.rows if g == "g1"), reverse=True)[:n]
    want = [text_row(p, s) for s, p in ranked]

    def check(out):
        return [] if out.error else rows_equal(out.rows, want, ordered=True)
    return Statement("select_topn", f"SELECT '{ROW}', player_id, score FROM {srv}_lbr "
                     f"WHERE game_id = 'g1' ORDER BY score DESC LIMIT {n}", check)


def gen_select_scan(srv):
    if rng.random() < 0.5:
        want = [text_row(g, p, s, name) for (g, p, s), name in truth["lbr"].rows.items()]
        text = f"SELECT '{ROW}', game_id, player_id, score, name FROM {srv}_lbr"
    else:
        want = [text_row(k, v, n) for k, (v, n) in truth["kv"].items()]
        text = f"SELECT '{ROW}', id, v, note FROM {srv}_kv"

    def check(out):
        return [] if out.error else rows_equal(out.rows, want)
    return Statement("select_scan", text, check)


def gen_select_point(srv):
    ids = [f"k{rng.randrange(180):03d}" for _ in range(rng.choice((1, 1, 3, 12, 40, 90)))]
    want = [text_row(i, *truth["kv"][i]) for i in set(ids) if i in truth["kv"]]
    where = f"id = '{ids[0]}'" if len(ids) == 1 else \
        "id IN (" + ", ".join(sql_literal(i) for i in ids) + ")"

    def check(out):
        return [] if out.error else rows_equal(out.rows, want)
    return Statement("select_point", f"SELECT '{ROW}', id, v, note FROM {srv}_kv WHERE {where}",
                     check)


def gen_select_join(srv):
    want = [text_row(i, *truth["kv"][i]) for i in state["picks"] if i in truth["kv"]]

    def check(out):
        return [] if out.error else rows_equal(out.rows, want)
    return Statement("select_join", f"SELECT '{ROW}', k.id, k.v, k.note FROM picks p "
                     f"JOIN {srv}_kv k ON k.id = p.id", check)


# ----------------------------------------------------------------- writes


def fresh_rows(count, games=("w0", "w1", "w2", "w3")):
    """count leaderboard rows whose keys the write table has not."""
    out = []
    taken = set(truth["lbw"].rows)
    while len(out) < count:
        row = (rng.choice(games), f"p{rng.randrange(100000):05d}", rng.randrange(1, 10 ** 7))
        if row not in taken:
            taken.add(row)
            out.append(row + (f"n{rng.randrange(10 ** 6)}",))
    return out


def existing_rows(count):
    """Up to count rows of the write table, with their names."""
    rows = sorted(truth["lbw"].rows.items())
    picked = rng.sample(rows, min(count, len(rows)))
    return [key + (name,) for key, name in picked]


def values_sql(rows):
    return ", ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)


def copy_sql(table, rows):
    """COPY ... FROM a file of the rows (csv) that the server reads: psql
    drops what follows inline COPY data on a pipe, the Session's marker."""
    state["copies"] = state.get("copies", 0) + 1
    path = os.path.join(state["work"], f"copy{state['copies']}.csv")
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        for row in rows:
            writer.writerow(["" if v is None else v for v in row])
    os.chmod(path, 0o644)
    return f"COPY {table} FROM '{path}' (FORMAT csv)"


def claim_check(out, statement_rows_written, kind, record=True):
    """Compare an error's written/deleted claim with the truth: a claim
    above the truth, or one whose rows that may have been written do not
    reach it, is a problem (recorded)."""
    claimed = out.claimed or 0      # no claim: nothing written, it says
    if claimed <= statement_rows_written <= claimed + out.maybe:
        return []
    entry = {"claimed": out.claimed, "maybe": out.maybe, "truth": statement_rows_written,
             "kind": kind}
    if record:
        claims.append(entry)
    if claimed > statement_rows_written:
        return [f"error claims {out.claimed} rows but DynamoDB holds {statement_rows_written}"]
    entry["under"] = True
    current = state.get("current", {})
    entry.update(current)
    if record:
        print(f"  written claim below the truth: #{current.get('no')} [{current.get('front')}] "
              f"{kind} says {out.claimed} (+{out.maybe} maybe), DynamoDB holds "
              f"{statement_rows_written}; faults "
              f"{current.get('fired')}\n    sql: {current.get('sql', '')[:160]!r}\n    "
              + "\n    ".join(l for l in out.lines if l.startswith(("ERROR", "DETAIL", "CONTEXT"))))
    return [f"error claims {out.claimed} rows (and up to {out.maybe} more) but DynamoDB "
            f"holds {statement_rows_written}"]


def others_unchanged(pre, post, targets, statement):
    """A problem when a row of pre that is not among the statement's
    targets changed or went in post."""
    for k, v in pre.items():
        if k not in targets and post.get(k, "\0") != v:
            return [f"a row the {statement} does not touch changed or went: "
                    f"{k}: {v!r} -> {post.get(k)!r}"]
    return []


def reported_rows(out, rows, written, kind):
    """The problems of what a statement says of its rows: after success, a
    command tag that does not count rows; after an error, a written claim
    that does not hold written, the rows DynamoDB holds (claim_check)."""
    if out.error is not None:
        return claim_check(out, written, kind)
    if out.count() != rows:
        return [f"command tag {out.tags} for {rows} rows"]
    return []


def insert_check(rows, duplicate_at=None):
    """The check of an insert-mode INSERT or COPY of rows (new keys, but
    the row at duplicate_at, whose key is taken)."""
    pre = dict(truth["lbw"].rows)
    new = [r for i, r in enumerate(rows) if i != duplicate_at]

    def check(out):
        post = truth["lbw"].rows
        problems = []
        changed = {k: v for k, v in post.items() if pre.get(k, "\0") != v}
        gone = [k for k in pre if k not in post]
        if gone:
            problems.append(f"rows removed: {gone[:3]}")
        strays = {k: v for k, v in changed.items() if (k + (v,)) not in new}
        if strays:
            problems.append(f"rows the statement does not have: {list(strays.items())[:3]}")
        written = len([r for r in new if r[:3] in post and post[r[:3]] == r[3]])
        if out.error is None:
            if duplicate_at is not None:
                problems.append("a taken key was inserted without a unique violation")
            if written != len(new):
                problems.append(f"{len(new) - written} rows missing after success")
        return problems + reported_rows(out, len(new), written, "insert")
    return check


def gen_insert_one(srv):
    if rng.random() < 0.2 and truth["lbw"].rows:
        row = existing_rows(1)[0]
        if rng.random() < 0.5:
            row = row[:3] + ("changed",)
        return Statement("insert_one", f"INSERT INTO {srv}_lbw VALUES {values_sql([row])}",
                         insert_check([row], duplicate_at=0), ("lbw",), expect_error="23505")
    row = fresh_rows(1)
    return Statement("insert_one", f"INSERT INTO {srv}_lbw VALUES {values_sql(row)}",
                     insert_check(row), ("lbw",))


def gen_insert_multi(srv):
    rows = fresh_rows(rng.randint(5, 45))
    duplicate_at = None
    if rng.random() < 0.2 and truth["lbw"].rows:
        duplicate_at = rng.randrange(len(rows))
        rows[duplicate_at] = existing_rows(1)[0]
    return Statement("insert_multi", f"INSERT INTO {srv}_lbw VALUES {values_sql(rows)}",
                     insert_check(rows, duplicate_at), ("lbw",),
                     expect_error="23505" if duplicate_at is not None else None)


def gen_copy_insert(srv):
    rows = fresh_rows(rng.randint(10, 60))
    return Statement("copy_insert", copy_sql(f"{srv}_lbw", rows), insert_check(rows), ("lbw",))


def upsert_check(rows):
    """The check of an upsert-mode INSERT or COPY: the last row of a key
    wins; after a failure, each key holds its old value or one of the
    statement's, and the claim counts the rows whose value is there (only
    when no key repeats and every row changes its item)."""
    pre = dict(truth["lbw"].rows)
    final = {}
    for r in rows:
        final[r[:3]] = r[3]
    allowed = collections.defaultdict(set)
    for r in rows:
        allowed[r[:3]].add(r[3])
    countable = len(final) == len(rows) and all(pre.get(k, "\0") != v for k, v in final.items())

    def check(out):
        post = truth["lbw"].rows
        problems = []
        gone = [k for k in pre if k not in post]
        if gone:
            problems.append(f"rows removed: {gone[:3]}")
        for k, v in post.items():
            if pre.get(k, "\0") != v and v not in allowed.get(k, ()):
                problems.append(f"row {k} holds {v!r}, neither its old value nor the statement's")
                break
        if out.error is None:
            wrong = {k: (post.get(k), v) for k, v in final.items() if post.get(k, "\0") != v}
            if wrong:
                problems.append(f"rows not as the last row of their key: {list(wrong.items())[:3]}")
            if out.count() != len(rows):
                problems.append(f"command tag {out.tags} for {len(rows)} rows")
        elif countable:
            written = len([k for k, v in final.items() if post.get(k, "\0") == v])
            problems += claim_check(out, written, "upsert")
        return problems
    return check


def upsert_rows():
    """Rows for an upsert: new keys and taken ones with new names, a key
    twice now and then."""
    rows = fresh_rows(rng.randint(3, 25))
    rows += [r[:3] + (f"u{rng.randrange(10 ** 6)}",) for r in existing_rows(rng.randint(1, 20))]
    rng.shuffle(rows)
    if rng.random() < 0.3:
        twice = rng.choice(rows)
        rows.append(twice[:3] + (f"again{rng.randrange(1000)}",))
    return rows


def gen_copy_upsert(srv):
    rows = upsert_rows()
    return Statement("copy_upsert", copy_sql(f"{srv}_lbwu", rows), upsert_check(rows), ("lbw",))


def gen_upsert_insert(srv):
    rows = upsert_rows()
    return Statement("upsert_insert", f"INSERT INTO {srv}_lbwu VALUES {values_sql(rows)}",
                     upsert_check(rows), ("lbw",))


def gen_on_conflict(srv):
    new = fresh_rows(rng.randint(2, 20))
    same = existing_rows(rng.randint(1, 6))
    different = [r[:3] + ("different",) for r in existing_rows(rng.randint(1, 6))]
    rows = new + same + different
    rng.shuffle(rows)
    table = f"{srv}_lbwu" if rng.random() < 0.3 else f"{srv}_lbw"
    pre = dict(truth["lbw"].rows)
    taken = {r[:3] for r in rows if r[:3] in pre}
    new = [r for r in new if r[:3] not in taken]

    def check(out):
        post = truth["lbw"].rows
        problems = others_unchanged(pre, post, (), "INSERT")
        extra = {k: v for k, v in post.items() if k not in pre and (k + (v,)) not in new}
        if extra:
            problems.append(f"rows the statement does not have: {list(extra.items())[:3]}")
        written = len([r for r in new if post.get(r[:3], "\0") == r[3]])
        if out.error is None:
            if written != len(new):
                problems.append(f"{len(new) - written} new rows missing after success")
            if out.count() != len(new):
                problems.append(f"command tag {out.tags}: {len(new)} rows were new, "
                                f"{len(rows) - len(new)} taken ({len(same)} identical)")
        else:
            problems += claim_check(out, written, "on_conflict")
        return problems
    return Statement("on_conflict", f"INSERT INTO {table} VALUES {values_sql(rows)} "
                     "ON CONFLICT DO NOTHING", check, ("lbw",))


def targets_in_game(count):
    """A game of the write table and up to count of its players."""
    rows = truth["lbw"].rows
    games = sorted({g for g, _, _ in rows})
    if not games:
        return None, []
    game = rng.choice(games)
    players = sorted({p for g, p, _ in rows if g == game})
    return game, rng.sample(players, min(count, len(players)))


def update_check(pre, moved, returning):
    """The check of an UPDATE: moved maps each target row (key) to its new
    (key, name); after a failure each target is old or new, once."""
    def check(out):
        post = truth["lbw"].rows
        problems = others_unchanged(pre, post, moved, "UPDATE")
        done = 0
        for old, (new, name) in moved.items():
            old_there = post.get(old, "\0") == pre[old]
            new_there = post.get(new, "\0") == name
            if old != new and old in post and new in post:
                problems.append(f"row {old} stored both before and after its move")
            elif not (old_there or new_there):
                problems.append(f"row {old} neither old nor updated: {post.get(old)!r} / "
                                f"{post.get(new)!r}")
            done += new_there
        news = {new for new, _ in moved.values()}
        extra = [k for k in post if k not in pre and k not in news]
        if extra:
            problems.append(f"rows the UPDATE cannot have made: {extra[:3]}")
        if out.error is None:
            if done != len(moved):
                problems.append(f"{len(moved) - done} of {len(moved)} rows not updated after success")
            if returning:
                want = [text_row(new[1], new[2], name) for new, name in moved.values()]
                problems += rows_equal(out.rows, want)
        return problems + reported_rows(out, len(moved), done, "update")
    return check


def update_statement(kind, pre, moved, text):
    """The Statement of an UPDATE (text) of the rows in moved, with a
    RETURNING clause now and then, checked by update_check."""
    returning = rng.random() < 0.4
    if returning:
        text = f"{text} RETURNING '{ROW}', player_id, score, name"
    return Statement(kind, text, update_check(pre, moved, returning), ("lbw",))


def gen_update_move(srv):
    game, players = targets_in_game(rng.randint(1, 6))
    pre = dict(truth["lbw"].rows)
    targets = [k for k in pre if k[0] == game and k[1] in players]
    for _ in range(50):
        delta = rng.choice((1, -1)) * rng.randrange(1, 10 ** 5)
        news = [(g, p, s + delta) for g, p, s in targets]
        if all(n[2] > 0 and n not in pre for n in news):
            break
    else:
        return gen_update_plain(srv)
    moved = {k: ((k[0], k[1], k[2] + delta), pre[k]) for k in targets}
    return update_statement(
        "update_move", pre, moved,
        f"UPDATE {srv}_lbw SET score = score + ({delta}) WHERE game_id = {sql_literal(game)} "
        f"AND player_id IN ({', '.join(sql_literal(p) for p in players)})")


def gen_update_plain(srv):
    pre = dict(truth["lbw"].rows)
    game = rng.choice(sorted({g for g, _, _ in pre}))
    scores = sorted(s for g, _, s in pre if g == game)
    bound = scores[min(len(scores) - 1, rng.randrange(1, 15))]
    name = f"upd{rng.randrange(10 ** 6)}"
    targets = [k for k in pre if k[0] == game and k[2] <= bound]
    moved = {k: (k, name) for k in targets}
    return update_statement(
        "update_plain", pre, moved,
        f"UPDATE {srv}_lbw SET name = {sql_literal(name)} WHERE game_id = {sql_literal(game)} "
        f"AND score <= {bound}")


def delete_statement(srv, kind, returning):
    pre = dict(truth["lbw"].rows)
    if rng.random() < 0.5:
        game, players = targets_in_game(rng.randint(1, 8))
        where = (f"game_id = {sql_literal(game)} AND player_id IN "
                 f"({', '.join(sql_literal(p) for p in players)})")
        targets = [k for k in pre if k[0] == game and k[1] in players]
    else:
        game = rng.choice(sorted({g for g, _, _ in pre}))
        scores = sorted(s for g, _, s in pre if g == game)
        low = scores[rng.randrange(len(scores))]
        high = scores[min(len(scores) - 1, scores.index(low) + rng.randrange(0, 10))]
        where = f"game_id = {sql_literal(game)} AND score BETWEEN {low} AND {high}"
        targets = [k for k in pre if k[0] == game and low <= k[2] <= high]
    text = f"DELETE FROM {srv}_lbw WHERE {where}"
    if returning:
        text += f" RETURNING '{ROW}', player_id, score"

    def check(out):
        post = truth["lbw"].rows
        problems = others_unchanged(pre, post, targets, "DELETE")
        extra = [k for k in post if k not in pre]
        if extra:
            problems.append(f"rows appeared: {extra[:3]}")
        deleted = len([k for k in targets if k not in post])
        if out.error is None:
            if deleted != len(targets):
                problems.append(f"{len(targets) - deleted} of {len(targets)} rows left after success")
            if returning:
                problems += rows_equal(out.rows, [text_row(k[1], k[2]) for k in targets])
        return problems + reported_rows(out, len(targets), deleted, kind)
    return Statement(kind, text, check, ("lbw",))


def gen_delete_plain(srv):
    return delete_statement(srv, "delete_plain", False)


def gen_delete_returning(srv):
    return delete_statement(srv, "delete_returning", True)


# ------------------------------------------------------------------ other


def catalog(schema):
    """The foreign tables of a schema: columns, types, options."""
    return bed.query(f"""
        SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               coalesce(array_to_string(a.attfdwoptions, ','), ''),
               array_to_string(ARRAY(SELECT o FROM unnest(f.ftoptions) o ORDER BY o), ',')
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_foreign_table f ON f.ftrelid = c.oid
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = '{schema}' ORDER BY 1, a.attnum""", database=DATABASE)


def gen_import(srv):
    schema = f"imp_{srv}_{tally['import'] + 1}"
    want = state["import_reference"]

    def check(out):
        got = catalog(schema)
        if out.error is None:
            if got != want:
                return [f"imported {got[:4]}, the import without faults gave {want[:4]}"]
            return []
        return [f"a failed import left tables: {got[:3]}"] if got else []
    return Statement("import", f'IMPORT FOREIGN SCHEMA dynamodb LIMIT TO ("{state["tables"]["imp"]}") '
                     f"FROM SERVER {srv} INTO {schema}", check,
                     prepare=lambda: sql(f"CREATE SCHEMA {schema}"),
                     finish=lambda: sql(f"DROP SCHEMA {schema} CASCADE"))


def gen_analyze(srv):
    items = len(truth["lbr"].items)

    def prepare():
        sql(f"UPDATE pg_class SET reltuples = -1 WHERE oid = '{srv}_lbr'::regclass")

    def check(out):
        if out.error:
            return []
        got = float(bed.query(f"SELECT reltuples FROM pg_class WHERE oid = '{srv}_lbr'::regclass",
                              database=DATABASE)[0][0])
        return [] if got == items else [f"reltuples {got} after ANALYZE of {items} items"]
    return Statement("analyze", f"ANALYZE {srv}_lbr", check, prepare=prepare)


def layout_history(table):
    """The layout_history option of a foreign table, or None."""
    rows = bed.query(f"""SELECT option_value FROM pg_options_to_table(
                           (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = '{table}'::regclass))
                         WHERE option_name = 'layout_history'""", database=DATABASE)
    return rows[0][0] if rows else None


def gen_reshard(srv):
    name = f"rs_{srv}"
    old = state["rs_shards"][name]
    new = rng.choice([n for n in range(2, 8) if n != old])
    before = truth[name]
    expected_moved = len([i for i in before.items if (i["pk"], i["sk"]) !=
                          lb_key(i["game_id"], i["player_id"], int(i["score"]), new)])
    pre_rows = dict(before.rows)

    def prepare():
        sql(f"ALTER FOREIGN TABLE {srv}_rs OPTIONS (SET shards '{new}')")
        state["rs_shards"][name] = new
        state["rs_layouts"][name] = [new, old]

    def check(out):
        post = truth[name]
        problems = post.problems()
        if post.rows != pre_rows:
            problems.append("the rows changed: "
                            f"{sorted(set(pre_rows.items()) ^ set(post.rows.items()))[:3]}")
        if out.error is None:
            if out.rows != [text_row(expected_moved, 0)]:
                problems.append(f"shard_fdw_reshard gave {out.rows}, wanted moved "
                                f"{expected_moved}, remaining 0")
            stay = [i for i in post.items
                    if (i["pk"], i["sk"]) != lb_key(i["game_id"], i["player_id"], int(i["score"]), new)]
            if stay:
                problems.append(f"{len(stay)} items not moved after success")
            if layout_history(f"{srv}_rs") not in (None, "[]"):
                problems.append(f"layout_history left: {layout_history(f'{srv}_rs')}")
        return problems

    def finish():
        for _ in range(5):
            rows = bed.query(f"SELECT remaining FROM shard_fdw_reshard('{srv}_rs')", database=DATABASE)
            if rows == [["0"]] and layout_history(f"{srv}_rs") in (None, "[]"):
                break
        state["rs_layouts"][name] = [new]
        read_truth(name)
    return Statement("reshard", f"SELECT '{ROW}', moved, remaining FROM shard_fdw_reshard('{srv}_rs')",
                     check, (name,), prepare=prepare, finish=finish)


def gen_functions(srv):
    choice = rng.randrange(5)
    if choice == 0:
        key = f"k{rng.randrange(180):03d}"
        body = json.dumps({"TableName": state["tables"]["kv"], "Key": {"id": {"S": key}},
                           "ConsistentRead": True})
        want = [text_row(key, *truth["kv"][key])] if key in truth["kv"] else []

        def check(out):
            if out.error:
                return []
            if len(out.rows) != 1:
                return [f"shard_fdw_request gave {len(out.rows)} rows, not one"]
            got = []
            for (doc,) in out.rows:
                item = json.loads(doc).get("Item")
                if item:
                    got.append(text_row(plain(item["id"]), plain(item["v"]), plain(item["note"])))
            return rows_equal(got, want)
        return Statement("functions", f"SELECT '{ROW}', shard_fdw_request('{srv}', 'GetItem', "
                         f"{sql_literal(body)})::text", check)
    if choice == 1:
        counts = collections.Counter(i["pk"] for i in truth["lbr"].items if i["game_id"] == "g1")
        want = [text_row(n, f"g1#{n}", counts.get(f"g1#{n}", 0)) for n in range(LB_SHARDS)]

        def check(out):
            return [] if out.error else rows_equal(out.rows, want)
        return Statement("functions", f"SELECT '{ROW}', shard, partition_key, items FROM "
                         f"shard_fdw_shard_counts('{srv}_lbr', '{{\"game_id\": \"g1\"}}')", check)
    if choice == 2:
        item = truth["meta"]["a"]
        want = [text_row("a", item["number_of_shards"])]

        def check(out):
            return [] if out.error else rows_equal(out.rows, want)
        return Statement("functions", f"SELECT '{ROW}', base_key, number_of_shards FROM "
                         f"shard_fdw_metadata('{srv}_dyn', '{{\"grp\": \"a\"}}')", check)
    if choice == 3:
        game, player, score, name = fresh_rows(1)[0]
        pk, sk = lb_key(game, player, score, LB_SHARDS)
        body = json.dumps({"TableName": state["tables"]["lbw"], "Item": {
            "pk": {"S": pk}, "sk": {"S": sk}, "game_id": {"S": game},
            "player_id": {"S": player}, "score": {"N": str(score)}, "name": {"S": name}}})
        pre = dict(truth["lbw"].rows)

        def check(out):
            post = truth["lbw"].rows
            changed = {k: v for k, v in post.items() if pre.get(k, "\0") != v}
            want = {(game, player, score): name}
            if out.error is None and changed != want:
                return [f"PutItem by shard_fdw_request: changes {changed}, wanted {want}"]
            if out.error is None and [json.loads(doc) for (doc,) in out.rows] != [{}]:
                return [f"PutItem by shard_fdw_request answered {out.rows}, not one {{}}"]
            if out.error and changed not in ({}, want):
                return [f"failed PutItem changed {changed}"]
            return []
        return Statement("functions", f"SELECT '{ROW}', shard_fdw_request('{srv}', 'PutItem', "
                         f"{sql_literal(body)})::text", check, ("lbw",))
    game, player, score = "g1", f"p{rng.randrange(1000):03d}", rng.randrange(10 ** 6)
    pk, sk = lb_key(game, player, score, LB_SHARDS)
    want = [text_row(shard_of(player, LB_SHARDS), pk, sk)]
    values = json.dumps({"game_id": game, "player_id": player, "score": score})

    def check(out):
        return [] if out.error else rows_equal(out.rows, want)
    return Statement("functions", f"SELECT '{ROW}', shard, partition_key, sort_key FROM "
                     f"shard_fdw_key('{srv}_lbw', {sql_literal(values)})", check)


GENERATORS = {
    "select_topn": gen_select_topn,
    "select_scan": gen_select_scan,
    "select_point": gen_select_point,
    "select_join": gen_select_join,
    "insert_one": gen_insert_one,
    "insert_multi": gen_insert_multi,
    "copy_insert": gen_copy_insert,
    "copy_upsert": gen_copy_upsert,
    "upsert_insert": gen_upsert_insert,
    "on_conflict": gen_on_conflict,
    "update_move": gen_update_move,
    "update_plain": gen_update_plain,
    "delete_plain": gen_delete_plain,
    "delete_returning": gen_delete_returning,
    "import": gen_import,
    "analyze": gen_analyze,
    "reshard": gen_reshard,
    "functions": gen_functions,
}
