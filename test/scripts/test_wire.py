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
shard count, and the SQL functions that reach DynamoDB.  They are drawn,
with the checks that judge them, by wirestatements.py.

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
attempt_timeout_ms: the server option bounding one attempt, which the
late answers outlast, so that the attempt is retried while its late
answer may still come; request_timeout_ms bounds the whole request
instead) and SHARD_FDW_WIRE_TIMEOUT_MS, SHARD_FDW_WIRE_CREDENTIALS=0 to
skip the refresh test.  Prints the statements run per kind, the faults
injected per kind and every finding with its seed, statement number and
faults; ends with "N passed, N failed".
"""

import collections
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
from wirestatements import (DATABASE, GENERATORS, LB_SHARDS, ROW, SEED, SEP, Outcome,
                            catalog, claim_check, claims, connect, lb_key, read_truth,
                            rng, rows_equal, sql, state, tally, text_row, truth,
                            values_sql)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "proxy"))
import wirefront  # noqa: E402

runner = bed.Runner()
STATEMENTS = int(os.environ.get("SHARD_FDW_WIRE_STATEMENTS", "200"))
SECONDS = float(os.environ.get("SHARD_FDW_WIRE_SECONDS", "0"))
ONLY_KINDS = [k for k in os.environ.get("SHARD_FDW_WIRE_KINDS", "").split(",") if k]
ONLY_FAULTS = [k for k in os.environ.get("SHARD_FDW_WIRE_FAULTS", "").split(",") if k]
TIMEOUT_OPTION = os.environ.get("SHARD_FDW_WIRE_TIMEOUT_OPTION", "attempt_timeout_ms")
TIMEOUT_MS = int(os.environ.get("SHARD_FDW_WIRE_TIMEOUT_MS", "2000"))
CREDENTIALS = os.environ.get("SHARD_FDW_WIRE_CREDENTIALS", "1") != "0"
CREDENTIALS_QUIET = os.environ.get("SHARD_FDW_WIRE_CREDENTIALS") == "quiet"
# Faults that send bytes past an answer: an answer after them may be out of
# step while the extension takes unasked bytes for the next answer.
UNASKED = {"stale_copy", "double_copy", "double_other", "extra_bytes"}
LATE_MS = TIMEOUT_MS + 1500
PATIENCE_S = float(os.environ.get("SHARD_FDW_WIRE_PATIENCE_S", "90"))
RS_SHARDS = 3
LEADERBOARD = ("partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}', "
               "sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}', "
               "shards '{shards}', shard_strategy 'calculated', shard_by 'player_id', "
               "shard_hash 'fnv1a_32'")
LB_COLUMNS = "game_id text, player_id text, score bigint, name text"
FAULTS_TCP = [k for k in wirefront.KINDS if k not in wirefront.TLS_ONLY]
FAULTS_TLS = list(wirefront.KINDS)

client = None
created = []
fronts = {}
sessions = {}
fault_tally = collections.Counter()
findings = []


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
    client = connect()
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
          f"({len(under)} under-counts)")
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
