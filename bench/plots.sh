#!/usr/bin/env bash
# bench/plots.sh — regenerates every figure of doc/benchmarks.md: runs
# bench/topn.sh, bench/hotkey.sh, bench/reports.sh and bench/parallel.sh
# (each with its own
# DynamoDB Local, proxy and PostgreSQL) with BENCH_DATA_DIR set,
# so that they write their measurements as TSV files (bench/benchdata.py),
# then draws them with gnuplot (Debian's gnuplot-nox, installed when
# missing) into PNGs:
#
#   topn.png           top-100 latency against the shard count N for
#                      shard_fdw (also with no added latency), shard_fdw
#                      with max_concurrency 1 and the articles' two readers;
#                      the CPU one read costs the backend, the proxy and
#                      DynamoDB Local against N
#   hotkey.png         rows/s into one hot key over time, static N=1, static
#                      N=10 and dynamic, the dynamic key's shard count on a
#                      second axis
#   reports_items.png  items DynamoDB reads and returns per report query
#   reports_join.png   the join of N watched players against two boto3
#                      clients
#   parallel.png       items/s of an aggregate over a whole-table Scan with
#                      0, 2 and 4 parallel workers, and the CPU of the
#                      leader, the workers and DynamoDB Local
#
# The TSVs, the PNGs and each bench's printed report (NAME.txt) are replaced
# together once every bench has succeeded; a failing bench leaves the
# previous ones in place. Each PNG's subtitle says the load average and the
# latency the proxy added, read from its TSV.
#
# Environment (all optional):
#   PLOTS_DIR          where the TSVs, reports and PNGs go (doc/plots)
#   PLOTS_FULL=1       the benches' full configurations: topn and reports
#                      at their own defaults (20 runs, the join of 100,000
#                      watched players, the parallel Scan of 1,000,000
#                      items), the hot key for 40 s a variant; by default
#                      topn makes 10 runs, the hot key 20 s a variant,
#                      reports leaves the largest join out, and the
#                      parallel Scan reads 200,000 items
#   PLOTS_DRAW_ONLY=1  run no bench: redraw the PNGs from PLOTS_DIR's TSVs
#   PLOTS_BENCHES      the benches to run, comma-separated
#                      (topn,hotkey,reports,parallel); the others' files
#                      are kept
#   BENCH_*            passed to the benches (see their headers); a value
#                      set here wins over the defaults this script picks
#   BENCH_SKIP_BUILD=1 use the extension already installed instead of
#                      building and installing this tree once
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

PLOTS_DIR="${PLOTS_DIR:-doc/plots}"
FULL="${PLOTS_FULL:-0}"
BENCHES=",${PLOTS_BENCHES:-topn,hotkey,reports,parallel},"
DEB_PACKAGES+=(gnuplot-nox)

# knobs NAME=DEFAULT...: print NAME=VALUE for env(1), the caller's own
# value of NAME where it has one.
knobs() {
    local pair name
    for pair in "$@"; do
        name="${pair%%=*}"
        echo "$name=${!name:-${pair#*=}}"
    done
}

# run_bench NAME STAGE KNOBS...: run bench/NAME.sh with BENCH_DATA_DIR=STAGE
# and the knobs (NAME=DEFAULT), keeping its printed report as STAGE/NAME.txt.
run_bench() {
    local name="$1" stage="$2" settings=()
    shift 2
    mapfile -t settings < <(knobs "$@")
    say "bench/$name.sh ${settings[*]}"
    env BENCH_DATA_DIR="$stage" BENCH_SKIP_BUILD=1 "${settings[@]}" \
        bash "bench/$name.sh" 2>&1 | tee "$stage/$name.txt" ||
        die "bench/$name.sh failed (its output above); $PLOTS_DIR is left as it was"
}

# note FILE KEY: the value of FILE's "# KEY: value" line ("?" if none).
note() {
    sed -n "s/^# $2: //p" "$1" | head -n 1 | grep . || echo "?"
}

# subtitle FILE: how FILE was measured, for a plot's second title line.
subtitle() {
    local latency after
    latency="$(note "$1" "latency added per request")"
    after="$(note "$1" "load average (1, 5, 15 min) at the end")"
    printf '%s CPUs, load average %s at the start, %s at the end%s; %s' \
        "$(note "$1" cpus)" "$(note "$1" "load average before")" "${after%% *}" \
        "$([ "$latency" = "?" ] || echo ", $latency added per request")" \
        "$(note "$1" measured)"
}

# gnuplot_to PNG HEIGHT SCRIPT...: run gnuplot on the common settings and
# SCRIPT, drawing PNG 1000 pixels wide; fails on any warning gnuplot prints
# but one: a curve without points (a measurement the run could not make,
# such as the CPU of a process whose pid the bench was not given).
gnuplot_to() {
    local png="$1" height="$2" log
    shift 2
    log="$(gnuplot -e "
        set terminal pngcairo size 1000,$height font 'DejaVu Sans,11' noenhanced;
        set output '$png';
        set datafile separator '\t';
        set datafile missing 'NaN';
        set grid;
        set key at graph 0.5, screen 0.01 center bottom horizontal box;
        set bmargin 8;
        set linetype 1 lc rgb '#0072B2';
        set linetype 2 lc rgb '#56B4E9';
        set linetype 3 lc rgb '#D55E00';
        set linetype 4 lc rgb '#E69F00';
        set linetype 5 lc rgb '#009E73';
        $*" 2>&1)" || { echo "$log" >&2; die "gnuplot failed on $png"; }
    log="$(grep -v 'warning: Skipping data file with no valid points' <<<"$log")" || true
    if [ -n "$log" ]; then
        echo "$log" >&2
        die "gnuplot warned while drawing $png"
    fi
    [ -s "$png" ] || die "gnuplot drew no $png"
    say "drew $png"
}

# draw_topn DIR: DIR/topn.png from DIR/topn.tsv.
draw_topn() {
    local tsv="$1/topn.tsv"
    gnuplot_to "$1/topn.png" 900 "
        set multiplot layout 2,1 title \"Top-100 of one game over N shards: median latency and CPU per read\n$(subtitle "$tsv")\";
        set key top left inside box opaque Left reverse;
        set bmargin;
        set logscale y;
        set xrange [0:*];
        set xlabel 'shards read (N)';
        set ylabel 'median wall time per top-100 (ms, log scale)';
        plot '$tsv' using 'shards':'shard_fdw_ms' with linespoints lt 1 lw 3 pt 13 title 'shard_fdw (parallel Queries)',
             '' using 'shards':'no_latency_ms' with linespoints lt 1 lw 2 dt 2 pt 12 title 'shard_fdw, no added latency (the test bed''s own time)',
             '' using 'shards':'sequential_ms' with linespoints lt 2 lw 2 pt 7 title 'shard_fdw, max_concurrency 1',
             '' using 'shards':'shard_loop_ms' with linespoints lt 3 lw 2 pt 5 title 'ordered-sharding article: loop over shards (boto3)',
             '' using 'shards':'thread_pool_ms' with linespoints lt 4 lw 2 pt 9 title 'time-series article: thread pool (boto3)';
        unset logscale y;
        set yrange [0:*];
        set ylabel 'CPU per top-100 (ms), no added latency';
        plot '$tsv' using 'shards':'backend_cpu_ms' with linespoints lt 1 lw 3 pt 13 title 'PostgreSQL backend (shard_fdw)',
             '' using 'shards':'proxy_cpu_ms' with linespoints lw 2 dt 2 pt 6 lc rgb 'gray50' title 'test proxy (Python)',
             '' using 'shards':'ddb_cpu_ms' with linespoints lw 2 dt 2 pt 8 lc rgb 'black' title 'DynamoDB Local';
        unset multiplot"
}

# draw_hotkey DIR: DIR/hotkey.png from DIR/hotkey.tsv.
draw_hotkey() {
    local tsv="$1/hotkey.tsv" budget
    budget="$(note "$tsv" "budget B" | grep -Eo '^[0-9]+')" ||
        die "$tsv names no budget B"
    gnuplot_to "$1/hotkey.png" 600 "
        set title \"Rows per second into one hot key under a per-key budget B = $budget writes/s\n$(subtitle "$tsv")\";
        set xlabel 'seconds since the writers started';
        set ylabel 'rows written per second (1 s intervals)';
        set y2label 'dynamic key: number_of_shards';
        set yrange [0:*]; set y2range [0:*];
        set ytics nomirror; set y2tics;
        set logscale y2 2;
        set y2range [0.8:*];
        variant(name) = strcol('variant') eq name ? column('rows_per_s') : NaN;
        plot '$tsv' using 'seconds':(variant('unbudgeted dynamic')) with lines lw 1 dt 3 lc rgb 'gray40' title 'dynamic, no budget (ceiling)',
             '' using 'seconds':(variant('unbudgeted N=1')) with lines lw 1 dt 2 lc rgb 'gray60' title 'static N=1, no budget',
             '' using 'seconds':(variant('static N=1')) with linespoints lt 3 lw 2 pt 7 ps 0.6 title 'static N=1',
             '' using 'seconds':(variant('static N=10')) with linespoints lt 4 lw 2 pt 5 ps 0.6 title 'static N=10',
             '' using 'seconds':(variant('dynamic')) with linespoints lt 1 lw 3 pt 13 ps 0.8 title 'dynamic',
             '' using 'seconds':(strcol('variant') eq 'dynamic' ? column('shards') : NaN) axes x1y2 with steps lw 2 dt 4 lc rgb 'dark-red' title 'dynamic: shards (right axis)',
             $budget with lines lw 1 dt 1 lc rgb 'black' title '1 x B'"
}

# What the bar charts share: bars of the same row side by side, a gap of
# one bar between rows; bar k of n sits at x = row + (k - (n - 1) / 2) / (n + 1).
HISTOGRAMS="set style data histograms;
        set style histogram clustered gap 1;
        set style fill solid 0.8 border -1;
        set boxwidth 0.9;"

# draw_reports_items DIR: DIR/reports_items.png from DIR/reports_items.tsv.
draw_reports_items() {
    local tsv="$1/reports_items.tsv"
    gnuplot_to "$1/reports_items.png" 600 "
        set title \"Items per report query over one game's leaderboard (10 shards)\n$(subtitle "$tsv")\";
        $HISTOGRAMS
        set yrange [0:*];
        set offsets 0, 0, graph 0.08, 0;
        set xtics rotate by -20 nomirror;
        set bmargin 11;
        set ylabel 'items per query';
        set xlabel 'query (shard_fdw)';
        plot '$tsv' using 'items_scanned':xtic(1) title 'items DynamoDB read (ScannedCount)',
             '' using 'items_returned' title 'items returned to PostgreSQL',
             '' using (\$0 - 0.167):'items_scanned':(sprintf('%d', column('items_scanned'))) with labels font ',9' offset 0,0.6 notitle,
             '' using (\$0 + 0.167):'items_returned':(sprintf('%d', column('items_returned'))) with labels font ',9' offset 0,0.6 notitle"
}

# draw_reports_join DIR: DIR/reports_join.png from DIR/reports_join.tsv.
draw_reports_join() {
    local tsv="$1/reports_join.tsv"
    gnuplot_to "$1/reports_join.png" 600 "
        set title \"Join of N watched players (a local table) with the leaderboard (10 shards)\n$(subtitle "$tsv")\";
        $HISTOGRAMS
        set logscale y;
        set yrange [1:*];
        set offsets 0, 0, graph 0.1, 0;
        set ylabel 'median wall time per join (ms, log scale)';
        set xlabel 'watched players (N)';
        plot '$tsv' using 'shard_fdw_ms':xtic(sprintf('%d', column('watched'))) lt 1 title 'shard_fdw',
             '' using 'shards_join_ms' lt 5 title 'boto3: the game''s shards at once, joined in memory',
             '' using 'lookups16_ms' lt 3 title 'boto3: a Query per player, 16 at a time',
             '' using (\$0 - 0.25):'shard_fdw_ms':(sprintf('%.0f', column('shard_fdw_ms'))) with labels font ',9' offset 0,0.6 notitle,
             '' using (\$0):'shards_join_ms':(sprintf('%.0f', column('shards_join_ms'))) with labels font ',9' offset 0,0.6 notitle,
             '' using (\$0 + 0.25):'lookups16_ms':(sprintf('%.0f', column('lookups16_ms'))) with labels font ',9' offset 0,0.6 notitle"
}

# draw_parallel DIR: DIR/parallel.png from DIR/parallel.tsv.
draw_parallel() {
    local tsv="$1/parallel.tsv"
    gnuplot_to "$1/parallel.png" 600 "
        set multiplot layout 1,2 title \"Aggregate over a Scan of $(note "$tsv" items) items, by max_parallel_workers_per_gather\n$(subtitle "$tsv")\";
        set bmargin 8;
        set xrange [-0.5:*];
        set yrange [0:*];
        set offsets 0, 0, graph 0.1, 0;
        set xlabel 'parallel workers';
        set ylabel 'items per second (median)';
        set key at graph 0.5, screen 0.01 center bottom horizontal box;
        plot '$tsv' using 'workers':'rows_per_s' with linespoints lt 1 lw 3 pt 7 title 'shard_fdw Scan',
             '' using 'workers':'rows_per_s':(sprintf('%.2fx', column('ratio'))) with labels offset 0,1 notitle;
        $HISTOGRAMS
        unset xrange;
        set ylabel 'CPU seconds per statement (median)';
        plot '$tsv' using 'leader_cpu_s':xtic(1) lt 1 title 'leader backend',
             '' using 'workers_cpu_s' lt 2 title 'parallel workers',
             '' using 'ddb_cpu_s' lt 3 title 'DynamoDB Local';
        unset multiplot"
}

# draw DIR: every PNG whose TSV is in DIR.
draw() {
    local name
    for name in topn hotkey reports_items reports_join parallel; do
        if [ -f "$1/$name.tsv" ]; then
            "draw_$name" "$1"
        else
            say "no $1/$name.tsv: $name.png not drawn"
        fi
    done
}

# main: install gnuplot, run the benches into a staging directory, draw,
# then replace PLOTS_DIR's files. (A function, so that bash has read all of
# it before it starts: the script may be edited or pulled while it runs.)
main() {
    local stage topn hotkey reports parallel
    ensure_deps
    mkdir -p "$PLOTS_DIR"
    if [ "${PLOTS_DRAW_ONLY:-0}" = 1 ]; then
        draw "$PLOTS_DIR"
        return 0
    fi
    if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
        build_and_install
    fi
    stage="$(mktemp -d "${TMPDIR:-/tmp}/shard_fdw-plots.XXXXXX")"
    # shellcheck disable=SC2064  # the directory is known now
    trap "rm -rf '$stage'" EXIT
    # The benches' settings: the hot key's budget and sessions are those
    # under which a dynamic key grows well within the run on 2 cores.
    if [ "$FULL" = 1 ]; then
        topn=() reports=() parallel=()
        hotkey=(BENCH_BUDGET=10 BENCH_SESSIONS=4 BENCH_SECONDS=40)
    else
        topn=(BENCH_RUNS=10 BENCH_WARMUP=2 BENCH_BED_RUNS=30)
        hotkey=(BENCH_BUDGET=10 BENCH_SESSIONS=4 BENCH_SECONDS=20)
        reports=(BENCH_BIG_WATCHED=0)
        parallel=(BENCH_ITEMS=200000)
    fi
    if [[ "$BENCHES" == *,topn,* ]]; then
        run_bench topn "$stage" "${topn[@]}"
    fi
    if [[ "$BENCHES" == *,hotkey,* ]]; then
        run_bench hotkey "$stage" "${hotkey[@]}"
    fi
    if [[ "$BENCHES" == *,reports,* ]]; then
        run_bench reports "$stage" "${reports[@]}"
    fi
    if [[ "$BENCHES" == *,parallel,* ]]; then
        run_bench parallel "$stage" "${parallel[@]}"
    fi
    draw "$stage"
    cp "$stage"/* "$PLOTS_DIR"/
    say "$(find "$stage" -type f | wc -l) files in $PLOTS_DIR"
}

main
