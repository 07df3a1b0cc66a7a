/*
 * conv_delta.c — the conv_delta family: the causal conv1d update of the packed q|k|v channels
 * feeding the GDN or KDA recurrence (docs/ops.md "Fused conv update + delta rule"), decode
 * (T = 1: conv state and recurrent state updated in place) and verify (T draft tokens: the
 * windows and states after every step into the speculative buffers, neither state written —
 * the accept step restores the chosen step; SGLang's fused KDA verify kernel works so).
 *
 * Variants (registry.c), one case key, the same minimum bytes (docs/bytes.md):
 *   one-kernel   — the impl's conv_delta op, one call;
 *   back-to-back — the impl's conv_update, then its gdn / kda, on the same params through
 *                  ls_conv_delta_split: the conv output goes through a [B, T, C] scratch (one
 *                  conv and q/k/v token strides for an impl with LS_IMPL_QKV_STRIDES, else three
 *                  convs over the q, k and v channel ranges). Both launches are one timed call.
 * The pool is the model's own descriptor with the conv tensors as one (KDA: q, k, v as one
 * window-major tensor of 3C channels, conv.c's "concat"), so the conv channels are exactly
 * 2*H*K + HV*V. Every rotated layer has its own x, a, b, o, weights and gate parameters; one
 * scratch serves every layer (as the caching allocator would hand it back). Verification runs
 * on layer 0 against ls_ref_conv_delta.
 */
#include <math.h>
#include <string.h>

#include "family.h"

typedef struct cd_priv {
    int kda, T, B, C, b2b, n_conv;
    ls_dtype wdt;
    uint16_t *x_h, *a_h, *b_h;
    void *w_h, *bias_h, *dt_bias_h;
    float *A_log_h;
    ls_conv_delta_params *p; /* [n_rot] */
    ls_conv_params *conv;    /* back-to-back: [n_rot][3] */
    ls_delta_params *rec;    /* back-to-back: [n_rot] */
} cd_priv;

static int64_t bench_conv_delta_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    const ls_shape *s = &c->shape;
    return ls_bytes_conv_delta(c->batch, c->tokens, s->heads_qk, s->heads_v, s->dk, s->dv, s->conv_width, 2, 2,
                               (int64_t)ls_dtype_size(c->state_dtype),
                               (int64_t)ls_dtype_size(c->model->conv_weight_dtype), c->model->conv_bias,
                               c->model->mechanism == LS_MECH_KDA);
}

/* Bytes one rotated layer holds besides its pool share: x [B,T,C], o, a, b (bf16), conv weights
 * and bias, A_log and dt_bias. */
static int64_t cd_layer_inputs(const bench_case *c, int kda, int64_t C)
{
    const ls_shape *sh = &c->shape;
    int64_t BT = (int64_t)c->batch * c->tokens, ng = kda ? (int64_t)sh->heads_v * sh->dk : sh->heads_v;
    int64_t wes = (int64_t)ls_dtype_size(c->model->conv_weight_dtype);
    return 2 * BT * (C + (int64_t)sh->heads_v * sh->dv + ng + sh->heads_v) + C * (sh->conv_width + 1) * wes +
           4 * (int64_t)sh->heads_v + ng * (kda ? 4 : 2);
}

/* The back-to-back launches of one params set (scratch qkv of B*T*C bf16). */
static int run_b2b(bench_ctx *x, const ls_conv_params *conv, int n_conv, const ls_delta_params *rec, int kda,
                   ls_stream s)
{
    for (int i = 0; i < n_conv; i++)
        if (bench_impl_rc(x, x->im->conv_update(&conv[i], x->tune, s)) != 0)
            return -1;
    return bench_impl_rc(x, kda ? x->im->kda(rec, x->tune, s) : x->im->gdn(rec, x->tune, s));
}

static int cd_setup(bench_ctx *x, int b2b)
{
    const bench_case *c = x->c;
    const ls_shape *sh = &c->shape;
    int T = c->tokens, B = c->batch, spec = T > 1 ? T : 0, rc;
    int kda = c->model->mechanism == LS_MECH_KDA;
    ls_state_desc d;
    if (ls_state_desc_from_shape(sh, c->state_dtype, spec, &d) != 0 || bench_conv_concat_desc(&d) != 0)
        return -1;
    const int H = sh->heads_qk, HV = sh->heads_v, K = sh->dk, V = sh->dv, W = sh->conv_width;
    const int C = d.conv[0].channels;
    if ((int64_t)C != 2 * (int64_t)H * K + (int64_t)HV * V)
        return ls_fail("bench: conv_delta: conv channels %d are not 2*H*K + HV*V = %lld", C,
                       (long long)(2 * (int64_t)H * K + (int64_t)HV * V));
    /* a pool of exactly B slots, one slot list for every rotated layer */
    if ((rc = bench_kernel_setup(x, &d, B, cd_layer_inputs(c, kda, C), 0, sizeof(cd_priv))) != 0)
        return rc;
    const int n_rot = x->n_rot;
    cd_priv *p = x->priv;
    *p = (cd_priv){.kda = kda, .T = T, .B = B, .C = C, .b2b = b2b, .wdt = c->model->conv_weight_dtype};
    const size_t BT = (size_t)B * T, ng = kda ? (size_t)HV * K : (size_t)HV, wes = ls_dtype_size(p->wdt);
    const ls_dtype dt_dt = kda ? LS_F32 : LS_BF16; /* dt_bias: KDA fp32 [HV*K]; GDN bf16 [HV] */
    void *h[8] = {NULL};
    uint16_t *xd = bench_dev_rand_layers(x, n_rot, BT * C, LS_BF16, -1.0, 1.0, &h[0]);
    char *wd = bench_dev_rand_layers(x, n_rot, (size_t)C * W, p->wdt, -0.5, 0.5, &h[1]);
    char *bd = c->model->conv_bias ? bench_dev_rand_layers(x, n_rot, (size_t)C, p->wdt, -0.5, 0.5, &h[2]) : NULL;
    uint16_t *a = bench_dev_rand_layers(x, n_rot, BT * ng, LS_BF16, -3.0, 1.0, &h[3]);
    uint16_t *b = bench_dev_rand_layers(x, n_rot, BT * HV, LS_BF16, -2.0, 2.0, &h[4]);
    float *A_log = bench_dev_rand_layers(x, n_rot, (size_t)HV, LS_F32, -2.0, 0.5, &h[5]);
    char *dt_bias = bench_dev_rand_layers(x, n_rot, ng, dt_dt, -0.5, 0.5, &h[6]);
    uint16_t *o = bench_dev_alloc(x, BT * HV * V * 2 * (size_t)n_rot);
    p->p = bench_host_alloc(x, sizeof *p->p * (size_t)n_rot);
    if (!xd || !wd || (c->model->conv_bias && !bd) || !a || !b || !A_log || !dt_bias || !o || !p->p)
        return -1;
    p->x_h = h[0], p->w_h = h[1], p->bias_h = h[2], p->a_h = h[3], p->b_h = h[4], p->A_log_h = h[5];
    p->dt_bias_h = h[6];
    const ls_conv_shape *cs = &d.conv[0];
    const int64_t sc = cs->orient == LS_CONV_CHANNEL_MAJOR ? cs->window : 1;
    const int64_t sw = cs->orient == LS_CONV_CHANNEL_MAJOR ? 1 : C;
    const int64_t citem = (int64_t)C * cs->window, item = (int64_t)HV * K * V;
    for (int l = 0; l < n_rot; l++) {
        ls_conv_delta_params *q = &p->p[l];
        memset(q, 0, sizeof *q);
        q->kda = kda;
        ls_conv_params *cv = &q->conv;
        cv->batch = B;
        cv->tokens = T;
        cv->channels = C;
        cv->width = W;
        cv->silu = 1;
        cv->disable_state_update = T > 1;
        cv->weight_dtype = p->wdt;
        cv->state_dtype = d.conv_dtype;
        cv->x = xd + (size_t)l * BT * C;
        cv->x_stride_b = (int64_t)T * C;
        cv->x_stride_t = C;
        cv->x_stride_c = 1;
        cv->weight = wd + (size_t)l * C * W * wes;
        cv->bias = bd ? bd + (size_t)l * C * wes : NULL;
        cv->state = ls_pool_conv(x->pool, 0, l);
        cv->state_stride_slot = citem;
        cv->state_stride_c = sc;
        cv->state_stride_w = sw;
        cv->slot_idx = x->slots_dev;
        cv->slots = ls_pool_slots(x->pool);
        ls_delta_params *dp = &q->delta;
        dp->batch = B;
        dp->tokens = T;
        dp->heads_qk = H;
        dp->heads_v = HV;
        dp->dk = K;
        dp->dv = V;
        dp->disable_state_update = T > 1;
        dp->scale = (float)(1.0 / sqrt((double)K));
        dp->state_dtype = c->state_dtype;
        dp->state_layout = c->layout;
        dp->a = a + (size_t)l * BT * ng;
        dp->b = b + (size_t)l * BT * HV;
        dp->A_log = A_log + (size_t)l * HV;
        dp->dt_bias = dt_bias + (size_t)l * ng * ls_dtype_size(dt_dt);
        dp->o = o + (size_t)l * BT * HV * V;
        dp->state = ls_pool_temporal(x->pool, l);
        dp->state_stride_slot = item;
        dp->slot_idx = x->slots_dev;
        dp->slots = cv->slots;
        if (spec) {
            cv->inter = ls_pool_spec_conv(x->pool, 0, l);
            cv->inter_stride_slot = citem * T;
            cv->inter_stride_t = citem;
            cv->inter_stride_c = sc;
            cv->inter_stride_w = sw;
            dp->inter = ls_pool_spec_temporal(x->pool, l);
            dp->inter_stride_slot = item * T;
        }
    }
    if (!b2b)
        return 0;
    uint16_t *qkv = bench_dev_alloc(x, BT * C * 2);
    p->conv = bench_host_alloc(x, sizeof *p->conv * 3 * (size_t)n_rot);
    p->rec = bench_host_alloc(x, sizeof *p->rec * (size_t)n_rot);
    if (!qkv || !p->conv || !p->rec)
        return -1;
    const int packed = (x->im->caps & LS_IMPL_QKV_STRIDES) != 0;
    for (int l = 0; l < n_rot; l++)
        if (ls_conv_delta_split(&p->p[l], qkv, packed, &p->conv[3 * l], &p->n_conv, &p->rec[l]) != 0)
            return -1;
    return 0;
}

static int bench_conv_delta_setup(bench_ctx *x)
{
    return cd_setup(x, 0);
}

static int bench_conv_delta_b2b_setup(bench_ctx *x)
{
    return cd_setup(x, 1);
}

static int bench_conv_delta_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    cd_priv *p = x->priv;
    if (p->b2b)
        return run_b2b(x, &p->conv[3 * rot], p->n_conv, &p->rec[rot], p->kda, s);
    return bench_impl_rc(x, x->im->conv_delta(&p->p[rot], x->tune, s));
}

/*
 * Sub-batch of the sampled rows on layer 0, run as the variant runs (fused op, or the split
 * through a scratch of the sub-batch), against ls_ref_conv_delta: o, both final states and both
 * sets of intermediate windows / states.
 */
static int bench_conv_delta_verify(bench_ctx *x, double *max_rel_err)
{
    cd_priv *p = x->priv;
    const ls_conv_delta_params *base = &p->p[0];
    const ls_conv_params *bc = &base->conv;
    const ls_delta_params *bd = &base->delta;
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows), T = p->T;
    int32_t *dslots, *compact, *hslots = bench_sub_slots(x, rows, n, &dslots, &compact);
    if (!hslots)
        return -1;
    const size_t HV = (size_t)bd->heads_v, V = (size_t)bd->dv, ng = p->kda ? HV * (size_t)bd->dk : HV;
    const size_t item = HV * (size_t)bd->dk * V, citem = (size_t)p->C * (size_t)(bc->width - 1);
    ls_conv_delta_params dp = *base, hp = *base;
    void *xd, *ad, *bdev, *od;
    hp.conv.x = bench_gather(x, p->x_h, (size_t)T * p->C * 2, rows, n, &xd);
    hp.delta.a = bench_gather(x, p->a_h, (size_t)T * ng * 2, rows, n, &ad);
    hp.delta.b = bench_gather(x, p->b_h, (size_t)T * HV * 2, rows, n, &bdev);
    hp.delta.o = bench_output_pair(x, (size_t)n * T * HV * V, LS_BF16, &od);
    bench_state_gate g[2] = {
        {bc->state, bc->state_stride_slot, bc->inter, bc->inter_stride_slot, citem, T, bc->state_dtype, hslots, n,
         NULL, NULL},
        {bd->state, bd->state_stride_slot, bd->inter, bd->inter_stride_slot, item, T, bd->state_dtype, hslots, n,
         NULL, NULL},
    };
    if (bench_state_gate_begin(x, &g[0]) != 0 || bench_state_gate_begin(x, &g[1]) != 0 || !hp.conv.x ||
        !hp.delta.a || !hp.delta.b || !hp.delta.o)
        return -1;
    hp.conv.state = g[0].ref;
    hp.delta.state = g[1].ref;
    hp.conv.batch = hp.delta.batch = dp.conv.batch = dp.delta.batch = n;
    hp.conv.weight = p->w_h;
    hp.conv.bias = p->bias_h;
    hp.conv.state_stride_slot = (int64_t)citem;
    hp.conv.inter = g[0].inter_ref;
    hp.conv.inter_stride_slot = (int64_t)(citem * T);
    hp.conv.slot_idx = hp.delta.slot_idx = compact;
    hp.delta.A_log = p->A_log_h;
    hp.delta.dt_bias = p->dt_bias_h;
    hp.delta.state_stride_slot = (int64_t)item;
    hp.delta.inter = g[1].inter_ref;
    hp.delta.inter_stride_slot = (int64_t)(item * T);
    dp.conv.x = xd;
    dp.delta.a = ad;
    dp.delta.b = bdev;
    dp.delta.o = od;
    dp.conv.slot_idx = dp.delta.slot_idx = dslots;
    int rc;
    if (p->b2b) {
        ls_conv_params conv[3];
        ls_delta_params rec;
        int n_conv;
        uint16_t *qkv = bench_dev_alloc(x, (size_t)n * T * p->C * 2);
        if (!qkv || ls_conv_delta_split(&dp, qkv, (x->im->caps & LS_IMPL_QKV_STRIDES) != 0, conv, &n_conv, &rec))
            return -1;
        rc = run_b2b(x, conv, n_conv, &rec, p->kda, NULL);
    } else {
        rc = bench_impl_rc(x, x->im->conv_delta(&dp, x->tune, NULL));
    }
    if (rc != 0 || x->be->sync(NULL) != 0 || ls_ref_conv_delta(&hp) != 0)
        return -1;
    return bench_verify_kernel(x, od, hp.delta.o, (size_t)n * T * HV * V, g, 2, max_rel_err);
}

static const void *bench_conv_delta_launch(const bench_ctx *x, ls_op *op)
{
    const cd_priv *p = x->priv;
    if (!p || !p->p)
        return NULL;
    if (p->b2b) { /* the first of the launches: the conv */
        *op = LS_OP_CONV_UPDATE;
        return &p->conv[0];
    }
    *op = LS_OP_CONV_DELTA;
    return &p->p[0];
}

/* clang-format off */
static const bench_entry rows[] = { /* bench_entry (bench.h) */
    /* conv update of the packed q|k|v channels + the recurrence: one fused op ... */
    {"conv_delta", "decode", "one-kernel", 1, GDN | KDA, B_ | D_ | G_, BENCH_DRAFT_DECODE,
     bench_conv_delta_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     BENCH_OP(LS_OP_CONV_DELTA), bench_conv_delta_launch},
    {"conv_delta", "verify", "one-kernel", 1, GDN | KDA, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_conv_delta_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     BENCH_OP(LS_OP_CONV_DELTA), bench_conv_delta_launch},
    /* ... or the impl's conv_update then gdn / kda, timed as one call (same key, same bytes) */
    {"conv_delta", "decode", "back-to-back", 0, GDN, B_ | D_ | G_, BENCH_DRAFT_DECODE,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_GDN), bench_conv_delta_launch},
    {"conv_delta", "decode", "back-to-back", 0, KDA, B_ | D_ | G_, BENCH_DRAFT_DECODE,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_KDA), bench_conv_delta_launch},
    {"conv_delta", "verify", "back-to-back", 0, GDN, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_GDN), bench_conv_delta_launch},
    {"conv_delta", "verify", "back-to-back", 0, KDA, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_KDA), bench_conv_delta_launch},
};
/* clang-format on */

const bench_family bench_family_conv_delta = {rows, (int)(sizeof rows / sizeof rows[0])};
