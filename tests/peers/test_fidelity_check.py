"""scripts/fidelity_check.py on a small CSV: within 3 % passes, -10 % at B = 512 fails, B = 1 eager
is not checked, B = 1 graph is; a missing impl is bad input (exit 2). --tunings A:B: two tunings of
one impl (py_vllm's launch=kernel against launch=wrapper), an ambiguous or missing selector, one
impl without --tunings (exit 2).

    python3 tests/peers/test_fidelity_check.py REPO
"""
import os
import subprocess
import sys
import tempfile

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
tool = os.path.join(root, "scripts", "fidelity_check.py")
sys.path.insert(0, os.path.join(root, "tests", "scripts"))
import synth  # noqa: E402  (schema-v2 rows as the bench writes them, read by lscsv)


def run(rows, *args):
    d = tempfile.mkdtemp()
    p = os.path.join(d, "r.csv")
    synth.write_csv(p, rows, synth.V2_COLUMNS)
    return subprocess.run([sys.executable, tool, p, *args], capture_output=True, text=True)


def side(case, graph, batch, impl, t, status, err):
    if status != "ok":  # a row that was not timed: empty timing cells
        return synth.row(batch=int(batch), case=case, graph=graph, impl=impl, schema_version="2", status=status,
                         max_rel_err=err, **{c: "" for c in ("time_us_median", "time_us_p10", "time_us_p90",
                                                              "time_us_mean", "time_us_stddev", "gbps",
                                                              "pct_of_copy_peak", "samples")})
    return synth.row(batch=int(batch), median=float(t), case=case, graph=graph, impl=impl, schema_version="2",
                     max_rel_err=err)


def pair(case, graph, batch, a, b, status="ok", ea="0.001", eb="0.001"):
    return [side(case, graph, batch, "sglang", a, status, ea), side(case, graph, batch, "py_sglang@0.5.23", b, "ok", eb)]


fails = 0
r = run(pair("a/B:128", "0", "128", "100", "102") + pair("c/B:1/graph", "1", "1", "5", "5.1") +
        pair("c/B:1", "0", "1", "5", "9"))
ok = r.returncode == 0 and "2 checked case(s) within 3 %, 0 failure(s)" in r.stdout and "not checked" in r.stdout
print("ok  " if ok else "FAIL", "within 3 %: pass; B = 1 eager not checked")
fails += not ok
r = run(pair("b/B:512", "0", "512", "90", "100"))
ok = r.returncode == 1 and "FAIL: -10.0 %" in r.stdout
print("ok  " if ok else "FAIL", "-10 % at B = 512 fails")
fails += not ok
r = run(pair("c/B:1/graph", "1", "1", "5", "6"))
ok = r.returncode == 1
print("ok  " if ok else "FAIL", "B = 1 graph is checked")
fails += not ok
r = run(pair("b/B:512", "0", "512", "", "100", status="fail_numerics"))
ok = r.returncode == 1 and "FAIL: status fail_numerics" in r.stdout
print("ok  " if ok else "FAIL", "a side not verified fails")
fails += not ok
r = run(pair("a/B:128", "0", "128", "100", "101", ea="0.001", eb="0.002"))
ok = r.returncode == 1 and "numerics differ" in r.stdout
print("ok  " if ok else "FAIL", "same time, other numerics: fails")
fails += not ok
r = run(pair("a/B:128", "0", "128", "100", "102"), "--py", "py_sglang@nope")
ok = r.returncode == 2 and "py_sglang@nope" in r.stderr and len(r.stderr.splitlines()) == 1
print("ok  " if ok else "FAIL", "missing impl: exit 2 naming it, one line")
fails += not ok
r = subprocess.run([sys.executable, tool, os.path.join(tempfile.mkdtemp(), "none.csv")], capture_output=True, text=True)
ok = r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
print("ok  " if ok else "FAIL", "a missing file: one line, exit 2")
fails += not ok

# two tunings of one impl (py_vllm launch=kernel vs launch=wrapper), other knobs alike
VL = ("--aot", "py_vllm", "--py", "py_vllm")


def tuned(case, graph, batch, t, launch, decode="auto", err="0.001"):
    return synth.row(batch=int(batch), median=float(t), case=case, graph=graph, impl="py_vllm", schema_version="2",
                     max_rel_err=err, tuning=f"gdn.decode={decode},launch={launch}")


def two(case, graph, batch, k, w):
    return [tuned(case, graph, batch, k, "kernel"), tuned(case, graph, batch, w, "wrapper")]


TW = ("--tunings", "launch=kernel:launch=wrapper")
r = run(two("a/B:128", "0", "128", "100", "101") + two("c/B:1/graph", "1", "1", "5", "5.05"), *VL, *TW)
ok = (r.returncode == 0 and "2 checked case(s) within 3 %, 0 failure(s)" in r.stdout
      and "py_vllm[launch=kernel] µs | py_vllm[launch=wrapper] µs" in r.stdout)
print("ok  " if ok else "FAIL", "--tunings: kernel vs wrapper of one impl, within 3 %: pass")
fails += not ok
r = run(two("b/B:512", "0", "512", "90", "100"), *VL, *TW)
ok = r.returncode == 1 and "FAIL: -10.0 %" in r.stdout
print("ok  " if ok else "FAIL", "--tunings: -10 % at B = 512 fails")
fails += not ok
r = run(two("b/B:512", "0", "512", "100", "100"), *VL)
ok = r.returncode == 2 and "--tunings" in r.stderr and len(r.stderr.splitlines()) == 1
print("ok  " if ok else "FAIL", "one impl on both sides without --tunings: exit 2, one line")
fails += not ok
r = run(two("b/B:512", "0", "512", "100", "100") + [tuned("b/B:512", "0", "512", "100", "kernel", "unpacked")],
        *VL, *TW)
ok = r.returncode == 2 and "ambiguous" in r.stderr and "b/B:512" in r.stderr and len(r.stderr.splitlines()) == 1
print("ok  " if ok else "FAIL", "a selector picking two tunings of a case: exit 2 naming it")
fails += not ok
r = run(two("b/B:512", "0", "512", "100", "100"), *VL, "--tunings", "launch=kernel:launch=nope")
ok = r.returncode == 2 and "launch=nope" in r.stderr and len(r.stderr.splitlines()) == 1
print("ok  " if ok else "FAIL", "a tuning no row has: exit 2 naming it")
fails += not ok
r = run(two("b/B:512", "0", "512", "100", "100"), *VL, "--tunings", "launch=kernel")
ok = r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
print("ok  " if ok else "FAIL", "--tunings without A:B: exit 2, one line")
fails += not ok
sys.exit(1 if fails else 0)
