#!/usr/bin/env python3
"""AOT-compiles SGLang 0.5.23's fused KDA conv + recurrence chain-verify kernel
(fused_kda_conv_gating_verify_kernel, kimi-linear tp2, fp32 state, T = 4) for sm_90 and checks the
cubin and its metadata against what the adapter (peers/sglang/sg_adapt.c, sg_conv_delta_*) passes
and test_sg_adapt_conv_delta.c writes by hand: the runtime arguments in order, the constexprs the
wrapper sets on CUDA (BV 4, 4 warps, PDL, windows and steps saved, no ring, no lower bound), and
the variant list (4 heads x 2 state dtypes x T 3..8). Exit 77 (CTest skip) when triton 3.6 or the
fetched sources are absent."""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aot_preamble  # noqa: E402

src = aot_preamble.sources(root, "sglang-0.5.23",
                           ("sglang/kernels/ops/attention/linear/fused_kda_conv_recurrent_verify.py",))
KERNEL = "fused_kda_conv_gating_verify_kernel"
stem = f"{KERNEL}__H16_HV16_K128_V128_Sf32_T4"
aot = [sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec", os.path.join(root, "peers/sglang/kernels.py"),
       "--src-root", src]
with tempfile.TemporaryDirectory() as out:
    listed = subprocess.run(aot + ["--out", out, "--list"], check=True, capture_output=True, text=True).stdout.split()
    subprocess.run(aot + ["--out", out, "--only", stem, "--jobs", "1", "--prefix", "sg"], check=True)
    with open(os.path.join(out, stem + ".cubin"), "rb") as fh:
        cubin = fh.read()
    with open(os.path.join(out, stem + ".json")) as fh:
        m = json.load(fh)
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


mine = [s for s in listed if s.startswith(KERNEL + "__")]
check(len(mine) == 4 * 2 * 6, f"{len(mine)} variants (kimi heads at tp 1/2/4/8 x fp32/bf16 x T 3..8)")
check(f"{KERNEL}__H4_HV4_K128_V128_Sbf16_T8" in mine and not any(s.endswith("_T2") for s in mine),
      "T 3..8 only (the wrapper asserts T >= W - 1)")
check(cubin[:4] == b"\x7fELF" and len(cubin) > 1000, f"cubin ELF, {len(cubin)} B")
check(m["arch"] == 90 and m["num_ctas"] == 1 and m["num_warps"] == 4, "sm_90, 1 CTA, 4 warps (CUDA default)")
check(m["launch_pdl"] == 1, "PDL (USE_GDC + launch_pdl)")
check(m["global_scratch_size"] == 0 and m["profile_scratch_size"] == 0, "no scratch")
want = [("x", "*bf16"), ("w", "*fp32"), ("conv_bias", "*fp32"), ("conv_state", "*bf16"),
        ("conv_state_indices", "*i32"), ("inter_conv_window", "*bf16"), ("inter_state_indices", "*i32"),
        ("a", "*bf16"), ("b_gate", "*bf16"), ("A_log", "*fp32"), ("dt_bias", "*fp32"),
        ("softplus_beta", "fp32"), ("softplus_threshold", "fp32"), ("h0_source", "*fp32"),
        ("h0_indices", "*i32"), ("inter_states", "*fp32"), ("o", "*bf16"), ("scale", "fp32"),
        ("cache_steps", "i32"), ("stride_x_tok", "i32"), ("stride_w_dim", "i32"), ("stride_cs_line", "i32"),
        ("stride_cs_tok", "i32"), ("stride_iw_line", "i32"), ("stride_iw_step", "i32"), ("stride_iw_dim", "const"),
        ("stride_iw_win", "i32"), ("stride_a_tok", "i32"), ("stride_b_tok", "i32")]
got = [(a["name"], a["type"]) for a in m["args"]]
check(got == want, f"runtime args in order: {got}")
div = {a["name"]: a.get("div16") for a in m["args"]}
check(div["cache_steps"] == 0 and div["stride_w_dim"] == 0 and div["stride_x_tok"] == 1 and div["stride_b_tok"] == 1,
      "divisibility as test_sg_adapt_conv_delta.c declares (cache_steps, stride_w_dim not /16)")
check([a.get("value") for a in m["args"] if a["name"] == "stride_iw_dim"] == [1], "window channel stride: constexpr 1")
c = m["constexprs"]
check((c["T"], c["W"], c["H"], c["HV"], c["K"], c["V"], c["BK"], c["BV"]) == (4, 4, 16, 16, 128, 128, 128, 4),
      "T 4, W 4, H = HV = 16, K = V = 128, BV 4")
check(c["SAVE_INTERMEDIATE_WINDOW"] and c["CACHE_INTERMEDIATE_STATES"] and not c["CACHE_RING"], "windows and steps, no ring")
check(not c["HAS_BIAS"] and c["USE_QK_L2NORM_IN_KERNEL"] and not c["USE_LOWER_BOUND"] and not c["ROUND_CONV_PRODUCTS"],
      "no bias, q/k L2 norm, softplus gate, CUDA products")
check(c["lower_bound"] is None and c["USE_GDC"], "lower_bound None, USE_GDC")
sys.exit(1 if fails else 0)
