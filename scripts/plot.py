#!/usr/bin/env python3
"""plot.py — PNG charts of linstate CSV runs (matplotlib, Agg backend: no display needed).

    scripts/plot.py CSV [--out DIR]
    scripts/plot.py [CSV] --compare BEFORE.csv AFTER.csv [--out DIR] [compare options]
    scripts/plot.py --samples SAMPLES.csv [--out DIR]

For CSV: one PNG per (mechanism, op, state dtype): achieved GB/s against batch (log2 axis), one
line per draft-token count (and per model / tp / variant / impl / tuning / cache regime / graph /
device when those vary inside the chart), the run's copy ceiling (copy_peak_gbps) as a dashed
horizontal line, titled with GPU name and state dtype. Repetitions are reduced to their median
GB/s; rows without a GB/s value (empty cell) are left out.
With --compare: one PNG of the % change per case, bars coloured by compare.py's decision.
With --samples (the raw-samples sidecar of linstate-bench --samples-out): the distribution of
every case's samples (all repetitions together) as a box over a violin, one PNG per op
(<samples stem>-samples-<op>.png), one column per case, microseconds on a log axis; at most
SAMPLES_PER_PNG cases per PNG (further PNGs get -2, -3, ...).
Files are named <csv stem>-<op>_<dtype>.png (op "gdn/verify" -> gdn_verify; prefixed by the
mechanism when op does not start with it) and compare-<before>-vs-<after>.png,
written to --out (default: the directory of CSV, or of AFTER.csv). Exit 2 on bad input.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the CSV loader and the decision rule live there)

DECISION_COLOURS = {"SLOWER": "#d62728", "FASTER": "#2ca02c", "SAME": "#7f7f7f",
                    "UNSURE": "#ff7f0e", "NOISY": "#bcbd22"}
# Dimensions that split a chart into several lines when they vary inside it (draft count always).
SERIES_DIMS = (("model", "model"), ("tp", "tp"), ("variant", "variant"), ("impl", "impl"),
               ("tuning", "tuning"), ("cache_regime", "cache"), ("graph", "graph"),
               ("device_index", "dev"))


SAMPLES_COLUMNS = ("case", "variant", "impl", "tuning", "state_layout", "cache_regime", "graph",
                   "device_index", "repetition", "sample", "us")
SAMPLES_PER_PNG = 40


def load_samples(path):
    """{(op, label): [us, ...]} of a --samples-out sidecar, in file order; op is the case key's
    first two parts, label the case key plus the key fields that are not their default.
    InputError (one line) on a missing file, a wrong header, a bad number or no rows."""
    import csv
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise compare.InputError(f"{path}: cannot open: {e.strerror}") from None
    groups = {}
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != SAMPLES_COLUMNS:
            raise compare.InputError(f"{path}: not a samples file (header must be "
                                     f"{','.join(SAMPLES_COLUMNS)})")
        for cells in reader:
            if not cells:
                continue
            if len(cells) != len(SAMPLES_COLUMNS):
                raise compare.InputError(f"{path}:{reader.line_num}: {len(cells)} cells, "
                                         f"header has {len(SAMPLES_COLUMNS)}")
            r = dict(zip(SAMPLES_COLUMNS, cells))
            try:
                us = float(r["us"])
            except ValueError:
                us = float("nan")
            if not (math.isfinite(us) and us > 0):
                raise compare.InputError(f"{path}:{reader.line_num}: column us: not a positive "
                                         f"time: {r['us']!r}")
            extra = [r["variant"], r["impl"], r["tuning"], r["state_layout"] and
                     f"layout:{r['state_layout']}", r["cache_regime"] != "rotate" and
                     r["cache_regime"], r["graph"] not in ("", "0") and "graph",
                     r["device_index"] not in ("", "0") and f"dev {r['device_index']}"]
            label = r["case"] + "".join(f" {e}" for e in extra if e)
            op = "/".join(r["case"].split("/")[:2])
            groups.setdefault((op, label), []).append(us)
    if not groups:
        raise compare.InputError(f"{path}: no samples")
    return groups


def plot_samples(plt, op, items, path):
    """Box over violin of each case's samples (one column per case), log-y microseconds."""
    data = [v for _, v in items]
    fig, ax = plt.subplots(figsize=(2.0 + 0.35 * len(items), 6))
    pos = list(range(1, len(items) + 1))
    ax.violinplot(data, positions=pos, showextrema=False, widths=0.8)
    ax.boxplot(data, positions=pos, widths=0.3, showfliers=False)
    ax.set_xticks(pos)
    ax.set_xticklabels([f"{lab} (n={len(v)})" for lab, v in items], fontsize=7, rotation=90)
    ax.set_yscale("log")
    ax.set_ylabel("time per call, us (log)")
    ax.set_title(f"{op}: sample distributions (box: quartiles, whiskers 1.5 IQR)")
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _safe(name):
    """A string usable as a file-name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "x"


def family_label(mechanism, op):
    """Chart name of a (mechanism, op) pair: the op alone when it already starts with the
    mechanism (op "gdn/verify" of mechanism "gdn"), else both ("gdn conv1d_update/decode")."""
    return op if op.split("/")[0] == mechanism else f"{mechanism} {op}"


def family_groups(rows):
    """ok rows grouped by (mechanism, op, state_dtype), in first-appearance order."""
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault((r["mechanism"], r["op"], r["state_dtype"]), []).append(r)
    return groups


def series_of(rows):
    """Lines of one chart: {label: {batch: median gbps}}. The label names the draft count and
    every other series dimension that takes more than one value among rows."""
    varying = [(col, short) for col, short in SERIES_DIMS if len({r[col] for r in rows}) > 1]
    # Each impl has its own knobs, so tunings differ across impls by construction: a tuning names
    # a line only when one impl ran several.
    per_impl = {}
    for r in rows:
        per_impl.setdefault(r.get("impl", ""), set()).add(r.get("tuning", ""))
    if all(len(t) <= 1 for t in per_impl.values()):
        varying = [(col, short) for col, short in varying if col != "tuning"]
    points = {}
    for r in rows:
        parts = [f"T={r['draft_tokens']}"] + [f"{short}={r[col]}" for col, short in varying]
        by_b = points.setdefault((r["draft_tokens"],) + tuple(str(r[c]) for c, _ in varying),
                                 (", ".join(parts), {}))[1]
        if math.isfinite(r["gbps"]):
            by_b.setdefault(r["batch"], []).append(r["gbps"])
    return {label: {b: compare.median(v) for b, v in sorted(by_b.items())}
            for _, (label, by_b) in sorted(points.items())}


def plot_family(plt, key, rows, path):
    """One GB/s-vs-batch chart (see module doc) written to path."""
    mechanism, op, dtype = key
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, pts in series_of(rows).items():
        ax.plot(list(pts), list(pts.values()), marker="o", label=label)
    peaks = [r["copy_peak_gbps"] for r in rows
             if math.isfinite(r["copy_peak_gbps"]) and r["copy_peak_gbps"] > 0]
    if peaks:
        peak = compare.median(peaks)
        ax.axhline(peak, linestyle="--", color="black", linewidth=1,
                   label=f"copy peak {peak:.0f} GB/s" if peak >= 100 else
                   f"copy peak {peak:.3g} GB/s")
    batches = sorted({r["batch"] for r in rows if r["batch"] > 0})
    ax.set_xscale("log", base=2)
    if batches:
        ax.set_xticks(batches)
        ax.set_xticklabels([str(b) for b in batches])
    ax.set_xlabel("batch (requests)")
    ax.set_ylabel("achieved GB/s")
    gpus = ", ".join(sorted({r["gpu_name"] or r["backend"] for r in rows}))
    ax.set_title(f"{family_label(mechanism, op)}  |  {gpus}  |  state {dtype}")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def bar_labels(keys):
    """Labels of compared keys: the case, plus the key qualifiers (variant, impl, tuning,
    cache regime, graph, device) that are not the same for every key."""
    names = ("variant", "impl", "tuning", "cache", "graph", "dev")
    varying = [i for i in range(1, 7) if len({k[i] for k in keys}) > 1]
    return [" ".join([k[0]] + [f"{names[i - 1]}={k[i]}" for i in varying]) for k in keys]


def plot_comparison(plt, cmp, path):
    """Horizontal bars of % change per compared case, coloured by decision, with the
    +-threshold band dashed; title carries the geometric-mean ratio."""
    res = cmp.results
    labels = bar_labels([r.key for r in res])
    width = min(24.0, 6.0 + 0.065 * max(len(s) for s in labels))
    fig, ax = plt.subplots(figsize=(width, max(3.0, 0.3 * len(res) + 1.5)))
    ys = list(range(len(res)))[::-1]
    ax.barh(ys, [r.change_pct for r in res],
            color=[DECISION_COLOURS[r.decision] for r in res])
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize="x-small")
    for x in (-cmp.threshold, cmp.threshold):
        ax.axvline(x, linestyle="--", color="black", linewidth=0.8)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("median time change, after vs before (%)   (+ = slower)")
    g = cmp.geomean_ratio()
    gtxt = "n/a" if math.isnan(g) else f"{(g - 1) * 100:+.2f}%"
    old, new = cmp.sides()
    sides = "" if (old, new) == ("BEFORE", "AFTER") else f"  |  {old} -> {new}"
    ax.set_title(f"{os.path.basename(cmp.after.path)} vs {os.path.basename(cmp.before.path)}"
                 f"{sides}  |  geomean {gtxt}")
    from matplotlib.patches import Patch
    present = [d for d in compare.DECISIONS if any(r.decision == d for r in res)]
    if present:
        ax.legend(handles=[Patch(color=DECISION_COLOURS[d], label=d) for d in present],
                  fontsize="small", loc="best")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _stem(path):
    return _safe(os.path.splitext(os.path.basename(path))[0])


def main(argv=None):
    p = argparse.ArgumentParser(prog="plot.py",
                                description="PNG charts of linstate CSV runs.")
    p.add_argument("csv", nargs="?", help="CSV of one run: GB/s against batch per family/op")
    p.add_argument("--out", help="output directory (default: the directory of the CSV)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                   help="also draw the before/after change chart")
    p.add_argument("--samples", metavar="SAMPLES.csv",
                   help="draw the sample distributions of a --samples-out file")
    compare.add_compare_options(p)
    args = p.parse_args(argv)
    if not args.csv and not args.compare and not args.samples:
        p.error("give a CSV, --compare BEFORE AFTER, --samples SAMPLES.csv, or several")
    out = args.out or os.path.dirname(os.path.abspath(
        args.csv or (args.compare[1] if args.compare else args.samples)))
    try:
        plt = _pyplot()
    except ImportError:
        print("plot.py: error: matplotlib is needed (python3 -m pip install matplotlib)",
              file=sys.stderr)
        return 2
    try:
        jobs = []
        if args.csv:
            run = compare.load_csv(args.csv)
            groups = family_groups(run.rows)
            if not groups:
                raise compare.InputError(f"{args.csv}: no status=ok rows to plot")
            jobs += [(plot_family, (k, rows),
                      f"{_stem(args.csv)}-{_safe(family_label(k[0], k[1]) + '_' + k[2])}.png")
                     for k, rows in groups.items()]
        if args.compare:
            variants, impls, tunings = compare.selection_args(args)
            before, after = (compare.load_csv(f) for f in args.compare)
            cmp = compare.compare_runs(before, after, args.threshold, args.alpha,
                                       args.ignore_device, variants, impls, tunings,
                                       compare.noise_floors_arg(args.noise_floor))
            if not cmp.results:
                raise compare.InputError(f"{args.compare[0]} and {args.compare[1]}: no case "
                                         f"compared (no common key with ok rows)")
            jobs.append((plot_comparison, (cmp,),
                         f"compare-{_stem(args.compare[0])}-vs-{_stem(args.compare[1])}.png"))
        if args.samples:
            by_op = {}
            for (op, label), us in load_samples(args.samples).items():
                by_op.setdefault(op, []).append((label, us))
            for op, items in by_op.items():
                for i in range(0, len(items), SAMPLES_PER_PNG):
                    part = f"-{i // SAMPLES_PER_PNG + 1}" if i else ""
                    jobs.append((plot_samples, (op, items[i:i + SAMPLES_PER_PNG]),
                                 f"{_stem(args.samples)}-samples-{_safe(op)}{part}.png"))
    except compare.InputError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"plot.py: error: {e.name} is needed (python3 -m pip install scipy)",
              file=sys.stderr)
        return 2
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        print(f"plot.py: error: cannot create {out}: {e.strerror}", file=sys.stderr)
        return 2
    for fn, fargs, name in jobs:
        path = os.path.join(out, name)
        fn(plt, *fargs, path)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
