#!/usr/bin/env python3
"""Pool accept / copy per tuning of the state-op knobs against SGLang's kernels in the same
process: time / sglang's time (median over the files' rows) and % of the copy ceiling.
Usage: knob_table.py [--old-auto] RUN.csv [RUN.csv ...]  (runs of --impl linstate,sglang --tune ...)
--old-auto: the runs are of the first build of the knobs, whose state.grid=auto was today's
state.grid=persist (and state.unroll=auto today's 4); the table names them so."""
import csv
import statistics
import sys

args = sys.argv[1:]
old_auto = bool(args) and args[0] == "--old-auto"
if old_auto:
    args = args[1:]
cells = {}      # (op, model, batch) -> tuning -> [(us, pct)]
for path in args:
    for r in csv.DictReader(open(path)):
        if r["status"] != "ok":
            continue
        if r["impl"] == "linstate":
            t = ",".join(i for i in r["tuning"].split(",") if i.startswith("state."))
            if old_auto:
                t = t.replace("state.grid=auto", "state.grid=persist")
        else:
            t = r["impl"]
        key = (r["op"], r["model"], int(r["batch"]))
        cells.setdefault(key, {}).setdefault(t, []).append(
            (float(r["time_us_median"]), float(r["pct_of_copy_peak"])))
tunings = sorted({t for v in cells.values() for t in v if t != "sglang"})
print("linstate time / sglang time (% of the copy ceiling); medians over the files' rows")
print("| op | model | B | " + " | ".join(tunings) + " | sglang |")
print("|---" * (4 + len(tunings)) + "|")
for key in sorted(cells):
    v = cells[key]
    if "sglang" not in v:
        continue
    base = statistics.median(u for u, _ in v["sglang"])
    row = []
    for t in tunings + ["sglang"]:
        if t not in v:
            row.append("-")
            continue
        us = statistics.median(u for u, _ in v[t])
        pct = statistics.median(p for _, p in v[t])
        row.append(f"{us / base:.3f} ({pct:.1f} %)")
    print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(row) + " |")
