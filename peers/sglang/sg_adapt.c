/* sg_adapt.c — marshalling ls_delta_params into SGLang 0.5.23's GDN/KDA Triton kernels, written
 * from reading its wrappers (fused_recurrent_gated_delta_rule_packed_decode and
 * fused_sigmoid_gating_delta_rule_update); peers/sglang/README.md gives the dispatch rule. */
#include "sg_adapt.h"

#include <stdio.h>
#include <string.h>

void sg_qkv_strides(const ls_delta_params *p, long long *sq, long long *sk, long long *sv)
{
    long long hk = (long long)p->heads_qk * p->dk, hvv = (long long)p->heads_v * p->dv;
#ifdef LS_DELTA_HAS_QKV_STRIDES
    *sq = p->q_stride_tok ? p->q_stride_tok : hk;
    *sk = p->k_stride_tok ? p->k_stride_tok : hk;
    *sv = p->v_stride_tok ? p->v_stride_tok : hvv;
#else
    *sq = hk;
    *sk = hk;
    *sv = hvv;
#endif
}

int sg_is_packed(const ls_delta_params *p)
{
    long long sq, sk, sv;
    sg_qkv_strides(p, &sq, &sk, &sv);
    long long hk = (long long)p->heads_qk * p->dk, row = 2 * hk + (long long)p->heads_v * p->dv;
    return sq == row && sk == row && sv == row && p->k == p->q + hk && p->v == p->q + 2 * hk;
}

static long long next_pow2(long long x)
{
    long long r = 1;
    while (r < x)
        r <<= 1;
    return r;
}

int sg_delta_plan(const ls_delta_params *p, int kda, int decode_knob, sg_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (p->state_layout != LS_STATE_VK) {
        snprintf(err, cap, "sglang: %s: SGLang's kernels keep the state [V, K] (state_layout vk), "
                 "this call gives kv", kda ? "kda" : "gdn");
        return -1;
    }
    if (p->batch < 1 || p->tokens < 1 || p->heads_qk < 1 || p->heads_v % p->heads_qk) {
        snprintf(err, cap, "sglang: bad shape B=%d T=%d H=%d HV=%d", p->batch, p->tokens, p->heads_qk,
                 p->heads_v);
        return -1;
    }
    if (next_pow2(p->dk) != p->dk || p->dk > 256) {
        snprintf(err, cap, "sglang: K=%d: the kernels need one K block (NK == 1)", p->dk);
        return -1;
    }
    const char *sd = p->state_dtype == LS_F32 ? "f32" : "bf16";
    /* packed decode (T = 1, state written, q/k/v one mixed_qkv row): GDN's when the knob allows it;
     * KDA's always (TritonKDAKernel.packed_decode is SGLang's KDA decode on CUDA; its CUDA kernel
     * takes B >= 8 before this plan is asked, sglang_impl.c) */
    if (p->tokens == 1 && !p->inter && !p->disable_state_update && (kda || decode_knob == SG_DECODE_AUTO) &&
        sg_is_packed(p)) {
        int bv = (int)(next_pow2(p->dv) < 32 ? next_pow2(p->dv) : 32);
        out->kernel = kda ? SG_KDA_PACKED_KERNEL : SG_PACKED_KERNEL;
        out->packed = 1;
        snprintf(out->key, sizeof out->key, "H%d_HV%d_K%d_V%d_S%s", p->heads_qk, p->heads_v, p->dk, p->dv, sd);
        out->grid[0] = (unsigned)((p->dv + bv - 1) / bv);
        if (kda) { /* grid (NV, B, HV) */
            out->grid[1] = (unsigned)p->batch;
            out->grid[2] = (unsigned)p->heads_v;
        } else { /* grid (NV, B * HV) */
            out->grid[1] = (unsigned)p->batch * (unsigned)p->heads_v;
            out->grid[2] = 1;
        }
        return 0;
    }
    /* _select_recurrent_launch_config on sm_90: GDN target_verify (an intermediate buffer is
     * given), N <= 64, K = V = 128 -> BV 4; everything else BV = min(pow2(V), 32). */
    int inter = p->inter != NULL;
    int bv = (int)(next_pow2(p->dv) < 32 ? next_pow2(p->dv) : 32);
    if (!kda && inter && p->batch <= 64 && p->dk == 128 && p->dv == 128)
        bv = 4;
    out->kernel = SG_GATING_KERNEL;
    snprintf(out->key, sizeof out->key, "%s_H%d_HV%d_K%d_V%d_S%s_DSU%d_I%d_BV%d", kda ? "KDA" : "GDN",
             p->heads_qk, p->heads_v, p->dk, p->dv, sd, p->disable_state_update ? 1 : 0, inter, bv);
    out->grid[0] = (unsigned)((p->dv + bv - 1) / bv); /* SPLIT_N_HV_GRID: (NV, N, HV) */
    out->grid[1] = (unsigned)p->batch;
    out->grid[2] = (unsigned)p->heads_v;
    return 0;
}

int sg_delta_args(const ls_delta_params *p, int kda, const sg_plan *pl, const tk_variant *v, tk_call *c,
                  char *err, size_t cap)
{
    long long hv = p->heads_v, K = p->dk, V = p->dv, head = hv * K * V;
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    if (pl->packed) {
        /* the strides are constexprs of the variant: a contiguous per-layer pool and [B, HV] a/b */
        if (p->state_stride_slot != head) {
            snprintf(err, cap, "sglang: packed decode: state_stride_slot %lld, the kernel is compiled "
                     "for a contiguous pool (%lld)", (long long)p->state_stride_slot, head);
            return -1;
        }
        tk_ptr(c, "mixed_qkv", p->q);
        tk_ptr(c, "a", p->a);
        tk_ptr(c, "b", p->b);
        tk_ptr(c, "A_log", p->A_log);
        tk_ptr(c, "dt_bias", p->dt_bias);
        tk_ptr(c, "o", p->o);
        tk_ptr(c, "h0", p->state);
        tk_ptr(c, "ht", p->state);
        tk_ptr(c, "ssm_state_indices", p->slot_idx);
        tk_f32(c, "scale", p->scale);
        return 0;
    }
    if (!pl->cu_seqlens) {
        snprintf(err, cap, "sglang: the sigmoid-gating kernel reads cu_seqlens (SGLang's query_start_loc); "
                 "none given");
        return -1;
    }
    long long sq, sk, sv;
    sg_qkv_strides(p, &sq, &sk, &sv);
    tk_ptr(c, "A_log", p->A_log);
    tk_ptr(c, "a", p->a);
    tk_ptr(c, "dt_bias", p->dt_bias);
    tk_f32(c, "softplus_beta", 1.0f);
    tk_f32(c, "softplus_threshold", 20.0f);
    tk_f32(c, "lower_bound", 0.0f);
    tk_ptr(c, "q", p->q);
    tk_ptr(c, "k", p->k);
    tk_ptr(c, "v", p->v);
    tk_ptr(c, "b", p->b);
    tk_ptr(c, "o", p->o);
    tk_ptr(c, "h0_source", p->state);
    tk_ptr(c, "h0_indices", p->slot_idx);
    tk_int(c, "stride_h0_source", p->state_stride_slot);
    /* varlen as SGLang calls it: q/k/v [1, B*T, ...], row starts from cu_seqlens, T = B*T in all */
    tk_ptr(c, "cu_seqlens", pl->cu_seqlens);
    tk_ptr(c, "intermediate_states_buffer", p->inter);
    if (p->inter) {
        /* the kernel addresses inter at (idx * cache_steps + t) * HV*K*V: the slot pitch in steps */
        if (p->inter_stride_slot % head || p->inter_stride_slot / head < p->tokens) {
            snprintf(err, cap, "sglang: inter_stride_slot %lld is not a whole number (>= T) of "
                     "HV*K*V = %lld steps", (long long)p->inter_stride_slot, head);
            return -1;
        }
        tk_ptr(c, "intermediate_state_indices", p->slot_idx);
        tk_int(c, "cache_steps", p->inter_stride_slot / head);
    } else {
        tk_int(c, "cache_steps", 0);
    }
    tk_f32(c, "scale", p->scale);
    tk_int(c, "T", (long long)p->batch * p->tokens);
    tk_int(c, "stride_a", kda ? hv * K : hv);
    tk_int(c, "stride_q", sq);
    tk_int(c, "stride_k", sk);
    tk_int(c, "stride_v", sv);
    tk_int(c, "stride_b", hv);
    return 0;
}

/* ------------------------------------------------------------------ causal conv1d update */

int sg_conv_plan(const ls_conv_params *p, sg_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    long long B = p->batch, T = p->tokens, C = p->channels, W = p->width, w1 = W - 1;
    if (B < 1 || T < 1 || C < 1) {
        snprintf(err, cap, "sglang: conv_update: bad shape B=%lld T=%lld C=%lld", B, T, C);
        return -1;
    }
    if (W != 4 || !p->silu) {
        snprintf(err, cap, "sglang: conv_update: compiled for width 4 with SiLU (the preset models), "
                 "this call has width %lld, silu %d", W, p->silu);
        return -1;
    }
    if (p->disable_state_update) {
        snprintf(err, cap, "sglang: conv_update: SGLang's kernel always shifts the conv state (no "
                 "disable_state_update; its verify updates the real state and the accept step restores it)");
        return -1;
    }
    if (p->state_dtype != LS_BF16 || (p->weight_dtype != LS_BF16 && p->weight_dtype != LS_F32)) {
        snprintf(err, cap, "sglang: conv_update: compiled for a bf16 conv state and bf16/fp32 weights");
        return -1;
    }
    if (T > 8 || (T > 1) != (p->inter != NULL)) {
        snprintf(err, cap, "sglang: conv_update: compiled for decode (T = 1, no windows) and target verify "
                 "(T = 2..8 with intermediate windows); this call has T=%lld, inter %s", T,
                 p->inter ? "given" : "none");
        return -1;
    }
    if (p->x_stride_c != 1 || p->x_stride_b != T * C || (T > 1 && p->x_stride_t != C) || p->y_stride_c != 1 ||
        p->y_stride_b != T * C || (T > 1 && p->y_stride_t != C)) {
        snprintf(err, cap, "sglang: conv_update: the x/o strides are constexprs compiled for contiguous "
                 "[B, T, C] (x %lld/%lld/%lld, y %lld/%lld/%lld)", (long long)p->x_stride_b,
                 (long long)p->x_stride_t, (long long)p->x_stride_c, (long long)p->y_stride_b,
                 (long long)p->y_stride_t, (long long)p->y_stride_c);
        return -1;
    }
    const char *orient;
    if (p->state_stride_c == w1 && p->state_stride_w == 1)
        orient = "CM";
    else if (p->state_stride_c == 1 && p->state_stride_w == C)
        orient = "WM";
    else {
        snprintf(err, cap, "sglang: conv_update: state strides c=%lld w=%lld are neither channel-major "
                 "(%lld, 1) nor window-major (1, %lld); they are constexprs of the kernel",
                 (long long)p->state_stride_c, (long long)p->state_stride_w, w1, C);
        return -1;
    }
    if (p->state_stride_slot != C * w1) {
        snprintf(err, cap, "sglang: conv_update: state_stride_slot %lld, compiled for a dense pool (%lld)",
                 (long long)p->state_stride_slot, C * w1);
        return -1;
    }
    if (p->inter && (p->inter_stride_slot != T * C * w1 || p->inter_stride_t != C * w1 ||
                     p->inter_stride_c != p->state_stride_c || p->inter_stride_w != p->state_stride_w)) {
        snprintf(err, cap, "sglang: conv_update: inter strides (%lld, %lld, %lld, %lld), compiled for a dense "
                 "[slot, T, C, W-1] window buffer in the state's orientation (%lld, %lld, %lld, %lld)",
                 (long long)p->inter_stride_slot, (long long)p->inter_stride_t, (long long)p->inter_stride_c,
                 (long long)p->inter_stride_w, T * C * w1, C * w1, (long long)p->state_stride_c,
                 (long long)p->state_stride_w);
        return -1;
    }
    out->kernel = SG_CONV_KERNEL;
    snprintf(out->key, sizeof out->key, "C%lld_T%lld_W%lld_%s_w%s_B%d", C, T, W, orient,
             p->weight_dtype == LS_F32 ? "fp32" : "bf16", p->bias ? 1 : 0);
    out->grid[0] = (unsigned)B; /* grid (batch, cdiv(dim, BLOCK_N)) */
    out->grid[1] = (unsigned)((C + SG_CONV_BLOCK_N - 1) / SG_CONV_BLOCK_N);
    out->grid[2] = 1;
    return 0;
}

int sg_conv_args(const ls_conv_params *p, const sg_plan *pl, const tk_variant *v, tk_call *c, char *err,
                 size_t cap)
{
    (void)err;
    (void)cap;
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    tk_ptr(c, "x_ptr", p->x);
    tk_ptr(c, "w_ptr", p->weight);
    tk_ptr(c, "bias_ptr", p->bias);
    tk_ptr(c, "conv_state_ptr", p->state);
    tk_ptr(c, "conv_state_indices_ptr", p->slot_idx);
    /* the wrapper passes x when no window buffer is given (SAVE_INTERMEDIATE off: never read) */
    tk_ptr(c, "intermediate_conv_window_ptr", p->inter ? (const void *)p->inter : (const void *)p->x);
    /* our windows are indexed by pool slot (SGLang: a per-request verify index) */
    tk_ptr(c, "intermediate_state_indices_ptr", p->inter ? p->slot_idx : NULL);
    tk_ptr(c, "o_ptr", p->y);
    tk_int(c, "batch", p->batch);
    return 0;
}

/* ---------------------------------------------------------------------- selective state update */

int sg_ssu_block_m(int dstate, int *num_warps)
{
    /* selective_state_update's hand-tuned (BLOCK_SIZE_M, num_warps) */
    int bm, nw;
    if (dstate <= 16)
        bm = 32, nw = 4;
    else if (dstate <= 32)
        bm = 16, nw = 4;
    else if (dstate <= 64)
        bm = 8, nw = 4;
    else if (dstate <= 128)
        bm = 8, nw = 1;
    else
        bm = 4, nw = 8;
    if (num_warps)
        *num_warps = nw;
    return bm;
}

int sg_ssu_plan(const ls_ssu_params *p, sg_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (p->batch < 1 || p->tokens < 1 || p->nheads < 1 || p->head_dim < 1 || p->dstate < 1 || p->ngroups < 1 ||
        p->nheads % p->ngroups) {
        snprintf(err, cap, "sglang: ssu: bad shape B=%d T=%d nh=%d hd=%d ds=%d ng=%d", p->batch, p->tokens,
                 p->nheads, p->head_dim, p->dstate, p->ngroups);
        return -1;
    }
    if (p->state_dtype != LS_F32 && p->state_dtype != LS_BF16) {
        snprintf(err, cap, "sglang: ssu: compiled for fp32 and bf16 states");
        return -1;
    }
    const char *mode;
    if (!p->disable_state_update && !p->inter)
        mode = "dec";
    else if (p->disable_state_update && p->inter)
        mode = "ver";
    else {
        snprintf(err, cap, "sglang: ssu: compiled for decode (state updated, no inter) and verify "
                 "(disable_state_update with intermediate states), as SGLang's mixer calls it; this call "
                 "has disable_state_update %d, inter %s", p->disable_state_update, p->inter ? "given" : "none");
        return -1;
    }
    if (p->inter) {
        long long item = (long long)p->nheads * p->head_dim * p->dstate;
        if (p->inter_stride_slot % item || p->inter_stride_slot / item < p->tokens) {
            snprintf(err, cap, "sglang: ssu: inter_stride_slot %lld is not a whole number (>= T) of "
                     "nh*hd*ds = %lld steps (the kernel addresses (idx*cache_steps + t)*nh*hd*ds)",
                     (long long)p->inter_stride_slot, item);
            return -1;
        }
    }
    out->kernel = SG_SSU_KERNEL;
    snprintf(out->key, sizeof out->key, "NH%d_HD%d_DS%d_NG%d_S%s_%s_Z%d", p->nheads, p->head_dim, p->dstate,
             p->ngroups, p->state_dtype == LS_F32 ? "f32" : "bf16", mode, p->z ? 1 : 0);
    int bm = sg_ssu_block_m(p->dstate, NULL);
    out->grid[0] = (unsigned)((p->head_dim + bm - 1) / bm); /* (cdiv(dim, BLOCK_SIZE_M), batch, nheads) */
    out->grid[1] = (unsigned)p->batch;
    out->grid[2] = (unsigned)p->nheads;
    return 0;
}

int sg_ssu_args(const ls_ssu_params *p, const sg_plan *pl, const tk_variant *v, tk_call *c, char *err,
                size_t cap)
{
    (void)err;
    (void)cap;
    long long T = p->tokens, nh = p->nheads, hd = p->head_dim, ds = p->dstate, ng = p->ngroups;
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    tk_ptr(c, "state_ptr", p->state);
    tk_ptr(c, "x_ptr", p->x);
    tk_ptr(c, "dt_ptr", p->dt);
    tk_ptr(c, "dt_bias_ptr", p->dt_bias);
    tk_ptr(c, "A_ptr", p->A);
    tk_ptr(c, "B_ptr", p->Bm);
    tk_ptr(c, "C_ptr", p->Cm);
    tk_ptr(c, "D_ptr", p->D);
    tk_ptr(c, "z_ptr", p->z);
    tk_ptr(c, "out_ptr", p->y);
    tk_ptr(c, "state_batch_indices_ptr", p->slot_idx);
    tk_int(c, "pad_slot_id", -1);
    tk_ptr(c, "intermediate_states_buffer", p->inter);
    tk_int(c, "cache_steps", p->inter ? p->inter_stride_slot / (nh * hd * ds) : 0);
    /* our intermediate states are indexed by pool slot */
    tk_ptr(c, "intermediate_state_indices_ptr", p->inter ? p->slot_idx : NULL);
    tk_int(c, "batch", p->batch);
    tk_int(c, "T", T);
    tk_int(c, "nheads", nh);
    tk_int(c, "dim", hd);
    tk_int(c, "dstate", ds);
    tk_int(c, "nheads_ngroups_ratio", nh / ng);
    /* state [slot, nh, hd, ds] */
    tk_int(c, "stride_state_batch", p->state_stride_slot);
    tk_int(c, "stride_state_head", hd * ds);
    tk_int(c, "stride_state_dim", ds);
    tk_int(c, "stride_state_dstate", 1);
    /* x, z, y [B, T, nh, hd]; dt [B, T, nh] seen as [B, T, nh, hd] with stride 0 over hd (the tied
     * path: dt, dt_bias, A, D expanded like SGLang's mixer does) */
    tk_int(c, "stride_x_batch", T * nh * hd);
    tk_int(c, "stride_x_T", nh * hd);
    tk_int(c, "stride_x_head", hd);
    tk_int(c, "stride_x_dim", 1);
    tk_int(c, "stride_dt_batch", T * nh);
    tk_int(c, "stride_dt_T", nh);
    tk_int(c, "stride_dt_head", 1);
    tk_int(c, "stride_dt_dim", 0);
    tk_int(c, "stride_dt_bias_head", 1);
    tk_int(c, "stride_dt_bias_dim", 0);
    tk_int(c, "stride_A_head", 1);
    tk_int(c, "stride_A_dim", 0);
    tk_int(c, "stride_A_dstate", 0);
    tk_int(c, "stride_B_batch", T * ng * ds);
    tk_int(c, "stride_B_T", ng * ds);
    tk_int(c, "stride_B_group", ds);
    tk_int(c, "stride_B_dstate", 1);
    tk_int(c, "stride_C_batch", T * ng * ds);
    tk_int(c, "stride_C_T", ng * ds);
    tk_int(c, "stride_C_group", ds);
    tk_int(c, "stride_C_dstate", 1);
    tk_int(c, "stride_D_head", 1);
    tk_int(c, "stride_D_dim", 0);
    tk_int(c, "stride_z_batch", p->z ? T * nh * hd : 0);
    tk_int(c, "stride_z_T", p->z ? nh * hd : 0);
    tk_int(c, "stride_z_head", p->z ? hd : 0);
    tk_int(c, "stride_z_dim", p->z ? 1 : 0);
    tk_int(c, "stride_out_batch", T * nh * hd);
    tk_int(c, "stride_out_T", nh * hd);
    tk_int(c, "stride_out_head", hd);
    tk_int(c, "stride_out_dim", 1);
    tk_int(c, "stride_retrieve_parent_token_batch", 0);
    tk_int(c, "stride_retrieve_parent_token_T", 0);
    return 0;
}

/* ------------------------------------------------ fused KDA conv update + recurrence (verify) */

int sg_conv_delta_plan(const ls_conv_delta_params *p, sg_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    const ls_conv_params *c = &p->conv;
    const ls_delta_params *d = &p->delta;
    const long long T = d->tokens;
    const long long head = (long long)d->heads_v * d->dk * d->dv;
    if (!p->kda) {
        snprintf(err, cap, "sglang: conv_delta: SGLang 0.5.23 fuses the conv into the KDA verify only (no GDN kernel)");
        return -1;
    }
    if (d->state_layout != LS_STATE_VK) {
        snprintf(err, cap, "sglang: conv_delta: SGLang's kernel keeps the state [V, K] (state_layout vk), "
                 "this call gives kv");
        return -1;
    }
    if (T < 3 || T > 8) {
        snprintf(err, cap, "sglang: conv_delta: T=%lld: the fused verify needs T >= W - 1 = 3 (decode takes "
                 "the separate kernels) and is compiled for T <= 8", T);
        return -1;
    }
    if (c->width != 4 || !c->silu || c->weight_dtype != LS_F32 || c->bias || c->state_dtype != LS_BF16) {
        snprintf(err, cap, "sglang: conv_delta: compiled for Kimi's conv (width 4, SiLU, fp32 weights, no bias, "
                 "bf16 state); this call has width %d, silu %d, %s weights, bias %s, %s state", (int)c->width,
                 (int)c->silu, ls_dtype_name(c->weight_dtype), c->bias ? "given" : "none",
                 ls_dtype_name(c->state_dtype));
        return -1;
    }
    if (!c->disable_state_update || !d->disable_state_update || !c->inter || !d->inter) {
        snprintf(err, cap, "sglang: conv_delta: the kernel leaves both states alone and writes windows and steps "
                 "(needs disable_state_update 1/1 and both inter buffers; got %d/%d, inter %s/%s)",
                 (int)c->disable_state_update, (int)d->disable_state_update, c->inter ? "given" : "none",
                 d->inter ? "given" : "none");
        return -1;
    }
    if (c->x_stride_c != 1 || c->x_stride_b != T * c->x_stride_t) {
        snprintf(err, cap, "sglang: conv_delta: x must be [B*T, C] rows with channel stride 1 (x strides "
                 "%lld/%lld/%lld)", (long long)c->x_stride_b, (long long)c->x_stride_t, (long long)c->x_stride_c);
        return -1;
    }
    if (c->state_stride_c != 1 || c->inter_stride_c != 1) {
        snprintf(err, cap, "sglang: conv_delta: the conv state and windows must be window-major (channel stride "
                 "1; got %lld, %lld)", (long long)c->state_stride_c, (long long)c->inter_stride_c);
        return -1;
    }
    if (d->state_stride_slot != head || d->inter_stride_slot % head || d->inter_stride_slot / head < T) {
        snprintf(err, cap, "sglang: conv_delta: state slot pitch %lld must be HV*K*V = %lld and the step buffer's "
                 "%lld a whole number (>= T) of it", (long long)d->state_stride_slot, head,
                 (long long)d->inter_stride_slot);
        return -1;
    }
    if (next_pow2(d->dk) != d->dk) {
        snprintf(err, cap, "sglang: conv_delta: K=%d: the kernel needs K a power of two", d->dk);
        return -1;
    }
    out->kernel = SG_KDA_CONV_VERIFY_KERNEL;
    snprintf(out->key, sizeof out->key, "H%d_HV%d_K%d_V%d_S%s_T%lld", d->heads_qk, d->heads_v, d->dk, d->dv,
             d->state_dtype == LS_F32 ? "f32" : "bf16", T);
    out->grid[0] = (unsigned)((d->dv + SG_KDA_CONV_VERIFY_BV - 1) / SG_KDA_CONV_VERIFY_BV); /* (NV, B*HV) */
    out->grid[1] = (unsigned)d->batch * (unsigned)d->heads_v;
    out->grid[2] = 1;
    return 0;
}

int sg_conv_delta_args(const ls_conv_delta_params *p, const sg_plan *pl, const tk_variant *v, tk_call *c,
                       char *err, size_t cap)
{
    (void)err;
    (void)cap;
    const ls_conv_params *cv = &p->conv;
    const ls_delta_params *d = &p->delta;
    const long long head = (long long)d->heads_v * d->dk * d->dv;
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    tk_ptr(c, "x", cv->x);
    tk_ptr(c, "w", cv->weight);
    tk_ptr(c, "conv_bias", cv->weight); /* HAS_BIAS off: the wrapper passes the weight (never read) */
    tk_ptr(c, "conv_state", cv->state);
    tk_ptr(c, "conv_state_indices", cv->slot_idx);
    tk_ptr(c, "inter_conv_window", cv->inter);
    tk_ptr(c, "inter_state_indices", cv->slot_idx); /* windows and steps are indexed by pool slot */
    tk_ptr(c, "a", d->a);
    tk_ptr(c, "b_gate", d->b);
    tk_ptr(c, "A_log", d->A_log);
    tk_ptr(c, "dt_bias", d->dt_bias);
    tk_f32(c, "softplus_beta", 1.0f);
    tk_f32(c, "softplus_threshold", 20.0f);
    tk_ptr(c, "h0_source", d->state);
    tk_ptr(c, "h0_indices", d->slot_idx);
    tk_ptr(c, "inter_states", d->inter);
    tk_ptr(c, "o", d->o);
    tk_f32(c, "scale", d->scale);
    tk_int(c, "cache_steps", d->inter_stride_slot / head);
    tk_int(c, "stride_x_tok", cv->x_stride_t);
    tk_int(c, "stride_w_dim", cv->width);
    tk_int(c, "stride_cs_line", cv->state_stride_slot);
    tk_int(c, "stride_cs_tok", cv->state_stride_w);
    tk_int(c, "stride_iw_line", cv->inter_stride_slot);
    tk_int(c, "stride_iw_step", cv->inter_stride_t);
    tk_int(c, "stride_iw_dim", cv->inter_stride_c);
    tk_int(c, "stride_iw_win", cv->inter_stride_w);
    tk_int(c, "stride_a_tok", (long long)d->heads_v * d->dk);
    tk_int(c, "stride_b_tok", d->heads_v);
    return 0;
}
