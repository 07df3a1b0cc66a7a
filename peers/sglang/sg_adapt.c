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
    if (!kda && p->tokens == 1 && !p->inter && !p->disable_state_update && decode_knob == SG_DECODE_AUTO &&
        sg_is_packed(p)) {
        int bv = (int)(next_pow2(p->dv) < 32 ? next_pow2(p->dv) : 32);
        out->kernel = SG_PACKED_KERNEL;
        out->packed = 1;
        snprintf(out->key, sizeof out->key, "H%d_HV%d_K%d_V%d_S%s", p->heads_qk, p->heads_v, p->dk, p->dv, sd);
        out->grid[0] = (unsigned)((p->dv + bv - 1) / bv);
        out->grid[1] = (unsigned)p->batch * (unsigned)p->heads_v;
        out->grid[2] = 1;
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
    tk_int(c, "T", p->tokens);
    tk_int(c, "stride_a", kda ? hv * K : hv);
    tk_int(c, "stride_q", sq);
    tk_int(c, "stride_k", sk);
    tk_int(c, "stride_v", sv);
    tk_int(c, "stride_b", hv);
    return 0;
}
