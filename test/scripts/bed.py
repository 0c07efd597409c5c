"""Helpers for the scripted tests in test/scripts/.

test/check.sh starts DynamoDB Local, the proxy (test/proxy/ddbproxy.py) and
a PostgreSQL cluster, exports how to reach them (PGHOST, PGPORT, PGUSER,
PGDATABASE, SHARD_FDW_ENDPOINT, SHARD_FDW_DIRECT_ENDPOINT, SHARD_FDW_PROXY,
SHARD_FDW_ACCESS_KEY, SHARD_FDW_SECRET_KEY, SHARD_FDW_REGION) and runs every
test/scripts/test_*.py with Debian's /usr/bin/python3.  This module reads
that environment and offers:

* psql(), query(): run SQL through psql; in_database(): a psql() of one
  database that fails on any error; server_sql(): the SQL declaring server
  ddb and its user mapping; foreign_table_sql(): a foreign table's;
  sql_literal(): a Python value as SQL;
  schema_dump(): pg_dump --schema-only of a database, as lines;
* Session: one psql kept open, statement by statement, so that they share
  a backend;
* proxy control: add_fault(), clear_faults(), configure(), stats(),
  reset_proxy();
* ddb(), unique_name(), create_table(), stored_items(): boto3 against the
  proxy or DynamoDB Local, signed with the test credentials, SDK retries
  off;
* scratch(), new_table(), drop_scratch(): the database and tables a script
  makes, and their removal;
* every_kind_of_table(): servers, user mappings and foreign tables of
  every kind, holding rows, and EVERY_KIND_READS, the queries reading them;
* fnv1a_32(): the hash of shard_hash 'fnv1a_32', for the articles' own
  formulas; run_together(): a function run on several threads at once;
* Cluster: a throwaway PostgreSQL cluster whose environment (the AWS
  variables the extension reads) the test chooses; free_port();
  cluster_over_table(), cluster_tear_down(): such a cluster, started over
  a table of a few items, and its removal;
* Runner: registers test functions, runs them in order and ends with the
  line "N passed, N failed"; the exit status is non-zero on any failure.
"""

import itertools
import json
import os
import pwd
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request

import boto3
from botocore.config import Config

FIELD_SEPARATOR = "\x1f"
_names = itertools.count(1)


def env(name):
    """An exported setting of the test bed; exits when it is missing."""
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{name} is not set: run this through test/check.sh")
    return value


# -------------------------------------------------------------- PostgreSQL


def psql(sql, check=True, database=None):
    """Run SQL (one or more statements) with psql; returns CompletedProcess.

    Stops at the first error (ON_ERROR_STOP); with check=True an error
    raises CalledProcessError, whose stderr holds psql's message.
    """
    command = ["psql", "-X", "-q", "-A", "-t", "-F", FIELD_SEPARATOR,
               "-v", "ON_ERROR_STOP=1", "-f", "-"]
    if database:
        command += ["-d", database]
    return subprocess.run(command, input=sql, text=True, capture_output=True,
                          check=check)


def query(sql, database=None):
    """The rows of a query, each a list of column texts (NULL is '')."""
    output = psql(sql, database=database).stdout
    return [line.split(FIELD_SEPARATOR) for line in output.splitlines() if line]


def schema_dump(database, *options, port=None):
    """pg_dump --schema-only of database (of the test bed's cluster, or of
    the cluster on port) with options, as lines, without those that differ
    from one dump to the next (pg_dump's version, the random key of
    \\restrict)."""
    command = ["pg_dump", "--schema-only", *options, "-d", database]
    if port:
        command += ["-h", "127.0.0.1", "-p", str(port)]
    text = subprocess.run(command, text=True, capture_output=True, check=True).stdout
    return [line for line in text.splitlines()
            if not line.startswith(("-- Dumped ", "\\restrict ", "\\unrestrict "))]


def sql_literal(value):
    """A value as an SQL literal: None is NULL, a bool true or false, an int
    its digits, anything else its text, quoted."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def foreign_table_sql(name, columns, table, server="ddb", **options):
    """CREATE FOREIGN TABLE name (columns) over DynamoDB table table on
    server, with options in the order given, each value quoted as it is
    (a key template's braces single, as the option holds them)."""
    listed = ", ".join(f"{option} {sql_literal(str(value))}"
                       for option, value in dict(table=table, **options).items())
    return f"CREATE FOREIGN TABLE {name} ({columns})\n  SERVER {server} OPTIONS ({listed});\n"


# ------------------------------------------------------------------- proxy


def in_database(database):
    """A function running SQL in database with psql that fails, with psql's
    message and the start of the SQL, on any error."""
    def run(text):
        result = psql(text, check=False, database=database)
        assert result.returncode == 0, f"{result.stderr.strip()}\nin: {text.strip()[:300]}"
        return result
    return run


def server_sql(direct=False):
    """CREATE SERVER ddb (on the proxy, or on DynamoDB Local itself when
    direct) and its user mapping with the test credentials."""
    endpoint = env("SHARD_FDW_DIRECT_ENDPOINT" if direct else "SHARD_FDW_ENDPOINT")
    return f"""CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
                 OPTIONS (endpoint '{endpoint}');
               CREATE USER MAPPING FOR CURRENT_USER SERVER ddb
                 OPTIONS (access_key_id '{env("SHARD_FDW_ACCESS_KEY")}',
                          secret_access_key '{env("SHARD_FDW_SECRET_KEY")}');"""


class SessionLost(Exception):
    """psql ended: the backend is gone.  Holds the lines read."""


class SessionHung(Exception):
    """No answer within the session's patience.  Holds the lines read."""


class Session:
    """One psql process kept open, so that statements share a backend.
    Each statement's output lines (stderr included, errors without psql's
    "psql:<stdin>:N: " prefix) come back up to a marker; the seconds it
    took are in .seconds, the statements run in .count."""

    _markers = itertools.count(1)

    def __init__(self, database, patience_s=None, field_separator=None):
        command = ["psql", "-X", "-q", "-A", "-t", "-d", database]
        if field_separator:
            command += ["-F", field_separator]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, bufsize=1,
            encoding="utf-8", errors="replace")
        self.patience_s = patience_s
        self.seconds = 0.0
        self.count = 0
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        """Copy psql's output lines into the queue; None at the end."""
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def run(self, statement):
        """The output lines of one statement."""
        marker = f"@@done {next(self._markers)}"
        started = time.monotonic()
        try:
            self.process.stdin.write(f"{statement};\n\\echo {marker}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise SessionLost([]) from None
        self.count += 1
        lines = []
        while True:
            try:
                line = self.lines.get(timeout=None if self.patience_s is None else
                                      max(0.0, started + self.patience_s - time.monotonic()))
            except queue.Empty:
                raise SessionHung(lines) from None
            if line is None:
                raise SessionLost(lines)
            if line == marker:
                self.seconds = time.monotonic() - started
                return lines
            lines.append(re.sub(r"^psql:<stdin>:\d+: ", "", line))

    def backend_pid(self):
        """The pid of the session's backend."""
        return int(self.run("SELECT pg_backend_pid()")[0])

    def close(self):
        """End psql (killed if it does not end)."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=5)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def proxy(method, path, body=None):
    """Call the proxy's control API; returns the decoded JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(env("SHARD_FDW_PROXY") + path, data=data,
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as err:
        raise AssertionError(
            f"proxy {method} {path}: {err.code} {err.read().decode()}") from None


def add_fault(**spec):
    """Queue one fault, e.g. add_fault(kind="status", status=500, action="Query")."""
    return proxy("POST", "/faults", spec)


def clear_faults():
    """Drop every queued fault."""
    return proxy("DELETE", "/faults")


def configure(**settings):
    """Change proxy settings: latency_ms, verify_signatures, key_budget,
    table_budget, deny_actions."""
    return proxy("POST", "/config", settings)


def stats():
    """The proxy's counters."""
    return proxy("GET", "/stats")


def reset_proxy():
    """Back to the proxy's start-up state (faults, budgets, counters)."""
    return proxy("POST", "/reset")


# ---------------------------------------------------------------- DynamoDB


def ddb(direct=False, access_key=None, secret_key=None, session_token=None):
    """A boto3 DynamoDB client through the proxy (or straight to DynamoDB
    Local with direct=True), signed with the test credentials unless given
    others; the SDK's own retries are off so every fault is seen."""
    endpoint = env("SHARD_FDW_DIRECT_ENDPOINT" if direct else "SHARD_FDW_ENDPOINT")
    return boto3.client(
        "dynamodb", endpoint_url=endpoint,
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=access_key or env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=secret_key or env("SHARD_FDW_SECRET_KEY"),
        aws_session_token=session_token,
        config=Config(retries={"total_max_attempts": 1},
                      connect_timeout=5, read_timeout=30))


def unique_name(prefix):
    """A table name no other test run uses."""
    return f"{prefix}_{os.getpid()}_{next(_names)}"


def create_table(client, name, partition_key, sort_key=None, sort_type="S", gsi=None):
    """Create an on-demand table, string partition key, sort key of
    sort_type ("S", "N" or "B"), and with gsi = (index name, partition
    key, sort key) a global secondary index of string keys projecting every
    attribute; returns its description."""
    keys = [(partition_key, "HASH", "S")]
    if sort_key:
        keys.append((sort_key, "RANGE", sort_type))
    definitions = {n: t for n, _, t in keys}
    extra = {}
    if gsi:
        index, index_pk, index_sk = gsi
        definitions.update({index_pk: "S", index_sk: "S"})
        extra["GlobalSecondaryIndexes"] = [{
            "IndexName": index,
            "KeySchema": [{"AttributeName": index_pk, "KeyType": "HASH"},
                          {"AttributeName": index_sk, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}]
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": n, "KeyType": k} for n, k, _ in keys],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in definitions.items()], **extra)
    return client.describe_table(TableName=name)["Table"]


def new_table(client, tables, prefix, partition_key, sort_key=None, sort_type="S",
              gsi=None):
    """create_table under a fresh name starting with prefix, noted in the
    list tables for drop_scratch; returns the name."""
    name = unique_name(prefix)
    create_table(client, name, partition_key, sort_key, sort_type, gsi)
    tables.append(name)
    return name


def scratch(prefix):
    """What a script making a database and tables of its own starts from:
    its Runner, the database's name (unique_name(prefix)), in_database() of
    it, a DynamoDB Local client and the list of the tables it makes
    (new_table, drop_scratch)."""
    database = unique_name(prefix)
    return Runner(), database, in_database(database), ddb(direct=True), []


def stored_items(client, table):
    """Every item of a DynamoDB table, read with a consistent Scan."""
    pages = client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    return [item for page in pages for item in page["Items"]]


def drop_scratch(client, tables, database=None):
    """Remove what a script made: its DynamoDB tables and its database; the
    proxy goes back to its start-up state."""
    reset_proxy()
    for table in tables:
        client.delete_table(TableName=table)
    if database:
        psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


# ------------------------------------------------------------------ runner


def leaderboard_pair(table, shards):
    """A DynamoDB table with the leaderboard article's key templates
    ({game_id}#{shard}, {score:020}#{player_id}, FNV-1a-32 of player_id mod
    shards) and two foreign tables over it in upsert mode: lb through the
    proxy and lb_load straight to DynamoDB Local, for loading without the
    proxy's latency."""
    create_table(ddb(direct=True), table, "pk", "sk")
    credentials = (f"access_key_id '{env('SHARD_FDW_ACCESS_KEY')}', "
                   f"secret_access_key '{env('SHARD_FDW_SECRET_KEY')}'")
    statements = ["CREATE EXTENSION IF NOT EXISTS shard_fdw;"]
    for server, variable, name in (("proxied", "SHARD_FDW_ENDPOINT", "lb"),
                                   ("direct", "SHARD_FDW_DIRECT_ENDPOINT", "lb_load")):
        statements.append(f"""
            CREATE SERVER {server} FOREIGN DATA WRAPPER shard_fdw
              OPTIONS (endpoint '{env(variable)}');
            CREATE USER MAPPING FOR CURRENT_USER SERVER {server} OPTIONS ({credentials});
            CREATE FOREIGN TABLE {name} (game_id text, player_id text, score bigint)
              SERVER {server} OPTIONS (table '{table}',
                partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
                sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
                shards '{shards}', shard_strategy 'calculated', shard_by 'player_id',
                shard_hash 'fnv1a_32', insert_mode 'upsert');""")
    psql("\n".join(statements))


# The foreign tables every_kind_of_table() makes, each with the query that
# reads its rows (unlearnt, without keys, is not read).
EVERY_KIND_READS = {
    "learnt": "SELECT game, player, score FROM learnt ORDER BY game, player",
    "board": "SELECT game_id, player_id, score FROM board ORDER BY game_id, player_id",
    "by_score": "SELECT game, player, score FROM by_score WHERE game = 'g1' ORDER BY score",
    "files": "SELECT file_path, ts, who FROM files ORDER BY file_path, ts",
    "regional": "SELECT game, player, score FROM regional ORDER BY game, player",
}


def every_kind_of_table(database, endpoint, tables, role):
    """In database, which has the extension: servers ddb (option region)
    and from_env (its region from the environment) on endpoint, user
    mappings with the test credentials (the current user's and role's on
    ddb, PUBLIC's on from_env), and foreign tables over new DynamoDB tables
    (noted in tables), rows written in each: keys learnt when declared
    (learnt), read through a global secondary index (by_score), keys
    declared with templates and calculated shards, whose shard count
    changed while it held items (board: a non-empty layout_history, SELECT
    granted to role), dynamic sharding with its metadata table (files), on
    from_env (regional), and declared while the event trigger was off
    (unlearnt: no keys yet).  EVERY_KIND_READS reads them."""
    client = ddb(direct=True)
    board = new_table(client, tables, "every_board", "pk", "sk")
    plain = new_table(client, tables, "every_plain", "game", "player",
                      gsi=("byScore", "game", "rank"))
    files = new_table(client, tables, "every_files", "pk", "ts", sort_type="N")
    meta = new_table(client, tables, "every_meta", "file_path")
    credentials = (f"access_key_id '{env('SHARD_FDW_ACCESS_KEY')}', "
                   f"secret_access_key '{env('SHARD_FDW_SECRET_KEY')}'")
    in_database(database)(f"""
        CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (region 'us-east-1', endpoint '{endpoint}', max_retries '1');
        CREATE SERVER from_env FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{endpoint}', max_retries '1');
        CREATE USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS ({credentials});
        CREATE USER MAPPING FOR {role} SERVER ddb OPTIONS ({credentials});
        CREATE USER MAPPING FOR PUBLIC SERVER from_env OPTIONS ({credentials});

        CREATE FOREIGN TABLE learnt (game text, player text, score int, "rank" text)
          SERVER ddb OPTIONS (table '{plain}');
        CREATE FOREIGN TABLE by_score (game text, player text, score int, "rank" text)
          SERVER ddb OPTIONS (table '{plain}', index 'byScore');
        {foreign_table_sql(
            "board", "game_id text, player_id text, score bigint", board,
            partition_key="pk", partition_key_format="{game_id}#{shard}",
            sort_key="sk", sort_key_format="{score:020}#{player_id}", shards=4,
            shard_strategy="calculated", shard_by="player_id", shard_hash="fnv1a_32")}
        {foreign_table_sql(
            "files", "file_path text, ts bigint, who text", files,
            partition_key="pk", partition_key_format="{file_path}_{shard}", sort_key="ts",
            shard_strategy="dynamic", metadata_table=meta, metadata_key="file_path",
            cooldown_s=0, max_shards=4, metadata_cache_ms=0)}
        CREATE FOREIGN TABLE regional (game text, player text, score int, "rank" text)
          SERVER from_env OPTIONS (table '{plain}');
        ALTER EVENT TRIGGER shard_fdw_check_ddl DISABLE;
        CREATE FOREIGN TABLE unlearnt (game text, player text) SERVER ddb
          OPTIONS (table '{plain}');
        ALTER EVENT TRIGGER shard_fdw_check_ddl ENABLE;
        GRANT SELECT ON board TO {role};

        INSERT INTO learnt SELECT 'g' || (i % 3), 'p' || i, i * 7, to_char(i * 7, 'FM0000')
          FROM generate_series(1, 30) i;
        INSERT INTO board SELECT 'game' || (i % 2), 'p' || i, i * 11 FROM generate_series(1, 40) i;
        INSERT INTO files SELECT '/shared/f' || (i % 4) || '.txt', 1000 + i, 'u' || i
          FROM generate_series(1, 20) i;
        ALTER FOREIGN TABLE board OPTIONS (SET shards '8');
        INSERT INTO board SELECT 'game' || (i % 2), 'q' || i, i * 13 FROM generate_series(1, 10) i;
    """)
    history = query("SELECT option_value FROM pg_options_to_table((SELECT ftoptions"
                    " FROM pg_foreign_table WHERE ftrelid = 'board'::regclass))"
                    " WHERE option_name = 'layout_history'", database=database)
    assert history and json.loads(history[0][0])[0]["shards"] == "4", history
    return EVERY_KIND_READS


def fnv1a_32(data):
    """32-bit FNV-1a of bytes, as the extension's shard_hash 'fnv1a_32' and
    the leaderboard hashed on player_id computes it."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def run_together(function, argument_lists):
    """Run function once per argument tuple, all on threads of their own at
    the same time, and wait for every one."""
    threads = [threading.Thread(target=function, args=args) for args in argument_lists]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def free_port():
    """A free TCP port on 127.0.0.1 (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    """A throwaway PostgreSQL cluster whose environment the test chooses."""

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "pg")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "postgres.log")
        self.bin = os.path.dirname(shutil.which("pg_ctl"))
        self.port = free_port()
        self.root = os.geteuid() == 0
        os.makedirs(self.dir)
        if self.root:
            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
        self.run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres",
                  "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"], {})
        with open(os.path.join(self.data, "postgresql.conf"), "a", encoding="utf-8") as conf:
            conf.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.dir}'\nfsync = off\n"
                       "max_connections = 20\ntimezone = 'UTC'\nlc_messages = 'C'\n")

    def run(self, command, environment):
        """Run a command as the cluster's user in exactly environment."""
        variables = dict({"PATH": os.environ["PATH"], "HOME": self.dir, "LANG": "C.UTF-8"},
                         **environment)
        prefix = ["env", "-i"] + [f"{k}={v}" for k, v in variables.items()]
        if self.root:
            prefix += ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
        subprocess.run(prefix + command, check=True, cwd=self.dir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self, **environment):
        """(Re)start the server with environment (and none of the caller's
        AWS variables); instance metadata stays off unless it is given."""
        self.stop()
        environment.setdefault("AWS_EC2_METADATA_DISABLED", "true")
        environment.setdefault("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/.aws/credentials")
        environment.setdefault("AWS_CONFIG_FILE", "/nonexistent/.aws/config")
        environment.setdefault("AWS_REGION", "us-east-1")
        self.run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log,
                  "-w", "-t", "60", "start"], environment)

    def stop(self):
        """Stop the server if it runs."""
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast",
                      "-w", "stop"], {})

    def log_text(self):
        """The server log."""
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()


def cluster_over_table(state, prefix, items):
    """A scratch directory (state["work"]), the DynamoDB Local client
    (state["client"]), a table named after prefix (state["table"]) holding
    items (each a boto3 Item), and a Cluster (state["cluster"]) started,
    which psql() then reaches; returns the user mapping options that carry
    the test credentials.  cluster_tear_down(state) removes them."""
    work = tempfile.mkdtemp(prefix=f"shard_fdw_{prefix}.")
    os.chmod(work, 0o755)
    state["work"] = work
    client = ddb(direct=True)
    state["client"] = client
    state["table"] = unique_name(prefix)
    create_table(client, state["table"], "k")
    for item in items:
        client.put_item(TableName=state["table"], Item=item)
    cluster = Cluster(work)
    state["cluster"] = cluster
    cluster.start()
    os.environ.update(PGHOST="127.0.0.1", PGPORT=str(cluster.port), PGUSER="postgres",
                      PGDATABASE="postgres")
    return (f"access_key_id '{env('SHARD_FDW_ACCESS_KEY')}', "
            f"secret_access_key '{env('SHARD_FDW_SECRET_KEY')}'")


def cluster_tear_down(state):
    """Stop and remove what cluster_over_table made (as far as it got)."""
    if "cluster" in state:
        state["cluster"].stop()
    if "client" in state:
        state["client"].delete_table(TableName=state["table"])
    if "work" in state:
        shutil.rmtree(state["work"], ignore_errors=True)


class Runner:
    """Runs registered tests in order and reports 'N passed, N failed'."""

    def __init__(self):
        self.tests = []

    def test(self, function):
        """Decorator: register a test function (no arguments)."""
        self.tests.append(function)
        return function

    def run(self):
        """Run every test, print the summary, exit 0 only if all passed."""
        passed = failed = 0
        for function in self.tests:
            started = time.monotonic()
            try:
                function()
            except Exception:  # a failing test must not stop the others
                failed += 1
                print(f"FAIL {function.__name__}")
                traceback.print_exc(file=sys.stdout)
            else:
                passed += 1
                print(f"ok   {function.__name__} "
                      f"({(time.monotonic() - started) * 1000:.0f} ms)")
            sys.stdout.flush()
        print(f"{passed} passed, {failed} failed")
        sys.exit(1 if failed or not passed else 0)

    def main(self, set_up, tear_down):
        """set_up(), every test, then tear_down() whatever happened."""
        set_up()
        try:
            self.run()
        finally:
            tear_down()
