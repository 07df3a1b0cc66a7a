#!/usr/bin/env python3
"""Python impls end to end on the host runtime (CTest label python; docs/plugin-abi.md "Python impls").

  test_pyimpl.py CHECK --bench BIN --repo DIR [--build DIR]

CHECK:
  example  examples/python/conv_update.py next to host: ok rows verified (max_rel_err within the
           conv tolerance), its name, version, tuning, kernel and layout; the source columns
           (hash of the module's contents) and host_call_us set on its rows only; a --tune point
  lazy     linstate-bench loads no libpython unless a Python impl is asked for (LD_DEBUG=files)
  wrong    tests/python/wrong_conv.py (outputs +8 bf16 ulps): exit 1, every row fail_numerics
  raise    tests/python/raise_impl.py: the raising conv_update gives error:verify rows with the
           exception's type and message on stderr; an op returning 7 a failure naming the value,
           ops answering 2 skipped:unsupported
  errors   exit 2 and one stderr line: a module whose import fails, a module file that does not
           exist, @SRC on a C impl, a missing pinned version, a bad label, a path that is not a
           folder, an unknown NAME@, a label taken by another source, a version for a module
           without a pinned package
  sources  srcdemo.py on two source trees (a git checkout, and a copy with a planted sleep in its
           conv update) in one run: impl names NAME@LABEL, impl_source / _git / _hash per row;
           scripts/compare.py --impls A:B says SLOWER on exactly the conv rows; a derived label
  tree     examples/python/tree_impl.py as docs/plugin-abi.md runs it: tree@before=A,tree@after=B
           (two copies of tree_kernels.py, B's VERSION changed) give ok conv and pool/copy rows named
           tree@before / tree@after, each with its own folder's file (impl_version, impl_source);
           compare.py --impls tree@before:tree@after compares both cases; a folder without
           tree_kernels.py is one error line, exit 2
  process  a module that changes the working directory and LS_GIT_COMMIT when it loads: a relative
           --out lands where the run started, rows keep the run's LS_GIT_COMMIT, the module's own
           variables stay
  benchsh  scripts/bench.sh (LINSTATE_SKIP_SETUP=1, LINSTATE_BUILD_DIR=the test build) runs the
           example by name, from the script: --list and a small run
  fault_*  fault containment of the worker process (docs/timing.md "Worker process") with a module
           written here: the example conv op, a fault injected at B >= 2, next to host at B 1,2,4:
    fork       the op forks once and the child returns into the worker: every case gets its own
               row, all ok (a forked copy never answers the parent)
    forged     a forked child writes a row header with its own pid to the worker's socket: the
               parent refuses it (error:crash naming the pid), later cases run
    orphan     at B 2 a forked child sleeps holding the socket, at B 4 the op segfaults, with
               --case-timeout 0: error:crash SIGSEGV at once (not a hang), the child killed
    parentkill the op forks a sleeping child and sleeps; SIGKILL to linstate-bench: the worker
               and the child are gone too
    exithang   the op registers an exit-time handler that never returns: every row ok, the final
               CSV written, stderr says the worker was killed, exit 1
    closefd    the op closes every fd from 3: error:exit rows saying the worker lost its socket
    bigint     the op returns 2**70: error rows, stderr says it is beyond a C long (not -1)
  gpu      (label gpu; skipped without a GPU or torch/triton) the example's Triton kernel beside
           linstate on conv1d_update decode and verify, channel-major (qwen3-next) and window-major
           (kimi-linear) state, eager and CUDA-graph rows: every row ok, verified, host_call_us set;
           then tests/python/gpu_probe.py (the same kernel observing itself): every tensor aliases
           linstate's buffer, and the graph rows' calls ran while linstate's own stream (not
           torch's default) was being captured
"""
import argparse
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAILURES = []
CONV_TOL = 1e-2
FAST = ["--backend", "host", "--tp", "8", "--model", "qwen3-next-80b-a3b", "--min-samples", "3",
        "--min-time", "0.001", "--max-time", "0.05"]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, file=sys.stderr)


def run(cmd, env=None, timeout=600):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                          timeout=timeout, env=env)


def bench(a, out, *extra, expect_rc=0):
    p = run([a.bench] + FAST + ["--out", out] + list(extra))
    check(p.returncode == expect_rc, "rc %d, want %d for %s\nstderr tail:\n%s"
          % (p.returncode, expect_rc, " ".join(extra), p.stderr[-3000:]))
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    check(len(rows) > 0, "no CSV rows in " + out)
    return rows, p


def mod(a, *parts):
    return os.path.join(a.repo, *parts)


def t_example(a, tmp):
    ex = mod(a, "examples", "python", "conv_update.py")
    rows, _ = bench(a, os.path.join(tmp, "ex.csv"), "--impl-path", ex, "--impl", "pyconv,host",
                    "--family", "conv1d_update,gdn", "--batch", "3", "--draft", "1,3",
                    "--tune", "conv.block=256", "--tune", "conv.block=128")
    py = [r for r in rows if r["impl"] == "pyconv"]
    conv = [r for r in py if r["op"].startswith("conv1d_update")]
    check(len(conv) == 4, "pyconv conv rows: %d, want 4 (decode, verify x 2 tunings)" % len(conv))
    for r in conv:
        check(r["status"] == "ok" and float(r["max_rel_err"]) <= CONV_TOL, "pyconv row %s: %s err %s"
              % (r["case"], r["status"], r["max_rel_err"]))
        check(r["impl_version"] == "example 1.0 (numpy)", "impl_version " + r["impl_version"])
        check(r["kernel"].startswith("pyconv host B=3"), "kernel column " + r["kernel"])
        check("[slots, C, W-1]" in r["impl_layout"], "impl_layout " + r["impl_layout"])
        check(re.fullmatch(r"[0-9a-f]{16}", r["impl_source_hash"]) is not None, "hash " + r["impl_source_hash"])
        check(r["host_call_us"] != "" and float(r["host_call_us"]) > 0, "host_call_us " + r["host_call_us"])
    check({r["tuning"] for r in conv} == {"conv.block=256", "conv.block=128"}, "tunings %s" % {r["tuning"] for r in conv})
    for r in py:
        if r["op"].startswith("gdn"):
            check(r["status"] == "skipped:unsupported", "pyconv gdn row " + r["status"])
    for r in rows:
        if r["impl"] == "host":
            check(r["host_call_us"] == "" and r["impl_source_hash"] == "", "host row has Python columns")


def t_case_begin(a, tmp):
    """The bench calls a Python impl's case_begin once before each case it runs, before any op
    call of that case (py_sglang drops its copies of linstate's inputs there)."""
    rows, _ = bench(a, os.path.join(tmp, "cb.csv"), "--impl-path", mod(a, "tests", "python", "case_probe.py"),
                    "--impl", "caseprobe@log=" + tmp, "--family", "conv1d_update", "--batch", "3,4",
                    "--draft", "1,3")
    check(len(rows) == 4 and all(r["status"] == "ok" for r in rows), "caseprobe rows %s"
          % [(r["case"], r["status"]) for r in rows])
    log = open(os.path.join(tmp, "probe.log")).read().split("\n")
    cases = [i for i, l in enumerate(log) if l == "case"]
    check(len(cases) == 4, "case_begin calls: %d, want 4 (one per case)" % len(cases))
    check(cases and cases[0] == 0, "an op call came before the first case_begin")
    for i, j in zip(cases, cases[1:] + [len(log)]):
        check(any(l.startswith("op ") for l in log[i + 1:j]), "a case_begin without op calls after it")


def t_lazy(a, tmp):
    """linstate-bench never links libpython; the bridge (and CPython) are loaded only when a Python
    impl is asked for (glibc's LD_DEBUG=files names every library a process loads)."""
    env = dict(os.environ, LD_DEBUG="files")
    args = [a.bench, "--backend", "host", "--list", "--family", "pool/copy", "--batch", "1", "--draft", "1"]
    p = run(args, env=env)
    check(p.returncode == 0 and "file=" in p.stderr, "LD_DEBUG run: rc %d" % p.returncode)
    loaded = [l for l in p.stderr.splitlines() if "libpython" in l or "libls_pybridge" in l]
    check(not loaded, "a run without Python impls loaded Python:\n" + "\n".join(loaded)[:2000])
    p = run(args + ["--impl-path", mod(a, "examples", "python", "conv_update.py")], env=env)
    check(p.returncode == 0 and "libls_pybridge.so" in p.stderr and "libpython" in p.stderr,
          "a Python impl did not load the bridge and libpython: rc %d" % p.returncode)


def t_wrong(a, tmp):
    rows, p = bench(a, os.path.join(tmp, "w.csv"), "--impl-path", mod(a, "tests", "python", "wrong_conv.py"),
                    "--impl", "pywrong", "--family", "conv1d_update", "--batch", "3", "--draft", "1,3", expect_rc=1)
    check(len(rows) == 2 and all(r["status"] == "fail_numerics" for r in rows),
          "wrong rows: %s" % [(r["case"], r["status"]) for r in rows])
    check(all(float(r["max_rel_err"]) > CONV_TOL for r in rows), "wrong rows within tolerance")


def t_null_slot(a, tmp):
    """An impl declaring null_slot0 is never handed slot 0: at B = pool slots every slot is drawn,
    so without the held slot one row (timed or verified) would be slot 0 and pynull raises."""
    rows, p = bench(a, os.path.join(tmp, "n.csv"), "--impl-path", mod(a, "tests", "python", "null_slot.py"),
                    "--impl", "pynull,host", "--family", "conv1d_update", "--batch", "1,4",
                    "--pool-slots", "4", "--draft", "1,3")
    check(len(rows) == 8 and all(r["status"] == "ok" for r in rows),
          "rows %s\n%s" % ([(r["impl"], r["case"], r["status"]) for r in rows], p.stderr[-1500:]))
    check(all(r["pool_slots"] == "5" for r in rows), "pool_slots %s" % [r["pool_slots"] for r in rows])


def t_process(a, tmp):
    """A module that changes the working directory and linstate's LS_* variables when it loads (in
    the parent and in the worker): a relative --out still lands where the run started, and every
    row keeps the LS_GIT_COMMIT the run was given; its own variables stay."""
    impl = os.path.join(tmp, "wander.py")
    with open(impl, "w") as f:
        f.write("import os, sys\nsys.path.insert(0, %r)\nimport conv_update as ex\n"
                "os.chdir('/')\nos.environ['LS_GIT_COMMIT'] = '0000000bad'\nos.environ['WANDER_OWN'] = '1'\n"
                "def linstate_impl(source, runtime):\n    os.chdir('/')\n    os.environ['LS_GIT_COMMIT'] = '1111111bad'\n"
                "    d = ex.linstate_impl(source, runtime)\n    d['name'] = 'wander'\n"
                "    d['version'] = 'own ' + os.environ.get('WANDER_OWN', '-')\n    return d\n"
                % mod(a, "examples", "python"))
    cmd = [os.path.abspath(a.bench)] + FAST + ["--impl-path", impl, "--impl", "wander,host", "--family", "conv1d_update",
                                               "--batch", "1", "--draft", "1", "--out", "rel/w.csv"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, cwd=tmp,
                       env=dict(os.environ, LS_GIT_COMMIT="abc1234"))
    out = os.path.join(tmp, "rel", "w.csv")
    check(p.returncode == 0 and os.path.exists(out), "rc %d, %s\n%s" % (p.returncode, out, p.stderr[-1500:]))
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    check(len(rows) == 2 and {r["git_commit"] for r in rows} == {"abc1234"},
          "git_commit of the rows: %s" % {(r["impl"], r["git_commit"]) for r in rows})
    check({r["impl_version"] for r in rows if r["impl"] == "wander"} == {"own 1"}, "the module's own variable")


def t_raise(a, tmp):
    rows, p = bench(a, os.path.join(tmp, "r.csv"), "--impl-path", mod(a, "tests", "python", "raise_impl.py"),
                    "--impl", "pyraise", "--family", "conv1d_update,pool/copy,pool/accept", "--batch", "2",
                    "--draft", "1,2", expect_rc=1)
    st = {r["op"]: r["status"] for r in rows}
    check(st.get("conv1d_update/decode") == "error:verify", "conv row %s" % st.get("conv1d_update/decode"))
    check("ValueError: planted failure in conv_update (B=" in p.stderr, "exception not on stderr:\n" + p.stderr[-2000:])
    check(st.get("pool/copy", "").startswith("error:"), "pool/copy (state_copy returns 7): %s" % st.get("pool/copy"))
    check("state_copy: returned 7" in p.stderr, "bad return value not named:\n" + p.stderr[-2000:])
    check(st.get("pool/accept") == "skipped:unsupported", "pool/accept (op answers 2): %s" % st.get("pool/accept"))


def one_line_error(a, tmp, what, args, want):
    p = run([a.bench] + FAST + ["--list"] + args)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode == 2, "%s: rc %d, want 2 (stderr: %s)" % (what, p.returncode, p.stderr[-800:]))
    check(len(lines) == 1 and want in lines[0], "%s: want one line with %r, got %s" % (what, want, lines))


def t_errors(a, tmp):
    tp = lambda f: mod(a, "tests", "python", f)  # noqa: E731
    one_line_error(a, tmp, "import error", ["--impl-path", tp("badimport.py"), "--impl", "x"],
                   "ModuleNotFoundError: No module named 'linstate_no_such_module'")
    one_line_error(a, tmp, "missing module", ["--impl-path", tp("nope.py")], "nope.py: no such file")
    one_line_error(a, tmp, "@ on a C impl", ["--impl", "host@1.0"],
                   "'host' is not a Python impl (only those take @SRC; shipped: py_sglang, py_vllm;")
    one_line_error(a, tmp, "missing version", ["--impl", "py_sglang@0.0.1"], "sglang-0.0.1 missing")
    one_line_error(a, tmp, "bad label", ["--impl-path", tp("srcdemo.py"), "--impl", "srcdemo@a:b=" + tmp],
                   "label 'a:b'")
    one_line_error(a, tmp, "not a folder", ["--impl-path", tp("srcdemo.py"), "--impl", "srcdemo@" + tmp + "/none"],
                   "is not a folder")
    one_line_error(a, tmp, "unknown", ["--impl", "nosuch@" + tmp], "'nosuch' is not a Python impl")
    make_tree(os.path.join(tmp, "t1"), 0.0, git=False)
    make_tree(os.path.join(tmp, "t2"), 0.0, git=False)
    one_line_error(a, tmp, "label taken", ["--impl-path", tp("srcdemo.py"), "--impl", "srcdemo@x=%s,srcdemo@x=%s"
                                           % (os.path.join(tmp, "t1"), os.path.join(tmp, "t2"))],
                   "impl name 'srcdemo@x' is taken by another source")
    one_line_error(a, tmp, "version of a module without a package",
                   ["--impl-path", tp("srcdemo.py"), "--impl", "srcdemo@0.5.23"], "srcdemo has no pinned package")


def make_tree(path, delay, git):
    os.makedirs(path)
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "srcdemo_tree.py")).read()
    if delay:
        src = src.replace("DELAY_S = 0.0", "DELAY_S = %r  # the planted slowdown" % delay)
    with open(os.path.join(path, "conv_kernels.py"), "w") as f:
        f.write(src)
    if git:
        g = ["git", "-C", path, "-c", "user.name=t", "-c", "user.email=t@t"]
        for c in (["init", "-q"], ["add", "."], ["commit", "-qm", "tree a"]):
            run(g + c)


def t_sources(a, tmp):
    ta, tb = os.path.join(tmp, "a", "python"), os.path.join(tmp, "b")
    make_tree(ta, 0.0, git=shutil.which("git") is not None)
    make_tree(tb, 0.02, git=False)
    demo = mod(a, "tests", "python", "srcdemo.py")
    out = os.path.join(tmp, "two.csv")
    rows, p = bench(a, out, "--impl-path", demo, "--impl", "srcdemo@" + ta + ",srcdemo@before=" + tb,
                    "--family", "conv1d_update,pool/copy", "--batch", "1,2", "--draft", "1")
    names = sorted({r["impl"] for r in rows})
    # the first is named by its folder ("python" is generic: the parent's name), the second by its label
    check(names == ["srcdemo@a", "srcdemo@before"], "impl names %s" % names)
    for r in rows:
        check(r["status"] == "ok", "%s %s: %s" % (r["impl"], r["case"], r["status"]))
        want = ta if r["impl"] == "srcdemo@a" else tb
        check(r["impl_source"] == os.path.realpath(want), "impl_source %s, want %s" % (r["impl_source"], want))
        check(r["impl_layout"].startswith(r["op"].split("/")[0].replace("conv1d_update", "conv_update").replace(
            "pool", "state_copy")), "impl_layout %s for %s" % (r["impl_layout"], r["op"]))
    ga = {r["impl_source_git"] for r in rows if r["impl"] == "srcdemo@a"}
    gb = {r["impl_source_git"] for r in rows if r["impl"] == "srcdemo@before"}
    if shutil.which("git"):
        check(len(ga) == 1 and re.fullmatch(r"[0-9a-f]{4,40}", ga.pop() or "-") is not None, "git describe of a: %s" % ga)
    check(gb == {""}, "git describe of a tree outside git: %s" % gb)
    if shutil.which("git"):  # an untracked copy inside another checkout: that checkout's describe is not its own
        tc = os.path.join(ta, "copy")
        make_tree(tc, 0.0, git=False)
        rows3, _ = bench(a, os.path.join(tmp, "inner.csv"), "--impl-path", demo, "--impl", "srcdemo@inner=" + tc,
                         "--family", "pool/copy", "--batch", "1", "--draft", "1")
        check({r["impl_source_git"] for r in rows3} == {""}, "git describe of a copy inside a checkout: %s"
              % {r["impl_source_git"] for r in rows3})
    ha = {r["impl_source_hash"] for r in rows if r["impl"] == "srcdemo@a"}
    hb = {r["impl_source_hash"] for r in rows if r["impl"] == "srcdemo@before"}
    check(len(ha) == 1 and len(hb) == 1 and ha != hb, "source hashes a %s, before %s" % (ha, hb))
    # A/B: the planted sleep (20 ms per conv call, against a conv of about 0.1 ms: 200x, so a conv
    # slowed 20x by a loaded host still shows) on the conv rows only; the unchanged pool rows (the
    # same numpy state_copy in both impls) are neither SLOWER nor FASTER at --threshold 400. A
    # leaked sleep would make them 400x slower; a loaded CI host moved them by more than half (CI
    # failed on pool/copy B = 1 at threshold 50), so the threshold sits above load and far below a
    # leak. Whether the copies' temporaries reuse heap
    # memory (they moved 5-8x when glibc's mmap threshold wandered) is checked on glibc's counters,
    # not on timings: tests/harness/test_host_alloc.c.
    cmp = run([sys.executable, mod(a, "scripts", "compare.py"), out, "--impls", "srcdemo@a:srcdemo@before",
               "--threshold", "400"])
    check(cmp.returncode == 1, "compare rc %d, want 1 (a SLOWER case)\n%s%s" % (cmp.returncode, cmp.stdout, cmp.stderr))
    verdicts = {}
    for line in cmp.stdout.splitlines():
        m = re.search(r"((?:conv1d_update|pool)/\S+)\s.*\b(SLOWER|FASTER|SAME|UNSURE|NOISY)\b", line)
        if m:
            verdicts[m.group(1)] = m.group(2)
    check(len(verdicts) == 4, "compare verdicts: %s\n%s" % (verdicts, cmp.stdout))
    for case, v in verdicts.items():
        conv = case.startswith("conv1d_update")
        check(v == "SLOWER" if conv else v not in ("SLOWER", "FASTER"), "%s: %s" % (case, v))
    # Loading the same source twice under its folder's name gives a distinct name (-2), same code.
    rows2, _ = bench(a, os.path.join(tmp, "dup.csv"), "--impl-path", demo, "--impl",
                     "srcdemo@" + tb + ",srcdemo@" + os.path.join(tmp, "a", "python"), "--family", "pool/copy",
                     "--batch", "1", "--draft", "1")
    check(sorted({r["impl"] for r in rows2}) == ["srcdemo@a", "srcdemo@b"], "names %s" % {r["impl"] for r in rows2})


def t_tree(a, tmp):
    impl = mod(a, "examples", "python", "tree_impl.py")
    kernels = open(mod(a, "examples", "python", "tree_kernels.py")).read()
    dirs = {"before": os.path.join(tmp, "before"), "after": os.path.join(tmp, "after")}
    for label, version in (("before", "1"), ("after", "2")):
        os.makedirs(dirs[label])
        with open(os.path.join(dirs[label], "tree_kernels.py"), "w") as f:
            f.write(kernels.replace('VERSION = "1"', 'VERSION = "%s"' % version))
    out = os.path.join(tmp, "run.csv")
    rows, p = bench(a, out, "--impl-path", impl, "--impl", "tree@before=%s,tree@after=%s" % (dirs["before"], dirs["after"]),
                    "--family", "conv1d_update,pool/copy", "--batch", "4", "--draft", "1")
    got = sorted((r["impl"], r["op"]) for r in rows)
    want = sorted((i, op) for i in ("tree@before", "tree@after") for op in ("conv1d_update/decode", "pool/copy"))
    check(got == want, "rows %s, want %s" % (got, want))
    for r in rows:
        label = r["impl"].split("@")[-1]
        check(r["status"] == "ok", "%s %s: %s\n%s" % (r["impl"], r["case"], r["status"], p.stderr[-1500:]))
        check(r["impl_version"] == ("tree 1" if label == "before" else "tree 2"),
              "%s loaded another folder's file: impl_version %s" % (r["impl"], r["impl_version"]))
        check(r["impl_source"] == os.path.realpath(dirs.get(label, "")), "impl_source " + r["impl_source"])
    cmp = run([sys.executable, mod(a, "scripts", "compare.py"), out, "--impls", "tree@before:tree@after"])
    check(cmp.returncode in (0, 1) and "sides:  tree@before -> tree@after" in cmp.stdout
          and all(c in cmp.stdout for c in {r["case"] for r in rows}),
          "compare rc %d\n%s%s" % (cmp.returncode, cmp.stdout, cmp.stderr))
    one_line_error(a, tmp, "no kernel file", ["--impl-path", impl, "--impl", "tree@x=" + tmp],
                   "FileNotFoundError: %s has no tree_kernels.py" % os.path.realpath(tmp))


def t_benchsh(a, tmp):
    env = dict(os.environ, LINSTATE_SKIP_SETUP="1", LINSTATE_BUILD_DIR=a.build)
    ex = mod(a, "examples", "python", "conv_update.py")
    sh = [mod(a, "scripts", "bench.sh"), "--backend", "host", "--impl-path", ex, "--impl", "host,pyconv",
          "--model", "qwen3-next-80b-a3b", "--family", "conv1d_update", "--batch", "2", "--draft", "1"]
    p = run(sh + ["--list"], env=env)
    check(p.returncode == 0 and "impl:pyconv" in p.stdout, "bench.sh --list: rc %d\n%s%s" % (p.returncode, p.stdout, p.stderr[-2000:]))
    check("linstate-impls" in p.stderr, "bench.sh did not build the impl targets:\n" + p.stderr[-2000:])
    out = os.path.join(tmp, "sh.csv")
    p = run(sh + ["--min-samples", "3", "--min-time", "0.001", "--max-time", "0.05", "--out", out], env=env)
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    check(p.returncode == 0 and {r["impl"] for r in rows} == {"host", "pyconv"}
          and all(r["status"] == "ok" for r in rows), "bench.sh run: rc %d rows %s\n%s"
          % (p.returncode, [(r["impl"], r["status"]) for r in rows], p.stderr[-2000:]))


# ---------------------------------------------------------------- fault containment (fault_*)

FAULT_MODULE = """import ctypes, os, sys, time
sys.path.insert(0, %(examples)r)
import conv_update as ex
G = {}
PIDS = %(pids)r


def note(pid):
    with open(PIDS, "a") as f:
        f.write("%%d\\n" %% pid)


def op(p, tuning):
    if p.batch >= 2:
%(fault)s
    return ex.conv_update_host(p, tuning)


def linstate_impl(source, runtime):
    d = ex.linstate_impl(source, runtime)
    d["name"] = "pyfault"
    d["ops"] = {"conv_update": op}
    return d
"""

FAULTS = {
    "fork": "if not G:\n    G[1] = 1\n    os.fork()",
    # the child's header: struct msg_head of bench/supervise.c (kind MSG_ROW, n, retire, case, rep, pid)
    "forged": "import struct\npid = os.fork()\nif pid == 0:\n"
              "    for fd in os.listdir('/proc/self/fd'):\n"
              "        try:\n"
              "            if os.readlink('/proc/self/fd/' + fd).startswith('socket:'):\n"
              "                os.write(int(fd), struct.pack('<6i', 0x4c535231, 0, 0, 0, 0, os.getpid()))\n"
              "        except OSError:\n            pass\n"
              "    os._exit(0)\nos.waitpid(pid, 0)",
    # the child outlives the run's subprocess timeout: a parent waiting for the socket's end hangs
    "orphan": "if p.batch == 2 and not G:\n    G[1] = pid = os.fork()\n    if pid == 0:\n        time.sleep(900)\n"
              "        os._exit(0)\n    note(pid)\nelif p.batch == 4:\n    ctypes.string_at(0)",
    "parentkill": "pid = os.fork()\nif pid == 0:\n    time.sleep(900)\n    os._exit(0)\n"
                  "note(os.getpid())\nnote(pid)\ntime.sleep(900)",
    "exithang": "if not G:\n    G[1] = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda a: time.sleep(1e6))\n"
                "    ctypes.CDLL(None).__cxa_atexit(G[1], None, None)",
    "closefd": "os.closerange(3, 1000)",
    "bigint": "return 2 ** 70",
}


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(pids, seconds):
    end = time.time() + seconds
    while time.time() < end and any(alive(p) for p in pids):
        time.sleep(0.2)
    left = [p for p in pids if alive(p)]
    for p in left:  # leave nothing behind, whatever the verdict
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return left


def fault_setup(a, tmp, kind):
    pids = os.path.join(tmp, "pids")
    body = "\n".join("        " + l for l in FAULTS[kind].split("\n"))
    path = os.path.join(tmp, "fault_%s.py" % kind)
    with open(path, "w") as f:
        f.write(FAULT_MODULE % {"examples": mod(a, "examples", "python"), "pids": pids, "fault": body})
    cmd = [a.bench] + FAST + ["--impl-path", path, "--impl", "pyfault,host", "--family", "conv1d_update",
                              "--batch", "1,2,4", "--draft", "1", "--out", os.path.join(tmp, "f.csv")]
    return cmd, pids


def read_pids(path):
    return [int(l) for l in open(path).read().split()] if os.path.exists(path) else []


def fault_run(a, tmp, kind, timeout_arg="60", expect_rc=1, want=None):
    """Runs the fault module; want: {batch: (status, message part)} for pyfault rows (others ok)."""
    cmd, pids = fault_setup(a, tmp, kind)
    out = cmd[-1]
    try:
        p = run(cmd + ["--case-timeout", timeout_arg], timeout=300)
    except subprocess.TimeoutExpired:
        check(False, "%s: linstate-bench did not finish within 300 s" % kind)
        gone_within(read_pids(pids), 0)
        return [], None
    check(p.returncode == expect_rc, "%s: rc %d, want %d\n%s" % (kind, p.returncode, expect_rc, p.stderr[-3000:]))
    check(not [f for f in os.listdir(tmp) if ".tmp." in f], "%s: temporaries left: %s" % (kind, os.listdir(tmp)))
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    got = sorted((r["impl"], r["batch"]) for r in rows)
    check(got == sorted((i, b) for i in ("pyfault", "host") for b in ("1", "2", "4")),
          "%s: rows for %s, want one per impl and batch\n%s" % (kind, got, p.stderr[-2000:]))
    for r in rows:
        status, part = (want or {}).get(r["batch"], ("ok", "")) if r["impl"] == "pyfault" else ("ok", "")
        check(r["status"] == status and part in r["message"],
              "%s: %s %s: status %r message %r, want %s with %r" % (kind, r["impl"], r["case"], r["status"],
                                                                    r["message"], status, part))
        if status == "ok":
            check(r["samples"] not in ("", "0") and float(r["time_us_median"]) > 0,
                  "%s: %s %s: no timing" % (kind, r["impl"], r["case"]))
    left = gone_within(read_pids(pids), 30)
    check(not left, "%s: processes left behind: %s" % (kind, left))
    return rows, p


def t_fault_fork(a, tmp):
    fault_run(a, tmp, "fork", expect_rc=0)


def t_fault_forged(a, tmp):
    _, p = fault_run(a, tmp, "forged", want={"2": ("error:crash", "not the worker"),
                                              "4": ("error:crash", "not the worker")})


def t_fault_orphan(a, tmp):
    fault_run(a, tmp, "orphan", timeout_arg="0", want={"4": ("error:crash", "SIGSEGV")})


def t_fault_exithang(a, tmp):
    _, p = fault_run(a, tmp, "exithang", expect_rc=1)
    if p is not None:
        check("did not exit" in p.stderr and "killed" in p.stderr, "exithang: stderr does not say the worker was "
              "killed:\n" + p.stderr[-2000:])
        check("wrote" in p.stderr + p.stdout, "exithang: no 'wrote' line\n" + p.stderr[-2000:])


def t_fault_closefd(a, tmp):
    fault_run(a, tmp, "closefd", want={"2": ("error:exit", "lost its socket"), "4": ("error:exit", "lost its socket")})


def t_fault_bigint(a, tmp):
    _, p = fault_run(a, tmp, "bigint", want={"2": ("error:verify", ""), "4": ("error:verify", "")})
    if p is not None:
        check("returned an int above the range of a C long" in p.stderr and "returned -1" not in p.stderr,
              "bigint: value not named:\n" + p.stderr[-2000:])


def t_fault_parentkill(a, tmp):
    cmd, pids = fault_setup(a, tmp, "parentkill")
    # output to a file: a pipe would stay open in the child that outlives linstate-bench
    with open(os.path.join(tmp, "stderr"), "w") as err:
        proc = subprocess.Popen(cmd + ["--case-timeout", "0"], stdout=err, stderr=err)
    end = time.time() + 120
    while time.time() < end and len(read_pids(pids)) < 2 and proc.poll() is None:
        time.sleep(0.2)
    got = read_pids(pids)
    check(len(got) == 2, "parentkill: the op did not start its child (rc %s)" % proc.poll())
    proc.kill()
    proc.wait()
    left = gone_within(got, 30)
    check(not left, "parentkill: after SIGKILL to linstate-bench, worker/child still alive: %s (of %s)" % (left, got))


def gpu_bench(a, out, *extra):
    cmd = [a.bench, "--backend", "cuda", "--family", "conv1d_update", "--model",
           "qwen3-next-80b-a3b,kimi-linear-48b-a3b", "--tp", "2", "--batch", "1,64", "--draft", "1,3",
           "--graph", "both", "--out", out] + list(extra)
    p = run(cmd, timeout=900)
    check(p.returncode == 0, "rc %d for %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-4000:]))
    return list(csv.DictReader(open(out))) if os.path.exists(out) else []


def t_gpu(a, tmp):
    rows = gpu_bench(a, os.path.join(tmp, "ex.csv"), "--impl-path", mod(a, "examples", "python", "conv_update.py"),
                     "--impl", "pyconv,linstate")
    py = [r for r in rows if r["impl"] == "pyconv"]
    check(len(py) == 16, "pyconv rows: %d, want 16 (2 models x 2 B x 2 T x eager/graph)" % len(py))
    for r in py:
        check(r["status"] == "ok" and float(r["max_rel_err"]) <= CONV_TOL,
              "%s graph=%s: %s err %s" % (r["case"], r["graph"], r["status"], r["max_rel_err"]))
        check(r["host_call_us"] != "" and float(r["host_call_us"]) > 0, "host_call_us empty: " + r["case"])
    rows = gpu_bench(a, os.path.join(tmp, "probe.csv"), "--impl-path", mod(a, "tests", "python", "gpu_probe.py"),
                     "--impl", "gpuprobe@log=" + tmp)
    check(rows and all(r["status"] == "ok" for r in rows), "probe rows: %s" % [(r["case"], r["status"]) for r in rows])
    log = os.path.join(tmp, "probe.log")
    lines = [l for l in open(log).read().split("\n") if l] if os.path.exists(log) else []
    print("probe observations:\n  " + "\n  ".join(lines))
    obs = [l.split() for l in lines]
    check(obs and all(o[0] == "alias=1" and o[3] == "device=cuda" for o in obs), "a tensor did not alias: %s" % obs)
    captured = [o for o in obs if o[2] == "capturing=1"]
    check(captured and all(o[1] != "stream=0" for o in captured), "no call captured on linstate's stream: %s" % obs)


def needs(check_name):
    """None when what the check needs is importable, else why it is skipped."""
    try:
        if check_name != "gpu":
            import numpy  # noqa: F401  (the embedded interpreter is the one CMake found; so is this one)
            return None
        import torch
        import triton  # noqa: F401
        return None if torch.cuda.is_available() else "no GPU visible to torch"
    except ImportError as e:
        return "%s (the interpreter CMake found; scripts/setup.sh installs numpy)" % e


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["example", "case_begin", "lazy", "wrong", "raise", "errors", "sources", "tree",
                                      "benchsh", "null_slot", "process", "gpu", "fault_fork", "fault_forged",
                                      "fault_orphan", "fault_parentkill", "fault_exithang", "fault_closefd",
                                      "fault_bigint"])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--build", default="")
    a = ap.parse_args()
    why = needs(a.check)
    if why:
        print("SKIPPED: " + why)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        globals()["t_" + a.check](a, tmp)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
