"""Sustained writes into one hot key under a per-key write budget.

Run by bench/hotkey.sh once DynamoDB Local, the test proxy and PostgreSQL
are up (it reads the environment test/lib.sh exports).  Every number it
prints is measured in this run.

The proxy's key budget gives every (table, partition key value) BUDGET
writes a second (a token bucket of BUDGET tokens that starts full) and
answers the rest with ProvisionedThroughputExceededException naming
TableWriteKeyRangeThroughputExceeded, as DynamoDB throttles a hot key.
SESSIONS psql sessions, each kept open for the whole run, insert rows of
one logical key for SECONDS, one INSERT of CHUNK rows after another,
through foreign tables over fresh DynamoDB tables:

  static N=1          shard_strategy 'random', shards '1'
  static N=10         shard_strategy 'random', shards '10'
  dynamic             shard_strategy 'dynamic', from one shard and never
                      told N (cooldown_s COOLDOWN_S; max_shards and
                      metadata_cache_ms at their defaults)
  unbudgeted N=1      static N=1 and dynamic again with the budget off:
  unbudgeted dynamic  what the sessions, the proxy and DynamoDB Local carry
                      at most, the ceiling of the variants above

For each it prints the rows written per second over the whole run and,
from the proxy's counters, over its second half (once a dynamic key has
stopped growing), both also divided by BUDGET; the throttles the proxy
answered; then it reads every row back through the foreign table and
checks that the rows stored are exactly those written: all rows of an
INSERT that succeeded, as many of one that failed as its error context
says were written, none twice.  Exits non-zero if a row was lost or
duplicated.
"""

import collections
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "scripts"))
import bed  # noqa: E402  (the test bed's psql, proxy and boto3 helpers)
import benchdata  # noqa: E402  (bench/benchdata.py: the settings, the TSV for bench/plots.sh)

BUDGET, SECONDS, SESSIONS, CHUNK, COOLDOWN_S = benchdata.settings(
    BUDGET=100, SECONDS=20.0, SESSIONS=8, CHUNK=100, COOLDOWN_S=1)
HOT_KEY = "/shared/firetvGen2.txt"
KEY_FILTER = f"""'{{"file_path": "{HOT_KEY}"}}'"""   # shard_fdw_metadata's argument
SESSION_STRIDE = 10 ** 9    # session s writes seq s * SESSION_STRIDE + i
CONTEXT_WRITTEN = " of this statement written"
SAMPLE_S = 0.5              # how often the proxy's counters are read
SERIES_S = 1.0              # the interval of the time series (a multiple of SAMPLE_S)

STATIC_1 = "shard_strategy 'random', shards '1', shard_base '1'"
STATIC_10 = "shard_strategy 'random', shards '10', shard_base '1'"
DYNAMIC = ("shard_strategy 'dynamic', metadata_table '{metadata}', "
           f"metadata_key 'file_path', cooldown_s '{COOLDOWN_S}'")

# (name, whether the key budget is on, the foreign table's sharding options)
VARIANTS = (
    ("static N=1", True, STATIC_1),
    ("static N=10", True, STATIC_10),
    ("dynamic", True, DYNAMIC),
    ("unbudgeted N=1", False, STATIC_1),
    ("unbudgeted dynamic", False, DYNAMIC),
)


def say(message):
    print(f"==> {message}", flush=True)


@dataclass
class Chunk:
    """One INSERT of a session: rows first .. first + CHUNK - 1."""

    first: int
    written: int        # rows it wrote (on an error, its context's count)
    failed: bool        # ended by the throttling error


@dataclass
class Result:
    """What one variant measured and found."""

    name: str
    budget: bool
    rows: int           # rows the INSERTs wrote
    seconds: float      # from the start until the last INSERT ended
    steady: float       # rows written per second in the second half
    throttles: int      # requests the proxy throttled
    failed: int         # INSERTs ended by the throttling error
    lost: int
    duplicated: int
    history: list       # a dynamic key's shard_history as (epoch, count)
    series: list        # (seconds from the start, rows/s, shards) per SERIES_S

    @property
    def rate(self):
        return self.rows / self.seconds


# ------------------------------------------------------------------ setup


def sql(text):
    """Run SQL; an error stops the benchmark with psql's message."""
    result = bed.psql(text, check=False)
    if result.returncode != 0:
        sys.exit(f"{result.stderr.strip()}\nin: {text.strip()[:300]}")
    return result


def set_up_server():
    """The extension and a server reaching DynamoDB through the proxy."""
    sql(f"""
        CREATE EXTENSION IF NOT EXISTS shard_fdw;
        DROP SERVER IF EXISTS hotkey CASCADE;
        CREATE SERVER hotkey FOREIGN DATA WRAPPER shard_fdw
          OPTIONS (endpoint '{bed.env("SHARD_FDW_ENDPOINT")}');
        CREATE USER MAPPING FOR CURRENT_USER SERVER hotkey
          OPTIONS (access_key_id '{bed.env("SHARD_FDW_ACCESS_KEY")}',
                   secret_access_key '{bed.env("SHARD_FDW_SECRET_KEY")}');""")




def foreign_table(client, options):
    """Foreign table hot over a fresh DynamoDB table (and a metadata table
    when the options name one); returns the DynamoDB tables made."""
    tables = [bed.unique_name("hotkey")]
    bed.create_table(client, tables[0], "pk", "seq", sort_type="N")
    if "{metadata}" in options:
        tables.append(bed.unique_name("hotkey_shards"))
        bed.create_table(client, tables[-1], "file_path")
        options = options.format(metadata=tables[-1])
    sql(f"""
        CREATE FOREIGN TABLE hot (file_path text, seq bigint)
          SERVER hotkey OPTIONS (table '{tables[0]}',
            partition_key 'pk', partition_key_format '{{file_path}}_{{shard}}',
            sort_key 'seq', {options});""")
    return tables


# ------------------------------------------------------------------ writing


class Session:
    """One psql process kept open for a whole run, so that its backend keeps
    its connections (and a dynamic key's cached metadata) from one INSERT
    to the next, as an application's would.  Statements go to its stdin;
    errors and an end-of-statement marker come back on its stderr."""

    MARKER = "@@statement done"

    def __init__(self):
        self.process = subprocess.Popen(
            ["psql", "-X", "-q", "-v", "VERBOSITY=verbose"], text=True,
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)

    def run(self, statement):
        """Run one statement; returns psql's error text ("" on success)."""
        self.process.stdin.write(f"{statement}\n\\warn {self.MARKER}\n")
        self.process.stdin.flush()
        lines = []
        for line in self.process.stderr:
            if line.rstrip("\n") == self.MARKER:
                return "".join(lines).strip()
            lines.append(line)
        sys.exit(f"psql ended unexpectedly:\n{''.join(lines)}")

    def close(self):
        self.process.stdin.close()
        self.process.wait()

    def insert(self, first):
        """INSERT CHUNK rows from seq first; returns the Chunk.  Only the
        throttling error (53000) is expected; any other stops the run."""
        error = self.run(f"INSERT INTO hot SELECT '{HOT_KEY}', g "
                         f"FROM generate_series({first}, {first + CHUNK - 1}) g;")
        if not error:
            return Chunk(first, CHUNK, False)
        context = [line for line in error.splitlines() if CONTEXT_WRITTEN in line]
        if "53000" not in error or not context:
            sys.exit(f"an INSERT failed otherwise:\n{error}")
        return Chunk(first, int(context[0].split(CONTEXT_WRITTEN)[0].split()[-2]), True)


def write_for(seconds):
    """SESSIONS sessions inserting until the deadline; returns (chunks,
    seconds from the start until the last INSERT ended)."""
    chunks = []
    lock = threading.Lock()
    sessions = [Session() for _ in range(SESSIONS)]
    started = time.monotonic()
    deadline = started + seconds

    def write(number):
        first = number * SESSION_STRIDE
        while time.monotonic() < deadline:
            chunk = sessions[number - 1].insert(first)
            with lock:
                chunks.append(chunk)
            first += CHUNK

    bed.run_together(write, [(n,) for n in range(1, SESSIONS + 1)])
    elapsed = time.monotonic() - started
    for session in sessions:
        session.close()
    return chunks, elapsed


def admitted_writes():
    """PutItems the proxy forwarded and saw answered: those it saw less those
    it throttled and those still in flight (of any action; a PutItem is
    counted on arrival, before the budget decides on it)."""
    counters = bed.stats()
    return (counters["requests"].get("PutItem", 0) - counters["throttles"]["requests"]
            - counters["in_flight"])


class Sampler(threading.Thread):
    """Reads admitted_writes() every SAMPLE_S from its start until stopped,
    and once more then, and the hot key's number_of_shards when given a
    metadata table (read straight from DynamoDB Local, so the proxy does
    not count it)."""

    def __init__(self, metadata=None):
        super().__init__(daemon=True)
        self.samples = []       # (monotonic time, admitted writes, shards or None)
        self.stopping = threading.Event()
        self.metadata = metadata
        self.client = bed.ddb(direct=True) if metadata else None

    def shards(self):
        """The hot key's number_of_shards now, or None (a static table, or
        no metadata item yet)."""
        if not self.metadata:
            return None
        found = self.client.get_item(TableName=self.metadata, ConsistentRead=True,
                                     Key={"file_path": {"S": HOT_KEY}})
        count = found.get("Item", {}).get("number_of_shards")
        return int(count["N"]) if count else None

    def run(self):
        started = time.monotonic()
        taken = 0
        while not self.stopping.is_set():
            self.sample()
            taken += 1
            self.stopping.wait(max(0.0, started + taken * SAMPLE_S - time.monotonic()))

    def sample(self):
        """Append (now, admitted_writes(), shards())."""
        self.samples.append((time.monotonic(), admitted_writes(), self.shards()))

    def stop(self):
        self.stopping.set()
        self.join()
        self.sample()

    def rate(self, start, end):
        """Admitted writes per second between the samples nearest inside
        [start, end], or around it when fewer than two fall inside (a
        window about as short as SAMPLE_S)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            inside = [max((s for s in self.samples if s[0] <= start),
                          default=self.samples[0], key=lambda s: s[0]),
                      min((s for s in self.samples if s[0] >= end),
                          default=self.samples[-1], key=lambda s: s[0])]
        (t0, n0, _), (t1, n1, _) = inside[0], inside[-1]
        return (n1 - n0) / (t1 - t0)

    def series(self, start):
        """(seconds from start, admitted writes per second, shards at its
        end) for each SERIES_S interval sampled; the last one ends at the
        last sample, and is merged into the one before when shorter than
        half an interval (a rate over a moment is noise)."""
        every = self.samples[::max(1, round(SERIES_S / SAMPLE_S))]
        last = self.samples[-1]
        if every[-1] is not last:
            if len(every) > 1 and last[0] - every[-1][0] < SERIES_S / 2:
                every[-1] = last
            else:
                every.append(last)
        return [(t1 - start, (n1 - n0) / (t1 - t0), shards)
                for (t0, n0, _), (t1, n1, shards) in zip(every, every[1:])]


# ------------------------------------------------------------------ checking


def check_rows(chunks):
    """(lost, duplicated), from every row read back through the foreign
    table: rows written but not stored; rows stored twice, or stored
    though no INSERT wrote them."""
    stored = collections.Counter(
        int(seq) for seq, in bed.query(f"SELECT seq FROM hot WHERE file_path = '{HOT_KEY}'"))
    lost = duplicated = 0
    for chunk in chunks:
        counts = [stored.pop(seq) for seq in range(chunk.first, chunk.first + CHUNK)
                  if seq in stored]
        duplicated += sum(n - 1 for n in counts) + max(0, len(counts) - chunk.written)
        lost += max(0, chunk.written - len(counts))
    return lost, duplicated + sum(stored.values())


def shard_history():
    """The hot key's shard_history as (epoch, count) pairs by count."""
    (history,), = bed.query(
        f"SELECT shard_history FROM shard_fdw_metadata('hot', {KEY_FILTER})")
    pairs = (entry.split(":") for entry in history.strip("{}").split(","))
    return sorted(((int(e), int(c)) for e, c in pairs), key=lambda p: p[1])


# ------------------------------------------------------------------ running


def run_variant(client, name, budget, options):
    """Write into a fresh table of this variant; returns its Result."""
    tables = foreign_table(client, options)
    bed.reset_proxy()
    if budget:
        bed.configure(key_budget={"rate": BUDGET, "burst": BUDGET})
    sampler = Sampler(tables[1] if len(tables) > 1 else None)
    sampler.start()
    started = time.monotonic()
    chunks, seconds = write_for(SECONDS)
    sampler.stop()
    throttles = bed.stats()["throttles"]["requests"]
    bed.reset_proxy()
    lost, duplicated = check_rows(chunks)
    result = Result(
        name=name, budget=budget, rows=sum(c.written for c in chunks),
        seconds=seconds,
        steady=sampler.rate(started + SECONDS / 2, started + SECONDS),
        throttles=throttles, failed=sum(1 for c in chunks if c.failed),
        lost=lost, duplicated=duplicated,
        history=shard_history() if options == DYNAMIC else [],
        series=sampler.series(started))
    sql("DROP FOREIGN TABLE hot;")
    for table in tables:
        client.delete_table(TableName=table)
    return result


def report(results):
    """The table of rates, then the one-line summary; returns the number of
    rows lost or duplicated."""
    print()
    print(f"{'variant':<18} {'rows':>7} {'s':>5} {'rows/s':>7} {'÷B':>6} "
          f"{'2nd half/s':>10} {'÷B':>6} {'throttles':>9} {'failed':>6} "
          f"{'lost':>4} {'dup':>4} {'shards':>6}")
    for r in results:
        shards = r.history[-1][1] if r.history else ""
        print(f"{r.name:<18} {r.rows:>7} {r.seconds:>5.1f} {r.rate:>7.0f} "
              f"{r.rate / BUDGET:>6.2f} {r.steady:>10.0f} {r.steady / BUDGET:>6.2f} "
              f"{r.throttles:>9} {r.failed:>6} {r.lost:>4} {r.duplicated:>4} "
              f"{shards:>6}")
    print()
    print("÷B: divided by the budget B of one key, even without a budget; "
          "failed: INSERTs ended by the throttling error after their retries "
          "(the rows they wrote are kept and counted)")
    dynamic = next(r for r in results if r.budget and r.history)
    start = dynamic.history[0][0]
    print("dynamic shard_history (count@seconds after the first entry): " +
          " ".join(f"{count}@+{epoch - start}s" for epoch, count in dynamic.history))
    bad = sum(r.lost + r.duplicated for r in results)
    print(f"hotkey: B={BUDGET}/s, {SESSIONS} sessions, {SECONDS:.0f} s each: " +
          ", ".join(f"{r.name} {r.rate / BUDGET:.2f}×B"
                    for r in results if r.budget) +
          f" (ended at {dynamic.history[-1][1]} shards); without a budget " +
          ", ".join(f"{r.name.split()[-1]} {r.rate / BUDGET:.2f}×B"
                    for r in results if not r.budget) +
          f"; {bad} rows lost or duplicated")
    return bad


def write_data(results, load_before):
    """hotkey.tsv for bench/plots.sh: every variant's time series."""
    benchdata.write(
        "hotkey",
        ("variant", "budget", "seconds", "rows_per_s", "rows_per_s_over_B", "shards"),
        [(r.name, "yes" if r.budget else "no", t, rate, rate / BUDGET, shards)
         for r in results for t, rate, shards in r.series],
        {"bench": "rows/s into one hot key, per interval (bench/hotkey.py)",
         "budget B": f"{BUDGET} writes/s per partition key value",
         "sessions": f"{SESSIONS} psql sessions, INSERTs of {CHUNK} rows",
         "seconds per variant": f"{SECONDS:.0f}",
         "interval": f"{SERIES_S:.0f} s; rows are the PutItems the proxy admitted; "
                     "shards is the dynamic key's number_of_shards at its end",
         "cooldown_s": COOLDOWN_S,
         "load average before": f"{load_before:.1f}"})


def main():
    load_before = os.getloadavg()[0]
    say(f"budget B = {BUDGET} writes/s per key (burst {BUDGET}), {SESSIONS} "
        f"sessions, INSERTs of {CHUNK} rows, {SECONDS:.0f} s per variant")
    client = bed.ddb(direct=True)
    set_up_server()
    results = []
    for name, budget, options in VARIANTS:
        say(f"{name}: writing for {SECONDS:.0f} s")
        results.append(run_variant(client, name, budget, options))
    sql("DROP SERVER hotkey CASCADE;")
    bad = report(results)
    write_data(results, load_before)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
