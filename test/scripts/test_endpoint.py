#!/usr/bin/python3
"""A server whose endpoint is wrong fails at once, saying so.

Real endpoints that are not DynamoDB: Python's own http.server (a plain web
server answering HTML), a TCP server that closes every connection without
answering, and a port where nothing listens.  A fresh backend's first
request to each must fail within 2 s with the server's default max_retries
(10), after one attempt, naming the endpoint and the option to change;
the same server pointed at DynamoDB then works.  Ends with "N passed, N
failed".
"""

import http.server
import socket
import socketserver
import threading
import time

import bed

runner = bed.Runner()
DATABASE = bed.unique_name("endpoint")
sql = bed.in_database(DATABASE)
servers = []


class Quiet(http.server.SimpleHTTPRequestHandler):
    """http.server's handler, without its log lines."""

    def log_message(self, *args):
        pass


class Closer(socketserver.BaseRequestHandler):
    """Reads the request, then closes the connection without a word."""

    def handle(self):
        self.request.recv(65536)


def serve(server):
    """Run a socketserver on a thread of its own; returns its URL."""
    servers.append(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address
    return f"http://{host}:{port}"


def free_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def first_request(endpoint):
    """Point server ddb at endpoint and read through it in a fresh backend;
    returns (seconds, psql's stderr, attempts made)."""
    sql(f"ALTER SERVER ddb OPTIONS (SET endpoint '{endpoint}')")
    started = time.monotonic()
    result = bed.psql("SELECT shard_fdw_request('ddb', 'ListTables', '{}')",
                      check=False, database=DATABASE)
    seconds = time.monotonic() - started
    assert result.returncode != 0, f"no error from {endpoint}"
    return seconds, result.stderr


def attempts_of(endpoint):
    """The attempts one failing request to endpoint makes in one backend."""
    sql(f"ALTER SERVER ddb OPTIONS (SET endpoint '{endpoint}')")
    rows = bed.query("""
        DO $$ BEGIN PERFORM shard_fdw_request('ddb', 'ListTables', '{}');
        EXCEPTION WHEN OTHERS THEN NULL; END $$;
        SELECT attempts FROM shard_fdw_stats();""", database=DATABASE)
    return int(rows[0][0])


def check_fast(endpoint, words):
    """The first request to endpoint fails within 2 s, after one attempt,
    with words in its message and the ALTER SERVER that mends it."""
    seconds, stderr = first_request(endpoint)
    print(f"     {endpoint}: {seconds:.3f} s: {stderr.splitlines()[0]}")
    assert seconds < 2, f"{seconds:.1f} s to fail"
    assert words in stderr, stderr
    assert 'ALTER SERVER ddb OPTIONS (SET endpoint' in stderr, stderr
    assert attempts_of(endpoint) == 1


@runner.test
def plain_web_server():
    url = serve(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet))
    check_fast(url, "does not answer like DynamoDB")


@runner.test
def server_that_closes_the_connection():
    url = serve(socketserver.ThreadingTCPServer(("127.0.0.1", 0), Closer))
    check_fast(url, "does not answer like DynamoDB")


@runner.test
def nothing_listens():
    check_fast(f"http://127.0.0.1:{free_port()}", "could not connect to endpoint")


@runner.test
def dynamodb_then_answers():
    sql(f"ALTER SERVER ddb OPTIONS (SET endpoint '{bed.env('SHARD_FDW_ENDPOINT')}')")
    rows = bed.query("SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames'",
                     database=DATABASE)
    assert rows == [["t"]], rows


def set_up():
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql("CREATE EXTENSION shard_fdw;" + bed.server_sql())


def tear_down():
    for server in servers:
        server.shutdown()
        server.server_close()
    bed.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    runner.main(set_up, tear_down)
