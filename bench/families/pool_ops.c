/*
 * pool_ops.c — the pool family's slot paths that allocate or release slots (docs/pool.md), timed as
 * a caller sees them (host bookkeeping + index upload + the state kernel), through ls_pool_*:
 *   alloc  — alloc(B) with zero-at-alloc (#14792): B·per_req bytes zeroed;
 *   free   — free(B) with zero-at-free (AFTER): B·per_req bytes zeroed;
 *   fork   — B × fork_from (alloc without zeroing + copy): 2·B·per_req minimum.
 * copy and accept are timed as device launches only, in pool_state.c; the bytes formulas and the
 * pool sizing rule of the family live here.
 * Each op touches every layer of the pool in one call, so there is no rotation (rotated = 1);
 * instead the pool holds enough layers that one call's working set is >= 8x L2 (capped by the
 * model's layers and the memory budget), and per_req counts those layers (CSV `layers`).
 * alloc, free and fork consume or release slots: their `reset` callback restores the pool
 * outside the timed region before every sample, and waits for the device, so every sample
 * starts from an idle device. The ops themselves return once queued (docs/pool.md): the timed
 * region holds the host's issue of the launches and the device's work behind them.
 *
 * Verification is exact: sampled slots are filled with random bytes (layers 0 and L-1, every
 * buffer), the op runs, and the destination must equal the expected bytes (or zeros).
 * max_rel_err is 0 when every checked byte matches, 1 otherwise.
 */
#include <string.h>

#include "pool.h"

typedef struct pool_priv {
    int B;
    int32_t *src, *dst; /* host slot lists */
    int held;           /* alloc/free: the B slots of src are allocated */
    int forked;         /* fork: the B slots of dst are allocated */
} pool_priv;

/* Descriptor of the case's pool (or, before/without one, of the full model). */
static int pool_case_desc(const bench_ctx *x, ls_state_desc *d)
{
    if (x->pool) {
        *d = *ls_pool_desc(x->pool);
        return 0;
    }
    int spec = x->c->e->draft == BENCH_DRAFT_VERIFY ? x->c->tokens : 0;
    return ls_state_desc_from_shape(&x->c->shape, x->c->state_dtype, spec, d);
}

int64_t bench_pool_zero_bytes(const bench_ctx *x)
{
    ls_state_desc d;
    return pool_case_desc(x, &d) ? 0 : ls_bytes_pool_zero(x->c->batch, ls_bytes_per_req(&d));
}

int64_t bench_pool_copy_bytes(const bench_ctx *x)
{
    ls_state_desc d;
    return pool_case_desc(x, &d) ? 0 : ls_bytes_pool_copy(x->c->batch, ls_bytes_per_req(&d));
}

/* docs/bytes.md acceptance row generalised to every conv buffer: 2·N·per_req. */
int64_t bench_pool_accept_bytes(const bench_ctx *x)
{
    ls_state_desc d;
    return pool_case_desc(x, &d) ? 0 : 2 * (int64_t)x->c->batch * ls_bytes_per_req(&d);
}

/*
 * The family's pool: cap_mult·B slots per set, zero policy, spec buffers for ops with the draft
 * axis (accept); layer count from the working-set rule — one call touches B·layer_bytes·touch
 * bytes per layer — capped by the model's layers and the memory budget, the same under every
 * cache regime (bench_pool_layers: the call is the case). rotate_sets 0: one set,
 * no rotation (rotated = 1). rotate_sets 1 (copy, accept): a call over every layer can still fit
 * in L2 (small B, few layers), and timing it over the same slots again would read what the
 * previous call left in L2, so the pool holds bench_rotation_sets sets of cap_mult·B slots and
 * the samples rotate over them (rotated = the set count; docs/timing.md "Cache regimes").
 */
int bench_pool_family_create(bench_ctx *x, int cap_mult, ls_zero_policy zero, int touch, int rotate_sets)
{
    const bench_case *c = x->c;
    int B = c->batch, spec = c->e->draft == BENCH_DRAFT_VERIFY ? c->tokens : 0, rc;
    ls_state_desc d;
    if (ls_state_desc_from_shape(&c->shape, c->state_dtype, spec, &d) != 0)
        return -1;
    int64_t slot_bytes = ls_layer_bytes(&d) * (1 + spec); /* one slot of one layer, spec rows too */
    int32_t cap = (int32_t)(cap_mult * B);
    int layers = bench_pool_layers(x, (int64_t)B * ls_layer_bytes(&d) * touch, (int64_t)(cap + 1) * slot_bytes);
    if (layers == 0)
        return BENCH_OOM;
    int sets = 1;
    if (rotate_sets) {
        int64_t call = (int64_t)B * ls_layer_bytes(&d) * touch * layers;
        if ((sets = bench_rotation_sets(x, call, cap * slot_bytes * layers, slot_bytes * layers)) == 0)
            return BENCH_OOM;
    }
    if ((rc = bench_pool_create(x, layers, c->state_dtype, spec, cap * sets, zero)) != 0)
        return rc;
    x->n_rot = x->rotated = sets;
    return 0;
}

/* The family pool (bench_pool_family_create) and this file's private state. */
static int pool_setup(bench_ctx *x, int cap_mult, ls_zero_policy zero, int touch)
{
    int rc = bench_pool_family_create(x, cap_mult, zero, touch, 0);
    if (rc)
        return rc;
    pool_priv *p = bench_host_alloc(x, sizeof *p);
    if (!p)
        return -1;
    p->B = x->c->batch;
    x->priv = p;
    return 0;
}

/* ---------------------------------------------------------------- exact slot checks */

/* Address of (layer, slot) of main buffer b. */
static char *slot_addr(const ls_pool *pool, int b, int layer, int32_t slot, int64_t *item)
{
    const ls_state_desc *d = ls_pool_desc(pool);
    int conv = b < d->n_conv;
    *item = conv ? ls_conv_item_bytes(d, b) : ls_temporal_item_bytes(d);
    return (char *)(conv ? ls_pool_conv(pool, b, layer) : ls_pool_temporal(pool, layer)) + *item * slot;
}

/* Visits (slot k, checked layer, buffer) blocks: layers 0 and L-1. Returns bytes per slot. */
typedef int (*block_fn)(bench_ctx *x, char *dev, char *host, int64_t bytes);

static int64_t for_blocks(bench_ctx *x, const int32_t *slots, int n, char *host, block_fn fn)
{
    const ls_state_desc *d = ls_pool_desc(x->pool);
    int layers[2] = {0, d->layers - 1}, n_layers = d->layers > 1 ? 2 : 1;
    int64_t off = 0;
    for (int k = 0; k < n; k++)
        for (int li = 0; li < n_layers; li++)
            for (int b = 0; b < ls_pool_n_buffers(x->pool); b++) {
                int64_t item;
                char *dev = slot_addr(x->pool, b, layers[li], slots[k], &item);
                if (host && fn(x, dev, host + off, item) != 0)
                    return -1;
                off += item;
            }
    return off;
}

static int put_block(bench_ctx *x, char *dev, char *host, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; i++)
        host[i] = (char)(bench_rand_u64(&x->rng) | 1u); /* never a zero byte */
    return x->be->copy_h2d(dev, host, (size_t)bytes);
}

static int get_block(bench_ctx *x, char *dev, char *host, int64_t bytes)
{
    return x->be->copy_d2h(host, dev, (size_t)bytes);
}

/* Random bytes into the blocks of the given slots; returns the host copy. */
static char *blocks_fill(bench_ctx *x, const int32_t *slots, int n)
{
    int64_t total = for_blocks(x, slots, n, NULL, NULL);
    char *h = bench_host_alloc(x, (size_t)total);
    if (!h || for_blocks(x, slots, n, h, put_block) < 0)
        return NULL;
    return h;
}

/* Compares the main blocks of slots with expect (NULL = all zero); *err = 0 or 1. */
static int blocks_check(bench_ctx *x, const int32_t *slots, int n, const char *expect, double *err)
{
    int64_t total = for_blocks(x, slots, n, NULL, NULL);
    char *h = bench_host_alloc(x, (size_t)total);
    if (!h || for_blocks(x, slots, n, h, get_block) < 0)
        return -1;
    int same = 1;
    for (int64_t i = 0; i < total && same; i++)
        same = h[i] == (expect ? expect[i] : 0);
    *err = same ? 0.0 : 1.0;
    return 0;
}

/* The sampled rows' entries of a host slot list. */
static int sample(bench_ctx *x, const int32_t *list, int32_t *out)
{
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows);
    for (int k = 0; k < n; k++)
        out[k] = list[rows[k]];
    return n;
}

/* alloc/free share a pool of exactly B slots and a host list src of the B slots held. */
static int held_setup(bench_ctx *x, ls_zero_policy zero)
{
    int rc = pool_setup(x, 1, zero, 1);
    if (rc)
        return rc;
    pool_priv *p = x->priv;
    p->src = bench_host_alloc(x, sizeof *p->src * (size_t)p->B);
    return p->src ? 0 : -1;
}

/* A reset's end: rc, then the device idle (the reset's zeroing done before the sample). */
static int settled(bench_ctx *x, int rc)
{
    return rc != 0 || ls_pool_sync(x->pool) != 0 ? -1 : 0;
}

static int take_all(bench_ctx *x)
{
    pool_priv *p = x->priv;
    if (!p->held && ls_pool_alloc(x->pool, p->B, p->src) != 0)
        return -1;
    p->held = 1;
    return 0;
}

static int give_all(bench_ctx *x)
{
    pool_priv *p = x->priv;
    if (p->held && ls_pool_free(x->pool, p->B, p->src) != 0)
        return -1;
    p->held = 0;
    return 0;
}

/* ---------------------------------------------------------------- alloc (zero at alloc) */

int bench_pool_alloc_setup(bench_ctx *x)
{
    return held_setup(x, LS_ZERO_AT_ALLOC);
}

int bench_pool_alloc_reset(void *x)
{
    return settled(x, give_all(x));
}

int bench_pool_alloc_run(void *vx, int rot, ls_stream s)
{
    return take_all(vx);
}

/* Capacity is B, so the second alloc hands out every slot again, the dirtied ones included. */
int bench_pool_alloc_verify(bench_ctx *x, double *max_rel_err)
{
    pool_priv *p = x->priv;
    int32_t chk[BENCH_VERIFY_ROWS];
    if (take_all(x) != 0)
        return -1;
    int n = sample(x, p->src, chk);
    if (!blocks_fill(x, chk, n) || give_all(x) != 0 || take_all(x) != 0)
        return -1;
    return blocks_check(x, chk, n, NULL, max_rel_err);
}

/* ---------------------------------------------------------------- free (zero at free) */

int bench_pool_free_setup(bench_ctx *x)
{
    return held_setup(x, LS_ZERO_AT_FREE);
}

int bench_pool_free_reset(void *x)
{
    return settled(x, take_all(x));
}

int bench_pool_free_run(void *vx, int rot, ls_stream s)
{
    return give_all(vx);
}

int bench_pool_free_verify(bench_ctx *x, double *max_rel_err)
{
    pool_priv *p = x->priv;
    int32_t chk[BENCH_VERIFY_ROWS];
    if (take_all(x) != 0)
        return -1;
    int n = sample(x, p->src, chk);
    if (!blocks_fill(x, chk, n) || give_all(x) != 0)
        return -1;
    return blocks_check(x, chk, n, NULL, max_rel_err);
}

/* ---------------------------------------------------------------- fork */

int bench_pool_fork_setup(bench_ctx *x)
{
    int rc = pool_setup(x, 2, LS_ZERO_AT_FREE, 2);
    if (rc)
        return rc;
    pool_priv *p = x->priv;
    if (bench_take_slots(x, p->B) != 0)
        return -1;
    p->src = x->slots;
    p->dst = bench_host_alloc(x, sizeof *p->dst * (size_t)p->B);
    return p->dst ? 0 : -1;
}

int bench_pool_fork_reset(void *vx)
{
    bench_ctx *x = vx;
    pool_priv *p = x->priv;
    if (p->forked && ls_pool_free(x->pool, p->B, p->dst) != 0)
        return -1;
    p->forked = 0;
    return settled(x, 0);
}

int bench_pool_fork_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    pool_priv *p = x->priv;
    for (int i = 0; i < p->B; i++)
        if (ls_pool_fork(x->pool, p->src[i], &p->dst[i]) != 0)
            return -1;
    p->forked = 1;
    return 0;
}

static int fork_once(bench_ctx *x)
{
    return bench_pool_fork_reset(x) != 0 ? -1 : bench_pool_fork_run(x, 0, NULL);
}

int bench_pool_fork_verify(bench_ctx *x, double *max_rel_err)
{
    pool_priv *p = x->priv;
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows);
    int32_t s[BENCH_VERIFY_ROWS], d[BENCH_VERIFY_ROWS];
    for (int k = 0; k < n; k++)
        s[k] = p->src[rows[k]];
    char *expect = blocks_fill(x, s, n);
    if (!expect || fork_once(x) != 0)
        return -1;
    for (int k = 0; k < n; k++)
        d[k] = p->dst[rows[k]];
    return blocks_check(x, d, n, expect, max_rel_err);
}
