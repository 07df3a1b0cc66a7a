#!/usr/bin/env python3
"""A bounded fuzz test of linstate-bench's command line (issue 20, item 7; CTest bench_fuzz_cli).

usage: fuzz_cli.py BENCH_BINARY [--seed N] [--budget SECONDS] [--max-runs N]

Random argvs from a fixed seed, for at most BUDGET seconds (default 20) or MAX_RUNS argvs. The
flags are read from `--help` (so a new flag is fuzzed without being listed here) plus Google
Benchmark's; values come from a pool of edge cases (empty, huge, negative, NaN, lists with
duplicates or empty items, long or non-ASCII text, the help text's own words) and mutations of
the argv (split or joined values, truncated or mangled flag names, stray words). Most argvs end in
--list (the parser and the plan, nothing measured); about one in eight runs a tiny host sweep
with its outputs in a private folder, half of those with --resume of a damaged copy of an
earlier sweep's CSV (cut, bytes flipped, quotes or newlines inserted, rows doubled).

The property, for every argv: the process ends by itself (no signal, no hang), prints no
sanitizer report, and either exits 2 with exactly ONE stderr line "linstate-bench: ..." and
nothing on stdout, or exits 0 with what was asked (the usage text, a case list, a CSV), or (a
sweep only) exits 1 after writing its CSV. Failures are printed with the argv to replay.
"""
import argparse
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

GB_FLAGS = ["--benchmark_list_tests", "--benchmark_filter", "--benchmark_min_time", "--benchmark_min_warmup_time",
            "--benchmark_repetitions", "--benchmark_enable_random_interleaving", "--benchmark_report_aggregates_only",
            "--benchmark_display_aggregates_only", "--benchmark_format", "--benchmark_out_format", "--benchmark_out",
            "--benchmark_color", "--benchmark_counters_tabular", "--benchmark_perf_counters", "--benchmark_context",
            "--benchmark_time_unit", "--v"]
# A sweep small enough to run in about a second on the host backend.
# Its flags come after the fuzzed ones, so they win (--repetitions 1: a fuzzed 65536 is not a hang).
TINY = ["--backend", "host", "--family", "pool/alloc", "--model", "qwen3-next-80b-a3b", "--tp", "8", "--batch", "1",
        "--min-samples", "1", "--min-time", "0.001", "--max-time", "0.002", "--repetitions", "1"]
SANITIZER = re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|LeakSanitizer|Traceback")


def help_vocabulary(bench):
    text = subprocess.run([bench, "--help"], capture_output=True, text=True, timeout=30).stdout
    flags = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])", text)) - {"--benchmark"})
    # relative words only: an output named by a fuzzed value lands in the private folder
    words = sorted(set(w.lstrip("/") or "x" for w in re.findall(r"[A-Za-z0-9_.:/+-]{1,40}", text)))
    return flags, words


def values(rng, words, tmp):
    pool = ["", "0", "1", "-1", "2", "3", "4", "8", "16", "64", "512", "65536", "65537", "2147483647", "2147483648",
            "-2147483649", "99999999999999999999", "1e309", "-1e-320", "nan", "NaN", "inf", "-inf", "0x10", " 1", "1 ",
            "1.5", ".5", "5.", "1e3", ",", ",,", "1,,2", "1,1", "1,2,3", ",1", "1,", "=", "==", ":", "a=1,a=2",
            "host:x=1", "host", "cuda", "all", "none", "on", "off", "both", "true", "false", "json", "console", "csv",
            "fp32", "bf16", "fp64", "kv", "vk", "kv,vk,kv", "gdn", "pool/alloc", "pool/nope", "gdn/decode",
            "qwen3-next-80b-a3b", "nemotron-h-8b,nemotron-h-8b", "shard", "replicate", "rotate", "flush", "hot",
            "case", "start", "-", "--", "--list", "\u00e9\u00e8", "\x7f", "a\tb", "x" * 5000, ",".join(["1"] * 40),
            ",".join(str(i) for i in range(1, 40)), "/", "/proc/linstate-fuzz/x.csv", "/dev/null", "/proc/self/status",
            os.path.join(tmp, "out.csv"), os.path.join(tmp, "sub", "dir", "o.csv"), tmp, "results", "*.csv", "[",
            "(", "a{1000000}", ".*", "-gdn", "pdl=on", "pdl=on,pdl=off"]
    pick = rng.random()
    if pick < 0.6:
        return rng.choice(pool)
    if pick < 0.85:
        return rng.choice(words)
    if pick < 0.95:  # a list of words and numbers
        return ",".join(rng.choice(words + pool[:20]) for _ in range(rng.randint(1, 5)))
    return "".join(chr(rng.randint(1, 0x2ff)) for _ in range(rng.randint(1, 12)))


def mangle(rng, flag):
    k = rng.random()
    if k < 0.3:
        return flag[: rng.randint(2, len(flag))]
    if k < 0.5:
        return flag.upper()
    if k < 0.7:
        return flag[1:]  # one dash
    if k < 0.85:
        return flag + rng.choice(["x", "-", "_", "=", "=="])
    return "-" + flag


def argv(rng, flags, words, tmp):
    out = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        flag = rng.choice(GB_FLAGS if r < 0.25 else flags)
        if r > 0.93:
            flag = mangle(rng, flag)
        v = values(rng, words, tmp)
        style = rng.random()
        if style < 0.45:
            out.append(flag + "=" + v)
        elif style < 0.85:
            out += [flag, v]
        elif style < 0.95:
            out.append(flag)
        else:
            out.append(v)  # a stray word
    return out


def mutated_resume(rng, base, tmp):
    """A --resume file: the base CSV (one earlier tiny sweep) cut, flipped, re-quoted or doubled."""
    data = bytearray(base)
    for _ in range(rng.randint(1, 3)):
        k, at = rng.random(), rng.randrange(len(data) + 1)
        if k < 0.25:
            data = data[:at]  # killed mid-row or mid-header
        elif k < 0.5 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif k < 0.7:
            data[at:at] = rng.choice([b'"', b",", b"\n", b'""', b"\r\n", b"\x00"])
        elif k < 0.85:
            lines = bytes(data).split(b"\n")
            data = bytearray(b"\n".join(lines + lines[1:]))  # every row twice
        else:
            data += data[data.find(b"\n") + 1:][: rng.randrange(200)]  # a torn extra row
    path = os.path.join(tmp, "resume.csv")
    with open(path, "wb") as f:
        f.write(bytes(data))
    return ["--resume", path]


def check(bench, args, tmp, sweep):
    full = args + (TINY + ["--out", os.path.join(tmp, "sweep.csv")] if sweep else ["--list"])
    if sweep:
        for f in os.listdir(tmp):
            if f.startswith("sweep.csv"):
                os.unlink(os.path.join(tmp, f))
    try:
        p = subprocess.run([bench] + full, cwd=tmp, capture_output=True, timeout=120 if sweep else 60)
    except subprocess.TimeoutExpired:
        return full, "hung (no exit within the timeout)"
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace")
    lines = [l for l in err.split("\n") if l.strip()]  # a line is what ends in a newline
    if p.returncode < 0:
        return full, "killed by signal %d; stderr tail: %s" % (-p.returncode, lines[-3:])
    if SANITIZER.search(err):
        return full, "sanitizer report or traceback: %s" % err[-1500:]
    if p.returncode == 2:
        if len(lines) != 1 or not lines[0].startswith("linstate-bench: "):
            return full, "exit 2 without exactly one 'linstate-bench:' line: %r" % lines[:6]
        if out.strip():
            return full, "exit 2 with stdout: %r" % out[:300]
        return None
    if p.returncode == 0:
        asked_help = any(a in ("--help", "-h") for a in full)
        if asked_help:
            return None if out.startswith("usage:") else (full, "exit 0 for --help without the usage text")
        if not sweep and "--explain" not in full and "--benchmark_list_tests" not in " ".join(full):
            bad = [l for l in out.splitlines() if not re.match(r"^[a-z0-9_]+/[a-z_]+/\S+$", l)]
            if bad or not out.strip():
                return full, "exit 0 for --list without a case list: %r" % (bad[:3] or out[:200])
        return None
    if p.returncode == 1 and sweep:
        return None  # a failed case (e.g. a plugin's), reported on stderr
    return full, "exit %d; stderr tail: %s" % (p.returncode, lines[-4:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--max-runs", type=int, default=100000)
    a = ap.parse_args()
    a.bench = os.path.abspath(a.bench)
    flags, words = help_vocabulary(a.bench)
    if len(flags) < 20:
        print("FAIL: only %d flags found in --help" % len(flags), file=sys.stderr)
        return 1
    rng = random.Random(a.seed)
    failures, runs, t0, stats = [], 0, time.time(), {}
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.csv")  # the seed of the --resume files
        p = subprocess.run([a.bench] + TINY + ["--family", "pool/alloc,pool/free", "--batch", "1,2", "--out", base],
                           cwd=tmp, capture_output=True, timeout=120)
        if p.returncode != 0:
            print("FAIL: the base sweep: rc %d %s" % (p.returncode, p.stderr[-500:]), file=sys.stderr)
            return 1
        with open(base, "rb") as f:
            base_csv = f.read()
        while runs < a.max_runs and time.time() - t0 < a.budget:
            args = argv(rng, flags, words, tmp)
            sweep = rng.random() < 0.125
            if sweep and rng.random() < 0.5:  # the resume reader, with valid flags
                args = mutated_resume(rng, base_csv, tmp)
            res = check(a.bench, args, tmp, sweep)
            stats[sweep] = stats.get(sweep, 0) + 1
            runs += 1
            if res:
                failures.append(res)
                print("FAIL: %s\n  replay: %s %s" % (res[1], a.bench, shlex.join(res[0])), file=sys.stderr)
                if len(failures) >= 20:
                    break
    print("%d argvs (%d sweeps) in %.1f s (seed %d), %d failure(s)" % (runs, stats.get(True, 0), time.time() - t0,
                                                                     a.seed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
