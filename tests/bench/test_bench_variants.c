/*
 * test_bench_variants.c — what the variants of linstate-bench claim, on the host backend (whose
 * memory is host memory, so the test reads the pool directly):
 *   - pool copy/accept "per-tensor" leaves the pool exactly as "fused" does (same case, same seed);
 *   - KDA conv "concat" (one 3C-channel tensor) computes exactly what "3-buffer" (three tensors)
 *     computes, given the same inputs, weights and states;
 *   - GDN conv verify "clone" leaves the real pool conv state untouched, "in-place" shifts the
 *     batch's slots (and only those);
 *   - every pool buffer (main and spec, every layer) is random and non-zero after setup;
 *   - every rotated layer has its own inputs, outputs and weights (one input policy), and they
 *     count in the rotation's memory budget;
 *   - pool copy/accept rotate over disjoint slot sets (bench_rotation_sets), launch r writing set
 *     r's destination slots and nothing else;
 *   - a pool path's pool has the same layers under every cache regime (its one call is the case).
 * The verification gate of every variant is tested in test_bench_verify.c.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_testutil.h"

static const int64_t budget = (int64_t)1 << 30;

static bt_case setup_ok(const char *family, const char *model, int batch, int draft, const char *variant)
{
    bt_case t;
    bt_setup(&t, ls_runtime_host(), family, model, batch, draft, LS_F32, variant, budget);
    LS_REQUIRE(t.setup_rc == 0);
    return t;
}

/* Bytes of buffer b's main (spec = 0) or spec (spec = 1) extent over every layer and slot. */
static int64_t extent(const ls_state_params *sp, int b, int spec)
{
    return (int64_t)sp->layers * sp->slots * sp->buf[b].item_bytes * (spec ? sp->spec_tokens : 1);
}

/* 1 if n bytes at p are all zero. */
static int all_zero(const void *p, int64_t n)
{
    const unsigned char *c = p;
    for (int64_t i = 0; i < n; i++)
        if (c[i])
            return 0;
    return 1;
}

/* Main buffers of two pools with the same layout are byte-identical. */
static int same_pools(const ls_pool *a, const ls_pool *b)
{
    ls_state_params pa, pb;
    ls_pool_state_params(a, &pa);
    ls_pool_state_params(b, &pb);
    if (pa.n_buffers != pb.n_buffers || pa.layers != pb.layers || pa.slots != pb.slots)
        return 0;
    for (int i = 0; i < pa.n_buffers; i++)
        if (memcmp(pa.buf[i].main, pb.buf[i].main, (size_t)extent(&pa, i, 0)) != 0)
            return 0;
    return 1;
}

/*
 * per-tensor == fused: both cases of one key start from the same pool (same seed, same random
 * fill, same slots and steps); after one call each, every main buffer is byte-identical — and
 * the call did change the pool (not a vacuous pass).
 */
static void per_tensor_equals_fused(void)
{
    static const struct {
        const char *family, *model;
        int draft;
    } cases[] = {
        {"pool/copy", "qwen3-next-80b-a3b", 1},   {"pool/copy", "kimi-linear-48b-a3b", 1},
        {"pool/accept", "kimi-linear-48b-a3b", 4}, {"pool/accept", "nemotron-h-8b", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bt_case f = setup_ok(cases[i].family, cases[i].model, 6, cases[i].draft, "fused");
        bt_case p = setup_ok(cases[i].family, cases[i].model, 6, cases[i].draft, "per-tensor");
        LS_CHECK(same_pools(f.x.pool, p.x.pool)); /* identical before the op */
        ls_state_params sp;
        ls_pool_state_params(f.x.pool, &sp);
        int64_t bytes0 = extent(&sp, 0, 0);
        char *before = malloc((size_t)bytes0);
        LS_REQUIRE(before);
        memcpy(before, sp.buf[0].main, (size_t)bytes0);
        LS_CHECK_EQ_INT(f.c->e->run(&f.x, 0, NULL), 0);
        LS_CHECK_EQ_INT(p.c->e->run(&p.x, 0, NULL), 0);
        LS_CHECK(memcmp(before, sp.buf[0].main, (size_t)bytes0) != 0); /* the op moved data */
        LS_CHECK(same_pools(f.x.pool, p.x.pool));
        free(before);
        bt_release(&f);
        bt_release(&p);
    }
}

/* Copies channel slice [c0, c0 + C) of a (b, t) row array between layouts of width Cs and Cd. */
static void copy_channels(char *dst, int64_t dst_row, const char *src, int64_t src_row, int64_t rows, int64_t C,
                          size_t es)
{
    for (int64_t r = 0; r < rows; r++)
        memcpy(dst + (size_t)(r * dst_row) * es, src + (size_t)(r * src_row) * es, (size_t)C * es);
}

/*
 * concat == three convs: the concat case's inputs, weights and layer-0 states (all slots, and
 * the spec windows) are overwritten with the 3-buffer case's, tensor i in channels [iC, (i+1)C);
 * after one call each, y, the states and the intermediate windows agree exactly, slice by slice.
 */
static void concat_equals_three(int draft)
{
    bt_case a = setup_ok("conv1d_update", "kimi-linear-48b-a3b", 5, draft, "3-buffer");
    bt_case c = setup_ok("conv1d_update", "kimi-linear-48b-a3b", 5, draft, "concat");
    const ls_conv_params *pa, *pc;
    int na = bench_conv_layer_params(&a.x, 0, &pa), nc = bench_conv_layer_params(&c.x, 0, &pc);
    LS_REQUIRE(na == 3 && nc == 1);
    const int C = pa[0].channels, C3 = pc[0].channels, W = pa[0].width, T = pa[0].tokens, B = pa[0].batch;
    LS_CHECK_EQ_INT(C3, 3 * C);
    LS_CHECK(pc[0].state_stride_c == 1 && pc[0].state_stride_w == C3); /* window-major */
    LS_CHECK_EQ_INT(ls_layer_bytes(ls_pool_desc(a.x.pool)), ls_layer_bytes(ls_pool_desc(c.x.pool)));
    int32_t slots = ls_pool_slots(c.x.pool);
    LS_REQUIRE(slots == ls_pool_slots(a.x.pool));
    /* same slot order in both (same seed): the batch rows address the same slots */
    LS_CHECK(memcmp(a.x.slots, c.x.slots, sizeof(int32_t) * (size_t)B) == 0);
    size_t wes = ls_dtype_size(pa[0].weight_dtype), ses = ls_dtype_size(pa[0].state_dtype);
    for (int i = 0; i < 3; i++) {
        copy_channels((char *)pc[0].x + (size_t)i * C * 2, C3, (const char *)pa[i].x, C, (int64_t)B * T, C, 2);
        memcpy((char *)pc[0].weight + (size_t)i * C * W * wes, pa[i].weight, (size_t)C * W * wes);
        /* window-major states [slot][w][c]: rows of (slot, w) */
        copy_channels((char *)pc[0].state + (size_t)i * C * ses, C3, (const char *)pa[i].state, C,
                      (int64_t)slots * (W - 1), C, ses);
        if (T > 1)
            copy_channels((char *)pc[0].inter + (size_t)i * C * ses, C3, (const char *)pa[i].inter, C,
                          (int64_t)slots * T * (W - 1), C, ses);
    }
    LS_CHECK_EQ_INT(a.c->e->run(&a.x, 0, NULL), 0);
    LS_CHECK_EQ_INT(c.c->e->run(&c.x, 0, NULL), 0);
    int y_ok = 1, s_ok = 1, w_ok = 1;
    for (int i = 0; i < 3; i++)
        for (int64_t r = 0; r < (int64_t)B * T; r++)
            y_ok &= memcmp((const char *)pc[0].y + (size_t)(r * C3 + i * C) * 2,
                           (const char *)pa[i].y + (size_t)(r * C) * 2, (size_t)C * 2) == 0;
    for (int i = 0; i < 3; i++)
        for (int64_t r = 0; r < (int64_t)slots * (W - 1); r++)
            s_ok &= memcmp((const char *)pc[0].state + (size_t)(r * C3 + i * C) * ses,
                           (const char *)pa[i].state + (size_t)(r * C) * ses, (size_t)C * ses) == 0;
    if (T > 1)
        for (int i = 0; i < 3; i++)
            for (int64_t r = 0; r < (int64_t)slots * T * (W - 1); r++)
                w_ok &= memcmp((const char *)pc[0].inter + (size_t)(r * C3 + i * C) * ses,
                               (const char *)pa[i].inter + (size_t)(r * C) * ses, (size_t)C * ses) == 0;
    LS_CHECK(y_ok);
    LS_CHECK(s_ok);
    LS_CHECK(w_ok);
    bt_release(&a);
    bt_release(&c);
}

/*
 * clone vs in-place (GDN verify): with clone, the real layer-0 conv buffer is byte-identical
 * after a call; in place, every slot of the batch changed (shifted by T) and no other slot did.
 * Both pools hold max(48, B) + 1 slots.
 */
static void clone_leaves_state(void)
{
    for (int in_place = 0; in_place < 2; in_place++) {
        bt_case t = setup_ok("conv1d_update/verify", "qwen3-next-80b-a3b", 6, 4, in_place ? "in-place" : "clone");
        LS_CHECK_EQ_INT(ls_pool_slots(t.x.pool), 49);
        const ls_state_desc *d = ls_pool_desc(t.x.pool);
        int64_t item = ls_conv_item_bytes(d, 0), bytes = item * ls_pool_slots(t.x.pool);
        const char *real = ls_pool_conv(t.x.pool, 0, 0);
        char *before = malloc((size_t)bytes);
        LS_REQUIRE(before);
        memcpy(before, real, (size_t)bytes);
        LS_CHECK_EQ_INT(t.c->e->run(&t.x, 0, NULL), 0);
        if (!in_place) {
            LS_CHECK(memcmp(before, real, (size_t)bytes) == 0);
            const ls_conv_params *p;
            LS_REQUIRE(bench_conv_layer_params(&t.x, 0, &p) == 1);
            LS_CHECK(p->state != real); /* the conv ran on the clone, which did shift */
            LS_CHECK(memcmp(before + item * t.x.slots[0], (const char *)p->state + item * t.x.slots[0],
                            (size_t)item) != 0);
        } else {
            int changed = 0, others = 0;
            for (int32_t s = 0; s < ls_pool_slots(t.x.pool); s++) {
                int in_batch = 0;
                for (int r = 0; r < t.c->batch; r++)
                    in_batch |= t.x.slots[r] == s;
                int diff = memcmp(before + item * s, real + item * s, (size_t)item) != 0;
                changed += in_batch && diff;
                others += !in_batch && diff;
            }
            LS_CHECK_EQ_INT(changed, t.c->batch);
            LS_CHECK_EQ_INT(others, 0);
        }
        free(before);
        bt_release(&t);
    }
    /* B above 48: S = B */
    bt_case t = setup_ok("conv1d_update/verify", "qwen3-next-80b-a3b", 50, 2, "clone");
    LS_CHECK_EQ_INT(ls_pool_slots(t.x.pool), 51);
    bt_release(&t);
}

/*
 * Random fill: in every buffer (main and spec) of every layer, the items of the first, a middle
 * and the last (padding) slot are not all zero; nor are sampled spec steps.
 */
static void pools_not_zero(void)
{
    static const struct {
        const char *family, *model, *variant;
        int draft;
    } cases[] = {
        {"conv1d_update/verify", "kimi-linear-48b-a3b", "concat", 4},
        {"conv1d_update/verify", "qwen3-next-80b-a3b", "clone", 2},
        {"conv1d_update/decode", "nemotron-h-8b", NULL, 1},
        {"gdn/verify", "qwen3-next-80b-a3b", NULL, 3},
        {"kda/decode", "kimi-linear-48b-a3b", NULL, 1},
        {"mamba2_ssu/verify", "nemotron-h-8b", NULL, 2},
        {"pool/alloc", "qwen3-next-80b-a3b", NULL, 1},
        {"pool/accept", "kimi-linear-48b-a3b", "per-tensor", 4},
        {"pool/copy", "nemotron-h-8b", "fused", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bt_case t = setup_ok(cases[i].family, cases[i].model, 3, cases[i].draft, cases[i].variant);
        ls_state_params sp;
        ls_pool_state_params(t.x.pool, &sp);
        int zero = 0, checked = 0;
        int32_t probe[3] = {0, sp.slots / 2, sp.slots - 1};
        for (int b = 0; b < sp.n_buffers; b++)
            for (int l = 0; l < sp.layers; l++)
                for (int k = 0; k < 3; k++) {
                    int64_t item = sp.buf[b].item_bytes, row = (int64_t)l * sp.slots + probe[k];
                    zero += all_zero((const char *)sp.buf[b].main + row * item, item);
                    checked++;
                    for (int st = 0; sp.buf[b].spec && st < sp.spec_tokens; st++, checked++)
                        zero += all_zero((const char *)sp.buf[b].spec + (row * sp.spec_tokens + st) * item, item);
                }
        if (zero)
            fprintf(stderr, "%s: %d of %d probed items all zero\n", t.c->name, zero, checked);
        LS_CHECK_EQ_INT(zero, 0);
        LS_CHECK(checked >= 3 * 2);
        bt_release(&t);
    }
}

/* Two buffers of n bytes do not overlap, and their contents differ (when `differ`). */
static int own(const void *a, const void *b, size_t n, int differ)
{
    const char *x = a, *y = b;
    if (!a || !b || !(x + n <= y || y + n <= x))
        return 0;
    return !differ || memcmp(a, b, n) != 0;
}

/*
 * Layers 0 and 1 of a rotated case (the host budget rotates over 2) point at their own inputs,
 * outputs and weights, in disjoint memory with different random contents. For gdn, kda and
 * mamba2_ssu, the launch params of slot l follow slot 0's (one launch per rotated layer).
 */
static void layers_own_inputs(void)
{
    const ls_conv_params *c0, *c1;
    bt_case t = setup_ok("conv1d_update/decode", "qwen3-next-80b-a3b", 3, 1, NULL);
    LS_REQUIRE(t.x.n_rot == 2);
    LS_REQUIRE(bench_conv_layer_params(&t.x, 0, &c0) == 1 && bench_conv_layer_params(&t.x, 1, &c1) == 1);
    size_t nx = (size_t)c0->batch * c0->tokens * c0->channels * 2;
    size_t nw = (size_t)c0->channels * c0->width * ls_dtype_size(c0->weight_dtype);
    LS_CHECK(own(c0->x, c1->x, nx, 1) && own(c0->y, c1->y, nx, 0) && own(c0->weight, c1->weight, nw, 1));
    LS_CHECK(c0->bias == NULL || own(c0->bias, c1->bias, (size_t)c0->channels * ls_dtype_size(c0->weight_dtype), 1));
    bt_release(&t);

    static const char *const delta[][2] = {{"gdn/verify", "qwen3-next-80b-a3b"}, {"kda/decode", "kimi-linear-48b-a3b"}};
    for (int i = 0; i < 2; i++) {
        t = setup_ok(delta[i][0], delta[i][1], 3, i ? 1 : 2, NULL);
        LS_REQUIRE(t.x.n_rot == 2);
        ls_op op;
        const ls_delta_params *d = t.c->e->launch(&t.x, &op);
        LS_REQUIRE(d != NULL);
        size_t BT = (size_t)d->batch * d->tokens, nq = BT * d->heads_qk * d->dk * 2, nv = BT * d->heads_v * d->dv * 2;
        size_t ng = i ? (size_t)d->heads_v * d->dk : (size_t)d->heads_v;
        LS_CHECK(own(d[0].q, d[1].q, nq, 1) && own(d[0].k, d[1].k, nq, 1) && own(d[0].v, d[1].v, nv, 1));
        LS_CHECK(own(d[0].a, d[1].a, BT * ng * 2, 1) && own(d[0].b, d[1].b, BT * d->heads_v * 2, 1));
        LS_CHECK(own(d[0].o, d[1].o, nv, 0) && own(d[0].A_log, d[1].A_log, (size_t)d->heads_v * 4, 1));
        LS_CHECK(own(d[0].dt_bias, d[1].dt_bias, ng * (i ? 4 : 2), 1));
        bt_release(&t);
    }

    t = setup_ok("mamba2_ssu/verify", "nemotron-h-8b", 3, 2, NULL);
    LS_REQUIRE(t.x.n_rot == 2);
    ls_op op;
    const ls_ssu_params *m = t.c->e->launch(&t.x, &op);
    LS_REQUIRE(m != NULL);
    size_t mBT = (size_t)m->batch * m->tokens, mx = mBT * m->nheads * m->head_dim * 2, nbc = mBT * m->ngroups * m->dstate * 2;
    LS_CHECK(own(m[0].x, m[1].x, mx, 1) && own(m[0].y, m[1].y, mx, 0) && own(m[0].dt, m[1].dt, mBT * m->nheads * 2, 1));
    LS_CHECK(own(m[0].Bm, m[1].Bm, nbc, 1) && own(m[0].Cm, m[1].Cm, nbc, 1));
    LS_CHECK(own(m[0].A, m[1].A, (size_t)m->nheads * 4, 1) && own(m[0].D, m[1].D, (size_t)m->nheads * 2, 1));
    LS_CHECK(own(m[0].dt_bias, m[1].dt_bias, (size_t)m->nheads * 2, 1));
    bt_release(&t);

    /* The budget counts a layer's inputs: a budget that holds two layers' pool shares but not
     * also their inputs (~12 KB a layer here) rotates over one layer. */
    bt_setup(&t, ls_runtime_host(), "gdn/verify", "qwen3-next-80b-a3b", 1, 4, LS_F32, NULL, budget);
    LS_REQUIRE(t.setup_rc == 0 && t.x.n_rot == 2);
    ls_state_desc d;
    LS_REQUIRE(ls_state_desc_from_shape(&t.c->shape, LS_F32, 4, &d) == 0);
    /* (S + 1) slots of the serving pool (48 at T = 4), main + 4 spec */
    int64_t share = (int64_t)(bench_case_capacity(t.c, &t.env) + 1) * ls_layer_bytes(&d) * 5;
    LS_CHECK_EQ_INT(ls_pool_slots(t.x.pool), 49);
    bt_release(&t);
    bt_setup(&t, ls_runtime_host(), "gdn/verify", "qwen3-next-80b-a3b", 1, 4, LS_F32, NULL, 2 * share + 1024);
    LS_CHECK(t.setup_rc == 0 && t.x.n_rot == 1);
    bt_release(&t);
}

/* bench_rotation_sets: 8 x L2 over the call's bytes, capped by max_rot and the budget. */
static void rotation_sets_rule(void)
{
    bench_env env;
    memset(&env, 0, sizeof env);
    env.dev.l2_bytes = (int64_t)60 << 20;
    env.cache = LS_CACHE_ROTATE;
    env.budget_bytes = (int64_t)1 << 30;
    bench_ctx x;
    memset(&x, 0, sizeof x);
    x.env = &env;
    const int64_t MiB = (int64_t)1 << 20;
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 43 * MiB, 10 * MiB, 0), 12);   /* ceil(480 / 43) */
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 480 * MiB, 10 * MiB, 0), 1);   /* one call is 8 x L2 */
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 481 * MiB, 10 * MiB, 0), 1);
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 43 * MiB, 100 * MiB, 124 * MiB), 9); /* budget: 900 / 100 */
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 43 * MiB, 1100 * MiB, 0), 0);  /* one set does not fit */
    env.max_rot = 3;
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 43 * MiB, 10 * MiB, 0), 3);
    env.max_rot = 0;
    env.cache = LS_CACHE_FLUSH;
    LS_CHECK_EQ_INT(bench_rotation_sets(&x, 43 * MiB, 10 * MiB, 0), 1);
}

/* 1 if every layer's item of `slot` in main buffer b equals the snapshot `before`. */
static int slot_same(const ls_state_params *sp, int b, int32_t slot, const char *before)
{
    int64_t item = sp->buf[b].item_bytes;
    for (int l = 0; l < sp->layers; l++) {
        int64_t off = ((int64_t)l * sp->slots + slot) * item;
        if (memcmp((const char *)sp->buf[b].main + off, before + off, (size_t)item) != 0)
            return 0;
    }
    return 1;
}

/*
 * Pool copy and accept rotate over slot sets (the host cap: 2), each set's lists disjoint from
 * the others': launch 1 writes set 1's destination slots (every main buffer, every layer) and
 * leaves every other slot, set 0's included, as it was.
 */
static void pool_state_sets(void)
{
    static const struct {
        const char *family, *model, *variant;
        int draft, per_set, dst0; /* slots per set (B or 2B), first destination in a set */
    } cases[] = {
        {"pool/accept", "kimi-linear-48b-a3b", "fused", 4, 3, 0},
        {"pool/accept", "qwen3-next-80b-a3b", "per-tensor", 2, 3, 0},
        {"pool/copy", "nemotron-h-8b", "fused", 1, 6, 3},
        {"pool/copy", "kimi-linear-48b-a3b", "per-tensor", 1, 6, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bt_case t = setup_ok(cases[i].family, cases[i].model, 3, cases[i].draft, cases[i].variant);
        const int sets = t.x.n_rot, per = cases[i].per_set;
        LS_CHECK_EQ_INT(sets, 2);
        LS_CHECK_EQ_INT(t.x.rotated, 2);
        ls_state_params sp;
        ls_pool_state_params(t.x.pool, &sp);
        LS_CHECK(sp.slots >= sets * per);
        char *before[LS_MAX_BUFFERS];
        for (int b = 0; b < sp.n_buffers; b++) {
            before[b] = malloc((size_t)extent(&sp, b, 0));
            LS_REQUIRE(before[b]);
            memcpy(before[b], sp.buf[b].main, (size_t)extent(&sp, b, 0));
        }
        LS_CHECK_EQ_INT(t.c->e->run(&t.x, 1, NULL), 0);
        int written = 0, kept = 0, slots = 0;
        for (int32_t s = 0; s < sp.slots; s++) {
            int k = 0; /* position of s in x->slots (-1: not taken) */
            while (k < sets * per && t.x.slots[k] != s)
                k++;
            int dst1 = k >= per + cases[i].dst0 && k < 2 * per; /* a destination of set 1 */
            for (int b = 0; b < sp.n_buffers; b++) {
                int same = slot_same(&sp, b, s, before[b]);
                written += dst1 && !same;
                kept += !dst1 && same;
                slots++;
            }
        }
        int dst_blocks = (per - cases[i].dst0) * sp.n_buffers;
        LS_CHECK_EQ_INT(written, dst_blocks);          /* every block of set 1's destinations changed */
        LS_CHECK_EQ_INT(kept, slots - dst_blocks);      /* and nothing else */
        for (int b = 0; b < sp.n_buffers; b++)
            free(before[b]);
        bt_release(&t);
    }
}

/* Pool paths: the layers one call covers do not depend on the regime (flush and hot once built a
 * one-layer pool, timing a smaller call than rotate); only copy/accept's slot sets do. */
static void pool_layers_every_regime(void)
{
    static const struct {
        const char *family, *model;
        int draft, sets; /* sets under rotate (the host cap: 2) */
    } cases[] = {
        {"pool/accept", "kimi-linear-48b-a3b", 2, 2},
        {"pool/copy", "qwen3-next-80b-a3b", 1, 2},
        {"pool/fork", "nemotron-h-8b", 1, 1},
        {"pool/alloc", "qwen3-next-80b-a3b", 1, 1},
    };
    const ls_cache_regime regimes[] = {LS_CACHE_ROTATE, LS_CACHE_FLUSH, LS_CACHE_HOT};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++) {
            bt_cache = regimes[r];
            bt_case t = setup_ok(cases[i].family, cases[i].model, 3, cases[i].draft, NULL);
            LS_CHECK_EQ_INT(ls_pool_desc(t.x.pool)->layers, 2); /* the host cap, every regime */
            LS_CHECK_EQ_INT(t.x.rotated, regimes[r] == LS_CACHE_ROTATE ? cases[i].sets : 1);
            bt_release(&t);
        }
    bt_cache = LS_CACHE_ROTATE;
}

int main(void)
{
    layers_own_inputs();
    per_tensor_equals_fused();
    concat_equals_three(1);
    concat_equals_three(3);
    clone_leaves_state();
    pools_not_zero();
    rotation_sets_rule();
    pool_state_sets();
    pool_layers_every_regime();
    return ls_test_exit();
}
