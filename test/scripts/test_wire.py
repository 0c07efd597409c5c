#!/usr/bin/python3
"""Statements of every kind under byte-level connection faults.

Two wire fronts (test/proxy/wirefront.py) stand before the test bed's
DynamoDB proxy, one plain, one speaking TLS with a certificate made for
this run (the server option ca_file); each is a foreign server of its own
with a short request timeout.  For each statement, the front chosen gets a
random set of one to three fault kinds at random rates (answers split,
rechunked, trickled, doubled, followed by stale copies or extra bytes,
held back past the timeout, reset mid-header or mid-body, closed after the
headers, TLS closed with or without close_notify, kept-alive connections
closed or reset as a request arrives, forwarded or not, connections reset
at accept), and the statement runs in a psql session that lives across
statements, so that its connections are kept alive between them.

The statements: SELECTs (the ordered merge of a sharded leaderboard's
top-N, full Scans, point lookups and IN lists, a join with a local
table), INSERT of one row and of several batches, COPY in insert and in
upsert mode, upsert INSERT, INSERT ... ON CONFLICT DO NOTHING over keys
present (identical and different), UPDATE moving an item (a new score in
the sort key) and UPDATE in place, DELETE plain and with RETURNING,
IMPORT FOREIGN SCHEMA, ANALYZE, shard_fdw_reshard after an ALTER of the
shard count, and the SQL functions that reach DynamoDB.

Each statement must:
* not crash a backend (the server log, SHARD_FDW_PG_LOG, is read after
  each statement for "terminated by signal"; the backtrace of a hung one
  is taken with gdb);
* end within PATIENCE_S;
* either give the right outcome, judged against DynamoDB's content read
  with boto3 straight from DynamoDB Local before and after (rows
  returned, the row count of the command tag, the items stored and under
  which keys), or fail with a clean error: an ERROR line with a SQLSTATE
  and a message, not a lost connection and not an internal error (XX000).
  A statement whose only faults left a whole answer where the client
  reads first (BENIGN in wirefront.py) must not fail at all.
* when it fails, have written only what it may have written (a subset of
  its rows, each item old or new, no row stored twice), and its error's
  claim "N rows of this statement written" (or "deleted"; with ", and up
  to M more may have been", the range N..N+M) must hold the number of its
  rows DynamoDB holds, or the statement fails the test.

Besides the matrix: the front's control API and counters; a self-test of
the checks (each kind's check passes its outcome without faults and fails
it spoiled: a row dropped, a command tag one off, an item written behind
the statement's back, an import's column dropped, reltuples spoiled); and
a deterministic case of the matrix's stale_copy: an answer sent again,
unasked, after a statement's last answer waits on the kept-alive
connection, and the next statement in the session must not take it for
its own (a finding after bytes sent unasked on the session's
connections, by stale_copy, double_copy, double_other or extra_bytes,
says so).  After a finding the session is closed, so that its
connections start afresh.

A last test restarts nothing of the bed: it starts a cluster of its own
(as test_credentials.py does) whose credentials come from the container
endpoint (test/proxy/awsendpoints.py) and live a few seconds, so that
refreshes run in flight beside statements, with a wire front before the
DynamoDB proxy and another before the credential endpoint.

Settings (environment): SHARD_FDW_TEST_SEED (printed first),
SHARD_FDW_WIRE_STATEMENTS (statements of the matrix, default 200),
SHARD_FDW_WIRE_SECONDS (a time budget for the matrix instead: statements
run until it is spent), SHARD_FDW_WIRE_KINDS and SHARD_FDW_WIRE_FAULTS
(comma lists restricting the statement kinds and the fault kinds, to
reproduce a finding), SHARD_FDW_WIRE_TIMEOUT_OPTION (default
request_timeout_ms: the server option bounding one attempt, which the
late answers outlast) and SHARD_FDW_WIRE_TIMEOUT_MS,
SHARD_FDW_WIRE_CREDENTIALS=0 to skip the refresh test.  matrix's faults.  Prints the statements run per kind, the faults injected
per kind and every finding with its seed, statement number and faults;
ends with "N passed, N failed".
"""

import collections
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import bed
from bed import sql_literal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "proxy"))
import wirefront  # noqa: E402

runner = bed.Runner()
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "4242"))
STATEMENTS = int(os.environ.get("SHARD_FDW_WIRE_STATEMENTS", "200"))
SECONDS = float(os.environ.get("SHARD_FDW_WIRE_SECONDS", "0"))
ONLY_KINDS = [k for k in os.environ.get("SHARD_FDW_WIRE_KINDS", "").split(",") if k]
ONLY_FAULTS = [k for k in os.environ.get("SHARD_FDW_WIRE_FAULTS", "").split(",") if k]
TIMEOUT_OPTION = os.environ.get("SHARD_FDW_WIRE_TIMEOUT_OPTION", "request_timeout_ms")
TIMEOUT_MS = int(os.environ.get("SHARD_FDW_WIRE_TIMEOUT_MS", "2000"))
CREDENTIALS = os.environ.get("SHARD_FDW_WIRE_CREDENTIALS", "1") != "0"
CREDENTIALS_QUIET = os.environ.get("SHARD_FDW_WIRE_CREDENTIALS") == "quiet"
# Faults that send bytes past an answer: an answer after them may be out of
# step while the extension takes unasked bytes for the next answer.
UNASKED = {"stale_copy", "double_copy", "double_other", "extra_bytes"}
LATE_MS = TIMEOUT_MS + 1500
PATIENCE_S = float(os.environ.get("SHARD_FDW_WIRE_PATIENCE_S", "90"))
DATABASE = bed.unique_name("wire")
SEP = "\x1f"
ROW = "R"
LB_SHARDS = 6
RS_SHARDS = 3
LEADERBOARD = ("partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}', "
               "sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}', "
               "shards '{shards}', shard_strategy 'calculated', shard_by 'player_id', "
               "shard_hash 'fnv1a_32'")
LB_COLUMNS = "game_id text, player_id text, score bigint, name text"
# "N rows of this statement written[, and up to M more may have been ...]"
WRITTEN = re.compile(r"(\d+) rows? of this statement (written|deleted)"
                     r"(?:, and up to (\d+) more may have been)?")
SQLSTATE = re.compile(r"^ERROR:  ([0-9A-Z]{5}): (.+)")
UNCLEAN = ("server closed the connection", "connection to server was lost",
           "no connection to the server", "SSL SYSCALL", "FATAL:", "PANIC:",
           "terminating connection", "could not receive data from server")
FAULTS_TCP = [k for k in wirefront.KINDS if k not in wirefront.TLS_ONLY]
FAULTS_TLS = list(wirefront.KINDS)

rng = __import__("random").Random(SEED)
client = None
created = []
fronts = {}
sessions = {}
truth = {}
tally = collections.Counter()
fault_tally = collections.Counter()
findings = []
claims = []
state = {}


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


# ------------------------------------------------------------ server log


class ServerLog:
    """The server log from where this script began; crashes found in it."""

    def __init__(self, path):
        self.path = path
        self.offset = os.path.getsize(path) if path and os.path.exists(path) else 0

    def new_text(self):
        """What the log got since the last call."""
        if not self.path or not os.path.exists(self.path):
            return ""
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            data = log.read()
        self.offset += len(data)
        return data.decode("utf-8", "replace")

    @staticmethod
    def crashes(text):
        """(pid, line, statement) of each backend killed by a signal."""
        found = []
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "terminated by signal" in line or "was terminated by exception" in line:
                pid = re.search(r"PID (\d+)", line)
                running = next((l for l in lines[i + 1:i + 4] if "Failed process was running" in l), "")
                found.append((int(pid.group(1)) if pid else None, line.strip(), running.strip()))
        return found


def log_path():
    """SHARD_FDW_PG_LOG, or postgres.log beside the data directory."""
    path = os.environ.get("SHARD_FDW_PG_LOG")
    if path:
        return path
    data = bed.query("SHOW data_directory")[0][0]
    return os.path.join(os.path.dirname(data), "postgres.log")


def wait_for_server(seconds=90):
    """Wait until the server takes connections again (after a crash)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if bed.psql("SELECT 1", check=False, database=DATABASE).returncode == 0:
            return True
        time.sleep(0.5)
    return False


def backtrace(pid):
    """The stack of a backend, by gdb (empty when gdb cannot attach)."""
    if not shutil.which("gdb"):
        return "(no gdb)"
    try:
        result = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "bt"],
                                capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "(gdb timed out)"
    return "\n".join(l for l in result.stdout.splitlines() if l.startswith("#"))[:4000]


# -------------------------------------------------------------- sessions


def open_session(front):
    """A psql session on the test database with verbose errors and command
    tags; its backend pid in .pid."""
    session = bed.Session(DATABASE, patience_s=PATIENCE_S, field_separator=SEP)
    session.run("\\set VERBOSITY verbose\n\\set QUIET off\nSET client_min_messages = notice")
    session.pid = session.backend_pid()
    sessions[front] = session
    return session


def session_of(front):
    """The live session of a front's statements."""
    return sessions.get(front) or open_session(front)


def drop_session(front):
    """Forget a front's session (lost, hung, or out of step after a
    finding) and what was sent unasked on its connections."""
    state.get("unasked", {}).pop(front, None)
    session = sessions.pop(front, None)
    if session:
        session.close()


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


# ------------------------------------------------------------------ faults


def fault_profile(front):
    """One to three fault kinds of the front at random rates: late
    answers and connect resets rarer, each costing a timeout."""
    kinds = ONLY_FAULTS or list(FAULTS_TLS if front == "tls" else FAULTS_TCP)
    picked = rng.sample(kinds, min(len(kinds), rng.choice((1, 1, 2, 3))))
    rates = {}
    for kind in picked:
        if kind in ("late", "connect_reset"):
            rates[kind] = rng.choice((0.03, 0.08))
        elif kind in wirefront.IDLE_KINDS:
            rates[kind] = rng.choice((0.5, 1.0))
        else:
            rates[kind] = rng.choice((0.05, 0.15, 0.35))
    return rates


# ------------------------------------------------------------------ runner


def finding(number, front, statement, rates, fired, what, detail=""):
    """Record a failure of one statement."""
    unasked = state.setdefault("unasked", {}).get(front)
    entry = {"no": number, "front": front, "kind": statement.kind, "sql": statement.text[:300],
             "rates": rates, "fired": fired, "what": what, "detail": detail,
             "after_unasked": unasked}
    findings.append(entry)
    note = (f"\n    bytes were sent unasked on this session's connections at statement "
            f"#{unasked}: maybe the unasked-answer bug" if unasked else "")
    print(f"  FINDING #{number} [{front}] {statement.kind}: {what}\n"
          f"    faults enabled {rates}, fired {state.get('where', fired)}{note}\n"
          f"    sql: {statement.text[:200]!r}\n" +
          (f"    {detail[:1500]}\n" if detail else ""), flush=True)


def run_statement(number, front, statement):
    """Run one statement under a fault profile and judge it."""
    wf = fronts[front]
    if statement.prepare:
        statement.prepare()
    rates = fault_profile(front)
    session = session_of(front)
    state["log"].new_text()
    wf.take_log()
    wf.configure(rates=rates, active=True, seed=SEED * 1000 + number)
    lines, lost, hung = [], False, False
    try:
        lines = session.run(statement.text)
    except bed.SessionLost as err:
        lines, lost = err.args[0], True
    except bed.SessionHung as err:
        lines, hung = err.args[0], True
    finally:
        wf.configure(active=False)
    log = wf.take_log()
    fired = collections.Counter(e["kind"] for e in log)
    fault_tally.update(fired)
    where = collections.Counter(f"{e['kind']}@{e['action']}" for e in log)
    tally[statement.kind] += 1
    tally[f"{front}:{statement.kind}"] += 1
    fired = dict(fired)
    state["where"] = dict(where)
    state["current"] = {"no": number, "front": front, "fired": dict(where), "sql": statement.text}
    if hung:
        trace = backtrace(session.pid)
        finding(number, front, statement, rates, fired, f"hang: no answer within {PATIENCE_S} s",
                f"backend {session.pid} stack:\n{trace}")
        bed.psql(f"SELECT pg_terminate_backend({session.pid})", check=False)
        drop_session(front)
    time.sleep(0.05)
    crashes = ServerLog.crashes(state["log"].new_text())
    if lost:
        time.sleep(1.0)
        crashes += ServerLog.crashes(state["log"].new_text())
    for pid, line, running in crashes:
        ours = pid in {s.pid for s in sessions.values()}
        finding(number, front, statement, rates, fired,
                "crash" + ("" if ours else " (another backend of the server)"),
                f"{line}\n    {running}\n    output: {lines[-5:]}")
    if lost or crashes:
        if lost and not crashes:
            finding(number, front, statement, rates, fired, "session lost without a crash",
                    "\n".join(lines[-5:]))
        for name in list(sessions):
            drop_session(name)
        wait_for_server()
    if hung or lost or crashes:
        for name in statement.touches:
            read_truth(name)
        if statement.finish:
            statement.finish()
        return
    out = Outcome(lines)
    problems = []
    if out.unclean:
        problems.append(f"unclean end: {out.unclean[:2]}")
    if out.bare_errors:
        problems.append(f"an error without SQLSTATE: {out.bare_errors[:2]}")
    if out.error and out.error[0] == "XX000":
        problems.append(f"internal error: {out.error}")
    if out.error and not out.error[1].strip():
        problems.append("an error without a message")
    if out.error and out.error[0] != statement.expect_error:
        if set(fired) <= wirefront.BENIGN | {"stale_copy_skipped"}:
            problems.append(f"failed under benign faults only: {out.error}")
    if statement.expect_error and out.error is None:
        problems.append(f"succeeded, SQLSTATE {statement.expect_error} was due")
    for name in statement.touches:
        read_truth(name)
        if hasattr(truth[name], "problems"):
            problems += truth[name].problems()
    try:
        problems += statement.check(out)
    except Exception:  # a check that breaks is a finding too, with its trace
        problems.append("the check failed: " + traceback.format_exc(limit=3))
    if set(fired) & UNASKED:
        state.setdefault("unasked", {})[front] = number
    if problems:
        finding(number, front, statement, rates, fired, "; ".join(problems),
                "output:\n    " + out.text().replace("\n", "\n    "))
        drop_session(front)     # new connections: no finding begets the next
    state["outcomes"][f"{statement.kind}:{'error' if out.error else 'ok'}"] += 1
    if statement.finish:
        statement.finish()


# ------------------------------------------------------------------ set-up


def load_board(direct_table, count, games, scores_unique=True):
    """Rows (game, player, score, name) for a leaderboard, loaded through a
    foreign table straight on DynamoDB Local."""
    rows, seen = [], set()
    for game, n in games:
        for i in range(n):
            score = rng.randrange(1, 10 ** 6)
            while scores_unique and (game, score) in seen:
                score = rng.randrange(1, 10 ** 6)
            seen.add((game, score))
            rows.append((game, f"p{i:04d}", score, f"name{i}" if i % 7 else None))
    for start in range(0, len(rows), 200):
        sql(f"INSERT INTO {direct_table} VALUES {values_sql(rows[start:start + 200])}")
    return rows


def set_up():
    global client
    print(f"seed {SEED} (SHARD_FDW_TEST_SEED), "
          + (f"{SECONDS:.0f} s of statements (SHARD_FDW_WIRE_SECONDS)" if SECONDS
             else f"{STATEMENTS} statements (SHARD_FDW_WIRE_STATEMENTS)")
          + f", {TIMEOUT_OPTION} {TIMEOUT_MS}, late answers {LATE_MS} ms",
          flush=True)
    client = bed.ddb(direct=True)
    state["work"] = tempfile.mkdtemp(prefix="shard_fdw_wire.")
    os.chmod(state["work"], 0o755)
    state["log"] = ServerLog(log_path())
    state["outcomes"] = collections.Counter()
    bed.psql(f"CREATE DATABASE {DATABASE}")
    upstream = bed.env("SHARD_FDW_ENDPOINT")
    fronts["plain"] = wirefront.WireFront(upstream, seed=SEED, active=False, late_ms=LATE_MS)
    fronts["tls"] = wirefront.WireFront(upstream, tls=True, seed=SEED, active=False,
                                        late_ms=LATE_MS)
    credentials = (f"access_key_id '{bed.env('SHARD_FDW_ACCESS_KEY')}', "
                   f"secret_access_key '{bed.env('SHARD_FDW_SECRET_KEY')}'")
    statements = ["CREATE EXTENSION shard_fdw;",
                  f"CREATE SERVER direct FOREIGN DATA WRAPPER shard_fdw OPTIONS "
                  f"(endpoint '{bed.env('SHARD_FDW_DIRECT_ENDPOINT')}');",
                  f"CREATE USER MAPPING FOR CURRENT_USER SERVER direct OPTIONS ({credentials});"]
    for srv, wf in fronts.items():
        ca = f", ca_file '{wf.ca_file}'" if wf.ca_file else ""
        statements += [
            f"CREATE SERVER {srv} FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint '{wf.url}'{ca}, "
            f"{TIMEOUT_OPTION} '{TIMEOUT_MS}', connect_timeout_ms '2000', max_retries '4', "
            f"max_concurrency '8');",
            f"CREATE USER MAPPING FOR CURRENT_USER SERVER {srv} OPTIONS ({credentials});"]
    sql("\n".join(statements))
    tables = state["tables"] = {}
    tables["lbr"] = bed.new_table(client, created, "wire_lbr", "pk", "sk")
    tables["lbw"] = bed.new_table(client, created, "wire_lbw", "pk", "sk")
    tables["kv"] = bed.new_table(client, created, "wire_kv", "id")
    tables["imp"] = bed.new_table(client, created, "wire_imp", "pk", "sk")
    tables["dyn"] = bed.new_table(client, created, "wire_dyn", "pk", "id")
    tables["meta"] = bed.new_table(client, created, "wire_meta", "grp")
    state["rs_shards"], state["rs_layouts"] = {}, {}
    for srv in fronts:
        tables[f"rs_{srv}"] = bed.new_table(client, created, "wire_rs", "pk", "sk")
        state["rs_shards"][f"rs_{srv}"] = RS_SHARDS
        state["rs_layouts"][f"rs_{srv}"] = [RS_SHARDS]
    lb = LEADERBOARD.format(shards=LB_SHARDS)
    dyn = (f"partition_key 'pk', partition_key_format '{{grp}}_{{shard}}', sort_key 'id', "
           f"shard_strategy 'dynamic', metadata_table '{tables['meta']}', metadata_key 'grp', "
           "cooldown_s '0', max_shards '4', metadata_cache_ms '0'")
    ddl = []
    for srv in ("direct",) + tuple(fronts):
        ddl += [
            f"CREATE FOREIGN TABLE {srv}_lbr ({LB_COLUMNS}) SERVER {srv} OPTIONS "
            f"(table '{tables['lbr']}', {lb}, insert_mode 'upsert');",
            f"CREATE FOREIGN TABLE {srv}_lbw ({LB_COLUMNS}) SERVER {srv} OPTIONS "
            f"(table '{tables['lbw']}', {lb}, batch_size '10');",
            f"CREATE FOREIGN TABLE {srv}_lbwu ({LB_COLUMNS}) SERVER {srv} OPTIONS "
            f"(table '{tables['lbw']}', {lb}, batch_size '10', insert_mode 'upsert');",
            f"CREATE FOREIGN TABLE {srv}_kv (id text, v bigint, note text) SERVER {srv} "
            f"OPTIONS (table '{tables['kv']}', partition_key 'id', insert_mode 'upsert');",
            f"CREATE FOREIGN TABLE {srv}_dyn (grp text, id text, v bigint) SERVER {srv} "
            f"OPTIONS (table '{tables['dyn']}', {dyn});",
            f"CREATE FOREIGN TABLE {srv}_imp ({LB_COLUMNS}) SERVER {srv} OPTIONS "
            f"(table '{tables['imp']}', {lb}, insert_mode 'upsert');"]
    for srv in fronts:
        ddl.append(f"CREATE FOREIGN TABLE {srv}_rs ({LB_COLUMNS}) SERVER {srv} OPTIONS "
                   f"(table '{tables[f'rs_{srv}']}', {LEADERBOARD.format(shards=RS_SHARDS)}, "
                   "insert_mode 'upsert');")
    sql("\n".join(ddl))
    load_board("direct_lbr", 0, [("g1", 120), ("g2", 30)])
    load_board("direct_lbw", 0, [("w0", 25), ("w1", 25), ("w2", 15), ("w3", 15)],
               scores_unique=False)
    load_board("direct_imp", 0, [("i1", 20), ("i2", 12)])
    for srv in fronts:
        load_board(f"{srv}_rs", 0, [("r1", 25), ("r2", 15)])
    sql("INSERT INTO direct_kv SELECT 'k' || lpad(i::text, 3, '0'), i * 7, 'note ' || i "
        "FROM generate_series(0, 149) i;"
        "INSERT INTO direct_dyn VALUES ('a', 'x1', 1), ('a', 'x2', 2);")
    state["picks"] = [f"k{rng.randrange(180):03d}" for _ in range(30)]
    sql("CREATE TABLE picks (id text);"
        f"INSERT INTO picks VALUES {', '.join('(' + sql_literal(i) + ')' for i in state['picks'])};"
        "CREATE SCHEMA imp_reference;"
        f'IMPORT FOREIGN SCHEMA dynamodb LIMIT TO ("{tables["imp"]}") FROM SERVER direct '
        "INTO imp_reference;")
    state["import_reference"] = catalog("imp_reference")
    for name in ("lbr", "lbw", "kv", "meta") + tuple(f"rs_{s}" for s in fronts):
        read_truth(name)
    for name in ("lbr", "lbw"):
        assert not truth[name].problems(), truth[name].problems()


def tear_down():
    for session in list(sessions):
        drop_session(session)
    for wf in fronts.values():
        wf.stop()
    bed.drop_scratch(client, created, DATABASE)
    shutil.rmtree(state.get("work", "/nonexistent"), ignore_errors=True)


# ------------------------------------------------------------------- tests


@runner.test
def control_api_and_counters():
    """The front's control API (HTTP on its own port) sets rates and the
    seed, queues faults and reads the counters; a queued fault fires on
    the answer it matches, and is counted by kind."""
    wf = wirefront.WireFront(bed.env("SHARD_FDW_ENDPOINT"), active=False)
    control = wirefront.control_server(wf)
    base = f"http://127.0.0.1:{control.server_address[1]}"

    def call(method, path, body=None):
        import urllib.request
        data = None if body is None else json.dumps(body).encode()
        with urllib.request.urlopen(urllib.request.Request(base + path, data=data, method=method),
                                    timeout=10) as reply:
            return json.load(reply)
    try:
        assert call("POST", "/config", {"seed": 7, "rates": {"split": 0.5}, "active": True})["seed"] == 7
        call("POST", "/config", {"rates": {}})
        call("POST", "/faults", {"kind": "double_copy", "action": "ListTables"})
        import boto3
        from botocore.config import Config
        boto3.client("dynamodb", endpoint_url=wf.url, region_name="us-east-1",
                     aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
                     aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY"),
                     config=Config(retries={"total_max_attempts": 1})).list_tables(Limit=1)
        stats = call("GET", "/stats")
        assert stats["faults"] == {"double_copy": 1}, stats
        assert stats["answers"] >= 1 and stats["connections"] >= 1, stats
        log = call("DELETE", "/log")
        assert [e["kind"] for e in log] == ["double_copy"] and log[0]["action"] == "ListTables", log
        try:
            call("POST", "/config", {"rates": {"no_such_fault": 1}})
            raise AssertionError("an unknown fault kind was accepted")
        except Exception as err:  # urllib's HTTPError: 400
            assert "400" in str(err), err
    finally:
        control.shutdown()
        wf.stop()


def stray_row(table_key):
    """Put a row the statements never write into a leaderboard table
    behind the extension's back; returns a function taking it away."""
    game, player, score = "w0", f"stray{rng.randrange(10 ** 6)}", rng.randrange(1, 10 ** 6)
    pk, sk = lb_key(game, player, score, state["rs_shards"].get(table_key, LB_SHARDS))
    table = state["tables"][table_key]
    client.put_item(TableName=table, Item={
        "pk": {"S": pk}, "sk": {"S": sk}, "game_id": {"S": game},
        "player_id": {"S": player}, "score": {"N": str(score)}})
    return lambda: client.delete_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}})


def tampered_checks(statement, out):
    """The problems statement.check finds in outcomes made wrong on
    purpose: one per way of spoiling it that fits the kind."""
    verdicts = {}
    if out.rows:
        spoiled = Outcome(out.lines)
        spoiled.rows = out.rows[:-1]
        verdicts["a row dropped"] = statement.check(spoiled)
    elif not out.error and statement.kind.startswith("select"):
        spoiled = Outcome(out.lines)
        spoiled.rows = [("k999", "1", "x")]
        verdicts["a row added"] = statement.check(spoiled)
    if out.tags and not out.error:
        spoiled = Outcome(out.lines)
        spoiled.tags = [re.sub(r"\d+$", lambda m: str(int(m.group()) + 1), out.tags[-1])]
        verdicts["the command tag one off"] = statement.check(spoiled)
    for name in statement.touches:
        undo = stray_row(name)
        read_truth(name)
        verdicts[f"a stray item in {name}"] = statement.check(out)
        undo()
        read_truth(name)
    if statement.kind == "import":
        schema = re.search(r"INTO (\S+)", statement.text).group(1)
        sql(f'ALTER FOREIGN TABLE {schema}."{state["tables"]["imp"]}" DROP COLUMN name')
        verdicts["a column dropped"] = statement.check(out)
    if statement.kind == "analyze":
        sql("UPDATE pg_class SET reltuples = 1 WHERE oid = 'plain_lbr'::regclass")
        verdicts["reltuples spoiled"] = statement.check(out)
    return verdicts


@runner.test
def checks_catch_wrong_outcomes():
    """Without faults, every kind's check passes the outcome it gets, and
    fails the same outcome spoiled: a row dropped from (or added to) what a
    read returned, a command tag one off, an item written into the table
    behind the statement's back, a column dropped from an import,
    reltuples spoiled after ANALYZE.  A written claim above the truth
    fails, and so does one below it."""
    for kind, generate in GENERATORS.items():
        statement = generate("plain")
        if statement.prepare:
            statement.prepare()
        out = Outcome(session_of("plain").run(statement.text))
        for name in statement.touches:
            read_truth(name)
        honest = statement.check(out)
        assert honest == [], f"{kind}: {honest}\n{out.text()}\n{statement.text[:300]}"
        if statement.expect_error:
            assert out.error and out.error[0] == statement.expect_error, (kind, out.lines)
        else:
            assert out.error is None, (kind, out.lines)
        verdicts = tampered_checks(statement, out)
        assert verdicts, f"{kind}: no way to spoil its outcome"
        missed = [how for how, problems in verdicts.items() if not problems]
        assert not missed, f"{kind}: the check passes an outcome with {missed}"
        if statement.finish:
            statement.finish()
        print(f"  {kind}: caught {', '.join(verdicts)}")
    over = Outcome(["ERROR:  HV000: x", "CONTEXT:  writing: 3 rows of this statement written"])
    assert claim_check(over, 2, "self-test", record=False), "a claim above the truth passed"
    under = Outcome(["ERROR:  HV000: x", "CONTEXT:  writing: 1 row of this statement written"])
    assert claim_check(under, 2, "self-test", record=False), "a claim below the truth passed"
    ranged = Outcome(["ERROR:  HV000: x", "CONTEXT:  writing: 1 row of this statement written, "
                      "and up to 2 more may have been (answers lost)"])
    assert not claim_check(ranged, 3, "self-test", record=False), "an honest range failed"
    assert claim_check(ranged, 0, "self-test", record=False), "a range above the truth passed"


@runner.test
def unasked_answer_on_an_idle_connection():
    """An answer the server sends again, unasked, after a statement's last
    answer (stale_copy) waits on the kept-alive connection until the next
    statement: that one must not take it for its own answer.  For each
    front: a GetItem whose answer is followed by its copy, then, a moment
    later, other point lookups and a Scan in the same session."""
    wrong = []
    for front in fronts:
        wf = fronts[front]
        session = session_of(front)
        session.run(f"SELECT '{ROW}', id FROM {front}_kv WHERE id = 'k001'")
        wf.take_log()
        wf.configure(active=True, rates={})
        wf.queue({"kind": "stale_copy", "action": "GetItem"})
        try:
            first = Outcome(session.run(f"SELECT '{ROW}', id, v FROM {front}_kv WHERE id = 'k002'"))
            time.sleep(0.3)
            results = [Outcome(session.run(f"SELECT '{ROW}', id, v FROM {front}_kv WHERE id = '{k}'"))
                       for k in ("k003", "k004")]
            count = Outcome(session.run(f"SELECT '{ROW}', count(*), 0 FROM {front}_kv"))
        finally:
            wf.configure(active=False)
            wf.clear_queue()
        log = [e["kind"] for e in wf.take_log()]
        assert log == ["stale_copy"], f"the fault did not fire as planned: {log}"
        assert first.rows == [text_row("k002", truth["kv"]["k002"][0])], first.lines
        got = [r.rows or r.lines for r in results] + [count.rows or count.lines]
        want = [[text_row(k, truth["kv"][k][0])] for k in ("k003", "k004")] + \
            [[text_row(len(truth["kv"]), 0)]]
        if got != want:
            wrong.append(f"{front}: after a stale copy, got {got}, wanted {want}")
            drop_session(front)         # its connection is out of step
    assert not wrong, "\n".join(wrong)


@runner.test
def statements_under_wire_faults():
    """The matrix: statement kinds x {plain, TLS} fronts under random wire
    faults; every statement is right or fails cleanly, with honest claims
    (see the module's docstring)."""
    started = time.monotonic()
    kinds = ONLY_KINDS or list(GENERATORS)
    order = {front: [] for front in fronts}
    number = 0
    while True:
        if SECONDS and time.monotonic() - started > SECONDS:
            break
        if not SECONDS and number >= STATEMENTS:
            break
        front = ("plain", "tls")[number % 2]
        if not order[front]:
            order[front] = rng.sample(kinds, len(kinds))
        kind = order[front].pop()
        number += 1
        statement = GENERATORS[kind](front)
        run_statement(number, front, statement)
    elapsed = time.monotonic() - started
    print(f"  {number} statements in {elapsed:.0f} s; outcomes: "
          + ", ".join(f"{k} {v}" for k, v in sorted(state["outcomes"].items())))
    print("  statements per kind: " + ", ".join(
        f"{k} {tally[k]} (plain {tally['plain:' + k]}, tls {tally['tls:' + k]})"
        for k in GENERATORS if tally[k]))
    print("  faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(fault_tally.items())))
    under = [c for c in claims if c.get("under")]
    print(f"  written claims checked against DynamoDB: {len(claims)} mismatches "
          f"({len(under)} under-counts"
          + ")")
    for entry in findings:
        after = (f"; after bytes sent unasked at #{entry['after_unasked']}"
                 if entry.get("after_unasked") else "")
        print(f"  finding #{entry['no']} [{entry['front']}] {entry['kind']}: {entry['what'][:300]}"
              f" (faults {entry['fired']}{after}, seed {SEED})")
    assert not findings, f"{len(findings)} findings (above); seed {SEED}"


def credentials_check():
    """Set up and run the refresh test; returns a reason when skipped."""
    import awsendpoints
    work = tempfile.mkdtemp(prefix="shard_fdw_wire_creds.")
    os.chmod(work, 0o755)
    endpoints_server = awsendpoints.start()
    endpoints = endpoints_server.endpoints
    endpoints.container_token = "container-auth-1"
    endpoints.lifetime_s = 8
    port = None
    proxy = cluster = None
    saved = {k: os.environ.get(k) for k in ("PGPORT", "PGHOST", "SHARD_FDW_PROXY")}
    ddb_front = creds_front = None
    try:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        command = [sys.executable, os.path.join(HERE, "..", "proxy", "ddbproxy.py"),
                   "--listen-port", str(port), "--backend", bed.env("SHARD_FDW_DIRECT_ENDPOINT"),
                   "--credentials", f"{bed.env('SHARD_FDW_ACCESS_KEY')}:{bed.env('SHARD_FDW_SECRET_KEY')}"]
        for a, s_, t in awsendpoints.all_pool_credentials():
            command += ["--credentials", f"{a}:{s_}:{t}"]
        log = open(os.path.join(work, "proxy.log"), "w", encoding="utf-8")
        proxy = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        os.environ["SHARD_FDW_PROXY"] = f"http://127.0.0.1:{port}/__proxy"
        for _ in range(100):
            try:
                bed.stats()
                break
            except Exception:
                time.sleep(0.1)
        else:
            return "the refresh test's DynamoDB proxy did not start"
        ddb_front = wirefront.WireFront(f"http://127.0.0.1:{port}", seed=SEED, active=False,
                                        late_ms=LATE_MS)
        creds_front = wirefront.WireFront(f"http://127.0.0.1:{endpoints_server.server_address[1]}",
                                          seed=SEED + 1, active=False)
        token_file = os.path.join(work, "container-token")
        with open(token_file, "w", encoding="utf-8") as f:
            f.write("container-auth-1")
        os.chmod(token_file, 0o644)
        cluster = bed.Cluster(work)
        cluster.start(AWS_CONTAINER_CREDENTIALS_FULL_URI=creds_front.url + "/container/credentials",
                      AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=token_file)
        os.environ.update(PGHOST="127.0.0.1", PGPORT=str(cluster.port))
        bed.in_database("postgres")(f"""
            CREATE EXTENSION shard_fdw;
            CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw OPTIONS (endpoint '{ddb_front.url}',
              {TIMEOUT_OPTION} '{TIMEOUT_MS}', max_retries '4');
            CREATE FOREIGN TABLE kv (id text, v bigint, note text) SERVER ddb
              OPTIONS (table '{state["tables"]["kv"]}', partition_key 'id');""")
        want_sum = sum(v for v, _ in truth["kv"].values())
        session = bed.Session("postgres", patience_s=PATIENCE_S, field_separator=SEP)
        session.run("\\set VERBOSITY verbose\nSET client_min_messages = notice")
        session.pid = session.backend_pid()
        crash_log = ServerLog(cluster.log)
        problems, ran, errors, warnings = [], 0, 0, 0
        deadline = time.monotonic() + 20
        number = 0
        while time.monotonic() < deadline:
            number += 1
            rates = {} if CREDENTIALS_QUIET else fault_profile("plain")
            ddb_front.configure(rates=rates, active=True, seed=SEED * 7 + number)
            creds_front.configure(rates={} if CREDENTIALS_QUIET else
                                  {k: v for k, v in fault_profile("plain").items()
                                   if k not in ("late",)},
                                  active=True, seed=SEED * 11 + number)
            ids = [f"k{rng.randrange(150):03d}" for _ in range(rng.choice((1, 5, 30)))]
            text = rng.choice([f"SELECT '{ROW}', sum(v), count(*) FROM kv",
                               f"SELECT '{ROW}', id, v FROM kv WHERE id IN "
                               f"({', '.join(sql_literal(i) for i in ids)})"])
            try:
                lines = session.run(text)
            except (bed.SessionLost, bed.SessionHung) as err:
                problems.append(f"{type(err).__name__} at {text[:80]}: faults "
                                f"{ddb_front.take_log()[-3:]} {creds_front.take_log()[-3:]}")
                break
            finally:
                ddb_front.configure(active=False)
                creds_front.configure(active=False)
            fired = [e["kind"] for e in ddb_front.take_log() + creds_front.take_log()]
            fault_tally.update(f"credentials:{k}" for k in fired)
            ran += 1
            out = Outcome(lines)
            warnings += len([l for l in lines if l.startswith("WARNING:")])
            if out.unclean or out.bare_errors or (out.error and out.error[0] == "XX000"):
                problems.append(f"unclean: {lines[:4]} (faults {fired})")
            elif out.error:
                errors += 1
            elif text.startswith(f"SELECT '{ROW}', sum"):
                if out.rows != [text_row(want_sum, len(truth["kv"]))]:
                    problems.append(f"wrong sum {out.rows} under faults {fired}")
            else:
                want = [text_row(i, truth["kv"][i][0]) for i in set(ids) if i in truth["kv"]]
                problems += [f"{p} under faults {fired}" for p in rows_equal(out.rows, want)]
            crashes = ServerLog.crashes(crash_log.new_text())
            if crashes:
                problems.append(f"crash: {crashes} at {text[:80]} (faults {fired})")
                break
        session.close()
        keys = bed.stats()["signatures"]["access_keys"]
        refreshed = [k for k in keys if k.startswith("ASIACONTAINER")]
        print(f"  {ran} statements beside refreshes of 8-second credentials: {errors} clean "
              f"errors, {warnings} warnings, {len(refreshed)} container keys signed with")
        if len(refreshed) < 2:
            problems.append(f"no refresh happened: keys {keys}")
        for p in problems:
            findings.append({"no": 0, "front": "credentials", "kind": "credentials", "sql": "",
                             "rates": {}, "fired": {}, "what": p, "detail": ""})
        assert not problems, problems
        tally["credentials"] += ran
        return None
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if cluster:
            cluster.stop()
        if proxy:
            proxy.terminate()
            proxy.wait()
        for wf in (ddb_front, creds_front):
            if wf:
                wf.stop()
        endpoints_server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


@runner.test
def credential_refresh_in_flight():
    """Statements over a front of faults while credentials of 8 seconds'
    life are refreshed from the container endpoint, itself behind a front
    of faults: right rows or clean errors (a failed refresh is a WARNING),
    no crash or hang, and the requests signed with refreshed keys."""
    if not CREDENTIALS:
        print("  skipped: SHARD_FDW_WIRE_CREDENTIALS=0")
        return
    if os.geteuid() != 0:
        print("  skipped: a cluster of the test's own needs root (as test_credentials.py)")
        return
    reason = credentials_check()
    if reason:
        print(f"  skipped: {reason}")


if __name__ == "__main__":
    runner.main(set_up, tear_down)
