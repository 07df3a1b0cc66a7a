#!/usr/bin/env python3
"""Guard zones (docs/timing.md "Guard zones") end to end on the host runtime (CTest plugin_guard).

  test_plugin_guard.py BENCH OOB_PLUGIN EXAMPLE_PLUGIN
  test_plugin_guard.py BENCH --cuda OOB_CUDA_PLUGIN     (label gpu; exit 77 without a GPU)

The "oob" plugin's conv_update is correct but writes 256 state elements outside the state view it
is given. Its rows must be fail_bounds (never ok), with empty timing cells, one stderr line naming
the pool buffer and the offsets, and exit 1; the write before the view is seen right after
verification, and after timing under --no-verify. The example plugin (no stray write) stays ok.
With --cuda, "oob_cuda" writes the 512 bytes before its state in device memory: fail_bounds,
seen after verification, offsets -512..-1.
"""
import csv
import os
import subprocess
import sys
import tempfile

FAILURES = []
ARGS = ["--backend", "host", "--family", "conv1d_update", "--model", "qwen3-next-80b-a3b", "--tp", "8",
        "--batch", "1,3", "--draft", "1", "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.01"]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, file=sys.stderr)


def sweep(bench, out, *extra):
    p = subprocess.run([bench] + ARGS + ["--out", out] + list(extra), capture_output=True, text=True, timeout=240)
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    return p, rows


def main_cuda(bench, plugin):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cuda.csv")
        p = subprocess.run([bench, "--backend", "cuda", "--list"], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            print("SKIPPED: no CUDA device (%s)" % p.stderr.strip()[-200:])
            return 77
        args = list(ARGS)
        args[args.index("--backend") + 1] = "cuda"
        p = subprocess.run([bench] + args + ["--out", out, "--impl-path", plugin, "--impl", "oob_cuda"],
                           capture_output=True, text=True, timeout=240)
        rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
        check(p.returncode == 1, "cuda: rc %d, want 1\n%s" % (p.returncode, p.stderr[-2000:]))
        check(len(rows) == 2 and all(r["status"] == "fail_bounds" for r in rows),
              "cuda: statuses %s, want fail_bounds" % [r["status"] for r in rows])
        lines = [l for l in p.stderr.splitlines() if "write outside" in l]
        check(len(lines) == 2 and all("after verification" in l and "offsets -512..-1 " in l for l in lines),
              "cuda: guard lines %s" % lines)
    return 1 if FAILURES else 0


def main():
    if sys.argv[2] == "--cuda":
        return main_cuda(sys.argv[1], sys.argv[3])
    bench, oob, example = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        for where, extra, phase in (("after", [], None), ("before", [], "after verification"),
                                    ("before", ["--no-verify"], "after timing")):
            what = "oob.where=%s %s" % (where, " ".join(extra))
            p, rows = sweep(bench, os.path.join(tmp, "oob-%s%d.csv" % (where, len(extra))), "--impl-path", oob,
                            "--impl", "oob", "--tune", "oob.where=" + where, *extra)
            check(p.returncode == 1, "%s: rc %d, want 1\n%s" % (what, p.returncode, p.stderr[-2000:]))
            check(len(rows) == 2, "%s: %d rows, want 2" % (what, len(rows)))
            for r in rows:
                check(r["status"] == "fail_bounds", "%s: %s status %r, want fail_bounds" % (what, r["case"], r["status"]))
                check(r["time_us_median"] == "" and r["samples"] == "0",
                      "%s: %s was timed (median %r)" % (what, r["case"], r["time_us_median"]))
            lines = [l for l in p.stderr.splitlines() if "write outside" in l]
            check(len(lines) == 2, "%s: %d 'write outside' lines, want one per case:\n%s" % (what, len(lines), p.stderr))
            side = "past its end" if where == "after" else "before its start"
            for l in lines:
                check("the pool's conv state 0 buffer" in l and side in l and "offsets" in l,
                      "%s: the line does not name the buffer, side and offsets: %s" % (what, l))
                check(phase is None or phase in l, "%s: not seen %s: %s" % (what, phase, l))
            if where == "before" and lines:  # 256 bf16 elements right before the buffer
                check("offsets -512..-1 " in lines[0], "%s: offsets: %s" % (what, lines[0]))
        p, rows = sweep(bench, os.path.join(tmp, "example.csv"), "--impl-path", example, "--impl", "example")
        check(p.returncode == 0, "example: rc %d\n%s" % (p.returncode, p.stderr[-2000:]))
        check(len(rows) == 2 and all(r["status"] == "ok" for r in rows),
              "example: statuses %s, want ok" % [r["status"] for r in rows])
    if FAILURES:
        print("%d failure(s)" % len(FAILURES), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
