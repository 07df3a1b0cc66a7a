/*
 * conv.c — the conv1d_update family: causal depthwise conv update over the pool's conv state
 * (SPEC §2.1), decode (T = 1) and verify (T draft tokens, intermediate windows written into the
 * speculative buffers; the state is shifted by T as HEAD-fork does after #13603, no clone).
 *
 * One call = every conv tensor of one layer: 1 for Mamba2/GDN ([C, W-1], window innermost), 3
 * for KDA (q, k, v; [W-1, C], channel innermost, fp32 weights). Launches rotate over layers.
 * Weights are shared by the rotated layers (C·W elements: negligible next to the state).
 * Case key dtype = the conv state dtype (bf16); the pool's SSM buffers are unused here and kept
 * bf16 to waste less memory.
 */
#include <string.h>

#include "bench.h"

typedef struct conv_priv {
    int n_conv, T, B;
    ls_dtype wdt;
    uint16_t *x_host[LS_MAX_CONV];
    void *w_host[LS_MAX_CONV], *bias_host[LS_MAX_CONV];
    ls_conv_params *p; /* [n_rot][n_conv]: per-layer pointers resolved at setup */
} conv_priv;

static int conv_desc(const bench_ctx *x, ls_state_desc *d)
{
    if (x->pool) {
        *d = *ls_pool_desc(x->pool);
        return 0;
    }
    return ls_state_desc_from_shape(&x->c->shape, LS_BF16, x->c->tokens > 1 ? x->c->tokens : 0, d);
}

int64_t bench_conv_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    ls_state_desc d;
    if (conv_desc(x, &d) != 0)
        return 0;
    int64_t b = 0;
    for (int i = 0; i < d.n_conv; i++)
        b += ls_bytes_conv_update(c->batch, c->tokens, d.conv[i].channels, c->shape.conv_width, 2,
                                  (int64_t)ls_dtype_size(d.conv_dtype),
                                  (int64_t)ls_dtype_size(c->model->conv_weight_dtype), c->model->conv_bias,
                                  c->tokens > 1);
    return b;
}

/* Strides of one conv tensor's state view [slots, C, W-1] in the pool orientation. */
static void state_strides(const ls_conv_shape *cs, int64_t *sc, int64_t *sw)
{
    if (cs->orient == LS_CONV_CHANNEL_MAJOR) {
        *sc = cs->window;
        *sw = 1;
    } else {
        *sc = 1;
        *sw = cs->channels;
    }
}

int bench_conv_setup(bench_ctx *x)
{
    const bench_case *c = x->c;
    int T = c->tokens, B = c->batch, spec = T > 1 ? T : 0, rc;
    ls_state_desc d;
    if (conv_desc(x, &d) != 0)
        return -1;
    int64_t layer_pool = (int64_t)(B + 1) * ls_layer_bytes(&d) * (1 + spec);
    int n_rot = bench_rotation_layers(x, bench_conv_bytes(x), layer_pool);
    if (n_rot == 0)
        return BENCH_OOM;
    if ((rc = bench_pool_create(x, n_rot, LS_BF16, spec, B, LS_ZERO_AT_FREE)) != 0)
        return rc;
    x->n_rot = x->rotated = n_rot;
    if (bench_take_slots(x, B) != 0)
        return -1;

    conv_priv *p = bench_host_alloc(x, sizeof *p);
    if (!p)
        return -1;
    x->priv = p;
    p->n_conv = d.n_conv;
    p->T = T;
    p->B = B;
    p->wdt = c->model->conv_weight_dtype;
    p->p = bench_host_alloc(x, sizeof *p->p * (size_t)(n_rot * d.n_conv));
    if (!p->p)
        return -1;
    for (int i = 0; i < d.n_conv; i++) {
        const ls_conv_shape *cs = &d.conv[i];
        int C = cs->channels, W = c->shape.conv_width;
        uint16_t *xd = bench_dev_rand_bf16(x, (size_t)B * T * C, -1.0, 1.0, &p->x_host[i]);
        uint16_t *yd = bench_dev_alloc(x, (size_t)B * T * C * 2);
        void *wd = bench_dev_alloc(x, (size_t)C * W * ls_dtype_size(p->wdt));
        p->w_host[i] = bench_host_rand(x, (size_t)C * W, p->wdt, -0.5, 0.5);
        if (!xd || !yd || !wd || !p->w_host[i] ||
            x->be->copy_h2d(wd, p->w_host[i], (size_t)C * W * ls_dtype_size(p->wdt)) != 0)
            return -1;
        void *bd = NULL;
        if (c->model->conv_bias) {
            bd = bench_dev_alloc(x, (size_t)C * ls_dtype_size(p->wdt));
            p->bias_host[i] = bench_host_rand(x, (size_t)C, p->wdt, -0.5, 0.5);
            if (!bd || !p->bias_host[i] ||
                x->be->copy_h2d(bd, p->bias_host[i], (size_t)C * ls_dtype_size(p->wdt)) != 0)
                return -1;
        }
        int64_t sc, sw, item = (int64_t)C * cs->window;
        state_strides(cs, &sc, &sw);
        for (int l = 0; l < n_rot; l++) {
            ls_conv_params *q = &p->p[l * d.n_conv + i];
            memset(q, 0, sizeof *q);
            q->batch = B;
            q->tokens = T;
            q->channels = C;
            q->width = W;
            q->silu = 1;
            q->disable_state_update = 0;
            q->weight_dtype = p->wdt;
            q->state_dtype = d.conv_dtype;
            q->x = xd;
            q->x_stride_b = (int64_t)T * C;
            q->x_stride_t = C;
            q->x_stride_c = 1;
            q->y = yd;
            q->y_stride_b = (int64_t)T * C;
            q->y_stride_t = C;
            q->y_stride_c = 1;
            q->weight = wd;
            q->bias = bd;
            q->state = ls_pool_conv(x->pool, i, l);
            q->state_stride_slot = item;
            q->state_stride_c = sc;
            q->state_stride_w = sw;
            q->slot_idx = x->slots_dev;
            if (spec) {
                q->inter = ls_pool_spec_conv(x->pool, i, l);
                q->inter_stride_slot = item * T;
                q->inter_stride_t = item;
                q->inter_stride_c = sc;
                q->inter_stride_w = sw;
            }
        }
    }
    return 0;
}

int bench_conv_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    conv_priv *p = x->priv;
    for (int i = 0; i < p->n_conv; i++)
        if (x->be->conv_update(&p->p[rot * p->n_conv + i], s) != 0)
            return -1;
    return 0;
}

/* Sub-batch of the sampled rows on layer 0, backend vs ls_ref_conv_update, for each conv tensor. */
int bench_conv_verify(bench_ctx *x, double *max_rel_err)
{
    conv_priv *p = x->priv;
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows);
    int32_t *dslots, *compact, *hslots = bench_sub_slots(x, rows, n, &dslots, &compact);
    if (!hslots)
        return -1;
    *max_rel_err = 0;
    for (int i = 0; i < p->n_conv; i++) {
        const ls_conv_params *base = &p->p[i];
        int T = p->T, C = base->channels;
        size_t item = (size_t)C * (size_t)(base->width - 1);
        ls_dtype sdt = base->state_dtype;
        void *xd, *yd, *inter_ref = NULL;
        uint16_t *xh = bench_gather(x, p->x_host[i], (size_t)T * C * 2, rows, n, &xd);
        uint16_t *yh = bench_output_pair(x, (size_t)n * T * C, LS_BF16, &yd);
        void *state_ref = bench_state_seed(x, base->state, (int64_t)item, item, sdt, hslots, n);
        if (!xh || !yh || !state_ref)
            return -1;
        if (base->inter &&
            !(inter_ref = bench_state_poison(x, base->inter, base->inter_stride_slot, item * T, sdt, hslots, n)))
            return -1;
        ls_conv_params dp = *base, hp = *base;
        dp.batch = hp.batch = n;
        dp.x = xd;
        dp.y = yd;
        dp.slot_idx = dslots;
        hp.x = xh;
        hp.y = yh;
        hp.weight = p->w_host[i];
        hp.bias = p->bias_host[i];
        hp.state = state_ref;
        hp.slot_idx = compact;
        hp.inter = inter_ref;
        if (x->be->conv_update(&dp, NULL) != 0 || x->be->sync(NULL) != 0 || ls_ref_conv_update(&hp) != 0)
            return -1;
        if (bench_output_check(x, yd, yh, (size_t)n * T * C, LS_BF16, max_rel_err) != 0 ||
            bench_state_check(x, base->state, (int64_t)item, item, sdt, hslots, n, state_ref, max_rel_err) != 0)
            return -1;
        if (base->inter && bench_state_check(x, base->inter, base->inter_stride_slot, item * T, sdt, hslots, n,
                                             inter_ref, max_rel_err) != 0)
            return -1;
    }
    return 0;
}
