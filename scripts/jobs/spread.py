#!/usr/bin/env python3
"""spread.py GROUP=RUN.csv[,RUN.csv...] ... — how far a case's median moves between processes.

Each GROUP is one way of running the same sweep (e.g. gpu=a1.csv,a2.csv,a3.csv core=b1.csv,...),
each file one process. Per group and case (lscsv's join key, ok rows; repetitions reduced to their
median), the spread is max / min of the processes' medians - 1. Prints, per group and op, the
number of cases, the median and the largest spread (and its case), then the largest in-run noise
(noise_pct) for scale. For scripts/jobs/aa-h200.sh's bind step: does pinning the measuring thread
to one core (--bind core) narrow pool/fork's run-to-run spread? Exit 2 on bad input.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lscsv  # noqa: E402


def medians(path):
    """{join key: (op, median of the ok rows' medians, largest noise_pct, case name)}."""
    by = {}
    for r in lscsv.load(path).rows:
        if r["status"] != "ok":
            continue
        by.setdefault(lscsv.row_key(r, ignore_device=True), []).append(r)
    out = {}
    for k, rows in by.items():
        noise = [float(r["noise_pct"]) for r in rows if r.get("noise_pct")]
        out[k] = (rows[0]["op"], lscsv.median([float(r["time_us_median"]) for r in rows]), max(noise, default=0.0),
                  rows[0]["case"])
    return out


def main(argv=None):
    ap = lscsv.ArgumentParser(prog="spread.py", description=__doc__.split("\n")[0])
    ap.add_argument("groups", nargs="+", help="NAME=RUN.csv[,RUN.csv...] (two or more runs each)")

    def body(a):
        groups = []
        for g in a.groups:
            name, sep, files = g.partition("=")
            paths = [p for p in files.split(",") if p]
            if not sep or not name or len(paths) < 2:
                raise lscsv.InputError(f"{g}: want NAME=RUN.csv,RUN.csv[,...] (two runs or more)")
            groups.append((name, [medians(p) for p in paths]))
        print(f"{'group':8} {'op':22} {'cases':>5} {'median spread':>13} {'max spread':>10} {'max noise':>9}  worst case")
        for name, runs in groups:
            keys = set(runs[0]).intersection(*runs[1:])
            per_op = {}
            for k in keys:
                times = [r[k][1] for r in runs]
                spread = max(times) / min(times) - 1 if min(times) > 0 else float("inf")
                per_op.setdefault(runs[0][k][0], []).append((spread, max(r[k][2] for r in runs), runs[0][k][3]))
            for op in sorted(per_op):
                v = sorted(per_op[op])
                print(f"{name:8} {op:22} {len(v):5d} {100 * lscsv.median([s for s, _, _ in v]):12.1f}% "
                      f"{100 * v[-1][0]:9.1f}% {max(n for _, n, _ in v):8.1f}%  {v[-1][2]}")
        return 0

    return lscsv.run_main("spread.py", ap, body, argv)


if __name__ == "__main__":
    sys.exit(main())
