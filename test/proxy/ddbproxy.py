#!/usr/bin/python3
"""A DynamoDB proxy for shard_fdw's tests.

It stands between the extension and DynamoDB Local and adds what DynamoDB
Local lacks:

* SigV4 verification of every request, computed by botocore, so the
  extension's own signer is checked by an independent implementation.
* Latency added before each request is forwarded.
* Faults, queued through the control API and consumed by the requests
  they match: error statuses, throttles, connection resets, slow,
  malformed, truncated and corrupted (bad x-amz-crc32) responses.
* Write budgets: token buckets per partition-key value and per table that
  answer ProvisionedThroughputExceededException with ThrottlingReasons, as
  DynamoDB does for hot keys.
* Denied actions: IAM actions refused with AccessDeniedException, as
  DynamoDB refuses what the caller's policy does not allow.

This file is its command line; the proxy is made of the modules beside it,
one concern each:

  proxyfront.py       the HTTP front: DynamoDB requests forwarded, the
                      control API under /__proxy/ (its calls listed there)
  proxystate.py       the shared state and the settings of /__proxy/config
  ddbprotocol.py      DynamoDB's errors and answers, reading requests
  sigv4check.py       SigV4 verification
  iamdenials.py       denied actions (deny_actions), checked as IAM does
  faultspecs.py       fault specs, their kinds and keys, and the queue
  faultanswers.py     what each kind of fault does to its request
  answermutations.py  the mutations of answers ("mutate" faults)
  writebudgets.py     write budgets per key and per table
  tablecatalog.py     key schemas and ARNs learnt from DescribeTable
  proxystats.py       the counters of /__proxy/stats
"""

import argparse
import sys

from proxyfront import Handler, Server
from proxystate import Proxy


def parse_credentials(values):
    """--credentials AKID:SECRET[:TOKEN] values -> {akid: (secret, token)}."""
    credentials = {}
    for value in values:
        parts = value.split(":", 2)
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise SystemExit(f"--credentials wants AKID:SECRET[:TOKEN], not {value!r}")
        credentials[parts[0]] = (parts[1], parts[2] if len(parts) == 3 else None)
    return credentials


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen-host", default="127.0.0.1")
    parser.add_argument("--listen-port", type=int, required=True)
    parser.add_argument("--backend", required=True,
                        help="DynamoDB Local's URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--credentials", action="append", default=[],
                        metavar="AKID:SECRET[:TOKEN]",
                        help="a key pair the proxy accepts (repeatable)")
    parser.add_argument("--verify-signatures", default=True,
                        action=argparse.BooleanOptionalAction)
    parser.add_argument("--latency-ms", type=int, default=0)
    return parser.parse_args(argv)


def main(argv):
    """Run the proxy until it is killed."""
    args = parse_args(argv)
    credentials = parse_credentials(args.credentials)
    if args.verify_signatures and not credentials:
        raise SystemExit("--verify-signatures needs at least one --credentials")
    server = Server((args.listen_host, args.listen_port), Handler)
    server.proxy = Proxy(args.backend, credentials, args.verify_signatures,
                         args.latency_ms)
    host, port = server.server_address[:2]
    print(f"ddbproxy: listening on http://{host}:{port}, backend {args.backend}",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])
