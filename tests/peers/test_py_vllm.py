"""Host test of py_vllm's loader and adapters (no GPU, no torch): argv[1] = repo root; the
vLLM source tree is $LS_PEERS_SRC/vllm-0.33.0 (scripts/peers.sh fetch). Exit 77 (skipped)
without triton or without the fetched source; the slot/index arithmetic runs regardless.

torch is replaced by a stand-in only to execute the kernel files' module bodies (annotations,
`class ...(torch.autograd.Function)`); Triton sees no GPU."""
import os
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "peers", "vllm_py"))
import vllm_plan as plan  # noqa: E402

fails = 0


def check(cond, what):
    global fails
    if not cond:
        print("FAIL:", what)
        fails += 1


def raises(f, text):
    try:
        f()
    except plan.Unsupported as e:
        return text in str(e)
    return False


# --- slot 0 is held by the bench (null_slot0), vLLM's null block: slot s is block s
ip = plan.decode_plan()
check(ip.row(1) == [1] and ip.row(7) == [7], "decode: slot s -> block s")
check(ip.row(-1) == [0], "decode: padding row -> null block 0")
ip.check(10)
check(raises(lambda: plan.IndexPlan(0, 0, 0, 0, -1, 1).check(4), "null block"), "index 0 for slot 1 refused")
check(raises(lambda: plan.IndexPlan(0, 0, 0, 0, 1, 2**30).check(4), "int32"), "int32 overflow refused")
check(raises(lambda: ip.check(0), "slots"), "unknown slot count refused")
check(raises(lambda: ip.check(1), "null slot"), "a view of the null slot alone refused")

# --- GDN verify: h0 = state, ht = inter with stride item; T+1 columns
T, item = 4, 16 * 128 * 128
ip = plan.split_verify_plan(T, item, item * T)
check(ip.cols == T + 1, "verify: T + 1 columns")
check(ip.row(1) == [4, 5, 6, 7, 1], f"verify row of slot 1: {ip.row(1)}")
check(ip.row(3) == [12, 13, 14, 15, 3], f"verify row of slot 3: {ip.row(3)}")
check(ip.row(-1) == [0] * 5, "verify padding row all null")
check(raises(lambda: plan.split_verify_plan(T, item, item * T + 1), "multiple"), "odd inter stride refused")

# --- one base for state and inter (KDA / SSU verify): every address reproduced, the base is the
# lower buffer's start (Triton refuses a pointer outside any allocation), no real index 0
elem, sss, iss = 4, item, item * T
for state_addr, inter_addr in ((1 << 40, (1 << 40) + 64 * item * elem),
                               ((1 << 40) + 3 * 2**21, 1 << 40),
                               (1 << 40, (1 << 40) + 256 * 1000 + 512)):
    base, g, ip = plan.common_verify_plan(T, state_addr, inter_addr, elem, sss, item, iss)
    ok = base == min(state_addr, inter_addr)
    for s in (1, 2, 5):
        r = ip.row(s)
        ok &= base + r[T] * g * elem == state_addr + s * sss * elem
        for t in range(T):
            ok &= base + r[t] * g * elem == inter_addr + (s * iss + t * item) * elem
        ok &= min(r) >= 1
    ip.check(64)
    check(ok, f"common base addresses state[s] and inter[s][t] (g={g})")
check(raises(lambda: plan.common_base(1 << 40, (1 << 40) + 2, 4, sss, item, iss), "whole number"),
      "misaligned buffers refused")

# --- launch choices as vLLM's wrappers make them
L = plan.gdn_packed_decode_launch(8, 32, 128, 128, 9)
check((L["BV"], L["num_warps"], L["num_stages"], L["grid"]) == (32, 1, 3, (4, 256)), f"gdn packed {L}")
check(plan.gdn_packed_decode_launch(4096, 32, 128, 128, 9)["split"], "gdn packed grid split past 65535")
check(plan.kda_verify_launch(1, 32, 128, 128)["BV"] == 4 and plan.kda_verify_launch(8, 32, 128, 128)["BV"] == 8,
      "kda verify BV table")

# --- the loader (needs triton and the fetched source)
src = os.path.join(os.environ.get("LS_PEERS_SRC", os.path.join(root, ".peers", "src")), "vllm-0.33.0")
try:
    import triton  # noqa: F401
    from triton.runtime import driver
except ImportError:
    print("skip loader: no triton")
    sys.exit(77 if fails == 0 else 1)
if not os.path.isdir(src):
    print(f"skip loader: {src} missing (scripts/peers.sh fetch)")
    sys.exit(77 if fails == 0 else 1)


sys.path.insert(0, os.path.join(root, "peers"))
import torch_stand_in  # noqa: E402

torch_stand_in.install()


class _NoGPU:
    def get_current_target(self):
        raise RuntimeError("no GPU")


driver.set_active(_NoGPU())
import vllm_load  # noqa: E402

try:
    vllm_load.source_root("/nonexistent/tree", root, "vllm-0.33.0")
    check(False, "a missing tree is refused")
except ValueError as e:
    check("/nonexistent/tree" in str(e), f"error names the path: {e}")
r = vllm_load.source_root(src, root, "vllm-0.33.0")
check(vllm_load.source_root(os.path.join(src, "vllm"), root, "vllm-0.33.0") == r, "vllm/ dir accepted")
mods, platform = vllm_load.load(r, device=lambda: (9, 0, "NVIDIA H200", 132))
for key, name in (("fla_fused_recurrent", "fused_recurrent_gated_delta_rule_packed_decode_kernel"),
                  ("fla_sigmoid_gating", "fused_sigmoid_gating_delta_rule_update_kernel"),
                  ("kda_fused_recurrent", "fused_recurrent_kda_packed_decode_kernel"),
                  ("kda_fused_recurrent", "fused_recurrent_kda_fwd_kernel"),
                  ("conv1d", "_causal_conv1d_update_kernel"),
                  ("mamba_ssm", "_selective_scan_update_kernel")):
    check(hasattr(mods[key], name), f"{key} has {name}")
    check(mods[key].__file__.startswith(r), f"{key} loaded from the given tree")
check(not any(k == "vllm" or k.startswith("vllm.") for k in sys.modules), "no vllm module left in sys.modules")
mods2, _ = vllm_load.load(r, device=lambda: (9, 0, "NVIDIA H200", 132))
check(mods2["mamba_ssm"] is not mods["mamba_ssm"], "a second instance gets its own modules")
# vLLM's own H200 table (headdim=64,dstate=128,device_name=NVIDIA_H200,cache_dtype=float32.json)
m = mods["mamba_ssm"]
check(m.try_get_optimal_ssm_config(64, 128, 1, 128, "float32", False) == (4, 1), "H200 fp32 table, B*nh=128")
check(m.try_get_optimal_ssm_config(64, 128, 512, 128, "float32", False) == (8, 2), "H200 fp32 table, B*nh=65536")
check(m.try_get_optimal_ssm_config(64, 128, 8, 128, "bfloat16", False) == (16, 1), "H200 bf16 table")
# the wrapper constants mirrored in vllm_plan still stand in the source
for f, needle in (("fla_fused_recurrent", "num_warps = 1"), ("fla_sigmoid_gating", "num_warps = 4"),
                  ("conv1d", "BLOCK_N=256")):
    text = open(mods[f].__file__).read()
    check(needle in text, f"{f}: '{needle}' (vllm_plan mirrors it)")

print("fails:", fails)
sys.exit(1 if fails else 0)
