#!/usr/bin/env python3
"""End-to-end checks of --pool-slots on the host backend.

usage: test_bench_pool_slots.py BENCH_BINARY HEADER_TOOL
Bad values (0, text, duplicates) are one stderr line naming the value, rc 2, no CSV. Explicit
capacities plan one case per N (key suffix /S:N, N < B not planned) and record pool_slots = N + 1;
without the flag the kernels use the serving default (host: max(B, 16) for decode, max(B, 48) for
verify); every row is verified (max_rel_err 0 against the host reference).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_cli import fail, read_csv, run  # noqa: E402

ARGS = ["--backend", "host", "--model", "qwen3-next-80b-a3b", "--tp", "8", "--family", "gdn,pool/alloc",
        "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.05"]


def main():
    bench, header_tool = os.path.abspath(sys.argv[1]), sys.argv[2]
    header = subprocess.run([header_tool], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        never = os.path.join(tmp, "never.csv")
        for bad, value in ((["--pool-slots", "0"], "'0'"), (["--pool-slots", "x"], "'x'"),
                           (["--pool-slots", "64,8,64"], "'64'")):
            rc, _, err = run(bench, ARGS + bad + ["--out", never], tmp)
            lines = [l for l in err.splitlines() if l.strip()]
            if rc != 2 or len(lines) != 1 or value not in lines[0] or os.path.exists(never):
                fail("%s: rc %d, stderr %r" % (bad, rc, err))

        out = os.path.join(tmp, "axis.csv")
        rc, _, err = run(bench, ARGS + ["--pool-slots", "2,32", "--batch", "1,4", "--draft", "1,2",
                                        "--out", out], tmp)
        if rc != 0:
            fail("axis run rc %d: %s" % (rc, err[-2000:]))
        rows = read_csv(out, header)
        kernel = [r for r in rows if r["case"].startswith("gdn/")]
        want = sorted("gdn/%s/qwen3-next-80b-a3b/tp8/B:%d/T:%d/fp32/S:%d" % (op, b, t, s)
                      for op, t in (("decode", 1), ("verify", 2)) for b in (1, 4) for s in (2, 32) if s >= b)
        if sorted(r["case"] for r in kernel) != want:
            fail("planned kernel cases %r, expected %r" % (sorted(r["case"] for r in kernel), want))
        for r in kernel:
            s = int(r["case"].rsplit("/S:", 1)[1])
            if int(r["pool_slots"]) != s + 1 or r["status"] != "ok" or float(r["max_rel_err"]) != 0.0:
                fail("%s: pool_slots %s status %s err %s" % (r["case"], r["pool_slots"], r["status"], r["max_rel_err"]))
        if not any(r["case"].startswith("pool/alloc") and "/S:" not in r["case"] for r in rows):
            fail("pool/alloc rows missing or keyed by /S: %r" % [r["case"] for r in rows])

        out = os.path.join(tmp, "default.csv")
        rc, _, err = run(bench, ARGS + ["--family", "gdn", "--batch", "1,32", "--draft", "1,2", "--out", out], tmp)
        if rc != 0:
            fail("default run rc %d: %s" % (rc, err[-2000:]))
        for r in read_csv(out, header):
            b, t = int(r["batch"]), int(r["draft_tokens"])
            want_s = max(b, 16 if t == 1 else 48)
            if "/S:" in r["case"] or int(r["pool_slots"]) != want_s + 1:
                fail("%s: default pool_slots %s, expected %d" % (r["case"], r["pool_slots"], want_s + 1))
    print("ok: pool_slots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
