"""Backend CPU per request and per item: shard_fdw against DynamoDB Local
directly, no proxy and no added latency, so that what is measured is the
backend's own work: signing and sending requests, parsing the answers,
merging, building tuples.

Run by bench/cpu.sh once DynamoDB Local and PostgreSQL are up (it reads
the environment test/lib.sh exports); python3 bench/cpu.py also runs
against a test bed from test/serve.sh, loading its tables only once.
Every number it prints is measured in this run.

  topn   the top-100 of the leaderboard hashed on player_id, sharded N = 1,
         10 and 100 ways (BENCH_SHARDS): one Query per shard, merged in the
         backend; CPU per statement, per shard request and per item read
  scan   a whole-table Scan of BENCH_SCAN_ITEMS items of about 200 bytes:
         count(*) (the Scan projects the key only, so every item is read
         and checked but small) and a count of every column (every
         attribute read and converted); CPU per item read
  loopback  the kernel's part of a request whatever the client: this
         script itself sends the shard Queries of the largest top-100,
         written once, on as many kept-alive connections at once, and
         reads each answer by its Content-Length without parsing it; the
         kernel CPU it spends per request (getrusage), the floor under
         the backend's kernel share above

The CPU is the backend's time on a CPU from /proc/self/schedstat (in
nanoseconds: /proc/self/stat counts 10 ms ticks, a third of a statement
at 30 statements a round), read in the backend before and after
BENCH_RUNS statements; that is repeated BENCH_ROUNDS times and the median
is printed with the lowest and highest. The kernel's share of it is that
of the system ticks in /proc/self/stat's user and system ticks.
Beside it, per statement over all rounds: the backend's context switches
(/proc/self/status, voluntary and not: mostly its sleeps while answers
are on their way) and its minor page faults (/proc/self/stat: memory the
kernel had to map afresh).
"""

import json
import os
import random
import resource
import select
import socket
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql and boto3 helpers)
import boto3  # noqa: E402

GAME = "g"
SHARD_COUNTS = tuple(int(n) for n in
                     os.environ.get("BENCH_SHARDS", "1,10,100").split(","))
SCORES = int(os.environ.get("BENCH_SCORES", "20000"))
SCAN_ITEMS = int(os.environ.get("BENCH_SCAN_ITEMS", "20000"))
RUNS = int(os.environ.get("BENCH_RUNS", "30"))
SCAN_RUNS = int(os.environ.get("BENCH_SCAN_RUNS", "10"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
PARTS = os.environ.get("BENCH_PARTS", "topn,scan,loopback").split(",")
TOP = 100


def say(message):
    print(f"==> {message}", flush=True)


def topn_table(shards):
    return f"cpu_topn_{shards}"


def load_topn(client, shards):
    """The leaderboard's items for SCORES distinct scores."""
    bed.create_table(client, topn_table(shards), "pk", "sk")
    rng = random.Random(2027)
    with resource_table(shards).batch_writer() as writer:
        for i, score in enumerate(rng.sample(range(10 ** 12), SCORES)):
            player = f"player{i:06d}"
            shard = bed.fnv1a_32(player.encode()) % shards
            writer.put_item(Item={"pk": f"{GAME}#{shard}",
                                  "sk": f"{score:020d}#{player}",
                                  "game_id": GAME, "player_id": player,
                                  "score": score})


def resource_table(name_or_shards):
    """boto3's Table for a table of this bench, straight to DynamoDB Local,
    in a session of its own (sessions are not shared between threads)."""
    name = (topn_table(name_or_shards) if isinstance(name_or_shards, int)
            else name_or_shards)
    return boto3.session.Session().resource(
        "dynamodb", endpoint_url=bed.env("SHARD_FDW_DIRECT_ENDPOINT"),
        region_name=os.environ.get("SHARD_FDW_REGION", "us-east-1"),
        aws_access_key_id=bed.env("SHARD_FDW_ACCESS_KEY"),
        aws_secret_access_key=bed.env("SHARD_FDW_SECRET_KEY")).Table(name)


def load_scan(client):
    """SCAN_ITEMS items of about 200 bytes each: a key and seven attributes
    of the usual types."""
    bed.create_table(client, "cpu_scan", "id")
    rng = random.Random(11)
    with resource_table("cpu_scan").batch_writer() as writer:
        for i in range(SCAN_ITEMS):
            writer.put_item(Item={
                "id": f"item#{i:08d}",
                "name": f"customer {rng.randrange(10 ** 6):06d}",
                "email": f"user{rng.randrange(10 ** 6)}@example.com",
                "city": rng.choice(["Lisbon", "Oslo", "Lima", "Perth"]),
                "qty": rng.randrange(1000),
                "price": Decimal(rng.randrange(10 ** 6)) / 100,
                "active": rng.random() < 0.5,
                "note": "x" * rng.randrange(40, 80)})


def setup_sql():
    credentials = (f"access_key_id '{bed.env('SHARD_FDW_ACCESS_KEY')}', "
                   f"secret_access_key '{bed.env('SHARD_FDW_SECRET_KEY')}'")
    parts = [f"""
        DROP SERVER IF EXISTS cpu_direct CASCADE;
        CREATE EXTENSION IF NOT EXISTS shard_fdw;
        CREATE SERVER cpu_direct FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_DIRECT_ENDPOINT")}');
        CREATE USER MAPPING FOR CURRENT_USER SERVER cpu_direct
          OPTIONS ({credentials});
        CREATE FOREIGN TABLE cpu_scan (id text, name text, email text,
          city text, qty int, price numeric, active bool, note text)
          SERVER cpu_direct OPTIONS (table 'cpu_scan', partition_key 'id');"""]
    for shards in SHARD_COUNTS:
        parts.append(f"""
        CREATE FOREIGN TABLE {topn_table(shards)} (game_id text NOT NULL,
          player_id text NOT NULL, score bigint NOT NULL)
          SERVER cpu_direct OPTIONS (table '{topn_table(shards)}',
          partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
          sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
          shards '{shards}', shard_strategy 'calculated',
          shard_by 'player_id', shard_hash 'fnv1a_32');""")
    return "\n".join(parts)


def top_query(shards):
    return (f"SELECT player_id, score FROM {topn_table(shards)} "
            f"WHERE game_id = '{GAME}' ORDER BY score DESC LIMIT {TOP}")


SCAN_QUERIES = {
    "count(*)": "SELECT count(*) FROM cpu_scan",
    "every column": "SELECT count(id), count(name), count(email), count(city), "
                    "count(qty), count(price), count(active), count(note) "
                    "FROM cpu_scan",
}


def shard_queries(shards):
    """The HTTP requests of the shard Queries of a top-100 over shards
    shards, as bytes: what the extension sends, but unsigned (DynamoDB
    Local checks no signature) and with a fixed date."""
    host = bed.env("SHARD_FDW_DIRECT_ENDPOINT").split("//")[1].rstrip("/")
    akid = bed.env("SHARD_FDW_ACCESS_KEY")
    requests = []
    for shard in range(shards):
        body = json.dumps({
            "TableName": topn_table(shards), "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": f"{GAME}#{shard}"}},
            "ScanIndexForward": False, "Limit": 6}).encode()
        head = (f"POST / HTTP/1.1\r\nHost: {host}\r\n"
                "Content-Type: application/x-amz-json-1.0\r\n"
                "X-Amz-Target: DynamoDB_20120810.Query\r\n"
                "X-Amz-Date: 20260101T000000Z\r\n"
                f"Authorization: AWS4-HMAC-SHA256 Credential={akid}/20260101/us-east-1/"
                "dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;"
                f"x-amz-target, Signature={'0' * 64}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        requests.append(head.encode() + body)
    return requests


def answer_whole(data):
    """Whether data holds a whole answer, read by its Content-Length."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False
    for line in data[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(data) >= end + 4 + int(value)
    sys.exit("an answer of DynamoDB Local came without Content-Length")


def loopback_kernel_us(shards):
    """Median, lowest and highest of ROUNDS rounds of this process's
    kernel CPU µs per request, each round RUNS times the shard Queries of
    a top-100 over shards shards, all in flight at once."""
    host, port = bed.env("SHARD_FDW_DIRECT_ENDPOINT").split("//")[1].rstrip("/").rsplit(":", 1)
    requests = shard_queries(shards)
    conns = [socket.create_connection((host, int(port))) for _ in requests]
    poller = select.epoll()
    for conn in conns:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        poller.register(conn.fileno(), select.EPOLLIN)
    by_fd = {conn.fileno(): i for i, conn in enumerate(conns)}

    def exchange():
        for conn, request in zip(conns, requests):
            conn.sendall(request)
        answers = [b""] * len(conns)
        left = len(conns)
        while left:
            for fd, _ in poller.poll(5):
                i = by_fd[fd]
                chunk = conns[i].recv(65536)
                if not chunk:
                    sys.exit("DynamoDB Local closed a connection")
                was_whole = answer_whole(answers[i])
                answers[i] += chunk
                if not was_whole and answer_whole(answers[i]):
                    if not answers[i].startswith(b"HTTP/1.1 200"):
                        sys.exit(f"DynamoDB Local answered {answers[i][:200]!r}")
                    left -= 1

    exchange()
    rounds = []
    for _ in range(ROUNDS):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        for _ in range(RUNS):
            exchange()
        after = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        rounds.append((after - before) * 1e6 / (RUNS * shards))
    for conn in conns:
        conn.close()
    poller.close()
    return statistics.median(rounds), min(rounds), max(rounds)


class Backend:
    """One session and its backend, kept for every measurement."""

    def __init__(self):
        self.session = bed.Session(os.environ.get("PGDATABASE", "postgres"))

    def counters(self):
        """The backend's seconds on a CPU, user and kernel CPU seconds (in
        ticks), context switches and minor page faults so far."""
        [stat] = self.session.run(
            "SELECT rtrim(pg_read_file('/proc/self/stat'), E'\\n')")
        [oncpu] = self.session.run(
            "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)")
        [switches] = self.session.run(
            "SELECT sum(trim(split_part(line, ':', 2))::bigint) "
            "FROM regexp_split_to_table(pg_read_file('/proc/self/status'), E'\\n') AS line "
            "WHERE line LIKE '%ctxt_switches:%'")
        # the fields after the command's closing parenthesis, from field 3 on
        fields = stat.rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        return (int(oncpu) / 1e9, int(fields[11]) / tick, int(fields[12]) / tick,
                int(switches), int(fields[7]))

    def run(self, sql, times):
        for _ in range(times):
            self.session.run(sql)

    def cpu_per_statement(self, sql, runs):
        """Median, lowest and highest of ROUNDS rounds of the backend's CPU
        ms per statement, each over runs statements, the kernel's share of
        all rounds' CPU, and the context switches and minor page faults per
        statement over all rounds."""
        self.run(sql, 2)
        rounds = []
        ticks = kernel = 0.0
        switches = faults = 0
        for _ in range(ROUNDS):
            oncpu, user, system, switched, faulted = self.counters()
            self.run(sql, runs)
            oncpu_after, user_after, system_after, switched_after, faulted_after = \
                self.counters()
            rounds.append((oncpu_after - oncpu) * 1000 / runs)
            ticks += user_after - user + system_after - system
            kernel += system_after - system
            switches += switched_after - switched
            faults += faulted_after - faulted
        share = kernel / ticks if ticks > 0 else 0.0
        return (statistics.median(rounds), min(rounds), max(rounds), share,
                switches / (ROUNDS * runs), faults / (ROUNDS * runs))


def main():
    load_before = os.getloadavg()[0]
    client = bed.ddb(direct=True)
    existing = set(client.list_tables()["TableNames"])
    say("loading the tables straight into DynamoDB Local")
    with ThreadPoolExecutor(max_workers=4) as executor:
        jobs = [executor.submit(load_topn, client, n) for n in SHARD_COUNTS
                if topn_table(n) not in existing]
        if "cpu_scan" not in existing:
            jobs.append(executor.submit(load_scan, client))
        for job in jobs:
            job.result()
    bed.psql(setup_sql())

    backend = Backend()
    rows = []
    for shards in SHARD_COUNTS if "topn" in PARTS else ():
        sql = top_query(shards)
        got = backend.session.run(sql)
        if len(got) != TOP:
            sys.exit(f"top-{TOP} over {shards} shards returned {len(got)} rows")
        say(f"timing the top-{TOP} over {shards} shards ({ROUNDS} x {RUNS})")
        rows.append((shards, *backend.cpu_per_statement(sql, RUNS)))
    scans = []
    [[count]] = bed.query("SELECT count(*) FROM cpu_scan")
    for label, sql in SCAN_QUERIES.items() if "scan" in PARTS else ():
        say(f"timing the Scan, {label} ({ROUNDS} x {SCAN_RUNS})")
        scans.append((label, *backend.cpu_per_statement(sql, SCAN_RUNS)))
    backend.session.close()
    loopback = None
    if "loopback" in PARTS:
        say(f"timing a bare client's {max(SHARD_COUNTS)} shard Queries ({ROUNDS} x {RUNS})")
        loopback = loopback_kernel_us(max(SHARD_COUNTS))

    print()
    print(f"backend CPU, DynamoDB Local directly; {os.cpu_count()} CPUs, load "
          f"average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after; "
          f"median (lowest-highest) of {ROUNDS} rounds")
    print(f"{'top-100 over N':>14}{'ms/statement':>22}{'us/request':>12}"
          f"{'us/item':>9}{'kernel':>8}{'switches':>10}{'faults':>8}")
    for shards, median, low, high, kernel, switches, faults in rows:
        print(f"{shards:>14}{median:>10.2f} ({low:.2f}-{high:.2f})"
              f"{median * 1000 / shards:>12.0f}"
              f"{median * 1000 / min(TOP * shards, SCORES):>9.2f}{kernel:>8.0%}"
              f"{switches:>10.1f}{faults:>8.1f}")
    print(f"{'Scan of ' + count + ' items':>24}{'ms/statement':>14}{'us/item':>22}"
          f"{'kernel':>8}{'switches':>10}{'faults':>8}")
    for label, median, low, high, kernel, switches, faults in scans:
        print(f"{label:>24}{median:>14.1f}{median * 1000 / int(count):>9.2f} "
              f"({low * 1000 / int(count):.2f}-{high * 1000 / int(count):.2f})"
              f"{kernel:>8.0%}{switches:>10.1f}{faults:>8.1f}")
    if loopback:
        median, low, high = loopback
        print(f"a bare client, the same {max(SHARD_COUNTS)} Queries at once: kernel "
              f"{median:.1f} us per request ({low:.1f}-{high:.1f})")


if __name__ == "__main__":
    main()
