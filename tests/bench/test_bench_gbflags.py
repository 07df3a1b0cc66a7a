#!/usr/bin/env python3
"""Flags passed through to Google Benchmark, repeated --tune knobs and the --pool-slots drop note
(issue 20, item 6), end to end on the host backend.

usage: test_bench_gbflags.py CHECK BENCH_BINARY
  gbflags     every bad value of a flag GB knows is ONE stderr line naming it and exit 2, nothing
              written (not GB's usage text with exit 0, not its line plus ours); good values pass;
              --benchmark_min_warmup_time is refused (GB would call each case again: extra rows);
              --benchmark_repetitions=2 gives two rows per case
  tune        a knob given twice in one --tune point is an error naming it
  pool_slots  cases dropped because B exceeds --pool-slots are said in one line for the run
  parser      what the CLI fuzz test (fuzz_cli.py) found: a flag taken as the value of the one
              before it, control characters in an argument, --help=VALUE (GB's usage, exit 0),
              --list with no matching case (exit 0): each one line and exit 2
"""
import csv
import glob
import os
import subprocess
import sys
import tempfile

SMALL = ["--backend", "host", "--family", "pool/alloc", "--model", "qwen3-next-80b-a3b", "--tp", "8",
         "--batch", "1", "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.01"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(bench, args, cwd):
    p = subprocess.run([bench] + args, cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, [l for l in p.stderr.splitlines() if l.strip()]


def one_line_exit_2(bench, args, value, tmp):
    out_csv = os.path.join(tmp, "never.csv")
    rc, out, err = run(bench, ["--backend", "host", "--out", out_csv] + args, tmp)
    if rc != 2 or len(err) != 1 or value not in err[0]:
        fail("%s: want exit 2 and ONE stderr line naming %r; got rc %d, stderr %r, stdout %r"
             % (args, value, rc, err, out[:200]))
    if glob.glob(out_csv + "*"):
        fail("%s: a CSV was written" % args)


def check_gbflags(bench, tmp):
    bad = [
        ("--benchmark_format=foo", "foo"), ("--benchmark_format=JSON", "JSON"),
        ("--benchmark_out_format=xml", "xml"), ("--benchmark_repetitions=0", "'0'"),
        ("--benchmark_repetitions=-3", "-3"), ("--benchmark_repetitions=two", "two"),
        ("--benchmark_min_time=abc", "abc"), ("--benchmark_min_time=0.5x", "0.5x"),
        ("--benchmark_min_time=-1", "-1"), ("--benchmark_min_time=nan", "nan"),
        ("--benchmark_min_time=0x10", "0x10"), ("--benchmark_min_time=infs", "infs"),  # decimal only
        ("--benchmark_list_tests=maybe", "maybe"), ("--benchmark_color=purple", "purple"),
        ("--benchmark_counters_tabular=x", "'x'"), ("--benchmark_time_unit=h", "'h'"),
        ("--benchmark_context=a=b,c", "a=b,c"), ("--benchmark_context=", "--benchmark_context"),
        ("--benchmark_report_aggregates_only=2", "'2'"), ("--v=loud", "loud"),
        ("--benchmark_format", "--benchmark_format"), ("--benchmark_repetitions", "--benchmark_repetitions"),
        ("--benchmark_min_warmup_time=0.1", "--benchmark_min_warmup_time"),
        ("--benchmark_nosuch=1", "--benchmark_nosuch"),
        ("--benchmark_perf_counters=a,b,c,d", "a,b,c,d"),  # GB 1.7 aborts on a 4th counter
        ("--benchmark_perf_counters=a,,b", "a,,b"), ("--help=1", "--help=1"),
    ]
    for flag, value in bad:
        one_line_exit_2(bench, [flag], value, tmp)
    good = ["--benchmark_format=json", "--benchmark_out_format=csv", "--benchmark_repetitions=3",
            "--benchmark_min_time=0.5", "--benchmark_min_time=0.5s", "--benchmark_min_time=10x",
            "--benchmark_list_tests=false", "--benchmark_color=auto", "--benchmark_counters_tabular",
            "--benchmark_time_unit=ms", "--benchmark_context=a=b,c=d", "--benchmark_filter=pool",
            "--benchmark_report_aggregates_only=false", "--benchmark_enable_random_interleaving=0", "--v=0"]
    for flag in good:
        rc, out, err = run(bench, SMALL + ["--list", flag], tmp)
        if rc != 0 or not out.strip():
            fail("%s: rc %d, stderr %r" % (flag, rc, err))
    out_csv = os.path.join(tmp, "reps.csv")
    rc, out, err = run(bench, SMALL + ["--benchmark_repetitions=2", "--benchmark_min_time=0.1s", "--out", out_csv], tmp)
    rows = list(csv.DictReader(open(out_csv))) if rc == 0 else []
    if rc != 0 or sorted(r["repetition"] for r in rows) != ["0", "1"]:
        fail("--benchmark_repetitions=2: rc %d, rows %s, stderr %s" % (rc, [r["repetition"] for r in rows], err[-5:]))


def check_tune(bench, tmp):
    plugin = sys.argv[3]
    base = ["--impl-path", plugin, "--impl", "oob", "--family", "conv1d_update", "--list"]
    for spec in ("oob.where=after,oob.where=before", "oob:oob.where=after,oob.where=before",
                 "conv.loop=row,oob:conv.loop=channel"):
        one_line_exit_2(bench, base + ["--tune", spec], "given twice", tmp)
    rc, out, err = run(bench, ["--backend", "host"] + base + ["--tune", "oob.where=after,conv.loop=row"], tmp)
    if rc != 0:
        fail("two different knobs in one point: rc %d, %s" % (rc, err))


def check_pool_slots(bench, tmp):
    args = ["--backend", "host", "--family", "conv1d_update", "--model", "qwen3-next-80b-a3b", "--tp", "8",
            "--batch", "1,3,4", "--draft", "1", "--pool-slots", "2", "--min-samples", "3", "--min-time", "0.001",
            "--max-time", "0.01"]
    for extra in (["--list"], ["--out", os.path.join(tmp, "s.csv")]):
        rc, out, err = run(bench, args + extra, tmp)
        said = [l for l in err if "--pool-slots" in l]
        if rc != 0 or len(said) != 1 or "2 case(s)" not in said[0]:
            fail("%s: want rc 0 and one --pool-slots line for the 2 dropped cases; rc %d, %r" % (extra, rc, said))


def check_parser(bench, tmp):
    for args, value in ((["--out-dir", "--list"], "--list"), (["--out", "--quick"], "--quick"),
                        (["--model", "--batch", "1"], "--batch"), (["--model", "qwen3\n-80b"], "control character"),
                        (["--tune", "a=1\tb"], "control character"), (["--help=1"], "--help=1"),
                        (["--list", "--benchmark_filter=nothing-matches"], "no case matches")):
        one_line_exit_2(bench, args, value, tmp)
    rc, out, err = run(bench, ["--backend", "host", "--out=--odd-name.csv", "--list", "--family", "pool/alloc"], tmp)
    if rc != 0:
        fail("--out=--odd-name.csv (a value given with =): rc %d %s" % (rc, err))


def main():
    check, bench = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        {"gbflags": check_gbflags, "tune": check_tune, "pool_slots": check_pool_slots,
         "parser": check_parser}[check](bench, tmp)
    print("ok")


if __name__ == "__main__":
    main()
