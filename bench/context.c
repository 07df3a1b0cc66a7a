/*
 * context.c — what every family's setup shares: a per-case PRNG, an arena of host and backend
 * allocations released together at teardown, random input upload, the rotation/memory sizing
 * rule, pool creation and random distinct slot assignment.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

uint64_t bench_rand_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double bench_rand_uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(bench_rand_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* FNV-1a: seeds the case PRNG from its key, so a case's inputs are reproducible. */
uint64_t bench_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

void *bench_host_alloc(bench_ctx *x, size_t bytes)
{
    if (x->n_host_allocs == BENCH_MAX_ALLOCS) {
        ls_fail("bench: more than %d host allocations in one case", BENCH_MAX_ALLOCS);
        return NULL;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        ls_fail("bench: out of host memory (%zu bytes)", bytes);
        return NULL;
    }
    x->host_allocs[x->n_host_allocs++] = p;
    return p;
}

void *bench_dev_alloc(bench_ctx *x, size_t bytes)
{
    if (x->n_allocs == BENCH_MAX_ALLOCS) {
        ls_fail("bench: more than %d backend allocations in one case", BENCH_MAX_ALLOCS);
        return NULL;
    }
    void *p = x->be->mem_alloc(bytes ? bytes : 16);
    if (!p)
        return NULL; /* the backend set the error */
    x->allocs[x->n_allocs++] = p;
    return p;
}

/*
 * Random values never 0 and never denormal: a draw that rounds to 0 is replaced by lo/2 + hi/2
 * nudged away from 0, so no input array is ever all-zero (or contains a silent zero row).
 */
static double nonzero(uint64_t *s, double lo, double hi)
{
    double v = bench_rand_uniform(s, lo, hi);
    if (fabs(v) < 1e-3)
        v = v < 0 ? -1e-3 - fabs(hi - lo) * 0.25 : 1e-3 + fabs(hi - lo) * 0.25;
    return v;
}

void *bench_host_rand(bench_ctx *x, size_t n, ls_dtype dt, double lo, double hi)
{
    void *h = bench_host_alloc(x, n * ls_dtype_size(dt));
    if (!h)
        return NULL;
    if (dt == LS_BF16) {
        uint16_t *p = h;
        for (size_t i = 0; i < n; i++)
            p[i] = ls_f32_to_bf16((float)nonzero(&x->rng, lo, hi));
    } else {
        float *p = h;
        for (size_t i = 0; i < n; i++)
            p[i] = (float)nonzero(&x->rng, lo, hi);
    }
    return h;
}

/* Random host array of dtype dt, uploaded; the host copy stays in the arena for verification. */
static void *dev_rand(bench_ctx *x, size_t n, ls_dtype dt, double lo, double hi, void **host_out)
{
    void *h = bench_host_rand(x, n, dt, lo, hi);
    if (!h)
        return NULL;
    void *d = bench_dev_alloc(x, n * ls_dtype_size(dt));
    if (!d || x->be->copy_h2d(d, h, n * ls_dtype_size(dt)) != 0)
        return NULL;
    if (host_out)
        *host_out = h;
    return d;
}

uint16_t *bench_dev_rand_bf16(bench_ctx *x, size_t n, double lo, double hi, uint16_t **host_out)
{
    return dev_rand(x, n, LS_BF16, lo, hi, (void **)host_out);
}

float *bench_dev_rand_f32(bench_ctx *x, size_t n, double lo, double hi, float **host_out)
{
    return dev_rand(x, n, LS_F32, lo, hi, (void **)host_out);
}

/*
 * Rotation rule (DESIGN "Timing"): consecutive launches touch different layers so the working
 * set is >= 8x the device L2, like real decode walking its layers. Capped by the model's linear
 * layer count (that is the real working set), env->max_rot, and the memory budget.
 */
int bench_rotation_layers(const bench_ctx *x, int64_t call_bytes, int64_t layer_pool_bytes)
{
    const bench_env *env = x->env;
    int64_t l2 = env->dev.l2_bytes > 0 ? env->dev.l2_bytes : (int64_t)32 << 20;
    int64_t n = 1;
    if (env->cache == LS_CACHE_ROTATE && call_bytes > 0)
        n = (8 * l2 + call_bytes - 1) / call_bytes;
    if (n > x->c->model->layers)
        n = x->c->model->layers;
    if (env->max_rot > 0 && n > env->max_rot)
        n = env->max_rot;
    if (n < 1)
        n = 1;
    if (layer_pool_bytes <= 0)
        return (int)n;
    int64_t fit = env->budget_bytes / layer_pool_bytes;
    if (fit < 1)
        return 0;
    return (int)(n < fit ? n : fit);
}

int bench_pool_create(bench_ctx *x, int layers, ls_dtype dt, int spec_tokens, int32_t capacity,
                      ls_zero_policy zero)
{
    ls_state_desc d;
    if (ls_state_desc_from_shape(&x->c->shape, dt, spec_tokens, &d) != 0)
        return -1;
    d.layers = layers;
    if (ls_state_desc_check(&d) != 0)
        return -1;
    int64_t need = (int64_t)(capacity + 1) * ls_layer_bytes(&d) * layers * (1 + spec_tokens);
    if (need > x->env->budget_bytes)
        return BENCH_OOM;
    ls_pool_config cfg = {capacity, LS_PAD_LAST, zero};
    x->pool = ls_pool_create(&d, &cfg, x->be);
    /* The descriptor is valid, so a failure here is the backend running out of memory. */
    return x->pool ? 0 : BENCH_OOM;
}

int bench_take_slots(bench_ctx *x, int32_t n)
{
    int32_t *s = bench_host_alloc(x, (size_t)n * sizeof *s);
    if (!s || ls_pool_alloc(x->pool, n, s) != 0)
        return -1;
    for (int32_t i = n - 1; i > 0; i--) { /* Fisher-Yates: rows get slots in random order */
        int32_t j = (int32_t)(bench_rand_u64(&x->rng) % (uint64_t)(i + 1));
        int32_t t = s[i];
        s[i] = s[j];
        s[j] = t;
    }
    int32_t *d = bench_dev_alloc(x, (size_t)n * sizeof *d);
    if (!d || x->be->copy_h2d(d, s, (size_t)n * sizeof *s) != 0)
        return -1;
    x->slots = s;
    x->slots_dev = d;
    return 0;
}

int bench_pick_rows(bench_ctx *x, int *rows)
{
    int B = x->c->batch, n = B < BENCH_VERIFY_ROWS ? B : BENCH_VERIFY_ROWS;
    if (B <= BENCH_VERIFY_ROWS) {
        for (int i = 0; i < n; i++)
            rows[i] = i;
        return n;
    }
    /* Selection sampling (Knuth S): n distinct rows, increasing, each subset equally likely. */
    int k = 0;
    for (int r = 0; r < B && k < n; r++)
        if ((int)(bench_rand_u64(&x->rng) % (uint64_t)(B - r)) < n - k)
            rows[k++] = r;
    return k;
}

void bench_ctx_release(bench_ctx *x)
{
    if (x->c && x->c->e->teardown)
        x->c->e->teardown(x);
    if (x->pool)
        ls_pool_destroy(x->pool);
    x->pool = NULL;
    for (int i = x->n_allocs - 1; i >= 0; i--)
        x->be->mem_free(x->allocs[i]);
    for (int i = x->n_host_allocs - 1; i >= 0; i--)
        free(x->host_allocs[i]);
    x->n_allocs = x->n_host_allocs = 0;
    x->slots = x->slots_dev = NULL;
    x->priv = NULL;
}
