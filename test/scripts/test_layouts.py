#!/usr/bin/python3
"""Property test: random layout changes against a local table.

A foreign table (k, r, id, n, v; partition key from a template of k and
sometimes r or n, sort key '{n:06}#{id}') and a local table with the same
rows (primary key k, n, id) go through one random sequence of steps:

* ALTERs of the layout options ALTER accepts: shards, shard_hash,
  shard_base, partition_key_format (whose columns change too) and
  shard_strategy (none, random, calculated with several shard_by lists,
  range over id with random boundaries and either range_normalize), one
  or several at once;
* INSERTs of new rows, of rows the table has (a unique violation, or
  skipped under ON CONFLICT DO NOTHING), UPDATEs of a non-key column and
  of n (which moves the item) by whole key, by partition, or by a
  condition over the whole table, of r (in some templates), DELETEs
  (direct, with RETURNING, by partition or over the whole table);
* reads: keyed, point (the whole key, or k and id), whole table, ordered
  by the sort key's fields with a LIMIT, counts;
* shard_fdw_reshard over the whole table or one partition;
* items rewritten as another application stores them, keeping k, r, n or
  id only inside their keys (boto3 removes their attributes), where no two
  of the table's templates could read the key.

Each statement runs on both tables and must give the same rows (in the
same order when ordered) or the same SQLSTATE; after every step the whole
foreign table reads as the local one (a Scan, and a Query of every k),
and DynamoDB holds exactly one item per row.

SHARD_FDW_TEST_SEED sets the random generator's seed (default below);
SHARD_FDW_LAYOUT_STEPS the number of steps.  A mismatch prints the seed
and the steps up to it.  Ends with "N passed, N failed".
"""

import os
import random
import re

import bed
from bed import sql_literal

runner, DATABASE, run, client, tables = bed.scratch("layouts")
SEED = int(os.environ.get("SHARD_FDW_TEST_SEED", "5150"))
STEPS = int(os.environ.get("SHARD_FDW_LAYOUT_STEPS", "700"))
rng = random.Random(SEED)
KS = ["g1", "g2", "gx"]
RS = ["eu", "us"]
TEMPLATES = ["{k}#{shard}", "{k}_{shard}", "{k}.{shard}", "{shard}#{k}", "e#{k}#{shard}",
             "{k}#{r}#{shard}", "{r}.{k}_{shard}", "{k}#{n:06}#{shard}"]
UNSHARDED_TEMPLATES = ["{k}", "u#{k}", "{k}~{r}"]
HASHES = ["sha256", "sha256_32", "md5", "fnv1a_32", "fnv1a_64"]
SHARD_BY = ["id", "k,id", "id,k", "n", "k,n,id", "r,id"]
LAYOUT_OPTIONS = ["shards", "shard_strategy", "shard_by", "shard_hash", "shard_base",
                  "range_boundaries", "range_normalize", "partition_key_format"]
ROW = "k, r, id, n, v"
state = {"steps": [], "layout": {}, "history": [], "next_id": 0}


class Mismatch(AssertionError):
    """The foreign table and the local one disagreed."""


def set_up():
    print(f"seed {SEED}; {STEPS} steps")
    bed.psql(f"CREATE DATABASE {DATABASE}")
    state["table"] = bed.new_table(client, tables, "layouts", "pk", "sk")
    layout = random_layout()
    state["layout"] = layout
    run(f"""CREATE EXTENSION shard_fdw;
            {bed.server_sql(direct=True)}
            CREATE FOREIGN TABLE ft (k text NOT NULL, r text NOT NULL,
                                     id text COLLATE "C" NOT NULL, n bigint NOT NULL, v text)
              SERVER ddb OPTIONS (table '{state["table"]}', partition_key 'pk',
                sort_key 'sk', sort_key_format '{{n:06}}#{{id}}', {options_sql(layout)});
            CREATE TABLE local (k text, r text, id text COLLATE "C", n bigint, v text,
                                PRIMARY KEY (k, n, id));""")
    state["session"] = bed.Session(DATABASE, field_separator="|")
    state["session"].run("\\set VERBOSITY sqlstate\n\\set QUIET off\nSELECT 1")
    rows = [fresh_row() for _ in range(60)]
    values = ", ".join(row_sql(r) for r in rows)
    statement(f"INSERT INTO {{t}} VALUES {values}")


def tear_down():
    if "session" in state:
        state["session"].close()
    bed.drop_scratch(client, tables, DATABASE)


# ------------------------------------------------------------ generation


def fresh_row():
    """A row with an id no row has had."""
    state["next_id"] += 1
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 4)))
    return (rng.choice(KS), rng.choice(RS), f"{word}{state['next_id']}",
            rng.randrange(1000000), rng.choice([None, "v", "w" + str(rng.randrange(100))]))


def row_sql(row):
    """A row as a VALUES tuple."""
    return "(" + ", ".join(sql_literal(v) for v in row) + ")"


def random_layout():
    """Random layout options, as a dict of option to value."""
    strategy = rng.choice(["none", "random", "calculated", "calculated", "range"])
    if strategy == "none":
        return {"partition_key_format": rng.choice(UNSHARDED_TEMPLATES)}
    shards = rng.randint(1, 6 if strategy == "random" else 9)
    layout = {"shard_strategy": strategy, "shards": str(shards),
              "partition_key_format": rng.choice(TEMPLATES)}
    if rng.random() < 0.5:
        layout["shard_base"] = rng.choice(["0", "1"])
    if strategy == "calculated":
        layout["shard_by"] = rng.choice(SHARD_BY)
        if rng.random() < 0.8:
            layout["shard_hash"] = rng.choice(HASHES)
    if strategy == "range":
        layout["shard_by"] = "id"
        bounds = sorted(rng.sample("bcdefghijklmnopqrstuvwxy", shards - 1))
        layout["range_boundaries"] = '["' + '", "'.join([""] + bounds) + '"]'
        if rng.random() < 0.5:
            layout["range_normalize"] = rng.choice(["none", "nfkd_lower"])
    return layout


def changed_layout(old):
    """old with one or more of its options changed, as ALTER would leave it."""
    kept = rows_kept_in_keys()
    for _ in range(20):
        if rng.random() < 0.4:
            new = random_layout()
        else:
            new = dict(old)
            for _ in range(rng.randint(1, 3)):
                change = rng.choice(["shards", "shard_hash", "shard_base", "format"])
                if new.get("shard_strategy") in (None, "range") and change in ("shards", "shard_hash"):
                    continue
                if change == "shards":
                    new["shards"] = str(rng.randint(1, 6 if new["shard_strategy"] == "random" else 9))
                elif change == "shard_hash" and new["shard_strategy"] == "calculated":
                    new["shard_hash"] = rng.choice(HASHES)
                elif change == "shard_base" and "shard_strategy" in new:
                    new["shard_base"] = rng.choice(["0", "1"])
                elif change == "format":
                    new["partition_key_format"] = rng.choice(
                        TEMPLATES if "shard_strategy" in new else UNSHARDED_TEMPLATES)
        if new != old and not makes_ambiguous(new, kept):
            return new
    return None


def options_sql(layout):
    """Layout options as the body of OPTIONS (...)."""
    return ", ".join(f"{name} {sql_literal(value)}" for name, value in layout.items())


def alter_sql(old, new):
    """The ALTER FOREIGN TABLE that takes the layout from old to new."""
    actions = []
    for name in LAYOUT_OPTIONS:
        if name in new and name in old and new[name] != old[name]:
            actions.append(f"SET {name} {sql_literal(new[name])}")
        elif name in new and name not in old:
            actions.append(f"ADD {name} {sql_literal(new[name])}")
        elif name in old and name not in new:
            actions.append(f"DROP {name}")
    return f"ALTER FOREIGN TABLE ft OPTIONS ({', '.join(actions)})"


def template_regex(template):
    """A regular expression matching the partition keys template renders."""
    parts = re.split(r"(\{[a-z]+(?::06)?\})", template)
    return re.compile("^" + "".join(r"\d+" if p in ("{shard}", "{n:06}") else
                                    "(.+)" if p.startswith("{") else re.escape(p)
                                    for p in parts) + "$")


def templates(layouts):
    """The partition key templates of the layouts."""
    return {layout["partition_key_format"] for layout in layouts}


def render(template, row):
    """The partition key template gives row (k, r, n), in shard 0."""
    k, r, n = row
    return (template.replace("{k}", k).replace("{r}", r)
            .replace("{n:06}", f"{int(n):06}").replace("{shard}", "0"))


def ambiguous(row, tmpls):
    """True when a key one of the templates tmpls gives row (k, r, n) is
    read by two of them: an item that keeps k or r only inside such a key
    could be either's, and no reader could tell."""
    return any(sum(1 for u in tmpls if template_regex(u).match(render(t, row))) > 1
               for t in tmpls)


def rows_kept_in_keys():
    """The rows (k, r, n) whose items keep k or r only inside their key."""
    rows = {(id_, int(n)): (k, r, n) for k, r, id_, n, _ in local_rows()}
    result = []
    for item in bed.stored_items(client, state["table"]):
        if "k" not in item or "r" not in item:
            n, id_ = item["sk"]["S"].split("#", 1)
            result.append(rows[(id_, int(n))])
    return result


def makes_ambiguous(new, kept):
    """True when an item keeping k or r only in its key (of the rows kept)
    could, once new is the newest layout and the item moves into any
    layout, be read by two templates."""
    tmpls = templates([new, state["layout"]] + state["history"])
    return any(ambiguous(row, tmpls) for row in kept)


# --------------------------------------------------------------- running


def outcome(lines, ordered=False):
    """What a statement gave: its SQLSTATE, or its lines (sorted unless
    ordered)."""
    for line in lines:
        m = re.match(r"ERROR:\s+([0-9A-Z]{5})", line)
        if m:
            return ("error", m[1])
    return ("rows", lines if ordered else sorted(lines))


def fail(message):
    """Raise a mismatch that names the seed and the steps so far."""
    steps = "\n".join(f"  {i + 1}. {s}" for i, s in enumerate(state["steps"]))
    raise Mismatch(f"{message}\nseed {SEED}; steps:\n{steps}")


def statement(template, ordered=False, check=True, step=True):
    """Run template ({t}: the table) on the foreign table and the local
    one; both must give the same outcome.  Returns it.  A step is listed
    among the steps a mismatch prints; the checks after each are not."""
    session = state["session"]
    if step:
        state["steps"].append(template.format(t="ft"))
    got = outcome(session.run(template.format(t="ft")), ordered)
    want = outcome(session.run(template.format(t="local")), ordered)
    if check and got != want:
        fail(f"{template.format(t='ft')}\n got {str(got)[:600]}\nwant {str(want)[:600]}")
    return got


def foreign(sql):
    """Run sql on the foreign table only (a step of its own); its lines,
    an error with its message and detail."""
    state["steps"].append(sql)
    state["session"].run("\\set VERBOSITY default\nSELECT 1")
    try:
        return state["session"].run(sql)
    finally:
        state["session"].run("\\set VERBOSITY sqlstate\nSELECT 1")


def local_rows():
    """The local table's rows (k, r, id, n, v), in key order: a run of a
    seed picks the same rows whatever order the heap keeps them in."""
    return [tuple(line.split("|")) for line in
            state["session"].run(f"SELECT {ROW} FROM local ORDER BY k, n, id")]


def check_all():
    """The whole foreign table, and each k's partition, read as the local
    table; DynamoDB holds one item per row."""
    statement(f"SELECT {ROW} FROM {{t}}", step=False)
    for k in KS:
        statement(f"SELECT {ROW} FROM {{t}} WHERE k = '{k}'", step=False)
    count = len(local_rows())
    items = bed.stored_items(client, state["table"])
    if len(items) != count:
        fail(f"DynamoDB holds {len(items)} items for {count} rows")


def some_row():
    """A row of the local table, or None."""
    rows = local_rows()
    return rng.choice(rows) if rows else None


# ------------------------------------------------------------------ steps


def step_alter():
    new = changed_layout(state["layout"])
    if new is None:
        return
    if len(state["history"]) >= 4:
        step_reshard(whole=True)
    lines = foreign(alter_sql(state["layout"], new))
    if any("ERROR" in line for line in lines):
        fail(f"the ALTER failed: {lines}")
    state["history"].insert(0, state["layout"])
    state["layout"] = new


def step_reshard(whole=None):
    if whole is None:
        # a partition is named by k and r; a key that holds n has one per row
        whole = rng.random() < 0.6 or any(
            "{n" in t for t in templates([state["layout"]] + state["history"]))
    if whole:
        lines = foreign("SELECT moved, remaining FROM shard_fdw_reshard('ft')")
    else:
        k = rng.choice(KS)
        r = rng.choice(RS)
        lines = foreign(f"SELECT moved, remaining FROM shard_fdw_reshard('ft', "
                        f"'{{\"k\": \"{k}\", \"r\": \"{r}\"}}')")
    if not lines or not lines[-1].endswith("|0") or any("ERROR" in line for line in lines):
        fail(f"the reshard did not finish: {lines}")
    if whole:
        state["history"] = []


def step_insert():
    rows = [fresh_row() for _ in range(rng.randint(1, 5))]
    existing = some_row()
    newest_random = state["layout"].get("shard_strategy") == "random"
    if existing and not newest_random and rng.random() < 0.5:
        k, r, id_, n, v = existing
        row = (k, r, id_, int(n), v or None)
        if rng.random() < 0.5:
            statement(f"INSERT INTO {{t}} VALUES {row_sql(row)}")
            return
        rows.insert(rng.randrange(len(rows) + 1), row)
        statement(f"INSERT INTO {{t}} VALUES {', '.join(row_sql(r) for r in rows)} "
                  "ON CONFLICT DO NOTHING")
        return
    statement(f"INSERT INTO {{t}} VALUES {', '.join(row_sql(r) for r in rows)} "
              f"RETURNING {ROW}")


def step_update():
    row = some_row()
    if row is None:
        return
    k, r, id_, n, _ = row
    value = sql_literal(rng.choice([None, "u" + str(rng.randrange(1000))]))
    # n stays under 10^6, which '{n:06}' orders
    setting = rng.choice([f"v = {value}", "n = (n + 1) % 1000000",
                          f"n = (n + {rng.randrange(5000)}) % 1000000, v = {value}",
                          f"r = '{rng.choice(RS)}'"])
    where = rng.choice([
        f"k = '{k}' AND id = '{id_}'",
        f"k = '{k}' AND id = '{id_}' AND n = {n}",
        f"k = '{k}' AND n < {rng.randrange(1000000)}",
        f"id < '{id_}'",
    ])
    if rng.random() < 0.5:
        statement(f"UPDATE {{t}} SET {setting} WHERE {where} RETURNING {ROW}")
    else:
        statement(f"UPDATE {{t}} SET {setting} WHERE {where}")


def step_delete():
    row = some_row()
    if row is None:
        return
    k, r, id_, n, _ = row
    where = rng.choice([
        f"k = '{k}' AND id = '{id_}'",
        f"k = '{k}' AND r = '{r}' AND id = '{id_}' AND n = {n}",
        f"k = '{k}' AND n > {rng.randrange(700000, 1000000)}",
        f"id LIKE '{id_[0]}%' AND n > 500000",
    ])
    returning = f" RETURNING {ROW}" if rng.random() < 0.5 else ""
    statement(f"DELETE FROM {{t}} WHERE {where}{returning}")


def step_read():
    row = some_row() or ("g1", "eu", "a", 0, "")
    k, r, id_, n, _ = row
    kind = rng.choice(["keyed", "keyed2", "point", "point2", "scan", "ordered", "count"])
    if kind == "keyed":
        statement(f"SELECT {ROW} FROM {{t}} WHERE k = '{k}' AND n >= {rng.randrange(1000000)}")
    elif kind == "keyed2":
        statement(f"SELECT {ROW} FROM {{t}} WHERE k = '{k}' AND r = '{r}'")
    elif kind == "point":
        statement(f"SELECT {ROW} FROM {{t}} WHERE k = '{k}' AND r = '{r}' AND id = '{id_}' "
                  f"AND n = {n}")
    elif kind == "point2":
        statement(f"SELECT {ROW} FROM {{t}} WHERE k = '{k}' AND id = '{id_}'")
    elif kind == "scan":
        statement(f"SELECT {ROW} FROM {{t}} WHERE v IS NOT NULL OR id > '{id_}'")
    elif kind == "ordered":
        order = rng.choice(["", " DESC"])
        limit = rng.choice(["", f" LIMIT {rng.randint(1, 30)}"])
        statement(f"SELECT {ROW} FROM {{t}} WHERE k = '{k}' AND r = '{r}' "
                  f"ORDER BY n{order}, id{order}{limit}", ordered=True)
    else:
        statement(f"SELECT count(*) FROM {{t}} WHERE k = '{k}'")
        statement("SELECT count(*) FROM {t}")


def step_strip():
    """Rewrite some items as another application stores them: k, r, n or id
    only inside their keys (r only where the key holds it)."""
    tmpls = templates([state["layout"]] + state["history"])
    rows = {(id_, int(n)): (k, r, n) for k, r, id_, n, _ in local_rows()}
    # in sort key order: random shards put items in another order each run
    items = sorted(bed.stored_items(client, state["table"]), key=lambda i: i["sk"]["S"])
    for item in rng.sample(items, min(len(items), rng.randint(1, 15))):
        names = [a for a in ("k", "r", "n", "id") if a in item and rng.random() < 0.7]
        n, id_ = item["sk"]["S"].split("#", 1)
        readers = [t for t in tmpls if template_regex(t).match(item["pk"]["S"])]
        for name in ("k", "r"):
            if name in names and (ambiguous(rows[(id_, int(n))], tmpls) or
                                  "{" + name + "}" not in readers[0]):
                names.remove(name)
        if not names:
            continue
        state["steps"].append(f"(boto3: remove {', '.join(names)} of item "
                              f"{item['pk']['S']} / {item['sk']['S']})")
        client.update_item(TableName=state["table"],
                           Key={"pk": item["pk"], "sk": item["sk"]},
                           UpdateExpression="REMOVE " + ", ".join(f"#{a}" for a in names),
                           ExpressionAttributeNames={f"#{a}": a for a in names})


STEP_KINDS = [(step_alter, 3), (step_reshard, 1), (step_insert, 3), (step_update, 4),
              (step_delete, 2), (step_read, 4), (step_strip, 2)]


@runner.test
def test_random_layout_changes_keep_every_row():
    check_all()
    counts = {}
    functions = [f for f, _ in STEP_KINDS]
    weights = [w for _, w in STEP_KINDS]
    for _ in range(STEPS):
        step = rng.choices(functions, weights)[0]
        step()
        counts[step.__name__] = counts.get(step.__name__, 0) + 1
        check_all()
    step_reshard(whole=True)
    check_all()
    print(f"   {len(state['steps'])} statements; steps: {counts}; "
          f"{len(local_rows())} rows at the end")


if __name__ == "__main__":
    runner.main(set_up, tear_down)
