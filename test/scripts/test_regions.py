#!/usr/bin/python3
"""Where a server's region and endpoints come from, as the AWS SDKs find them.

The region and the endpoints are read in the PostgreSQL server's
environment, so this test runs a cluster of its own (test/scripts/bed.py's
Cluster), restarted with the variables and the shared config file of each
case.  The region is observed where DynamoDB sees it, in the credential
scope of each request's signature (the proxy counts requests by the
region they were signed for); an endpoint is observed by the query
working through the proxy, or, for the region's own endpoints, which do
not resolve here, by the error naming the URL it tried.  Ends with "N
passed, N failed".
"""

import os

import bed

runner = bed.Runner()
state = {}
# The endpoint of a server whose option gives none, and a port nothing listens on.
DEAD = f"http://127.0.0.1:{bed.free_port()}"


def write(name, text):
    """A file in the test's directory the cluster's user can read; its path."""
    path = os.path.join(state["work"], name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def sql(text):
    """Run SQL in the test's cluster; fails on any error."""
    return bed.in_database("postgres")(text)


def fails(text, *wanted):
    """Run text, which must fail with every one of wanted in its message."""
    result = bed.psql(text, check=False, database="postgres")
    assert result.returncode != 0, f"{text} succeeded"
    for piece in wanted:
        assert piece in result.stderr, f"{piece!r} not in:\n{result.stderr}"
    return result.stderr


def restart(**environment):
    """Restart the cluster with environment (AWS_REGION unset unless given)."""
    environment.setdefault("AWS_REGION", "")
    state["cluster"].start(**environment)


def regions_signed(query="SELECT count(*) FROM kv"):
    """Run query through server ddb; the regions its requests were signed
    for, as the proxy saw them."""
    bed.reset_proxy()
    assert bed.query(query, database="postgres") == [["3"]]
    signatures = bed.stats()["signatures"]
    assert signatures["rejected"] == 0, signatures
    return set(signatures["regions"])


def endpoint_works(table):
    """A query of foreign table table works."""
    assert bed.query(f"SELECT count(*) FROM {table}", database="postgres") == [["3"]]


@runner.test
def region_from_the_environment():
    restart(AWS_REGION="eu-west-1", AWS_DEFAULT_REGION="ap-south-1")
    assert regions_signed() == {"eu-west-1"}
    restart(AWS_DEFAULT_REGION="ap-south-1")
    assert regions_signed() == {"ap-south-1"}


@runner.test
def region_from_the_profile():
    config = write("config", "[default]\nregion = sa-east-1\n\n"
                             "[profile other]\nregion = ca-central-1\n\n"
                             "[profile mapped]\nregion = eu-north-1\n")
    restart(AWS_CONFIG_FILE=config)
    assert regions_signed() == {"sa-east-1"}
    restart(AWS_CONFIG_FILE=config, AWS_PROFILE="other")
    assert regions_signed() == {"ca-central-1"}
    # the user mapping's profile is the one read, for keys and region alike
    credentials = write("credentials", f"[mapped]\naws_access_key_id = {bed.env('SHARD_FDW_ACCESS_KEY')}\n"
                                       f"aws_secret_access_key = {bed.env('SHARD_FDW_SECRET_KEY')}\n")
    restart(AWS_CONFIG_FILE=config, AWS_PROFILE="other", AWS_SHARED_CREDENTIALS_FILE=credentials)
    sql("ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS "
        "(DROP access_key_id, DROP secret_access_key, ADD profile 'mapped')")
    try:
        assert regions_signed() == {"eu-north-1"}
    finally:
        sql(f"""ALTER USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS (DROP profile,
                ADD access_key_id '{bed.env("SHARD_FDW_ACCESS_KEY")}',
                ADD secret_access_key '{bed.env("SHARD_FDW_SECRET_KEY")}')""")


@runner.test
def the_option_wins():
    restart(AWS_REGION="eu-west-1")
    sql("ALTER SERVER ddb OPTIONS (ADD region 'me-south-1')")
    try:
        assert regions_signed() == {"me-south-1"}
    finally:
        sql("ALTER SERVER ddb OPTIONS (DROP region)")


@runner.test
def no_region_is_an_error():
    restart(AWS_CONFIG_FILE=write("config", "[default]\noutput = json\n"))
    fails("SELECT count(*) FROM kv", 'server "ddb" has no AWS region',
          "AWS_REGION", 'profile "default"', "ALTER SERVER ddb OPTIONS (ADD region 'us-east-1')")
    fails("CREATE SERVER other FOREIGN DATA WRAPPER shard_fdw",
          "a shard_fdw server needs an AWS region", "region 'us-east-1'")
    fails("ALTER SERVER ddb OPTIONS (ADD region 'US East')",
          'invalid value for option "region"')
    sql("CREATE SERVER other FOREIGN DATA WRAPPER shard_fdw OPTIONS (region 'us-west-2');"
        "DROP SERVER other")


@runner.test
def endpoint_from_the_environment():
    proxy = bed.env("SHARD_FDW_ENDPOINT")
    # the service's variable before the general one
    restart(AWS_REGION="us-east-1", AWS_ENDPOINT_URL_DYNAMODB=proxy, AWS_ENDPOINT_URL=DEAD)
    endpoint_works("kv_env")
    restart(AWS_REGION="us-east-1", AWS_ENDPOINT_URL=proxy + "/")
    endpoint_works("kv_env")
    # the profile's endpoint_url after both
    config = write("config", f"[default]\nregion = us-east-1\nendpoint_url = {proxy}\n")
    restart(AWS_CONFIG_FILE=config)
    endpoint_works("kv_env")
    restart(AWS_CONFIG_FILE=config, AWS_ENDPOINT_URL=DEAD)
    fails("SELECT count(*) FROM kv_env", f'endpoint "{DEAD}"')
    # the server's option before them all
    endpoint_works("kv")


@runner.test
def configured_endpoints_can_be_ignored():
    proxy = bed.env("SHARD_FDW_ENDPOINT")
    restart(AWS_REGION="us-east-1", AWS_ENDPOINT_URL_DYNAMODB=proxy,
            AWS_IGNORE_CONFIGURED_ENDPOINT_URLS="true")
    fails("SELECT count(*) FROM kv_env", '"https://dynamodb.us-east-1.amazonaws.com"')
    config = write("config", f"[default]\nendpoint_url = {proxy}\n"
                             "ignore_configured_endpoint_urls = true\n")
    restart(AWS_REGION="us-east-1", AWS_CONFIG_FILE=config)
    fails("SELECT count(*) FROM kv_env", '"https://dynamodb.us-east-1.amazonaws.com"')


@runner.test
def partitions_fips_and_dual_stack():
    cases = [
        ("cn-north-1", {}, {}, "https://dynamodb.cn-north-1.amazonaws.com.cn"),
        ("us-gov-west-1", {}, {}, "https://dynamodb.us-gov-west-1.amazonaws.com"),
        ("us-west-2", {"use_fips_endpoint": "true"}, {}, "https://dynamodb-fips.us-west-2.amazonaws.com"),
        ("us-gov-west-1", {"use_fips_endpoint": "true"}, {}, "https://dynamodb.us-gov-west-1.amazonaws.com"),
        ("us-west-2", {}, {"AWS_USE_DUALSTACK_ENDPOINT": "true"}, "https://dynamodb.us-west-2.api.aws"),
        ("cn-north-1", {}, {"AWS_USE_FIPS_ENDPOINT": "true", "AWS_USE_DUALSTACK_ENDPOINT": "true"},
         "https://dynamodb-fips.cn-north-1.api.amazonwebservices.com.cn"),
        # the option says false, whatever the variable says
        ("eu-west-1", {"use_fips_endpoint": "false"}, {"AWS_USE_FIPS_ENDPOINT": "true"},
         "https://dynamodb.eu-west-1.amazonaws.com"),
    ]
    for region, options, environment, url in cases:
        restart(AWS_REGION=region, **environment)
        if options:
            sql("ALTER SERVER env OPTIONS (" +
                ", ".join(f"ADD {k} '{v}'" for k, v in options.items()) + ")")
        try:
            fails("SELECT count(*) FROM kv_env", f'"{url}"')
        finally:
            if options:
                sql("ALTER SERVER env OPTIONS (" + ", ".join(f"DROP {k}" for k in options) + ")")
    restart(AWS_REGION="us-iso-east-1", AWS_USE_DUALSTACK_ENDPOINT="true")
    fails("SELECT count(*) FROM kv_env", 'no dynamodb endpoint for region "us-iso-east-1"',
          "has no dual-stack endpoints")
    restart(AWS_REGION="us-east-1", AWS_USE_FIPS_ENDPOINT="maybe")
    fails("SELECT count(*) FROM kv_env", "invalid value for AWS_USE_FIPS_ENDPOINT")
    fails("ALTER SERVER env OPTIONS (ADD use_fips_endpoint 'maybe')", "use_fips_endpoint")


@runner.test
def fips_with_an_endpoint_is_refused():
    restart(AWS_REGION="us-east-1", AWS_USE_FIPS_ENDPOINT="true")
    fails("SELECT count(*) FROM kv", "cannot use a FIPS endpoint with the endpoint given")
    restart(AWS_REGION="us-east-1")
    sql("ALTER SERVER ddb OPTIONS (ADD use_dualstack_endpoint 'true')")
    try:
        fails("SELECT count(*) FROM kv", "cannot use a dual-stack endpoint with the endpoint given")
    finally:
        sql("ALTER SERVER ddb OPTIONS (DROP use_dualstack_endpoint)")


@runner.test
def sts_is_resolved_alike():
    """A role is assumed at the region's STS endpoint, by the same rules."""
    restart(AWS_REGION="cn-northwest-1")
    sql("""ALTER USER MAPPING FOR CURRENT_USER SERVER env
           OPTIONS (ADD role_arn 'arn:aws-cn:iam::123456789012:role/reader')""")
    try:
        fails("SELECT count(*) FROM kv_env", 'at https://sts.cn-northwest-1.amazonaws.com.cn')
        restart(AWS_REGION="us-gov-east-1", AWS_USE_FIPS_ENDPOINT="true")
        fails("SELECT count(*) FROM kv_env", 'at https://sts.us-gov-east-1.amazonaws.com')
        restart(AWS_REGION="us-east-1", AWS_USE_DUALSTACK_ENDPOINT="true")
        fails("SELECT count(*) FROM kv_env", 'at https://sts.us-east-1.api.aws')
        restart(AWS_REGION="us-east-1", AWS_ENDPOINT_URL_STS=DEAD,
                AWS_ENDPOINT_URL=bed.env("SHARD_FDW_ENDPOINT"))
        fails("SELECT count(*) FROM kv_env", f"at {DEAD}")
    finally:
        sql("ALTER USER MAPPING FOR CURRENT_USER SERVER env OPTIONS (DROP role_arn)")


def set_up():
    """A table of 3 items; the cluster; server ddb with the proxy as its
    endpoint option and no region, server env with neither (and no
    retries: its failures are the region's endpoints, which do not resolve
    here, and the ports nothing listens on)."""
    keys = bed.cluster_over_table(state, "regions", [{"k": {"S": f"k{i}"}} for i in range(3)])
    sql(f"""CREATE EXTENSION shard_fdw;
            CREATE SERVER ddb FOREIGN DATA WRAPPER shard_fdw
              OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}');
            CREATE USER MAPPING FOR CURRENT_USER SERVER ddb OPTIONS ({keys});
            CREATE FOREIGN TABLE kv (k text) SERVER ddb
              OPTIONS (table '{state["table"]}', partition_key 'k');
            CREATE SERVER env FOREIGN DATA WRAPPER shard_fdw
              OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}', max_retries '0');
            CREATE USER MAPPING FOR CURRENT_USER SERVER env OPTIONS ({keys});
            CREATE FOREIGN TABLE kv_env (k text) SERVER env
              OPTIONS (table '{state["table"]}', partition_key 'k');
            ALTER SERVER env OPTIONS (DROP endpoint);""")


def tear_down():
    """Stop what set_up started."""
    bed.cluster_tear_down(state)


if __name__ == "__main__":
    runner.main(set_up, tear_down)
