#!/usr/bin/env python3
"""The spread of a replicate fleet run across its GPUs: a table, a plot, the outliers.

usage: fleet_report.py MERGED.csv [--out DIR] [--outlier-pct 5]

MERGED.csv is scripts/fleet/merge.py's output of a `--fleet replicate` run. A GPU is one rank's device:
its gpu_uuid (the host name for host-backend rows) and, when one GPU served several ranks (two
processes taking turns on one GPU), the rank. Per measurement (the join key of every script,
lscsv.row_key, without the GPU: case, with "/layout:vk" for a vk-layout row, variant, impl,
tuning, cache_regime, graph) each GPU's time is the median of its ok rows' time_us_median
(over repetitions); the report gives min / median / max across GPUs, the spread
(max - min) / median, and the slowest GPU.

Per GPU: the geometric mean over measurements of its time / the measurement's median across
GPUs. A GPU is an outlier when that ratio is off 1 by more than --outlier-pct (default 5) %; it
takes at least three GPUs to say which one is off (with two, the median sits between them).

Writes DIR/fleet.md (the two tables), DIR/fleet.csv (per measurement) and DIR/fleet.png (spread
per measurement, ratio per GPU), and prints fleet.md. Exit status: 0 (outliers are a finding,
not an error); 2 with one line on stderr for bad input (lscsv's checks; an output folder that is
the input or not a folder), or fewer than two GPUs on any measurement.
"""
import csv
import io
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lscsv  # noqa: E402  (the CSV reader and the join key)
from lscsv import InputError  # noqa: E402

# fleet.csv's key columns: lscsv.row_key without the GPU (a measurement across GPUs).
KEY = ("case", "variant", "impl", "tuning", "cache_regime", "graph")


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
    return lscsv.load(path).rows


def analyse(rows, outlier_pct):
    label = gpu_labels(rows)
    times = {}  # key -> gpu -> [times]
    gpu_info = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        t = r["time_us_median"]
        g = label(r)
        gpu_info.setdefault(g, (r["gpu_name"], r.get("node", "") or r["host"], r.get("rank", "")))
        times.setdefault(lscsv.row_key(r, ignore_device=True)[:6], {}).setdefault(g, []).append(t)
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
            ratios[g].append((t, mid))
    if not cases:
        raise InputError("no measurement ran on two or more GPUs (a shard run? fleet_report reads replicate runs)")
    per_gpu = []
    for g in gpus:
        rs = ratios[g]
        geo = lscsv.geomean(rs)
        slowest = sum(1 for c in cases if c["worst"] == g)
        outlier = len(gpus) >= 3 and abs(geo - 1) * 100 > outlier_pct
        per_gpu.append(dict(gpu=g, name=gpu_info[g][0], node=gpu_info[g][1], rank=gpu_info[g][2], ratio=geo,
                            slowest=slowest, n=len(rs), outlier=outlier))
    return cases, per_gpu


def case_name(key):
    case, variant, impl, tuning, cache, graph = key
    extra = [x for x in (impl, f"variant={variant}" if variant else "") if x]
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
    p = lscsv.ArgumentParser(prog="fleet_report.py", description=__doc__.split("\n")[0])
    p.add_argument("merged")
    p.add_argument("--out", default=None, help="output folder (default: next to MERGED.csv, report/)")
    p.add_argument("--outlier-pct", type=float, default=5.0)
    a = p.parse_args(argv)
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.merged)), "report")
    try:
        if not 0 < a.outlier_pct < float("inf"):
            raise InputError(f"--outlier-pct: bad value '{a.outlier_pct:g}' (> 0)")
        cases, per_gpu = analyse(load(a.merged), a.outlier_pct)
        md = markdown(cases, per_gpu, a.outlier_pct, a.merged)
        table = io.StringIO(newline="")
        w = csv.writer(table, lineterminator="\n")
        w.writerow(list(KEY) + ["gpus", "min_us", "median_us", "max_us", "spread_pct", "slowest_gpu"])
        for c in cases:
            w.writerow(list(c["key"]) + [c["n"], f"{c['min']:.6g}", f"{c['median']:.6g}", f"{c['max']:.6g}",
                                         f"{c['spread']:.3f}", c["worst"]])
        lscsv.check_output_dir(out, [a.merged])
        png = os.path.join(out, "fleet.png")
        lscsv.check_output_file(png, [a.merged])
        lscsv.write_file(os.path.join(out, "fleet.md"), md, [a.merged])
        lscsv.write_file(os.path.join(out, "fleet.csv"), table.getvalue(), [a.merged])
        try:
            plot(cases, per_gpu, png)
        except OSError as e:
            raise InputError(f"--out {png}: cannot write: {e.strerror}") from None
    except InputError as e:
        return lscsv.report("fleet_report.py", e)
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
