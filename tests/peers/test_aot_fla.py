#!/usr/bin/env python3
"""AOT-compiles fla-core 0.6.0's fused recurrent KDA kernel for sm_90 at the kimi-linear tp4 shape
(H = HV = 8, K = V = 128) in both state layouts (STATE_V_FIRST) and fp32/bf16 state, and checks the
cubins and their metadata (the argument order test_fla_adapt.c assumes). Exit 77 (CTest skip)
when triton 3.6 or the fetched sources are absent."""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aot_preamble  # noqa: E402

src = aot_preamble.sources(root, "fla-core-0.6.0", ("fla/ops/kda/fused_recurrent.py", "fla/ops/utils/softplus.py"))

fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


kernel = "fused_recurrent_kda_fwd_kernel"
with tempfile.TemporaryDirectory() as out:
    subprocess.run([sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec",
                    os.path.join(root, "peers/fla/kernels.py"), "--src-root", src, "--out", out,
                    "--only", "H8_HV8_K128_V128", "--jobs", "2", "--prefix", "fla"], check=True)
    with open(os.path.join(out, "tk_table.c")) as fh:
        table = fh.read()
    for sd, sty in (("f32", "*fp32"), ("bf16", "*bf16")):
        for lay, vfirst in (("kv", False), ("vk", True)):
            stem = f"{kernel}__H8_HV8_K128_V128_S{sd}_{lay}"
            with open(os.path.join(out, stem + ".cubin"), "rb") as fh:
                cubin = fh.read()
            with open(os.path.join(out, stem + ".json")) as fh:
                m = json.load(fh)
            check(cubin[:4] == b"\x7fELF", f"{stem}: cubin is an ELF image")
            check(m["arch"] == 90 and m["entry"] == kernel, f"{stem}: sm_90, entry {m['entry']}")
            check(m["num_warps"] == 4, f"{stem}: num_warps {m['num_warps']} (fused_recurrent_kda_fwd: 4)")
            check(m["global_scratch_size"] == 0 and m["profile_scratch_size"] == 0, f"{stem}: no scratch")
            check(m["launch_pdl"] == 0, f"{stem}: no PDL")
            names = [a["name"] for a in m["args"]]
            check(names == ["q", "k", "v", "g", "beta", "A_log", "dt_bias", "o", "h0", "ht",
                            "ssm_state_indices", "N", "T"], f"{stem}: runtime args {names}")
            check([a["type"] for a in m["args"]][11:] == ["i64", "i64"], f"{stem}: N, T are i64 (tl.int64)")
            check([a["type"] for a in m["args"]][8:10] == [sty, sty], f"{stem}: state pointers {sty}")
            c = m["constexprs"]
            check(c["STATE_V_FIRST"] == vfirst, f"{stem}: STATE_V_FIRST {vfirst}")
            check(c["IS_CONTINUOUS_BATCHING"] and c["INPLACE_FINAL_STATE"] and c["USE_GATE_IN_KERNEL"]
                  and c["APPLY_BETA_SIGMOID"] and not c["IS_SPEC_DECODING"],
                  f"{stem}: continuous batching, in place, gate + beta sigmoid in kernel")
            check(c["BV"] == 32 and c["BK"] == 128 and c["num_stages"] == 2, f"{stem}: BV 32, BK 128")
            check(c["stride_init_state_token"] == 8 * 128 * 128, f"{stem}: slot stride HV*K*V")
            check(abs(c["scale"] - 128 ** -0.5) < 1e-12, f"{stem}: scale K^-0.5")
    check("fla_variants[]" in table and '"H8_HV8_K128_V128_Sf32_kv"' in table, "C table rows")
sys.exit(1 if fails else 0)
