#!/usr/bin/env python3
"""Python impls on the cuda runtime (CTest label gpu; exit 77 without a GPU or without torch).

  test_pyimpl_gpu.py --bench BIN --repo DIR

1. examples/python/conv_update.py (its Triton kernel) beside linstate on conv1d_update decode and
   verify, channel-major (qwen3-next) and window-major (kimi-linear) state, eager and CUDA-graph
   rows: every pyconv row ok, verified within the conv tolerance, host_call_us set.
2. tests/python/gpu_probe.py (the same kernel, observing itself): every tensor aliases
   linstate's buffer (zero copy), and the graph rows' calls ran while linstate's own stream was
   being captured (the call launched on linstate's stream, not torch's).
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, file=sys.stderr)


def bench(a, out, *extra):
    cmd = [a.bench, "--backend", "cuda", "--family", "conv1d_update", "--model",
           "qwen3-next-80b-a3b,kimi-linear-48b-a3b", "--tp", "2", "--batch", "1,64", "--draft", "1,3",
           "--graph", "both", "--out", out] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    check(p.returncode == 0, "rc %d for %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-4000:]))
    return list(csv.DictReader(open(out))) if os.path.exists(out) else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--repo", required=True)
    a = ap.parse_args()
    try:
        import torch
        if not torch.cuda.is_available():
            print("SKIPPED: no GPU visible to torch")
            return 77
        import triton  # noqa: F401
    except ImportError as e:
        print("SKIPPED: %s (the interpreter CMake found has no torch/triton)" % e)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        rows = bench(a, os.path.join(tmp, "ex.csv"), "--impl-path",
                     os.path.join(a.repo, "examples", "python", "conv_update.py"), "--impl", "pyconv,linstate")
        py = [r for r in rows if r["impl"] == "pyconv"]
        check(len(py) == 16, "pyconv rows: %d, want 16 (2 models x 2 B x 2 T x eager/graph)" % len(py))
        for r in py:
            check(r["status"] == "ok" and float(r["max_rel_err"]) <= 1e-2,
                  "%s graph=%s: %s err %s" % (r["case"], r["graph"], r["status"], r["max_rel_err"]))
            check(r["host_call_us"] != "" and float(r["host_call_us"]) > 0, "host_call_us empty: " + r["case"])
        rows = bench(a, os.path.join(tmp, "probe.csv"), "--impl-path", os.path.join(a.repo, "tests", "python", "gpu_probe.py"),
                     "--impl", "gpuprobe@log=" + tmp)
        check(rows and all(r["status"] == "ok" for r in rows), "probe rows: %s" % [(r["case"], r["status"]) for r in rows])
        lines = open(os.path.join(tmp, "probe.log")).read().split("\n") if os.path.exists(os.path.join(tmp, "probe.log")) else []
        obs = [l.split() for l in lines if l]
        print("probe observations:\n  " + "\n  ".join(lines))
        check(obs and all(o[0] == "alias=1" and o[3] == "device=cuda" for o in obs), "a tensor did not alias: %s" % obs)
        captured = [o for o in obs if o[2] == "capturing=1"]
        check(captured and all(o[1] != "stream=0" for o in captured), "no call captured on linstate's stream: %s" % obs)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
