/*
 * pool_state.c — pool copy (docs/pool.md copy_from) and accept (docs/pool.md acceptance write-back) timed as
 * the device launches alone: slot and step index lists are uploaded at setup, and the timed call
 * issues backend state ops with no host bookkeeping and no sync (so these rows can also be timed
 * as CUDA-graph replays). Variants (registry.c):
 *   fused      — ONE impl state_copy / state_accept over every buffer and layer of the pool;
 *   per-tensor — one launch per (buffer, layer), each an ls_state_params with n_buffers = 1 and
 *                layers = 1 pointing at that layer, as an implementation that walks its tensors
 *                does: n_buffers x layers launches.
 * Both move the same bytes (2·B·per_req minimum: bench_pool_copy_bytes, bench_pool_accept_bytes).
 *   copy:   B src slots -> B other dst slots of a 2B pool; slots are assigned in random order, so
 *           src and dst interleave, and the lists are disjoint as the backend op requires;
 *   accept: B slots, each taking a random draft step in [0, T-1] from its spec buffers.
 * Repeating either op gives the same result, so no reset is needed between samples. One call
 * covers every layer; the launches of a sample rotate over x->n_rot disjoint sets of such slots
 * (bench_pool_family_create: enough sets that a round's bytes are >= 8 x L2, so no call reads what
 * the previous one left in L2), each set with its own lists. There are no activations: the index
 * lists are the call's only inputs, so the one input policy of the kernel families
 * (docs/timing.md "Setup") holds as is.
 *
 * Verification is exact and reference-based. For the sampled rows, on layers 0 and L-1 of every
 * buffer, a host mirror holds random source blocks (uploaded to the device too: copy src slots,
 * accept spec[slot][step]) and 0xff-poisoned destination blocks (poisoned on the device too). The
 * variant runs on the device over the whole batch, ls_ref_state_copy / ls_ref_state_accept runs on
 * the mirror, and every mirrored main block read back from the device must equal the mirror byte
 * for byte: max_rel_err 0, else 1.
 */
#include <string.h>

#include "pool.h"

typedef struct state_priv {
    int accept;                 /* 0: copy, 1: accept */
    int B;
    int32_t *src, *dst, *steps; /* host lists of set 0, the verified one (copy: src, dst; accept:
                                 * dst = the slots, steps) */
    ls_state_params *fused;     /* [n_rot]: set r over the whole pool; index lists in backend memory */
    ls_state_params *per;       /* per-tensor: [n_rot][n_per], one per (buffer, layer); NULL when fused */
    int n_per;                  /* per-tensor launches per set */
} state_priv;

/* Buffer b at layer l of the pool `all` as a single-buffer, single-layer params (same indices). */
static void per_tensor_params(const ls_state_params *all, int b, int l, ls_state_params *out)
{
    int64_t item = all->buf[b].item_bytes, layer_bytes = (int64_t)all->slots * item;
    *out = *all;
    memset(out->buf, 0, sizeof out->buf);
    out->n_buffers = 1;
    out->layers = 1;
    out->buf[0].item_bytes = item;
    out->buf[0].main = (char *)all->buf[b].main + l * layer_bytes;
    if (all->buf[b].spec)
        out->buf[0].spec = (char *)all->buf[b].spec + l * layer_bytes * all->spec_tokens;
}

/* Pool, slots, index lists on the backend, and the launch params of the variant: per set r,
 * accept takes slots [rB, rB + B) of x->slots with steps [rB, rB + B); copy takes src
 * [2rB, 2rB + B) and dst [2rB + B, 2rB + 2B), so every list of every set is disjoint. */
static int state_setup(bench_ctx *x, int accept, int per_tensor)
{
    int rc = bench_pool_family_create(x, accept ? 1 : 2, LS_ZERO_AT_FREE, 2, 1);
    if (rc)
        return rc;
    int B = x->c->batch, sets = x->n_rot, per_set = accept ? B : 2 * B;
    state_priv *p = bench_host_alloc(x, sizeof *p);
    if (!p || bench_take_slots(x, per_set * sets) != 0)
        return -1;
    x->priv = p;
    p->accept = accept;
    p->B = B;
    if (!(p->fused = bench_host_alloc(x, sizeof *p->fused * (size_t)sets)))
        return -1;
    ls_state_params all;
    ls_pool_state_params(x->pool, &all);
    all.count = B;
    int32_t *steps_dev = NULL;
    if (accept) {
        size_t n = (size_t)B * (size_t)sets;
        steps_dev = bench_dev_alloc(x, sizeof(int32_t) * n);
        p->steps = bench_host_alloc(x, sizeof(int32_t) * n);
        if (!steps_dev || !p->steps)
            return -1;
        for (size_t i = 0; i < n; i++) /* accepted draft j in [0, T-1] (docs/pool.md) */
            p->steps[i] = (int32_t)(bench_rand_u64(&x->rng) % (uint64_t)all.spec_tokens);
        if (x->be->copy_h2d(steps_dev, p->steps, sizeof(int32_t) * n) != 0)
            return -1;
        p->dst = x->slots;
    } else {
        p->src = x->slots;
        p->dst = x->slots + B;
    }
    for (int r = 0; r < sets; r++) {
        ls_state_params *f = &p->fused[r];
        *f = all;
        if (accept) {
            f->dst = x->slots_dev + (size_t)r * B;
            f->step = steps_dev + (size_t)r * B;
        } else {
            f->src = x->slots_dev + (size_t)r * per_set;
            f->dst = f->src + B;
        }
    }
    if (!per_tensor)
        return 0;
    p->per = bench_host_alloc(x, sizeof *p->per * (size_t)(all.n_buffers * all.layers) * (size_t)sets);
    if (!p->per)
        return -1;
    size_t k = 0;
    for (int r = 0; r < sets; r++)
        for (int b = 0; b < all.n_buffers; b++)
            for (int l = 0; l < all.layers; l++)
                if (!accept || all.buf[b].spec) /* accept skips buffers without spec */
                    per_tensor_params(&p->fused[r], b, l, &p->per[k++]);
    p->n_per = (int)(k / (size_t)sets);
    return 0;
}

int bench_pool_copy_setup(bench_ctx *x)
{
    return state_setup(x, 0, 0);
}

int bench_pool_copy_per_tensor_setup(bench_ctx *x)
{
    return state_setup(x, 0, 1);
}

int bench_pool_accept_setup(bench_ctx *x)
{
    return state_setup(x, 1, 0);
}

int bench_pool_accept_per_tensor_setup(bench_ctx *x)
{
    return state_setup(x, 1, 1);
}

int bench_pool_state_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    state_priv *p = x->priv;
    int (*op)(const ls_state_params *, const ls_tuning *, ls_stream) =
        p->accept ? x->im->state_accept : x->im->state_copy;
    if (!p->per)
        return bench_impl_rc(x, op(&p->fused[rot], x->tune, s));
    const ls_state_params *per = p->per + (size_t)rot * (size_t)p->n_per;
    for (int i = 0; i < p->n_per; i++)
        if (bench_impl_rc(x, op(&per[i], x->tune, s)) != 0)
            return -1;
    return 0;
}

/* Random bytes, never a zero byte. */
static void rand_bytes(bench_ctx *x, char *h, int64_t n)
{
    for (int64_t i = 0; i < n; i += 8) {
        uint64_t u = bench_rand_u64(&x->rng) | 0x0101010101010101ull;
        memcpy(h + i, &u, (size_t)(n - i < 8 ? n - i : 8));
    }
}

/*
 * One mirrored block: the device block at dev (item bytes) and its host mirror at h. src != 0:
 * random content on both sides; else 0xff poison on both sides.
 */
static int mirror_block(bench_ctx *x, char *dev, char *h, int64_t item, int src)
{
    if (!src) {
        memset(h, 0xff, (size_t)item);
        return x->be->mem_set(dev, 0xff, (size_t)item, NULL);
    }
    rand_bytes(x, h, item);
    return x->be->copy_h2d(dev, h, (size_t)item);
}

/* Main block (layer, slot) of buffer b of the pool params. */
static char *main_block(const ls_state_params *sp, int b, int layer, int32_t slot)
{
    return (char *)sp->buf[b].main + ((int64_t)layer * sp->slots + slot) * sp->buf[b].item_bytes;
}

int bench_pool_state_verify(bench_ctx *x, double *max_rel_err)
{
    state_priv *p = x->priv;
    const ls_state_params *all = &p->fused[0]; /* set 0: the other sets differ only in their lists */
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows);
    int layers[2] = {0, all->layers - 1}, n_layers = all->layers > 1 ? 2 : 1;
    /* Mirror slots: accept — k is the row's slot; copy — k its src, n + k its dst. */
    int n_slots = p->accept ? n : 2 * n;
    int32_t pool_slot[2 * BENCH_VERIFY_ROWS], src[BENCH_VERIFY_ROWS], dst[BENCH_VERIFY_ROWS],
        step[BENCH_VERIFY_ROWS];
    for (int k = 0; k < n; k++) {
        pool_slot[k] = p->accept ? p->dst[rows[k]] : p->src[rows[k]];
        if (!p->accept)
            pool_slot[n + k] = p->dst[rows[k]];
        src[k] = k;
        dst[k] = p->accept ? k : n + k;
        step[k] = 0; /* the mirror's spec holds only each row's accepted step */
    }
    ls_state_params ref = {.n_buffers = all->n_buffers, .layers = n_layers, .slots = n_slots,
                           .spec_tokens = p->accept ? 1 : 0, .count = n,
                           .src = p->accept ? NULL : src, .dst = dst, .step = p->accept ? step : NULL};
    int64_t max_item = 0;
    for (int b = 0; b < all->n_buffers; b++) {
        int64_t item = all->buf[b].item_bytes, blocks = (int64_t)n_layers * n_slots;
        int with_spec = p->accept && all->buf[b].spec;
        max_item = item > max_item ? item : max_item;
        ref.buf[b].item_bytes = item;
        ref.buf[b].main = bench_host_alloc(x, (size_t)(blocks * item));
        if (!ref.buf[b].main || (with_spec && !(ref.buf[b].spec = bench_host_alloc(x, (size_t)(blocks * item)))))
            return -1;
        for (int li = 0; li < n_layers; li++)
            for (int j = 0; j < n_slots; j++) {
                char *h = (char *)ref.buf[b].main + ((int64_t)li * n_slots + j) * item;
                if (mirror_block(x, main_block(all, b, layers[li], pool_slot[j]), h, item, !p->accept && j < n) != 0)
                    return -1;
                if (!with_spec)
                    continue;
                int64_t spec_row = ((int64_t)layers[li] * all->slots + pool_slot[j]) * all->spec_tokens +
                                   p->steps[rows[j]];
                char *dev_spec = (char *)all->buf[b].spec + spec_row * item;
                if (mirror_block(x, dev_spec, (char *)ref.buf[b].spec + ((int64_t)li * n_slots + j) * item, item,
                                 1) != 0)
                    return -1;
            }
    }
    char *back = bench_host_alloc(x, (size_t)max_item);
    if (!back || x->be->sync(NULL) != 0 || bench_pool_state_run(x, 0, NULL) != 0 || x->be->sync(NULL) != 0 ||
        (p->accept ? ls_ref_state_accept(&ref) : ls_ref_state_copy(&ref)) != 0)
        return -1;
    int same = 1;
    for (int b = 0; b < all->n_buffers && same; b++)
        for (int li = 0; li < n_layers && same; li++)
            for (int j = 0; j < n_slots && same; j++) {
                int64_t item = all->buf[b].item_bytes;
                if (x->be->copy_d2h(back, main_block(all, b, layers[li], pool_slot[j]), (size_t)item) != 0)
                    return -1;
                same = memcmp(back, (char *)ref.buf[b].main + ((int64_t)li * n_slots + j) * item, (size_t)item) == 0;
            }
    *max_rel_err = same ? 0.0 : 1.0;
    return 0;
}

const void *bench_pool_state_launch(const bench_ctx *x, ls_op *op)
{
    const state_priv *p = x->priv;
    if (!p)
        return NULL;
    *op = p->accept ? LS_OP_STATE_ACCEPT : LS_OP_STATE_COPY;
    return p->per ? (const void *)&p->per[0] : (const void *)&p->fused[0];
}
