#!/usr/bin/python3
"""The AWS credential sources, end to end, through SQL.

The credential chain is read in the PostgreSQL server's environment, so
this test runs a cluster of its own (restarted with the variables of each
source), a DynamoDB proxy of its own that knows every credential the
sources hand out and verifies each request's SigV4 signature against
them, and test/proxy/awsendpoints.py: local endpoints speaking STS's
(AssumeRole, AssumeRoleWithWebIdentity), the container endpoint's, IMDS's
(v2 and v1) and the SSO portal's documented protocols; a credential_process
is a script the test writes.  For each source it checks that a query
works, that DynamoDB saw requests signed with exactly the credentials the
source handed out, that the credentials are fetched once per backend and
again before they expire, the errors of each source (missing files, STS
error codes, expired tokens, refused URLs, exit statuses), the chain's
order past profiles without credentials, transient failures retried, the
privilege rules, and that no key, secret or token reaches a message or the
server log.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import bed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proxy"))
import awsendpoints  # noqa: E402

runner = bed.Runner()
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STATIC = {"AKIDSTATIC": "secret/static", "AKIDENV": "secret/env",
          "AKIDPROFILE": "secret/profile"}
ROLE = "arn:aws:iam::123456789012:role/reader"
ROLE_EXTERNAL = "arn:aws:iam::210987654321:role/partner"
ROLE_WEB = "arn:aws:iam::123456789012:role/eks-pod"
ROWS = 5
# The big table: items of PAD bytes, a 1 MB page holding 4 or 5 of them, so
# that a sequential Scan of it takes 14 pages or more (LATENCY_MS each, and
# more): 8.4 s at least, past the 2.5 s before a refresh is due plus the
# 3 s of IMDSv2's three answers held back a second each.
PAD = 250_000
BIG_ROWS = 70
LATENCY_MS = 600
state = {}


def write(path, text):
    """Write a file the cluster's user can read."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o644)


# ------------------------------------------------------------------ cluster


def sql(text):
    """Run SQL in the test's cluster; fails on any error."""
    return bed.in_database("postgres")(text)


def attempt(text):
    """Run SQL that may fail; returns (ok, stdout, stderr)."""
    result = bed.psql(text, check=False, database="postgres")
    return result.returncode == 0, result.stdout, result.stderr


def total():
    """SELECT the sum of the table through the foreign table."""
    ok, out, err = attempt("SELECT sum(v) FROM kv")
    assert ok, err
    assert out.strip() == str(sum(range(ROWS))), out
    return out


def fails(text, *wanted):
    """Run text, which must fail with every one of wanted in its message."""
    ok, _, err = attempt(text)
    assert not ok, f"{text} succeeded"
    for piece in wanted:
        assert piece in err, f"{piece!r} not in:\n{err}"
    return err


def mapping(user="CURRENT_USER", **options):
    """Replace user's mapping on server ddb by one with options."""
    given = ", ".join(f"{k} '{v}'" for k, v in options.items())
    sql(f"DROP USER MAPPING IF EXISTS FOR {user} SERVER ddb;"
        f"CREATE USER MAPPING FOR {user} SERVER ddb"
        + (f" OPTIONS ({given})" if given else "") + ";")


def refreshed(session, first, seconds=15):
    """In session, whose credentials (first: their keys) are due for a
    refresh: the first query begins it and goes on with them; the refresh
    moves on while the session's requests do (a step at least per query,
    more in a longer one), so within a few queries one is signed with the
    new keys alone.  Queries go on, a tenth of a second apart, for at most
    seconds.  Returns that query's keys."""
    deadline, queries = time.monotonic() + seconds, 0
    while True:
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        queries += 1
        seen = keys_seen()
        if not seen.keys() & first.keys():
            return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"still signed with {first} after {queries} queries")
        time.sleep(0.1)


def keys_seen():
    """The access keys DynamoDB requests were signed with since the last
    call (the proxy verified every signature)."""
    stats = bed.stats()["signatures"]
    bed.reset_proxy()
    assert stats["rejected"] == 0, stats
    return stats["access_keys"]


def endpoint_log():
    """The requests the credential endpoints got since the last call."""
    endpoints = state["endpoints"]
    with endpoints.lock:
        log = list(endpoints.log)
    endpoints.reset_counts()
    return log


def kinds(log):
    """The kinds of the logged requests, in order."""
    return [entry["kind"] for entry in log]


# ------------------------------------------------------------------ set-up


def set_up():
    """DynamoDB table, endpoints, proxy, cluster, server and foreign table."""
    work = tempfile.mkdtemp(prefix="shard_fdw_creds.")
    os.chmod(work, 0o755)
    state["work"] = work
    server = awsendpoints.start()
    endpoints = server.endpoints
    endpoints.static = dict(STATIC)
    endpoints.roles[ROLE] = {"external_id": None, "principals": None}
    endpoints.roles[ROLE_EXTERNAL] = {"external_id": "partner-42", "principals": {"AKIDSTATIC"}}
    endpoints.roles[ROLE_WEB] = {"external_id": None, "principals": None}
    endpoints.web_tokens["web-token-1"] = "valid"
    endpoints.web_tokens["web-token-expired"] = "expired"
    endpoints.container_token = "container-auth-1"
    state["endpoints"] = endpoints
    state["ep"] = f"http://127.0.0.1:{server.server_address[1]}"

    port = bed.free_port()
    credentials = [f"{k}:{v}" for k, v in STATIC.items()] + \
        [f"{a}:{s}:{t}" for a, s, t in awsendpoints.all_pool_credentials()]
    command = [sys.executable, os.path.join(REPO, "test", "proxy", "ddbproxy.py"),
               "--listen-port", str(port), "--backend", bed.env("SHARD_FDW_DIRECT_ENDPOINT")]
    for c in credentials:
        command += ["--credentials", c]
    state["proxy_log"] = open(os.path.join(work, "proxy.log"), "w", encoding="utf-8")
    state["proxy"] = subprocess.Popen(command, stdout=state["proxy_log"], stderr=subprocess.STDOUT)
    os.environ["SHARD_FDW_PROXY"] = f"http://127.0.0.1:{port}/__proxy"
    for _ in range(300):
        try:
            urllib.request.urlopen(os.environ["SHARD_FDW_PROXY"] + "/stats", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    else:
        raise SystemExit("the test's proxy did not start")

    client = bed.ddb(direct=True)
    state["client"] = client
    state["table"] = bed.unique_name("creds")
    bed.create_table(client, state["table"], "k")
    for i in range(ROWS):
        client.put_item(TableName=state["table"], Item={"k": {"S": f"k{i}"}, "v": {"N": str(i)}})
    state["big"] = bed.unique_name("creds_big")
    bed.create_table(client, state["big"], "k")
    for i in range(BIG_ROWS):
        client.put_item(TableName=state["big"], Item={"k": {"S": f"b{i:03d}"}, "v": {"N": str(i)},
                                                      "pad": {"S": "x" * PAD}})

    cluster = bed.Cluster(work)
    state["cluster"] = cluster
    cluster.start()
    os.environ.update(PGHOST="127.0.0.1", PGPORT=str(cluster.port), PGUSER="postgres",
                      PGDATABASE="postgres")
    sql(f"""CREATE EXTENSION shard_fdw;
            CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
              OPTIONS (endpoint 'http://127.0.0.1:{port}', region 'us-east-1');
            CREATE FOREIGN TABLE kv (k text, v int)
              SERVER ddb OPTIONS (table '{state["table"]}', partition_key 'k');
            CREATE FOREIGN TABLE big (k text, v int, pad text)
              SERVER ddb OPTIONS (table '{state["big"]}', partition_key 'k');
            CREATE ROLE regress_creds_user LOGIN;
            GRANT SELECT ON kv TO regress_creds_user;
            GRANT USAGE ON FOREIGN SERVER ddb TO regress_creds_user;""")


def tear_down():
    """Stop what set_up started."""
    if "cluster" in state:
        state["cluster"].stop()
    if "proxy" in state:
        state["proxy"].terminate()
        state["proxy"].wait()
        state["proxy_log"].close()
    if "client" in state:
        state["client"].delete_table(TableName=state["table"])
        state["client"].delete_table(TableName=state["big"])
    if "work" in state:
        shutil.rmtree(state["work"], ignore_errors=True)


def restart(**environment):
    """Restart the cluster with environment; forget what the proxy and the
    endpoints saw."""
    state["cluster"].start(**environment)
    keys_seen()
    endpoint_log()
    state["endpoints"].lifetime_s = 3600


def container_source():
    """Restart the cluster with the container endpoint as the source, its
    token in a file, which is returned."""
    token_file = os.path.join(state["work"], "container-token")
    write(token_file, "container-auth-1")
    restart(AWS_CONTAINER_CREDENTIALS_FULL_URI=state["ep"] + "/container/credentials",
            AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=token_file)
    mapping()
    return token_file


# ------------------------------------------------------------------- tests


@runner.test
def environment_variables():
    """AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of the server's environment."""
    restart(AWS_ACCESS_KEY_ID="AKIDENV", AWS_SECRET_ACCESS_KEY=STATIC["AKIDENV"])
    mapping()
    total()
    assert set(keys_seen()) == {"AKIDENV"}
    assert endpoint_log() == []


@runner.test
def shared_files_and_profiles():
    """The default profile, a named one assuming a role through
    source_profile (with external_id, role_session_name, duration_seconds),
    AWS_PROFILE, and a profile that is not there."""
    work = state["work"]
    write(os.path.join(work, "credentials"),
          "# keys\n[default]\naws_access_key_id = AKIDPROFILE\n"
          f"aws_secret_access_key = {STATIC['AKIDPROFILE']}\n")
    write(os.path.join(work, "config"),
          "[default]\nregion = us-east-1\n"
          f"[profile cross]\nrole_arn = {ROLE_EXTERNAL}\nsource_profile = static\n"
          "external_id = partner-42\nrole_session_name = reports\nduration_seconds = 1800\n"
          f"[profile static]\naws_access_key_id = AKIDSTATIC\n"
          f"aws_secret_access_key = {STATIC['AKIDSTATIC']}\n")
    files = {"AWS_SHARED_CREDENTIALS_FILE": os.path.join(work, "credentials"),
             "AWS_CONFIG_FILE": os.path.join(work, "config"),
             "AWS_ENDPOINT_URL_STS": state["ep"]}
    restart(**files)
    mapping()
    total()
    assert set(keys_seen()) == {"AKIDPROFILE"}

    mapping(profile="cross")
    total()
    log = endpoint_log()
    assert kinds(log) == ["sts:AssumeRole"], log
    params = log[0]["params"]
    assert log[0]["access_key"] == "AKIDSTATIC" and log[0]["status"] == 200, log
    assert params["RoleArn"] == ROLE_EXTERNAL and params["ExternalId"] == "partner-42"
    assert params["RoleSessionName"] == "reports" and params["DurationSeconds"] == "1800"
    assert params["Version"] == "2011-06-15"
    seen = keys_seen()
    assert seen and all(k.startswith("ASIAROLE") for k in seen), seen

    mapping(profile="missing")
    fails("SELECT sum(v) FROM kv", 'from profile "missing"',
          'Profile "missing" is in neither the shared credentials file nor the config file')

    restart(AWS_PROFILE="cross", **files)
    mapping()
    total()
    assert kinds(endpoint_log()) == ["sts:AssumeRole"]
    assert all(k.startswith("ASIAROLE") for k in keys_seen())

    # AWS_ENDPOINT_URL serves STS too when AWS_ENDPOINT_URL_STS is not set
    restart(AWS_PROFILE="cross", AWS_ENDPOINT_URL=state["ep"],
            **{k: v for k, v in files.items() if k != "AWS_ENDPOINT_URL_STS"})
    total()
    assert kinds(endpoint_log()) == ["sts:AssumeRole"]

    restart(AWS_PROFILE="nobody", **files)
    fails("SELECT sum(v) FROM kv", 'Profile "nobody" is in neither')

    # a malformed file is an error, not a profile passed over
    write(files["AWS_SHARED_CREDENTIALS_FILE"], "[default]\naws_access_key_id AKIDPROFILE\n")
    restart(**files)
    fails("SELECT sum(v) FROM kv", 'from profile "default"',
          'Line 2 of the shared credentials file is neither a [section] nor a "key = value" setting')


@runner.test
def web_identity():
    """AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN: AssumeRoleWithWebIdentity,
    unsigned; cached per backend, refreshed before expiry; an expired or
    invalid token is STS's error with its code."""
    token_file = os.path.join(state["work"], "web-token")
    write(token_file, "web-token-1\n")
    restart(AWS_WEB_IDENTITY_TOKEN_FILE=token_file, AWS_ROLE_ARN=ROLE_WEB,
            AWS_ROLE_SESSION_NAME="pod-7", AWS_ENDPOINT_URL_STS=state["ep"] + "/")
    mapping()
    state["endpoints"].lifetime_s = 6
    session = bed.Session("postgres")
    try:
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        log = endpoint_log()
        assert kinds(log) == ["sts:AssumeRoleWithWebIdentity"], log
        assert not log[0]["signed"]
        assert log[0]["params"]["WebIdentityToken"] == "web-token-1"
        assert log[0]["params"]["RoleSessionName"] == "pod-7"
        first = keys_seen()
        assert len(first) == 1 and next(iter(first)).startswith("ASIAWEB"), first

        time.sleep(3.5)
        second = refreshed(session, first)
        assert kinds(endpoint_log()) == ["sts:AssumeRoleWithWebIdentity"]
        assert len(second) == 1 and second.keys() != first.keys(), (first, second)

        # past the point where a failed refresh is still tolerated
        write(token_file, "web-token-expired")
        time.sleep(5.5)
        lines = session.run("SELECT sum(v) FROM kv")
        text = "\n".join(lines)
        assert "ERROR:  could not get AWS credentials" in text, text
        assert "STS AssumeRoleWithWebIdentity" in text and "ExpiredTokenException" in text, text
        assert "web-token-expired" not in text
    finally:
        session.close()
    write(token_file, "not-a-token")
    fails("SELECT sum(v) FROM kv", "InvalidIdentityToken (HTTP 400)")
    os.unlink(token_file)
    fails("SELECT sum(v) FROM kv", "the web identity token file", "Could not open file")


@runner.test
def container_endpoint():
    """AWS_CONTAINER_CREDENTIALS_FULL_URI with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE:
    the token as Authorization, refresh, a refused token, credentials
    already expired, and a URL the SDKs refuse."""
    token_file = os.path.join(state["work"], "container-token")
    write(token_file, "container-auth-1")
    url = state["ep"] + "/container/credentials"
    restart(AWS_CONTAINER_CREDENTIALS_FULL_URI=url,
            AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=token_file)
    mapping()
    state["endpoints"].lifetime_s = 6
    session = bed.Session("postgres")
    try:
        session.run("SELECT sum(v) FROM kv")
        session.run("SELECT sum(v) FROM kv")
        log = endpoint_log()
        assert kinds(log) == ["container"] and log[0]["authorization"] == "container-auth-1", log
        first = keys_seen()
        time.sleep(3.5)
        second = refreshed(session, first)
        assert kinds(endpoint_log()) == ["container"]
        assert all(k.startswith("ASIACONTAINER") for k in list(first) + list(second))
        assert first.keys() != second.keys()
    finally:
        session.close()
    write(token_file, "wrong")
    fails("SELECT sum(v) FROM kv", f"from the container credentials endpoint {url}",
          "InvalidToken (HTTP 401)")
    # the token may also be given as such (ECS with a full URI)
    restart(AWS_CONTAINER_CREDENTIALS_FULL_URI=url,
            AWS_CONTAINER_AUTHORIZATION_TOKEN="container-auth-1")
    total()
    log = endpoint_log()
    assert kinds(log) == ["container"] and log[0]["authorization"] == "container-auth-1", log
    restart(AWS_CONTAINER_CREDENTIALS_FULL_URI=url,
            AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=token_file)
    write(token_file, "container-auth-1")
    state["endpoints"].lifetime_s = -60
    fails("SELECT sum(v) FROM kv", "expired when they were fetched")
    restart(AWS_CONTAINER_CREDENTIALS_FULL_URI="http://10.1.2.3/creds")
    fails("SELECT sum(v) FROM kv", "must be an https URL")
    assert endpoint_log() == []


@runner.test
def failed_refresh_keeps_current_credentials():
    """A refresh that fails while the current credentials have a while
    left is a warning and the query goes on with them; once they are about
    to expire it is the error."""
    token_file = container_source()
    # 12 s: refreshed after about 6 s, a failure tolerated until 3 s before the end
    state["endpoints"].lifetime_s = 12
    session = bed.Session("postgres")
    try:
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        first = keys_seen()
        endpoint_log()
        time.sleep(6.5)
        write(token_file, "wrong")
        lines = session.run("SELECT sum(v) FROM kv")
        assert lines[-1] == str(sum(range(ROWS))), lines
        assert any("WARNING:  could not refresh the AWS credentials" in l for l in lines), lines
        assert keys_seen() == first
        assert kinds(endpoint_log()) == ["container"]
        time.sleep(3)
        text = "\n".join(session.run("SELECT sum(v) FROM kv"))
        assert "ERROR:" in text and "InvalidToken (HTTP 401)" in text, text
    finally:
        session.close()


@runner.test
def oversized_answer_is_refused():
    """A credential source whose answer passes 1 MB (its JSON followed by
    spaces) is refused with libcurl's reason, and the same source answering
    as usual is used by the next statement."""
    container_source()
    state["endpoints"].pad_bytes = 1024 * 1024
    try:
        err = fails("SELECT sum(v) FROM kv", "could not get AWS credentials",
                    "container")
        assert "Failure writing output" in err or "Failed writing" in err, err
    finally:
        state["endpoints"].pad_bytes = 0
    total()
    assert kinds(endpoint_log()) == ["container", "container"]


# ------------------------------------ profiles without keys, processes, SSO


def config_files(config, credentials=None):
    """Write the config file (and the credentials file, or none); returns
    the variables that name them."""
    work = state["work"]
    write(os.path.join(work, "config"), config)
    path = os.path.join(work, "credentials")
    if credentials is None:
        if os.path.exists(path):
            os.unlink(path)
    else:
        write(path, credentials)
    return {"AWS_CONFIG_FILE": os.path.join(work, "config"),
            "AWS_SHARED_CREDENTIALS_FILE": path}


@runner.test
def profile_without_credentials_is_passed_over():
    """A [default] profile holding only a region (what `aws configure`
    writes when only a region is given) is passed over, as the SDKs pass
    it over, and so is the one AWS_PROFILE names: the chain goes on to web
    identity, the container endpoint and instance metadata.  With nothing
    found, the error says why each source was passed over; the profile a
    mapping names must hold credentials."""
    files = config_files("[default]\nregion = us-east-1\n"
                         "[profile plain]\nregion = eu-west-1\noutput = json\n")
    web_token_file = os.path.join(state["work"], "web-token")
    write(web_token_file, "web-token-1")
    restart(AWS_WEB_IDENTITY_TOKEN_FILE=web_token_file, AWS_ROLE_ARN=ROLE_WEB,
            AWS_ENDPOINT_URL_STS=state["ep"], **files)
    mapping()
    total()
    assert kinds(endpoint_log()) == ["sts:AssumeRoleWithWebIdentity"]
    assert all(k.startswith("ASIAWEB") for k in keys_seen())

    token_file = os.path.join(state["work"], "container-token")
    write(token_file, "container-auth-1")
    restart(AWS_PROFILE="plain", AWS_CONTAINER_CREDENTIALS_FULL_URI=state["ep"] + "/container/credentials",
            AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=token_file, **files)
    total()
    assert kinds(endpoint_log()) == ["container"]
    assert all(k.startswith("ASIACONTAINER") for k in keys_seen())

    restart(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"], AWS_EC2_METADATA_DISABLED="false",
            **files)
    total()
    assert kinds(endpoint_log()) == ["imds:token", "imds:role", "imds:credentials"]
    assert all(k.startswith("ASIAIMDS") for k in keys_seen())

    restart(**files)
    fails("SELECT sum(v) FROM kv", 'no AWS credentials found for server "ddb"',
          "environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set",
          'shared files: profile "default" holds no credentials',
          "web identity: AWS_WEB_IDENTITY_TOKEN_FILE is not set",
          "instance metadata: AWS_EC2_METADATA_DISABLED is true")
    mapping(profile="plain")
    fails("SELECT sum(v) FROM kv", 'from profile "plain"', 'Profile "plain" holds no credentials')
    assert endpoint_log() == []


@runner.test
def web_identity_before_the_shared_files():
    """On a host with both web identity and a default profile holding keys
    (an EKS pod with a credentials file mounted), web identity signs, as
    botocore, read in the same environment, chooses."""
    files = config_files("[default]\nregion = us-east-1\n",
                         "[default]\naws_access_key_id = AKIDPROFILE\n"
                         "aws_secret_access_key = secret/profile\n")
    web_token_file = os.path.join(state["work"], "web-token")
    write(web_token_file, "web-token-1")
    environment = dict(AWS_WEB_IDENTITY_TOKEN_FILE=web_token_file, AWS_ROLE_ARN=ROLE_WEB,
                       AWS_ENDPOINT_URL_STS=state["ep"], **files)
    restart(**environment)
    mapping()
    total()
    assert kinds(endpoint_log()) == ["sts:AssumeRoleWithWebIdentity"]
    assert all(k.startswith("ASIAWEB") for k in keys_seen())
    chosen = subprocess.run(
        [sys.executable, "-c", "import botocore.session; "
         "print(botocore.session.Session().get_credentials().method)"],
        env=dict(environment, PATH=os.environ["PATH"], HOME=state["work"],
                 AWS_EC2_METADATA_DISABLED="true"),
        capture_output=True, text=True, check=True).stdout.strip()
    assert chosen == "assume-role-with-web-identity", chosen


PROCESS_SCRIPT = '''import json, os, sys, time
state = sys.argv[1]
with open(os.path.join(state, "mode")) as f:
    mode, lifetime = f.read().split()
with open(os.path.join(state, "runs"), "a") as f:
    f.write(f"{os.getpid()} {sys.argv[2]}\\n")
with open(os.path.join(state, "runs")) as f:
    run = len(f.readlines()) - 1
if mode == "sleep":
    time.sleep(300)
if mode == "fail":
    sys.stderr.write("SECRET-ON-STDERR\\n")
    sys.exit(3)
if mode == "huge":
    sys.stdout.write(" " * 100000)
if mode == "long-term":
    out = {"Version": 1, "AccessKeyId": "AKIDPROFILE", "SecretAccessKey": "secret/profile"}
else:
    akid, secret, token = (f"ASIAPROCESS{run:04d}", f"secret/process+{run}", f"token-process-{run}")
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + int(lifetime)))
    out = {"Version": 2 if mode == "version2" else 1, "AccessKeyId": akid,
           "SecretAccessKey": secret, "SessionToken": token, "Expiration": expires}
print(json.dumps(out))
'''


def process_runs(folder):
    """The runs of the credential process so far: (pid, its argument)."""
    path = os.path.join(folder, "runs")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [tuple(line.split(" ", 1)) for line in f.read().splitlines()]


def gone(pid):
    """Whether process pid has ended (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@runner.test
def credential_process():
    """credential_process, run through /bin/sh as the SDKs run it on POSIX
    (a path with a blank in double quotes): its version 1 JSON signs, its
    Expiration drives the refresh; no Expiration is long-term.  A failure
    says the exit status and never its standard error; a wrong Version,
    too much output are errors; a cancel kills the process at once; one
    that runs past 60 s is killed.  A non-superuser never runs it."""
    folder = os.path.join(state["work"], "process dir")
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o777)
    write(os.path.join(folder, "creds.py"), PROCESS_SCRIPT)

    def mode(name, lifetime=3600):
        write(os.path.join(folder, "mode"), f"{name} {lifetime}")

    files = config_files("[default]\nregion = us-east-1\n"
                         f'credential_process = /usr/bin/python3 "{folder}/creds.py" '
                         f'"{folder}" "two words"\n')
    mode("ok", 6)
    restart(**files)
    mapping()
    session = bed.Session("postgres")
    try:
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        runs = process_runs(folder)
        assert [arg for _, arg in runs] == ["two words"], runs
        first = keys_seen()
        assert list(first) == ["ASIAPROCESS0000"], first
        time.sleep(3.5)
        second = refreshed(session, first)
        assert list(second) == ["ASIAPROCESS0001"], second
        assert len(process_runs(folder)) == 2
    finally:
        session.close()

    mode("long-term")
    os.unlink(os.path.join(folder, "runs"))
    restart(**files)
    total()
    assert set(keys_seen()) == {"AKIDPROFILE"}
    assert len(process_runs(folder)) == 1

    mode("fail")
    err = fails("SELECT sum(v) FROM kv", 'from the credential_process of profile "default"',
                "exited with status 3")
    assert "SECRET-ON-STDERR" not in err, err
    mode("version2")
    fails("SELECT sum(v) FROM kv", "credential_process", "Version")
    mode("huge")
    fails("SELECT sum(v) FROM kv", "credential_process", "more than")

    mode("sleep")
    started = time.monotonic()
    ok, _, err = attempt("SET statement_timeout = 500; SELECT sum(v) FROM kv")
    assert not ok and "canceling statement due to statement timeout" in err, err
    assert time.monotonic() - started < 3, time.monotonic() - started
    pid = int(process_runs(folder)[-1][0])
    time.sleep(0.5)
    assert gone(pid), f"credential process {pid} outlived the cancel"

    mapping("regress_creds_user")
    runs = len(process_runs(folder))
    fails("SET ROLE regress_creds_user; SELECT sum(v) FROM kv",
          'user mapping for server "ddb" has no access keys')
    assert len(process_runs(folder)) == runs
    sql("DROP USER MAPPING FOR regress_creds_user SERVER ddb")

    started = time.monotonic()
    fails("SELECT sum(v) FROM kv", "credential_process", "did not finish within 60 s")
    assert 59 < time.monotonic() - started < 70, time.monotonic() - started
    pid = int(process_runs(folder)[-1][0])
    time.sleep(0.5)
    assert gone(pid), f"credential process {pid} outlived its timeout"


def sso_cache(home, key, token, expires_at):
    """Write the token the AWS CLI's `aws sso login` caches for key (a
    session's name, or a legacy profile's start URL) under home."""
    folder = os.path.join(home, ".aws", "sso", "cache")
    os.makedirs(folder, exist_ok=True)
    for path in (os.path.join(home, ".aws"), os.path.join(home, ".aws", "sso"), folder):
        os.chmod(path, 0o755)
    name = hashlib.sha1(key.encode()).hexdigest() + ".json"
    write(os.path.join(folder, name),
          json.dumps({"startUrl": "https://corp.awsapps.com/start", "region": "eu-west-1",
                      "accessToken": token, "expiresAt": expires_at,
                      "clientId": "client-1", "clientSecret": "client-secret-1",
                      "refreshToken": "refresh-1"}))
    return os.path.join(folder, name)


@runner.test
def sso_profiles():
    """SSO profiles, with an sso-session section or the legacy keys: the
    token `aws sso login` cached is exchanged at the portal
    (AWS_ENDPOINT_URL_SSO) for the role's credentials, which are fetched
    again before they expire and may source a role; an expired or missing
    cached token, or one the portal refuses, says to run aws sso login."""
    home = state["cluster"].dir
    later = awsendpoints.iso(time.time() + 3600)
    corp = sso_cache(home, "corp", "sso-token-corp", later)
    sso_cache(home, "https://legacy.awsapps.com/start", "sso-token-legacy",
              later.replace("Z", "UTC"))
    state["endpoints"].sso_tokens = {"sso-token-corp": {("111122223333", "Reader")},
                                     "sso-token-legacy": {("444455556666", "Writer")}}
    files = config_files(
        "[profile corp]\nsso_session = corp\nsso_account_id = 111122223333\n"
        "sso_role_name = Reader\nregion = us-east-1\n"
        "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n"
        "sso_region = eu-west-1\nsso_registration_scopes = sso:account:access\n"
        "[profile legacy]\nsso_start_url = https://legacy.awsapps.com/start\n"
        "sso_region = us-east-1\nsso_account_id = 444455556666\nsso_role_name = Writer\n"
        f"[profile reader]\nrole_arn = {ROLE}\nsource_profile = corp\n"
        "[profile norole]\nsso_session = corp\nsso_account_id = 111122223333\n")
    restart(AWS_PROFILE="corp", AWS_ENDPOINT_URL_SSO=state["ep"],
            AWS_ENDPOINT_URL_STS=state["ep"], **files)
    mapping()
    state["endpoints"].lifetime_s = 6
    session = bed.Session("postgres")
    try:
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        log = endpoint_log()
        assert kinds(log) == ["sso"], log
        assert log[0]["token"] == "sso-token-corp" and log[0]["status"] == 200, log
        assert (log[0]["account_id"], log[0]["role_name"]) == ("111122223333", "Reader"), log
        first = keys_seen()
        assert len(first) == 1 and next(iter(first)).startswith("ASIASSO"), first
        time.sleep(3.5)
        second = refreshed(session, first)
        assert kinds(endpoint_log()) == ["sso"]
        assert len(second) == 1 and second.keys() != first.keys(), (first, second)
    finally:
        session.close()
    state["endpoints"].lifetime_s = 3600

    mapping(profile="legacy")
    total()
    log = endpoint_log()
    assert kinds(log) == ["sso"] and log[0]["token"] == "sso-token-legacy", log
    assert log[0]["role_name"] == "Writer", log
    assert all(k.startswith("ASIASSO") for k in keys_seen())
    mapping(profile="reader")
    total()
    log = endpoint_log()
    assert kinds(log) == ["sso", "sts:AssumeRole"], log
    assert log[1]["access_key"].startswith("ASIASSO"), log
    assert all(k.startswith("ASIAROLE") for k in keys_seen())

    mapping(profile="norole")
    fails("SELECT sum(v) FROM kv", 'from profile "norole"', "sso_role_name")
    mapping()
    sso_cache(home, "corp", "sso-token-other", later)
    fails("SELECT sum(v) FROM kv", "SSO", "HTTP status 401", "aws sso login")
    sso_cache(home, "corp", "sso-token-corp", awsendpoints.iso(time.time() - 60))
    fails("SELECT sum(v) FROM kv", "expired", "aws sso login")
    os.unlink(corp)
    fails("SELECT sum(v) FROM kv", corp, "aws sso login")
    assert kinds(endpoint_log()) == ["sso"]


@runner.test
def instance_metadata_v1_fallback():
    """When IMDSv2's token request is refused (403) or unanswered (a
    container behind a hop limit of 1), IMDSv1 serves: the role and its
    credentials without a token; not with AWS_EC2_METADATA_V1_DISABLED."""
    endpoints = state["endpoints"]
    imds = dict(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"], AWS_EC2_METADATA_DISABLED="false")
    endpoints.imds_v1 = True
    try:
        endpoints.imds_token_status = 403
        restart(**imds)
        mapping()
        total()
        log = endpoint_log()
        assert kinds(log) == ["imds:token", "imds:role", "imds:credentials"], log
        assert log[0]["status"] == 403 and log[1]["token"] is None and log[2]["token"] is None
        assert all(k.startswith("ASIAIMDS") for k in keys_seen())

        endpoints.imds_token_status = 200
        endpoints.imds_token_delay_s = 6
        restart(**imds)
        started = time.monotonic()
        total()
        assert 4.5 < time.monotonic() - started < 6, time.monotonic() - started
        log = endpoint_log()
        assert kinds(log) == ["imds:token", "imds:role", "imds:credentials"], log
        assert log[1]["token"] is None, log

        endpoints.imds_token_delay_s = 0
        endpoints.imds_token_status = 403
        restart(AWS_EC2_METADATA_V1_DISABLED="true", **imds)
        fails("SELECT sum(v) FROM kv", "HTTP status 403", "AWS_EC2_METADATA_V1_DISABLED")
        assert kinds(endpoint_log()) == ["imds:token"]
    finally:
        endpoints.imds_v1 = False
        endpoints.imds_token_status = 200
        endpoints.imds_token_delay_s = 0


@runner.test
def transient_failures_are_retried():
    """The first fetch retries what the SDKs take for transient (HTTP 429
    and 5xx, Throttling, IDPCommunicationError), a few times with backoff:
    of the container endpoint, STS, instance metadata and the SSO portal.
    What is not transient is not retried; three failures are the error."""
    endpoints = state["endpoints"]
    try:
        container_source()
        endpoints.failures = {"container": [(503, None), (429, "TooManyRequestsException")]}
        total()
        log = endpoint_log()
        assert [e["status"] for e in log] == [503, 429, 200], log

        web_token_file = os.path.join(state["work"], "web-token")
        write(web_token_file, "web-token-1")
        restart(AWS_WEB_IDENTITY_TOKEN_FILE=web_token_file, AWS_ROLE_ARN=ROLE_WEB,
                AWS_ENDPOINT_URL_STS=state["ep"])
        mapping(role_arn=ROLE)
        endpoints.failures = {"sts:AssumeRoleWithWebIdentity": [(400, "IDPCommunicationError")],
                              "sts:AssumeRole": [(400, "Throttling"), (500, "InternalFailure")]}
        total()
        log = endpoint_log()
        assert kinds(log) == ["sts:AssumeRoleWithWebIdentity"] * 2 + ["sts:AssumeRole"] * 3, log
        assert log[-1]["status"] == 200, log

        restart(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"], AWS_EC2_METADATA_DISABLED="false")
        mapping()
        endpoints.failures = {"imds:token": [(503, None)], "imds:credentials": [(500, None)]}
        total()
        assert kinds(endpoint_log()) == ["imds:token", "imds:token", "imds:role",
                                         "imds:credentials", "imds:credentials"]

        container_source()
        endpoints.failures = {"container": [(503, None)] * 3}
        fails("SELECT sum(v) FROM kv", "container", "HTTP status 503")
        assert kinds(endpoint_log()) == ["container"] * 3
        endpoints.failures = {"container": [(400, "InvalidRequest")]}
        fails("SELECT sum(v) FROM kv", "InvalidRequest (HTTP 400)")
        assert kinds(endpoint_log()) == ["container"]
    finally:
        endpoints.failures = {}


@runner.test
def sts_endpoint_with_its_default_port():
    """An STS endpoint URL that spells out its scheme's default port
    (http://sts.example:80 here, as https://sts.example:443) is signed
    with the Host that is sent.  libcurl reaches it through a proxy
    (http_proxy: the endpoints, which serve a proxied request as it came),
    DynamoDB directly (no_proxy)."""
    restart(AWS_ACCESS_KEY_ID="AKIDSTATIC", AWS_SECRET_ACCESS_KEY=STATIC["AKIDSTATIC"],
            AWS_ENDPOINT_URL_STS="http://sts.example:80", http_proxy=state["ep"],
            no_proxy="127.0.0.1,localhost")
    mapping(role_arn=ROLE)
    total()
    log = endpoint_log()
    assert kinds(log) == ["sts:AssumeRole"] and log[0]["status"] == 200, log
    assert log[0]["access_key"] == "AKIDSTATIC" and log[0]["host"] == "sts.example:80", log
    assert all(k.startswith("ASIAROLE") for k in keys_seen())


# ---------------------------------------------- refreshes beside a scan

# Credentials of the refresh tests live this long; their refresh is due
# about halfway, the current ones may sign until the last quarter of the
# life they had when they came.
LIFETIME_S = 24


def first_fetch(session, lifetime_s, delay_s):
    """The first query of session fetches credentials that live
    lifetime_s, the endpoints holding their answers back delay_s (until
    the caller sets delay_s back).  Returns when it ended (monotonic) and
    the keys it signed with; the endpoints' log is emptied."""
    endpoints = state["endpoints"]
    endpoints.lifetime_s = lifetime_s
    endpoints.delay_s = delay_s
    assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
    fetched = time.monotonic()
    first = keys_seen()
    assert len(first) == 1, first
    endpoint_log()
    return fetched, first


def scan_in_refresh_window(delay_s, spoil=None, lifetime_s=LIFETIME_S):
    """In a new session, fetch credentials that live lifetime_s, wait
    until their refresh is near, then scan the big table a page at a time
    behind the proxy's latency, the credential endpoints holding every
    answer back delay_s, so that the refresh comes in the middle of the
    scan; spoil(), when given, runs just before the scan.  Returns the
    scan's output lines, the key the first credentials signed with, the
    endpoints' log of the refresh and the proxy's log of the scan's
    requests (arrival, key)."""
    session = bed.Session("postgres")
    try:
        fetched, first = first_fetch(session, lifetime_s, delay_s)
        bed.configure(latency_ms=LATENCY_MS)
        # the refresh is due at about half the life left when they came
        time.sleep(max(0.0, fetched + (lifetime_s - delay_s) / 2 - 2.5 - time.monotonic()))
        if spoil:
            spoil()
        lines = session.run("SELECT count(*), sum(length(pad)) FROM big")
        signed = bed.proxy("GET", "/signatures")
    finally:
        session.close()
        state["endpoints"].delay_s = 0.0
    assert keys_seen().keys() == {key for _, key in signed}
    return lines, next(iter(first)), endpoint_log(), signed


def in_flight_beside(log, signed, delay_s, old, steps=1):
    """Check that requests went on, signed with the old key, while the
    refresh of the first steps requests of log was in flight, and that
    the scan never stood still that long; returns the keys of the requests
    after its last answer (and before a next refresh, on a slow machine)."""
    begun, answered = log[0]["at"], log[steps - 1]["at"] + delay_s
    until = log[steps]["at"] if len(log) > steps else float("inf")
    # the request that begins the refresh goes out with it, the others while
    # it is in flight; signed in turn with the new key, none would come then
    during = [key for at, key in signed if begun - 0.1 < at < answered - 0.05]
    assert len(during) >= 2 and set(during) == {old}, (begun, answered, signed)
    arrivals = [at for at, _ in signed]
    pause = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    assert pause < answered - begun, (pause, begun, answered)
    print(f"  {len(during)} requests signed with the old key during the "
          f"{answered - begun:.2f} s refresh; longest pause between requests {pause:.2f} s")
    return [key for at, key in signed if answered + 0.2 < at < until]


@runner.test
def refresh_in_flight_beside_a_scan():
    """A refresh whose answers take a while (the container endpoint's,
    IMDSv2's three, web identity then the mapping's role) runs beside a
    sequential scan: the scan's requests go on signed with the current
    key while it is in flight, and the ones after it with the new key."""
    token_file = os.path.join(state["work"], "container-token")
    write(token_file, "container-auth-1")
    web_token_file = os.path.join(state["work"], "web-token")
    write(web_token_file, "web-token-1")
    sources = [
        ("container", dict(AWS_CONTAINER_CREDENTIALS_FULL_URI=state["ep"] + "/container/credentials",
                           AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=token_file),
         {}, 3.0, ["container"], "ASIACONTAINER"),
        ("instance metadata", dict(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"],
                                   AWS_EC2_METADATA_DISABLED="false"),
         {}, 1.0, ["imds:token", "imds:role", "imds:credentials"], "ASIAIMDS"),
        ("web identity and a role", dict(AWS_WEB_IDENTITY_TOKEN_FILE=web_token_file,
                                         AWS_ROLE_ARN=ROLE_WEB,
                                         AWS_ENDPOINT_URL_STS=state["ep"]),
         {"role_arn": ROLE}, 1.5, ["sts:AssumeRoleWithWebIdentity", "sts:AssumeRole"],
         "ASIAROLE"),
    ]
    sql("ALTER SERVER ddb OPTIONS (ADD max_concurrency '1')")
    try:
        for name, environment, options, delay_s, steps, prefix in sources:
            print(f"  {name}:")
            restart(**environment)
            mapping(**options)
            lines, old, log, signed = scan_in_refresh_window(delay_s)
            assert kinds(log) in (steps, steps + steps), log
            assert not any("WARNING" in line for line in lines), lines
            after = in_flight_beside(log, signed, delay_s, old, len(steps))
            assert after and len(set(after)) == 1, after
            assert after[0] != old and after[0].startswith(prefix), (old, after)
    finally:
        sql("ALTER SERVER ddb OPTIONS (DROP max_concurrency)")


@runner.test
def failed_refresh_beside_a_scan():
    """A refresh that fails while the scan runs and the current
    credentials have a while left: a WARNING, the scan goes on with them
    to the end.  (They live 60 s here, so that the scan ends well before
    they must no longer sign, the refresh failing again on the way.)"""
    token_file = container_source()
    sql("ALTER SERVER ddb OPTIONS (ADD max_concurrency '1')")
    try:
        lines, old, log, signed = scan_in_refresh_window(
            3.0, spoil=lambda: write(token_file, "wrong"), lifetime_s=60)
    finally:
        sql("ALTER SERVER ddb OPTIONS (DROP max_concurrency)")
    # tried again a little later while the current credentials serve
    assert set(kinds(log)) == {"container"} and {e["status"] for e in log} == {401}, log
    # a WARNING for each failure answered while the scan ran: the last
    # attempt may still be on its way when the scan ends (a loaded machine)
    warnings = [line for line in lines if line.startswith("WARNING:")]
    assert len(log) - 1 <= len(warnings) <= len(log) and warnings, (lines, log)
    assert all("could not refresh the AWS credentials" in w for w in warnings), lines
    assert "InvalidToken (HTTP 401)" in "\n".join(lines), lines
    assert lines[-1] == f"{BIG_ROWS}|{BIG_ROWS * PAD}", lines
    in_flight_beside(log, signed, 3.0, old)
    assert {key for _, key in signed} == {old}, signed


@runner.test
def expiring_credentials_wait_for_their_refresh():
    """Credentials at the point where they may no longer sign (5 s before
    they expire, here): the request waits for the refresh, then goes out
    signed with the new ones.  A statement timeout ends that wait at once
    (the refresh is dropped and begun again by the next statement)."""
    container_source()
    session = bed.Session("postgres")
    try:
        fetched, old = first_fetch(session, LIFETIME_S, 2.0)
        # past the last quarter of the 22 s left when they came (2 s late), about
        # 2 s before they expire
        time.sleep(max(0.0, fetched + LIFETIME_S - 4 - time.monotonic()))
        lines = session.run("SET statement_timeout = 300; SELECT sum(v) FROM kv")
        assert any("canceling statement due to statement timeout" in line for line in lines), lines
        assert session.seconds < 1.5, session.seconds
        canceled = session.seconds
        lines = session.run("RESET statement_timeout; SELECT sum(v) FROM kv")
        waited = session.seconds
    finally:
        session.close()
        state["endpoints"].delay_s = 0.0
    assert lines == [str(sum(range(ROWS)))], lines
    assert kinds(endpoint_log()) == ["container", "container"]
    new = keys_seen()
    assert len(new) == 1 and new.keys() != old.keys(), (old, new)
    assert waited >= 1.9, waited
    print(f"  the query waited {waited:.2f} s for a refresh whose answer took 2 s; "
          f"under a 300 ms statement_timeout it ended after {canceled:.2f} s")


@runner.test
def unwatched_refresh_is_begun_again():
    """A refresh begun by a statement that ends before its answer, then
    left unwatched longer than its timeout (5 s for the container
    endpoint) while the session idles: the next statement begins it again
    rather than warning of a timeout, and a later one gets the new keys."""
    container_source()
    session = bed.Session("postgres")
    try:
        # due about 20 s after they come, they may sign until about 30 s
        fetched, first = first_fetch(session, 40, 0.5)
        time.sleep(max(0.0, fetched + 21 - time.monotonic()))
        assert session.run("SELECT sum(v) FROM kv") == [str(sum(range(ROWS)))]
        assert keys_seen() == first
        time.sleep(6)
        lines = session.run("SELECT sum(v) FROM kv")
        assert lines == [str(sum(range(ROWS)))], lines
        time.sleep(1)
        second = refreshed(session, first)
    finally:
        session.close()
        state["endpoints"].delay_s = 0.0
    assert kinds(endpoint_log()) == ["container", "container"]
    assert len(second) == 1 and all(k.startswith("ASIACONTAINER") for k in second)


@runner.test
def previous_keys_stay_out_of_errors():
    """Once a refresh has replaced the keys, an error that quotes the
    replaced keys' token and secret (as a signature error to a request
    still signed with them would) shows neither: errors are blanked of
    the previous keys as well as of the current ones."""
    container_source()
    session = bed.Session("postgres")
    try:
        fetched, first = first_fetch(session, LIFETIME_S, 0.0)
        time.sleep(max(0.0, fetched + LIFETIME_S / 2 - time.monotonic()))
        refreshed(session, first)
        [(_, secret, token)] = [c for c in awsendpoints.all_pool_credentials()
                                if c[0] in first]
        bed.add_fault(kind="status", status=400, error="InvalidSignatureException",
                      message=f"The Canonical String for this request should have "
                              f"been 'x-amz-security-token:{token}' (secret {secret})")
        lines = session.run("SELECT sum(v) FROM kv")
    finally:
        session.close()
        bed.clear_faults()
    text = "\n".join(lines)
    assert "InvalidSignatureException" in text, text
    assert token not in text and secret not in text, text
    assert "x-amz-security-token:" + "*" * len(token) in text, text


@runner.test
def instance_metadata():
    """IMDSv2: the token PUT, then the role and its credentials with the
    token; refresh; and a role assumed on top of them."""
    restart(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"], AWS_EC2_METADATA_DISABLED="false",
            AWS_ENDPOINT_URL_STS=state["ep"])
    mapping()
    state["endpoints"].lifetime_s = 6
    session = bed.Session("postgres")
    try:
        session.run("SELECT sum(v) FROM kv")
        log = endpoint_log()
        assert kinds(log) == ["imds:token", "imds:role", "imds:credentials"], log
        assert log[0]["ttl"] == "21600"
        assert log[1]["token"] == log[2]["token"] and log[1]["token"].startswith("imds-session")
        first = keys_seen()
        time.sleep(3.5)
        second = refreshed(session, first)
        assert kinds(endpoint_log()) == ["imds:token", "imds:role", "imds:credentials"]
        assert all(k.startswith("ASIAIMDS") for k in list(first) + list(second))
        assert first.keys() != second.keys()
    finally:
        session.close()

    state["endpoints"].lifetime_s = 3600
    mapping(role_arn=ROLE, role_session_name="nightly")
    total()
    log = endpoint_log()
    assert kinds(log) == ["imds:token", "imds:role", "imds:credentials", "sts:AssumeRole"], log
    assert log[3]["access_key"].startswith("ASIAIMDS") and log[3]["signed"]
    assert all(k.startswith("ASIAROLE") for k in keys_seen())

    closed = f"http://127.0.0.1:{bed.free_port()}"
    restart(AWS_EC2_METADATA_SERVICE_ENDPOINT=closed, AWS_EC2_METADATA_DISABLED="false")
    mapping()
    fails("SELECT sum(v) FROM kv", f"from EC2 instance metadata (IMDSv2) at {closed}",
          f"The request to {closed}/latest/api/token failed")


@runner.test
def assumed_roles_and_privileges():
    """A non-superuser: refused the server's instance credentials, given
    them by the superuser-only switch, and assuming a role with its own
    static keys; STS errors come back with their code."""
    restart(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"], AWS_EC2_METADATA_DISABLED="false",
            AWS_ENDPOINT_URL_STS=state["ep"])
    as_user = "SET ROLE regress_creds_user; SELECT sum(v) FROM kv"
    mapping("regress_creds_user")
    fails(as_user, 'user mapping for server "ddb" has no access keys')
    assert endpoint_log() == [], "a refused mapping must not reach any source"
    ok, _, err = attempt("SET ROLE regress_creds_user; "
                         "ALTER USER MAPPING FOR regress_creds_user SERVER ddb "
                         "OPTIONS (ADD ambient_credentials 'true')")
    assert not ok and "only superusers may set option" in err, err

    mapping("regress_creds_user", ambient_credentials="true")
    ok, out, err = attempt(as_user)
    assert ok and out.strip() == str(sum(range(ROWS))), err
    assert kinds(endpoint_log())[0] == "imds:token"
    keys_seen()

    mapping("regress_creds_user", access_key_id="AKIDSTATIC",
            secret_access_key=STATIC["AKIDSTATIC"], role_arn=ROLE_EXTERNAL,
            external_id="partner-42", duration_s="900")
    ok, out, err = attempt(as_user)
    assert ok, err
    log = endpoint_log()
    assert kinds(log) == ["sts:AssumeRole"] and log[0]["access_key"] == "AKIDSTATIC", log
    assert log[0]["params"]["DurationSeconds"] == "900"
    assert log[0]["params"]["RoleSessionName"].startswith("shard_fdw-")
    assert all(k.startswith("ASIAROLE") for k in keys_seen())

    mapping("regress_creds_user", access_key_id="AKIDSTATIC",
            secret_access_key=STATIC["AKIDSTATIC"], role_arn=ROLE_EXTERNAL,
            external_id="wrong")
    fails(as_user, f'STS AssumeRole of role "{ROLE_EXTERNAL}"',
          "STS answered with error AccessDenied (HTTP 403)")
    mapping("regress_creds_user", access_key_id="AKIDSTATIC",
            secret_access_key="not-the-secret", role_arn=ROLE)
    err = fails(as_user, "SignatureDoesNotMatch")
    assert "not-the-secret" not in err
    mapping("regress_creds_user", access_key_id="AKIDSTATIC",
            secret_access_key=STATIC["AKIDSTATIC"], role_arn="arn:aws:iam::1:role/none")
    fails(as_user, "AccessDenied")
    sql("DROP USER MAPPING FOR regress_creds_user SERVER ddb")


@runner.test
def secrets_stay_out_of_messages_and_logs():
    """EXPLAIN ANALYZE VERBOSE and the server log show no key, secret or
    token that any source handed out or that a mapping holds."""
    restart(AWS_EC2_METADATA_SERVICE_ENDPOINT=state["ep"], AWS_EC2_METADATA_DISABLED="false")
    mapping()
    ok, out, err = attempt("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT * FROM kv")
    assert ok, err
    log = state["cluster"].log_text()
    secrets = list(STATIC.values()) + [s for _, s, _ in awsendpoints.all_pool_credentials()] + \
        [t for _, _, t in awsendpoints.all_pool_credentials()] + \
        ["container-auth-1", "web-token-1", "web-token-expired", "imds-session",
         "sso-token-", "client-secret-1", "SECRET-ON-STDERR"]
    for secret in secrets:
        assert secret not in out, secret
        assert secret not in log, secret
    assert "terminated by signal" not in log
    assert "ERROR" in log, "the log should hold the errors the tests caused"


if __name__ == "__main__":
    runner.main(set_up, tear_down)
