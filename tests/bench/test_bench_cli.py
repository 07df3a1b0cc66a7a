#!/usr/bin/env python3
"""End-to-end tests of the linstate-bench binary on the host backend.

usage: test_bench_cli.py CHECK BENCH_BINARY HEADER_TOOL
CHECK is one of: smoke errors list filter json repetitions sigint variants quick impls. Each check runs the binary in a
temporary directory (always with --out there) and exits non-zero with a message on failure.
"""
import csv
import json
import os
import re
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


def run(bench, args, tmp, timeout=150):
    p = subprocess.run([bench] + args, cwd=tmp, capture_output=True, text=True, timeout=timeout)
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
        if r["max_rel_err"] == "" or float(r["max_rel_err"]) != 0.0:
            fail("%s: host backend vs reference max_rel_err %r, expected 0" % (r["case"], r["max_rel_err"]))
        if int(r["layers"]) < 1 or int(r["pool_slots"]) < int(r["batch"]) + 1:
            fail("%s: layers %s pool_slots %s" % (r["case"], r["layers"], r["pool_slots"]))
        if not KEY_RE.match(r["case"]):
            fail("bad key " + r["case"])
        if r["held"] != "0":  # the host backend has no stream hold
            fail("%s: held %r on the host backend, expected 0" % (r["case"], r["held"]))
    if os.path.exists(out_csv + ".tmp"):
        fail("temporary CSV left behind")
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
    ]
    out_csv = os.path.join(tmp, "never.csv")
    for args, value in cases:
        rc, out, err = run(bench, ["--backend", "host", "--out", out_csv] + args, tmp)
        lines = [l for l in err.splitlines() if l.strip()]
        if rc != 2:
            fail("%s: rc %d, expected 2 (stderr: %s)" % (args, rc, err))
        if len(lines) != 1 or value not in lines[0]:
            fail("%s: expected ONE stderr line naming %s, got %r" % (args, value, err))
        if os.path.exists(out_csv) or os.path.exists(out_csv + ".tmp"):
            fail("%s: a CSV was written" % args)
    rc, out, _ = run(bench, ["--help"], tmp)
    if rc != 0 or "--state-dtype" not in out or "--tp 8 --batch 1,4 --draft 1,4" not in out:
        fail("--help does not document the flags and the host defaults")


def check_list(bench, header, tmp):
    out_csv = os.path.join(tmp, "x.csv")
    t0 = time.time()
    keys = listed(bench, ["--backend", "host", "--out", out_csv], tmp)
    if time.time() - t0 > 10:
        fail("--list took %.1fs: it must not run anything" % (time.time() - t0))
    if len(keys) != 62:  # host defaults: 3 presets x tp 8 x B 1,4 x T 1,4 (+ conv_delta on 2)
        fail("default host plan has %d cases, expected 62" % len(keys))
    if os.path.exists(out_csv) or os.path.exists(out_csv + ".tmp"):
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


def check_sigint(bench, header, tmp):
    out_csv = os.path.join(tmp, "int.csv")
    args = ["--backend", "host", "--tp", "8", "--batch", "1,2,3,4,5,6,7,8", "--draft", "1,2,3,4",
            "--min-samples", "50", "--min-time", "0.1", "--max-time", "0.3", "--out", out_csv]
    p = subprocess.Popen([bench] + args, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    seen = 0
    while time.time() < deadline and p.poll() is None:
        try:
            with open(out_csv + ".tmp") as f:
                seen = sum(1 for _ in f) - 1
        except FileNotFoundError:
            pass
        if seen >= 2:
            break
        time.sleep(0.02)
    if p.poll() is not None:
        fail("sweep finished before it could be interrupted (rc %s)" % p.returncode)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    if p.returncode != 130:
        fail("SIGINT: rc %s, expected 130\n%s" % (p.returncode, err[-2000:]))
    if not os.path.exists(out_csv) or os.path.exists(out_csv + ".tmp"):
        fail("SIGINT: CSV not renamed into place")
    rows = read_csv(out_csv, header)
    if len(rows) < 2:
        fail("SIGINT: %d rows kept, expected >= 2" % len(rows))
    if any(r["status"] != "ok" for r in rows):
        fail("SIGINT: a kept row is not ok")


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
    pct = {r["case"]: float(r["pct_of_copy_peak"]) for r in rows if r["status"] == "ok"}
    cell = table[0].split("|")[3].strip()
    want = pct["kda/decode/kimi-linear-48b-a3b/tp8/B:2/T:1/fp32"]
    if not cell.endswith(" %") or abs(float(cell[:-2]) - want) > 0.0501:
        fail("--quick cell %r differs from the CSV's pct_of_copy_peak" % cell)
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
