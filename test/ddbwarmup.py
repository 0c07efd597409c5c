"""test/ddbwarmup.py ENDPOINT: one request of each kind of expression to a
DynamoDB Local that has just started, one at a time, before any test sends
them concurrently.

A DynamoDB Local whose JVM has not parsed an expression yet may fail the
first ones it parses at once: of sixteen concurrent conditional PutItems,
one was refused with "ValidationException: Invalid ConditionExpression:
Index 0 out of bounds for length 0", while the fifteen others, identical
in form, were written.  DynamoDB itself has no such start; the test bed
parses each kind (condition, update, key condition, filter, projection,
in a transaction too) once, so that the tests meet only DynamoDB's own
behaviour.  The table it makes is deleted again.
"""

import sys

import boto3

TABLE = "shard_fdw_warmup"


def main(endpoint):
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="warmup", aws_secret_access_key="warmup")
    client.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"}])
    key = {"pk": {"S": "p"}, "sk": {"S": "s"}}
    names = {"#pk": "pk", "#v": "v"}
    try:
        client.put_item(TableName=TABLE, Item={**key, "v": {"N": "1"}},
                        ConditionExpression="attribute_not_exists(#pk)",
                        ExpressionAttributeNames={"#pk": "pk"})
        client.update_item(TableName=TABLE, Key=key, UpdateExpression="SET #v = #v + :one",
                           ConditionExpression="attribute_exists(#pk)",
                           ExpressionAttributeNames=names,
                           ExpressionAttributeValues={":one": {"N": "1"}})
        client.query(TableName=TABLE, KeyConditionExpression="#pk = :p AND begins_with(sk, :s)",
                     FilterExpression="#v > :zero", ProjectionExpression="#pk, #v",
                     ExpressionAttributeNames=names,
                     ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "s"},
                                                ":zero": {"N": "0"}})
        client.scan(TableName=TABLE, FilterExpression="attribute_type(#v, :n)",
                    ExpressionAttributeNames={"#v": "v"},
                    ExpressionAttributeValues={":n": {"S": "N"}})
        client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": TABLE, "Key": key,
                        "ConditionExpression": "#v = :two",
                        "ExpressionAttributeNames": {"#v": "v"},
                        "ExpressionAttributeValues": {":two": {"N": "2"}}}}])
    finally:
        client.delete_table(TableName=TABLE)


if __name__ == "__main__":
    main(sys.argv[1])
