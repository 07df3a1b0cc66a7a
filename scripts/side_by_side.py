#!/usr/bin/env python3
"""side_by_side.py — one table of several impls timed in ONE linstate-bench run.

usage: scripts/side_by_side.py RUN.csv [--impl linstate[/LAYOUT]] [--format md|text] [--out FILE]

Rows are grouped by case key (the case, the variant and graph mode; each impl at its default
tuning). An impl that ran gdn/kda on both state layouts (--state-layout kv,vk) gets one column
per layout, `impl/kv` and `impl/vk`, and --impl then names one of them (e.g. linstate/vk); an
impl that took only one layout keeps its name (its skipped:unsupported rows of the other layout
are dropped). For every case that --impl (default linstate) timed, the table gives each
column's median us and % of the run's copy peak, the best other impl (never another layout of
--impl's own impl), and --impl's time over that best peer's (< 1: ahead). Cases a peer could not run say why
(`skipped:unsupported`, `fail_numerics`). Only one run is read: ratios are same-run, same
method, same inputs by construction. Exit 2 on bad input or when no case has --impl and a peer.
"""
import argparse
import csv
import math
import sys
from collections import OrderedDict


def fail(msg):
    print("side_by_side.py: " + msg, file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not rows or "impl" not in rows[0]:
        fail(f"{path}: not a linstate CSV of schema 2 or later (no impl column)")
    return rows


def key_of(r):
    return (r["case"], r["variant"] if r.get("variant") else "", r.get("graph", "0"))


UNSUPPORTED = "skipped:unsupported"


def multi_layout(rows):
    """{impl: its layouts, in order of appearance} for impls that ran two or more state layouts
    (rows not refused)."""
    lays = {}
    for r in rows:
        if r.get("state_layout") and r["status"] != UNSUPPORTED:
            lays.setdefault(r["impl"], OrderedDict())[r["state_layout"]] = 1
    return {i: list(s) for i, s in lays.items() if len(s) > 1}


def cols_of(r, multi):
    """The columns a row fills: impl/layout for a multi-layout impl (a row of an op without a
    layout fills every layout column of its impl), else the impl."""
    if r["impl"] not in multi:
        return [r["impl"]]
    if r.get("state_layout"):
        return [f"{r['impl']}/{r['state_layout']}"]
    return [f"{r['impl']}/{l}" for l in multi[r["impl"]]]


def impl_of(col):
    return col.split("/", 1)[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--impl", default="linstate", help="the impl whose ratio to the best peer is shown")
    ap.add_argument("--format", choices=("md", "text"), default="md")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    rows = load(a.csv)
    multi = multi_layout(rows)
    impls = list(OrderedDict.fromkeys(c for r in rows for c in cols_of(r, multi)))
    if a.impl not in impls:
        named = [c for c in impls if impl_of(c) == a.impl]
        if named:
            fail(f"--impl {a.impl}: ran on several state layouts in {a.csv}: name one of {', '.join(named)}")
        fail(f"--impl {a.impl}: not in {a.csv} (impls: {', '.join(impls)})")
    peers = [i for i in impls if i != a.impl]
    if not [i for i in peers if impl_of(i) != impl_of(a.impl)]:
        fail(f"{a.csv} holds only {impl_of(a.impl)}: nothing to set it against")
    cases = OrderedDict()
    for r in rows:
        if r.get("repetition", "0") not in ("", "0"):
            continue
        by = cases.setdefault(key_of(r), {})
        for c in cols_of(r, multi):
            if c in by and r["status"] == UNSUPPORTED:
                continue  # the other layout of a one-layout impl: keep the row it ran
            by[c] = r
    lines, ratios, n = [], [], 0
    head = ["case"] + [f"{i} us (% copy)" for i in [a.impl] + peers] + ["best peer", f"{a.impl} / best"]
    for (case, variant, graph), by in cases.items():
        own = by.get(a.impl)
        if not own or own["status"] != "ok":
            continue
        cells, best = [], None
        for i in [a.impl] + peers:
            r = by.get(i)
            if r is None:
                cells.append("-")
            elif r["status"] != "ok":
                cells.append(r["status"])
            else:
                us, pct = float(r["time_us_median"]), r.get("pct_of_copy_peak", "")
                cells.append(f"{us:.2f} ({float(pct):.1f} %)" if pct not in ("", "nan") else f"{us:.2f}")
                if impl_of(i) != impl_of(a.impl) and (best is None or us < best[1]):
                    best = (i, us)
        if best is None:
            continue
        ratio = float(own["time_us_median"]) / best[1]
        ratios.append(ratio)
        n += 1
        name = case + (f" [{variant}]" if variant else "")
        lines.append([name] + cells + [best[0], f"{ratio:.3f}"])
    if not n:
        fail(f"no case has an ok {a.impl} row and an ok peer row")
    gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    out = []
    if a.format == "md":
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        out += ["| " + " | ".join(l) + " |" for l in lines]
    else:
        w = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head))]
        out += ["  ".join(str(x[i]).ljust(w[i]) for i in range(len(head))) for x in [head] + lines]
    ahead = sum(1 for x in ratios if x < 0.97)
    behind = sum(1 for x in ratios if x > 1.03)
    out.append("")
    out.append(f"{n} cases with {a.impl} and a peer: geomean {a.impl}/best peer {gm:.3f}; "
               f"{ahead} ahead by > 3 %, {behind} behind by > 3 %, {n - ahead - behind} within 3 %")
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
