#!/usr/bin/env python3
"""End-to-end checks of the per-row ceiling and the clock columns on the host backend.

usage: test_bench_ceiling.py BENCH_BINARY HEADER_TOOL
--ceiling start: every row divides by the start-up ceiling (drift 0); --ceiling case: each case
re-measures it and copy_peak_drift_pct is that ceiling against the run's first (the same first
for every row); pct_of_copy_peak always divides by the row's own copy_peak_gbps; a bad value is
one stderr line, rc 2. Host rows leave the clock columns empty and never say "clocks not sampled".
"""
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_cli import fail, read_csv, run  # noqa: E402

ARGS = ["--backend", "host", "--family", "gdn", "--model", "qwen3-next-80b-a3b", "--tp", "8",
        "--batch", "1,2,4,8,16,32", "--draft", "1", "--min-samples", "3", "--min-time", "0.001",
        "--max-time", "0.05"]


def sweep(bench, header, tmp, name, extra):
    out = os.path.join(tmp, name + ".csv")
    rc, _, err = run(bench, ARGS + extra + ["--out", out], tmp)
    if rc != 0:
        fail("%s: rc %d\n%s" % (extra, rc, err[-2000:]))
    if "clocks not sampled" in err:
        fail("host backend said 'clocks not sampled': %r" % err)
    rows = read_csv(out, header)
    if len(rows) != 6 or any(r["status"] != "ok" for r in rows):
        fail("%s: expected 6 ok rows, got %r" % (extra, [(r["case"], r["status"]) for r in rows]))
    for r in rows:
        for col in ("sm_clock_min_mhz", "sm_clock_median_mhz", "samples_discarded"):
            if r[col] != "":
                fail("%s: host row has %s = %r (expected empty)" % (r["case"], col, r[col]))
        peak, gbps, pct = float(r["copy_peak_gbps"]), float(r["gbps"]), float(r["pct_of_copy_peak"])
        if not (peak > 0 and math.isclose(pct, 100 * gbps / peak, rel_tol=1e-6)):
            fail("%s: pct_of_copy_peak %g is not 100 * gbps / copy_peak_gbps (%g, %g)"
                 % (r["case"], pct, gbps, peak))
    return rows


def main():
    bench, header_tool = os.path.abspath(sys.argv[1]), sys.argv[2]
    header = subprocess.run([header_tool], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in (("default", []), ("start", ["--ceiling", "start"])):
            rows = sweep(bench, header, tmp, name, extra)
            if len({r["copy_peak_gbps"] for r in rows}) != 1 or {r["copy_peak_drift_pct"] for r in rows} != {"0"}:
                fail("%s: one start-up ceiling and drift 0 expected: %r" % (
                    name, [(r["copy_peak_gbps"], r["copy_peak_drift_pct"]) for r in rows]))
        rows = sweep(bench, header, tmp, "case", ["--ceiling", "case"])
        if len({r["copy_peak_gbps"] for r in rows}) < 2:
            fail("--ceiling case: the ceiling was not re-measured per case: %r"
                 % [r["copy_peak_gbps"] for r in rows])
        firsts = [float(r["copy_peak_gbps"]) / (1 + float(r["copy_peak_drift_pct"]) / 100) for r in rows]
        if max(firsts) - min(firsts) > 1e-6 * max(firsts):
            fail("--ceiling case: drift is not against one first ceiling: %r" % firsts)
        rc, _, err = run(bench, ARGS + ["--ceiling", "sometimes", "--out", os.path.join(tmp, "x.csv")], tmp)
        lines = [l for l in err.splitlines() if l.strip()]
        if rc != 2 or len(lines) != 1 or "sometimes" not in lines[0]:
            fail("--ceiling sometimes: rc %d, stderr %r" % (rc, err))
    print("ok: ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
