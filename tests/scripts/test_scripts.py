#!/usr/bin/env python3
"""Tests of scripts/compare.py, scripts/plot.py and scripts/profile.sh on synthetic CSVs.

Runs the scripts as a user would (subprocess), checking exit codes and output. Exit 77 (CTest
skip) when numpy/scipy/matplotlib are missing.
"""
import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy  # noqa: F401
    import scipy  # noqa: F401
    import matplotlib  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e.name} is not installed (python3 -m pip install numpy scipy matplotlib)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402
from synth import compare, row, suite, write_csv  # noqa: E402
import plot  # noqa: E402  (scripts/ is on sys.path through synth)

PY = sys.executable
COMPARE = os.path.join(synth.SCRIPTS, "compare.py")
PLOT = os.path.join(synth.SCRIPTS, "plot.py")
EXPORT = os.path.join(synth.SCRIPTS, "export.py")
SIDE = os.path.join(synth.SCRIPTS, "side_by_side.py")
PROFILE = os.path.join(synth.SCRIPTS, "profile.sh")
SLOW_KEY = synth.case_key(batch=64, draft=4)


def run(*args, env=None):
    p = subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def decision_of(stdout, case):
    """The decision printed on the text-table line of case (exact case match)."""
    for line in stdout.splitlines():
        cells = line.split()
        if cells and cells[0] == case:
            return cells[-1]
    raise AssertionError(f"case {case} not in output:\n{stdout}")


def method_of(stdout, case):
    for line in stdout.splitlines():
        cells = line.split()
        if cells and cells[0] == case:
            return cells[-3]
    raise AssertionError(f"case {case} not in output:\n{stdout}")


def scaled(rows, case, factor):
    """Copy of rows with the time columns of `case` multiplied by factor."""
    out = []
    for r in rows:
        r = dict(r)
        if r["case"] == case:
            for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
                r[c] = repr(float(r[c]) * factor)
        out.append(r)
    return out


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def csv(self, name, rows, columns=None):
        return write_csv(os.path.join(self.dir, name), rows, columns)

    def compare(self, before_rows, after_rows, *opts):
        return run(PY, COMPARE, self.csv("before.csv", before_rows),
                   self.csv("after.csv", after_rows), *opts)

    def assert_one_line_error(self, rc, out, err, *needles):
        self.assertEqual(rc, 2, f"stdout:\n{out}\nstderr:\n{err}")
        self.assertEqual(len(err.strip().splitlines()), 1, f"not one line:\n{err}")
        self.assertNotIn("Traceback", err)
        for n in needles:
            self.assertIn(n, err)


class CompareDecisions(Base):
    def test_identical_inputs_all_same(self):
        rows = suite()
        rc, out, err = self.compare(rows, rows)
        self.assertEqual(rc, 0, out + err)
        for r in rows:
            self.assertEqual(decision_of(out, r["case"]), "SAME")
        self.assertIn("10 SAME", out)
        self.assertIn("geomean after/before: 1.0000 (+0.00%) over 10 cases", out)
        self.assertNotIn("stream hold differs", out)

    def test_held_change_is_noted(self):
        # BEFORE without the held column (older files: unheld), AFTER held: compared, with a note
        rows = suite()
        held = [dict(r, held="1") for r in rows]
        before = self.csv("before.csv", rows)
        after = self.csv("after.csv", held, synth.COLUMNS + ["held"])
        rc, out, err = run(PY, COMPARE, before, after)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("10 SAME", out)
        self.assertIn("note: the stream hold differs (held 0 before, 1 after)", out)
        # the same setting on both sides: no note
        rc, out, err = run(PY, COMPARE, after, after)
        self.assertNotIn("stream hold differs", out)

    def test_one_case_20pct_slower_is_slower_exit_1(self):
        before = suite()
        rc, out, err = self.compare(before, scaled(before, SLOW_KEY, 1.2))
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertIn("+20.00%", out)
        self.assertIn("1 SLOWER, 0 FASTER, 9 SAME, 0 UNSURE", out)
        other = synth.case_key(batch=8, draft=4)
        self.assertEqual(decision_of(out, other), "SAME")

    def test_one_case_faster_is_faster_exit_0(self):
        before = suite()
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 0.8))
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "FASTER")

    def test_noisy_overlap_with_big_change_is_noisy(self):
        # +10 % on a case whose samples spread +-30 %: its own noise explains it
        before = suite(spread=0.3)
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 1.1))
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "NOISY")

    def test_separated_change_below_threshold_is_same(self):
        before = suite(spread=0.001)
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 1.03))
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "SAME")
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 1.03), "--threshold", "2")
        self.assertEqual(rc, 1, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")


class CompareRepetitions(Base):
    def test_clear_shift_utest_slower(self):
        before = suite(reps=5, jitter=0.004)
        after = scaled(before, SLOW_KEY, 1.15)
        rc, out, _ = self.compare(before, after)
        self.assertEqual(rc, 1, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertEqual(method_of(out, SLOW_KEY), "utest")

    def test_identical_distributions_utest_same(self):
        rows = suite(reps=5, jitter=0.004)
        rc, out, _ = self.compare(rows, rows)
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "SAME")
        self.assertEqual(method_of(out, SLOW_KEY), "utest")

    def test_interleaved_repetitions_big_median_change_noisy(self):
        # Repetition medians overlap (p ~ 0.3) although the median moves +10 %: the repetitions
        # wander +-15 %, so the change is within the case's noise.
        b_meds = [90.0, 95.0, 100.0, 110.0, 120.0]
        a_meds = [95.0, 100.0, 110.0, 120.0, 130.0]
        before = [row(median=m, rep=k) for k, m in enumerate(b_meds)]
        after = [row(median=m, rep=k) for k, m in enumerate(a_meds)]
        rc, out, _ = self.compare(before, after)
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "NOISY")
        self.assertEqual(method_of(out, SLOW_KEY), "utest")

    def test_significant_but_small_shift_is_same(self):
        before = suite(reps=5, jitter=0.001)
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 1.02))
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "SAME")

    def test_three_reps_cannot_reach_alpha_falls_back_to_intervals(self):
        self.assertAlmostEqual(compare.utest_min_p(3, 3), 0.1)
        self.assertLess(compare.utest_min_p(4, 4), 0.05)
        before = suite(reps=3, jitter=0.002)
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 1.2))
        self.assertEqual(rc, 1, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertEqual(method_of(out, SLOW_KEY), "interval")
        self.assertIn("too few repetitions for the U test", out)


def fork_rows(median=100.0, spread=0.10, scale=1.0, batch=8):
    """A pool/fork-like ok row: one per side, wide in-run spread."""
    return [row(batch=batch, draft=1, median=median * scale, spread=spread, family="pool",
                op="fork", mechanism="gdn", variant="fork_from")]


class CompareNoise(Base):
    """Issue 13: a verdict needs the change to exceed the threshold and the case's own noise."""
    NOISE_COLUMNS = synth.COLUMNS + ["noise_pct"]

    def test_planted_5pct_on_low_noise_case_is_slower(self):
        before = suite(spread=0.004, noise_pct=0.1)
        after = scaled(before, SLOW_KEY, 1.05)
        rc, out, err = run(PY, COMPARE, self.csv("b.csv", before, self.NOISE_COLUMNS),
                           self.csv("a.csv", after, self.NOISE_COLUMNS))
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertIn("1 SLOWER, 0 FASTER, 9 SAME, 0 UNSURE, 0 NOISY (threshold 4%", out)
        # the same rows without the noise_pct column (older files): noise derived, same verdict
        rc, out, _ = self.compare(before, after)
        self.assertEqual((rc, decision_of(out, SLOW_KEY)), (1, "SLOWER"), out)

    def test_noisy_fork_like_case_is_never_slower(self):
        # pool/fork-like: +-10 % in-run spread; +8 % and +25 % changes are within 3 x spread
        for scale in (1.08, 1.25, 0.8):
            rc, out, _ = self.compare(fork_rows(), fork_rows(scale=scale))
            key = fork_rows()[0]["case"]
            self.assertEqual((rc, decision_of(out, key)), (0, "NOISY"), out)
        # a quiet fork (1 % spread) that moves 55 % (the H200 processes moved one 47 % at 5 %
        # spread) is still within the op's run-to-run floor, a 70 % move is not
        for scale, want in ((1.55, (0, "NOISY")), (1.7, (1, "SLOWER"))):
            rc, out, _ = self.compare(fork_rows(spread=0.01), fork_rows(spread=0.01, scale=scale))
            self.assertEqual((rc, decision_of(out, key)), want, out)
        self.assertIn("op floors: pool/alloc 7%, pool/fork 60%, pool/free 9%;", out)
        # ... unless the floor is lifted
        rc, out, _ = self.compare(fork_rows(spread=0.01), fork_rows(spread=0.01, scale=1.15),
                                  "--noise-floor", "pool/fork=0")
        self.assertEqual((rc, decision_of(out, key)), (1, "SLOWER"), out)
        self.assertIn("pool/fork 0%", out)

    def test_one_file_has_no_scatter_floor(self):
        # a variant that moves every case differently (+30 %, -20 %, ...) within ONE run: each
        # change is called, not drowned by the scatter of the changes themselves; the same rows
        # as two files keep the scatter floor (a busy machine could have moved them)
        before = suite(spread=0.002, noise_pct=0.1)
        factors = [1.3, 0.8, 1.25, 0.75, 1.2, 0.85, 1.35, 0.7, 1.15, 0.85]
        after = [dict(r) for r in before]
        for r, f in zip(after, factors):
            for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
                r[c] = float(r[c]) * f
            r["variant"] = "other"
        cols = self.NOISE_COLUMNS
        rc, out, _ = run(PY, COMPARE, self.csv("one.csv", before + after, cols), "--variants", "fused:other")
        self.assertIn("5 SLOWER, 5 FASTER", out)
        self.assertIn("run scatter 0.00%", out)
        rc, out, _ = run(PY, COMPARE, self.csv("b.csv", before, cols), self.csv("a.csv", after, cols),
                         "--variants", "fused:other")
        self.assertRegex(out, r"0 SLOWER, 0 FASTER, [0-9]+ SAME, 0 UNSURE, [0-9]+ NOISY")

    def test_latency_floor(self):
        # a 2.5 us case with tight samples moving 8 % between processes (gdn decode B = 1 moved
        # 8.2 % in an H200 A/A) is NOISY under the default latency floor, FASTER without it;
        # a 50 us case moving as much is still called
        for median, want, extra in ((2.5, "NOISY", ()), (2.5, "FASTER", ("--latency-floor", "0=0")),
                                    (50.0, "FASTER", ()), (2.5, "NOISY", ("--latency-floor", "3=9"))):
            before = [row(median=median, spread=0.002, noise_pct=0.07)]
            after = [row(median=median * 0.92, spread=0.002, noise_pct=0.07)]
            cols = self.NOISE_COLUMNS
            rc, out, _ = run(PY, COMPARE, self.csv("b.csv", before, cols), self.csv("a.csv", after, cols),
                             *extra)
            self.assertEqual((rc, decision_of(out, SLOW_KEY)), (0, want), (median, extra, out))
        self.assertIn("latency floor 9% under 3 us", out)
        rc, _, err = run(PY, COMPARE, self.csv("b.csv", before, cols), "--latency-floor", "6")
        self.assertEqual(rc, 2, err)
        self.assertIn("US=PERCENT", err)

    def test_noise_pct_column_sets_the_bound(self):
        # tight samples, but the harness says each median is only known to +-6 %: +7 % is NOISY
        before = [row(median=100.0, spread=0.002, noise_pct=6.0)]
        after = [row(median=107.0, spread=0.002, noise_pct=6.0)]
        cols = self.NOISE_COLUMNS
        rc, out, _ = run(PY, COMPARE, self.csv("b.csv", before, cols), self.csv("a.csv", after, cols))
        self.assertEqual((rc, decision_of(out, SLOW_KEY)), (0, "NOISY"), out)
        self.assertRegex(out, r"\+7\.00%\s+8\.49%")      # hypot(6, 6)
        # an empty noise_pct cell (an older row) falls back to p10/p90/samples
        before = [row(median=100.0, spread=0.002, noise_pct="")]
        after = [row(median=107.0, spread=0.002, noise_pct="")]
        rc, out, _ = run(PY, COMPARE, self.csv("b.csv", before, cols), self.csv("a.csv", after, cols))
        self.assertEqual((rc, decision_of(out, SLOW_KEY)), (1, "SLOWER"), out)
        r = compare.parse_row("x", 2, dict(before[0]))
        self.assertAlmostEqual(compare.row_noise_pct(r),
                               100 * 1.96 * 1.2533 * (0.4 / 2.5631) / (200 ** 0.5) / 100.0, places=9)

    def test_a_scattered_run_flags_nothing(self):
        # every case moved a different way by up to 25 % (a loaded machine): the run's scatter
        # is the floor, so nothing stands out; a uniform shift of every case is not scatter
        before = suite(spread=0.002)
        factors = [1.25, 0.8, 1.1, 0.9, 1.2, 0.85, 1.05, 0.95, 1.15, 0.75]
        after = [dict(r) for r in before]
        for r, f in zip(after, factors):
            for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
                r[c] = repr(float(r[c]) * f)
        rc, out, _ = self.compare(before, after)
        self.assertEqual(rc, 0, out)
        self.assertIn("0 SLOWER, 0 FASTER", out)
        self.assertRegex(out, r"run scatter [1-9][0-9]\.[0-9]{2}%")
        rc, out, _ = self.compare(before, [dict(r) for r in scaled_all(before, 1.15)])
        self.assertEqual(rc, 1, out)
        self.assertIn("10 SLOWER", out)  # the cases under 12 us too: beyond the latency floor
        self.assertIn("run scatter 0.00%", out)

    def test_committed_h200_aa_is_quiet(self):
        """Two default sweeps of one build on one H200 (100 of their cases, pool/fork among
        them: tests/fixtures/real-runs/): the old rule (threshold 5 %, p10/p90 separation) said 6 SLOWER
        and 9 FASTER, all pool/fork; this one says none."""
        d = os.path.join(synth.ROOT, "tests", "fixtures", "real-runs")
        a, b = (os.path.join(d, f) for f in ("h200-aa1-45c3dc9.csv", "h200-aa2-45c3dc9.csv"))
        rc, out, err = run(PY, COMPARE, a, b)
        self.assertEqual(rc, 0, out[-3000:] + err)
        self.assertRegex(out, r"\n0 SLOWER, 0 FASTER, [0-9]+ SAME, 0 UNSURE, [0-9]+ NOISY")
        # ... and a planted +5 % on the steadiest gdn case of the second sweep is caught
        key = "gdn/decode/qwen3-next-80b-a3b/tp2/B:512/T:1/fp32"
        rows = [r for r in synth.csv.DictReader(open(b, newline=""))]
        for r in rows:
            if r["case"] == key:
                for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
                    r[c] = repr(float(r[c]) * 1.05)
        planted = self.csv("planted.csv", rows, list(rows[0].keys()))
        rc, out, err = run(PY, COMPARE, a, planted)
        self.assertEqual(rc, 1, out[-3000:] + err)
        self.assertEqual(decision_of(out, key), "SLOWER")
        self.assertRegex(out, r"\n1 SLOWER, 0 FASTER, ")

    def test_noise_floor_option_errors(self):
        before = self.csv("b.csv", suite())
        for bad in ("pool/fork", "=3", "pool/fork=-1", "pool/fork=x"):
            rc, out, err = run(PY, COMPARE, before, before, "--noise-floor", bad)
            self.assertEqual(rc, 2, err)
            self.assertIn("--noise-floor", err)


def scaled_all(rows, factor):
    out = []
    for r in rows:
        r = dict(r)
        for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
            r[c] = repr(float(r[c]) * factor)
        out.append(r)
    return out


class CompareBadInput(Base):
    def test_missing_column(self):
        cols = [c for c in synth.COLUMNS if c != "time_us_p90"]
        path = self.csv("after.csv", suite(), cols)
        rc, out, err = run(PY, COMPARE, self.csv("before.csv", suite()), path)
        self.assert_one_line_error(rc, out, err, "after.csv", "missing columns: time_us_p90")

    def test_no_schema_version_column(self):
        cols = [c for c in synth.COLUMNS if c != "schema_version"]
        path = self.csv("before.csv", suite(), cols)
        rc, out, err = run(PY, COMPARE, path, self.csv("after.csv", suite()))
        self.assert_one_line_error(rc, out, err, "before.csv", "schema_version")

    def test_wrong_schema_version(self):
        rc, out, err = self.compare(suite(), suite(schema_version="3"))
        self.assert_one_line_error(rc, out, err, "after.csv:2", "schema_version is '3'")

    def test_v2_rows_need_the_v2_columns(self):
        # schema_version 2 in a file whose header stops at the v1 columns
        rc, out, err = self.compare(suite(), suite(schema_version="2"))
        self.assert_one_line_error(rc, out, err, "after.csv:2", "schema_version 2",
                                   "impl, impl_version, tuning, kernel")

    def test_non_numeric_time(self):
        rows = suite()
        rows[3]["time_us_median"] = "fast"
        rc, out, err = self.compare(suite(), rows)
        self.assert_one_line_error(rc, out, err, "after.csv:5", "time_us_median", "'fast'")

    def test_nan_time_in_ok_row_never_passes(self):
        rows = suite()
        rows[0]["time_us_median"] = "nan"
        rc, out, err = self.compare(rows, suite())
        self.assert_one_line_error(rc, out, err, "before.csv:2", "time_us_median")

    def test_empty_real_cells_are_nan_and_accepted_outside_times(self):
        # The harness writes NaN/inf reals as empty cells (harness/csv.c).
        rows = suite(max_rel_err="", pct_of_copy_peak="", git_dirty="", numa_node="")
        rows[1]["gbps"] = ""
        rc, out, err = self.compare(rows, rows)
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run(PY, PLOT, self.csv("run.csv", rows), "--out", self.dir)
        self.assertEqual(rc, 0, out + err)
        rows[2]["time_us_p10"] = ""
        rc, out, err = self.compare(suite(), rows)
        self.assert_one_line_error(rc, out, err, "after.csv:4", "time_us_p10")

    def test_missing_file(self):
        rc, out, err = run(PY, COMPARE, os.path.join(self.dir, "nope.csv"),
                           self.csv("after.csv", suite()))
        self.assert_one_line_error(rc, out, err, "nope.csv", "cannot open")

    def test_header_only(self):
        rc, out, err = self.compare([], suite())
        self.assert_one_line_error(rc, out, err, "before.csv", "no data rows")

    def test_gzip_input_reads_as_the_plain_file(self):
        # results/ keeps its large CSVs gzipped: every script reads NAME.csv.gz as NAME.csv
        plain = self.csv("after.csv", suite())
        with open(plain, "rb") as f, gzip.open(os.path.join(self.dir, "after.csv.gz"), "wb") as g:
            g.write(f.read())
        before = self.csv("before.csv", suite())
        rc, out, err = run(PY, COMPARE, before, plain)
        rc_gz, out_gz, err_gz = run(PY, COMPARE, before, os.path.join(self.dir, "after.csv.gz"))
        self.assertEqual((rc, rc_gz), (0, 0), err + err_gz)
        self.assertEqual(out_gz.replace("after.csv.gz", "after.csv"), out)
        torn = os.path.join(self.dir, "torn.csv.gz")
        with open(os.path.join(self.dir, "after.csv.gz"), "rb") as f, open(torn, "wb") as g:
            g.write(f.read()[:-12])  # the gzip trailer cut: a copy that stopped short
        rc, out, err = run(PY, COMPARE, before, torn)
        self.assert_one_line_error(rc, out, err, "torn.csv.gz", "not a whole gzip file")


class CompareJoin(Base):
    def test_different_gpus_refused_unless_ignore_device(self):
        before = suite()
        after = suite(gpu_name="NVIDIA H100 80GB HBM3")
        rc, out, err = self.compare(before, after)
        self.assert_one_line_error(rc, out, err, "NVIDIA H200", "NVIDIA H100 80GB HBM3",
                                   "--ignore-device")
        rc, out, err = self.compare(before, after, "--ignore-device")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SAME")

    def test_device_index_is_part_of_the_key(self):
        # no key in common: the lists are printed, and nothing compared is exit 2
        rc, out, err = self.compare(suite(), suite(device_index=1))
        self.assert_one_line_error(rc, out, err, "nothing compared")
        self.assertIn("only in BEFORE (10)", out)
        self.assertIn("only in AFTER (10)", out)
        rc, out, _ = self.compare(suite(), suite(device_index=1), "--ignore-device")
        self.assertEqual(decision_of(out, SLOW_KEY), "SAME")

    def test_one_sided_cases_listed_not_failed(self):
        extra_before = row(batch=512, draft=4, median=200.0)
        extra_after = row(batch=1024, draft=4, median=400.0)
        rc, out, _ = self.compare(suite() + [extra_before], suite() + [extra_after])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"only in BEFORE \(1\).*\n\s+" + re.escape(extra_before["case"]))
        self.assertRegex(out, r"only in AFTER \(1\).*\n\s+" + re.escape(extra_after["case"]))

    def test_status_not_ok_listed_separately(self):
        after = suite()
        for r in after:
            if r["case"] == SLOW_KEY:
                r.update(status="skipped:oom", time_us_median="", time_us_p10="",
                         time_us_p90="", gbps="")
        rc, out, _ = self.compare(suite(), after)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"{SLOW_KEY} variant=fused impl=linstate cache=rotate dev=0: before=ok "
                      f"after=skipped:oom", out)
        self.assertIn("9 SAME", out)

    def test_variants_are_separate_keys_and_can_be_paired(self):
        fused = suite()
        per_tensor = [dict(r, variant="per-tensor") for r in scaled(fused, SLOW_KEY, 1.5)]
        rows = fused + per_tensor
        rc, out, _ = self.compare(rows, rows)
        self.assertEqual(rc, 0, out)
        self.assertIn("20 SAME", out)
        rc, out, _ = self.compare(rows, rows, "--variants", "per-tensor:fused")
        self.assertEqual(rc, 0, out)
        self.assertEqual(decision_of(out, SLOW_KEY), "FASTER")
        rc, out, err = self.compare(rows, rows, "--variants", "fused")
        self.assertEqual(rc, 2, err)

    def test_all_joined_keys_not_ok_is_nothing_compared(self):
        skipped = [dict(r, status="skipped:oom", time_us_median="", time_us_p10="",
                        time_us_p90="") for r in suite()]
        rc, out, err = self.compare(suite(), skipped)
        self.assert_one_line_error(rc, out, err, "nothing compared", "status=ok")
        self.assertIn("status not ok (10)", out)


MAMBA_KEY = synth.case_key("mamba2_ssu", "decode", batch=64, draft=1)
TUNE_ON, TUNE_OFF = synth.linstate_tuning("on"), synth.linstate_tuning("off")


def impl_rows():
    """(sglang, linstate pdl=on, linstate pdl=off) schema-v2 rows of the same 10 cases.
    Against sglang, linstate pdl=on is x0.8 on SLOW_KEY and x1.3 on MAMBA_KEY; pdl=off is
    x1.5 on SLOW_KEY and x1.0 elsewhere."""
    base = suite()
    sglang = synth.v2(base, impl="sglang", impl_version="0.5.5", kernel="sglang.triton")
    on = synth.v2(scaled(scaled(base, SLOW_KEY, 0.8), MAMBA_KEY, 1.3), tuning=TUNE_ON)
    off = synth.v2(scaled(base, SLOW_KEY, 1.5), tuning=TUNE_OFF)
    return sglang, on, off


def per_op_line(out, op):
    """Cells of the per-op summary line of op."""
    for line in out.splitlines():
        cells = line.split()
        if line.startswith("  ") and cells and cells[0] == op:
            return cells
    raise AssertionError(f"no per-op line for {op}:\n{out}")


class CompareImplsTunings(Base):
    """Schema v2: impl and tuning in the key, --impls, --tunings, --tuning-old/-new."""

    def v2csv(self, name, *parts):
        return self.csv(name, [r for p in parts for r in p], synth.V2_COLUMNS)

    def test_v2_default_key_keeps_impls_and_tunings_apart(self):
        path = self.v2csv("run.csv", *impl_rows())
        rc, out, err = run(PY, COMPARE, path, path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("30 SAME", out)       # 10 cases x (sglang, pdl=on, pdl=off), never merged
        # the tuning column shows the knobs that differ; the shared ones are printed once
        self.assertIn(f"tuning: {synth.LINSTATE_KNOBS} in every tuned key", out)
        keys = [l.split()[:4] for l in out.splitlines() if l.startswith(SLOW_KEY + " ")]
        self.assertEqual(keys, [[SLOW_KEY, "fused", "sglang", "-"],
                                [SLOW_KEY, "fused", "linstate", "pdl=on"],
                                [SLOW_KEY, "fused", "linstate", "pdl=off"]])

    def test_state_layout_joins(self):
        """A gdn/kda case on both state layouts is two keys; --impls joins each impl's own
        layout (sglang on vk against linstate on kv)."""
        cols = synth.V2_COLUMNS + ["state_layout"]
        base = suite()
        kv = [dict(r, state_layout="kv") for r in synth.v2(base, impl="host", tuning="")]
        vk = [dict(r, state_layout="vk") for r in synth.v2(base, impl="host", tuning="", scale=1.3)]
        path = self.csv("layouts.csv", kv + vk, cols)
        rc, out, err = run(PY, COMPARE, path, path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("20 SAME", out)
        self.assertIn(SLOW_KEY + "/layout:vk", out)
        sglang, on, _ = impl_rows()
        path = self.csv("side.csv", [dict(r, state_layout="vk") for r in sglang] +
                        [dict(r, state_layout="kv") for r in on], cols)
        rc, out, err = run(PY, COMPARE, path, "--impls", "sglang:linstate")
        self.assert_impls_verdicts(rc, out, err, new="linstate")

    def assert_impls_verdicts(self, rc, out, err, new="linstate [pdl=on]"):
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "FASTER")
        self.assertEqual(decision_of(out, MAMBA_KEY), "SLOWER")
        self.assertIn("1 SLOWER, 1 FASTER, 8 SAME, 0 UNSURE", out)
        self.assertIn(f"sides:  sglang -> {new} (tuning: '' -> {TUNE_ON})", out)
        # per op: geomean of the linstate/sglang ratios, and the decisions of the op
        self.assertEqual(per_op_line(out, "gdn/verify"),
                         ["gdn/verify", "8", "0.9725", "(-2.75%)", "0", "1", "7", "0", "0"])
        self.assertEqual(per_op_line(out, "mamba2_ssu/decode"),
                         ["mamba2_ssu/decode", "2", "1.1402", "(+14.02%)", "1", "0", "1", "0", "0"])

    def test_impls_one_file_and_two_files(self):
        sglang, on, off = impl_rows()
        both = self.v2csv("both.csv", sglang, on, off)
        rc, out, err = run(PY, COMPARE, both, "--impls", "sglang:linstate", "--tuning-new",
                           "pdl=on")
        self.assert_impls_verdicts(rc, out, err)
        rc, out, err = run(PY, COMPARE, self.v2csv("sglang.csv", sglang),
                           self.v2csv("linstate.csv", on, off), "--impls", "sglang:linstate",
                           "--tuning-new", "pdl=on")
        self.assert_impls_verdicts(rc, out, err)
        # the other way round, pdl=off picked on the OLD side
        rc, out, err = run(PY, COMPARE, both, both, "--impls", "linstate:sglang",
                           "--tuning-old", "pdl=off")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "FASTER")     # 1.5 -> 1.0
        self.assertIn("sides:  linstate [pdl=off] -> sglang", out)

    def test_impls_with_several_tunings_is_ambiguous(self):
        sglang, on, off = impl_rows()
        path = self.v2csv("run.csv", sglang, on, off)
        rc, out, err = run(PY, COMPARE, path, "--impls", "sglang:linstate")
        self.assert_one_line_error(rc, out, err, "ambiguous", sglang[0]["case"], "2 tunings",
                                   "--tuning-new")
        self.assertEqual(out, "")
        # one tuning per side: no choice needed
        path = self.v2csv("one.csv", sglang, on)
        rc, out, err = run(PY, COMPARE, path, "--impls", "sglang:linstate")
        self.assert_impls_verdicts(rc, out, err, new="linstate")

    def test_knob_added_between_builds_leaves_the_key(self):
        """A build that added a knob joins a build that lacked it: the one-sided knob leaves
        the key (with a note); two points of it on one side are ambiguous."""
        sglang, on, off = impl_rows()
        old = self.v2csv("old.csv", sglang, on)
        grid = [dict(r, tuning=r["tuning"] + ",state.grid=auto") for r in on]
        rc, out, err = run(PY, COMPARE, old, self.v2csv("new.csv", sglang, grid))
        self.assertEqual(rc, 0, out + err)
        self.assertIn("20 SAME", out)                  # 10 sglang + 10 linstate, none one-sided
        self.assertIn("note: impl linstate: knob state.grid on one side only", out)
        slow = [dict(r, tuning=r["tuning"] + ",state.grid=auto") for r in scaled(on, SLOW_KEY, 2.0)]
        rc, out, err = run(PY, COMPARE, old, self.v2csv("slow.csv", slow))
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        # the new build ran two points of the new knob: which one joins the old rows is a choice
        full = [dict(r, tuning=r["tuning"] + ",state.grid=full") for r in on]
        both = self.v2csv("both.csv", grid, full)
        rc, out, err = run(PY, COMPARE, old, both)
        self.assert_one_line_error(rc, out, err, "ambiguous", "--tuning-new")
        rc, out, err = run(PY, COMPARE, old, both, "--tuning-new", "state.grid=full")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("10 SAME", out)
        # the same knob on both sides stays in the key: auto and full do not join
        rc, out, err = run(PY, COMPARE, self.v2csv("g.csv", grid), self.v2csv("f.csv", full))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("nothing compared: no key on both sides", err)
        self.assertNotIn("one side only", out)

    def test_tunings_partial_and_full_match(self):
        path = self.v2csv("run.csv", *impl_rows())
        for opts in (["--tunings", "pdl=on:pdl=off"],
                     ["--tunings", f"{TUNE_ON}:{TUNE_OFF}"],
                     ["--tunings", "conv.variant=auto,pdl=on:pdl=off,ssu.variant=auto"],
                     ["--tuning-old", "pdl=on", "--tuning-new", "pdl=off"]):
            rc, out, err = run(PY, COMPARE, path, *opts)
            self.assertEqual(rc, 1, f"{opts}\n{out}{err}")
            self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER", opts)   # 0.8 -> 1.5
            self.assertIn("+87.50%", out)
            self.assertEqual(decision_of(out, MAMBA_KEY), "FASTER", opts)  # 1.3 -> 1.0
            self.assertIn("1 SLOWER, 1 FASTER, 8 SAME", out)               # sglang not picked
            self.assertIn("impl", out)
            self.assertNotIn(" sglang ", out)

    def test_tuning_selector_errors(self):
        path = self.v2csv("run.csv", *impl_rows())
        # matches both linstate tunings
        rc, out, err = run(PY, COMPARE, path, "--tunings", "conv.variant=auto:pdl=off")
        self.assert_one_line_error(rc, out, err, "ambiguous", "--tuning-old")
        # matches nothing: items are whole knob=value, never prefixes
        for spec in ("pdl=maybe:pdl=off", "pdl=o:pdl=off"):
            rc, out, err = run(PY, COMPARE, path, "--tunings", spec)
            self.assert_one_line_error(rc, out, err, "--tuning-old", "no rows of that tuning")
        # not knob=value
        rc, out, err = run(PY, COMPARE, path, "--tunings", "on:off")
        self.assertEqual(rc, 2, err)
        self.assertIn("not knob=value", err)
        # --tunings and --tuning-new pick the same thing
        rc, out, err = run(PY, COMPARE, path, "--tunings", "pdl=on:pdl=off", "--tuning-new",
                           "pdl=on")
        self.assert_one_line_error(rc, out, err, "--tunings", "--tuning-new")
        # one file needs a selector
        rc, out, err = run(PY, COMPARE, path)
        self.assert_one_line_error(rc, out, err, "one file given")

    def test_nothing_compared_is_exit_2(self):
        sglang, on, off = impl_rows()
        path = self.v2csv("run.csv", sglang, on, off)
        rc, out, err = run(PY, COMPARE, path, path, "--impls", "nosuch:linstate")
        self.assert_one_line_error(rc, out, err, "--impls", "'nosuch'", "linstate, sglang")
        rc, out, err = run(PY, COMPARE, path, path, "--impls", "sglang:x")
        self.assert_one_line_error(rc, out, err, "AFTER", "'x'")
        rc, out, err = run(PY, COMPARE, path, path, "--variants", "nosuch:fused")
        self.assert_one_line_error(rc, out, err, "--variants", "'nosuch'", "fused")
        # selectors that pick rows, but no key in common
        renamed = [dict(r, case="x/" + r["case"]) for r in sglang]
        rc, out, err = run(PY, COMPARE, self.v2csv("s.csv", renamed), self.v2csv("on.csv", on),
                           "--impls", "sglang:linstate")
        self.assert_one_line_error(rc, out, err, "nothing compared", "10 only in BEFORE",
                                   "10 only in AFTER")

    def test_impls_combine_with_variants(self):
        sglang, on, _ = impl_rows()
        per_tensor = [dict(r, variant="per-tensor") for r in synth.v2(
            scaled(suite(), SLOW_KEY, 2.0), tuning=TUNE_ON)]
        path = self.v2csv("run.csv", sglang, on, per_tensor)
        # variant stays in the key: per-tensor has no sglang counterpart
        rc, out, err = run(PY, COMPARE, path, "--impls", "sglang:linstate")
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "FASTER")
        self.assertIn("only in AFTER (10)", out)
        # both selectors: sglang fused against linstate per-tensor
        rc, out, err = run(PY, COMPARE, path, "--impls", "sglang:linstate", "--variants",
                           "fused:per-tensor")
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertIn("1 SLOWER, 0 FASTER, 9 SAME", out)
        self.assertIn("sides:  sglang variant=fused -> linstate variant=per-tensor", out)

    def test_v1_still_read_and_joins_v2(self):
        v1 = suite()
        # v1 against v1: as before, impl linstate inferred from backend cuda
        rc, out, err = self.compare(v1, scaled(v1, SLOW_KEY, 1.2))
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertEqual(
            [l.split()[:4] for l in out.splitlines() if l.startswith(SLOW_KEY + " ")],
            [[SLOW_KEY, "fused", "linstate", "-"]])
        # v1 against v2 linstate (one tuning): default join; tuning is not part of the key
        v1csv = self.csv("v1.csv", v1)
        _, on, off = impl_rows()
        rc, out, err = run(PY, COMPARE, v1csv, self.v2csv("v2.csv", synth.v2(v1)))
        self.assertEqual(rc, 0, out + err)
        self.assertIn("10 SAME", out)
        self.assertIn("is schema v1", out)
        # several tunings on the v2 side: ambiguous until one is picked
        v2csv = self.v2csv("v2two.csv", on, off)
        rc, out, err = run(PY, COMPARE, v1csv, v2csv)
        self.assert_one_line_error(rc, out, err, "ambiguous", "--tuning-new")
        rc, out, err = run(PY, COMPARE, v1csv, v2csv, "--tuning-new", "pdl=off")
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "SLOWER")
        self.assertIn("9 SAME", out)
        # host: v1 backend host is impl host, which has no knobs in v2 either
        host = suite(backend="host", gpu_name="host")
        rc, out, err = run(PY, COMPARE, self.csv("h1.csv", host),
                           self.v2csv("h2.csv", synth.v2(scaled(host, SLOW_KEY, 0.5),
                                                         impl="host")))
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(decision_of(out, SLOW_KEY), "FASTER")
        self.assertIn("9 SAME", out)
        # v1 cuda rows are impl linstate: --impls finds them
        rc, out, err = run(PY, COMPARE, v1csv, self.v2csv("s.csv", impl_rows()[0]),
                           "--impls", "linstate:sglang")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("10 SAME", out)

    def test_md_names_sides_and_has_per_op_table(self):
        path = self.v2csv("run.csv", *impl_rows())
        rc, out, err = run(PY, COMPARE, path, "--impls", "sglang:linstate", "--tuning-new",
                           "pdl=on", "--format", "md")
        self.assertEqual(rc, 1, out + err)
        self.assertIn("**sides:** sglang -> linstate [pdl=on]", out)
        self.assertIn("| op | cases | geomean after/before | SLOWER | FASTER | SAME | UNSURE |",
                      out)
        self.assertIn("| gdn/verify | 8 | 0.9725 (-2.75%) | 0 | 1 | 7 | 0 | 0 |", out)
        self.assertIn("**SLOWER**", out)

    def test_plot_compare_takes_the_same_selectors(self):
        path = self.v2csv("run.csv", *impl_rows())
        rc, out, err = run(PY, PLOT, "--compare", path, path, "--impls", "sglang:linstate",
                           "--tuning-new", "pdl=on", "--out", self.dir)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(is_png(os.path.join(self.dir, "compare-run-vs-run.png")))
        rc, out, err = run(PY, PLOT, "--compare", path, path, "--impls", "sglang:linstate",
                           "--out", self.dir)
        self.assert_one_line_error(rc, out, err, "ambiguous")


PTX_SAME = os.path.join(synth.SCRIPTS, "ptx_same.py")


def ptx_entry(name, index, body="add.f32 %f1, %f2, %f3;"):
    """A kernel entry as nvcc writes it: labels numbered by the entry's place in the file."""
    return (f".visible .entry {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n"
            f"\t@%p1 bra \t$L__BB{index}_2;\n\t{body}\n$L__BB{index}_2:\n\tret;\n\n}}\n")


class PtxSame(Base):
    def ptx(self, name, *entries):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("//\n.version 8.8\n.target sm_90\n\n" + "".join(entries))
        return path

    def test_same_code_at_other_places_in_the_file(self):
        old = self.ptx("old.ptx", ptx_entry("_Z1kv", 0))
        new = self.ptx("new.ptx", ptx_entry("_Z5addedv", 0, "mul.f32 %f1, %f2, %f3;"), ptx_entry("_Z1kv", 1))
        rc, out, err = run(PY, PTX_SAME, old, new, "--select", "_Z1kv")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("same            _Z1kv", out)
        self.assertIn("1 entries: 1 same, 0 differ, 0 missing in OLD", out)

    def test_a_changed_body_differs_and_a_new_entry_is_missing(self):
        old = self.ptx("old.ptx", ptx_entry("_Z1kv", 0))
        new = self.ptx("new.ptx", ptx_entry("_Z1kv", 0, "sub.f32 %f1, %f2, %f3;"), ptx_entry("_Z1jv", 1))
        rc, out, err = run(PY, PTX_SAME, old, new)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("differs         _Z1kv", out)
        self.assertIn("missing in OLD  _Z1jv", out)

    def test_map_names_a_new_instance_after_an_old_one(self):
        old = self.ptx("old.ptx", ptx_entry("_Z1kILb1EEvv", 0))
        new = self.ptx("new.ptx", ptx_entry("_Z1kILb1ELb0EEvv", 0), ptx_entry("_Z1kILb1ELb1EEvv", 1, "nop;"))
        rc, out, err = run(PY, PTX_SAME, old, new, "--select", r"Lb0EEvv$", "--map", r"ELb0EEvv$", "EEvv")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("(OLD _Z1kILb1EEvv)", out)
        rc, out, err = run(PY, PTX_SAME, old, new, "--map", r"ELb[01]EEvv$", "EEvv")
        self.assertEqual(rc, 1, out + err)  # the Lb1 instance is other code
        self.assertIn("differs         _Z1kILb1ELb1EEvv", out)

    def test_bad_input_is_one_line(self):
        good = self.ptx("good.ptx", ptx_entry("_Z1kv", 0))
        text = os.path.join(self.dir, "notes.txt")
        with open(text, "w") as f:
            f.write("no kernels here\n")
        cases = [((text, good), "no .entry"), ((os.path.join(self.dir, "gone.ptx"), good), "gone.ptx"),
                 ((good, good, "--select", "nomatch"), "nomatch"), ((good, good, "--select", "("), "--select"),
                 ((good, good, "--map", "(", "x"), "--map")]
        for args, needle in cases:
            with self.subTest(args=args):
                self.assert_one_line_error(*run(PY, PTX_SAME, *args), needle)


class CompareMarkdown(Base):
    def test_md_is_a_table(self):
        before = suite()
        rc, out, _ = self.compare(before, scaled(before, SLOW_KEY, 1.2), "--format", "md")
        self.assertEqual(rc, 1, out)
        lines = out.splitlines()
        head = [i for i, l in enumerate(lines) if l.startswith("| case |")]
        self.assertEqual(len(head), 1, out)
        self.assertRegex(lines[head[0] + 1], r"^\|(---\|)+$")
        body = lines[head[0] + 2: head[0] + 12]
        self.assertTrue(all(l.startswith("| ") and l.endswith(" |") for l in body), out)
        ncols = lines[head[0]].count(" | ")
        self.assertTrue(all(l.count(" | ") == ncols for l in body), out)
        self.assertIn("**SLOWER**", out)


class RealCsvHook(Base):
    """test_real_csv.check, run here on synthetic files shaped like real runs."""

    def test_quiet_run_passes_and_noisy_run_is_reported(self):
        import test_real_csv
        quiet = self.csv("quiet.csv", suite(reps=5, jitter=0.01, spread=0.05))
        self.assertEqual(test_real_csv.check(quiet, self.dir), [])
        noisy = self.csv("noisy.csv", suite(spread=0.4))
        fails = test_real_csv.check(noisy, self.dir)
        self.assertEqual(len(fails), 1)
        self.assertIn("too noisy", fails[0])


def is_png(path):
    with open(path, "rb") as f:
        return os.path.getsize(path) > 1000 and f.read(8) == b"\x89PNG\r\n\x1a\n"


class Plot(Base):
    def test_family_charts(self):
        rows = suite(reps=2, jitter=0.01)
        path = self.csv("run.csv", rows)
        out_dir = os.path.join(self.dir, "plots")
        rc, out, err = run(PY, PLOT, path, "--out", out_dir)
        self.assertEqual(rc, 0, out + err)
        pngs = sorted(os.listdir(out_dir))
        self.assertEqual(pngs, ["run-gdn_verify_fp32.png",
                                "run-mamba2_mamba2_ssu_decode_fp32.png"])
        for p in pngs:
            self.assertTrue(is_png(os.path.join(out_dir, p)), p)

    def test_series_split_by_draft_and_varying_model(self):
        rows = suite() + [row(batch=b, draft=4, median=50.0, model="kimi-linear-48b-a3b")
                          for b in (1, 64)]
        gdn = [r for r in compare.load_csv(self.csv("r.csv", rows)).rows
               if r["mechanism"] == "gdn"]
        labels = sorted(plot.series_of(gdn))
        self.assertEqual(labels, ["T=1, model=qwen3-next-80b-a3b",
                                  "T=4, model=kimi-linear-48b-a3b",
                                  "T=4, model=qwen3-next-80b-a3b"])

    def test_compare_chart(self):
        before = suite()
        rc, out, err = run(PY, PLOT, "--compare", self.csv("b.csv", before),
                           self.csv("a.csv", scaled(before, SLOW_KEY, 1.2)), "--out", self.dir)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(is_png(os.path.join(self.dir, "compare-b-vs-a.png")))

    def test_compare_chart_of_a_full_sweep_is_readable(self):
        """540 cases in 5 families (issue 13: a 1343x17973 px image titled "AFTER vs BEFORE"):
        one panel per family, only the cases that changed drawn, at most ~2000 px a side, and a
        title naming BEFORE -> AFTER in that order."""
        fams = (("conv1d_update", "decode", "gdn"), ("gdn", "verify", "gdn"),
                ("kda", "verify", "kda"), ("mamba2_ssu", "decode", "mamba2"),
                ("pool", "copy", "gdn"))
        before = [row(b, t, 5.0 + b * t * 0.01, 0.01, k, mechanism=m, family=f, op=o,
                      model=f"model-{mi}")
                  for k in range(1) for f, o, m in fams for mi in range(4)
                  for b in (1, 2, 4, 8, 16, 32, 64, 128, 256) for t in (1, 2, 4)]
        self.assertEqual(len(before), 540)
        slow = before[0]["case"]
        b_csv, a_csv = self.csv("old-run.csv", before), self.csv("new-run.csv", scaled(before, slow, 1.3))
        cmp = compare.compare_runs(compare.load_csv(b_csv), compare.load_csv(a_csv), 5.0, 0.05)
        panels = plot.comparison_panels(cmp)
        self.assertEqual([p[0] for p in panels], [f for f, _, _ in fams])
        self.assertEqual(sum(len(p[1]) for p in panels), 1)          # only the changed case drawn
        self.assertEqual(panels[0][1][0].key[0], slow)
        rc, out, err = run(PY, PLOT, "--compare", b_csv, a_csv, "--out", self.dir)
        self.assertEqual(rc, 0, out + err)
        png = os.path.join(self.dir, "compare-old-run-vs-new-run.png")
        import matplotlib.image
        h, w = matplotlib.image.imread(png).shape[:2]
        self.assertLessEqual(max(h, w), 2200, (w, h))
        self.assertGreaterEqual(min(h, w), 400, (w, h))
        # the figure itself: 5 family panels, title old -> new
        figs = []
        plt = plot._pyplot()
        real_close = plt.close

        class Spy:
            def __getattr__(self, name):
                return getattr(plt, name)

            def close(self, fig):
                figs.append(fig)
                real_close(fig)
        plot.plot_comparison(Spy(), cmp, os.path.join(self.dir, "spy.png"))
        fig = figs[0]
        self.assertEqual(len([ax for ax in fig.axes if ax.axison]), 5)
        title = fig._suptitle.get_text()
        self.assertIn("old-run.csv -> new-run.csv", title)
        self.assertIn("1 SLOWER", title)

    def samples_csv(self, name, lines):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(",".join(plot.SAMPLES_COLUMNS) + "\n")
            f.writelines(l + "\n" for l in lines)
        return path

    def test_samples_distributions(self):
        lines = []
        for b in (1, 4):
            for rep in (0, 1):
                lines += [f'"gdn/decode/m/tp2/B:{b}/T:1/fp32","fused","linstate","pdl=on","kv",'
                          f'"rotate",0,0,{rep},{i},{10.0 * b + (i % 7) * 0.1}' for i in range(30)]
        lines += [f'"pool/fork/m/tp2/B:1/T:1/fp32","fork_from","linstate","","","rotate",0,0,0,'
                  f'{i},{5.0 + (i % 3)}' for i in range(45)]
        path = self.samples_csv("s.csv", lines)
        groups = plot.load_samples(path)
        self.assertEqual([len(v) for v in groups.values()], [60, 60, 45])  # repetitions pooled
        self.assertIn(("gdn/decode", "gdn/decode/m/tp2/B:4/T:1/fp32 fused linstate pdl=on layout:kv"),
                      groups)
        out_dir = os.path.join(self.dir, "p")
        rc, out, err = run(PY, PLOT, "--samples", path, "--out", out_dir)
        self.assertEqual(rc, 0, out + err)
        pngs = sorted(os.listdir(out_dir))
        self.assertEqual(pngs, ["s-samples-gdn_decode.png", "s-samples-pool_fork.png"])
        self.assertTrue(all(is_png(os.path.join(out_dir, p)) for p in pngs))
        # bad input: one line, exit 2
        bad = self.samples_csv("bad.csv", ['"x/y","v","i","","","rotate",0,0,0,0,-1'])
        rc, out, err = run(PY, PLOT, "--samples", bad, "--out", out_dir)
        self.assert_one_line_error(rc, out, err, "bad.csv:2", "us")
        rc, out, err = run(PY, PLOT, "--samples", self.csv("run.csv", suite()), "--out", out_dir)
        self.assert_one_line_error(rc, out, err, "not a samples file")

    def test_bad_input_exit_2(self):
        rc, out, err = run(PY, PLOT, self.csv("bad.csv", suite(schema_version="7")),
                           "--out", self.dir)
        self.assert_one_line_error(rc, out, err, "bad.csv", "schema_version")
        self.assertEqual([f for f in os.listdir(self.dir) if f.endswith(".png")], [])


class Export(Base):
    """export.py: Bencher BMF / Google Benchmark JSON, one GPU model per testbed."""

    def test_bmf_values_and_repetitions(self):
        rows = suite(reps=3, jitter=0.1) + [row(batch=512, status="error:timing", time_us_median="")]
        rc, out, err = run(PY, EXPORT, self.csv("r.csv", rows))
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(len(doc), 10)                       # 8 gdn + 2 mamba2 keys, reps merged
        name = next(n for n in doc if n.startswith("gdn/verify/") and "/B:64/T:4/" in n)
        base = 5.0 + 64 * 4 * 0.25
        lat = doc[name]["latency"]
        self.assertAlmostEqual(lat["value"], base * 1.1 * 1e3, places=6)   # median of 3 reps, ns
        self.assertLess(lat["lower_value"], lat["value"])
        self.assertGreater(lat["upper_value"], lat["value"])
        self.assertIn("gigabytes-per-second", doc[name])
        self.assertIn("1 rows not ok", err)

    def test_one_gpu_model_per_testbed(self):
        rows = suite() + [dict(r, gpu_name="NVIDIA B200") for r in suite()]
        path = self.csv("mixed.csv", rows)
        rc, out, err = run(PY, EXPORT, path)
        self.assert_one_line_error(rc, out, err, "2 GPU models", "--out-dir")
        out_dir = os.path.join(self.dir, "tb")
        rc, out, err = run(PY, EXPORT, path, "--format", "gb", "--out-dir", out_dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(os.listdir(out_dir)), ["b200.json", "h200.json"])
        with open(os.path.join(out_dir, "h200.json")) as f:
            gb = json.load(f)
        self.assertEqual(gb["context"]["linstate_gpu"], "h200")
        self.assertEqual(len(gb["benchmarks"]), 10)
        b = gb["benchmarks"][0]
        self.assertEqual((b["time_unit"], b["run_type"], b["iterations"]), ("us", "iteration", 1))
        self.assertTrue(b["name"].startswith("gdn/verify/"))

    def test_bad_input_exit_2(self):
        rc, out, err = run(PY, EXPORT, self.csv("bad.csv", suite(schema_version="7")))
        self.assert_one_line_error(rc, out, err, "bad.csv", "schema_version")


class ReadmeExamples(unittest.TestCase):
    """The README's compare/plot/export examples name committed files that exist."""

    def test_example_files_exist(self):
        root = os.path.dirname(synth.SCRIPTS)
        with open(os.path.join(root, "README.md")) as f:
            text = f.read()
        paths = set(re.findall(r"\bresults/[\w./-]+\.csv(?:\.gz)?\b", text))
        self.assertTrue(any("default-sweep" in p for p in paths), paths)
        missing = [p for p in sorted(paths) if not os.path.exists(os.path.join(root, p))]
        self.assertEqual(missing, [])


class Profile(Base):
    KEY = "gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32"

    def dry_run(self, *args):
        rc, out, err = run("bash", PROFILE, self.KEY, "--dry-run", *args)
        self.assertEqual(rc, 0, err)
        return shlex.split(out)

    def test_nsys_command(self):
        argv = self.dry_run("--", "--cache", "flush")
        self.assertEqual(argv[:2], ["nsys", "profile"])
        for a in ("-t", "cuda,nvtx", "--capture-range=nvtx", "--nvtx-capture=measure@linstate",
                  "--profile"):
            self.assertIn(a, argv)
        self.assertEqual(argv[-2:], ["--cache", "flush"])
        flt = [a for a in argv if a.startswith("--benchmark_filter=")][0].split("=", 1)[1]
        # Google Benchmark uses POSIX ERE; for this pattern Python's re agrees.
        self.assertRegex(self.KEY, flt)
        self.assertRegex(self.KEY + "/repeats:3/manual_time", flt)
        self.assertRegex(self.KEY + "/dev:1/iterations:1/repeats:3/manual_time", flt)
        self.assertNotRegex(self.KEY + "/graph/iterations:1/manual_time", flt)
        self.assertNotRegex(self.KEY + "x", flt)
        self.assertNotRegex(self.KEY.replace("B:64", "B:6"), flt)
        self.assertNotRegex("x/" + self.KEY, flt)

    def test_graph_nodes_traced_and_profiler_api_capture(self):
        argv = self.dry_run()
        self.assertIn("--cuda-graph-trace=node", argv)
        api = self.dry_run("--capture", "api")
        self.assertIn("--capture-range=cudaProfilerApi", api)
        self.assertIn("--cuda-graph-trace=node", api)
        self.assertIn("--profile", api)            # the bench's cudaProfilerStart/Stop window
        self.assertFalse(any(a.startswith("--nvtx-capture") for a in api))
        ncu = self.dry_run("--ncu", "--capture", "api")
        self.assertEqual(ncu[ncu.index("--profile-from-start") + 1], "off")
        self.assertNotIn("--nvtx-include", ncu)
        rc, _, err = run("bash", PROFILE, self.KEY, "--capture", "sometimes", "--dry-run")
        self.assertEqual(rc, 2)
        self.assertIn("sometimes", err)

    def test_filter_escapes_regex_metacharacters(self):
        key = "mamba2/decode/nemotron-h-4.5b/tp1/B:8/T:1/bf16"
        rc, out, err = run("bash", PROFILE, key, "--dry-run")
        self.assertEqual(rc, 0, err)
        flt = [a for a in shlex.split(out) if a.startswith("--benchmark_filter=")][0]
        flt = flt.split("=", 1)[1]
        self.assertRegex(key, flt)
        self.assertNotRegex(key.replace("4.5b", "4x5b"), flt)

    def test_ncu_command(self):
        argv = self.dry_run("--ncu")
        self.assertEqual(argv[0], "ncu")
        i = argv.index("--nvtx-include")
        self.assertEqual(argv[i + 1], "linstate@" + self.KEY.replace("/", "\\/") + "/measure")
        self.assertIn("--nvtx", argv)
        self.assertEqual(argv[argv.index("--clock-control") + 1], "none")
        # the kernels run in the bench's worker process, a child
        self.assertEqual(argv[argv.index("--target-processes") + 1], "all")
        self.assertTrue(any(a.startswith("results/profiles/") or "/results/profiles/" in a
                            for a in argv))

    def test_usage_errors(self):
        rc, _, err = run("bash", PROFILE)
        self.assertEqual(rc, 2)
        self.assertIn("CASE_KEY", err)
        rc, _, err = run("bash", PROFILE, self.KEY, "--bogus")
        self.assertEqual(rc, 2)
        self.assertIn("--bogus", err)

    def test_missing_tool_or_binary_is_a_clear_message(self):
        env = dict(os.environ, PATH="/usr/bin:/bin",
                   LINSTATE_BENCH=os.path.join(self.dir, "no-bench"))
        for extra in ((), ("--ncu",)):
            rc, out, err = run("bash", PROFILE, self.KEY, *extra, env=env)
            self.assertEqual(rc, 1, out + err)
            self.assertRegex(err, r"(nsys|ncu) \(Nsight (Systems|Compute)\) not found|"
                                  r"benchmark binary not found")




class SideBySide(Base):
    """side_by_side.py: per case, each impl's time, the best peer and the ratio, from ONE run."""

    def test_ratio_best_peer_and_skips(self):
        cols = synth.V2_COLUMNS + ["state_layout"]
        sglang, on, _ = impl_rows()
        fla = synth.v2(suite(), impl="fla", tuning="", scale=0.5)
        fla = [dict(r, status="skipped:unsupported") if r["case"] != SLOW_KEY else r for r in fla]
        path = self.csv("side.csv", sglang + on + fla, cols)
        rc, out, err = run(PY, SIDE, path, "--format", "text")
        self.assertEqual(rc, 0, out + err)
        line = [l for l in out.splitlines() if l.startswith(SLOW_KEY)][0].split()
        # linstate is x0.8 of sglang on SLOW_KEY; fla (x0.5) is the best peer there
        self.assertEqual(line[-2:], ["fla", "1.600"])
        mline = [l for l in out.splitlines() if l.startswith(MAMBA_KEY)][0]
        self.assertIn("skipped:unsupported", mline)
        self.assertEqual(mline.split()[-2:], ["sglang", "1.300"])
        self.assertIn("10 cases with linstate and a peer", out)

    def test_state_layouts(self):
        """linstate on kv and vk (one column each), sglang on vk only (its kv rows refused)."""
        cols = synth.V2_COLUMNS + ["state_layout"]
        sglang, on, _ = impl_rows()

        def lay(rows, layout, status=None):
            return [dict(r, state_layout=layout if r["mechanism"] in ("gdn", "kda") else "",
                         **({"status": status} if status and r["mechanism"] in ("gdn", "kda") else {}))
                    for r in rows]
        ls_kv = lay(on, "kv")
        ls_vk = lay(synth.v2(suite(), tuning=TUNE_ON, scale=0.9), "vk")
        sg_kv = [r for r in lay(sglang, "kv", "skipped:unsupported") if r["state_layout"]]
        path = self.csv("lay.csv", sg_kv + lay(sglang, "vk") + ls_kv + ls_vk, cols)
        rc, out, err = run(PY, SIDE, path, "--format", "text")
        self.assertEqual(rc, 2)
        self.assertIn("name one of linstate/kv, linstate/vk", err)
        rc, out, err = run(PY, SIDE, path, "--format", "text", "--impl", "linstate/vk")
        self.assertEqual(rc, 0, out + err)
        line = [l for l in out.splitlines() if l.startswith(SLOW_KEY)][0].split()
        # vk is x0.9 of sglang; linstate/kv (x0.8) is shown but never the best peer
        self.assertEqual(line[-2:], ["sglang", "0.900"])
        self.assertNotIn("skipped:unsupported", line)
        mline = [l for l in out.splitlines() if l.startswith(MAMBA_KEY)][0].split()
        self.assertEqual(mline[-2:], ["sglang", "0.900"])  # no layout: the vk column's own rows
        self.assertIn("10 cases with linstate/vk and a peer", out)
        rc, out, err = run(PY, SIDE, path, "--format", "text", "--impl", "linstate/kv")
        self.assertEqual(rc, 0, out + err)
        line = [l for l in out.splitlines() if l.startswith(SLOW_KEY)][0].split()
        self.assertEqual(line[-2:], ["sglang", "0.800"])

    def test_errors(self):
        cols = synth.V2_COLUMNS
        _, on, _ = impl_rows()
        only = self.csv("only.csv", on, cols)
        rc, out, err = run(PY, SIDE, only)
        self.assertEqual(rc, 2)
        self.assertIn("nothing to set it against", err)
        rc, out, err = run(PY, SIDE, only, "--impl", "nosuch")
        self.assertEqual(rc, 2)
        self.assertIn("nosuch", err)
        v1 = self.csv("v1.csv", suite())
        rc, out, err = run(PY, SIDE, v1)
        self.assertEqual(rc, 2)
        self.assertIn("schema 2", err)


class GpuCheckWithoutGpu(Base):
    """gpu-check.sh on a machine without a GPU: SKIPPED, exit 77, nothing built, and nothing
    under results/ written (the summary goes where asked)."""

    def setUp(self):
        super().setUp()
        import shutil
        smi = shutil.which("nvidia-smi")
        if smi and subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.startswith("GPU "):
            self.skipTest("a GPU is visible here (gpu-check.sh would build and run everything)")

    def test_skipped(self):
        def results_tree():
            top = os.path.join(synth.ROOT, "results")
            return sorted((os.path.join(dp, f), os.stat(os.path.join(dp, f)).st_mtime_ns)
                          for dp, _, fs in os.walk(top) for f in fs)
        before = results_tree()
        out_file = os.path.join(self.dir, "gc.txt")
        p = subprocess.run(["bash", os.path.join(synth.SCRIPTS, "gpu-check.sh"), out_file],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("result: SKIPPED", p.stdout)
        self.assertIn("result: SKIPPED", open(out_file).read())
        self.assertEqual(results_tree(), before)

    def commit_line(self, **git_env):
        """gpu-check.sh's commit line with only the given LS_GIT_* variables set."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("LS_GIT_")}
        p = subprocess.run(["bash", os.path.join(synth.SCRIPTS, "gpu-check.sh"), os.path.join(self.dir, "gc.txt")],
                           capture_output=True, text=True, timeout=60, env=dict(env, **git_env))
        return [l for l in p.stdout.splitlines() if l.startswith("commit:")][0]

    def test_commit_not_head(self):
        """A commit named from outside that is not this checkout's HEAD: dirty unknown ("+dirty?"),
        not this checkout's status (a copied tree beside a stale .git read as dirty)."""
        self.assertEqual(self.commit_line(LS_GIT_COMMIT="0123abc"), "commit: 0123abc+dirty?")
        self.assertEqual(self.commit_line(LS_GIT_COMMIT="0123abc", LS_GIT_DIRTY="0"), "commit: 0123abc")
        self.assertEqual(self.commit_line(LS_GIT_COMMIT="0123abc", LS_GIT_DIRTY="1"), "commit: 0123abc+dirty")


class GpuCheckTests(Base):
    """scripts/gpu_check_tests.py: which binary gpu-check.sh sanitizes for each test, from ctest's
    json: a test's own program in the build, never an interpreter (run directly or through
    `cmake -E env`, as the python peer tests are: the lookup by name called them missing)."""
    TOOL = os.path.join(synth.SCRIPTS, "gpu_check_tests.py")

    def classify(self, tests, build):
        p = subprocess.run([sys.executable, self.TOOL, build], input=json.dumps({"tests": tests}),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return {ln.split()[0]: ln.split()[1:] for ln in p.stdout.splitlines()}

    def test_kinds(self):
        build = os.path.join(self.dir, "build")
        own = os.path.join(build, "tests", "gpu", "test_gpu_conv")
        got = self.classify([
            {"name": "test_gpu_conv", "command": [own]},
            {"name": "test_gpu_py_sglang", "command": ["/usr/bin/cmake", "-E", "env", "LS_PEERS_SRC=/x",
                                                       "python3", "/src/tests/peers/t.py", "/src"]},
            {"name": "plugin_guard_cuda", "command": ["/usr/bin/python3.12", "/src/t.py"]},
            {"name": "fleet", "command": ["/bin/bash", "/src/t.sh"]},
            {"name": "elsewhere", "command": ["/opt/tool/bin/checker", "--x"]},
        ], build)
        self.assertEqual(got["test_gpu_conv"], ["bin", own])
        self.assertEqual(got["test_gpu_py_sglang"], ["run", "python3"])
        self.assertEqual(got["plugin_guard_cuda"], ["run", "python3.12"])
        self.assertEqual(got["fleet"], ["run", "bash"])
        self.assertEqual(got["elsewhere"], ["run", "checker"])

    def test_not_json(self):
        p = subprocess.run([sys.executable, self.TOOL, self.dir], input="Test #1: x\n",
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not ctest's json", p.stderr)


class JobsSpread(Base):
    """scripts/jobs/spread.py: the spread of a case's median between processes, per group and op."""
    SPREAD = os.path.join(synth.SCRIPTS, "jobs", "spread.py")

    def test_spread_per_group(self):
        runs = [self.csv(f"r{i}.csv", synth.v2(suite(), scale=f), synth.V2_COLUMNS)
                for i, f in enumerate((1.0, 1.1, 1.0, 1.0))]
        rc, out, err = run(PY, self.SPREAD, f"moved={runs[0]},{runs[1]}", f"still={runs[2]},{runs[3]}")
        self.assertEqual(rc, 0, err)
        lines = [ln.split() for ln in out.splitlines()[1:]]
        self.assertTrue(lines and all(ln[0] in ("moved", "still") for ln in lines), out)
        for ln in lines:  # the median and the largest spread
            want = "10.0%" if ln[0] == "moved" else "0.0%"
            self.assertEqual((ln[3], ln[4]), (want, want), out)

    def test_one_run_is_refused(self):
        rc, out, err = run(PY, self.SPREAD, "a=" + self.csv("r.csv", synth.v2(suite()), synth.V2_COLUMNS))
        self.assert_one_line_error(rc, out, err, "two runs or more")
        self.assertEqual(out, "")


class AACheckUsage(Base):
    """scripts/aa-check.sh's usage errors: one line, exit 2 (its header's promise), and a sweep
    the bench refuses reported in the bench's own words."""
    AA = os.path.join(synth.SCRIPTS, "aa-check.sh")

    def test_option_without_its_value(self):
        for opt, needs in (("--out", "a directory"), ("--build", "a directory"), ("--rounds", "a count"),
                           ("--backend", "cuda or host"), ("--plant-pct", "5, 10 or 50")):
            rc, out, err = run("bash", self.AA, opt)
            self.assert_one_line_error(rc, out, err, f"aa-check.sh: {opt} needs {needs}")

    def test_bad_axis_named_by_the_bench(self):
        bench = os.path.join(self.dir, "b", "bench", "linstate-bench")
        os.makedirs(os.path.dirname(bench))
        with open(bench, "w") as f:  # a bench that refuses the sweep as linstate-bench does
            f.write("#!/bin/sh\necho \"linstate-bench: --batch: bad value '0' (integers 1..65536)\" >&2\nexit 2\n")
        os.chmod(bench, 0o755)
        plugin = os.path.join(self.dir, "b", "tests", "plugin", "libls_test_planted_host.so")
        os.makedirs(os.path.dirname(plugin))
        open(plugin, "w").close()  # looked for before the sweep is listed
        rc, out, err = run("bash", self.AA, "--build", os.path.join(self.dir, "b"), "--backend", "host",
                           "--out", os.path.join(self.dir, "aa"), "--", "--batch", "0")
        self.assert_one_line_error(rc, out, err, "--batch: bad value '0'")


if __name__ == "__main__":
    unittest.main(verbosity=2)
