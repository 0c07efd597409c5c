#!/usr/bin/python3
"""test/quickstart.py [sql|sh] — the fenced blocks of one language (sql
by default) in the README's "Quick start in psql" section, in order, as
one script on stdout: what a newcomer types after bash test/demo.sh
--keep.  test/fresh-debian.sh pipes the SQL into psql on the playground;
test/scripts/test_readme.py runs it on the test bed.
"""

import os
import re
import sys

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def blocks(language):
    """The fenced blocks of language in the quick start section."""
    with open(README, encoding="utf-8") as readme:
        text = readme.read()
    start = text.index("## Quick start in psql")
    end = text.index("\n## ", start + 1)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end], re.S)


if __name__ == "__main__":
    print("\n".join(blocks(sys.argv[1] if len(sys.argv) > 1 else "sql")), end="")
