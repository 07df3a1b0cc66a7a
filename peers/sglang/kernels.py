"""
The sglang peer's AOT spec (read by peers/triton/aot.py): which SGLang 0.5.23 Triton kernels are
compiled, for which constexpr combinations, with the values SGLang's Python wrappers would pass
on sm_90 (peers/sglang/README.md, "Dispatch on sm_90"). Shapes: the per-rank heads of the model
presets at tp 1, 2, 4, 8 (docs/presets.md). Ptr and Variant are injected by aot.py.
"""
PKG = "sglang-0.5.23"

FUSED_RECURRENT = "sglang/kernels/ops/attention/fla/fused_recurrent.py"
SIGMOID_GATING = "sglang/kernels/ops/attention/linear/fused_sigmoid_gating_recurrent.py"
CONV = "sglang/kernels/ops/mamba/causal_conv1d_triton.py"
SSU = "sglang/kernels/ops/mamba/triton_ops/mamba_ssm.py"
KDA_CONV_VERIFY = "sglang/kernels/ops/attention/linear/fused_kda_conv_recurrent_verify.py"
SCATTER = "sglang/kernels/ops/mamba/mamba_state_scatter_triton.py"
SLOT = "sglang/srt/mem_cache/mamba_slot_fused.py"

# Names the kernels import from other modules (imports are not executed). fla/op.py: exp is
# tl.exp unless FLA_USE_FAST_OPS=1 (not set by SGLang).
SOURCES = {
    FUSED_RECURRENT: {"exp": "tl.exp"},
    SIGMOID_GATING: {},
    CONV: {},
    # softplus is defined under `if TRITON3:` (TRITON3 = version.parse(triton.__version__) >= 3):
    # give `version` so that test runs and picks the Triton 3 softplus (log(exp(dt) + 1)).
    SSU: {"version": "__import__('packaging.version').version"},
    # its imports (is_arch_support_pdl, is_hip_runtime) serve the Python wrapper only
    KDA_CONV_VERIFY: {},
    SCATTER: {},
    SLOT: {},
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


def kda_packed_decode():
    """fused_recurrent_kda_packed_decode_kernel, as fused_recurrent_kda_packed_decode launches it
    for KDA decode on CUDA (TritonKDAKernel.packed_decode; the CUDA kda_packed_decode takes over
    when kda_packed_decode.covered(), B >= 8): grid (NV, B, HV), BV = min(pow2(V), 32), num_warps 1,
    num_stages 3, no PDL; strides are constexprs of a contiguous [B, 2HK+HV*V] mixed_qkv, [B, HV*K]
    a, [B, HV] b, a per-layer state pool [slots, HV, V, K] and [B] indices; lower_bound None (no
    safe gate: Kimi-Linear)."""
    for h, hv in KDA_HEADS:
        for sd, sty in STATE_DTYPES.items():
            args = dict(
                mixed_qkv=Ptr("bf16"), a=Ptr("bf16"), b=Ptr("bf16"), A_log=Ptr("fp32"),
                dt_bias=Ptr("fp32"), lower_bound=None, o=Ptr("bf16"), h0=Ptr(sty), ht=Ptr(sty),
                ssm_state_indices=Ptr("i32"), scale=K ** -0.5,
                stride_mixed_qkv_tok=2 * h * K + hv * V, stride_a_tok=hv * K, stride_b_tok=hv,
                stride_init_state_token=hv * V * K, stride_final_state_token=hv * V * K,
                stride_indices_seq=1, H=h, HV=hv, K=K, V=V, BK=next_pow2(K),
                BV=min(next_pow2(V), 32), SOFTPLUS_THRESHOLD=20.0, USE_QK_L2NORM_IN_KERNEL=True,
                USE_LOWER_BOUND=False)
            yield Variant("fused_recurrent_kda_packed_decode_kernel", FUSED_RECURRENT,
                          packed_decode_key(h, hv, K, V, sd), args, num_warps=1, num_stages=3)


def gating_key(kda, h, hv, k, v, sd, dsu, inter, bv):
    return f"{'KDA' if kda else 'GDN'}_H{h}_HV{hv}_K{k}_V{v}_S{sd}_DSU{dsu}_I{inter}_BV{bv}"


def sigmoid_gating():
    """fused_sigmoid_gating_delta_rule_update_kernel, as fused_sigmoid_gating_delta_rule_update
    launches it on sm_90 (decode: TritonGDNKernel/TritonKDAKernel.decode; verify:
    .target_verify): SPLIT_N_HV_GRID (grid NV, N, HV), PDL on (USE_GDC, launch_pdl), num_stages
    3, num_warps 1, BV from _select_recurrent_launch_config: 4 for GDN verify with
    intermediate states and N <= 64 on sm_90 (K = V = 128), else 32. Strides are runtime ints;
    q/k/v/a/b are per-token rows ([B*T, ...]), the state pool and the intermediate buffer
    are [slots(, T), HV, V, K]. Varlen as SGLang calls it: q/k/v [1, B*T, ...] with cu_seqlens =
    query_start_loc (row starts loaded), T = B*T tokens in all, B = 1. The JIT also marks T /16
    (or makes T = 1 a constexpr) and sets NP2_T = next_pow2(B*T); neither changes the SASS (NP2_T
    is read only for EAGLE trees; T only sizes an unused offset): peers/sglang_py/jit_spec.py
    --compile shows the JIT's cubin and this one identical, so one variant serves every B*T."""
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
                                stride_h0_source=hv * K * V, cu_seqlens=Ptr("i32"),
                                intermediate_states_buffer=Ptr(sty) if inter else None,
                                intermediate_state_indices=Ptr("i32") if inter else None,
                                cache_steps=3 if inter else 0,  # a draft pitch 2..15: i32, not /16
                                retrieve_parent_token_ptr=None,
                                stride_retrieve_parent_token_seq=0,
                                stride_retrieve_parent_token_token=0,
                                scale=K ** -0.5, T=3, stride_a=hv * K if kda else hv,  # T: any i32 (not /16)
                                stride_q=h * K, stride_k=h * K, stride_v=hv * V, stride_b=hv,
                                NP2_T=1, B=1, H=h, HV=hv, K=K, V=V, BK=next_pow2(K), BV=bv,
                                USE_INITIAL_STATE=True, USE_QK_L2NORM_IN_KERNEL=True,
                                IS_VARLEN=True, IS_KDA=kda, USE_LOWER_BOUND=False,
                                DISABLE_STATE_UPDATE=bool(dsu), CACHE_INTERMEDIATE_STATES=bool(inter),
                                HAS_EAGLE_TREE_CUSTOM_ATTN_MASK=False, SPLIT_N_HV_GRID=True,
                                USE_GDC=True, MATCH_CUTEDSL_DECODE=False, ROUND_STATE_TO_BF16=False)
                            yield Variant("fused_sigmoid_gating_delta_rule_update_kernel",
                                          SIGMOID_GATING, gating_key(kda, h, hv, K, V, sd, dsu, inter, bv),
                                          args, num_warps=1, num_stages=3, launch_pdl=True)


# ---------------------------------------------------------------- causal conv1d update

CONV_W = 4
# (model tag, weight dtype, bias, channels per rank at tp 1, 2, 4, 8) -- docs/presets.md. Falcon-H1
# is left out: its decode conv is SGLang's CUDA JIT kernel (only its verify takes the Triton one). Kimi's
# conv runs either per buffer (q, k, v: HV*V/tp channels each, the bench's pool mode) or, as SGLang
# does, on the concatenated mixed_qkv (3*HV*V/tp channels, one window-major state; bench concat).
CONV_FAMILIES = [
    ("qwen", "bf16", False, (8192, 4096, 2048, 1024)),
    ("kimi", "fp32", False, (4096, 2048, 1024, 512)),
    ("kimi", "fp32", False, (12288, 6144, 3072, 1536)),
    ("nemh", "bf16", True, (10240, 5120, 2560, 1280)),
    ("nano", "bf16", True, (12288, 6144, 3072, 1536)),  # nemotron-nano-9b-v2 (NemotronH: Triton conv)
]
CONV_TOKENS = (1, 2, 3, 4, 5, 6, 7, 8)  # decode T = 1; target verify T = 2..8 (draft tokens)
CONV_ORIENT = ("cm", "wm")  # channel-major [C, W-1] (GDN, Mamba2), window-major [W-1, C] (KDA)
# num_cache_lines is a constexpr SGLang sets to the pool's slot count; it only masks the read of the
# old state (index < num_cache_lines). We compile the i32 maximum: every real slot passes.
CONV_CACHE_LINES = 2 ** 31 - 1


def conv_strides(c, w1, orient):
    """(stride_dim, stride_win) of one slot's [C, W-1] view in the given orientation."""
    return (w1, 1) if orient == "cm" else (1, c)


def conv_key(c, t, orient, wdt, bias):
    return f"C{c}_T{t}_W{CONV_W}_{orient.upper()}_w{wdt}_B{int(bias)}"


def conv_update():
    """_causal_conv1d_update_kernel as causal_conv1d_update launches it on sm_90 (GDN/KDA decode and
    target verify, Mamba2 with use_triton_causal_conv): grid (batch, cdiv(dim, BLOCK_N)), BLOCK_N
    256, default num_warps 4 / num_stages 3, PDL (USE_GDC, launch_pdl), continuous batching with
    pad_slot_id -1, SiLU, bf16 conv state and x/out. x is the [B, T, C] token-major tensor seen
    as (batch, dim, seqlen) (decode: [B, C] unsqueezed, token stride 1); out = empty_like(x) has
    the same strides. Verify (T > 1): intermediate windows in linstate's dense layout
    [slot, T, C, W-1] (same orientation as the state; SGLang's CUDA GDN/Mamba2 linear chains use
    a deduplicated overlapping view, see README) indexed by the pool slot; no num_accept_tokens
    (the backends pass none: IS_SPEC_DECODING off), no EAGLE tree. Every stride, dim and seqlen
    are constexprs: one variant per (channels, T, orientation, weight dtype, bias)."""
    w1 = CONV_W - 1
    seen = set()
    for _tag, wdt, bias, chans in CONV_FAMILIES:
        for c in chans:
            for orient in CONV_ORIENT:
                for t in CONV_TOKENS:
                    key = conv_key(c, t, orient, wdt, bias)
                    if key in seen:
                        continue
                    seen.add(key)
                    sd, sw = conv_strides(c, w1, orient)
                    inter = t > 1
                    args = dict(
                        x_ptr=Ptr("bf16"), w_ptr=Ptr(wdt), bias_ptr=Ptr(wdt) if bias else None,
                        conv_state_ptr=Ptr("bf16"), cache_seqlens_ptr=None,
                        conv_state_indices_ptr=Ptr("i32"), num_accept_tokens_ptr=None,
                        # the wrapper passes x when no window buffer is given (never read then)
                        intermediate_conv_window_ptr=Ptr("bf16"),
                        intermediate_state_indices_ptr=Ptr("i32") if inter else None,
                        retrieve_next_token_ptr=None, retrieve_next_sibling_ptr=None,
                        retrieve_parent_token_ptr=None, o_ptr=Ptr("bf16"),
                        batch=3,  # a runtime i32 (any B; the JIT would also build B=1 and B%16 kernels)
                        dim=c, seqlen=t, state_len=w1, num_cache_lines=CONV_CACHE_LINES,
                        stride_x_seq=t * c, stride_x_dim=1, stride_x_token=c if t > 1 else 1,
                        stride_w_dim=CONV_W, stride_w_width=1,
                        stride_conv_state_seq=c * w1, stride_conv_state_dim=sd,
                        stride_conv_state_tok=sw, stride_state_indices=1,
                        stride_inter_seq=t * c * w1 if inter else 0,
                        stride_inter_step=c * w1 if inter else 0,
                        stride_inter_dim=sd if inter else 0, stride_inter_win=sw if inter else 0,
                        stride_intermediate_state_indices=1 if inter else 0,
                        stride_retrieve_next_token_seq=0, stride_retrieve_next_token_token=0,
                        stride_retrieve_next_sibling_seq=0, stride_retrieve_next_sibling_token=0,
                        stride_retrieve_parent_token_seq=0, stride_retrieve_parent_token_token=0,
                        stride_o_seq=t * c, stride_o_dim=1, stride_o_token=c if t > 1 else 1,
                        pad_slot_id=-1, HAS_BIAS=bias, KERNEL_WIDTH=CONV_W, SILU_ACTIVATION=True,
                        IS_CONTINUOUS_BATCHING=True, IS_SPEC_DECODING=False,
                        NP2_STATELEN=next_pow2(w1), NP2_SEQLEN=next_pow2(t), USE_PAD_SLOT=True,
                        BLOCK_N=256, SAVE_INTERMEDIATE=inter, HAS_EAGLE_TREE_CUSTOM_ATTN_MASK=False,
                        USE_GDC=True)
                    yield Variant("_causal_conv1d_update_kernel", CONV, key, args, num_warps=4,
                                  num_stages=3, launch_pdl=True)


# ------------------------------------------------------- Mamba2 selective state update

# (nheads, head_dim, dstate, ngroups) per rank at tp 1, 2, 4, 8: nemotron-h-8b,
# nemotron-nano-9b-v2, falcon-h1-7b (docs/presets.md; Falcon's single group is replicated).
SSU_SHAPES = [
    (128, 64, 128, 8), (64, 64, 128, 4), (32, 64, 128, 2), (16, 64, 128, 1),
    (128, 80, 128, 8), (64, 80, 128, 4), (32, 80, 128, 2), (16, 80, 128, 1),
    (24, 128, 256, 1), (12, 128, 256, 1), (6, 128, 256, 1), (3, 128, 256, 1),
]
# z given: SGLang's mixer passes z=None (the gate goes to the gated RMSNorm); compiled for
# nemotron-h-8b only, so the kernel's HAS_Z path can be timed and verified too.
SSU_Z_SHAPES = SSU_SHAPES[:4]


def ssu_block(dstate):
    """(BLOCK_SIZE_M, num_warps) of selective_state_update's hand-tuned table."""
    if dstate <= 16:
        return 32, 4
    if dstate <= 32:
        return 16, 4
    if dstate <= 64:
        return 8, 4
    if dstate <= 128:
        return 8, 1
    return 4, 8


def ssu_key(nh, hd, ds, ng, sd, mode, z):
    return f"NH{nh}_HD{hd}_DS{ds}_NG{ng}_S{sd}_{mode}_Z{int(z)}"


def ssu():
    """_selective_scan_update_kernel as MambaMixer2 calls selective_state_update on sm_90
    (--mamba-backend triton): the tied path (dt, dt_bias, A, D expanded with stride 0 over
    head_dim / dstate: TIE_HDIM), dt_softplus, state_batch_indices with pad_slot_id -1, PDL.
    Decode: T = 1, state updated in place. Verify: disable_state_update, intermediate states
    [slot, cache_steps, nh, hd, ds] indexed by intermediate_state_indices (we pass the pool slot;
    SGLang passes arange(B) into a per-request buffer), cache_steps = the slot pitch in steps.
    T is do_not_specialize (one variant for every T); strides are runtime ints specialised by
    the JIT rules (1 -> constexpr, %16 -> divisibility), so each variant fixes the contiguous
    linstate layouts [B, T, nh, hd] (x, z, y), [B, T, nh] (dt), [B, T, ng, ds] (B, C)."""
    for shapes, zs in ((SSU_SHAPES, (False,)), (SSU_Z_SHAPES, (True,))):
        for nh, hd, ds, ng in shapes:
            bm, nw = ssu_block(ds)
            for sd, sty in STATE_DTYPES.items():
                for mode in ("dec", "ver"):
                    for z in zs:
                        ver = mode == "ver"
                        T = 3  # runtime (do_not_specialize); the value only shapes the strides below
                        args = dict(
                            state_ptr=Ptr(sty), x_ptr=Ptr("bf16"), dt_ptr=Ptr("bf16"),
                            dt_bias_ptr=Ptr("bf16"), A_ptr=Ptr("fp32"), B_ptr=Ptr("bf16"),
                            C_ptr=Ptr("bf16"), D_ptr=Ptr("bf16"), z_ptr=Ptr("bf16") if z else None,
                            out_ptr=Ptr("bf16"), state_batch_indices_ptr=Ptr("i32"), pad_slot_id=-1,
                            intermediate_states_buffer=Ptr(sty) if ver else None,
                            cache_steps=3 if ver else 0,
                            retrieve_parent_token_ptr=None,
                            intermediate_state_indices_ptr=Ptr("i32") if ver else None,
                            rand_seed_ptr=None,
                            batch=3, T=T, nheads=nh, dim=hd, dstate=ds, nheads_ngroups_ratio=nh // ng,
                            stride_state_batch=nh * hd * ds, stride_state_head=hd * ds,
                            stride_state_dim=ds, stride_state_dstate=1,
                            stride_x_batch=T * nh * hd, stride_x_T=nh * hd, stride_x_head=hd,
                            stride_x_dim=1,
                            stride_dt_batch=T * nh, stride_dt_T=nh, stride_dt_head=1, stride_dt_dim=0,
                            stride_dt_bias_head=1, stride_dt_bias_dim=0,
                            stride_A_head=1, stride_A_dim=0, stride_A_dstate=0,
                            stride_B_batch=T * ng * ds, stride_B_T=ng * ds, stride_B_group=ds,
                            stride_B_dstate=1,
                            stride_C_batch=T * ng * ds, stride_C_T=ng * ds, stride_C_group=ds,
                            stride_C_dstate=1,
                            stride_D_head=1, stride_D_dim=0,
                            stride_z_batch=T * nh * hd if z else 0, stride_z_T=nh * hd if z else 0,
                            stride_z_head=hd if z else 0, stride_z_dim=1 if z else 0,
                            stride_out_batch=T * nh * hd, stride_out_T=nh * hd, stride_out_head=hd,
                            stride_out_dim=1,
                            stride_retrieve_parent_token_batch=0, stride_retrieve_parent_token_T=0,
                            DT_SOFTPLUS=True, TIE_HDIM=True, BLOCK_SIZE_M=bm,
                            HAS_DT_BIAS=True, HAS_D=True, HAS_Z=z, HAS_STATE_BATCH_INDICES=True,
                            DISABLE_STATE_UPDATE=ver, CACHE_INTERMEDIATE_STATES=ver,
                            HAS_EAGLE_TREE_CUSTOM_ATTN_MASK=False, HAS_INTERMEDIATE_STATE_INDICES=ver,
                            BLOCK_SIZE_DSTATE=next_pow2(ds), USE_RS_ROUNDING=False, PHILOX_ROUNDS=0,
                            USE_GDC=True)
                        yield Variant("_selective_scan_update_kernel", SSU,
                                      ssu_key(nh, hd, ds, ng, sd, mode, z), args, num_warps=nw,
                                      num_stages=3, launch_pdl=True)


# ------------------------------------------- fused KDA conv update + recurrence, chain verify

KDA_CONV_VERIFY_TOKENS = (3, 4, 5, 6, 7, 8)  # the wrapper asserts T >= W - 1 = 3
KDA_CONV_VERIFY_BV = 4                       # KDA_VERIFY_BLOCK_V (CUDA)


def kda_conv_verify_key(h, hv, k, v, sd, t):
    return f"H{h}_HV{hv}_K{k}_V{v}_S{sd}_T{t}"


def kda_conv_verify():
    """fused_kda_conv_gating_verify_kernel as fused_kda_conv_gating_verify launches it on sm_90
    (KDA target_verify, chain speculation): grid (V/BV, B*HV), BV 4, num_warps 4, num_stages 3,
    PDL (USE_GDC, launch_pdl); Kimi's conv: width 4, fp32 weights, no bias (conv_bias gets the
    weight pointer, as the wrapper passes it), bf16 window-major conv state [slot, W-1, C] (dim
    stride 1); windows [slot, T, C, W-1] with dim stride 1 (window-major, linstate's pool) and
    state steps [slot, cache_steps, HV, V, K], both indexed by the pool slot; softplus gate (no
    lower bound), q/k L2 norm; no ReplaySSM ring. T is a constexpr (one variant per T). The int
    strides take the values of the preset's own layout, so the JIT's divisibility rules give the
    same specialization as the runtime values."""
    w1 = CONV_W - 1
    for h, hv in KDA_HEADS:
        c = 2 * h * K + hv * V
        for sd, sty in STATE_DTYPES.items():
            for t in KDA_CONV_VERIFY_TOKENS:
                args = dict(
                    x=Ptr("bf16"), w=Ptr("fp32"), conv_bias=Ptr("fp32"), conv_state=Ptr("bf16"),
                    conv_state_indices=Ptr("i32"), inter_conv_window=Ptr("bf16"),
                    inter_state_indices=Ptr("i32"), a=Ptr("bf16"), b_gate=Ptr("bf16"),
                    A_log=Ptr("fp32"), dt_bias=Ptr("fp32"), lower_bound=None, softplus_beta=1.0,
                    softplus_threshold=20.0, h0_source=Ptr(sty), h0_indices=Ptr("i32"),
                    inter_states=Ptr(sty), o=Ptr("bf16"), scale=K ** -0.5,
                    cache_steps=3,  # the slot pitch in steps (T..): i32, not /16
                    stride_x_tok=c, stride_w_dim=CONV_W, stride_cs_line=c * w1, stride_cs_tok=c,
                    stride_iw_line=t * c * w1, stride_iw_step=c * w1, stride_iw_dim=1, stride_iw_win=c,
                    stride_a_tok=hv * K, stride_b_tok=hv,
                    T=t, W=CONV_W, H=h, HV=hv, K=K, V=V, BK=next_pow2(K), BV=KDA_CONV_VERIFY_BV,
                    HAS_BIAS=False, USE_QK_L2NORM_IN_KERNEL=True, USE_LOWER_BOUND=False,
                    SAVE_INTERMEDIATE_WINDOW=True, CACHE_INTERMEDIATE_STATES=True,
                    ROUND_CONV_PRODUCTS=False, USE_GDC=True)
                yield Variant("fused_kda_conv_gating_verify_kernel", KDA_CONV_VERIFY,
                              kda_conv_verify_key(h, hv, K, V, sd, t), args, num_warps=4, num_stages=3,
                              launch_pdl=True)


# ------------------------------------------------------------- pool state ops (accept, copy, zero)

POOL_BLOCK = 1024  # BLOCK_SIZE of the scatter wrappers, _BLOCK of mamba_slot_fused.py
POOL_KM1 = CONV_W - 1
# Elements of one slot of one layer, per buffer (docs/presets.md): conv items C*(W-1) (bf16) of
# every preset at tp 1, 2, 4, 8, and temporal items (nh*hd*ds or HV*K*V).
# conv channels per buffer at tp 1, 2, 4, 8: qwen3-next, kimi-linear (each of q, k, v),
# nemotron-h-8b, nemotron-nano-9b-v2, falcon-h1-7b
POOL_CONV_CHANNELS = (8192, 4096, 2048, 1024, 512, 10240, 5120, 2560, 1280, 12288, 6144, 3072, 1536,
                      3584, 896)
POOL_CONV_ELEMS = sorted({c * POOL_KM1 for c in POOL_CONV_CHANNELS})
_TEMPORAL = sorted({hv * K * V for _h, hv in GDN_HEADS + KDA_HEADS} |
                   {nh * hd * ds for nh, hd, ds, _ng in SSU_SHAPES})
# ls_state_params carries bytes, not dtypes: the adapter moves the temporal state as 4-byte
# elements (fp32, the default; a bf16 state is the same bytes as half as many 4-byte elements).
POOL_TEMPORAL_ELEMS = sorted(set(_TEMPORAL) | {e // 2 for e in _TEMPORAL})
# The JIT types an int i32 below 2**31 and i64 above: the layer strides of a large pool pass it.
# W0: both layer strides i32; W1: the spec (src) layer stride i64; W2: both i64.
POOL_WIDTHS = (0, 1, 2)
_I32_D, _I64_D, _PLAIN = 16, 2 ** 32, 3  # values the JIT specialises as i32 /16, i64 /16, i32


def pool_scatter_key(elem, width):
    return f"E{elem}_fp32_W{width}"


def pool_conv_scatter_key(elem, width):
    return f"E{elem}_KM1{POOL_KM1}_W{width}"


def pool_slot_key(feat_blocks):
    return f"FB{feat_blocks}"


def _scatter_strides(width):
    return dict(src_layer_stride=_I64_D if width >= 1 else _I32_D, src_req_stride=_I32_D,
                src_step_stride=_I32_D, dst_layer_stride=_I64_D if width == 2 else _I32_D,
                dst_req_stride=_I32_D,
                # sizes are only compared: compiled as plain i32 (the JIT would add /16 or
                # constexpr 1 for some values; no address depends on them)
                src_req_size=_PLAIN, src_step_size=_PLAIN, dst_req_size=_PLAIN)


def pool_scatter():
    """update_mamba_state_after_mtp_verify -> scatter_mamba_states_after_mtp_verify on CUDA with
    source rows given (src_indices_raw: our spec buffers are indexed by pool slot, so the source
    row is the slot): temporal -> _fused_mamba_state_scatter_with_mask_kernel, one launch over every
    layer; each conv tensor -> _fused_conv_window_scatter_with_mask_kernel (the per-type path; the
    multi-type kernel takes the batch row as source and no source indices). Grid
    (requests, layers, cdiv(elem, 1024)), default num_warps 4 / num_stages 3, no PDL. Indices are
    int32 (the wrapper's .to(torch.int32)); their pointers are compiled without the /16
    assumption (a slice of an index list need not be aligned). elem_per_entry (and KM1) are
    constexprs: one variant per element count."""
    idx = dict(dst_indices_raw_ptr=Ptr("i32", False), step_indices_raw_ptr=Ptr("i32", False),
               src_indices_raw_ptr=Ptr("i32", False))
    for width in POOL_WIDTHS:
        for elem in POOL_TEMPORAL_ELEMS:
            args = dict(src_ptr=Ptr("fp32"), dst_ptr=Ptr("fp32"), elem_per_entry=elem,
                        BLOCK_SIZE=POOL_BLOCK, **idx, **_scatter_strides(width))
            yield Variant("_fused_mamba_state_scatter_with_mask_kernel", SCATTER,
                          pool_scatter_key(elem, width), args, num_warps=4, num_stages=3)
        for elem in POOL_CONV_ELEMS:
            # our windows are dense in the state's orientation: (dim, win) strides (KM1, 1) make
            # the kernel's (e // KM1, e % KM1) decode address element e in either orientation
            args = dict(src_ptr=Ptr("bf16"), dst_ptr=Ptr("bf16"), elem_per_entry=elem, KM1=POOL_KM1,
                        src_dim_stride=_PLAIN, src_win_stride=1, BLOCK_SIZE=POOL_BLOCK, **idx,
                        **_scatter_strides(width))
            yield Variant("_fused_conv_window_scatter_with_mask_kernel", SCATTER,
                          pool_conv_scatter_key(elem, width), args, num_warps=4, num_stages=3)


def pool_slot():
    """MambaPool.copy_from / clear_slots on CUDA with bf16 contiguous conv tensors (_conv_fuse_ok;
    SGLANG_DISABLE_FUSED_MAMBA_SLOT_OPS unset): _fused_slot_copy_kernel / _fused_slot_clear_kernel
    over every conv tensor and layer in one launch, grid (rows, conv tensors, layers), a device
    descriptor of int64 rows (base address, feature length, layer and slot strides in elements).
    MAX_FEAT_BLOCKS = cdiv(largest conv item, 1024) is the constexpr. The wrapper casts the slot
    lists to int64; we compile int32 index pointers (linstate's indices, not cast)."""
    blocks = sorted({-(-e // POOL_BLOCK) for e in POOL_CONV_ELEMS})
    table = dict(ptr_arr=Ptr("i64"), feat_arr=Ptr("i64"), layer_stride_arr=Ptr("i64"),
                 slot_stride_arr=Ptr("i64"))
    for fb in blocks:
        yield Variant("_fused_slot_copy_kernel", SLOT, pool_slot_key(fb),
                      dict(table, src_arr=Ptr("i32", False), dst_arr=Ptr("i32", False),
                           MAX_FEAT_BLOCKS=fb, BLOCK=POOL_BLOCK), num_warps=4, num_stages=3)
        yield Variant("_fused_slot_clear_kernel", SLOT, pool_slot_key(fb),
                      dict(table, index_arr=Ptr("i32", False), MAX_FEAT_BLOCKS=fb, BLOCK=POOL_BLOCK),
                      num_warps=4, num_stages=3)


def variants():
    yield from packed_decode()
    yield from kda_packed_decode()
    yield from sigmoid_gating()
    yield from conv_update()
    yield from ssu()
    yield from kda_conv_verify()
    yield from pool_scatter()
    yield from pool_slot()
