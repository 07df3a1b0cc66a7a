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
With --compare: one PNG, one panel per case family (conv1d_update, gdn, kda, mamba2_ssu, pool):
bars of the % change of the cases that are not SAME (at most 20 per panel, SLOWER first, then the
largest changes), coloured by compare.py's decision; SAME cases are counted in the panel title,
not drawn. The figure title names BEFORE -> AFTER and the verdict counts.
With --samples (the raw-samples sidecar of linstate-bench --samples-out): the distribution of
every case's samples (all repetitions together) as a box over a violin, one PNG per op
(<samples stem>-samples-<op>.png), one column per case, microseconds on a log axis; at most
SAMPLES_PER_PNG cases per PNG (further PNGs get -2, -3, ...).
Files are named <csv stem>-<op>_<dtype>.png (op "gdn/verify" -> gdn_verify; prefixed by the
mechanism when op does not start with it) and compare-<before>-vs-<after>.png,
written to --out (default: the directory of CSV, or of AFTER.csv). Exit 2 on bad input.
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the decision rule)
import lscsv  # noqa: E402  (the CSV reader)

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
    groups = {}
    records = lscsv.records(path, lscsv.read_text(path))
    header = next(records, None)
    if header is None or tuple(h.strip() for h in header[2]) != SAMPLES_COLUMNS:
        raise lscsv.InputError(f"{path}: not a samples file (header must be "
                               f"{','.join(SAMPLES_COLUMNS)})")
    for lineno, _, cells in records:
        if len(cells) != len(SAMPLES_COLUMNS):
            raise lscsv.InputError(f"{path}:{lineno}: {len(cells)} cells, header has "
                                   f"{len(SAMPLES_COLUMNS)}")
        r = dict(zip(SAMPLES_COLUMNS, cells))
        us = lscsv.parse_number(path, lineno, "us", r["us"], float)
        if not (math.isfinite(us) and us > 0):
            raise lscsv.InputError(f"{path}:{lineno}: column us: not a positive time: "
                                   f"{r['us']!r}")
        extra = [r["variant"], r["impl"], r["tuning"], r["state_layout"] and
                 f"layout:{r['state_layout']}", r["cache_regime"] != "rotate" and
                 r["cache_regime"], r["graph"] not in ("", "0") and "graph",
                 r["device_index"] not in ("", "0") and f"dev {r['device_index']}"]
        label = r["case"] + "".join(f" {e}" for e in extra if e)
        op = "/".join(r["case"].split("/")[:2])
        groups.setdefault((op, label), []).append(us)
    if not groups:
        raise lscsv.InputError(f"{path}: no samples (header only)")
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
    return {label: {b: lscsv.median(v) for b, v in sorted(by_b.items())}
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
        peak = lscsv.median(peaks)
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


MAX_BARS = 20          # bars per family panel: the changed cases with the largest |change|
PANEL_COLS = 2


def comparison_panels(cmp, max_bars=MAX_BARS):
    """[(family, shown, n_same, n_hidden, n_total)]: one panel per case family (the key's first
    part: conv1d_update, gdn, kda, mamba2_ssu, pool) in first-appearance order. A panel shows the
    cases that are not SAME, at most max_bars of them, SLOWER first, then largest |change|; SAME
    cases are counted, not drawn, so a full sweep gives a few readable panels, not 540 bars."""
    fams = {}
    for r in cmp.results:
        fams.setdefault(r.key[0].split("/")[0], []).append(r)
    panels = []
    for fam, res in fams.items():
        changed = sorted((r for r in res if r.decision != "SAME"),
                         key=lambda r: (r.decision != "SLOWER", -abs(r.change_pct)))
        panels.append((fam, changed[:max_bars], len(res) - len(changed),
                       max(0, len(changed) - max_bars), len(res)))
    return panels


def plot_comparison(plt, cmp, path):
    """One panel per family (comparison_panels): horizontal bars of % change of the cases that
    are not SAME, coloured by decision, the +-threshold band dashed. The figure title says what
    was compared, in which direction, and the verdict counts."""
    panels = comparison_panels(cmp)
    keys = [r.key for r in cmp.results]
    label_of = dict(zip(keys, bar_labels(keys)))
    cols = min(PANEL_COLS, len(panels))
    rows_n = math.ceil(len(panels) / cols)
    bars = [len(p[1]) for p in panels]
    row_h = [max(1.6, 0.26 * max(bars[r * cols:(r + 1) * cols] + [1]) + 1.1) for r in range(rows_n)]
    fig, axes = plt.subplots(rows_n, cols, figsize=(9.0 * cols, sum(row_h) + 1.0), squeeze=False,
                             gridspec_kw={"height_ratios": row_h})
    for i, (fam, shown, n_same, n_hidden, n_total) in enumerate(panels):
        ax = axes[i // cols][i % cols]
        ys = list(range(len(shown)))[::-1]
        if shown:
            ax.barh(ys, [r.change_pct for r in shown],
                    color=[DECISION_COLOURS.get(r.decision, "#9467bd") for r in shown])
            ax.set_yticks(ys)
            ax.set_yticklabels([label_of[r.key].split("/", 1)[1] for r in shown], fontsize="x-small")
        else:
            ax.set_yticks([])
            ax.text(0.5, 0.5, f"all {n_total} cases SAME", transform=ax.transAxes, ha="center",
                    va="center", fontsize="medium", color="#555555")
        for x in (-cmp.threshold, cmp.threshold):
            ax.axvline(x, linestyle="--", color="black", linewidth=0.8)
        ax.axvline(0, color="black", linewidth=0.8)
        note = f"{n_total} cases, {n_same} SAME not drawn"
        if n_hidden:
            note += f", {n_hidden} more changed not drawn"
        g = cmp.geomean_ratio([r for r in cmp.results if r.key[0].split("/")[0] == fam])
        ax.set_title(f"{fam}  ({note}; geomean {(g - 1) * 100:+.2f}%)", fontsize="medium")
        ax.set_xlabel("median time change (%), + = slower")
        ax.grid(True, axis="x", alpha=0.3)
    for j in range(len(panels), rows_n * cols):
        axes[j // cols][j % cols].axis("off")
    g = cmp.geomean_ratio()
    gtxt = "n/a" if math.isnan(g) else f"{(g - 1) * 100:+.2f}%"
    old, new = cmp.sides()
    counts = ", ".join(f"{n} {d}" for d, n in cmp.counts().items() if n)
    b, a = os.path.basename(cmp.before.path), os.path.basename(cmp.after.path)
    what = f"{b} ({old}) -> {a} ({new})" if (old, new) != ("BEFORE", "AFTER") else f"{b} -> {a}"
    fig.suptitle(f"{what}: change of median time per case\n{len(cmp.results)} compared: {counts}; "
                 f"geomean {gtxt}; threshold {cmp.threshold:g}%")
    from matplotlib.patches import Patch
    present = [d for d in dict.fromkeys(r.decision for r in cmp.results) if d != "SAME"]
    if present:
        fig.legend(handles=[Patch(color=DECISION_COLOURS.get(d, "#9467bd"), label=d) for d in present],
                   fontsize="small", loc="upper right")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _stem(path):
    return _safe(os.path.splitext(os.path.basename(path))[0])


def main(argv=None):
    p = lscsv.ArgumentParser(prog="plot.py",
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
        inputs = [f for f in [args.csv, args.samples] + list(args.compare or ()) if f]
        if args.csv:
            run = lscsv.load(args.csv)
            groups = family_groups(run.rows)
            if not groups:
                raise lscsv.InputError(f"{args.csv}: no status=ok rows to plot")
            jobs += [(plot_family, (k, rows),
                      f"{_stem(args.csv)}-{_safe(family_label(k[0], k[1]) + '_' + k[2])}.png")
                     for k, rows in groups.items()]
        if args.compare:
            variants, impls, tunings = compare.selection_args(args)
            before, after = (lscsv.load(f) for f in args.compare)
            cmp = compare.compare_runs(before, after, args.threshold, args.alpha,
                                       args.ignore_device, variants, impls, tunings,
                                       compare.noise_floors_arg(args.noise_floor),
                                       args.latency_floor)
            if not cmp.results:
                raise lscsv.InputError(f"{args.compare[0]} and {args.compare[1]}: no case "
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
        lscsv.check_output_dir(out, inputs)
        for _, _, name in jobs:
            lscsv.check_output_file(os.path.join(out, name), inputs)
        for fn, fargs, name in jobs:
            path = os.path.join(out, name)
            try:
                fn(plt, *fargs, path)
            except OSError as e:
                raise lscsv.InputError(f"--out {path}: cannot write: {e.strerror}") from None
            print(path)
    except lscsv.InputError as e:
        return lscsv.report("plot.py", e)
    except ImportError as e:
        print(f"plot.py: error: {e.name} is needed (python3 -m pip install scipy)",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
