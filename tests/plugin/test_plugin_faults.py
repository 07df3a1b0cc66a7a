#!/usr/bin/env python3
"""Fault containment end to end (CTest label plugin): a plugin impl that ends the process at B >= 4
(tests/plugin/fault_impl.c) in a sweep next to the built-in host impl.

  test_plugin_faults.py KIND --bench BIN --plugin SO      KIND: segv abort exit heap hang poison cuda

cuda (on a GPU): fault_cuda.c, linstate's state_copy on a wild pointer at B >= 4 (a sticky illegal
address error), next to the linstate impl on the cuda backend.

Asserts: exit 1; the final CSV and GB's JSON exist (no temporaries left) and are whole; every
fault_KIND row at B:4 has the KIND's status (error:crash with the signal, error:exit with code 3,
error:timeout) and says why in the message column (poison: the op fails and poisons the process,
error:setup|verify|timing; the next case must run in a fresh worker); every other row, before and
after, is ok;
stderr names the impl and the case; GB's JSON has one entry per case.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

TIMEOUT = {"hang": 15}  # --case-timeout; the others keep a generous one
EXPECT = {
    "segv": ({"error:crash"}, "SIGSEGV"),
    "abort": ({"error:crash"}, "SIGABRT"),
    "exit": ({"error:exit"}, "code 3"),
    # a heap overrun: SIGSEGV in a plain build; ASan reports it and exits 1
    "heap": ({"error:crash", "error:exit"}, ""),
    "hang": ({"error:timeout"}, "--case-timeout"),
    "poison": ({"error:setup", "error:verify", "error:timing"}, None),
    "cuda": ({"error:setup", "error:verify", "error:timing", "error:crash", "error:exit"}, None),
}


# Under AddressSanitizer (the asan preset, ASAN_OPTIONS=abort_on_error=1) a wild write or a heap
# overrun is ASan's report, then abort() (or exit 1 without abort_on_error) instead of SIGSEGV.
ASAN_OUTCOME = ({"error:crash", "error:exit"}, "")


def sanitized(binary):
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=sorted(EXPECT))
    ap.add_argument("--bench", required=True)
    ap.add_argument("--plugin", required=True)
    a = ap.parse_args()
    impl = "fault_" + a.kind
    base, backend = ("linstate", "cuda") if a.kind == "cuda" else ("host", "host")
    statuses, why = EXPECT[a.kind]
    if a.kind in ("segv", "heap") and sanitized(a.bench):
        statuses, why = ASAN_OUTCOME
    if a.kind == "cuda":  # label gpu: skipped (77) where no CUDA device is visible, as every GPU test
        p = subprocess.run([a.bench, "--backend", "cuda", "--list"], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            print("SKIPPED: no CUDA device (%s)" % p.stderr.strip()[-200:])
            sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        out, js = os.path.join(tmp, "f.csv"), os.path.join(tmp, "f.json")
        cmd = [a.bench, "--backend", backend, "--tp", "8", "--batch", "1,4", "--draft", "1",
               "--model", "qwen3-next-80b-a3b,kimi-linear-48b-a3b", "--family", "pool",
               "--benchmark_filter=pool/copy", "--min-samples", "3", "--min-time", "0.001",
               "--max-time", "0.01", "--impl-path", a.plugin, "--impl", impl + "," + base,
               "--case-timeout", str(TIMEOUT.get(a.kind, 240)), "--out", out,
               "--benchmark_out=" + js]
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=280)
        err = p.stderr
        if p.returncode != 1:
            fail("rc %d, want 1 (a case failed):\n%s" % (p.returncode, err[-3000:]))
        left = glob.glob(out + ".tmp.*") + glob.glob(js + ".tmp.*")
        if not os.path.exists(out) or left:
            fail("final CSV %s, temporaries left %s" % (os.path.exists(out), left))
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        want_cases = 8  # 2 models x B 1,4 x 2 impls
        if len(rows) != want_cases:
            fail("%d rows, want %d:\n%s" % (len(rows), want_cases, err[-3000:]))
        seen_fault = 0
        for i, r in enumerate(rows):
            faulty = r["impl"] == impl and r["batch"] == "4"
            if faulty:
                seen_fault += 1
                if r["status"] not in statuses or (why is not None and (why not in r["message"] or not r["message"])):
                    fail("row %d (%s, impl %s): status %r message %r, want %s with %r"
                         % (i, r["case"], r["impl"], r["status"], r["message"], statuses, why))
                if i + 1 >= len(rows):
                    fail("no row after the fault")
                if why is not None and (r["case"] not in err or ("impl " + impl) not in err):
                    fail("stderr does not name the case and impl of the fault:\n%s" % err[-2000:])
            elif r["status"] != "ok" or r["message"]:
                fail("row %d (%s, impl %s): status %r message %r, want ok" % (i, r["case"], r["impl"], r["status"],
                                                                               r["message"]))
        if seen_fault != 2:
            fail("%d fault rows, want 2" % seen_fault)
        if [r["impl"] for r in rows].count(base) != 4:
            fail("%s rows missing" % base)
        with open(js) as f:
            bench = json.load(f)["benchmarks"]
        if len(bench) != want_cases:
            fail("GB JSON: %d entries, want %d" % (len(bench), want_cases))
        errors = [b for b in bench if b.get("error_occurred")]
        if len(errors) != 2 or any(b.get("error_message") not in statuses for b in errors):
            fail("GB JSON errors: %s" % [(b["name"], b.get("error_message")) for b in errors])
    print("ok: %s" % a.kind)


if __name__ == "__main__":
    main()
