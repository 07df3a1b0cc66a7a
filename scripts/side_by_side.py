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
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lscsv  # noqa: E402  (the CSV reader and the join key)


def fail(msg):
    raise lscsv.InputError(msg)


def load(path):
    run = lscsv.load(path)
    if "impl" not in run.header:
        fail(f"{path}: not a linstate CSV of schema 2 or later (no impl column)")
    return run.rows


def key_of(r):
    """The join key without impl and tuning (the columns of the table)."""
    return lscsv.row_key(r, drop_impl=True, drop_tuning=True)


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
    ap = lscsv.ArgumentParser(prog="side_by_side.py", description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--impl", default="linstate", help="the impl whose ratio to the best peer is shown")
    ap.add_argument("--format", choices=("md", "text"), default="md")
    ap.add_argument("--out")
    return lscsv.run_main("side_by_side.py", ap, side_by_side, argv)


def side_by_side(a):
    """The table (see the module doc); InputError on bad input."""
    if a.out:
        lscsv.check_output_file(a.out, [a.csv])
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
        if r.get("repetition", 0) not in ("", 0):
            continue
        by = cases.setdefault(key_of(r), {})
        for c in cols_of(r, multi):
            if c in by and r["status"] == UNSUPPORTED:
                continue  # the other layout of a one-layout impl: keep the row it ran
            by[c] = r
    lines, ratios, n = [], [], 0
    head = ["case"] + [f"{i} us (% copy)" for i in [a.impl] + peers] + ["best peer", f"{a.impl} / best"]
    devices = len({k.dev for k in cases}) > 1
    for key, by in cases.items():
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
                us, pct = r["time_us_median"], r["pct_of_copy_peak"]
                cells.append(f"{us:.2f} ({pct:.1f} %)" if pct == pct else f"{us:.2f}")
                if impl_of(i) != impl_of(a.impl) and (best is None or us < best[1]):
                    best = (i, us)
        if best is None:
            continue
        ratio = own["time_us_median"] / best[1]
        ratios.append((own["time_us_median"], best[1]))
        n += 1
        name = key.case + (f" [{key.variant}]" if key.variant else "")
        name += (f" cache={key.cache}" if key.cache != "rotate" else "") + (f" dev={key.dev}" if devices else "")
        lines.append([name] + cells + [best[0], f"{ratio:.3f}"])
    if not n:
        fail(f"no case has an ok {a.impl} row and an ok peer row")
    gm = lscsv.geomean(ratios)
    out = []
    if a.format == "md":
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        out += ["| " + " | ".join(l) + " |" for l in lines]
    else:
        w = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head))]
        out += ["  ".join(str(x[i]).ljust(w[i]) for i in range(len(head))) for x in [head] + lines]
    ahead = sum(1 for o, b in ratios if o < 0.97 * b)
    behind = sum(1 for o, b in ratios if o > 1.03 * b)
    out.append("")
    out.append(f"{n} cases with {a.impl} and a peer: geomean {a.impl}/best peer {gm:.3f}; "
               f"{ahead} ahead by > 3 %, {behind} behind by > 3 %, {n - ahead - behind} within 3 %")
    text = "\n".join(out) + "\n"
    if a.out:
        lscsv.write_file(a.out, text, [a.csv])
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
