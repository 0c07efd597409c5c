#!/usr/bin/python3
"""Have the test proxy answer the next DynamoDB requests with a given body.

Usage: answer.py ACTION BODY [COUNT]

The next COUNT (default 1) requests of operation ACTION get HTTP 200 with
BODY, framed correctly (Content-Length, x-amz-crc32) and never forwarded:
the proxy's "malformed" fault.  In BODY, \\xNN stands for the raw byte NN,
so that a body may hold bytes that are not UTF-8.
"""

import json
import os
import re
import sys
import urllib.request


def main():
    action, body = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    # the proxy writes a lone surrogate U+DCNN as the byte NN
    body = re.sub(r"\\x([0-9A-Fa-f]{2})",
                  lambda m: chr(0xDC00 + int(m.group(1), 16)), body)
    spec = {"kind": "malformed", "action": action, "body": body, "count": count}
    request = urllib.request.Request(
        os.environ["SHARD_FDW_PROXY"] + "/faults",
        data=json.dumps(spec).encode(), method="POST")
    urllib.request.urlopen(request).read()


if __name__ == "__main__":
    main()
