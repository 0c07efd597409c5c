#!/usr/bin/python3
"""A server whose endpoint is wrong says so; one that is only slow to come
up is waited for.

Real endpoints that are not DynamoDB: Python's own http.server (a plain web
server answering HTML), a TCP server that closes every connection without
answering, a port where nothing listens, and a host name that does not
resolve.  A fresh backend's first request to each is retried as any
request is (max_retries, here 2, so 3 attempts), except the web server's
answer, which is final at once; after the retries the message names the
endpoint and the option to change when the endpoint could not be reached
or answered as no DynamoDB does.  A port where nothing listens yet, whose
server starts while the first request is retried, is read through.  The
same server pointed at DynamoDB then works.  Ends with "N passed, N
failed".
"""

import http.server
import re
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


class Relay(socketserver.BaseRequestHandler):
    """Relays the connection to the test bed's DynamoDB proxy."""

    def handle(self):
        upstream = bed.env("SHARD_FDW_ENDPOINT").split("//")[1].rstrip("/")
        host, port = upstream.rsplit(":", 1)
        with socketserver.socket.create_connection((host, int(port))) as up:
            pumps = [threading.Thread(target=self.pump, args=pair, daemon=True)
                     for pair in ((self.request, up), (up, self.request))]
            for pump in pumps:
                pump.start()
            for pump in pumps:
                pump.join()

    @staticmethod
    def pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socketserver.socket.SHUT_RDWR)
            except OSError:
                pass


def serve(server):
    """Run a socketserver on a thread of its own; returns its URL."""
    servers.append(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address
    return f"http://{host}:{port}"


def first_request(endpoint, max_retries=2):
    """Point server ddb at endpoint and read through it in a fresh backend;
    returns (seconds, psql's result, the attempts it made)."""
    sql(f"ALTER SERVER ddb OPTIONS (SET endpoint '{endpoint}', SET max_retries '{max_retries}')")
    started = time.monotonic()
    result = bed.psql("""
        DO $$ BEGIN PERFORM shard_fdw_request('ddb', 'ListTables', '{}');
        EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'failed: % / %', SQLERRM, SQLSTATE; END $$;
        SELECT attempts FROM shard_fdw_stats();
        SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames';""",
                      check=False, database=DATABASE)
    return time.monotonic() - started, result, int(result.stdout.split()[0])


def check_wrong(endpoint, words, attempts, max_retries=2):
    """The first request to endpoint fails after attempts attempts, with
    words in its message; for an endpoint that looks wrong, with the ALTER
    SERVER that mends it."""
    seconds, result, made = first_request(endpoint, max_retries)
    assert result.returncode != 0, f"no error from {endpoint}"
    print(f"     {endpoint}: {seconds:.3f} s, {made} attempts: {result.stderr.splitlines()[0]}")
    assert words in result.stderr, result.stderr
    assert made == attempts, f"{made} attempts"
    assert re.search(rf"[ (]{attempts} attempts?\)", result.stderr), result.stderr
    return seconds, result.stderr


@runner.test
def plain_web_server():
    url = serve(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet))
    seconds, stderr = check_wrong(url, "does not answer like DynamoDB", 1)
    assert 'ALTER SERVER ddb OPTIONS (SET endpoint' in stderr, stderr
    assert seconds < 2, f"{seconds:.1f} s to fail"


@runner.test
def server_that_closes_the_connection():
    url = serve(socketserver.ThreadingTCPServer(("127.0.0.1", 0), Closer))
    _, stderr = check_wrong(url, "the connection closed before any answer", 3)
    assert "does not answer like DynamoDB" not in stderr, stderr


@runner.test
def nothing_listens():
    _, stderr = check_wrong(f"http://127.0.0.1:{bed.free_port()}",
                            "could not connect to endpoint", 3)
    assert 'ALTER SERVER ddb OPTIONS (SET endpoint' in stderr, stderr


@runner.test
def host_does_not_resolve():
    check_wrong("http://no-such-host.invalid:8000", "could not connect to endpoint", 2,
                max_retries=1)


@runner.test
def endpoint_that_comes_up_during_the_retries():
    """Nothing listens at the first attempt; the server starts 0.3 s later
    and the first request, retried meanwhile, gets through."""
    port = bed.free_port()
    started = []

    def come_up():
        time.sleep(0.3)
        started.append(serve(socketserver.ThreadingTCPServer(("127.0.0.1", port), Relay)))

    threading.Thread(target=come_up, daemon=True).start()
    seconds, result, made = first_request(f"http://127.0.0.1:{port}", max_retries=10)
    assert started, "the server never came up"
    assert "failed:" not in result.stderr and result.returncode == 0, result.stderr
    assert made >= 2, f"{made} attempts: the server was up at once"
    assert result.stdout.split()[1] == "t", result.stdout
    print(f"     up after 0.3 s: read after {made} attempts, {seconds:.2f} s")


@runner.test
def dynamodb_then_answers():
    sql(f"ALTER SERVER ddb OPTIONS (SET endpoint '{bed.env('SHARD_FDW_ENDPOINT')}')")
    rows = bed.query("SELECT shard_fdw_request('ddb', 'ListTables', '{}') ? 'TableNames'",
                     database=DATABASE)
    assert rows == [["t"]], rows


def set_up():
    bed.psql(f"CREATE DATABASE {DATABASE}")
    sql("CREATE EXTENSION shard_fdw;" + bed.server_sql())
    sql("ALTER SERVER ddb OPTIONS (ADD max_retries '2')")


def tear_down():
    for server in servers:
        server.shutdown()
        server.server_close()
    bed.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    runner.main(set_up, tear_down)
