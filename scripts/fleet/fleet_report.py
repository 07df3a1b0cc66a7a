#!/usr/bin/env python3
"""The spread of a replicate fleet run across its GPUs: a table, a plot, the outliers.

usage: fleet_report.py MERGED.csv [--out DIR] [--outlier-pct 5]

MERGED.csv is scripts/fleet/merge.py's output of a `--fleet replicate` run. A GPU is one rank's device:
its gpu_uuid (the host name for host-backend rows) and, when one GPU served several ranks (two
processes taking turns on one GPU), the rank. Per measurement (case, variant, impl, tuning,
cache_regime, graph, state_layout) each GPU's time is the median of its ok rows' time_us_median
(over repetitions); the report gives min / median / max across GPUs, the spread
(max - min) / median, and the slowest GPU.

Per GPU: the geometric mean over measurements of its time / the measurement's median across
GPUs. A GPU is an outlier when that ratio is off 1 by more than --outlier-pct (default 5) %; it
takes at least three GPUs to say which one is off (with two, the median sits between them).

Writes DIR/fleet.md (the two tables), DIR/fleet.csv (per measurement) and DIR/fleet.png (spread
per measurement, ratio per GPU), and prints fleet.md. Exit status: 0 (outliers are a finding,
not an error); 2 bad input or fewer than two GPUs on any measurement.
"""
import argparse
import csv
import math
import os
import statistics
import sys

KEY = ("case", "variant", "impl", "tuning", "cache_regime", "graph", "state_layout")


class InputError(Exception):
    pass


def gpu_labels(rows):
    """Row -> GPU label: uuid (or host), plus '/rank<r>' when one GPU served several ranks."""
    ranks_of = {}
    for r in rows:
        ranks_of.setdefault(r.get("gpu_uuid") or r["host"], set()).add(r.get("rank", ""))

    def label(r):
        g = r.get("gpu_uuid") or r["host"]
        return f"{g}/rank{r.get('rank', '')}" if len(ranks_of[g]) > 1 else g
    return label


def load(path):
    try:
        rows = list(csv.DictReader(open(path, newline="")))
    except OSError as e:
        raise InputError(f"{path}: {e}")
    if not rows:
        raise InputError(f"{path}: no rows")
    for col in ("case", "status", "time_us_median", "host", "gpu_name"):
        if col not in rows[0]:
            raise InputError(f"{path}: no column {col}")
    return rows


def analyse(rows, outlier_pct):
    label = gpu_labels(rows)
    times = {}  # key -> gpu -> [times]
    gpu_info = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        try:
            t = float(r["time_us_median"])
        except ValueError:
            raise InputError(f"case {r['case']}: bad time_us_median {r['time_us_median']!r}")
        g = label(r)
        gpu_info.setdefault(g, (r["gpu_name"], r.get("node", "") or r["host"], r.get("rank", "")))
        times.setdefault(tuple(r.get(k, "") for k in KEY), {}).setdefault(g, []).append(t)
    gpus = sorted(gpu_info)
    if len(gpus) < 2:
        raise InputError(f"{len(gpus)} GPU(s) with ok rows: a fleet report needs a replicate run on two or more")
    cases, ratios = [], {g: [] for g in gpus}
    for key, per in sorted(times.items()):
        if len(per) < 2:
            continue
        med = {g: statistics.median(v) for g, v in per.items()}
        mid = statistics.median(med.values())
        worst = max(med, key=med.get)
        cases.append(dict(key=key, n=len(med), min=min(med.values()), median=mid, max=max(med.values()),
                          spread=100.0 * (max(med.values()) - min(med.values())) / mid, worst=worst))
        for g, t in med.items():
            ratios[g].append(t / mid)
    if not cases:
        raise InputError("no measurement ran on two or more GPUs (a shard run? fleet_report reads replicate runs)")
    per_gpu = []
    for g in gpus:
        rs = ratios[g]
        geo = math.exp(sum(math.log(x) for x in rs) / len(rs)) if rs else float("nan")
        slowest = sum(1 for c in cases if c["worst"] == g)
        outlier = len(gpus) >= 3 and abs(geo - 1) * 100 > outlier_pct
        per_gpu.append(dict(gpu=g, name=gpu_info[g][0], node=gpu_info[g][1], rank=gpu_info[g][2], ratio=geo,
                            slowest=slowest, n=len(rs), outlier=outlier))
    return cases, per_gpu


def case_name(key):
    case, variant, impl, tuning, cache, graph, layout = key
    extra = [x for x in (impl, f"variant={variant}" if variant else "", f"layout={layout}" if layout else "") if x]
    return case + (f" ({', '.join(extra)})" if extra else "")


def markdown(cases, per_gpu, outlier_pct, src):
    out = [f"# Fleet report: {src}", "",
           f"{len(per_gpu)} GPUs, {len(cases)} measurements on two or more of them. Times are µs per call "
           "(each GPU's median over repetitions).", "",
           "## Per GPU", "",
           "| GPU | model | node | rank | time / fleet median (geomean) | slowest on | outlier |",
           "|---|---|---|---|---|---|---|"]
    for g in per_gpu:
        out.append(f"| `{g['gpu']}` | {g['name']} | {g['node']} | {g['rank']} | {g['ratio']:.3f} | "
                   f"{g['slowest']} of {g['n']} | {'**OUTLIER**' if g['outlier'] else 'no'} |")
    flagged = [g["gpu"] for g in per_gpu if g["outlier"]]
    out.append("")
    if len(per_gpu) < 3:
        out.append(f"Outliers: not decided with {len(per_gpu)} GPUs (at least three are needed to tell which one is off).")
    elif flagged:
        out.append(f"Outliers (geomean off the fleet median by more than {outlier_pct:g} %): "
                   + ", ".join(f"`{g}`" for g in flagged) + ".")
    else:
        out.append(f"Outliers: none (every GPU within {outlier_pct:g} % of the fleet median).")
    out += ["", "## Per measurement", "",
            "| case | GPUs | min µs | median µs | max µs | spread % | slowest GPU |", "|---|---|---|---|---|---|---|"]
    for c in cases:
        out.append(f"| {case_name(c['key'])} | {c['n']} | {c['min']:.4g} | {c['median']:.4g} | {c['max']:.4g} | "
                   f"{c['spread']:.1f} | `{c['worst']}` |")
    return "\n".join(out) + "\n"


def plot(cases, per_gpu, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, max(4, 0.25 * len(cases) + 1)),
                               gridspec_kw={"width_ratios": [3, 2]})
    names = [case_name(c["key"]) for c in cases]
    a.barh(range(len(cases)), [c["spread"] for c in cases], color="tab:blue")
    a.set_yticks(range(len(cases)))
    a.set_yticklabels(names, fontsize=6)
    a.invert_yaxis()
    a.set_xlabel("spread across GPUs: (max - min) / median, %")
    a.set_title("per measurement")
    colors = ["tab:red" if g["outlier"] else "tab:gray" for g in per_gpu]
    b.barh(range(len(per_gpu)), [g["ratio"] for g in per_gpu], color=colors)
    b.axvline(1.0, color="black", linewidth=0.8)
    b.set_yticks(range(len(per_gpu)))
    b.set_yticklabels([g["gpu"] for g in per_gpu], fontsize=6)
    b.invert_yaxis()
    b.set_xlabel("time / fleet median (geomean; red: outlier)")
    b.set_title("per GPU")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("merged")
    p.add_argument("--out", default=None, help="output folder (default: next to MERGED.csv, report/)")
    p.add_argument("--outlier-pct", type=float, default=5.0)
    a = p.parse_args(argv)
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.merged)), "report")
    try:
        if not a.outlier_pct > 0:
            raise InputError(f"--outlier-pct: bad value '{a.outlier_pct:g}' (> 0)")
        cases, per_gpu = analyse(load(a.merged), a.outlier_pct)
    except InputError as e:
        print(f"fleet_report.py: {e}", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    md = markdown(cases, per_gpu, a.outlier_pct, a.merged)
    with open(os.path.join(out, "fleet.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "fleet.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(KEY) + ["gpus", "min_us", "median_us", "max_us", "spread_pct", "slowest_gpu"])
        for c in cases:
            w.writerow(list(c["key"]) + [c["n"], f"{c['min']:.6g}", f"{c['median']:.6g}", f"{c['max']:.6g}",
                                         f"{c['spread']:.3f}", c["worst"]])
    plot(cases, per_gpu, os.path.join(out, "fleet.png"))
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
