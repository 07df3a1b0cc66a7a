#!/usr/bin/env python3
"""scripts/jobs/commit-ab.sh on the host backend: `prepare` archives a commit without results/
into LS_AB_DIR; `run` with both benches given (nothing built) alternates the sides for N rounds,
keeps every process's CSV, joins each side's into one (the processes as repetitions), compares
them and measures each side's spread between processes; bad usage is one line and exit 2.

  test_commit_ab.py LINSTATE_BENCH
"""
import csv
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "jobs", "commit-ab.sh")
BENCH = None
SWEEP = ["--backend", "host", "--family", "pool", "--model", "qwen3-next-80b-a3b", "--batch", "1",
         "--benchmark_filter=pool/(copy|fork)"]


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class CommitAB(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        self.env = dict(os.environ, LS_AB_DIR=os.path.join(self.tmp, "ab"), LS_GIT_COMMIT="new0000")

    def tearDown(self):
        self._tmp.cleanup()

    def sh(self, *args, env=None):
        return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, env=env or self.env,
                              timeout=240)

    def test_prepare(self):
        if subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True).returncode != 0:
            self.skipTest("not a git checkout")
        p = self.sh("prepare", "HEAD")
        self.assertEqual(p.returncode, 0, p.stderr)
        sha, path = p.stdout.split()
        self.assertEqual(path, os.path.join(self.tmp, "ab", sha + ".tar"))
        with tarfile.open(path) as t:
            names = t.getnames()
        self.assertIn("CMakeLists.txt", names)
        self.assertIn("scripts/jobs/aa-h200.sh", names)
        self.assertFalse([n for n in names if n.startswith("results/")])
        bad = self.sh("prepare", "no-such-commit-xyz")
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(bad.stderr.strip().count("\n"), 0, bad.stderr)
        self.assertIn("'no-such-commit-xyz' names no commit", bad.stderr)

    def test_run(self):
        out = os.path.join(self.tmp, "out")
        p = self.sh("run", out, "old0000", "--rounds", "2", "--old-bench", BENCH, "--new-bench", BENCH, "--", *SWEEP)
        self.assertIn(p.returncode, (0, 1), p.stderr)  # 1: the host's noise called a case SLOWER
        self.assertRegex(p.stderr, r"(?m)^\d+ SLOWER, \d+ FASTER")
        for side, commit in (("old", "old0000"), ("new", "new0000")):
            per = [rows(os.path.join(out, f"{side}-{i}.csv")) for i in (1, 2)]
            self.assertEqual([len(r) for r in per], [2, 2])
            joined = rows(os.path.join(out, f"{side}.csv"))
            self.assertEqual(len(joined), 4)  # both processes, one header
            self.assertEqual({r["git_commit"] for r in joined}, {commit})
            self.assertEqual({r["status"] for r in joined}, {"ok"})
        with open(os.path.join(out, "times.txt")) as f:
            steps = [line.split()[0] for line in f]
        self.assertEqual(steps, ["builds", "old-1", "new-1", "old-2", "new-2", "compare"])
        with open(os.path.join(out, "spread.txt")) as f:
            spread = f.read()
        self.assertRegex(spread, r"(?m)^old +pool/copy")
        self.assertRegex(spread, r"(?m)^new +pool/fork")
        with open(os.path.join(out, "compare.txt")) as f:
            self.assertIn("pool/fork", f.read())

    def test_bad_usage(self):
        out = os.path.join(self.tmp, "out")
        cases = [
            (["run", out, "abc", "--rounds", "0", "--", *SWEEP], "--rounds: bad value '0'"),
            (["run", out, "abc", "--old-bench", "/nonexistent", "--", *SWEEP], "'/nonexistent' is not an executable"),
            (["run", out, "abc", "--new-bench", BENCH, "--", *SWEEP], "no archive"),
            (["run", out, "abc", "--frobnicate"], "unknown argument '--frobnicate'"),
            (["run", out], "needs OUT and SHA"),
            (["bogus"], "usage"),
        ]
        for args, want in cases:
            p = self.sh(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(want, p.stderr, args)
            self.assertEqual(p.stderr.strip().count("\n"), 0, p.stderr)
        env = dict(self.env)
        env.pop("LS_GIT_COMMIT")
        p = self.sh("run", out, "abc", "--old-bench", BENCH, "--new-bench", BENCH, "--", *SWEEP, env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("set LS_GIT_COMMIT", p.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_commit_ab.py LINSTATE_BENCH")
    BENCH = os.path.abspath(sys.argv.pop(1))
    unittest.main()
