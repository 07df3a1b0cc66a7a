#!/usr/bin/env python3
"""compare.py on real runs: for every tests/fixtures/real-runs/*.csv, the file against itself is
all SAME (exit 0), and against a copy with every time_us_* column of one case scaled by 1.3 is
SLOWER for exactly that case (exit 1). The case is the least noisy ok key (see spread), so the
injected +30 % stands clear of its own noise; a file where even that key spreads by x1.3 or
more fails, since compare.py could not catch a 30 % regression in it.
Exit 77 (CTest skip) when numpy/scipy are missing.
"""
import csv
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPARE = os.path.join(ROOT, "scripts", "compare.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import compare  # noqa: E402

FACTOR = 1.3


def skip(msg):
    print(f"SKIP: {msg}")
    sys.exit(77)


def spread(rows):
    """How far apart a key's own measurements are, as the decision rule sees them: with enough
    repetitions for the U test, max/min of the repetition medians; otherwise the envelope
    max p90 / min p10. A uniform x FACTOR shift is detectable only when this is < FACTOR."""
    n = len(rows)
    if n >= compare.MIN_REPS_FOR_UTEST and compare.utest_min_p(n, n) <= 0.05:
        meds = [r["time_us_median"] for r in rows]
        return max(meds) / min(meds)
    lo = min(r["time_us_p10"] for r in rows)
    return max(r["time_us_p90"] for r in rows) / lo if lo > 0 else float("inf")


def quietest_key(run):
    """(key, spread) of the ok key with the smallest spread, or (None, inf)."""
    groups = {}
    for r in run.rows:
        if r["status"] == "ok":
            groups.setdefault(compare.row_key(r), []).append(r)
    if not groups:
        return None, float("inf")
    key = min(groups, key=lambda k: spread(groups[k]))
    return key, spread(groups[key])


def write_scaled(src, dst, key):
    """Copies src to dst with every time_us_* cell of the rows of key multiplied by FACTOR."""
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    idx = {c: i for i, c in enumerate(header)}
    tcols = [i for i, c in enumerate(header) if c.startswith("time_us_")]
    n = 0
    for cells in rows[1:]:
        if len(cells) != len(header):
            continue
        k = compare.row_key(compare.parse_row(dst, 0, dict(zip(header, cells)), header))
        if k == key and cells[idx["status"]] == "ok":
            for i in tcols:
                cells[i] = repr(float(cells[i]) * FACTOR)
            n += 1
    with open(dst, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return n


def is_bench_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        header = next(csv.reader(f), [])
    return bool(header) and header[0] == "schema_version"


def check(path, tmp):
    """Returns a list of failure messages for one committed CSV."""
    fails = []
    run = compare.load_csv(path)
    key, noise = quietest_key(run)
    if key is None:
        return [f"{path}: no status=ok row to scale"]
    if noise >= FACTOR:
        return [f"{path}: even the quietest case ({compare.format_key(key)}) spreads x{noise:.2f} "
                f"across its own measurements, so a x{FACTOR} regression cannot be told from "
                f"noise: the run is too noisy to gate on"]
    p = subprocess.run([sys.executable, COMPARE, path, path], capture_output=True, text=True)
    if p.returncode != 0:
        fails.append(f"{path} vs itself: exit {p.returncode}\n{p.stdout}{p.stderr}")
    scaled = os.path.join(tmp, "scaled-" + os.path.basename(path))
    n = write_scaled(path, scaled, key)
    p = subprocess.run([sys.executable, COMPARE, path, scaled], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.split()[:1] == [key[0]]]
    slower = [l for l in p.stdout.splitlines() if l.endswith(" SLOWER")]
    if p.returncode != 1 or len(slower) != 1 or not lines or not slower[0].startswith(key[0]):
        fails.append(f"{path} with {compare.format_key(key)} x{FACTOR} ({n} rows): expected "
                     f"exactly that case SLOWER and exit 1, got exit {p.returncode}\n"
                     f"{p.stdout}{p.stderr}")
    else:
        print(f"ok: {os.path.relpath(path, ROOT)}: {compare.format_key(key)} x{FACTOR} "
              f"-> exit 1, {' '.join(slower[0].split()[-6:])}")
    return fails


def main():
    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError as e:
        skip(f"{e.name} is not installed")
    # Only linstate-bench CSVs (schema v1/v2: first column schema_version).
    files = [f for f in sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "real-runs", "*.csv")))
             if is_bench_csv(f)]
    if not files:
        print("FAIL: no CSV under tests/fixtures/real-runs/")
        return 1
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            try:
                fails += check(path, tmp)
            except compare.InputError as e:
                fails.append(f"{path}: unreadable: {e}")
    for f in fails:
        print(f"FAIL: {f}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
