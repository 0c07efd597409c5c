#!/usr/bin/python3
"""Local endpoints speaking the AWS credential sources' protocols.

The real services cannot run here, so this server answers as they are
documented, on one loopback port:

* STS (POST /, query protocol, version 2011-06-15): AssumeRole, whose
  SigV4 signature (service "sts") it verifies against the credentials it
  knows, and AssumeRoleWithWebIdentity, unsigned, with a web identity
  token; XML answers, errors as <ErrorResponse> with a Code.
* The container credentials endpoint (GET /container/credentials): the
  Authorization header must carry the configured token; JSON answers
  ({"AccessKeyId", "SecretAccessKey", "Token", "Expiration"}).
* EC2 instance metadata: PUT /latest/api/token with
  X-aws-ec2-metadata-token-ttl-seconds gives a session token, which
  GET /latest/meta-data/iam/security-credentials/ (the role's name) and
  .../<role> (its JSON credentials) require in X-aws-ec2-metadata-token;
  a request without it gets 401, as where IMDSv2 is enforced, unless
  `imds_v1` allows IMDSv1.  The token request can be refused
  (`imds_token_status`) or held back (`imds_token_delay_s`), as a
  container behind a hop limit of 1 sees it.
* The IAM Identity Center (SSO) portal (GET /federation/credentials
  ?role_name=...&account_id=...): the x-amz-sso_bearer_token header must
  carry an access token that may use that account's role (`sso_tokens`);
  JSON answers ({"roleCredentials": {..., "expiration": epoch ms}}),
  errors as {"message"} with the x-amzn-ErrorType header.

Any of them may be proxied to (http_proxy): a request whose target is an
absolute URL is served as if it had come straight.  `failures` makes the
next requests of a kind fail first, with an HTTP status and an error code
in that service's form, as a throttled or failing service answers.

Every credential it hands out comes from a fixed pool (pool_credentials;
the "process" pool is for the tests' credential_process scripts),
so that the DynamoDB proxy can be started knowing them all and verify that
requests really arrive signed with what was fetched.  Each lives
`lifetime_s` seconds.  Every answer can be held back `delay_s` seconds,
as a slow or distant service would; the log records when each request
arrived (`at`, on the monotonic clock the DynamoDB proxy's log uses too).
The test driver (test/scripts/test_credentials.py)
runs it in-process and reads its counters and request log; run alone,
`awsendpoints.py --listen-port N [--delay-s S] [--static AKID:SECRET ...]` serves until
killed and prints the pool.
"""

import argparse
import datetime
import itertools
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddbprotocol import ProxyError  # noqa: E402
from sigv4check import SignatureVerifier  # noqa: E402

STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"
POOL_SIZE = 60
SOURCES = ("role", "web", "container", "imds", "sso", "process")
IMDS_ROLE = "shard-fdw-instance-role"


def pool_credentials(source, i):
    """The i-th credentials the endpoint hands out for source."""
    return (f"ASIA{source.upper()}{i:04d}", f"secret/{source}+{i}",
            f"token-{source}-{i}")


def all_pool_credentials():
    """Every credential of every pool, as (akid, secret, token)."""
    return [pool_credentials(s, i) for s in SOURCES for i in range(POOL_SIZE)]


def iso(epoch):
    """An ISO 8601 UTC time."""
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")


class Endpoints:
    """The state the handlers share; tests change its attributes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lifetime_s = 3600
        self.delay_s = 0.0          # answers are held back this long
        self.pad_bytes = 0          # spaces after each answer's text
        self.roles = {}             # role ARN -> {"external_id", "principals"}
        self.web_tokens = {}        # token -> "valid" or "expired"
        self.container_token = None
        self.static = {}            # akid -> secret of keys it accepts
        self.next = {s: itertools.count() for s in SOURCES}
        self.expiry = {}            # akid -> epoch seconds it expires at
        self.imds_tokens = set()
        self.imds_v1 = False        # GETs without a session token are served
        self.imds_token_status = 200    # what PUT /latest/api/token answers
        self.imds_token_delay_s = 0.0   # and after how long
        self.sso_tokens = {}        # SSO access token -> {(account_id, role_name)}
        self.failures = {}          # kind -> [(status, code or None)] answered first
        self.counts = {}
        self.log = []

    def take_failure(self, kind):
        """The failure the next request of kind gets, or None."""
        with self.lock:
            queue = self.failures.get(kind)
            return queue.pop(0) if queue else None

    def count(self, name, record):
        """Count a request by name and log it."""
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            self.log.append(dict(record, kind=name, at=time.monotonic()))

    def reset_counts(self):
        """Zero the counters and the log."""
        with self.lock:
            self.counts = {}
            self.log = []

    def issue(self, source):
        """The next credentials of source's pool, with their expiry."""
        with self.lock:
            i = next(self.next[source])
            akid, secret, token = pool_credentials(source, i % POOL_SIZE)
            expires = int(datetime.datetime.now().timestamp()) + self.lifetime_s
            self.expiry[akid] = expires
        return {"AccessKeyId": akid, "SecretAccessKey": secret,
                "Token": token, "Expiration": iso(expires)}

    def known_credentials(self):
        """akid -> (secret, token) of everything that may sign for STS."""
        known = {akid: (secret, None) for akid, secret in self.static.items()}
        for akid, secret, token in all_pool_credentials():
            known[akid] = (secret, token)
        return known


def sts_error(code, message, status=403):
    """An STS error answer."""
    return status, (f'<ErrorResponse xmlns="{STS_NS}"><Error><Type>Sender</Type>'
                    f"<Code>{code}</Code><Message>{message}</Message></Error>"
                    "<RequestId>00000000-0000-0000-0000-000000000000</RequestId>"
                    "</ErrorResponse>")


def sts_answer(action, creds):
    """An STS AssumeRole or AssumeRoleWithWebIdentity answer."""
    return 200, (f'<{action}Response xmlns="{STS_NS}">\n'
                 f"  <{action}Result>\n"
                 "    <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/r/s</Arn>"
                 "<AssumedRoleId>AROAEXAMPLE:s</AssumedRoleId></AssumedRoleUser>\n"
                 "    <Credentials>\n"
                 f"      <AccessKeyId>{creds['AccessKeyId']}</AccessKeyId>\n"
                 f"      <SecretAccessKey>{creds['SecretAccessKey']}</SecretAccessKey>\n"
                 f"      <SessionToken>{creds['Token']}</SessionToken>\n"
                 f"      <Expiration>{creds['Expiration']}</Expiration>\n"
                 "    </Credentials>\n"
                 "    <PackedPolicySize>6</PackedPolicySize>\n"
                 f"  </{action}Result>\n"
                 "  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7"
                 "</RequestId></ResponseMetadata>\n"
                 f"</{action}Response>\n")


class Handler(BaseHTTPRequestHandler):
    """One request to any of the endpoints."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002  (BaseHTTPRequestHandler's name)
        """Quiet: the test reads the counters instead."""

    @property
    def state(self):
        """The shared Endpoints."""
        return self.server.endpoints

    @property
    def target(self):
        """The request's path and query, also when it came through a proxy
        as an absolute URL."""
        if self.path.startswith(("http://", "https://")):
            parts = urllib.parse.urlsplit(self.path)
            return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return self.path

    def body(self):
        """The request body."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, text, content_type, delay_s=None, headers=()):
        """Send an answer, delay_s (by default the endpoints' delay_s)
        after the request came."""
        time.sleep(self.state.delay_s if delay_s is None else delay_s)
        data = text.encode() + b" " * self.state.pad_bytes
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802  (BaseHTTPRequestHandler's name)
        """STS."""
        body = self.body()
        params = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
        action = params.get("Action")
        record = {"params": params, "signed": "Authorization" in self.headers,
                  "host": self.headers.get("Host")}
        failure = self.state.take_failure(f"sts:{action}")
        if failure:
            status, text = sts_error(failure[1] or "InternalFailure", "failing as told", failure[0])
        elif action == "AssumeRole":
            status, text = self.assume_role(params, body, record)
        elif action == "AssumeRoleWithWebIdentity":
            status, text = self.assume_role_with_web_identity(params, record)
        else:
            status, text = sts_error("InvalidAction", f"Could not find operation {action}", 400)
        record["status"] = status
        self.state.count(f"sts:{action}", record)
        self.answer(status, text, "text/xml")

    def assume_role(self, params, body, record):
        """STS AssumeRole: verify the signature, then the role's trust."""
        verifier = SignatureVerifier(self.state.known_credentials(), service="sts")
        try:
            access_key = verifier.verify("POST", self.target, self.headers, body)
        except ProxyError as err:
            code = {"UnrecognizedClientException": "InvalidClientTokenId",
                    "InvalidSignatureException": "SignatureDoesNotMatch"}.get(
                        err.error_type.split("#")[-1], "IncompleteSignature")
            return sts_error(code, err.message.splitlines()[0])
        record["access_key"] = access_key
        expires = self.state.expiry.get(access_key)
        if expires is not None and expires <= datetime.datetime.now().timestamp():
            return sts_error("ExpiredToken",
                             "The security token included in the request is expired", 400)
        role = self.state.roles.get(params.get("RoleArn"))
        if role is None or (role.get("principals") is not None and
                            access_key not in role["principals"]):
            return sts_error("AccessDenied",
                             f"User: {access_key} is not authorized to perform: "
                             f"sts:AssumeRole on resource: {params.get('RoleArn')}")
        if role.get("external_id") is not None and \
                params.get("ExternalId") != role["external_id"]:
            return sts_error("AccessDenied", "The external ID does not match")
        if not params.get("RoleSessionName"):
            return sts_error("ValidationError", "RoleSessionName is required", 400)
        return sts_answer("AssumeRole", self.state.issue("role"))

    def assume_role_with_web_identity(self, params, record):
        """STS AssumeRoleWithWebIdentity: the token and the role."""
        verdict = self.state.web_tokens.get(params.get("WebIdentityToken"))
        if verdict == "expired":
            return sts_error("ExpiredTokenException", "Token expired: current date/time "
                             "must be before the expiration date/time", 400)
        if verdict != "valid":
            return sts_error("InvalidIdentityToken",
                             "The web identity token that was passed could not be validated", 400)
        if params.get("RoleArn") not in self.state.roles:
            return sts_error("AccessDenied", "Not authorized to perform "
                             "sts:AssumeRoleWithWebIdentity")
        return sts_answer("AssumeRoleWithWebIdentity", self.state.issue("web"))

    def do_PUT(self):  # noqa: N802  (BaseHTTPRequestHandler's name)
        """IMDSv2's session token."""
        self.body()
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        record = {"path": self.target, "ttl": ttl}
        failure = self.state.take_failure("imds:token")
        if self.target != "/latest/api/token" or ttl is None:
            status = 400
        else:
            status = failure[0] if failure else self.state.imds_token_status
        token = ""
        if status == 200:
            with self.state.lock:
                token = f"imds-session-{len(self.state.imds_tokens)}"
                self.state.imds_tokens.add(token)
        record["status"] = status
        self.state.count("imds:token", record)
        self.answer(status, token, "text/plain",
                    delay_s=self.state.delay_s + self.state.imds_token_delay_s)

    def do_GET(self):  # noqa: N802  (BaseHTTPRequestHandler's name)
        """The container endpoint, the SSO portal and IMDS's credential paths."""
        if self.target.startswith("/container/"):
            self.container()
            return
        if self.target.startswith("/federation/credentials"):
            self.sso()
            return
        prefix = "/latest/meta-data/iam/security-credentials/"
        token = self.headers.get("X-aws-ec2-metadata-token")
        record = {"path": self.target, "token": token}
        if token not in self.state.imds_tokens and not (token is None and self.state.imds_v1):
            status, text, kind = 401, "", "imds:unauthorized"
        elif self.target == prefix:
            status, text, kind = 200, IMDS_ROLE + "\n", "imds:role"
        elif self.target == prefix + IMDS_ROLE:
            status, kind = 200, "imds:credentials"
            text = None
        else:
            status, text, kind = 404, "", "imds:notfound"
        failure = self.state.take_failure(kind)
        if failure:
            status, text = failure[0], ""
        elif text is None:
            creds = self.state.issue("imds")
            text = json.dumps(dict({"Code": "Success", "LastUpdated": iso(0),
                                    "Type": "AWS-HMAC"}, **creds), indent=2)
        record["status"] = status
        self.state.count(kind, record)
        self.answer(status, text, "text/plain")

    def container(self):
        """The container credentials endpoint."""
        auth = self.headers.get("Authorization")
        record = {"path": self.target, "authorization": auth}
        failure = self.state.take_failure("container")
        if failure:
            status, text = failure[0], json.dumps({"code": failure[1], "message": "failing as told"}) \
                if failure[1] else ""
        elif self.state.container_token is not None and auth != self.state.container_token:
            status, text = 401, json.dumps({"code": "InvalidToken",
                                            "message": "the authorization token is not valid"})
        else:
            status, text = 200, json.dumps(self.state.issue("container"))
        record["status"] = status
        self.state.count("container", record)
        self.answer(status, text, "application/json")

    def sso(self):
        """The SSO portal's GetRoleCredentials."""
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.target).query))
        token = self.headers.get("x-amz-sso_bearer_token")
        record = {"path": self.target, "token": token,
                  "account_id": query.get("account_id"), "role_name": query.get("role_name")}
        grants = self.state.sso_tokens.get(token)
        failure = self.state.take_failure("sso")
        if failure:
            status, code = failure[0], failure[1] or "InternalServerException"
        elif grants is None:
            status, code = 401, "UnauthorizedException"
        elif (query.get("account_id"), query.get("role_name")) not in grants:
            status, code = 403, "ForbiddenException"
        else:
            status, code = 200, None
        if code:
            text = json.dumps({"message": {401: "Session token not found or invalid",
                                           403: "No access"}.get(status, "failing as told")})
            headers = [("x-amzn-ErrorType", f"{code}:http://internal.amazon.com/coral/"
                        "com.amazon.switchboard.portal/")]
        else:
            creds = self.state.issue("sso")
            text = json.dumps({"roleCredentials": {
                "accessKeyId": creds["AccessKeyId"], "secretAccessKey": creds["SecretAccessKey"],
                "sessionToken": creds["Token"],
                "expiration": self.state.expiry[creds["AccessKeyId"]] * 1000}})
            headers = []
        record["status"] = status
        self.state.count("sso", record)
        self.answer(status, text, "application/json", headers=headers)


class Server(ThreadingHTTPServer):
    """The listening socket."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        """Quiet about a client that went away (a refresh stopped, or
        timed out while its answer was held back)."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def start(port=0):
    """Start the endpoints on 127.0.0.1:port in a thread; returns the
    server (its .endpoints is the shared state, .server_address its port)."""
    server = Server(("127.0.0.1", port), Handler)
    server.endpoints = Endpoints()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv):
    """Serve until killed, with one role any key may assume."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen-port", type=int, required=True)
    parser.add_argument("--role", default="arn:aws:iam::123456789012:role/shard-fdw")
    parser.add_argument("--web-token", default="web-identity-token")
    parser.add_argument("--container-token", default=None)
    parser.add_argument("--lifetime-s", type=int, default=3600)
    parser.add_argument("--delay-s", type=float, default=0.0,
                        help="hold every answer back this many seconds")
    parser.add_argument("--static", action="append", default=[], metavar="AKID:SECRET",
                        help="static keys STS accepts for AssumeRole (repeatable)")
    args = parser.parse_args(argv)
    server = start(args.listen_port)
    state = server.endpoints
    state.roles[args.role] = {"external_id": None, "principals": None}
    state.web_tokens[args.web_token] = "valid"
    state.container_token = args.container_token
    state.lifetime_s = args.lifetime_s
    state.delay_s = args.delay_s
    state.static = dict(pair.split(":", 1) for pair in args.static)
    print(f"awsendpoints: http://127.0.0.1:{server.server_address[1]}; the proxy "
          "should know: " + " ".join(f"--credentials {a}:{s}:{t}"
                                     for a, s, t in all_pool_credentials()),
          file=sys.stderr, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
