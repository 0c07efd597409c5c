"""Machine-readable measurements of the benches, for bench/plots.sh.

When BENCH_DATA_DIR names a directory, write() stores one table of a
bench there as NAME.tsv: comment lines ("# key: value") saying how it was
measured (the machine's CPUs and load average, the bench's settings), then
a header line of column names, then one line per row, fields separated by
tabs (no field holds a double quote: gnuplot would read it as one).
gnuplot skips the comments and takes the header for column names.
Without BENCH_DATA_DIR nothing is written: the benches print their reports
as always.

settings() reads a bench's settings from its BENCH_* variables.
"""

import datetime
import os


def settings(**defaults):
    """The bench's settings, in the order named: each from the environment's
    BENCH_<NAME>, read as its default's type, or the default."""
    return tuple(type(default)(os.environ.get(f"BENCH_{name}", default))
                 for name, default in defaults.items())


def enabled():
    """Whether this run writes data files."""
    return bool(os.environ.get("BENCH_DATA_DIR"))


def cell(value):
    """A field as text: floats with 3 decimals, None as NaN (gnuplot skips it)."""
    if value is None:
        return "NaN"
    if isinstance(value, float):
        return f"{value:.3f}"
    text = str(value)
    if any(c in text for c in '\t\n"'):
        raise ValueError(f"a field holds a tab, a newline or a double quote "
                         f"(gnuplot reads quotes as delimiters): {text!r}")
    return text


def write(name, columns, rows, notes):
    """Write BENCH_DATA_DIR/name.tsv: notes ({key: value}) after the
    machine's own, the header columns, then rows (sequences of fields);
    does nothing without BENCH_DATA_DIR.  Returns the path written or None."""
    directory = os.environ.get("BENCH_DATA_DIR")
    if not directory:
        return None
    os.makedirs(directory, exist_ok=True)
    load = os.getloadavg()
    machine = {
        "measured": datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": os.cpu_count(),
        "load average (1, 5, 15 min) at the end": " ".join(f"{x:.1f}" for x in load),
    }
    path = os.path.join(directory, f"{name}.tsv")
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        for key, value in {**machine, **notes}.items():
            out.write(f"# {key}: {value}\n")
        out.write("\t".join(columns) + "\n")
        for row in rows:
            if len(row) != len(columns):
                raise ValueError(f"{name}: a row of {len(row)} fields for "
                                 f"{len(columns)} columns")
            out.write("\t".join(cell(v) for v in row) + "\n")
    os.replace(path + ".tmp", path)
    return path
