#!/usr/bin/python3
"""Requests over TLS, and kept-alive connections the server closes.

A front of ours relays every connection it accepts to the test bed's
DynamoDB proxy, byte for byte: once speaking TLS with a certificate made
for this run (openssl, for 127.0.0.1), once plain TCP.  Through each:

* reads and writes give the rows computed here: a leaderboard of 600
  players sharded 20 ways written by INSERT (BatchWriteItem), its top-100
  merged from the shards, count(*), and a Scan of 2 kB rows whose pages
  span many TLS records;
* the connections stay open across statements (the front counts what it
  accepts);
* when the front closes every connection between two statements (what a
  server does to idle connections), the next statement gives the same rows
  in the same backend: a request that finds its kept-alive connection
  closed goes out again on a new one.

A TLS front that prefers h2 whenever a client offers it (and then reads
no HTTP/1.1, as an HTTP/2 server would not) gives the same rows: ALPN
offers http/1.1 alone.

Over TLS, a server whose certificate is not trusted (no ca_file) fails the
first read at once, without retries, with libcurl's reason.

A PostgreSQL server whose environment names an HTTP proxy (http_proxy,
https_proxy: a cluster of the test's own) sends its DynamoDB requests
through it as CONNECT tunnels, to the plain and the TLS front alike, with
the same rows.  Ends with "N passed, N failed".
"""

import os
import random
import shutil
import socket
import ssl
import sys
import tempfile
import threading

import bed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proxy"))
from wirefront import accepted, make_certificate  # noqa: E402

runner, DATABASE, sql, client, tables = bed.scratch("tls")
fronts = []
PLAYERS = 600
SHARDS = 20
PAYLOAD = 2000
rng = random.Random(int(os.environ.get("SHARD_FDW_TEST_SEED", "20261126")))
SCORES = rng.sample(range(1, 10_000_000), PLAYERS)
CERT_DIR = tempfile.mkdtemp(prefix="shard_fdw_tls_")


class Front:
    """Accepts connections (TLS when context is given) and relays each to
    the DynamoDB proxy on a pair of threads."""

    def __init__(self, context=None, tunnels=False):
        self.context = context
        self.tunnels = tunnels      # a CONNECT proxy: relays where asked
        self.protocols = []         # what ALPN chose on each TLS connection
        upstream = bed.env("SHARD_FDW_ENDPOINT").split("//")[1].rstrip("/")
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.lock = threading.Lock()
        self.accepted = 0
        self.open = set()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self):
        scheme = "https" if self.context else "http"
        return f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self):
        for conn in accepted(self.listener):
            with self.lock:
                self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            if self.context:
                conn = self.context.wrap_socket(conn, server_side=True)
                with self.lock:
                    self.protocols.append(conn.selected_alpn_protocol())
                if conn.selected_alpn_protocol() == "h2":
                    raise ValueError("an HTTP/2 server reads no HTTP/1.1 request")
            up = socket.create_connection(self._tunnel(conn) if self.tunnels
                                          else self.upstream)
            if self.tunnels:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        except (OSError, ssl.SSLError, ValueError):
            conn.close()
            return
        with self.lock:
            self.open.add(conn)
        back = threading.Thread(target=self._pump, args=(up, conn), daemon=True)
        back.start()
        self._pump(conn, up)
        back.join()
        with self.lock:
            self.open.discard(conn)
        conn.close()
        up.close()

    @staticmethod
    def _tunnel(conn):
        """Read a CONNECT request's head; returns where it asks to go."""
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(4096)
            if not data:
                raise ValueError("no CONNECT request")
            head += data
        method, target = head.split(b" ")[:2]
        if method != b"CONNECT":
            raise ValueError(f"{method!r} is not CONNECT")
        host, port = target.decode().rsplit(":", 1)
        return host, int(port)

    @staticmethod
    def _pump(source, sink):
        """Copy source to sink until either ends; then end both."""
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except (OSError, ssl.SSLError):
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close_all(self):
        """Close every connection, as a server closes idle ones."""
        with self.lock:
            conns = list(self.open)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self.listener.close()
        self.close_all()


def tls_context(alpn=None):
    """A server context with the run's certificate, choosing among the
    protocols alpn (in its order of preference) when given."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(f"{CERT_DIR}/cert.pem", f"{CERT_DIR}/key.pem")
    if alpn:
        context.set_alpn_protocols(alpn)
    return context


def declare(server, front, ca_file=True):
    """Server, user mapping and a leaderboard table over front."""
    return declare_in(sql, server, front, ca_file)


def declare_in(run, server, front, ca_file=True):
    """declare, running its SQL with run."""
    table = bed.new_table(client, tables, "tls", "pk", "sk")
    options = f"endpoint '{front.url}'"
    if ca_file and front.context:
        options += f", ca_file '{CERT_DIR}/cert.pem'"
    run(f"""
        CREATE SERVER {server} FOREIGN DATA WRAPPER shard_fdw OPTIONS ({options});
        CREATE USER MAPPING FOR CURRENT_USER SERVER {server}
          OPTIONS (access_key_id '{bed.env("SHARD_FDW_ACCESS_KEY")}',
                   secret_access_key '{bed.env("SHARD_FDW_SECRET_KEY")}');
        CREATE FOREIGN TABLE {server}_lb (game_id text, player_id text, score bigint,
                                          payload text)
          SERVER {server} OPTIONS (table '{table}',
            partition_key 'pk', partition_key_format '{{game_id}}#{{shard}}',
            sort_key 'sk', sort_key_format '{{score:020}}#{{player_id}}',
            shards '{SHARDS}', shard_strategy 'calculated', shard_by 'player_id',
            shard_hash 'fnv1a_32', insert_mode 'upsert');""")
    return f"{server}_lb"


def expected_top():
    ranked = sorted(((s, f"p{i:04d}") for i, s in enumerate(SCORES)), reverse=True)
    return [[p, str(s)] for s, p in ranked[:100]]


def statements(session, name):
    """Run the reads of the test in session; return their results."""
    top = session.run(f"SELECT player_id, score FROM {name} WHERE game_id = 'g' "
                      "ORDER BY score DESC LIMIT 100")
    count = session.run(f"SELECT count(*) FROM {name} WHERE game_id = 'g'")
    scan = session.run(f"SELECT count(*), sum(length(payload)) FROM {name}")
    return top, count, scan


def check_front(front, server):
    name = declare(server, front)
    sql(f"""INSERT INTO {name}
              SELECT 'g', 'p' || lpad(i::text, 4, '0'), (ARRAY{SCORES})[i + 1],
                     repeat(chr(97 + i % 26), {PAYLOAD})
              FROM generate_series(0, {PLAYERS - 1}) i""")
    want_top = ["|".join(row) for row in expected_top()]
    want = (want_top, [str(PLAYERS)], [f"{PLAYERS}|{PLAYERS * PAYLOAD}"])
    session = bed.Session(DATABASE)
    try:
        first = statements(session, name)
        assert first == want, f"first reads: {first[1:]} / top {first[0][:3]}"
        accepted = front.accepted
        assert statements(session, name) == want
        assert front.accepted == accepted, \
            f"{front.accepted - accepted} new connections for the same reads"
        for round_ in range(3):
            front.close_all()
            got = statements(session, name)
            assert got == want, f"after the close {round_}: {got[1:]}"
        assert front.accepted > accepted, "no new connection after the closes"
        print(f"     {front.url.split(':')[0]}: {front.accepted} connections accepted")
    finally:
        session.close()


@runner.test
def tls_reads_writes_and_closed_connections():
    front = Front(tls_context())
    fronts.append(front)
    check_front(front, "tls")


@runner.test
def a_front_preferring_http2_gets_http1():
    """A front that would choose h2 whenever offered is offered only
    http/1.1, the protocol the requests are framed in."""
    front = Front(tls_context(["h2", "http/1.1"]))
    fronts.append(front)
    check_front(front, "alpn")
    assert front.protocols and set(front.protocols) == {"http/1.1"}, front.protocols


@runner.test
def plain_reads_writes_and_closed_connections():
    front = Front()
    fronts.append(front)
    check_front(front, "plain")


@runner.test
def untrusted_certificate_fails_at_once():
    front = Front(tls_context())
    fronts.append(front)
    name = declare("untrusted", front, ca_file=False)
    result = bed.psql(f"SELECT count(*) FROM {name} WHERE game_id = 'g'",
                      check=False, database=DATABASE)
    assert result.returncode != 0, "an untrusted certificate was accepted"
    assert "certificate" in result.stderr, result.stderr
    assert "(1 attempt)" in result.stderr, result.stderr
    print("     " + "\n     ".join(result.stderr.splitlines()[:3]))
    rows = bed.query(f"""
        DO $$ BEGIN PERFORM count(*) FROM {name} WHERE game_id = 'g';
        EXCEPTION WHEN OTHERS THEN NULL; END $$;
        SELECT attempts FROM shard_fdw_stats();""", database=DATABASE)
    assert int(rows[0][0]) <= SHARDS, f"{rows[0][0]} attempts for {SHARDS} shards"


@runner.test
def through_a_proxy_from_the_environment():
    proxy = Front(tunnels=True)
    targets = {"plain": Front(), "tls": Front(tls_context())}
    fronts.extend([proxy, *targets.values()])
    work = tempfile.mkdtemp(prefix="shard_fdw_tls_proxy.")
    os.chmod(work, 0o755)
    cluster = bed.Cluster(work)
    port = os.environ.get("PGPORT")
    try:
        cluster.start(http_proxy=proxy.url, https_proxy=proxy.url)
        os.environ["PGPORT"] = str(cluster.port)
        run = bed.in_database("postgres")
        run("CREATE EXTENSION shard_fdw")
        for server, front in targets.items():
            name = declare_in(run, f"{server}_proxied", front)
            run(f"""INSERT INTO {name}
                      SELECT 'g', 'p' || i, i * 7, 'x' FROM generate_series(1, 300) i""")
            rows = bed.query(f"SELECT count(*), sum(score) FROM {name} WHERE game_id = 'g'",
                             database="postgres")
            assert rows == [["300", str(7 * 300 * 301 // 2)]], rows
            assert front.accepted > 0, f"nothing reached the {server} front"
        assert proxy.accepted >= sum(f.accepted for f in targets.values()), \
            f"{proxy.accepted} tunnels for {[f.accepted for f in targets.values()]} connections"
        print(f"     {proxy.accepted} tunnels through the proxy")
    finally:
        if port is None:
            os.environ.pop("PGPORT", None)
        else:
            os.environ["PGPORT"] = port
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


def set_up():
    make_certificate(CERT_DIR)
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql("CREATE EXTENSION shard_fdw")


def tear_down():
    for front in fronts:
        front.stop()
    bed.drop_scratch(client, tables, DATABASE)
    bed.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    shutil.rmtree(CERT_DIR, ignore_errors=True)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
