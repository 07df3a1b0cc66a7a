"""
The fla peer's AOT spec (read by peers/triton/aot.py): FLA (fla-core 0.6.0) Triton kernels
compiled for sm_90 with the values FLA's Python wrappers pass (peers/fla/README.md). Ptr and
Variant are injected by aot.py.

KDA: fused_recurrent_kda_fwd_kernel as fused_recurrent_kda_fwd (fla/ops/kda/fused_recurrent.py,
the @dispatch('kda') entry that serving code calls with ssm_state_indices) launches it for a
decode step over a slot pool: continuous batching (ssm_state_indices = the [B] slot indices),
in-place final state (h0 = ht = the pool), gate and beta sigmoid fused in the kernel
(use_gate_in_kernel, use_beta_sigmoid_in_kernel), q/k L2 norm in the kernel, BV 32, num_warps 4,
num_stages 2 (both the launch option and the kernel's `num_stages` constexpr: the JIT passes the
keyword to both). Both state layouts: STATE_V_FIRST False (kv, [K, V]) and True (vk, [V, K]).
"""
PKG = "fla-core-0.6.0"

KDA_SRC = "fla/ops/kda/fused_recurrent.py"
GDN_SRC = "fla/ops/gated_delta_rule/fused_recurrent.py"

# Names the kernels import (imports are not executed). fla/ops/utils/op.py: exp(x) is
# tl.exp(x.to(fp32)) unless FLA_USE_FAST_OPS=1 (the operands are fp32 already);
# fla/ops/utils/softplus.py: softplus is softplus_nv on NVIDIA (IS_NVIDIA), inline PTX.
SOURCES = {
    KDA_SRC: {"exp": "tl.exp", "softplus": ("fla/ops/utils/softplus.py", "softplus_nv")},
    GDN_SRC: {"exp": "tl.exp", "softplus": ("fla/ops/utils/softplus.py", "softplus_nv")},
}

K = V = 128
# (H, HV) per rank: kimi-linear-48b-a3b (KDA) at tp 1, 2, 4, 8.
KDA_HEADS = [(32, 32), (16, 16), (8, 8), (4, 4)]
STATE_DTYPES = {"f32": "fp32", "bf16": "bf16"}
LAYOUTS = {"kv": False, "vk": True}


def next_pow2(x):
    return 1 << (x - 1).bit_length()


def kda_key(h, hv, k, v, sd, lay):
    return f"H{h}_HV{hv}_K{k}_V{v}_S{sd}_{lay}"


def kda_decode():
    for h, hv in KDA_HEADS:
        for sd, sty in STATE_DTYPES.items():
            for lay, vfirst in LAYOUTS.items():
                args = dict(
                    q=Ptr("bf16"), k=Ptr("bf16"), v=Ptr("bf16"), g=Ptr("bf16"), beta=Ptr("bf16"),
                    A_log=Ptr("fp32"), dt_bias=Ptr("fp32"), o=Ptr("bf16"), h0=Ptr(sty), ht=Ptr(sty),
                    cu_seqlens=None, ssm_state_indices=Ptr("i32"), num_accepted_tokens=None,
                    lower_bound=None, scale=K ** -0.5, N=2, T=1, H=h, HV=hv, K=K, V=V,
                    BK=next_pow2(K), BV=32,
                    stride_init_state_token=hv * K * V, stride_final_state_token=hv * K * V,
                    stride_indices_seq=1, stride_indices_tok=1,
                    USE_INITIAL_STATE=True, INPLACE_FINAL_STATE=True, IS_BETA_HEADWISE=False,
                    USE_QK_L2NORM_IN_KERNEL=True, IS_VARLEN=False, IS_CONTINUOUS_BATCHING=True,
                    IS_SPEC_DECODING=False, STORE_FINAL_STATE=True, HAS_A=True, HAS_BIAS=True,
                    USE_GATE_IN_KERNEL=True, USE_LOWER_BOUND=False, APPLY_BETA_SIGMOID=True,
                    ALLOW_NEG_EIGVAL=False, STATE_V_FIRST=vfirst, num_stages=2)
                yield Variant("fused_recurrent_kda_fwd_kernel", KDA_SRC, kda_key(h, hv, K, V, sd, lay),
                              args, num_warps=4, num_stages=2)


def variants():
    yield from kda_decode()
