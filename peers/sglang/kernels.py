"""
The sglang peer's AOT spec (read by peers/triton/aot.py): which SGLang 0.5.23 Triton kernels are
compiled, for which constexpr combinations, with the values SGLang's Python wrappers would pass
on sm_90 (peers/sglang/README.md, "Dispatch on sm_90"). Shapes: the per-rank heads of the model
presets at tp 1, 2, 4, 8 (docs/presets.md). Ptr and Variant are injected by aot.py.
"""
PKG = "sglang-0.5.23"

FUSED_RECURRENT = "sglang/kernels/ops/attention/fla/fused_recurrent.py"
SIGMOID_GATING = "sglang/kernels/ops/attention/linear/fused_sigmoid_gating_recurrent.py"

# Names the kernels import from other modules (imports are not executed). fla/op.py: exp is
# tl.exp unless FLA_USE_FAST_OPS=1 (not set by SGLang).
SOURCES = {
    FUSED_RECURRENT: {"exp": "tl.exp"},
    SIGMOID_GATING: {},
}

K = V = 128
# (H, HV) per rank: qwen3-next-80b-a3b (GDN) and kimi-linear-48b-a3b (KDA) at tp 1, 2, 4, 8.
GDN_HEADS = [(16, 32), (8, 16), (4, 8), (2, 4)]
KDA_HEADS = [(32, 32), (16, 16), (8, 8), (4, 4)]
STATE_DTYPES = {"f32": "fp32", "bf16": "bf16"}


def next_pow2(x):
    return 1 << (x - 1).bit_length()


def packed_decode_key(h, hv, k, v, sd):
    return f"H{h}_HV{hv}_K{k}_V{v}_S{sd}"


def packed_decode():
    """fused_recurrent_gated_delta_rule_packed_decode_kernel, as
    fused_recurrent_gated_delta_rule_packed_decode launches it: BV = min(pow2(V), 32) (the BV=8
    tile is sm_100 only), num_warps 1, num_stages 3; the strides are constexprs of a contiguous
    [B, 2HK+HV*V] mixed_qkv, [B, HV] a/b, a per-layer state pool [slots, HV, V, K] and [B] indices."""
    for h, hv in GDN_HEADS:
        for sd, sty in STATE_DTYPES.items():
            args = dict(
                mixed_qkv=Ptr("bf16"), a=Ptr("bf16"), b=Ptr("bf16"), A_log=Ptr("fp32"),
                dt_bias=Ptr("bf16"), o=Ptr("bf16"), h0=Ptr(sty), ht=Ptr(sty),
                ssm_state_indices=Ptr("i32"), scale=K ** -0.5,
                stride_mixed_qkv_tok=2 * h * K + hv * V, stride_a_tok=hv, stride_b_tok=hv,
                stride_init_state_token=hv * V * K, stride_final_state_token=hv * V * K,
                stride_indices_seq=1, H=h, HV=hv, K=K, V=V, BK=next_pow2(K),
                BV=min(next_pow2(V), 32), SOFTPLUS_THRESHOLD=20.0, USE_QK_L2NORM_IN_KERNEL=True)
            yield Variant("fused_recurrent_gated_delta_rule_packed_decode_kernel", FUSED_RECURRENT,
                          packed_decode_key(h, hv, K, V, sd), args, num_warps=1, num_stages=3)


def gating_key(kda, h, hv, k, v, sd, dsu, inter, bv):
    return f"{'KDA' if kda else 'GDN'}_H{h}_HV{hv}_K{k}_V{v}_S{sd}_DSU{dsu}_I{inter}_BV{bv}"


def sigmoid_gating():
    """fused_sigmoid_gating_delta_rule_update_kernel, as fused_sigmoid_gating_delta_rule_update
    launches it on sm_90 (decode: TritonGDNKernel/TritonKDAKernel.decode; verify:
    .target_verify): SPLIT_N_HV_GRID (grid NV, N, HV), PDL on (USE_GDC, launch_pdl), num_stages
    3, num_warps 1, BV from _select_recurrent_launch_config: 4 for GDN verify with
    intermediate states and N <= 64 on sm_90 (K = V = 128), else 32. Strides are runtime ints;
    q/k/v/a/b are contiguous per token ([B*T, ...]), the state pool and the intermediate buffer
    are [slots(, T), HV, V, K]. Not varlen (see README: cu_seqlens)."""
    for kda, heads in ((False, GDN_HEADS), (True, KDA_HEADS)):
        for h, hv in heads:
            for sd, sty in STATE_DTYPES.items():
                for dsu in (0, 1):
                    for inter in (0, 1):
                        if not kda and inter:
                            bvs = (4, 32)  # GDN target_verify == intermediate buffer given
                        else:
                            bvs = (32,)    # KDA target_verify on sm_90 keeps BV = 32
                        for bv in bvs:
                            args = dict(
                                A_log=Ptr("fp32"), a=Ptr("bf16"),
                                dt_bias=Ptr("fp32" if kda else "bf16"),
                                softplus_beta=1.0, softplus_threshold=20.0, lower_bound=0.0,
                                q=Ptr("bf16"), k=Ptr("bf16"), v=Ptr("bf16"), b=Ptr("bf16"),
                                o=Ptr("bf16"), h0_source=Ptr(sty), h0_indices=Ptr("i32"),
                                stride_h0_source=hv * K * V, cu_seqlens=None,
                                intermediate_states_buffer=Ptr(sty) if inter else None,
                                intermediate_state_indices=Ptr("i32") if inter else None,
                                cache_steps=3 if inter else 0,  # a draft pitch 2..15: i32, not /16
                                retrieve_parent_token_ptr=None,
                                stride_retrieve_parent_token_seq=0,
                                stride_retrieve_parent_token_token=0,
                                scale=K ** -0.5, T=2, stride_a=hv * K if kda else hv,
                                stride_q=h * K, stride_k=h * K, stride_v=hv * V, stride_b=hv,
                                NP2_T=1, B=1, H=h, HV=hv, K=K, V=V, BK=next_pow2(K), BV=bv,
                                USE_INITIAL_STATE=True, USE_QK_L2NORM_IN_KERNEL=True,
                                IS_VARLEN=False, IS_KDA=kda, USE_LOWER_BOUND=False,
                                DISABLE_STATE_UPDATE=bool(dsu), CACHE_INTERMEDIATE_STATES=bool(inter),
                                HAS_EAGLE_TREE_CUSTOM_ATTN_MASK=False, SPLIT_N_HV_GRID=True,
                                USE_GDC=True, MATCH_CUTEDSL_DECODE=False, ROUND_STATE_TO_BF16=False)
                            yield Variant("fused_sigmoid_gating_delta_rule_update_kernel",
                                          SIGMOID_GATING, gating_key(kda, h, hv, K, V, sd, dsu, inter, bv),
                                          args, num_warps=1, num_stages=3, launch_pdl=True)


def variants():
    yield from packed_decode()
    yield from sigmoid_gating()
