#!/usr/bin/env python3
"""AOT-compiles SGLang 0.5.23's GDN packed-decode kernel for sm_90 at the qwen3-next tp2 shape
(H 8, HV 16, K = V = 128, fp32 state) and its KDA packed-decode kernel at kimi-linear tp2 (H = HV =
16, bf16 state) and checks the cubins and their metadata. Exit 77 (CTest skip) when triton 3.6 or
the fetched sources are absent."""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aot_preamble  # noqa: E402

src = aot_preamble.sources(root, "sglang-0.5.23", ("sglang/kernels/ops/attention/fla/fused_recurrent.py",))

stem = "fused_recurrent_gated_delta_rule_packed_decode_kernel__H8_HV16_K128_V128_Sf32"
with tempfile.TemporaryDirectory() as out:
    subprocess.run([sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec",
                    os.path.join(root, "peers/sglang/kernels.py"), "--src-root", src, "--out", out,
                    "--only", stem, "--jobs", "1", "--prefix", "sg"], check=True)
    with open(os.path.join(out, stem + ".cubin"), "rb") as fh:
        cubin = fh.read()
    with open(os.path.join(out, stem + ".json")) as fh:
        m = json.load(fh)
    with open(os.path.join(out, "tk_table.c")) as fh:
        table = fh.read()
    kstem = "fused_recurrent_kda_packed_decode_kernel__H16_HV16_K128_V128_Sbf16"
    subprocess.run([sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec",
                    os.path.join(root, "peers/sglang/kernels.py"), "--src-root", src, "--out", out,
                    "--only", kstem, "--jobs", "1", "--prefix", "sg"], check=True)
    with open(os.path.join(out, kstem + ".json")) as fh:
        km = json.load(fh)
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


check(cubin[:4] == b"\x7fELF", "cubin is an ELF image")
check(len(cubin) > 1000, f"cubin size {len(cubin)}")
check(m["arch"] == 90, "target sm_90")
check(m["entry"] == "fused_recurrent_gated_delta_rule_packed_decode_kernel", f"entry {m['entry']}")
check(m["num_warps"] == 1, f"num_warps {m['num_warps']} (SGLang launches 1)")
check(m["num_ctas"] == 1, "num_ctas 1")
check(m["global_scratch_size"] == 0, "no global scratch")
check(m["profile_scratch_size"] == 0, "no profile scratch")
check(m["launch_pdl"] == 0, "no PDL (the packed wrapper does not ask for it)")
check(m["shared"] < 48 * 1024, f"shared {m['shared']} B")
names = [a["name"] for a in m["args"]]
check(names == ["mixed_qkv", "a", "b", "A_log", "dt_bias", "o", "h0", "ht", "ssm_state_indices",
                "scale"], f"runtime args in signature order: {names}")
check(all(a["div16"] == 1 for a in m["args"] if a["type"].startswith("*")), "pointers /16")
check([a["type"] for a in m["args"]][6:8] == ["*fp32", "*fp32"], "fp32 state pointers")
c = m["constexprs"]
check((c["H"], c["HV"], c["K"], c["V"], c["BK"], c["BV"]) == (8, 16, 128, 128, 128, 32),
      "constexprs H 8 HV 16 K V BK 128 BV 32")
check(c["stride_mixed_qkv_tok"] == 2 * 8 * 128 + 16 * 128, "mixed_qkv row stride 4096")
check(c["stride_init_state_token"] == 16 * 128 * 128, "state slot stride HV*V*K")
check("sg_variants[]" in table and '"H8_HV16_K128_V128_Sf32"' in table, "C table row")

# KDA packed decode: the same argument list (lower_bound compiled None), per-K gate strides
check(km["entry"] == "fused_recurrent_kda_packed_decode_kernel" and km["num_warps"] == 1 and km["launch_pdl"] == 0,
      f"kda packed: entry {km['entry']}, 1 warp, no PDL")
check([a["name"] for a in km["args"]] == names, "kda packed: runtime args as the GDN kernel's (lower_bound None)")
check([a["type"] for a in km["args"]][3:5] == ["*fp32", "*fp32"] and km["args"][6]["type"] == "*bf16",
      "kda packed: fp32 A_log and dt_bias [HV*K], bf16 state")
c = km["constexprs"]
check((c["H"], c["HV"], c["stride_a_tok"], c["stride_b_tok"], c["USE_LOWER_BOUND"]) == (16, 16, 16 * 128, 16, False),
      "kda packed: H = HV = 16, a row HV*K, b row HV, no safe gate")
check(c["stride_mixed_qkv_tok"] == 2 * 16 * 128 + 16 * 128 and km["global_scratch_size"] == 0,
      "kda packed: mixed_qkv row 6144, no scratch")
sys.exit(1 if fails else 0)
