#!/usr/bin/env python3
"""Bounded fuzz of the scripts' CSV readers: a fixed-seed mutator turns valid linstate CSVs into
bad ones (bytes, cells, column order, rows, truncation, encodings) and runs compare, plot, export,
side_by_side, fleet/merge and fleet/fleet_report on each, in this process (their main(argv)).
Each must either succeed (exit 0, or 1 where that is a verdict: compare's SLOWER, merge's missing
shard) or print exactly one line on stderr and exit 2; an exception escaping main (a traceback)
or a second stderr line fails the test, printing the seed, the script and the mutations so the
case can be replayed (--seed S --script NAME --case I).

The number of cases is fixed (--cases, per script), so the run is deterministic: same seed, same
inputs, same verdicts, however loaded the machine. Exit 77 when numpy/scipy/matplotlib are missing.

usage: fuzz_csv.py [--seed 20] [--cases N] [--script NAME] [--case I] [-v]
"""
import argparse
import contextlib
import csv
import importlib.util
import io
import os
import random
import shutil
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402

synth.require("matplotlib", "scipy")
from test_bad_input import COLUMNS, ranked, replicate_rows  # noqa: E402

# Values a cell is replaced with: the edges of numbers, statuses and quoting.
CELLS = ["", "nan", "NaN", "inf", "-inf", "-1", "0", "-0", "1e308", "1e-320", "5e-324", "abc", '"', '""',
         "1,2", "\n", "\r", " 3 ", "1_000", "\u0661", "\x00", "9" * 5000, "ok", "skipped:oom", "fail_bounds",
         "error:crash", "error:", "skipped:", "fail_", "OK", "2", "1", "3", "vk", "kv", "rotate", "linstate",
         "GPU-x", "-5", "0x10", "1e3", "\u2028", "é", "\ufeff"]
BYTES = [b"\x00", b"\xff", b"\xc3", b'"', b",", b"\n", b"\r", b"\r\n", b"\t", b"\xef\xbb\xbf", b"\xe2\x80\xa8"]


def load_module(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(synth.SCRIPTS, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------ mutations

def to_table(data):
    text = data.decode("utf-8", errors="replace")
    return list(csv.reader(io.StringIO(text, newline="")))


def from_table(table):
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(table)
    return out.getvalue().encode("utf-8")


def m_byte_flip(rng, data):
    i = rng.randrange(len(data))
    return data[:i] + rng.choice(BYTES) + data[i + 1:], f"byte {i} replaced"


def m_byte_insert(rng, data):
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(BYTES) + data[i:], f"byte inserted at {i}"


def m_delete_range(rng, data):
    i = rng.randrange(len(data))
    n = rng.choice([1, 2, 10, 100, 1000])
    return data[:i] + data[i + n:], f"{n} bytes deleted at {i}"


def m_truncate(rng, data):
    i = rng.randrange(len(data) + 1)
    return data[:i], f"truncated at {i}"


def m_duplicate_range(rng, data):
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.choice([5, 50, 500]))
    return data[:j] + data[i:j] + data[j:], f"bytes {i}:{j} doubled"


def m_cell(rng, data):
    t = to_table(data)
    if len(t) < 2:
        return data, "no cell"
    r = rng.randrange(1, len(t))
    if not t[r]:
        return data, "empty row"
    c = rng.randrange(len(t[r]))
    v = rng.choice(CELLS)
    name = t[0][c] if c < len(t[0]) else c
    t[r][c] = v
    return from_table(t), f"row {r} {name} = {v[:12]!r}"


def m_column_cell(rng, data):
    """The same value in one named column on every row (a systematic bad value)."""
    t = to_table(data)
    if len(t) < 2:
        return data, "no rows"
    c = rng.randrange(len(t[0]))
    v = rng.choice(CELLS)
    for row in t[1:]:
        if c < len(row):
            row[c] = v
    return from_table(t), f"column {t[0][c]} = {v[:12]!r} everywhere"


def on_columns(change):
    """A mutation that edits the table's header and rows with change(rng, table) -> (table,
    what); an input without a header is left as it is."""
    def mutation(rng, data):
        t = to_table(data)
        if not t:
            return data, "empty"
        t, what = change(rng, t)
        return from_table(t), what
    mutation.__name__ = change.__name__
    return mutation


@on_columns
def m_shuffle_columns(rng, t):
    width = len(t[0])
    order = list(range(width))
    rng.shuffle(order)
    return [[row[i] for i in order] if len(row) == width else row for row in t], "columns shuffled"


@on_columns
def m_drop_column(rng, t):
    c = rng.randrange(len(t[0]))
    return [row[:c] + row[c + 1:] for row in t], f"column {t[0][c]} dropped"


@on_columns
def m_duplicate_column(rng, t):
    c = rng.randrange(len(t[0]))
    return [row + [row[c]] if c < len(row) else row for row in t], f"column {t[0][c]} twice"


@on_columns
def m_extra_column(rng, t):
    name = rng.choice(["source", "resume_of", "", "status", "x,y"])
    return [t[0] + [name]] + [row + [rng.choice(CELLS)] for row in t[1:]], f"column {name!r} added"


@on_columns
def m_rename_header(rng, t):
    c = rng.randrange(len(t[0]))
    old = t[0][c]
    t[0][c] = rng.choice(["", old.upper(), old + " ", "case", "x"])
    return t, f"header {old} renamed {t[0][c]!r}"


def m_rows(rng, data):
    t = to_table(data)
    if len(t) < 2:
        return data, "no rows"
    how = rng.choice(["drop", "dup", "swap", "none", "short"])
    body = t[1:]
    if how == "drop":
        del body[rng.randrange(len(body))]
    elif how == "dup":
        body.insert(rng.randrange(len(body)), list(rng.choice(body)))
    elif how == "swap":
        rng.shuffle(body)
    elif how == "none":
        body = []
    else:
        r = rng.randrange(len(body))
        body[r] = body[r][:rng.randrange(len(body[r]) + 1)]
    return from_table([t[0]] + body), f"rows: {how}"


def m_encoding(rng, data):
    how = rng.choice(["utf-16", "latin-1", "bom", "crlf", "no-final-newline"])
    text = data.decode("utf-8", errors="replace")
    if how == "utf-16":
        return text.encode("utf-16"), how
    if how == "latin-1":
        return text.replace("fused", "fusé").encode("latin-1", errors="replace"), how
    if how == "bom":
        return b"\xef\xbb\xbf" + data, how
    if how == "crlf":
        return data.replace(b"\n", b"\r\n"), how
    return data.rstrip(b"\n"), how


MUTATIONS = [m_byte_flip, m_byte_insert, m_delete_range, m_truncate, m_duplicate_range, m_cell, m_cell,
             m_cell, m_column_cell, m_shuffle_columns, m_drop_column, m_duplicate_column, m_extra_column,
             m_rename_header, m_rows, m_encoding]


def mutate(rng, data):
    """data with 1 to 3 mutations; (bytes, [what was done])."""
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not data:
            break
        data, what = rng.choice(MUTATIONS)(rng, data)
        done.append(what)
    return data, done


# ------------------------------------------------------------------------------------ runs

def write(path, rows):
    synth.write_csv(path, rows, COLUMNS)
    with open(path, "rb") as f:
        data = f.read().replace(b"\r\n", b"\n")  # the harness ends rows with \n
    with open(path, "wb") as f:
        f.write(data)
    return data


class Target:
    """One script: its module, how to lay out valid inputs in a folder and its argv."""

    def __init__(self, name, module, setup, argv, ok_codes=(0,)):
        self.name, self.module, self.setup, self.argv, self.ok_codes = name, module, setup, argv, ok_codes


def setup_replicate(d):
    return {"in.csv": write(os.path.join(d, "in.csv"), replicate_rows())}


def setup_compare(d):
    files = setup_replicate(d)
    rows = synth.v2(synth.suite(), scale=1.2)
    files["after.csv"] = write(os.path.join(d, "after.csv"), ranked(rows, 0, 2) + ranked(synth.v2(synth.suite()), 1, 2))
    return files


def setup_merge(d):
    os.mkdir(os.path.join(d, "ranks"))
    return {os.path.join("ranks", f"r{i}.csv"): write(os.path.join(d, "ranks", f"r{i}.csv"),
                                                       ranked(synth.v2(synth.suite()), i, 2))
            for i in range(2)}


def targets():
    compare = load_module("compare", "compare.py")
    return [
        Target("compare", compare, setup_compare, lambda d: [f"{d}/in.csv", f"{d}/after.csv"], (0, 1)),
        Target("export", load_module("export", "export.py"), setup_replicate,
               lambda d: [f"{d}/in.csv", "--out", f"{d}/out/x.json"]),
        Target("side_by_side", load_module("side_by_side", "side_by_side.py"), setup_replicate,
               lambda d: [f"{d}/in.csv", "--out", f"{d}/out/side.md"]),
        Target("merge", load_module("merge", os.path.join("fleet", "merge.py")), setup_merge,
               lambda d: [f"{d}/ranks", "--out", f"{d}/out/merged.csv"], (0, 1)),
        Target("fleet_report", load_module("fleet_report", os.path.join("fleet", "fleet_report.py")),
               setup_replicate, lambda d: [f"{d}/in.csv", "--out", f"{d}/out/report"]),
        Target("plot", load_module("plot", "plot.py"), setup_replicate, lambda d: [f"{d}/in.csv", "--out", f"{d}/out"]),
    ]


# Cases per script: plot and fleet_report draw PNGs when an input passes, so they get fewer.
DEFAULT_CASES = {"compare": 200, "export": 200, "side_by_side": 200, "merge": 200, "fleet_report": 30, "plot": 20}


def run_case(target, d, files, rng):
    """Mutates one input file of target (in d), runs it; (exit status, None) when the outcome is
    allowed, else (exit status, the failure text)."""
    name = rng.choice(sorted(files))
    data, done = mutate(rng, files[name])
    for n, original in files.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(data if n == name else original)
    shutil.rmtree(os.path.join(d, "out"), ignore_errors=True)
    os.mkdir(os.path.join(d, "out"))
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = target.module.main(target.argv(d))
    except SystemExit as e:
        rc = e.code
    except Exception:  # noqa: BLE001  (any escape is the finding)
        return "traceback", f"{name} {done}: traceback:\n{traceback.format_exc()}"
    lines = err.getvalue().strip().splitlines()
    if rc in target.ok_codes:
        return rc, None
    if rc != 2:
        return rc, f"{name} {done}: exit {rc!r}, stderr {err.getvalue()!r}"
    if len(lines) != 1:
        return rc, f"{name} {done}: exit 2 with {len(lines)} stderr lines: {err.getvalue()!r}"
    return rc, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--cases", type=int, help="cases per script (default: per-script counts)")
    ap.add_argument("--script", help="only this script")
    ap.add_argument("--case", type=int, help="only this case index (replay)")
    ap.add_argument("-v", action="store_true", help="print every case")
    a = ap.parse_args()
    failures, total = [], 0
    for t in targets():
        if a.script and t.name != a.script:
            continue
        n = a.cases or DEFAULT_CASES[t.name]
        seen = {}
        with tempfile.TemporaryDirectory() as d:
            files = t.setup(d)
            for i in range(n):
                rng = random.Random(f"{a.seed}/{t.name}/{i}")
                if a.case is not None and i != a.case:
                    continue
                total += 1
                rc, bad = run_case(t, d, files, rng)
                seen[rc] = seen.get(rc, 0) + 1
                if a.v:
                    print(f"{t.name} #{i}: {'FAIL ' + bad if bad else 'ok'}")
                if bad:
                    failures.append(f"seed {a.seed} --script {t.name} --case {i}: {bad}")
        print(f"{t.name}: " + ", ".join(f"{k} exit {v}" for v, k in sorted(seen.items(), key=str)))
    for f in failures:
        print("FAIL:", f)
    print(f"{total} fuzzed inputs, {len(failures)} failures (seed {a.seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
