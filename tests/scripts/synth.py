"""Synthetic linstate CSVs (schema v1 and v2) for the script tests.

row(...) builds one row dict with every v1 column (plus repetition); write_csv writes rows with a
chosen column list, so a test can drop a column or corrupt a cell. Numbers are plausible H200
values, never all-zero; p10/p90 are spread symmetrically around the median.
v2(rows, impl, tuning) turns v1 rows into schema-v2 rows of one impl and tuning; write them with
columns=V2_COLUMNS (the v1 columns, the v1 extras, then impl, impl_version, tuning, kernel, as
harness/csv.c writes them).
"""
import csv
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
import compare  # noqa: E402

COLUMNS = list(compare.SCHEMA_V1_COLUMNS) + ["repetition"]
# Spelled out here, not taken from compare.py, so these helpers do not depend on the reader.
V2_EXTRA_COLUMNS = ["impl", "impl_version", "tuning", "kernel"]
V2_COLUMNS = COLUMNS + ["rotated", "time_us_min", "time_us_max", "held"] + V2_EXTRA_COLUMNS
# The columns after the v2 extras, up to the fleet identity (harness/csv.c order): a fleet rank's file.
FLEET_COLUMNS = ["state_layout", "noise_pct", "stop_reason", "sm_clock_min_mhz", "sm_clock_median_mhz",
                 "samples_discarded", "copy_peak_drift_pct", "gpu_uuid", "pci_bus_id", "rank", "world_size",
                 "job_id", "node"]
FLEET_CSV_COLUMNS = V2_COLUMNS + FLEET_COLUMNS
UUID = ["GPU-00000000-0000-0000-0000-00000000000%d" % i for i in range(4)]
MODEL = "qwen3-next-80b-a3b"
# linstate's knobs (kernels/cuda/impl_linstate.cu) at their defaults, with pdl set.
LINSTATE_KNOBS = ("conv.variant=auto,conv.prefetch=on,conv.speculate=auto,delta.variant=auto,"
                  "ssu.variant=auto,ssu.speculate=auto")


def require(*modules):
    """Exits 77 (CTest: skipped), naming the module, when one of modules is not installed."""
    import importlib
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            print(f"SKIP: {m} is not installed (python3 -m pip install numpy scipy matplotlib)")
            sys.exit(77)


def linstate_tuning(pdl="on"):
    """The tuning string linstate writes: every knob, pdl first."""
    return f"pdl={pdl}," + LINSTATE_KNOBS


def case_key(family="gdn", op="verify", batch=64, draft=4, dtype="fp32"):
    return f"{family}/{op}/{MODEL}/tp2/B:{batch}/T:{draft}/{dtype}"


def row(batch=64, draft=4, median=100.0, spread=0.01, rep=0, mechanism="gdn", family="gdn",
        op="verify", **overrides):
    """One ok row shaped like the bench writes it: case <family>/<op>/..., op column
    "<family>/<op>", mechanism the model's (gdn, mamba2, kda); time_us_p10/p90 =
    median * (1 -/+ spread). overrides replace any column."""
    nbytes = 1_000_000 * batch
    r = {
        "schema_version": "1", "suite_version": "0.1.0", "git_commit": "0123456789abcdef",
        "git_dirty": "0", "timestamp": "2025-06-01T12:00:00Z", "host": "node1",
        "backend": "cuda", "device_index": "0", "gpu_name": "NVIDIA H200",
        "driver_version": "580.65", "cuda_runtime": "13.0", "sm_count": "132",
        "sm_clock_mhz": "1980", "mem_clock_mhz": "3201", "cpuset": "0-15", "numa_node": "0",
        "case": case_key(family, op, batch, draft), "mechanism": mechanism,
        "op": f"{family}/{op}",
        "variant": "fused", "model": MODEL, "tp": "2", "batch": str(batch),
        "draft_tokens": str(draft), "layers": "36", "conv_dtype": "bf16", "state_dtype": "fp32",
        "pool_slots": "512", "cache_regime": "rotate", "graph": "0", "samples": "200",
        "time_us_median": repr(median), "time_us_p10": repr(median * (1 - spread)),
        "time_us_p90": repr(median * (1 + spread)), "time_us_mean": repr(median),
        "time_us_stddev": repr(median * spread / 2), "bytes": str(nbytes),
        "gbps": repr(nbytes / (median * 1e3)), "copy_peak_gbps": "4100.5",
        "pct_of_copy_peak": repr(100 * nbytes / (median * 1e3) / 4100.5),
        "max_rel_err": "3.1e-06", "status": "ok", "repetition": str(rep),
    }
    r.update({k: str(v) for k, v in overrides.items()})
    return r


def suite(scale=1.0, spread=0.01, reps=1, jitter=0.0, **overrides):
    """A small sweep: gdn verify over B in {1, 8, 64, 256} x T in {1, 4}, and mamba2_ssu
    decode over B in {1, 64}. Median = base * scale * (1 + jitter * k) for repetition k."""
    rows = []
    for k in range(reps):
        f = scale * (1 + jitter * k)
        for b in (1, 8, 64, 256):
            for t in (1, 4):
                rows.append(row(b, t, (5.0 + b * t * 0.25) * f, spread, k, **overrides))
        for b in (1, 64):
            rows.append(row(b, 1, (3.0 + b * 0.1) * f, spread, k, mechanism="mamba2",
                            family="mamba2_ssu", op="decode", **overrides))
    return rows


def write_csv(path, rows, columns=None):
    """Writes rows (dicts) with the given columns (default: every v1 column + repetition)."""
    columns = columns or COLUMNS
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_MINIMAL)
        w.writerow(columns)
        for r in rows:
            w.writerow([r.get(c, "") for c in columns])
    return path


def v2(rows, impl="linstate", tuning=None, impl_version="0.1.0", kernel=None, scale=1.0):
    """Schema-v2 copies of v1 rows: impl, impl_version, tuning (default: linstate_tuning() for
    impl linstate, "" otherwise), kernel (default "<impl>:<op>"), the v1 extras rotated,
    time_us_min/max and held filled, every time multiplied by scale."""
    if tuning is None:
        tuning = linstate_tuning() if impl == "linstate" else ""
    out = []
    for r in rows:
        r = dict(r, schema_version="2", impl=impl, impl_version=impl_version, tuning=tuning,
                 kernel=kernel if kernel is not None else f"{impl}:{r['op']}", rotated="36",
                 held="1")
        for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
            r[c] = repr(float(r[c]) * scale)
        r["time_us_min"] = repr(float(r["time_us_p10"]) * 0.99)
        r["time_us_max"] = repr(float(r["time_us_p90"]) * 1.5)
        out.append(r)
    return out


class TempCase(unittest.TestCase):
    """A test case with a private temporary folder, self.dir, removed after each test."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()
