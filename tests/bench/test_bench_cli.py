#!/usr/bin/env python3
"""End-to-end tests of the linstate-bench binary on the host backend.

usage: test_bench_cli.py CHECK BENCH_BINARY HEADER_TOOL
CHECK is one of: smoke errors list filter json repetitions sigint worker_kill variants quick impls fleet
noise, or
one of the output-file checks (issue 13): files_same_out files_same_out_together files_default_name files_disk_full
files_out_dir files_final_exists files_json_stdout. Each check runs the binary in a temporary
directory and exits non-zero with a message on failure.
"""
import csv
import glob
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

KEY_RE = re.compile(r"^[a-z0-9_]+/[a-z]+/[a-z0-9.-]+/tp[0-9]+/B:[0-9]+/T:[0-9]+/(fp32|bf16)(/graph)?$")
# A tiny, fast host sweep: 3 presets x every family, tp 8, B 1,2, T 1,2.
TINY = ["--backend", "host", "--tp", "8", "--batch", "1,2", "--draft", "1,2",
        "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.05"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(bench, args, tmp, timeout=150, env=None):
    p = subprocess.run([bench] + args, cwd=tmp, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def listed(bench, args, tmp):
    rc, out, err = run(bench, args + ["--list"], tmp)
    if rc != 0:
        fail("--list %s: rc %d: %s" % (args, rc, err))
    return [l for l in out.splitlines() if l]


def read_csv(path, header):
    """Rows of a result CSV after checking its header and every row's column count."""
    with open(path, newline="") as f:
        first = f.readline().rstrip("\n")
        if first != header:
            fail("CSV header differs from ls_csv_header():\n  %s\n  %s" % (first, header))
        f.seek(0)
        rows = list(csv.reader(f))
    names = rows[0]
    for i, r in enumerate(rows[1:]):
        if len(r) != len(names):
            fail("row %d has %d columns, header %d" % (i + 1, len(r), len(names)))
    return [dict(zip(names, r)) for r in rows[1:]]


def temps(path):
    """The private temporaries of an output file (PATH.tmp.XXXXXX), and the old PATH.tmp."""
    return glob.glob(glob.escape(path) + ".tmp*")


def check_smoke(bench, header, tmp):
    out_csv = os.path.join(tmp, "sub", "run.csv")
    keys = listed(bench, TINY, tmp)
    rc, out, err = run(bench, TINY + ["--out", out_csv], tmp)
    if rc != 0:
        fail("tiny sweep rc %d\n%s" % (rc, err[-3000:]))
    rows = read_csv(out_csv, header)
    if [r["case"] for r in rows] != keys:
        fail("CSV cases differ from --list: %d rows vs %d listed" % (len(rows), len(keys)))
    if len(rows) < 30:
        fail("only %d rows" % len(rows))
    families = {r["case"].split("/")[0] for r in rows}
    for fam in ("conv1d_update", "gdn", "kda", "mamba2_ssu", "pool"):
        if fam not in families:
            fail("family %s missing from the sweep" % fam)
    for r in rows:
        if r["status"] != "ok":
            fail("%s: status %s" % (r["case"], r["status"]))
        if r["backend"] != "host" or int(r["samples"]) < 1 or float(r["time_us_median"]) <= 0:
            fail("%s: backend/samples/time wrong: %s" % (r["case"], r))
        if int(r["bytes"]) <= 0 or float(r["gbps"]) <= 0 or float(r["copy_peak_gbps"]) <= 0:
            fail("%s: bytes/gbps/copy peak not positive" % r["case"])
        if r["pct_of_copy_peak"] != "":  # host rows fit in caches: no share of the copy peak
            fail("%s: pct_of_copy_peak %r on the host backend, expected empty" % (r["case"], r["pct_of_copy_peak"]))
        if r["max_rel_err"] == "" or float(r["max_rel_err"]) != 0.0:
            fail("%s: host backend vs reference max_rel_err %r, expected 0" % (r["case"], r["max_rel_err"]))
        if int(r["layers"]) < 1 or int(r["pool_slots"]) < int(r["batch"]) + 1:
            fail("%s: layers %s pool_slots %s" % (r["case"], r["layers"], r["pool_slots"]))
        if not KEY_RE.match(r["case"]):
            fail("bad key " + r["case"])
        if r["held"] != "0":  # the host backend has no stream hold
            fail("%s: held %r on the host backend, expected 0" % (r["case"], r["held"]))
    if temps(out_csv):
        fail("temporary CSV left behind: %s" % temps(out_csv))
    # A case that cannot fit (Falcon-H1 tp1, 65536 requests x 8 drafts) is a skipped:oom row.
    oom_csv = os.path.join(tmp, "oom.csv")
    rc, _, _ = run(bench, ["--backend", "host", "--model", "falcon-h1-7b", "--tp", "1", "--batch", "65536",
                             "--draft", "8", "--family", "mamba2_ssu/verify,pool/accept", "--out", oom_csv], tmp)
    oom = read_csv(oom_csv, header)
    if rc != 0 or len(oom) != 2 or any(r["status"] != "skipped:oom" or r["time_us_median"] != "" for r in oom):
        fail("over-budget cases: rc %d rows %s" % (rc, [(r["case"], r["status"]) for r in oom]))
    table = out.splitlines()
    if not table or not table[0].startswith("case") or "rows:" not in table[-1] or len(table) != len(rows) + 2:
        fail("stdout is not the final table:\n" + out[:2000])
    if not re.search(r"^\[1/%d\] " % len(rows), err, re.M) or "ETA" not in err:
        fail("no [i/N] ... ETA progress on stderr")


def check_errors(bench, header, tmp):
    cases = [
        (["--model", "nope-model"], "nope-model"),
        (["--tp", "3"], "3"),
        (["--batch", "0"], "'0'"),
        (["--draft", "x"], "'x'"),
        (["--frobnicate"], "--frobnicate"),
        (["--state-dtype", "fp64"], "fp64"),
        (["--cache", "lukewarm"], "lukewarm"),
        (["--family", "attention"], "attention"),
        (["--devices", "7"], "7"),
        (["--variant", "bogus"], "bogus"),
        (["--impl", "nosuch"], "nosuch"),
        (["--impl", "host,host"], "host"),
        (["--tune", "pdl=off"], "pdl=off"),          # the host impl has no knobs
        (["--tune", "host:pdl=off"], "pdl"),
        (["--state-layout", "kvv"], "kvv"),
        (["--state-layout", "vk,vk"], "vk"),
        (["--batch", "4,1,4"], "'4'"),                   # duplicate axis values: an error,
        (["--draft", "1,1"], "'1'"),                     # never two repetitions under one key
        (["--model", "nemotron-h-8b,nemotron-h-8b"], "nemotron-h-8b"),
        (["--family", "gdn,gdn"], "gdn"),
        (["--noise-target", "-1"], "'-1'"),
        (["--noise-target", "half"], "'half'"),
        (["--max-samples", "0"], "'0'"),
        (["--max-samples", "20000"], "'20000'"),
        (["--min-samples", "50", "--max-samples", "10"], "'10'"),
        (["--samples-out", ""], "--samples-out"),
        (["--case-timeout", "-1"], "'-1'"),
        (["--case-timeout", "soon"], "'soon'"),
        (["--case-timeout", "1e9"], "'1e9'"),
        (["--case-timeout", "nan"], "'nan'"),
        (["--case-timeout"], "--case-timeout"),
        (["--case-timeout", "0x10", "--list"], "'0x10'"),
        # a minimum above a maximum the user did not give names the value given (the defaults
        # are fixed, docs/timing.md), not the other flag's default
        (["--min-time", "5", "--list"], "--min-time: bad value '5'"),
        (["--max-time", "0.01", "--list"], "--max-time: bad value '0.01'"),
        (["--min-time", "1", "--max-time", "0.5", "--list"], "--max-time: bad value '0.5' (must be >= --min-time 1)"),
        (["--min-samples", "20000", "--list"], "--min-samples: bad value '20000' (an integer from 1 to 10000)"),
        # decimal notation only: strtod's hex, inf and nan are refused
        (["--min-time", "0x10", "--max-time", "20", "--list"], "'0x10'"),
        (["--max-time", "inf", "--list"], "'inf'"),
        (["--min-time", "nan", "--list"], "'nan'"),
        (["--noise-target", "0x1", "--list"], "'0x1'"),
        (["--noise-target", "inf", "--list"], "'inf'"),
        (["--repetitions", "100001", "--list"], "from 1 to 100000"),   # the range stated is the one checked
        (["--rank", "70000", "--list"], "from 0 to 65535"),
        (["--variant", "all,all", "--list"], "listed twice"),
        (["--variant", "fused,fused", "--list"], "listed twice"),
        (["--family", "nosuch"], "conv_delta"),              # the message lists every family
        # a regex GB reads otherwise than the plan (GB refuses \w and runs nothing)
        (["--benchmark_filter=pool/cop\\w"], "pool/cop\\w"),
        # --samples-out follows --out's file rules, checked before anything is measured
        (["--samples-out", "file.csv/x.csv"], "file.csv/x.csv"),
        (["--samples-out", "adir"], "adir"),
        # two flags naming one file
        (["--samples-out", "never.csv"], "--samples-out never.csv"),
        (["--samples-out", "./sub/../s.csv", "--benchmark_out=s.csv"], "same file"),
        (["--benchmark_out=./never.csv"], "--benchmark_out ./never.csv"),
    ]
    out_csv = os.path.join(tmp, "never.csv")
    with open(os.path.join(tmp, "file.csv"), "w") as f:
        f.write("not a directory\n")
    os.mkdir(os.path.join(tmp, "adir"))
    os.mkdir(os.path.join(tmp, "sub"))
    for args, value in cases:
        rc, out, err = run(bench, ["--backend", "host", "--out", out_csv] + args, tmp)
        lines = [l for l in err.splitlines() if l.strip()]
        if rc != 2:
            fail("%s: rc %d, expected 2 (stderr: %s)" % (args, rc, err))
        if len(lines) != 1 or value not in lines[0]:
            fail("%s: expected ONE stderr line naming %s, got %r" % (args, value, err))
        if os.path.exists(out_csv) or temps(out_csv) or glob.glob(os.path.join(tmp, "s.csv*")):
            fail("%s: a CSV was written" % args)
        if "copy peak" in err or not no_case_ran(err):
            fail("%s: the worker started before the error" % args)
    if os.listdir(os.path.join(tmp, "adir")) or open(os.path.join(tmp, "file.csv")).read() != "not a directory\n":
        fail("an output named by a bad flag was changed")
    rc, out, _ = run(bench, ["--help"], tmp)
    if rc != 0 or "--state-dtype" not in out or "--tp 8 --batch 1,4 --draft 1,4" not in out or \
            "--case-timeout" not in out:
        fail("--help does not document the flags and the host defaults")
    # printed as is (fputs): no printf escapes; every family of the registry; the schema's place
    if "%%" in out or "conv_delta" not in out or "docs/csv.md" not in out or "results/README.md" in out:
        fail("--help: '%%', a family missing or the schema's old place:\n" + out[:600])


def check_list(bench, header, tmp):
    out_csv = os.path.join(tmp, "x.csv")
    rc, _, err = run(bench, ["--backend", "host", "--out", out_csv, "--list"], tmp)
    # it runs nothing: no progress line, no output file or temporary (not a wall-clock bound,
    # which a loaded machine could miss)
    if rc != 0 or not no_case_ran(err) or "(nothing run)" not in err or os.path.exists(out_csv) or temps(out_csv):
        fail("--list ran something: rc %d, files %s:\n%s" % (rc, os.listdir(tmp), err[-1500:]))
    keys = listed(bench, ["--backend", "host", "--out", out_csv], tmp)
    if len(keys) != 62:  # host defaults: 3 presets x tp 8 x B 1,4 x T 1,4 (+ conv_delta on 2)
        fail("default host plan has %d cases, expected 62" % len(keys))
    if os.path.exists(out_csv) or temps(out_csv):
        fail("--list wrote a CSV")
    if any(not KEY_RE.match(k) for k in keys) or len(set(keys)) != len(keys):
        fail("bad or duplicate keys in --list")
    keys = listed(bench, ["--backend", "host", "--tp", "2", "--batch", "64", "--draft", "1,4"], tmp)
    for k in ("gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32",
              "conv1d_update/decode/kimi-linear-48b-a3b/tp2/B:64/T:1/bf16",
              "mamba2_ssu/decode/nemotron-h-8b/tp2/B:64/T:1/fp32", "pool/accept/kimi-linear-48b-a3b/tp2/B:64/T:4/fp32"):
        if k not in keys:
            fail("missing %s in --list" % k)
    if any(k.startswith("kda/") and "qwen3" in k for k in keys):
        fail("kda planned for a GDN preset")


def check_gb_list(bench, header, tmp):
    """--benchmark_list_tests (any true spelling) is --list in GB's words: its full names on stdout,
    one per line, nothing run, no file written, an existing --out and --benchmark_out untouched;
    =false runs as usual."""
    small = TINY + ["--family", "pool/copy", "--model", "qwen3-next-80b-a3b"]
    keep, keep_json = os.path.join(tmp, "keep.csv"), os.path.join(tmp, "keep.json")
    rc, _, err = run(bench, small + ["--out", keep], tmp)
    if rc != 0 or len(read_csv(keep, header)) != 2:
        fail("first run: rc %d: %s" % (rc, err[-1500:]))
    with open(keep_json, "w") as f:
        f.write("{}\n")
    before = {p: (open(p).read(), os.stat(p).st_mtime_ns) for p in (keep, keep_json)}
    want = [k + "/iterations:1/manual_time" for k in listed(bench, small, tmp)]
    for flag in ("--benchmark_list_tests=true", "--benchmark_list_tests", "--benchmark_list_tests=YES",
                 "--benchmark_list_tests=1"):
        rc, out, err = run(bench, small + ["--out", keep, "--benchmark_out=" + keep_json, flag], tmp)
        if rc != 0 or [l for l in out.splitlines() if l] != want:
            fail("%s: rc %d, stdout %r (want GB's names %r)\n%s" % (flag, rc, out[:500], want, err[-800:]))
        if not no_case_ran(err) or "copy peak" in err or "wrote" in err or "(nothing run)" not in err:
            fail("%s ran something:\n%s" % (flag, err[-1500:]))
        if {p: (open(p).read(), os.stat(p).st_mtime_ns) for p in before} != before or temps(keep) or temps(keep_json):
            fail("%s touched %s or left a temporary" % (flag, list(before)))
    rc, out, err = run(bench, small + ["--out", keep, "--benchmark_list_tests=false"], tmp)
    if rc != 0 or len(read_csv(keep, header)) != 2 or no_case_ran(err):
        fail("--benchmark_list_tests=false: rc %d:\n%s" % (rc, err[-1500:]))


def check_filter(bench, header, tmp):
    out_csv = os.path.join(tmp, "f.csv")
    rc, out, err = run(bench, TINY + ["--out", out_csv, "--benchmark_filter=gdn/decode"], tmp)
    if rc != 0:
        fail("filtered run rc %d: %s" % (rc, err[-2000:]))
    rows = read_csv(out_csv, header)
    if sorted(r["case"] for r in rows) != ["gdn/decode/qwen3-next-80b-a3b/tp8/B:1/T:1/fp32",
                                           "gdn/decode/qwen3-next-80b-a3b/tp8/B:2/T:1/fp32"]:
        fail("--benchmark_filter=gdn/decode ran %s" % [r["case"] for r in rows])
    keys = listed(bench, TINY + ["--benchmark_filter=-pool"], tmp)
    if not keys or any(k.startswith("pool/") for k in keys):
        fail("negative filter -pool not applied to the plan")


def check_json(bench, header, tmp):
    out_csv, out_json = os.path.join(tmp, "j.csv"), os.path.join(tmp, "run.json")
    args = TINY + ["--family", "gdn,pool/copy", "--out", out_csv,
                   "--benchmark_out=" + out_json, "--benchmark_out_format=json"]
    rc, out, err = run(bench, args, tmp)
    if rc != 0:
        fail("json run rc %d: %s" % (rc, err[-2000:]))
    rows = read_csv(out_csv, header)
    with open(out_json) as f:
        doc = json.load(f)
    names = [b["name"] for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if len(names) != len(rows) or not rows:
        fail("JSON has %d benchmarks, CSV %d rows" % (len(names), len(rows)))
    for n, r in zip(names, rows):
        if not n.startswith(r["case"] + "/"):
            fail("JSON name %s does not start with case %s" % (n, r["case"]))
    b = doc["benchmarks"][0]
    if abs(b["real_time"] - float(rows[0]["time_us_median"])) > 1e-3 * float(rows[0]["time_us_median"]) + 1e-3:
        fail("JSON real_time %s != CSV median %s" % (b["real_time"], rows[0]["time_us_median"]))
    if doc["context"].get("linstate_backend") != "host":
        fail("JSON context lacks linstate_backend")


def check_repetitions(bench, header, tmp):
    for extra in (["--repetitions", "2"], ["--benchmark_repetitions=2"]):
        out_csv = os.path.join(tmp, "r.csv")
        rc, out, err = run(bench, TINY + ["--family", "pool/copy", "--model", "kimi-linear-48b-a3b",
                                          "--out", out_csv] + extra, tmp)
        if rc != 0:
            fail("%s: rc %d: %s" % (extra, rc, err[-2000:]))
        rows = read_csv(out_csv, header)
        got = sorted((r["case"], int(r["repetition"])) for r in rows)
        want = sorted((k, rep) for k in ("pool/copy/kimi-linear-48b-a3b/tp8/B:1/T:1/fp32",
                                         "pool/copy/kimi-linear-48b-a3b/tp8/B:2/T:1/fp32") for rep in (0, 1))
        if got != want:
            fail("%s: rows %s" % (extra, got))


def rows_in_temp(path):
    """Data rows in the run's temporary CSV so far (0 while there is none)."""
    for t in temps(path):
        try:
            with open(t) as f:
                return max(0, sum(1 for _ in f) - 1)
        except FileNotFoundError:
            pass
    return 0


SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGPIPE, 141)]


def interrupt(bench, tmp, name, sig, extra=()):
    """Runs a long sweep (CSV, --samples-out, GB JSON) until 2 rows are on disk, sends sig to it;
    returns (rc, stderr, csv path, samples path, json path)."""
    out_csv, samples = os.path.join(tmp, name + ".csv"), os.path.join(tmp, name + ".samples.csv")
    out_json = os.path.join(tmp, name + ".json")
    args = ["--backend", "host", "--tp", "8", "--batch", "1,2,3,4,5,6,7,8", "--draft", "1,2,3,4",
            "--min-samples", "50", "--min-time", "0.1", "--max-time", "0.3", "--out", out_csv,
            "--samples-out", samples, "--benchmark_out=" + out_json] + list(extra)
    p = subprocess.Popen([bench] + args, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None and rows_in_temp(out_csv) < 2:
        time.sleep(0.02)
    if p.poll() is not None:
        fail("sweep finished before it could be interrupted (rc %s)" % p.returncode)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    return p.returncode, err, out_csv, samples, out_json


def check_sigint(bench, header, tmp):
    """SIGINT, SIGTERM, SIGHUP and SIGPIPE: exit 128 + signal, the rows measured so far in the final
    CSV and their samples in the final sidecar (no temporaries, GB's incomplete JSON removed), and
    a summary line naming the signal and the rows kept."""
    for sig, want in SIGNALS:
        name = signal.Signals(sig).name
        rc, err, out_csv, samples, out_json = interrupt(bench, tmp, name.lower(), sig)
        if rc != want:
            fail("%s: rc %s, expected %d\n%s" % (name, rc, want, err[-2000:]))
        left = temps(out_csv) + temps(samples) + temps(out_json)
        if not os.path.exists(out_csv) or not os.path.exists(samples) or left:
            fail("%s: CSV %s / samples %s not in place, temporaries left %s" % (
                name, os.path.exists(out_csv), os.path.exists(samples), left))
        rows = read_csv(out_csv, header)
        if len(rows) < 2:
            fail("%s: %d rows kept, expected >= 2" % (name, len(rows)))
        if any(r["status"] != "ok" for r in rows):
            fail("%s: a kept row is not ok" % name)
        m = re.search(r"interrupted by %s: (\d+) rows kept in (\S+); (\d+) rows kept in (\S+)" % name, err)
        if not m or int(m.group(1)) != len(rows) or m.group(2) != out_csv or m.group(4) != samples:
            fail("%s: no summary of the rows kept:\n%s" % (name, err[-1500:]))
        with open(samples, newline="") as f:
            srows = list(csv.DictReader(f))
        if int(m.group(3)) != len(srows) or {(r["case"], r["repetition"]) for r in srows} != \
                {(r["case"], r["repetition"]) for r in rows}:
            fail("%s: the sidecar's samples do not match the kept rows" % name)


def worker_pid(pid):
    """The worker process of a running linstate-bench (its one child)."""
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        kids = f.read().split()
    return int(kids[0]) if kids else None


def check_worker_kill(bench, header, tmp):
    """SIGKILL of the worker during a case: that case's row is error:crash naming SIGKILL, a new
    worker measures the next cases (ok), and the run goes on until interrupted. (A kill that
    lands in the instant between two cases costs no row: the next case simply starts a new
    worker; the check is then made again, up to 3 times.)"""
    for attempt in range(3):
        out_csv = os.path.join(tmp, "k%d.csv" % attempt)
        p = subprocess.Popen([bench] + LONG + ["--out", out_csv], cwd=tmp, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None and rows_in_temp(out_csv) < 2:
            time.sleep(0.02)
        time.sleep(0.05)  # into the next case (each measures >= --min-time 0.1 s)
        w = worker_pid(p.pid) if p.poll() is None else None
        if not w:
            fail("no worker process under the running sweep (rc %s)" % p.poll())
        os.kill(w, signal.SIGKILL)
        at = rows_in_temp(out_csv)
        while time.time() < deadline and p.poll() is None and rows_in_temp(out_csv) < at + 3:
            time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        if p.returncode != 130:
            fail("rc %s after the worker was killed and the run interrupted\n%s" % (p.returncode, err[-2000:]))
        rows = read_csv(out_csv, header)
        crashed = [i for i, r in enumerate(rows) if r["status"] != "ok"]
        if not crashed and attempt < 2:
            continue
        if len(crashed) != 1 or rows[crashed[0]]["status"] != "error:crash" or \
                "SIGKILL" not in rows[crashed[0]]["message"]:
            fail("want exactly one error:crash row naming SIGKILL: %s" % [(r["case"], r["status"], r["message"])
                                                                           for r in rows if r["status"] != "ok"])
        if len(rows) < crashed[0] + 3:
            fail("no ok rows after the killed worker's case")
        return


VARIANT_PAIRS = {  # op (mechanism) -> (default variant, the other)
    ("pool/copy", None): ("fused", "per-tensor"),
    ("pool/accept", None): ("fused", "per-tensor"),
    ("conv1d_update/decode", "kda"): ("3-buffer", "concat"),
    ("conv1d_update/verify", "kda"): ("3-buffer", "concat"),
    ("conv1d_update/verify", "gdn"): ("in-place", "clone"),
}


def check_variants(bench, header, tmp):
    """--variant all: --list shows both variants of a key with unique GB names, the run writes
    one row per variant with the `variant` column set, every row verified (error 0)."""
    base = ["--backend", "host", "--tp", "8", "--batch", "1,9", "--draft", "1,4",
            "--model", "qwen3-next-80b-a3b,kimi-linear-48b-a3b",
            "--family", "pool/copy,pool/accept,conv1d_update",
            "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.05"]
    args = base + ["--variant", "all"]
    names = listed(bench, args, tmp)
    if len(set(names)) != len(names):
        fail("--variant all --list has duplicate GB names")
    for n in names:
        key, _, variant = n.partition("/variant:")
        if not KEY_RE.match(key):
            fail("bad key in GB name " + n)
        if variant and key not in names:
            fail("%s listed without its default variant" % n)
    for want in ("/variant:per-tensor", "/variant:concat", "/variant:clone"):
        if not any(n.endswith(want) for n in names):
            fail("--variant all --list lacks %s" % want)
    if len(names) != 2 * len({n.partition("/variant:")[0] for n in names}) - 2:
        # every key twice except qwen's conv decode (B 1, 9): one variant only
        fail("unexpected number of cases: %d" % len(names))
    out_csv = os.path.join(tmp, "v.csv")
    rc, out, err = run(bench, args + ["--out", out_csv], tmp)
    if rc != 0:
        fail("variant run rc %d: %s" % (rc, err[-3000:]))
    rows = read_csv(out_csv, header)
    if len(rows) != len(names):
        fail("%d rows for %d listed cases" % (len(rows), len(names)))
    seen = {}
    for r in rows:
        if r["status"] != "ok" or float(r["max_rel_err"]) != 0.0:
            fail("%s variant %s: status %s err %s" % (r["case"], r["variant"], r["status"], r["max_rel_err"]))
        if not r["variant"]:
            fail("%s: empty variant column" % r["case"])
        seen.setdefault(r["case"], []).append(r)
    for case, rs in seen.items():
        op = "/".join(case.split("/")[:2])
        pair = VARIANT_PAIRS.get((op, None)) or VARIANT_PAIRS.get((op, rs[0]["mechanism"]))
        got = sorted(r["variant"] for r in rs)
        if pair and got != sorted(pair):
            fail("%s: variants %s, expected %s" % (case, got, sorted(pair)))
        if pair and len({r["bytes"] for r in rs}) != 1:
            fail("%s: bytes differ between variants %s" % (case, [(r["variant"], r["bytes"]) for r in rs]))
        if op == "conv1d_update/verify" and rs[0]["mechanism"] == "gdn" and \
                any(int(r["pool_slots"]) != max(48, int(r["batch"])) + 1 for r in rs):
            fail("%s: GDN verify pool_slots %s, expected max(48, B) + 1" % (case, [r["pool_slots"] for r in rs]))
    progress = [l for l in err.splitlines() if l.startswith("[")]
    if not any("/variant:clone" in l for l in progress):
        fail("progress lines do not name the variant")
    # Only the named variant (and GB's filter sees the suffix).
    names = listed(bench, base + ["--variant", "concat"], tmp)
    if not names or any(not n.endswith("/variant:concat") for n in names):
        fail("--variant concat planned %s" % names)


QUICK_OPS = {  # the rows of results/h200/kernels.md's summary table: (family/op, model, T)
    ("gdn/decode", "qwen3-next-80b-a3b", 1), ("gdn/verify", "qwen3-next-80b-a3b", 4),
    ("kda/decode", "kimi-linear-48b-a3b", 1),
    ("mamba2_ssu/decode", "nemotron-h-8b", 1), ("mamba2_ssu/verify", "nemotron-h-8b", 4),
    ("conv1d_update/decode", "qwen3-next-80b-a3b", 1), ("conv1d_update/verify", "qwen3-next-80b-a3b", 4),
    ("pool/copy", "qwen3-next-80b-a3b", 1), ("pool/accept", "qwen3-next-80b-a3b", 4),
}


def check_quick(bench, header, tmp):
    """--quick --list plans the kernels.md table: 9 ops x (B 1, 64, 128, 512 eager + B 1 graph) at
    tp 2, fp32 (bf16 conv keys), on the host backend too (the preset beats the host defaults);
    explicit axes override it."""
    keys = listed(bench, ["--backend", "host", "--quick"], tmp)
    if len(keys) != 45 or len(set(keys)) != 45:
        fail("--quick planned %d cases (%d distinct), expected 45" % (len(keys), len(set(keys))))
    if any(not KEY_RE.match(k) for k in keys):
        fail("bad key in --quick --list")
    got = set()
    for k in keys:
        fam, op, model, tp, b, t, dt = k.split("/")[:7]
        graph = k.endswith("/graph")
        got.add(("%s/%s" % (fam, op), model, int(t[2:])))
        if tp != "tp2" or dt != ("bf16" if fam == "conv1d_update" else "fp32"):
            fail("--quick: %s not at tp 2 / fp32 state" % k)
        if int(b[2:]) not in (1, 64, 128, 512) or (graph and b != "B:1"):
            fail("--quick: %s: batch outside 1,64,128,512 or a graph case off B = 1" % k)
    if got != QUICK_OPS:
        fail("--quick ops differ from the kernels.md table: extra %s, missing %s" %
             (sorted(got - QUICK_OPS), sorted(QUICK_OPS - got)))
    for k in ("gdn/decode/qwen3-next-80b-a3b/tp2/B:1/T:1/fp32/graph",
              "gdn/decode/qwen3-next-80b-a3b/tp2/B:512/T:1/fp32",
              "conv1d_update/decode/qwen3-next-80b-a3b/tp2/B:512/T:1/bf16",
              "conv1d_update/verify/qwen3-next-80b-a3b/tp2/B:1/T:4/bf16/graph",
              "kda/decode/kimi-linear-48b-a3b/tp2/B:1/T:1/fp32/graph",
              "mamba2_ssu/verify/nemotron-h-8b/tp2/B:64/T:4/fp32",
              "pool/copy/qwen3-next-80b-a3b/tp2/B:1/T:1/fp32/graph",
              "pool/accept/qwen3-next-80b-a3b/tp2/B:128/T:4/fp32"):
        if k not in keys:
            fail("--quick --list lacks %s" % k)
    if sum(k.endswith("/graph") for k in keys) != 9:
        fail("--quick: expected one graph case (B = 1) per op")
    # explicit axes override the preset: --batch (graph still at B = 1 only), --graph, --model
    keys = listed(bench, ["--backend", "host", "--quick", "--batch", "1,8"], tmp)
    if len(keys) != 27 or any(k.endswith("/graph") and "/B:1/" not in k for k in keys):
        fail("--quick --batch 1,8 planned %d cases" % len(keys))
    keys = listed(bench, ["--backend", "host", "--quick", "--graph", "off"], tmp)
    if len(keys) != 36 or any(k.endswith("/graph") for k in keys):
        fail("--quick --graph off planned %d cases" % len(keys))
    keys = listed(bench, ["--backend", "host", "--quick", "--model", "nemotron-h-8b", "--batch", "64"], tmp)
    want = {"mamba2_ssu/decode", "mamba2_ssu/verify", "conv1d_update/decode", "conv1d_update/verify",
            "pool/copy", "pool/accept"}
    if {"/".join(k.split("/")[:2]) for k in keys} != want or len(keys) != 6:
        fail("--quick --model nemotron-h-8b --batch 64 planned %s" % keys)
    # a small run: the compact table follows the final table on stdout, one row per op
    out_csv = os.path.join(tmp, "q.csv")
    args = ["--backend", "host", "--quick", "--tp", "8", "--batch", "1,2", "--model", "kimi-linear-48b-a3b",
            "--family", "kda/decode,pool/copy", "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.05",
            "--out", out_csv]
    rc, out, err = run(bench, args, tmp)
    if rc != 0:
        fail("--quick run rc %d: %s" % (rc, err[-2000:]))
    rows = read_csv(out_csv, header)
    lines = out.splitlines()
    try:
        at = lines.index("| op | model | B = 2 | B = 1 (graph) |")
    except ValueError:
        fail("no --quick table header on stdout:\n" + out[-2000:])
    if not lines[at - 2].startswith("%d rows:" % len(rows)):
        fail("the --quick table does not follow the final table")
    table = [l for l in lines[at + 2:] if l.startswith("| ")]
    if len(table) != 2 or not table[0].startswith("| kda decode | kimi-linear-48b-a3b tp8 fp32 | ") or \
            not table[1].startswith("| pool copy | "):
        fail("--quick table rows: %s" % table)
    # host rows have no % of copy peak (docs/csv.md), so the cell is "-", as in the CSV
    pct = {r["case"]: r["pct_of_copy_peak"] for r in rows if r["status"] == "ok"}
    cell = table[0].split("|")[3].strip()
    if pct["kda/decode/kimi-linear-48b-a3b/tp8/B:2/T:1/fp32"] != "" or cell != "-":
        fail("--quick cell %r / CSV pct_of_copy_peak on the host: expected '-' and empty" % cell)
    if table[0].split("|")[4].strip() != "no_graph":  # the host backend has no graphs
        fail("--quick graph cell on the host: %r" % table[0])


def check_impls(bench, header, tmp):
    """impl, tuning and state_layout columns; the layout axis; one row per (case, layout)."""
    out_csv = os.path.join(tmp, "impl.csv")
    rc, out, err = run(bench, TINY + ["--family", "gdn,kda", "--batch", "2", "--state-layout", "kv,vk",
                                      "--out", out_csv], tmp)
    if rc != 0:
        fail("layout sweep: rc %d: %s" % (rc, err))
    rows = list(csv.DictReader(open(out_csv)))
    if not rows or any(r["impl"] != "host" or r["tuning"] != "" or r["status"] != "ok" for r in rows):
        fail("layout sweep rows: %r" % [(r["impl"], r["tuning"], r["status"]) for r in rows])
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r["state_layout"])
    if len(by_case) != 4 or any(sorted(v) != ["kv", "vk"] for v in by_case.values()):
        fail("each gdn/kda case once per layout: %r" % by_case)
    names = listed(bench, TINY + ["--family", "gdn", "--batch", "2", "--state-layout", "vk"], tmp)
    if not names or any(not n.endswith("/layout:vk") for n in names):
        fail("vk cases are named .../layout:vk: %r" % names)
    rc, out, err = run(bench, TINY + ["--family", "pool/copy", "--batch", "1", "--out", out_csv], tmp)
    rows = list(csv.DictReader(open(out_csv)))
    if rc != 0 or any(r["state_layout"] != "" for r in rows):
        fail("pool rows have no state_layout: %r" % [r["state_layout"] for r in rows])
    rc, out, err = run(bench, ["--backend", "host", "--list", "--explain", "--family", "gdn"], tmp)
    if rc != 0 or "impl host (runtime host" not in out or "point 0: impl host" not in out:
        fail("--list --explain lists the impls: %r" % out[:300])


# ---------------------------------------------------------------- output files (issue 13, item 6)

# A sweep of many seconds, for runs that must overlap another.
LONG = ["--backend", "host", "--tp", "8", "--batch", "1,2,3,4,5,6,7,8", "--draft", "1,2,3,4",
        "--min-samples", "50", "--min-time", "0.1", "--max-time", "0.3"]


def start_and_wait(bench, args, tmp, path, rows=1):
    """Starts bench in the background; returns once its temporary of path holds `rows` rows."""
    p = subprocess.Popen([bench] + args, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None and (not temps(path) or rows_in_temp(path) < rows):
        time.sleep(0.02)
    if p.poll() is not None:
        fail("background run ended before its file was being written (rc %s)" % p.returncode)
    return p


def no_case_ran(err):
    return not re.search(r"^\[1/", err, re.M)


def check_files_same_out(bench, header, tmp):
    """A second run aimed at the --out another live run is writing stops before measuring (exit 2);
    the first run's file is whole."""
    out_csv = os.path.join(tmp, "x.csv")
    a = start_and_wait(bench, LONG + ["--out", out_csv], tmp, out_csv)
    rc, _, err = run(bench, TINY + ["--out", out_csv, "--batch", "1", "--draft", "1"], tmp)
    a.send_signal(signal.SIGINT)
    a.communicate(timeout=60)
    if rc != 2 or "another run" not in err or "x.csv" not in err or not no_case_ran(err):
        fail("second run on a busy --out: rc %d (expected 2, before any case):\n%s" % (rc, err[-1500:]))
    if "wrote" in err:
        fail("second run says it wrote")
    rows = read_csv(out_csv, header)  # every row has the header's column count
    if len(rows) < 1 or any(r["batch"] not in [str(b) for b in range(1, 9)] for r in rows):
        fail("first run's file holds foreign rows")
    if temps(out_csv):
        fail("temporaries left: %s" % temps(out_csv))


def check_files_same_out_together(bench, header, tmp):
    """Two runs started together on one --out: exactly one runs, the other is refused at start (one
    line, exit 2, nothing measured); 10 pairs at once. Each sweep times for at least 3 s
    (--min-time), far longer than the pair takes to start, so the loser always meets the winner's
    locked temporary, not its finished file. 400 stale temporaries (a crashed run's, unlocked) per
    file lengthen the look for a live one, as a folder of old crashes would; they block nothing
    and are left as they are."""
    args = ["--backend", "host", "--family", "pool/copy", "--model", "qwen3-next-80b-a3b", "--batch", "1",
            "--draft", "1", "--min-time", "3", "--max-time", "4"]
    outs = [os.path.join(tmp, "p%d.csv" % i) for i in range(10)]
    stale = {}
    for o in outs:
        stale[o] = sorted("%s.tmp.s%05d" % (o, k) for k in range(400))
        for t in stale[o]:
            with open(t, "w") as fh:
                fh.write(header + "\n")
    procs = [subprocess.Popen([bench] + args + ["--out", o], cwd=tmp, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for o in outs for _ in range(2)]
    res = [(p.returncode, err) for p in procs for _, err in [p.communicate(timeout=170)]]
    for i, o in enumerate(outs):
        pair = res[2 * i:2 * i + 2]
        rcs = sorted(rc for rc, _ in pair)
        if rcs != [0, 2]:
            fail("pair %d on %s: rc %s (expected one 0, one 2):\n%s" % (i, o, rcs, "\n---\n".join(
                e[-1200:] for _, e in pair)))
        refused = [e for rc, e in pair if rc == 2][0]
        lines = [l for l in refused.splitlines() if l.strip()]
        if len(lines) != 1 or "another run" not in lines[0] or not no_case_ran(refused):
            fail("pair %d: the refused run did not say one line before any case:\n%s" % (i, refused))
        left = sorted(temps(o))
        if len(read_csv(o, header)) != 1 or left != stale[o]:
            fail("pair %d: %s lacks the winner's row, or temporaries left: %s" % (i, o, sorted(set(left) - set(stale[o]))))


def check_files_default_name(bench, header, tmp):
    """Two runs started together with the default name write two whole files."""
    runs = [subprocess.Popen([bench] + TINY + ["--family", fam], cwd=tmp, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for fam in ("gdn", "kda")]
    outs = [p.communicate(timeout=150) for p in runs]
    for p, (_, err) in zip(runs, outs):
        if p.returncode != 0:
            fail("default-name run rc %d: %s" % (p.returncode, err[-1500:]))
    files = sorted(glob.glob(os.path.join(tmp, "results", "host", "*.csv")))
    if len(files) != 2:
        fail("two runs, %d default-named files: %s" % (len(files), files))
    fams = sorted({r["case"].split("/")[0] for r in read_csv(f, header)} for f in files)
    if sorted(tuple(sorted(f)) for f in fams) != [("gdn",), ("kda",)]:
        fail("each file holds one run's rows: %s" % fams)
    if not re.search(r"\d{8}T\d{6}\.\d{3}Z-\d+\.csv$", files[0]):
        fail("default name %s lacks milliseconds and pid" % files[0])


def limited(limit):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


def check_files_disk_full(bench, header, tmp):
    """A write that fails (file size limit; a 12 KiB tmpfs too when root can mount one): no file
    under the final name, no "wrote", exit 1, the error said once, the temporary named and holding
    whole rows only, as many as the error says; the sweep stops at once (no case measured after
    the failure); the final table shows the file's rows and the unsaved one as not_saved; the same
    for GB's JSON; a failed --samples-out write likewise, the CSV and sidecar keeping the same rows."""
    out_csv, out_json = os.path.join(tmp, "full.csv"), os.path.join(tmp, "full.json")
    p = subprocess.run([bench] + TINY + ["--out", out_csv, "--benchmark_out=" + out_json], cwd=tmp,
                       capture_output=True, text=True, timeout=150, preexec_fn=limited(8000))
    err = p.stderr
    if p.returncode != 1 or os.path.exists(out_csv) or os.path.exists(out_json) or "wrote" in err:
        fail("write failure: rc %d, final csv %s, json %s:\n%s" % (p.returncode, os.path.exists(out_csv),
                                                                  os.path.exists(out_json), err[-1500:]))
    kept = temps(out_csv)
    if len(kept) != 1 or kept[0] not in err:
        fail("the kept temporary %s is not named on stderr" % kept)
    whole_rows_only(kept[0], header, err)
    table_as_file(p.stdout, read_csv(kept[0], header))
    if len(temps(out_json)) != 1 or temps(out_json)[0] not in err:
        fail("incomplete JSON temporary not kept/named: %s" % temps(out_json))
    # the sidecar fails first, never on the first row (20 to 30 samples of ~100 bytes a row against
    # the CSV's ~600 bytes, whatever the machine's speed)
    samples_fail(bench, header, tmp, os.path.join(tmp, "m.csv"), os.path.join(tmp, "s.csv"), limited(8000))
    # a real full file system, where root may mount one
    mnt = os.path.join(tmp, "tiny")
    os.mkdir(mnt)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", mnt],
                                           capture_output=True).returncode != 0:
        print("note: no tmpfs mount here; the file size limit stands in for a full disk")
        return
    try:
        f = os.path.join(mnt, "f.csv")
        rc, out, err = run(bench, TINY + ["--out", f], tmp)
        if rc != 1 or os.path.exists(f) or "wrote" in err or not temps(f) or temps(f)[0] not in err:
            fail("full tmpfs: rc %d, final %s:\n%s" % (rc, os.path.exists(f), err[-1500:]))
        whole_rows_only(temps(f)[0], header, err)
        table_as_file(out, read_csv(temps(f)[0], header))
        os.unlink(temps(f)[0])
        # the sidecar alone on the full disk, the CSV elsewhere
        samples_fail(bench, header, tmp, os.path.join(tmp, "m2.csv"), os.path.join(mnt, "s.csv"), None)
    finally:
        subprocess.run(["umount", mnt], capture_output=True)


def table_as_file(out, rows):
    """The final table (stdout) shows the rows the file holds, and the unsaved one as not_saved,
    never as ok; its summary agrees."""
    shown = [l.split()[-1] for l in out.splitlines() if re.match(r"^[a-z0-9_]+/", l)]
    saved = [st for st in shown if st != "not_saved"]
    if saved != [r["status"] for r in rows] or shown.count("not_saved") != 1:
        fail("table statuses %s, file statuses %s" % (shown, [r["status"] for r in rows]))
    ok = sum(r["status"] == "ok" for r in rows)
    if not re.search(r"^%d rows: %d ok, .*\(1 not saved: %d rows in the file\)" % (len(shown), ok, len(rows)),
                     out, re.M):
        fail("summary disagrees with the file (%d rows, %d ok):\n%s" % (len(rows), ok, out[-600:]))


def samples_fail(bench, header, tmp, out_csv, samples, pre):
    """A --samples-out write that fails stops the sweep like a CSV one: said once, exit 1, neither
    file moved, both temporaries named and holding the same rows (each ok row of the CSV with all
    its samples, no sample of a row the CSV lacks)."""
    p = subprocess.run([bench] + TINY + ["--min-samples", "20", "--max-samples", "30", "--out", out_csv,
                                         "--samples-out", samples],
                       cwd=tmp, capture_output=True, text=True, timeout=150, preexec_fn=pre)
    err = p.stderr
    if p.returncode != 1 or os.path.exists(out_csv) or os.path.exists(samples) or "wrote" in err:
        fail("sidecar write failure: rc %d, final csv %s, samples %s:\n%s" % (
            p.returncode, os.path.exists(out_csv), os.path.exists(samples), err[-1500:]))
    if err.count("write to '") != 1 or "--samples-out: CSV: write to" not in err:
        fail("the sidecar's failure is not said once:\n%s" % err[-1500:])
    kc, ks = temps(out_csv), temps(samples)
    if len(kc) != 1 or len(ks) != 1 or kc[0] not in err or ks[0] not in err:
        fail("temporaries not kept and named: %s %s:\n%s" % (kc, ks, err[-1500:]))
    rows = read_csv(kc[0], header)
    with open(ks[0], newline="") as f:
        lines = list(csv.DictReader(f))
    per = {}
    for l in lines:
        k = (l["case"], l["repetition"])
        per[k] = per.get(k, 0) + 1
    want = {(r["case"], r["repetition"]): int(r["samples"]) for r in rows if r["status"] == "ok"}
    if not want or per != want:
        fail("CSV and sidecar disagree: CSV %s, sidecar %s" % (want, per))
    if not re.search(r"not moved to '%s' \(the --samples-out write failed\); its %d whole rows"
                     % (re.escape(out_csv), len(rows)), err):
        fail("the CSV's temporary and its rows are not said:\n%s" % err[-1500:])
    table_as_file(p.stdout, rows)


def whole_rows_only(path, header, err):
    """The kept temporary of a failed write: the header and whole rows, as many as stderr says
    were kept, and no case measured after the failed one."""
    with open(path, newline="") as f:
        text = f.read()
    if not text.startswith(header + "\n") or not text.endswith("\n"):
        fail("kept temporary lacks the header or ends in a torn row: %r" % text[-200:])
    rows = read_csv(path, header)  # every row has the header's column count
    if err.count("write to '") != 1:
        fail("the failed write is not said exactly once:\n%s" % err[-1500:])
    m = re.search(r"the (\d+) whole rows written before are kept there", err)
    if not m or int(m.group(1)) != len(rows):
        fail("stderr does not count the %d whole rows kept:\n%s" % (len(rows), err[-1500:]))
    measured = len(re.findall(r"^\[\d+/\d+\] ", err, re.M))
    if measured != len(rows) + 1 or "sweep stopped early" not in err:
        fail("%d cases measured for %d rows kept: the sweep did not stop at the failed write" % (measured, len(rows)))


def check_files_out_dir(bench, header, tmp):
    """--out DIR (and --benchmark_out=DIR, an unwritable folder) fail with one line, exit 2, before
    any case runs."""
    d = os.path.join(tmp, "d")
    os.mkdir(d)
    for args, word in ((["--out", d], "directory"), (["--benchmark_out=" + d, "--out", d + "/x.csv"], "directory")):
        rc, _, err = run(bench, LONG + args, tmp)
        if rc != 2 or word not in err or d not in err or not no_case_ran(err):
            fail("%s: rc %d (expected 2 before any case):\n%s" % (args, rc, err[-1500:]))
        if os.listdir(d):
            fail("%s left files in %s: %s" % (args, d, os.listdir(d)))
    if os.geteuid() != 0:  # root writes anywhere
        ro = os.path.join(tmp, "ro")
        os.mkdir(ro, 0o555)
        rc, _, err = run(bench, LONG + ["--out", os.path.join(ro, "x.csv")], tmp)
        if rc != 2 or "ro/x.csv" not in err or not no_case_ran(err):
            fail("unwritable folder: rc %d:\n%s" % (rc, err[-1500:]))


def check_files_final_exists(bench, header, tmp):
    """The final name created by another run while this one measured is not clobbered: exit 1,
    the other file untouched, this run's rows (CSV and JSON) kept in the named temporaries."""
    out_csv, out_json = os.path.join(tmp, "race.csv"), os.path.join(tmp, "race.json")
    p = start_and_wait(bench, TINY + ["--out", out_csv, "--benchmark_out=" + out_json], tmp, out_csv)
    for f in (out_csv, out_json):
        with open(f, "w") as fh:
            fh.write("theirs\n")
    _, err = p.communicate(timeout=150)
    if p.returncode != 1 or "wrote" in err:
        fail("final name taken during the run: rc %d:\n%s" % (p.returncode, err[-1500:]))
    for f in (out_csv, out_json):
        if open(f).read() != "theirs\n":
            fail("%s was clobbered" % f)
        kept = temps(f)
        if len(kept) != 1 or kept[0] not in err:
            fail("%s: this run's temporary not kept and named: %s" % (f, kept))
    rows = read_csv(temps(out_csv)[0], header)
    with open(temps(out_json)[0]) as fh:
        doc = json.load(fh)
    if not rows or len(doc["benchmarks"]) != len(rows):
        fail("kept files incomplete: %d rows, %d benchmarks" % (len(rows), len(doc["benchmarks"])))
    # an old result named again is replaced (the user asked for it)
    old = os.path.join(tmp, "old.csv")
    with open(old, "w") as fh:
        fh.write("old\n")
    rc, _, err = run(bench, TINY + ["--family", "gdn", "--out", old], tmp)
    if rc != 0 or len(read_csv(old, header)) < 1:
        fail("an existing --out is replaced: rc %d:\n%s" % (rc, err[-1500:]))


def check_files_json_stdout(bench, header, tmp):
    """--benchmark_format=json: stdout is one JSON document; our table goes to stderr."""
    out_csv = os.path.join(tmp, "j.csv")
    rc, out, err = run(bench, TINY + ["--family", "gdn", "--out", out_csv, "--benchmark_format=json"], tmp)
    if rc != 0:
        fail("rc %d: %s" % (rc, err[-1500:]))
    try:
        doc = json.loads(out)
    except ValueError as e:
        fail("stdout is not valid JSON (%s):\n%s" % (e, out[-800:]))
    if len(doc["benchmarks"]) != len(read_csv(out_csv, header)):
        fail("JSON benchmarks != CSV rows")
    if "rows:" not in err:
        fail("the final table is not on stderr")


def launcher_env(**extra):
    """The environment without any launcher's variables (the test may itself run under Slurm),
    plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SLURM") and k not in ("JOB_COMPLETION_INDEX", "JOB_NAME", "NODE_NAME")}
    env.update(extra)
    return env


def check_fleet(bench, header, tmp):
    small = TINY + ["--model", "qwen3-next-80b-a3b,nemotron-h-8b", "--draft", "1"]
    clean = launcher_env()
    rc, out, err = run(bench, small + ["--list"], tmp, env=clean)
    full = [l for l in out.splitlines() if l]
    if rc != 0 or len(full) < 6:
        fail("--list: rc %d, %d cases: %s" % (rc, len(full), err))
    # Shard: three ranks' lists are disjoint, cover the plan, keep plan order, differ in size by <= 1.
    shards = []
    for r in range(3):
        rc, out, err = run(bench, small + ["--list", "--fleet", "shard", "--rank", str(r), "--world", "3"], tmp, env=clean)
        if rc != 0 or ("fleet shard rank %d of 3 (flags)" % r) not in err:
            fail("--fleet shard --rank %d: rc %d: %s" % (r, rc, err))
        shards.append([l for l in out.splitlines() if l])
    merged = [n for s in shards for n in s]
    if sorted(merged) != sorted(full) or len(set(merged)) != len(full):
        fail("shards are not a partition of the plan: %r" % shards)
    if any(s != [n for n in full if n in s] for s in shards) or max(map(len, shards)) - min(map(len, shards)) > 1:
        fail("shards keep plan order and balance: %r" % shards)
    # The same split from Slurm's variables, and from a Kubernetes index; flags win.
    slurm = launcher_env(SLURM_PROCID="1", SLURM_NTASKS="3", SLURM_JOB_ID="4242", SLURMD_NODENAME="n7")
    rc, out, err = run(bench, small + ["--list", "--fleet", "shard"], tmp, env=slurm)
    if rc != 0 or [l for l in out.splitlines() if l] != shards[1] or "(slurm, job 4242, node n7)" not in err:
        fail("Slurm rank 1 of 3: rc %d %s" % (rc, err))
    arr = launcher_env(SLURM_ARRAY_TASK_ID="7", SLURM_ARRAY_TASK_MIN="5", SLURM_ARRAY_TASK_COUNT="3",
                       SLURM_ARRAY_JOB_ID="99", SLURM_JOB_ID="101", SLURM_NTASKS="1", SLURM_PROCID="0")
    rc, out, err = run(bench, small + ["--list", "--fleet", "shard"], tmp, env=arr)
    if rc != 0 or [l for l in out.splitlines() if l] != shards[2] or "(slurm-array, job 99" not in err:
        fail("Slurm array element 7 of 5..7 is rank 2 of 3: rc %d %s" % (rc, err))
    rc, out, err = run(bench, small + ["--list", "--fleet", "shard", "--rank", "0"], tmp, env=slurm)
    if rc != 0 or [l for l in out.splitlines() if l] != shards[0] or "(flags" not in err:
        fail("--rank wins over SLURM_PROCID: rc %d %s" % (rc, err))
    k8s = launcher_env(JOB_COMPLETION_INDEX="2", JOB_NAME="lsjob")
    rc, out, err = run(bench, small + ["--list", "--fleet", "shard", "--world", "3"], tmp, env=k8s)
    if rc != 0 or [l for l in out.splitlines() if l] != shards[2] or "(kubernetes, job lsjob)" not in err:
        fail("JOB_COMPLETION_INDEX 2 of --world 3: rc %d %s" % (rc, err))
    rc, out, err = run(bench, small + ["--list", "--fleet", "replicate", "--rank", "2", "--world", "3"], tmp, env=clean)
    if rc != 0 or [l for l in out.splitlines() if l] != full:
        fail("replicate runs the whole plan: rc %d %s" % (rc, err))
    # Bad input: one line naming the value, exit 2.
    for args, env, needle in [
            (["--fleet", "split"], clean, "'split'"),
            (["--rank", "1", "--world", "2"], clean, "--rank 1: needs --fleet"),
            (["--fleet", "shard"], clean, "no rank"),
            (["--fleet", "shard", "--rank", "3", "--world", "3"], clean, "'3'"),
            (["--fleet", "shard"], launcher_env(JOB_COMPLETION_INDEX="1"), "--world"),
            (["--fleet", "shard"], launcher_env(SLURM_PROCID="one"), "SLURM_PROCID: bad value 'one'"),
            (["--fleet", "shard", "--rank", "0", "--world", "1", "--out", "a.csv", "--out-dir", "d"], clean,
             "not both")]:
        rc, out, err = run(bench, small + ["--list"] + args, tmp, env=env)
        lines = [l for l in err.splitlines() if l]
        if rc != 2 or len(lines) != 1 or needle not in lines[0]:
            fail("%s: want exit 2 and one line with %r, got rc %d: %r" % (args, needle, rc, err))
    # A run: per-rank file name in --out-dir, and the fleet columns filled.
    out_dir = os.path.join(tmp, "fleet")
    rc, out, err = run(bench, small + ["--batch", "1", "--family", "pool/copy", "--fleet", "replicate", "--out-dir",
                                       out_dir], tmp, env=launcher_env(SLURM_PROCID="1", SLURM_NTASKS="2",
                                                                       SLURM_JOB_ID="4242", SLURMD_NODENAME="n7"))
    files = os.listdir(out_dir) if os.path.isdir(out_dir) else []
    if rc != 0 or len(files) != 1 or not files[0].endswith("_host_job4242_rank1of2.csv"):
        fail("--out-dir: rc %d, files %r: %s" % (rc, files, err))
    rows = read_csv(os.path.join(out_dir, files[0]), header)
    want = {"rank": "1", "world_size": "2", "job_id": "4242", "node": "n7", "gpu_uuid": "", "pci_bus_id": ""}
    if not rows or any({k: r[k] for k in want} != want for r in rows):
        fail("fleet columns: %r" % [{k: r[k] for k in want} for r in rows])
    rc, out, err = run(bench, small + ["--batch", "1", "--family", "pool/copy", "--out", "plain.csv"], tmp, env=slurm)
    rows = read_csv(os.path.join(tmp, "plain.csv"), header)
    if rc != 0 or any(r["rank"] or r["world_size"] or r["job_id"] or r["node"] for r in rows):
        fail("without --fleet the fleet columns stay empty: %r" % rows[:1])


def check_noise(bench, header, tmp):
    """noise_pct and stop_reason in every ok row, per stopping rule; the --samples-out sidecar."""
    base = ["--backend", "host", "--tp", "8", "--batch", "1", "--draft", "1", "--model", "nemotron-h-8b",
            "--family", "conv1d_update,pool/copy", "--min-time", "0.0001", "--max-time", "5"]
    out_csv = os.path.join(tmp, "n.csv")
    for extra, reason, n in ((["--noise-target", "100", "--min-samples", "7"], "noise", 7),
                             (["--noise-target", "0", "--min-samples", "7"], "min_time", 7),
                             (["--noise-target", "0.000001", "--min-samples", "6", "--max-samples", "9"],
                              "max_samples", 9)):
        rc, _, err = run(bench, base + extra + ["--out", out_csv], tmp)
        rows = read_csv(out_csv, header) if rc == 0 else fail("%s: rc %d: %s" % (extra, rc, err[-2000:]))
        for r in rows:
            # a contention spike may keep a noise stop going past the minimum: >= there
            count_ok = int(r["samples"]) >= n if reason == "noise" else int(r["samples"]) == n
            if r["status"] != "ok" or r["stop_reason"] != reason or not count_ok:
                fail("%s: %s: status %s stop_reason %r samples %s, expected %s after %d" %
                     (extra, r["case"], r["status"], r["stop_reason"], r["samples"], reason, n))
            noise = float(r["noise_pct"])
            if not noise >= 0 or (reason == "max_samples" and not noise > 0.000001):
                fail("%s: %s: noise_pct %r" % (extra, r["case"], r["noise_pct"]))
    # A wall budget too small for the minimums: time_limit.
    rc, _, err = run(bench, base[:-4] + ["--min-samples", "10000", "--min-time", "0.001", "--max-time", "0.002",
                                         "--max-samples", "10000", "--out", out_csv], tmp)
    rows = read_csv(out_csv, header)
    if rc != 0 or any(r["stop_reason"] != "time_limit" for r in rows):
        fail("time_limit: rc %d, %r" % (rc, [r["stop_reason"] for r in rows]))
    # The sidecar: one line per sample of every ok row, joined by the row's key and repetition.
    side = os.path.join(tmp, "sub", "samples.csv")
    rc, _, err = run(bench, base + ["--min-samples", "5", "--noise-target", "0", "--repetitions", "2",
                                    "--out", out_csv, "--samples-out", side], tmp)
    if rc != 0 or not os.path.exists(side) or os.path.exists(side + ".tmp"):
        fail("--samples-out: rc %d, file %s: %s" % (rc, os.path.exists(side), err[-2000:]))
    rows = read_csv(out_csv, header)
    with open(side, newline="") as f:
        samples = list(csv.DictReader(f))
    want = ["case", "variant", "impl", "tuning", "state_layout", "cache_regime", "graph", "device_index",
            "repetition", "sample", "us"]
    if not samples or list(samples[0].keys()) != want:
        fail("sidecar header %r" % (list(samples[0].keys()) if samples else None))
    for r in rows:
        mine = [s for s in samples if s["case"] == r["case"] and s["repetition"] == r["repetition"]
                and s["impl"] == r["impl"] and s["variant"] == r["variant"]]
        if len(mine) != int(r["samples"]) or [int(s["sample"]) for s in mine] != list(range(len(mine))):
            fail("%s rep %s: %d sidecar samples, row says %s" % (r["case"], r["repetition"], len(mine), r["samples"]))
        us = sorted(float(s["us"]) for s in mine)
        med = us[len(us) // 2] if len(us) % 2 else 0.5 * (us[len(us) // 2 - 1] + us[len(us) // 2])
        if abs(med - float(r["time_us_median"])) > 1e-6 * med:
            fail("%s: sidecar median %g, row median %s" % (r["case"], med, r["time_us_median"]))
    if {r["repetition"] for r in rows} != {"0", "1"}:
        fail("repetitions missing: %r" % [r["repetition"] for r in rows])
    # An unwritable sidecar fails before measuring anything, one line naming it.
    gone = os.path.join(tmp, "gone.csv")
    rc, _, err = run(bench, base + ["--out", gone, "--samples-out", os.path.join(tmp, "n.csv", "x.csv")], tmp)
    if rc == 0 or "--samples-out" not in err:
        fail("unwritable --samples-out: rc %d: %s" % (rc, err[-500:]))
    if os.path.exists(gone) or os.path.exists(gone + ".tmp"):
        fail("unwritable --samples-out: the main CSV was still written")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    check, bench, header_tool = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    header = subprocess.run([header_tool], capture_output=True, text=True, check=True).stdout.strip()
    fn = globals().get("check_" + check)
    if not fn:
        print("unknown check " + check, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        fn(bench, header, tmp)
    print("ok: " + check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
