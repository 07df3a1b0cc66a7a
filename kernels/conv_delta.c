/*
 * conv_delta.c — the fused conv update + delta rule op's validation and its back-to-back form
 * (ls_conv_delta_params in ls_kernels.h, docs/ops.md). The split is what "the same results as
 * the two ops back to back" means in code: the host oracle composes the reference ops through
 * it, and the bench's back-to-back variant launches the impl's two ops through it.
 */
#include "ls_kernels.h"

/* A stand-in for the pointers the fused op leaves NULL, so the two ops' own checks can run on
 * the halves (never dereferenced: checks do not touch memory). */
static uint16_t placeholder;

int ls_conv_delta_params_check(const ls_conv_delta_params *p)
{
    if (!p)
        return ls_fail("conv_delta: params is NULL");
    if (p->kda != 0 && p->kda != 1)
        return ls_fail("conv_delta: kda=%d not 0 (gdn) or 1 (kda)", (int)p->kda);
    const ls_conv_params *c = &p->conv;
    const ls_delta_params *d = &p->delta;
    if (c->y)
        return ls_fail("conv_delta: conv.y is set (the conv output is not stored: must be NULL)");
    if (d->q || d->k || d->v)
        return ls_fail("conv_delta: delta.%s is set (the conv output feeds q, k, v: must be NULL)",
                       d->q ? "q" : d->k ? "k" : "v");
    ls_conv_params cc = *c;
    cc.y = &placeholder; /* contiguous [B, T, C]: its strides never matter */
    cc.y_stride_c = 1;
    cc.y_stride_t = c->channels;
    cc.y_stride_b = (int64_t)c->channels * c->tokens;
    if (ls_conv_params_check(&cc))
        return -1;
    ls_delta_params dd = *d;
    dd.q = dd.k = dd.v = &placeholder;
    dd.q_stride_tok = dd.k_stride_tok = dd.v_stride_tok = 0;
    if (ls_delta_params_check(&dd, p->kda))
        return -1;
    const int64_t want = 2 * (int64_t)d->heads_qk * d->dk + (int64_t)d->heads_v * d->dv;
    if (c->channels != want)
        return ls_fail("conv_delta: conv.channels=%d is not 2*H*K + HV*V = %lld", (int)c->channels,
                       (long long)want);
    if (c->batch != d->batch || c->tokens != d->tokens)
        return ls_fail("conv_delta: conv batch/tokens %d/%d differ from delta's %d/%d", (int)c->batch,
                       (int)c->tokens, (int)d->batch, (int)d->tokens);
    if (c->slot_idx != d->slot_idx)
        return ls_fail("conv_delta: conv.slot_idx and delta.slot_idx differ (one index array for both)");
    if (c->slots != d->slots)
        return ls_fail("conv_delta: conv.slots=%d differs from delta.slots=%d", (int)c->slots, (int)d->slots);
    return 0;
}

int ls_conv_delta_split(const ls_conv_delta_params *p, uint16_t *qkv, int packed, ls_conv_params conv[3],
                        int *n_conv, ls_delta_params *delta)
{
    if (ls_conv_delta_params_check(p))
        return -1;
    if (!qkv)
        return ls_fail("conv_delta split: qkv scratch is NULL");
    const ls_conv_params *c = &p->conv;
    const ls_delta_params *d = &p->delta;
    const int64_t BT = (int64_t)c->batch * c->tokens, hk = (int64_t)d->heads_qk * d->dk;
    const int64_t hv = (int64_t)d->heads_v * d->dv, C = c->channels;
    *delta = *d;
    if (packed) {
        conv[0] = *c;
        conv[0].y = qkv;
        conv[0].y_stride_c = 1;
        conv[0].y_stride_t = C;
        conv[0].y_stride_b = C * c->tokens;
        *n_conv = 1;
        delta->q = qkv;
        delta->k = qkv + hk;
        delta->v = qkv + 2 * hk;
        delta->q_stride_tok = delta->k_stride_tok = delta->v_stride_tok = C;
        return 0;
    }
    /* q, k, v channel ranges: [0, hk), [hk, 2hk), [2hk, 2hk + hv) */
    const int64_t c0[3] = {0, hk, 2 * hk}, n[3] = {hk, hk, hv};
    const int64_t out[3] = {0, BT * hk, 2 * BT * hk};
    const size_t ws = ls_dtype_size(c->weight_dtype), ss = ls_dtype_size(c->state_dtype);
    for (int i = 0; i < 3; i++) {
        ls_conv_params *ci = &conv[i];
        *ci = *c;
        ci->channels = (int32_t)n[i];
        ci->x = c->x + c0[i] * c->x_stride_c;
        ci->y = qkv + out[i];
        ci->y_stride_c = 1;
        ci->y_stride_t = n[i];
        ci->y_stride_b = n[i] * c->tokens;
        ci->weight = (const char *)c->weight + (size_t)(c0[i] * c->width) * ws;
        ci->bias = c->bias ? (const char *)c->bias + (size_t)c0[i] * ws : NULL;
        ci->state = (char *)c->state + (size_t)(c0[i] * c->state_stride_c) * ss;
        ci->inter = c->inter ? (char *)c->inter + (size_t)(c0[i] * c->inter_stride_c) * ss : NULL;
    }
    *n_conv = 3;
    delta->q = qkv + out[0];
    delta->k = qkv + out[1];
    delta->v = qkv + out[2];
    delta->q_stride_tok = delta->k_stride_tok = delta->v_stride_tok = 0;
    return 0;
}
