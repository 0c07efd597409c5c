"""Denied actions: IAM permissions refused as DynamoDB refuses them.

"deny_actions" (POST /__proxy/config) is a list of IAM actions the caller
is not allowed: each an action name ("Query", or "dynamodb:Query"), denied
on every table, or {"action": "Query", "table": "T"}, denied on table T
(and its indexes) only; [] (the default) denies nothing.  A request is checked
as IAM checks it, after its signature: a TransactWriteItems needs PutItem,
UpdateItem, DeleteItem or ConditionCheckItem for each of its actions'
tables (there is no TransactWriteItems permission), a TransactGetItems
GetItem, a batch its own action on each of its tables, any other request
its action on its TableName (the table's index when it names one), or on
every table (ListTables).  The first permission missing is answered as
DynamoDB answers: HTTP 400, __type
com.amazon.coral.service#AccessDeniedException, and the message "User:
arn:aws:sts::000000000000:assumed-role/shard_fdw_tests/<access key> is not
authorized to perform: dynamodb:<Action> on resource:
arn:aws:dynamodb:<region>:000000000000:table/<T>[/index/<I>] because no
identity-based policy allows the dynamodb:<Action> action", the region
that of the signature; nothing is forwarded.
"""

from ddbprotocol import CORAL, BadControlRequest, ProxyError
from sigv4check import parse_authorization

# The IAM action each action of a transaction is authorized as.
TRANSACT_PERMISSIONS = {"Put": "PutItem", "Update": "UpdateItem",
                        "Delete": "DeleteItem",
                        "ConditionCheck": "ConditionCheckItem",
                        "Get": "GetItem"}
# The account of the ARNs a denial names (DynamoDB Local's).
DENIAL_ACCOUNT = "000000000000"


def permissions_of(action, request):
    """(IAM action, table or None, index or None) for every permission a
    request needs, as IAM checks them (see the module docstring)."""
    if action in ("TransactWriteItems", "TransactGetItems"):
        return [(TRANSACT_PERMISSIONS[kind], op.get("TableName"), None)
                for entry in request.get("TransactItems", [])
                for kind, op in entry.items() if kind in TRANSACT_PERMISSIONS]
    if action in ("BatchGetItem", "BatchWriteItem"):
        return [(action, table, None) for table in request.get("RequestItems", {})]
    if "TableName" in request:
        return [(action, request["TableName"], request.get("IndexName"))]
    return [(action, None, None)]


def check_denials(entries):
    """Validate a deny_actions list; returns it as {"action", "table"} objects."""
    if not isinstance(entries, list):
        raise BadControlRequest("deny_actions is a list")
    denials = []
    for entry in entries:
        if isinstance(entry, str):
            entry = {"action": entry}
        if (not isinstance(entry, dict) or not isinstance(entry.get("action"), str)
                or set(entry) - {"action", "table"}):
            raise BadControlRequest('a denied action is "Action" or '
                                    '{"action": "Action", "table": "T"}')
        denials.append({"action": entry["action"].removeprefix("dynamodb:"),
                        "table": entry.get("table")})
    return denials


def first_denied(denials, action, request):
    """The first permission of a request that denials (deny_actions, as
    check_denials returns it) refuses, as (IAM action, table, index), or
    None."""
    for permission in permissions_of(action, request):
        for denial in denials:
            if (denial["action"] == permission[0] and
                    denial["table"] in (None, permission[1])):
                return permission
    return None


def access_denied(authorization, iam_action, table, index):
    """The AccessDeniedException of a permission deny_actions refuses, to
    the caller whose Authorization header is authorization."""
    try:
        auth = parse_authorization(authorization or "")
        access_key, region = auth.access_key, auth.region
    except ProxyError:
        access_key, region = "anonymous", "us-east-1"
    resource = (f"arn:aws:dynamodb:{region}:{DENIAL_ACCOUNT}:table/"
                f"{table if table is not None else '*'}"
                f"{f'/index/{index}' if index else ''}")
    return ProxyError(
        400, CORAL + "AccessDeniedException",
        f"User: arn:aws:sts::{DENIAL_ACCOUNT}:assumed-role/shard_fdw_tests/"
        f"{access_key} is not authorized to perform: dynamodb:{iam_action} "
        f"on resource: {resource} because no identity-based policy allows "
        f"the dynamodb:{iam_action} action")
