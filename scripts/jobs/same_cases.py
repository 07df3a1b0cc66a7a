#!/usr/bin/env python3
"""same_cases.py BEFORE.csv AFTER.csv — do two runs of the same sweep hold the same cases with the
same case columns? For a change that must not alter what is measured (a code move): every row key
on both sides, and per key every column equal except timings, clocks and provenance (the lists
below; a column only one side has is named, not compared). Prints one line per difference and a
summary; exit 0 when identical, 1 when not, 2 on bad input (scripts/lscsv.py's errors)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lscsv  # noqa: E402

# Measured per run: they may differ between two runs of one build.
TIMING = {"samples", "time_us_median", "time_us_p10", "time_us_p90", "time_us_mean", "time_us_stddev",
          "gbps", "copy_peak_gbps", "pct_of_copy_peak", "time_us_min", "time_us_max", "noise_pct",
          "stop_reason", "sm_clock_mhz", "mem_clock_mhz", "sm_clock_min_mhz", "sm_clock_median_mhz",
          "samples_discarded", "copy_peak_drift_pct", "host_call_us"}
# Who, where and when: not the case.
PROVENANCE = {"schema_version", "suite_version", "git_commit", "git_dirty", "timestamp", "host", "cpuset",
              "numa_node", "gpu_uuid", "pci_bus_id", "rank", "world_size", "job_id", "node", "message",
              "impl_source", "impl_source_git", "impl_source_hash", "resumed_from", "driver_version",
              "_raw", "_line"}


def main(argv=None):
    ap = lscsv.ArgumentParser(prog="same_cases.py", description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")

    def body(a):
        b, n = lscsv.load(a.before), lscsv.load(a.after)
        bk = {lscsv.row_key(r): r for r in b.rows}
        nk = {lscsv.row_key(r): r for r in n.rows}
        diffs = []
        for k in sorted(set(bk) - set(nk)):
            diffs.append(f"only in {a.before}: {lscsv.format_key(k)}")
        for k in sorted(set(nk) - set(bk)):
            diffs.append(f"only in {a.after}: {lscsv.format_key(k)}")
        cols = [c for c in b.header if c in n.header and c not in TIMING | PROVENANCE]
        for k in sorted(set(bk) & set(nk)):
            for c in cols:
                if str(bk[k][c]) != str(nk[k][c]):
                    diffs.append(f"{lscsv.format_key(k)}: {c} {bk[k][c]!r} -> {nk[k][c]!r}")
        one_side = sorted(set(b.header) ^ set(n.header))
        print("\n".join(diffs))
        print(f"same_cases: {len(set(bk) & set(nk))} common keys, {len(cols)} columns compared, "
              f"{len(diffs)} difference(s); columns on one side only (not compared): "
              f"{', '.join(one_side) or 'none'}")
        return 1 if diffs else 0

    return lscsv.run_main("same_cases.py", ap, body, argv)


if __name__ == "__main__":
    sys.exit(main())
