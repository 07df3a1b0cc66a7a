/*
 * fi_gdn_map.c — host half of the flashinfer GDN op (ls_fi_gdn.h): which AOT variant FlashInfer's
 * Python would have compiled for this call on sm_90, and linstate's tensors as that variant's
 * arguments. Rules read from flashinfer-python 0.7.2.post1 (gdn_decode.py,
 * gdn_kernels/gdn_decode_mtp.py); the choices are in docs/peers.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ls_fi_gdn.h"

static int refuse(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* The variant for (shape, T) and, for MTP, the launch bucket of B*HV (get_mtp_config). */
static const ls_fi_gdn_variant *find(const ls_delta_params *p, const ls_fi_gdn_variant *tab, int n)
{
    const ls_fi_gdn_variant *best = NULL;
    const int mtp = p->tokens > 1;
    const int64_t work = (int64_t)p->batch * p->heads_v;
    for (int i = 0; i < n; i++) {
        const ls_fi_gdn_variant *v = &tab[i];
        if (v->mtp != mtp || v->H != p->heads_qk || v->HV != p->heads_v || v->K != p->dk || v->V != p->dv ||
            v->T != p->tokens)
            continue;
        if (!mtp)
            return v;
        if (work <= v->max_work && (!best || v->max_work < best->max_work))
            best = v;
    }
    return best;
}

int ls_fi_gdn_map(const ls_delta_params *p, const ls_fi_gdn_variant *tab, int n, ls_fi_gdn_plan *out,
                  char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (!p)
        return refuse(err, cap, "flashinfer gdn: no params");
    const int B = p->batch, T = p->tokens, H = p->heads_qk, HV = p->heads_v, K = p->dk, V = p->dv;
    if (p->state_layout != LS_STATE_VK)
        return refuse(err, cap, "flashinfer gdn: state layout kv: FlashInfer keeps [HV, V, K] (vk)");
    if (p->state_dtype != LS_F32)
        return refuse(err, cap, "flashinfer gdn: bf16 state: its bf16-state kernel (gdn_decode_bf16_state) "
                                "is not compiled ahead of time here");
    if (B < 1 || T < 1 || H < 1 || HV % H)
        return refuse(err, cap, "flashinfer gdn: batch %d, tokens %d, heads %d/%d", B, T, H, HV);
    /* the scale is a compile-time constant of the exported kernel: K^-0.5, as FlashInfer's default */
    if (fabsf(p->scale - (float)(1.0 / sqrt((double)K))) > 1e-6f * (float)(1.0 / sqrt((double)K)))
        return refuse(err, cap, "flashinfer gdn: scale %g: the AOT kernels are compiled with K^-0.5", (double)p->scale);
    const int64_t item = (int64_t)HV * K * V;
    if (p->state_stride_slot % 4)
        return refuse(err, cap, "flashinfer gdn: state slot stride %lld is not a multiple of 4 (128-bit state copies)",
                      (long long)p->state_stride_slot);
    const ls_fi_gdn_variant *v = find(p, tab, n);
    if (!v)
        return refuse(err, cap, "flashinfer gdn: no AOT variant for H=%d HV=%d K=%d V=%d T=%d B*HV=%lld "
                                "(gdn_aot.py --shapes/--tokens)", H, HV, K, V, T, (long long)B * HV);
    ls_fi_gdn_args *x = &out->args;
    const int64_t tq = p->q_stride_tok ? p->q_stride_tok : (int64_t)H * K;
    const int64_t tk = p->k_stride_tok ? p->k_stride_tok : (int64_t)H * K;
    const int64_t tv = p->v_stride_tok ? p->v_stride_tok : (int64_t)HV * V;
    *x = (ls_fi_gdn_args){
        .A_log = p->A_log, .a = p->a, .dt_bias = p->dt_bias, .q = p->q, .k = p->k, .v = p->v, .b = p->b,
        .o = p->o, .cu_seqlens = p->slot_idx, /* never read: is_varlen is compiled off */
        .B = B, .T = T, .H = H, .HV = HV, .K = K, .V = V, .B1 = B + 1,
        .a_s0 = (int64_t)T * HV, .a_s1 = HV, .b_s0 = (int64_t)T * HV, .b_s1 = HV,
        .q_s0 = T * tq, .q_s1 = tq, .q_s2 = K, .k_s0 = T * tk, .k_s1 = tk, .k_s2 = K,
        .v_s0 = T * tv, .v_s1 = tv, .v_s2 = V,
        .o_s0 = (int64_t)T * HV * V, .o_s1 = (int64_t)HV * V, .o_s2 = V,
        .ssm_s0 = T,
    };
    out->variant = v;
    out->slot_idx = p->slot_idx;
    if (T == 1) {
        /* gated_delta_rule_decode_pretranspose, fp32 pool path: read and write slot_idx[r] in place;
         * FlashInfer takes a negative index as padding (its output row written as zeros) */
        if (p->disable_state_update || p->inter)
            return refuse(err, cap, "flashinfer gdn: decode always writes the final state and no per-step state");
        x->state = p->state;
        x->idx = x->out_idx = p->slot_idx;
        x->pool = p->slots > 0 ? p->slots : INT32_MAX;
        x->h0_stride = p->state_stride_slot;
        return 0;
    }
    /* verify: the MTP kernel's per-token pool scatter (ssm_state_indices) writes the state after
     * token t to pool row ssm_idx[r][t]; no final writeback (out_idx -1). The pool is one base below
     * linstate's state and inter, in whole slots of HV*V*K (FlashInfer's [pool*HV, V, K] view). */
    if (!p->inter || !p->disable_state_update)
        return refuse(err, cap, "flashinfer gdn: verify writes one state per draft token (needs inter and "
                                "disable_state_update=1)");
    const char *s = p->state, *in = p->inter;
    const int64_t unit = item * 4;
    const int64_t diff = (int64_t)(s - in);
    if (diff % unit || p->state_stride_slot % item || p->inter_stride_slot % item)
        return refuse(err, cap, "flashinfer gdn: state and inter are %lld bytes apart (slot strides %lld, %lld): "
                                "not whole %lld-byte states, which the MTP kernel's one pool view needs",
                      (long long)diff, (long long)p->state_stride_slot, (long long)p->inter_stride_slot,
                      (long long)unit);
    const char *base = s < in ? s : in;
    ls_fi_gdn_rows *r = &out->rows;
    r->state_off = (s - base) / unit;
    r->state_mul = p->state_stride_slot / item;
    r->inter_off = (in - base) / unit;
    r->inter_mul = p->inter_stride_slot / item;
    const int64_t slots = p->slots > 0 ? p->slots : 0;
    if (!slots)
        return refuse(err, cap, "flashinfer gdn: verify needs the slot count (p->slots) to bound its pool indices");
    const int64_t hi_state = r->state_off + (slots - 1) * r->state_mul;
    const int64_t hi_inter = r->inter_off + (slots - 1) * r->inter_mul + T - 1;
    const int64_t rows = (hi_state > hi_inter ? hi_state : hi_inter) + 1;
    /* The MTP kernel's pool view has static strides (V*K, K, 1): its element offsets are 32-bit,
     * so a view past 2^31 elements addresses the wrong memory (an illegal address on the H200 when
     * state and inter are two allocations GiBs apart: results/h200/peers-7731109/). */
    if (rows * item > INT32_MAX)
        return refuse(err, cap, "flashinfer gdn: pool view of %lld states (%lld elements, state and inter %lld "
                                "bytes apart) past the MTP kernel's 32-bit element offsets",
                      (long long)rows, (long long)(rows * item), (long long)diff);
    x->state = base;
    x->pool_hv = rows * HV;
    x->inter_n = 1;
    return 0;
}
