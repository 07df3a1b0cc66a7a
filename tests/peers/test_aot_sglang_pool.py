#!/usr/bin/env python3
"""AOT-compiles SGLang 0.5.23's pool kernels for sm_90 and checks the cubins and their metadata
against what the adapters (peers/sglang/sg_pool.c) pass: the accept scatters
(_fused_mamba_state_scatter_with_mask_kernel at qwen3-next tp2's fp32 temporal item, i32 layer
strides; _fused_conv_window_scatter_with_mask_kernel at kimi-linear tp1's conv item with an i64 spec
layer stride) and the fused slot kernels (_fused_slot_copy_kernel, _fused_slot_clear_kernel).
Exit 77 (CTest skip) when triton 3.6 or the fetched sources are absent."""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aot_preamble  # noqa: E402

src = aot_preamble.sources(root, "sglang-0.5.23", ("sglang/kernels/ops/mamba/mamba_state_scatter_triton.py",
                                                    "sglang/srt/mem_cache/mamba_slot_fused.py"))

SCAT, CONV = "_fused_mamba_state_scatter_with_mask_kernel", "_fused_conv_window_scatter_with_mask_kernel"
COPY, CLEAR = "_fused_slot_copy_kernel", "_fused_slot_clear_kernel"
stems = [f"{SCAT}__E262144_fp32_W0", f"{CONV}__E12288_KM13_W1", f"{COPY}__FB12", f"{CLEAR}__FB36"]
aot = [sys.executable, os.path.join(root, "peers/triton/aot.py"), "--spec", os.path.join(root, "peers/sglang/kernels.py"),
       "--src-root", src]
meta = {}
with tempfile.TemporaryDirectory() as out:
    listed = subprocess.run(aot + ["--out", out, "--list"], check=True, capture_output=True, text=True).stdout.split()
    for stem in stems:
        subprocess.run(aot + ["--out", out, "--only", stem, "--jobs", "1", "--prefix", "sg"], check=True)
        with open(os.path.join(out, stem + ".cubin"), "rb") as fh:
            cubin = fh.read()
        with open(os.path.join(out, stem + ".json")) as fh:
            meta[stem] = (cubin, json.load(fh))
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


count = lambda k: len([s for s in listed if s.startswith(k + "__")])
check(count(SCAT) == 16 * 3, f"{count(SCAT)} state-scatter variants (16 temporal items x 3 stride widths)")
check(count(CONV) == 15 * 3, f"{count(CONV)} conv-window-scatter variants (15 conv items x 3 widths)")
check(count(COPY) == 14 and count(CLEAR) == 14, f"{count(COPY)} slot copy, {count(CLEAR)} slot clear variants")
check(f"{SCAT}__E32768_fp32_W0" in listed, "a bf16 temporal item as 4-byte elements (kimi/qwen tp8 bf16: 32768)")

for stem, (cubin, m) in meta.items():
    check(cubin[:4] == b"\x7fELF" and len(cubin) > 1000, f"{stem}: cubin ELF, {len(cubin)} B")
    check(m["arch"] == 90 and m["num_ctas"] == 1 and m["num_warps"] == 4, f"{stem}: sm_90, 1 CTA, 4 warps (default)")
    check(m["global_scratch_size"] == 0 and m["profile_scratch_size"] == 0, f"{stem}: no scratch")
    check(m["launch_pdl"] == 0, f"{stem}: no PDL (the wrappers launch plainly)")

args = lambda s: [(a["name"], a["type"], a.get("div16"), a.get("value")) for a in meta[s][1]["args"]]
idx = [("dst_indices_raw_ptr", "*i32", 0, None), ("step_indices_raw_ptr", "*i32", 0, None),
       ("src_indices_raw_ptr", "*i32", 0, None)]
sizes = [("src_req_size", "i32", 0, None), ("src_step_size", "i32", 0, None), ("dst_req_size", "i32", 0, None)]
check(args(stems[0]) == [("src_ptr", "*fp32", 1, None), ("dst_ptr", "*fp32", 1, None)] + idx +
      [("src_layer_stride", "i32", 1, None), ("src_req_stride", "i32", 1, None), ("src_step_stride", "i32", 1, None),
       ("dst_layer_stride", "i32", 1, None), ("dst_req_stride", "i32", 1, None)] + sizes,
      f"state scatter args {args(stems[0])}")
c = meta[stems[0]][1]["constexprs"]
check(c["elem_per_entry"] == 262144 and c["BLOCK_SIZE"] == 1024, "elem_per_entry 262144, BLOCK_SIZE 1024")
check(args(stems[1]) == [("src_ptr", "*bf16", 1, None), ("dst_ptr", "*bf16", 1, None)] + idx +
      [("src_layer_stride", "i64", 1, None), ("src_req_stride", "i32", 1, None), ("src_step_stride", "i32", 1, None),
       ("src_dim_stride", "i32", 0, None), ("src_win_stride", "const", None, 1), ("dst_layer_stride", "i32", 1, None),
       ("dst_req_stride", "i32", 1, None)] + sizes, f"conv window scatter args {args(stems[1])}")
c = meta[stems[1]][1]["constexprs"]
check(c["elem_per_entry"] == 12288 and c["KM1"] == 3, "conv: elem_per_entry 12288 (4096 x 3), KM1 3")
table = [("ptr_arr", "*i64", 1, None), ("feat_arr", "*i64", 1, None), ("layer_stride_arr", "*i64", 1, None),
         ("slot_stride_arr", "*i64", 1, None)]
check(args(stems[2]) == table + [("src_arr", "*i32", 0, None), ("dst_arr", "*i32", 0, None)],
      f"slot copy args {args(stems[2])}")
check(args(stems[3]) == table + [("index_arr", "*i32", 0, None)], f"slot clear args {args(stems[3])}")
check(meta[stems[2]][1]["constexprs"]["MAX_FEAT_BLOCKS"] == 12 and meta[stems[3]][1]["constexprs"]["BLOCK"] == 1024,
      "MAX_FEAT_BLOCKS 12 / BLOCK 1024")
sys.exit(1 if fails else 0)
