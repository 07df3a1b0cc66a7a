#!/usr/bin/env python3
"""
fidelity_check.py — an AOT peer against its Python twin in linstate-bench CSVs (docs/peers.md,
"Fidelity"): for every case both impls ran, the AOT median time within TOL % of the Python
path's where it is asked (B >= 128 eager and graph, B = 1 graph), both verified (status ok) and
with the same numerics (max_rel_err against the float64 reference equal within --err-tol: the
same case seeds the same inputs, so the same kernel gives the same error).

    scripts/fidelity_check.py RUN.csv [RUN2.csv ...] [--aot sglang] [--py py_sglang@0.5.23]
                              [--tunings A:B] [--tol 3] [--err-tol 1e-6] [--min-batch 128]
                              [--out table.md]

--tunings A:B sets two tunings against each other, A of the --aot impl and B of the --py impl
(they may be one impl: --aot py_vllm --py py_vllm --tunings launch=kernel:launch=wrapper). A
tuning selector is compare.py's: the row's whole tuning string, or knob=value items it holds; a
selector matching two tunings of one case is ambiguous (exit 2, naming the case).

Prints a markdown table (case, graph, AOT µs, Python µs, AOT/Python, both errors, verdict) and exits 1 if a
checked case is outside TOL or either side is not ok, 2 on bad input (one line: a file lscsv
refuses, no rows of one of the two sides, a bad --out or --tunings).
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lscsv  # noqa: E402  (the scripts' one CSV reader)
from lscsv import InputError  # noqa: E402
from compare import _tunings_arg  # noqa: E402  (compare.py's --tunings A:B parser)
from compare_join import tuning_matches  # noqa: E402


def num(v):
    """A cell lscsv parsed (float) or left as text, as a float; NaN when empty."""
    if isinstance(v, (int, float)):
        return float(v)
    return float(v) if str(v).strip() else math.nan


def cell(v):
    return "" if isinstance(v, float) and math.isnan(v) else str(v)


def checked(batch, graph, min_batch):
    return batch >= min_batch or (batch == 1 and graph)


def main(argv=None):
    ap = lscsv.ArgumentParser(prog="fidelity_check.py", description=__doc__.split("\n")[1])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--aot", default="sglang")
    ap.add_argument("--py", default="py_sglang@0.5.23")
    ap.add_argument("--tunings", type=_tunings_arg, metavar="A:B",
                    help="tuning A of the --aot impl against tuning B of the --py impl (may be one impl)")
    ap.add_argument("--tol", type=float, default=3.0, help="percent (default 3)")
    ap.add_argument("--err-tol", type=float, default=1e-6, help="max |max_rel_err difference| (default 1e-6)")
    ap.add_argument("--min-batch", type=int, default=128)
    ap.add_argument("--out", help="also write the table here")
    return lscsv.run_main("fidelity_check.py", ap, check, argv)


def sides(a):
    """The two sides: (label, impl, tuning selector or None for any tuning)."""
    if a.tunings:
        if a.aot == a.py and a.tunings[0] == a.tunings[1]:
            raise InputError(f"--tunings {a.tunings[0]}:{a.tunings[1]}: one tuning of one impl on both sides")
        return [(f"{a.aot}[{a.tunings[0]}]", a.aot, a.tunings[0]), (f"{a.py}[{a.tunings[1]}]", a.py, a.tunings[1])]
    if a.aot == a.py:
        raise InputError(f"--aot and --py are both '{a.aot}': set two of its tunings against each "
                         "other with --tunings A:B")
    return [(a.aot, a.aot, None), (a.py, a.py, None)]


def check(a):
    if not a.tol > 0:
        raise InputError(f"--tol {a.tol}: must be > 0")
    rows = [r for p in a.csv for r in lscsv.load(p).rows]
    (la, _, _), (lb, _, _) = two = sides(a)
    side = {}
    for r in rows:
        for label, impl, sel in two:
            if r.get("impl") != impl or (sel is not None and not tuning_matches(sel, r.get("tuning", ""))):
                continue
            key = (r["case"], r.get("variant", ""), str(r.get("graph", 0)), r.get("state_layout", ""))
            old = side.setdefault(key, {}).get(label)
            if sel is not None and old is not None and old.get("tuning") != r.get("tuning"):
                raise InputError(f"ambiguous: --tunings side '{sel}' picks tunings '{old.get('tuning')}' and "
                                 f"'{r.get('tuning')}' of {impl} in case {key[0]}: give more knob=value items")
            side[key][label] = r
    for label, impl, sel in two:
        if not any(label in v for v in side.values()):
            raise InputError(f"no rows of impl '{impl}'" + (f" with tuning '{sel}'" if sel is not None else "")
                             + f" in {', '.join(a.csv)}")
    lines = [f"| case | variant | graph | {la} µs | {lb} µs | {la}/{lb} | max_rel_err | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    bad = n = 0
    for key in sorted(side):
        pair = side[key]
        if la not in pair or lb not in pair:
            continue
        x, y = pair[la], pair[lb]
        graph = str(x.get("graph")) == "1"
        batch = int(num(x.get("batch") or 0))
        if x["status"].startswith("skipped") or y["status"].startswith("skipped"):
            verdict, ratio, tx, ty = f"skipped ({x['status']} / {y['status']})", "", "", ""
        else:
            tx, ty = cell(x.get("time_us_median", "")), cell(y.get("time_us_median", ""))
            if x["status"] != "ok" or y["status"] != "ok" or not tx or not ty:
                verdict, ratio = f"FAIL: status {x['status']} / {y['status']}", ""
                bad += 1
            else:
                q = float(tx) / float(ty)
                ratio = f"{q:.3f}"
                ex, ey = cell(x.get("max_rel_err", "")), cell(y.get("max_rel_err", ""))
                if ex and ey and abs(float(ex) - float(ey)) > a.err_tol:
                    verdict = f"FAIL: numerics differ ({ex} vs {ey})"
                    bad += 1
                elif not checked(batch, graph, a.min_batch):
                    verdict = "not checked (B < %d eager)" % a.min_batch
                elif abs(q - 1) * 100 <= a.tol:
                    verdict, n = "ok", n + 1
                else:
                    verdict = f"FAIL: {100 * (q - 1):+.1f} %"
                    bad += 1
        errs = f"{cell(x.get('max_rel_err', ''))} / {cell(y.get('max_rel_err', ''))}"
        lines.append(f"| {key[0]} | {key[1]} | {int(graph)} | {tx} | {ty} | {ratio} | {errs} | {verdict} |")
    lines.append("")
    lines.append(f"{n} checked case(s) within {a.tol:g} %, {bad} failure(s)")
    text = "\n".join(lines)
    print(text)
    if a.out:
        lscsv.write_file(a.out, text + "\n", a.csv)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
