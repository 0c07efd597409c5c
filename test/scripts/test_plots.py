#!/usr/bin/python3
"""bench/plots.sh end to end, in a tiny configuration.

The script runs bench/topn.sh, bench/hotkey.sh, bench/reports.sh and
bench/parallel.sh (each starting its own DynamoDB Local, proxy and
PostgreSQL, with the extension already installed) on a few hundred or
thousand items and a few seconds of writes,
then draws their TSV files with gnuplot into a scratch directory.  The
test checks that every PNG is drawn, that the TSVs hold what the benches
measured (one request per shard, the loaded item counts, a hot-key time
series whose rows add up to the rows the bench reports, the dynamic key's
shard count, the parallel workers launched), that PLOTS_DRAW_ONLY=1 redraws from them, and that a TSV
missing a column makes the script fail.  gnuplot-nox is installed by the
script when missing; when it is missing and this is not root, the test is
skipped with a line saying so.  Ends with "N passed, N failed".
"""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import bed

runner = bed.Runner()
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = tempfile.mkdtemp(prefix="shard_fdw-test-plots.")
SHARDS = (1, 2)
PLAYERS = 1000
SCAN_ITEMS = 3000
PNGS = ("topn", "hotkey", "reports_items", "reports_join", "parallel")
TINY = {
    "BENCH_SKIP_BUILD": "1", "BENCH_LATENCY_MS": "1", "BENCH_RUNS": "1",
    "BENCH_WARMUP": "0",
    # topn: two shard counts, a few hundred scores
    "BENCH_SHARDS": ",".join(map(str, SHARDS)), "BENCH_SCORES": "300",
    "BENCH_BED_RUNS": "2",
    # hotkey: two seconds a variant, INSERTs short enough to end soon after
    "BENCH_SECONDS": "2", "BENCH_BUDGET": "50", "BENCH_CHUNK": "20",
    # reports: the 1,000-player join needs 1,000 players
    "BENCH_PLAYERS": str(PLAYERS), "BENCH_BIG_WATCHED": "0",
    # parallel: a few thousand items, parallel plans however small
    "BENCH_ITEMS": str(SCAN_ITEMS), "BENCH_MIN_SCAN_SIZE": "8kB", "BENCH_SETUP_COST": "0",
}
state = {}


def plots(**settings):
    """Run bench/plots.sh into OUT; returns the CompletedProcess."""
    env = {**os.environ, "PLOTS_DIR": OUT, **TINY, **settings}
    return subprocess.run(["bash", os.path.join(ROOT, "bench", "plots.sh")],
                          env=env, text=True, capture_output=True, check=False,
                          timeout=600)


def table(name, directory=OUT):
    """(notes {key: value}, rows [{column: text}]) of directory/name.tsv."""
    notes, lines = {}, []
    with open(os.path.join(directory, f"{name}.tsv"), encoding="utf-8") as tsv:
        for line in tsv.read().splitlines():
            if line.startswith("# "):
                key, _, value = line[2:].partition(": ")
                notes[key] = value
            else:
                lines.append(line.split("\t"))
    header, *rows = lines
    assert all(len(r) == len(header) for r in rows), (name, header, rows)
    return notes, [dict(zip(header, r)) for r in rows]


def png_size(path):
    """(width, height) of a PNG file; fails on anything else."""
    with open(path, "rb") as png:
        head = png.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


@runner.test
def every_plot_is_drawn():
    result = state["run"]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in PNGS:
        width, height = png_size(os.path.join(OUT, f"{name}.png"))
        assert width == 1000 and height >= 600, (name, width, height)
        assert os.path.getsize(os.path.join(OUT, f"{name}.png")) > 10000, name
        assert re.search(rf"^==> drew \S+/{name}\.png$", result.stdout, re.M), \
            result.stdout[-2000:]
    for bench in ("topn", "hotkey", "reports", "parallel"):
        with open(os.path.join(OUT, f"{bench}.txt"), encoding="utf-8") as report:
            assert re.search(r"^(summary|hotkey): ", report.read(), re.M), bench


@runner.test
def topn_data_is_what_the_bench_measured():
    notes, rows = table("topn")
    assert notes["latency added per request"] == "1 ms", notes
    assert re.fullmatch(r"[0-9.]+", notes["load average before"]), notes
    assert [int(r["shards"]) for r in rows] == list(SHARDS), rows
    for row in rows:
        n = int(row["shards"])
        # one Query per shard for every method: the proxy counted them
        for method in ("shard_fdw", "sequential", "shard_loop", "thread_pool"):
            assert int(row[f"{method}_requests"]) == n, row
            assert float(row[f"{method}_ms"]) > 0, row
        # the backend's CPU was read from /proc, the services' by their pids
        for column in ("backend_cpu_ms", "proxy_cpu_ms", "ddb_cpu_ms"):
            assert float(row[column]) >= 0, row


@runner.test
def hotkey_series_adds_up_to_the_rows_written():
    notes, rows = table("hotkey")
    assert notes["budget B"].startswith("50 "), notes
    with open(os.path.join(OUT, "hotkey.txt"), encoding="utf-8") as report:
        text = report.read()
    variants = ("static N=1", "static N=10", "dynamic", "unbudgeted N=1",
                "unbudgeted dynamic")
    assert sorted({r["variant"] for r in rows}) == sorted(variants), rows
    for variant in variants:
        series = [r for r in rows if r["variant"] == variant]
        seconds = [float(r["seconds"]) for r in series]
        assert seconds == sorted(seconds) and seconds[0] > 0, series
        written = sum(float(r["rows_per_s"]) * (t - previous) for r, t, previous
                      in zip(series, seconds, [0.0] + seconds))
        reported = int(re.search(rf"^{re.escape(variant)} +(\d+) ", text, re.M).group(1))
        # the series counts the PutItems the proxy answered while sampling,
        # the report the rows INSERTs wrote; only a dynamic key's metadata
        # writes and the last half second may differ
        assert abs(written - reported) <= 0.1 * reported + 60, (variant, written, reported)
        assert all(float(r["rows_per_s"]) >= 0 for r in series), series
        shards = [r["shards"] for r in series]
        if variant.endswith("dynamic"):
            counts = [int(s) for s in shards if s != "NaN"]
            assert counts and counts == sorted(counts), shards
        else:
            assert set(shards) == {"NaN"}, shards
    final = re.search(r"ended at (\d+) shards", text).group(1)
    last = [r["shards"] for r in rows if r["variant"] == "dynamic"][-1]
    assert last == final, (last, final)


@runner.test
def reports_data_counts_the_items_read():
    _, items = table("reports_items")
    by_query = {r["query"]: r for r in items}
    for query in ("count(*)", "rank", "top-100 both keys",
                  "top-50 en-x-icu tie-breaker", "top-100 nothing claimed"):
        assert query in by_query, list(by_query)
    assert by_query["count(*)"]["items_returned"] == "0", by_query["count(*)"]
    assert by_query["rank"]["items_returned"] == "0", by_query["rank"]
    assert by_query["top-100 nothing claimed"]["items_scanned"] == str(PLAYERS)
    assert by_query["top-100 both keys"]["items_returned"] == "100"
    assert int(by_query["top-100 both keys"]["items_scanned"]) < PLAYERS
    # a player's lookup reads the player's shard and returns the one item
    for query in ("player's lookup", "player's rank"):
        assert by_query[query]["items_returned"] == "1", by_query[query]
        assert int(by_query[query]["items_scanned"]) > 1, by_query[query]
    _, joins = table("reports_join")
    assert [r["watched"] for r in joins] == ["10", "1000"], joins
    for row in joins:
        assert int(row["lookups16_requests"]) == int(row["watched"]), row
        assert int(row["shards_join_requests"]) == 10, row
        assert all(float(row[f"{m}_ms"]) > 0
                   for m in ("shard_fdw", "lookups16", "shards_join")), row


@runner.test
def parallel_data_counts_the_workers():
    notes, rows = table("parallel")
    assert notes["items"] == str(SCAN_ITEMS), notes
    assert [(r["workers"], r["launched"]) for r in rows] == \
        [("0", "0"), ("2", "2"), ("4", "4")], rows
    assert rows[0]["ratio"] == "1.000", rows
    for row in rows:
        assert float(row["rows_per_s"]) > 0 and float(row["wall_s"]) > 0, row
        for column in ("leader_cpu_s", "workers_cpu_s", "ddb_cpu_s"):
            assert float(row[column]) >= 0, row


@runner.test
def draw_only_redraws_from_the_data():
    before = {n: os.stat(os.path.join(OUT, f"{n}.png")).st_mtime_ns for n in PNGS}
    result = plots(PLOTS_DRAW_ONLY="1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bench/" not in result.stdout, result.stdout
    for name in PNGS:
        assert os.stat(os.path.join(OUT, f"{name}.png")).st_mtime_ns > before[name], name


@runner.test
def a_missing_column_fails_the_drawing():
    broken = tempfile.mkdtemp(prefix="shard_fdw-test-plots-broken.")
    try:
        with open(os.path.join(OUT, "topn.tsv"), encoding="utf-8") as tsv:
            text = tsv.read()
        with open(os.path.join(broken, "topn.tsv"), "w", encoding="utf-8") as tsv:
            tsv.write(text.replace("shard_loop_ms", "shard_loop_msec"))
        result = plots(PLOTS_DRAW_ONLY="1", PLOTS_DIR=broken)
        assert result.returncode != 0, result.stdout
        assert "topn.png" in result.stderr, result.stderr
    finally:
        shutil.rmtree(broken)


def set_up():
    state["run"] = plots()
    print(state["run"].stdout[-1500:], end="")


def main():
    if shutil.which("gnuplot") is None and os.geteuid() != 0:
        print("skipped: gnuplot is not installed and installing gnuplot-nox "
              "needs root (apt-get install gnuplot-nox)")
        print("0 passed, 0 failed")
        sys.exit(0)
    try:
        runner.main(set_up, lambda: None)
    finally:
        shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()
