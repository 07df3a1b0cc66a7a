#!/usr/bin/env python3
"""Tests of the fleet scripts on synthetic per-rank CSVs: scripts/fleet/merge.py (schema, provenance,
missing and incomplete shards, shard/replicate detection), scripts/fleet/fleet_report.py (spread,
slowest GPU, outliers) and compare.py's GPU identity (gpu_uuid, not device_index). Exit 77 when
numpy/scipy/matplotlib are missing.
"""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import matplotlib  # noqa: F401
    import scipy  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e.name} is not installed (python3 -m pip install numpy scipy matplotlib)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402
from synth import suite, v2  # noqa: E402

PY = sys.executable
MERGE = os.path.join(synth.SCRIPTS, "fleet", "merge.py")
REPORT = os.path.join(synth.SCRIPTS, "fleet", "fleet_report.py")
COMPARE = os.path.join(synth.SCRIPTS, "compare.py")
COLUMNS = synth.FLEET_CSV_COLUMNS
UUID = synth.UUID


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rank_rows(idx, world, job="77", scale=1.0, cases=None, **over):
    """v2 rows of rank idx: the synthetic suite (or the cases at positions `cases`), on GPU
    UUID[idx], times multiplied by scale; over replaces columns."""
    rows = v2(suite(), scale=scale)
    if cases is not None:
        rows = [r for i, r in enumerate(rows) if i in cases]
    for r in rows:
        r.update(gpu_uuid=UUID[idx], rank=str(idx), world_size=str(world), job_id=job, node=f"n{idx}",
                 host=f"n{idx}")
        r.update({k: str(v) for k, v in over.items()})
    return rows


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name
        self.ranks = os.path.join(self.dir, "ranks")
        os.makedirs(self.ranks)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, rows, columns=COLUMNS):
        return synth.write_csv(os.path.join(self.ranks, name), rows, columns)

    def merge(self, *extra):
        out = os.path.join(self.dir, "merged.csv")
        return run(PY, MERGE, self.ranks, "--out", out, *extra) + (out,)

    def assert_one_line_error(self, rc, err, *needles):
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for n in needles:
            self.assertIn(n, err)


class Merge(Base):
    def test_shard_merges_every_row_once_ordered_by_rank(self):
        n = len(suite())
        self.write("b_r1.csv", rank_rows(1, 2, cases=range(1, n, 2)))
        self.write("a_r0.csv", rank_rows(0, 2, cases=range(0, n, 2)))
        rc, out, err, merged = self.merge()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("job 77: shard, 2 of 2 ranks", out)
        rows = read_rows(merged)
        self.assertEqual(len(rows), n)
        self.assertEqual([r["rank"] for r in rows], ["0"] * len(range(0, n, 2)) + ["1"] * len(range(1, n, 2)))
        with open(merged) as f, open(os.path.join(self.ranks, "a_r0.csv")) as g:
            self.assertEqual(f.readline(), g.readline())  # the header, byte for byte

    def test_replicate_detected(self):
        for r in range(3):
            self.write(f"r{r}.csv", rank_rows(r, 3))
        rc, out, err, merged = self.merge()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("replicate, 3 of 3 ranks", out)
        self.assertEqual(len(read_rows(merged)), 3 * len(suite()))

    def test_missing_and_incomplete_shards_reported_rest_kept(self):
        self.write("r0.csv", rank_rows(0, 3))
        tmp = self.write("r2.csv.tmp.Ab3dEf", rank_rows(2, 3))  # linstate-bench's private temporary
        with open(tmp, "a") as f:
            f.write('2,"0.1.0","torn')  # a killed writer's last, partial line
        rc, out, err, merged = self.merge()
        self.assertEqual(rc, 1, out + err)
        self.assertIn("missing shard: rank 1 of 3 (no file)", out)
        self.assertIn("missing shard: rank 2 of 3 incomplete", out)
        rows = read_rows(merged)
        self.assertEqual({r["rank"] for r in rows}, {"0"})
        self.assertEqual(len(rows), len(suite()))

    def test_mixed_commits_refused_unless_allowed(self):
        self.write("r0.csv", rank_rows(0, 2))
        self.write("r1.csv", rank_rows(1, 2, git_commit="fedcba9876543210"))
        rc, out, err, _ = self.merge()
        self.assert_one_line_error(rc, err, "mixed git commits", "--allow-mixed")
        rc, out, err, _ = self.merge("--allow-mixed")
        self.assertEqual(rc, 0, out + err)

    def test_mixed_suite_versions_refused(self):
        self.write("r0.csv", rank_rows(0, 2))
        self.write("r1.csv", rank_rows(1, 2, suite_version="0.2.0"))
        rc, out, err, _ = self.merge()
        self.assert_one_line_error(rc, err, "mixed suite versions", "0.1.0", "0.2.0")

    def test_mixed_schema_refused(self):
        self.write("r0.csv", rank_rows(0, 2))
        self.write("r1.csv", rank_rows(1, 2), columns=COLUMNS[:-1])
        rc, out, err, _ = self.merge()
        self.assert_one_line_error(rc, err, "r1.csv", "mixed schema")

    def test_not_a_fleet_file_refused(self):
        self.write("r0.csv", rank_rows(0, 2, rank="", world_size=""))
        rc, out, err, _ = self.merge()
        self.assert_one_line_error(rc, err, "r0.csv", "not a fleet rank")

    def test_rank_twice_refused(self):
        self.write("r0.csv", rank_rows(0, 2))
        self.write("r0-again.csv", rank_rows(0, 2, scale=1.1))  # a second run of rank 0
        rc, out, err, _ = self.merge()
        self.assert_one_line_error(rc, err, "rank 0 twice")

    def test_earlier_merge_in_the_folder_left_out(self):
        # merge.sbatch writes DIR/merged.csv beside the rank files; merging DIR again (by hand, to
        # another file) must not read it as a rank's file
        n = len(suite())
        self.write("h_g0_job77_rank0of2.csv", rank_rows(0, 2, cases=range(0, n, 2)))
        self.write("h_g1_job77_rank1of2.csv", rank_rows(1, 2, cases=range(1, n, 2)))
        first = os.path.join(self.ranks, "merged.csv")
        rc, out, err = run(PY, MERGE, self.ranks, "--out", first)
        self.assertEqual(rc, 0, out + err)
        for _ in range(2):  # by hand elsewhere, then the merge job again in place
            rc, out, err, merged = self.merge()
            self.assertEqual(rc, 0, out + err)
            self.assertIn("merged.csv holds the rows of several ranks (an earlier merge's output); left out", out)
            self.assertEqual(len(read_rows(merged)), n)
            rc, out, err = run(PY, MERGE, self.ranks, "--out", first)
            self.assertEqual(rc, 0, out + err)
        self.assertEqual(len(read_rows(first)), n)

    def test_one_rank_merge_and_copies_left_out(self):
        self.write("h_g0_rank0of1.csv", rank_rows(0, 1, job=""))
        rc, out, err = run(PY, MERGE, self.ranks, "--out", os.path.join(self.ranks, "merged.csv"))
        self.assertEqual(rc, 0, out + err)
        self.write("copy.csv", rank_rows(0, 1, job=""))
        rc, out, err, merged = self.merge()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("merged.csv has the same rows as " + os.path.join(self.ranks, "h_g0_rank0of1.csv"), out)
        self.assertIn("copy.csv has the same rows as", out)
        self.assertEqual(len(read_rows(merged)), len(suite()))

    def test_empty_folder(self):
        rc, out, err, _ = self.merge()
        self.assert_one_line_error(rc, err, "no rank files")

    def test_jobs_are_separate_fleets(self):
        self.write("a0.csv", rank_rows(0, 1, job="10"))
        self.write("b0.csv", rank_rows(0, 2, job="11"))
        rc, out, err, _ = self.merge()
        self.assertEqual(rc, 1, out + err)
        self.assertIn("job 11: missing shard: rank 1 of 2", out)
        self.assertNotIn("job 10: missing", out)


class Report(Base):
    def report(self, rows, *extra):
        merged = synth.write_csv(os.path.join(self.dir, "merged.csv"), rows, COLUMNS)
        out = os.path.join(self.dir, "report")
        return run(PY, REPORT, merged, "--out", out, *extra) + (out,)

    def test_outlier_named_with_four_gpus(self):
        rows = rank_rows(0, 4) + rank_rows(1, 4, scale=1.01) + rank_rows(2, 4, scale=0.99) + rank_rows(3, 4, scale=1.2)
        rc, out, err, d = self.report(rows)
        self.assertEqual(rc, 0, out + err)
        line = [l for l in out.splitlines() if l.startswith(f"| `{UUID[3]}`")][0]
        self.assertIn("**OUTLIER**", line)
        self.assertIn("10 of 10", line)  # slowest on every measurement
        for u in UUID[:3]:
            self.assertIn("| no |", [l for l in out.splitlines() if l.startswith(f"| `{u}`")][0])
        self.assertIn(f"Outliers (geomean off the fleet median by more than 5 %): `{UUID[3]}`", out)
        for f in ("fleet.md", "fleet.csv", "fleet.png"):
            self.assertTrue(os.path.getsize(os.path.join(d, f)) > 0, f)
        spread = read_rows(os.path.join(d, "fleet.csv"))
        self.assertEqual(len(spread), 10)
        self.assertTrue(all(r["slowest_gpu"] == UUID[3] and r["gpus"] == "4" for r in spread))
        self.assertAlmostEqual(float(spread[0]["spread_pct"]), 100 * (1.2 - 0.99) / 1.005, places=1)

    def test_two_gpus_no_outlier_verdict(self):
        rc, out, err, _ = self.report(rank_rows(0, 2) + rank_rows(1, 2, scale=1.5))
        self.assertEqual(rc, 0, out + err)
        self.assertIn("not decided with 2 GPUs", out)
        self.assertNotIn("**OUTLIER**", out)

    def test_one_gpu_per_case_is_refused(self):
        n = len(suite())
        rows = rank_rows(0, 2, cases=range(0, n, 2)) + rank_rows(1, 2, cases=range(1, n, 2))
        rc, out, err, _ = self.report(rows)
        self.assert_one_line_error(rc, err, "shard run")

    def test_ranks_sharing_a_gpu_are_told_apart(self):
        rows = rank_rows(0, 2) + rank_rows(1, 2, gpu_uuid=UUID[0])
        rc, out, err, _ = self.report(rows)
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"`{UUID[0]}/rank1`", out)


class CompareGpuIdentity(Base):
    def compare(self, before, after, *opts):
        b = synth.write_csv(os.path.join(self.dir, "before.csv"), before, COLUMNS)
        a = synth.write_csv(os.path.join(self.dir, "after.csv"), after, COLUMNS)
        return run(PY, COMPARE, b, a, *opts)

    def test_same_gpu_joins_across_device_index(self):
        # one GPU seen as device 3 by one rank and device 0 by another: the uuid joins them
        rc, out, err = self.compare(rank_rows(0, 1, device_index=3), rank_rows(0, 1, device_index=0))
        self.assertEqual(rc, 0, out + err)
        self.assertIn("SAME", out)

    def test_different_gpus_need_ignore_device(self):
        rc, out, err = self.compare(rank_rows(0, 1), rank_rows(1, 1))
        self.assert_one_line_error(rc, err, "no GPU in common", UUID[0], UUID[1], "--ignore-device")
        rc, out, err = self.compare(rank_rows(0, 1), rank_rows(1, 1), "--ignore-device")
        self.assertEqual(rc, 0, out + err)

    def test_without_uuids_device_index_still_joins(self):
        rc, out, err = self.compare(rank_rows(0, 1, gpu_uuid=""), rank_rows(1, 1, gpu_uuid=""))
        self.assertEqual(rc, 0, out + err)
        rc, out, err = self.compare(rank_rows(0, 1, gpu_uuid="", device_index=1), rank_rows(0, 1))
        self.assertEqual(rc, 2, out + err)  # no uuid on one side: device_index 1 vs 0, nothing joins
        self.assertIn("nothing compared", err)


if __name__ == "__main__":
    unittest.main(verbosity=1)
