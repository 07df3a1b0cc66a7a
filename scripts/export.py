#!/usr/bin/env python3
"""export.py — linstate CSV runs in a regression tracker's format.

    scripts/export.py RUN.csv [RUN.csv ...] [--format bmf|gb] [--out FILE | --out-dir DIR]

--format bmf (default): Bencher Metric Format JSON (https://bencher.dev, `bencher run --adapter
json --file F`): {benchmark name: {"latency": {value, lower_value, upper_value} in ns (median,
p10, p90), "gigabytes-per-second": {value}}}. --format gb: Google Benchmark JSON (context +
benchmarks, time in us), which github-action-benchmark reads with `tool: googlecpp`.

A tracker compares results only within one testbed, and one GPU model is one testbed: rows of
several GPU models (gpu_name; "host" for the host backend) are refused unless --out-dir is given,
which writes one file per model, DIR/<gpu slug>.json (e.g. h200.json). A benchmark's name is the
row's join key as compare.py prints it (lscsv.format_key) (case, variant, impl, tuning, cache regime, graph; not the
device index), so exports and comparisons name cases alike; repetitions and devices of one key are
reduced to the median of their medians (p10, p90 and GB/s likewise). Rows that are not ok are
left out and counted on stderr. Exit 2 on bad input, with one error line.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lscsv  # noqa: E402  (the CSV reader, the join key and the median)

BANDWIDTH_MEASURE = "gigabytes-per-second"  # Bencher creates a custom measure on first use


def gpu_slug(name):
    """The testbed name of a GPU model, as linstate-bench names results/<gpu>/: lower case,
    non-alphanumerics as '-', a leading "nvidia-" dropped ("NVIDIA H200" -> "h200")."""
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    s = s[len("nvidia-"):] if s.startswith("nvidia-") else s
    return s or "unknown"


def benchmarks(rows):
    """{name: dict of median, p10, p90 (us), gbps, n} over the ok rows, in first-appearance
    order; name is lscsv.format_key of the device-free join key."""
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault(lscsv.format_key(lscsv.row_key(r, ignore_device=True)), []).append(r)
    out = {}
    for name, rs in groups.items():
        gb = [r["gbps"] for r in rs if r["gbps"] == r["gbps"]]  # NaN-free
        out[name] = {"median": lscsv.median([r["time_us_median"] for r in rs]),
                     "p10": lscsv.median([r["time_us_p10"] for r in rs]),
                     "p90": lscsv.median([r["time_us_p90"] for r in rs]),
                     "gbps": lscsv.median(gb) if gb else None, "n": len(rs), "row": rs[0]}
    return out


def to_bmf(bench):
    doc = {}
    for name, b in bench.items():
        m = {"latency": {"value": b["median"] * 1e3, "lower_value": b["p10"] * 1e3,
                         "upper_value": b["p90"] * 1e3}}
        if b["gbps"] is not None:
            m[BANDWIDTH_MEASURE] = {"value": b["gbps"]}
        doc[name] = m
    return doc


def to_gb(bench, gpu):
    first = next(iter(bench.values()))["row"] if bench else {}
    ctx = {"date": first.get("timestamp", ""), "host_name": first.get("host", ""),
           "executable": "linstate-bench", "library_build_type": "release",
           "linstate_gpu": gpu, "linstate_backend": first.get("backend", ""),
           "linstate_git_commit": first.get("git_commit", "")}
    out = []
    for name, b in bench.items():
        e = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": b["n"],
             "repetition_index": 0, "threads": 1, "iterations": 1, "real_time": b["median"],
             "cpu_time": b["median"], "time_unit": "us"}
        if b["gbps"] is not None:
            e["bytes_per_second"] = b["gbps"] * 1e9
        out.append(e)
    return {"context": ctx, "benchmarks": out}


def main(argv=None):
    p = lscsv.ArgumentParser(prog="export.py", description="linstate CSVs for a regression tracker.")
    p.add_argument("csv", nargs="+", help="linstate CSV runs (one GPU model, or use --out-dir)")
    p.add_argument("--format", choices=("bmf", "gb"), default="bmf",
                   help="bmf: Bencher Metric Format (default); gb: Google Benchmark JSON")
    dest = p.add_mutually_exclusive_group()
    dest.add_argument("--out", help="write to FILE (default: stdout)")
    dest.add_argument("--out-dir", help="one file per GPU model: DIR/<gpu>.json")
    return lscsv.run_main("export.py", p, export, argv)


def export(args):
    """Reads, checks and writes (see the module doc); InputError on bad input."""
    if args.out:
        lscsv.check_output_file(args.out, args.csv)
    rows = [r for f in args.csv for r in lscsv.load(f).rows]
    by_gpu = {}
    for r in rows:
        by_gpu.setdefault(gpu_slug(r["gpu_name"] or r["backend"]), []).append(r)
    if len(by_gpu) > 1 and not args.out_dir:
        raise lscsv.InputError(f"rows of {len(by_gpu)} GPU models ({', '.join(by_gpu)}); a testbed "
                               f"is one model: give --out-dir DIR for one file each")
    docs = {}
    for gpu, rs in by_gpu.items():
        bench = benchmarks(rs)
        if not bench:
            raise lscsv.InputError(f"no status=ok rows for {gpu}")
        docs[gpu] = to_bmf(bench) if args.format == "bmf" else to_gb(bench, gpu)
    skipped = sum(1 for r in rows if r["status"] != "ok")
    if skipped:
        print(f"export.py: {skipped} rows not ok, left out", file=sys.stderr)
    if args.out_dir:
        lscsv.check_output_dir(args.out_dir, args.csv, "--out-dir")
        paths = [os.path.join(args.out_dir, gpu + ".json") for gpu in docs]
        for path in paths:
            lscsv.check_output_file(path, args.csv, "--out-dir")
        for path, doc in zip(paths, docs.values()):
            lscsv.write_file(path, json.dumps(doc, indent=1) + "\n", args.csv, "--out-dir")
            print(path)
        return 0
    text = json.dumps(next(iter(docs.values())), indent=1) + "\n"
    if args.out:
        lscsv.write_file(args.out, text, args.csv)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
