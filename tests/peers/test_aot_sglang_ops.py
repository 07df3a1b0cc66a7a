#!/usr/bin/env python3
"""AOT-compiles SGLang 0.5.23's causal conv1d update (qwen3-next tp2 decode, channel-major; kimi
tp1 verify T=4, window-major with fp32 weights; nemotron-h tp2 decode with bias) and its Mamba2
selective_state_update (nemotron-h tp2 decode fp32; verify with z, bf16; falcon-h1 tp8 decode) for
sm_90 and checks the cubins and their metadata against what the adapters (peers/sglang/sg_adapt.c)
pass. Exit 77 (CTest skip) when triton 3.6 or the fetched sources are absent."""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aot_preamble  # noqa: E402

src = aot_preamble.sources(root, "sglang-0.5.23", ("sglang/kernels/ops/mamba/causal_conv1d_triton.py", "sglang/kernels/ops/mamba/triton_ops/mamba_ssm.py"))

CONV = "_causal_conv1d_update_kernel"
SSU = "_selective_scan_update_kernel"
stems = [
    f"{CONV}__C4096_T1_W4_CM_wbf16_B0",
    f"{CONV}__C12288_T4_W4_WM_wfp32_B0",
    f"{CONV}__C5120_T1_W4_CM_wbf16_B1",
    f"{SSU}__NH64_HD64_DS128_NG4_Sf32_dec_Z0",
    f"{SSU}__NH64_HD64_DS128_NG4_Sbf16_ver_Z1",
    f"{SSU}__NH3_HD128_DS256_NG1_Sf32_dec_Z0",
]
meta = {}
with tempfile.TemporaryDirectory() as out:
    listed = subprocess.run([sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec",
                             os.path.join(root, "peers/sglang/kernels.py"), "--src-root", src, "--out", out,
                             "--list"], check=True, capture_output=True, text=True).stdout.split()
    for stem in stems:
        subprocess.run([sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec",
                        os.path.join(root, "peers/sglang/kernels.py"), "--src-root", src, "--out", out,
                        "--only", stem, "--jobs", "1", "--prefix", "sg"], check=True)
        with open(os.path.join(out, stem + ".cubin"), "rb") as fh:
            cubin = fh.read()
        with open(os.path.join(out, stem + ".json")) as fh:
            meta[stem] = (cubin, json.load(fh))
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


# the spec: both orientations, T = 1..8, every preset conv shape; 12 SSU shapes x 2 dtypes x 2 modes
conv_listed = [s for s in listed if s.startswith(CONV + "__")]
ssu_listed = [s for s in listed if s.startswith(SSU + "__")]
check(len(conv_listed) == 20 * 2 * 8, f"{len(conv_listed)} conv variants (20 shapes x 2 orientations x T 1..8)")
check(len(ssu_listed) == 12 * 2 * 2 + 4 * 2 * 2, f"{len(ssu_listed)} ssu variants")
for orient in ("CM", "WM"):
    check(all(f"{CONV}__C8192_T{t}_W4_{orient}_wbf16_B0" in listed for t in range(1, 9)),
          f"qwen tp1 conv {orient} for T = 1..8")

for stem, (cubin, m) in meta.items():
    check(cubin[:4] == b"\x7fELF" and len(cubin) > 1000, f"{stem}: cubin ELF, {len(cubin)} B")
    check(m["arch"] == 90 and m["num_ctas"] == 1, f"{stem}: sm_90, 1 CTA")
    check(m["global_scratch_size"] == 0 and m["profile_scratch_size"] == 0, f"{stem}: no scratch")
    check(m["launch_pdl"] == 1, f"{stem}: PDL (USE_GDC + launch_pdl on sm_90, as the wrappers set)")
    check(m["shared"] < 48 * 1024, f"{stem}: shared {m['shared']} B")
    check(all(a["div16"] == 1 for a in m["args"] if a["type"].startswith("*")), f"{stem}: pointers /16")

# conv: only pointers and batch are runtime; strides, dim, seqlen are compiled in
names = lambda s: [a["name"] for a in meta[s][1]["args"]]
cm = meta[stems[0]][1]
check(cm["entry"] == CONV and cm["num_warps"] == 4, f"conv entry {cm['entry']}, 4 warps (default)")
check(names(stems[0]) == ["x_ptr", "w_ptr", "conv_state_ptr", "conv_state_indices_ptr",
                          "intermediate_conv_window_ptr", "o_ptr", "batch"], f"conv decode args {names(stems[0])}")
check(cm["args"][-1] == {"name": "batch", "type": "i32", "div16": 0}, "batch: i32, not /16 (any B)")
c = cm["constexprs"]
check((c["dim"], c["seqlen"], c["state_len"], c["BLOCK_N"], c["KERNEL_WIDTH"]) == (4096, 1, 3, 256, 4),
      "conv decode constexprs dim 4096, seqlen 1, state_len 3, BLOCK_N 256, width 4")
check((c["stride_conv_state_seq"], c["stride_conv_state_dim"], c["stride_conv_state_tok"]) == (4096 * 3, 3, 1),
      "channel-major state strides (3C, 3, 1)")
check(c["pad_slot_id"] == -1 and c["USE_PAD_SLOT"] and c["IS_CONTINUOUS_BATCHING"] and not c["IS_SPEC_DECODING"],
      "pad slot -1, continuous batching, no num_accept_tokens")
check(c["HAS_BIAS"] is False and c["SILU_ACTIVATION"] is True and c["SAVE_INTERMEDIATE"] is False,
      "no bias, SiLU, no windows")
vm = meta[stems[1]][1]
check(names(stems[1]) == ["x_ptr", "w_ptr", "conv_state_ptr", "conv_state_indices_ptr",
                          "intermediate_conv_window_ptr", "intermediate_state_indices_ptr", "o_ptr", "batch"],
      f"conv verify args {names(stems[1])}")
check(vm["args"][1]["type"] == "*fp32", "kimi: fp32 weights")
c = vm["constexprs"]
C = 12288
check((c["stride_conv_state_dim"], c["stride_conv_state_tok"]) == (1, C), "window-major state strides (1, C)")
check((c["stride_inter_seq"], c["stride_inter_step"], c["stride_inter_dim"], c["stride_inter_win"]) ==
      (4 * C * 3, C * 3, 1, C), "dense window-major inter [slot, T, C, W-1]")
check((c["stride_x_seq"], c["stride_x_dim"], c["stride_x_token"]) == (4 * C, 1, C), "x [B, T, C] token-major")
check((c["stride_o_seq"], c["stride_o_dim"], c["stride_o_token"]) == (4 * C, 1, C), "o like x (empty_like)")
check(c["SAVE_INTERMEDIATE"] is True and c["NP2_SEQLEN"] == 4, "windows saved, NP2_SEQLEN 4")
check(names(stems[2])[2] == "bias_ptr" and meta[stems[2]][1]["constexprs"]["HAS_BIAS"] is True,
      "nemotron-h: bias_ptr after w_ptr")

# ssu: the tied path, runtime strides as the JIT specialises them
d = meta[stems[3]][1]
check(d["entry"] == SSU and d["num_warps"] == 1, f"ssu entry {d['entry']}, num_warps 1 (dstate 128)")
n = names(stems[3])
check(n[:12] == ["state_ptr", "x_ptr", "dt_ptr", "dt_bias_ptr", "A_ptr", "B_ptr", "C_ptr", "D_ptr", "out_ptr",
                 "state_batch_indices_ptr", "pad_slot_id", "cache_steps"], f"ssu decode leading args {n[:12]}")
check("z_ptr" not in n and "intermediate_states_buffer" not in n, "decode: z and inter compiled as None")
a = {x["name"]: x for x in d["args"]}
check(a["T"]["type"] == "i32" and a["T"]["div16"] == 0, "T is do_not_specialize: one variant for any T")
check(a["stride_dt_head"]["type"] == "const" and a["stride_dt_dim"]["div16"] == 1,
      "dt expanded over head_dim: stride 1 per head (constexpr), 0 per dim")
check(len(d["args"]) + 2 <= 64, f"{len(d['args'])} args fit TK_MAX_ARGS")
c = d["constexprs"]
check(c["TIE_HDIM"] and c["DT_SOFTPLUS"] and c["HAS_DT_BIAS"] and c["HAS_D"] and not c["HAS_Z"],
      "tied path, softplus, dt_bias, D, no z")
check(c["BLOCK_SIZE_M"] == 8 and c["BLOCK_SIZE_DSTATE"] == 128 and not c["DISABLE_STATE_UPDATE"],
      "BLOCK_SIZE_M 8, BLOCK_SIZE_DSTATE 128, state updated")
v = meta[stems[4]][1]
n = names(stems[4])
check(n[8] == "z_ptr" and n[12:15] == ["intermediate_states_buffer", "cache_steps",
                                       "intermediate_state_indices_ptr"], f"ssu verify args {n[8:15]}")
check(v["args"][0]["type"] == "*bf16", "bf16 state")
c = v["constexprs"]
check(c["DISABLE_STATE_UPDATE"] and c["CACHE_INTERMEDIATE_STATES"] and c["HAS_INTERMEDIATE_STATE_INDICES"] and
      c["HAS_Z"], "verify: disable_state_update, intermediate states by index, z")
f = meta[stems[5]][1]
check(f["num_warps"] == 8 and f["constexprs"]["BLOCK_SIZE_M"] == 4 and f["constexprs"]["BLOCK_SIZE_DSTATE"] == 256,
      "falcon dstate 256: BLOCK_SIZE_M 4, 8 warps")
fa = {x["name"]: x for x in f["args"]}
check(fa["stride_dt_batch"]["div16"] == 0 and fa["nheads"]["div16"] == 0, "3 heads: dt strides not /16")
sys.exit(1 if fails else 0)
