/*
 * conv.c — the conv1d_update family: causal depthwise conv update over the pool's conv state
 * (docs/ops.md), decode (T = 1) and verify (T draft tokens, intermediate windows written into the
 * speculative buffers, the state shifted by T).
 *
 * One call = every conv launch of one layer; launches rotate over layers. Variants (registry.c):
 *   causal_silu (Mamba2), 3-buffer (KDA), in-place (GDN verify) — the pool's own conv tensors,
 *     updated in place: 1 tensor for Mamba2/GDN ([C, W-1], window innermost), 3 for KDA (q, k, v;
 *     [W-1, C], channel innermost, fp32 weights), one launch each;
 *   concat (KDA) — q, k, v as ONE window-major tensor of 3C channels (a user-built descriptor
 *     with n_conv = 1, same bytes per slot; LATE's layout, docs/csv.md), one launch;
 *   clone (GDN verify, AFTER, docs/csv.md) — before the conv, the whole layer buffer
 *     [S+1, C, W-1] is copied (be->copy_d2d) into a clone and the conv runs on the clone, so the
 *     real state is untouched; both the copy and the conv are timed. One clone buffer serves every
 *     rotated layer, as PyTorch's caching allocator hands the freed block back each layer.
 * Pools hold the case's capacity (bench_case_capacity: --pool-slots, else the serving pool, e.g.
 * max(48, B) for verify, docs/pool.md's S = 48 for Qwen3-Next + NEXTN at tp 2, which sets the
 * clone's size); each call touches B random slots of it, its own set per rotated layer. Bytes (docs/bytes.md) are the same minimum
 * for every variant of a case — the clone's extra traffic is not counted and concat's single read
 * of the slot indices is ignored — so GB/s compares like with like.
 * Every rotated layer has its own inputs x, output y, weights and bias, as in a real forward pass
 * (docs/timing.md "Setup"); they count in the rotation's memory budget. Verification runs on
 * layer 0.
 * Case key dtype = the conv state dtype (bf16); the pool's SSM buffers are unused here and kept
 * bf16 to waste less memory.
 */
#include <string.h>

#include "family.h"


/* How a case's conv launches use the pool (the registry row's variant). */
typedef enum conv_mode { CONV_POOL = 0, CONV_CONCAT = 1, CONV_CLONE = 2 } conv_mode;

typedef struct conv_priv {
    conv_mode mode;
    int n_conv, T, B;
    ls_dtype wdt;
    uint16_t *x_host[LS_MAX_CONV];
    void *w_host[LS_MAX_CONV], *bias_host[LS_MAX_CONV];
    ls_conv_params *p; /* [n_rot][n_conv]: per-layer pointers resolved at setup */
    void **real;       /* clone: [n_rot][n_conv] the pool layer buffers the clone copies; else NULL */
    int64_t clone_bytes[LS_MAX_CONV]; /* clone: bytes of one layer buffer [S+1, C, W-1] */
} conv_priv;

/* Bytes: docs/bytes.md per conv tensor of the model's own descriptor (3 for KDA), whatever the variant. */
static int64_t bench_conv_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    ls_state_desc d;
    if (ls_state_desc_from_shape(&c->shape, LS_BF16, c->tokens > 1 ? c->tokens : 0, &d) != 0)
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

int bench_conv_concat_desc(ls_state_desc *d)
{
    int32_t channels = 0;
    for (int i = 0; i < d->n_conv; i++) {
        if (d->conv[i].orient != d->conv[0].orient || d->conv[i].window != d->conv[0].window)
            return ls_fail("bench: concat: conv tensor %d differs from tensor 0 in orientation or window", i);
        channels += d->conv[i].channels;
    }
    d->conv[0].channels = channels;
    d->n_conv = 1;
    return 0;
}

/* Bytes one rotated layer holds besides its pool share: per conv tensor x and y (bf16
 * [B, T, C]), weights [C, W] and bias [C]. */
static int64_t conv_layer_inputs(const bench_case *c, const ls_state_desc *d)
{
    int64_t b = 0, wes = (int64_t)ls_dtype_size(c->model->conv_weight_dtype);
    for (int i = 0; i < d->n_conv; i++) {
        int64_t C = d->conv[i].channels;
        b += 2 * (int64_t)c->batch * c->tokens * C * 2 + C * c->shape.conv_width * wes + (c->model->conv_bias ? C * wes : 0);
    }
    return b;
}

/* Launch params of conv tensor i on every rotated layer, each with its own x, y, weights, bias. */
static int setup_tensor(bench_ctx *x, conv_priv *p, const ls_state_desc *d, int i)
{
    const bench_case *c = x->c;
    const ls_conv_shape *cs = &d->conv[i];
    int B = p->B, T = p->T, C = cs->channels, W = c->shape.conv_width, n_rot = x->n_rot;
    size_t n_x = (size_t)B * T * C, wes = ls_dtype_size(p->wdt);
    void *xh = NULL;
    uint16_t *xd = bench_dev_rand_layers(x, n_rot, n_x, LS_BF16, -1.0, 1.0, &xh);
    p->x_host[i] = xh;
    uint16_t *yd = bench_dev_alloc(x, n_x * 2 * (size_t)n_rot);
    char *wd = bench_dev_rand_layers(x, n_rot, (size_t)C * W, p->wdt, -0.5, 0.5, &p->w_host[i]);
    if (!xd || !yd || !wd)
        return -1;
    char *bd = NULL;
    void *clone = NULL;
    if (c->model->conv_bias && !(bd = bench_dev_rand_layers(x, n_rot, (size_t)C, p->wdt, -0.5, 0.5, &p->bias_host[i])))
        return -1;
    if (p->mode == CONV_CLONE) {
        p->clone_bytes[i] = (int64_t)ls_pool_slots(x->pool) * ls_conv_item_bytes(d, i);
        if (!(clone = bench_dev_alloc(x, (size_t)p->clone_bytes[i])))
            return -1;
    }
    int64_t sc, sw, item = (int64_t)C * cs->window;
    state_strides(cs, &sc, &sw);
    for (int l = 0; l < n_rot; l++) {
        ls_conv_params *q = &p->p[l * p->n_conv + i];
        memset(q, 0, sizeof *q);
        q->batch = B;
        q->tokens = T;
        q->channels = C;
        q->width = W;
        q->silu = 1;
        q->disable_state_update = 0;
        q->weight_dtype = p->wdt;
        q->state_dtype = d->conv_dtype;
        q->x = xd + (size_t)l * n_x;
        q->x_stride_b = (int64_t)T * C;
        q->x_stride_t = C;
        q->x_stride_c = 1;
        q->y = yd + (size_t)l * n_x;
        q->y_stride_b = (int64_t)T * C;
        q->y_stride_t = C;
        q->y_stride_c = 1;
        q->weight = wd + (size_t)l * C * W * wes;
        q->bias = bd ? bd + (size_t)l * C * wes : NULL;
        q->state = clone ? clone : ls_pool_conv(x->pool, i, l);
        if (clone)
            p->real[l * p->n_conv + i] = ls_pool_conv(x->pool, i, l);
        q->state_stride_slot = item;
        q->state_stride_c = sc;
        q->state_stride_w = sw;
        q->slot_idx = bench_layer_slots(x, l);
        q->slots = ls_pool_slots(x->pool); /* the view's slot count: lets a backend guess early */
        if (T > 1) {
            q->inter = ls_pool_spec_conv(x->pool, i, l); /* the real spec buffer, also for the clone */
            q->inter_stride_slot = item * T;
            q->inter_stride_t = item;
            q->inter_stride_c = sc;
            q->inter_stride_w = sw;
        }
    }
    return 0;
}

/* Pool (descriptor per mode, capacity per bench_case_capacity), slots, and every tensor's params. */
static int conv_setup(bench_ctx *x, conv_mode mode)
{
    const bench_case *c = x->c;
    int T = c->tokens, B = c->batch, spec = T > 1 ? T : 0, rc;
    int32_t S = bench_case_capacity(c, x->env);
    ls_state_desc d;
    if (ls_state_desc_from_shape(&c->shape, LS_BF16, spec, &d) != 0 || (mode == CONV_CONCAT && bench_conv_concat_desc(&d) != 0))
        return -1;
    if ((rc = bench_kernel_setup(x, &d, S, conv_layer_inputs(c, &d), 1, sizeof(conv_priv))) != 0)
        return rc;
    const int n_rot = x->n_rot;
    conv_priv *p = x->priv;
    p->mode = mode;
    p->n_conv = d.n_conv;
    p->T = T;
    p->B = B;
    p->wdt = c->model->conv_weight_dtype;
    p->p = bench_host_alloc(x, sizeof *p->p * (size_t)(n_rot * d.n_conv));
    if (!p->p || (mode == CONV_CLONE && !(p->real = bench_host_alloc(x, sizeof *p->real * (size_t)(n_rot * d.n_conv)))))
        return -1;
    for (int i = 0; i < d.n_conv; i++)
        if (setup_tensor(x, p, &d, i) != 0)
            return -1;
    return 0;
}

static int bench_conv_setup(bench_ctx *x)
{
    return conv_setup(x, CONV_POOL);
}

static int bench_conv_concat_setup(bench_ctx *x)
{
    return conv_setup(x, CONV_CONCAT);
}

static int bench_conv_clone_setup(bench_ctx *x)
{
    return conv_setup(x, CONV_CLONE);
}

/* One conv tensor as the variant runs it: with `real` (clone), first copy the whole layer buffer
 * into q->state (the clone), then the conv on the clone. */
static int launch(bench_ctx *x, const ls_conv_params *q, const void *real, int64_t clone_bytes, ls_stream s)
{
    if (real && x->be->copy_d2d(q->state, real, (size_t)clone_bytes, s) != 0)
        return -1;
    return bench_impl_rc(x, x->im->conv_update(q, x->tune, s));
}

static int bench_conv_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    conv_priv *p = x->priv;
    for (int i = 0; i < p->n_conv; i++) {
        int k = rot * p->n_conv + i;
        if (launch(x, &p->p[k], p->real ? p->real[k] : NULL, p->clone_bytes[i], s) != 0)
            return -1;
    }
    return 0;
}

int bench_conv_layer_params(const bench_ctx *x, int layer, const ls_conv_params **out)
{
    const conv_priv *p = x->priv;
    if (!p || layer < 0 || layer >= x->n_rot)
        return 0;
    *out = &p->p[layer * p->n_conv];
    return p->n_conv;
}

/* Host copy of n bytes (arena). */
static void *host_dup(bench_ctx *x, const void *src, size_t n)
{
    void *h = bench_host_alloc(x, n);
    if (h)
        memcpy(h, src, n);
    return h;
}

/*
 * Sub-batch of the sampled rows on layer 0, backend vs ls_ref_conv_update, for each conv tensor:
 * output, updated state and intermediate windows. The clone variant runs exactly as timed (clone
 * poisoned first, so a missing copy shows as NaN): the updated state is checked in the clone, and
 * the real pool state of the sampled slots must still hold the seeded values.
 */
static int bench_conv_verify(bench_ctx *x, double *max_rel_err)
{
    conv_priv *p = x->priv;
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows);
    int32_t *dslots, *compact, *hslots = bench_sub_slots(x, rows, n, &dslots, &compact);
    if (!hslots)
        return -1;
    *max_rel_err = 0;
    for (int i = 0; i < p->n_conv; i++) {
        const ls_conv_params *base = &p->p[i];
        void *real = p->real ? p->real[i] : base->state;
        int T = p->T, C = base->channels;
        size_t item = (size_t)C * (size_t)(base->width - 1), es = ls_dtype_size(base->state_dtype);
        ls_dtype sdt = base->state_dtype;
        void *xd, *yd, *untouched = NULL;
        uint16_t *xh = bench_gather(x, p->x_host[i], (size_t)T * C * 2, rows, n, &xd);
        uint16_t *yh = bench_output_pair(x, (size_t)n * T * C, LS_BF16, &yd);
        /* seeded in the real state; the update is checked where it lands (the clone, if any) */
        bench_state_gate g = {real, (int64_t)item, base->inter, base->inter_stride_slot, item, T, sdt, hslots, n,
                              NULL, NULL};
        if (bench_state_gate_begin(x, &g) != 0 || !xh || !yh)
            return -1;
        g.state = base->state;
        if (p->real && (!(untouched = host_dup(x, g.ref, item * es * (size_t)n)) ||
                        bench_poison(x, base->state, (size_t)p->clone_bytes[i] / es, sdt) != 0))
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
        hp.state = g.ref;
        hp.slot_idx = compact;
        hp.inter = g.inter_ref;
        if (launch(x, &dp, p->real ? real : NULL, p->clone_bytes[i], NULL) != 0 || x->be->sync(NULL) != 0 ||
            ls_ref_conv_update(&hp) != 0)
            return -1;
        if (bench_output_check(x, yd, yh, (size_t)n * T * C, LS_BF16, max_rel_err) != 0 ||
            bench_state_gate_check(x, &g, max_rel_err) != 0)
            return -1;
        if (untouched && bench_state_check(x, real, (int64_t)item, item, sdt, hslots, n, untouched, max_rel_err) != 0)
            return -1;
    }
    return 0;
}

static const void *bench_conv_launch(const bench_ctx *x, ls_op *op)
{
    const ls_conv_params *q;
    *op = LS_OP_CONV_UPDATE;
    return bench_conv_layer_params(x, 0, &q) > 0 ? (const void *)q : NULL;
}

/* clang-format off */
static const bench_entry rows[] = { /* bench_entry (bench.h) */
    {"conv1d_update", "decode", "causal_silu", 1, MAMBA2 | GDN, B_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* KDA: q, k, v as three window-major tensors, three launches (AFTER) ... */
    {"conv1d_update", "decode", "3-buffer", 1, KDA, B_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* ... or one window-major tensor of 3C channels, one launch (LATE, docs/csv.md) */
    {"conv1d_update", "decode", "concat", 0, KDA, B_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_conv_concat_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"conv1d_update", "verify", "causal_silu", 1, MAMBA2, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* GDN: on the real state (after #13603) ... */
    {"conv1d_update", "verify", "in-place", 1, GDN, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* ... or on a clone of the whole layer buffer (AFTER, docs/csv.md) */
    {"conv1d_update", "verify", "clone", 0, GDN, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_clone_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"conv1d_update", "verify", "3-buffer", 1, KDA, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"conv1d_update", "verify", "concat", 0, KDA, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_concat_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
};
/* clang-format on */

const bench_family bench_family_conv = {rows, (int)(sizeof rows / sizeof rows[0])};
