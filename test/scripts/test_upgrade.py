#!/usr/bin/python3
"""Upgrades from every earlier release to the version shard_fdw.control names.

The script of each release stays in the tree (shard_fdw--V.sql), and each
later version ships an upgrade script (shard_fdw--A--B.sql); the Makefile
installs them all.  For every earlier release V:

* a database made with CREATE EXTENSION shard_fdw VERSION 'V' and updated
  with ALTER EXTENSION shard_fdw UPDATE ends at the default version, and
  its extension's objects are those a fresh CREATE EXTENSION makes:
  pg_dump --schema-only --binary-upgrade, which writes out each object
  of the extension, is the same for both.  A missing upgrade script, or one
  that leaves an object as the earlier release had it, fails here.

In a database made under the previous release (the newest earlier one),
servers, user mappings and foreign tables of every kind
(bed.every_kind_of_table) are made and read before the update; after it
they read the same rows, take writes, the layout history still places
rows (shard_fdw_reshard moves them), a role reads through its own user
mapping, and the event triggers still check and record what an ALTER
changes.  Ends with "N passed, N failed".
"""

import difflib
import json
import os
import re

import bed

runner = bed.Runner()
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ROLE = "regress_upgrade_reader"
DATABASES = []
tables = []


def version_key(version):
    """A version as a tuple of numbers, for ordering."""
    return tuple(int(part) for part in version.split("."))


def default_version():
    """default_version of shard_fdw.control."""
    with open(os.path.join(REPO, "shard_fdw.control"), encoding="utf-8") as control:
        return re.search(r"^default_version = '([^']+)'", control.read(), re.M).group(1)


def earlier_releases():
    """The releases whose script is in the tree, before the default
    version, oldest first."""
    versions = [m.group(1) for m in (re.fullmatch(r"shard_fdw--([0-9.]+)\.sql", name)
                                     for name in os.listdir(REPO)) if m]
    current = version_key(default_version())
    return sorted((v for v in versions if version_key(v) < current), key=version_key)


def new_database(prefix, version=None):
    """A database with the extension, at version or the default; its name."""
    name = bed.unique_name(prefix)
    DATABASES.append(name)
    bed.psql(f"CREATE DATABASE {name}")
    clause = f" VERSION '{version}'" if version else ""
    bed.in_database(name)(f"CREATE EXTENSION shard_fdw{clause}")
    return name


def update(database):
    """ALTER EXTENSION shard_fdw UPDATE in database; the version it ends at."""
    bed.in_database(database)("ALTER EXTENSION shard_fdw UPDATE")
    return bed.query("SELECT extversion FROM pg_extension WHERE extname = 'shard_fdw'",
                     database=database)[0][0]


def extension_objects(database):
    """The extension's objects as pg_dump --binary-upgrade writes them out
    (the database holds nothing else), without the OIDs and LSNs it keeps
    for each relation and type (a view's), which no two databases share."""
    return [re.sub(r"binary_upgrade_set_next_(\w+)\('[^']*'",
                   r"binary_upgrade_set_next_\1('…'", line)
            for line in bed.schema_dump(database, "--binary-upgrade")]


def rows(database):
    """Every table of bed.EVERY_KIND_READS read in database."""
    return {table: bed.query(text, database=database)
            for table, text in bed.EVERY_KIND_READS.items()}


def set_up():
    """The role the user mappings name."""
    bed.psql(f"DROP ROLE IF EXISTS {ROLE}; CREATE ROLE {ROLE};")


def tear_down():
    """The databases, the role and the DynamoDB tables."""
    for database in DATABASES:
        bed.psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    bed.drop_scratch(bed.ddb(direct=True), tables)
    bed.psql(f"DROP ROLE IF EXISTS {ROLE}")


@runner.test
def there_is_an_earlier_release():
    assert earlier_releases(), "no shard_fdw--V.sql of a release before " + default_version()


@runner.test
def every_release_updates_to_a_fresh_install():
    fresh = extension_objects(new_database("upgrade_fresh"))
    for version in earlier_releases():
        database = new_database("upgrade_from", version)
        assert update(database) == default_version(), version
        updated = extension_objects(database)
        assert updated == fresh, f"updated from {version}:\n" + "\n".join(
            difflib.unified_diff(fresh, updated, "fresh", f"from {version}", lineterm=""))


@runner.test
def objects_of_the_previous_release_keep_working():
    database = new_database("upgrade_objects", earlier_releases()[-1])
    sql = bed.in_database(database)
    bed.every_kind_of_table(database, bed.env("SHARD_FDW_ENDPOINT"), tables, ROLE)
    before = rows(database)
    assert all(before.values()), before
    update(database)
    assert rows(database) == before
    # writes, in the newest layout and through dynamic sharding's metadata
    sql("""INSERT INTO board VALUES ('game0', 'new', 5);
           INSERT INTO files VALUES ('/shared/f0.txt', 5000, 'new');
           INSERT INTO learnt VALUES ('g9', 'new', 1, '0001');""")
    assert bed.query("SELECT score FROM board WHERE game_id = 'game0' AND player_id = 'new'",
                     database=database) == [["5"]]
    assert bed.query("SELECT who FROM files WHERE file_path = '/shared/f0.txt' AND ts = 5000",
                     database=database) == [["new"]]
    # the layout history made before the update: its items are read and moved
    moved = bed.query("SELECT moved > 0, remaining FROM shard_fdw_reshard('board')",
                      database=database)
    assert moved == [["t", "0"]], moved
    # a role reads through its own user mapping
    assert bed.query(f"SET ROLE {ROLE}; SELECT count(*) FROM board",
                     database=database) == [[str(len(before["board"]) + 1)]]
    # the event triggers: a layout change is recorded, a bad key refused,
    # a table without keys learns them
    sql("ALTER FOREIGN TABLE board OPTIONS (SET shards '2')")
    history = bed.query("SELECT option_value FROM pg_options_to_table((SELECT ftoptions"
                        " FROM pg_foreign_table WHERE ftrelid = 'board'::regclass))"
                        " WHERE option_name = 'layout_history'", database=database)
    assert json.loads(history[0][0])[0]["shards"] == "8", history
    plain = next(name for name in tables if name.startswith("every_plain"))
    refused = bed.psql(f"CREATE FOREIGN TABLE wrong (game text, player text) SERVER ddb"
                       f" OPTIONS (table '{plain}', partition_key 'player')",
                       check=False, database=database)
    assert "does not have" in refused.stderr, refused.stderr
    sql("ALTER FOREIGN TABLE unlearnt OPTIONS (ADD consistent_read 'true')")
    assert bed.query("SELECT game FROM unlearnt WHERE game = 'g9' AND player = 'new'",
                     database=database) == [["g9"]]


if __name__ == "__main__":
    runner.main(set_up, tear_down)
