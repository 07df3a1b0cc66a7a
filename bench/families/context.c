/*
 * context.c — what every family's setup shares: a per-case PRNG, an arena of host and backend
 * allocations released together at teardown, random input upload, the rotation/memory sizing
 * rule, pool creation (every buffer filled with random data) and random distinct slot
 * assignment.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "family.h"

double bench_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

/* n random values of dtype dt from PRNG state s into h. */
static void fill_rand(uint64_t *s, void *h, size_t n, ls_dtype dt, double lo, double hi)
{
    if (dt == LS_BF16) {
        uint16_t *p = h;
        for (size_t i = 0; i < n; i++)
            p[i] = ls_f32_to_bf16((float)nonzero(s, lo, hi));
    } else {
        float *p = h;
        for (size_t i = 0; i < n; i++)
            p[i] = (float)nonzero(s, lo, hi);
    }
}

void *bench_host_rand(bench_ctx *x, size_t n, ls_dtype dt, double lo, double hi)
{
    void *h = bench_host_alloc(x, n * ls_dtype_size(dt));
    if (h)
        fill_rand(&x->rng, h, n, dt, lo, hi);
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
 * Rotation rule (docs/timing.md): consecutive launches touch different layers so the working
 * set is >= 8x the device L2, like real decode walking its layers. Capped by the model's linear
 * layer count (that is the real working set), env->max_rot, and the memory budget. Pool copy and
 * accept, whose one call covers every layer, rotate over slot sets instead (bench_rotation_sets).
 *
 * l2_round: calls whose bytes add up to >= 8 x L2 (rotate's count, whatever the regime).
 */
static int64_t l2_round(const bench_env *env, int64_t call_bytes)
{
    int64_t l2 = env->dev.l2_bytes > 0 ? env->dev.l2_bytes : (int64_t)32 << 20;
    return call_bytes > 0 ? (8 * l2 + call_bytes - 1) / call_bytes : 1;
}

/* Launches per round under the regime: l2_round under rotate, else 1. */
static int64_t rotation_round(const bench_env *env, int64_t call_bytes)
{
    return env->cache == LS_CACHE_ROTATE ? l2_round(env, call_bytes) : 1;
}

/* n capped by env->max_rot, at least 1, then by how many units fit the budget beside base_bytes
 * (0 when not even one does). */
static int rotation_fit(const bench_env *env, int64_t n, int64_t unit_bytes, int64_t base_bytes)
{
    if (env->max_rot > 0 && n > env->max_rot)
        n = env->max_rot;
    if (n < 1)
        n = 1;
    if (unit_bytes <= 0)
        return (int)n;
    int64_t fit = (env->budget_bytes - base_bytes) / unit_bytes;
    if (fit < 1)
        return 0;
    return (int)(n < fit ? n : fit);
}

/* n layers capped by the model's linear layers, then as rotation_fit. */
static int layers_fit(const bench_ctx *x, int64_t n, int64_t layer_pool_bytes)
{
    return rotation_fit(x->env, n < x->c->model->layers ? n : x->c->model->layers, layer_pool_bytes, 0);
}

int bench_rotation_layers(const bench_ctx *x, int64_t call_bytes, int64_t layer_pool_bytes)
{
    return layers_fit(x, rotation_round(x->env, call_bytes), layer_pool_bytes);
}

int bench_pool_layers(const bench_ctx *x, int64_t layer_bytes, int64_t layer_pool_bytes)
{
    return layers_fit(x, l2_round(x->env, layer_bytes), layer_pool_bytes);
}

int bench_rotation_sets(const bench_ctx *x, int64_t call_bytes, int64_t set_pool_bytes, int64_t base_bytes)
{
    return rotation_fit(x->env, rotation_round(x->env, call_bytes), set_pool_bytes, base_bytes);
}

/* Fills `total` bytes at dst (backend memory) whose first `done` bytes are set by repeating them:
 * doubling copies of what is already filled, about log2(total / done) copies on the default
 * stream (in order, so each reads finished data). */
static int repeat_head(const ls_runtime *be, char *dst, int64_t total, int64_t done)
{
    while (done < total) {
        int64_t n = total - done < done ? total - done : done;
        if (be->copy_d2d(dst + done, dst, (size_t)n, NULL) != 0)
            return -1;
        done += n;
    }
    return 0;
}

/* Tiles `total` bytes at dst with the `chunk` bytes at src (backend memory): one copy of the
 * chunk, then repeat_head. */
static int tile(const ls_runtime *be, char *dst, int64_t total, const void *src, int64_t chunk)
{
    int64_t done = total < chunk ? total : chunk;
    if (be->copy_d2d(dst, src, (size_t)done, NULL) != 0)
        return -1;
    return repeat_head(be, dst, total, done);
}

/* Bytes of the random chunk tiled over pool buffers: ~1 MiB, a multiple of 4 (element-aligned
 * for fp32) but not a power of two, so consecutive slots do not repeat the same bytes. */
#define BENCH_FILL_CHUNK ((int64_t)(1 << 20) + 4 * 997)

void *bench_dev_rand_layers(bench_ctx *x, int layers, size_t n, ls_dtype dt, double lo, double hi, void **host0)
{
    void *h = bench_host_rand(x, n, dt, lo, hi); /* layer 0: the case's own draws */
    if (!h)
        return NULL;
    if (host0)
        *host0 = h;
    return bench_dev_layers_from(x, layers, h, n, dt, lo, hi);
}

void *bench_dev_layers_from(bench_ctx *x, int layers, const void *h, size_t n, ls_dtype dt, double lo, double hi)
{
    size_t es = ls_dtype_size(dt);
    int64_t lb = (int64_t)(n * es), rest = lb * (layers - 1);
    char *d = layers >= 1 ? bench_dev_alloc(x, (size_t)(lb * layers)) : NULL;
    if (!d || x->be->copy_h2d(d, h, (size_t)lb) != 0)
        return NULL;
    if (rest <= 0)
        return d;
    /* Layers 1..: a chunk drawn from a stream of its own (layer 0 keeps the draws it had when
     * layers shared their inputs), tiled; a multiple of 4 bytes, so of the element size. */
    int64_t chunk = rest < BENCH_FILL_CHUNK ? rest : BENCH_FILL_CHUNK;
    uint64_t s = x->rng ^ 0x6a09e667f3bcc909ull;
    void *hc = malloc((size_t)chunk);
    if (!hc) {
        ls_fail("bench: out of host memory (%lld bytes)", (long long)chunk);
        return NULL;
    }
    fill_rand(&s, hc, (size_t)chunk / es, dt, lo, hi);
    int rc = x->be->copy_h2d(d + lb, hc, (size_t)chunk);
    free(hc);
    if (rc != 0 || repeat_head(x->be, d + lb, rest, chunk) != 0 || x->be->sync(NULL) != 0)
        return NULL;
    return d;
}

/*
 * Fills every buffer of the case pool — main and spec, every layer and slot, the padding slot
 * too — with random values of the buffer's dtype in [-1, 1), never zero (bench_host_rand), so no
 * timed kernel reads or writes zeros (a zero state can take faster paths and hides bugs). One
 * host chunk per dtype is generated and uploaded once, then tiled on the device (tile above).
 * The verification gate still seeds the slots it checks with its own data.
 */
static int pool_fill_random(bench_ctx *x)
{
    const ls_state_desc *d = ls_pool_desc(x->pool);
    ls_state_params sp;
    ls_pool_state_params(x->pool, &sp);
    void *chunk[2] = {NULL, NULL}; /* by ls_dtype */
    int64_t largest = 0, steps = sp.spec_tokens > 0 ? sp.spec_tokens : 1;
    for (int b = 0; b < sp.n_buffers; b++) {
        int64_t extent = (int64_t)sp.layers * sp.slots * sp.buf[b].item_bytes * steps;
        largest = extent > largest ? extent : largest;
    }
    /* small (host-test) pools: no bigger chunk than the largest buffer needs */
    int64_t csize = largest < BENCH_FILL_CHUNK ? (largest + 3) / 4 * 4 : BENCH_FILL_CHUNK;
    for (int b = 0; b < sp.n_buffers; b++) {
        ls_dtype dt = b < d->n_conv ? d->conv_dtype : d->temporal_dtype;
        if (!chunk[dt]) {
            void *h = bench_host_rand(x, (size_t)csize / ls_dtype_size(dt), dt, -1.0, 1.0);
            if (!h || !(chunk[dt] = bench_dev_alloc(x, (size_t)csize)) ||
                x->be->copy_h2d(chunk[dt], h, (size_t)csize) != 0)
                return -1;
        }
        int64_t main_b = (int64_t)sp.layers * sp.slots * sp.buf[b].item_bytes;
        if (tile(x->be, sp.buf[b].main, main_b, chunk[dt], csize) != 0 ||
            (sp.buf[b].spec && tile(x->be, sp.buf[b].spec, main_b * sp.spec_tokens, chunk[dt], csize) != 0))
            return -1;
    }
    return x->be->sync(NULL);
}

int bench_pool_create_desc(bench_ctx *x, const ls_state_desc *d, int32_t capacity, ls_zero_policy zero)
{
    if (ls_state_desc_check(d) != 0)
        return -1;
    int64_t need = (int64_t)(capacity + 1) * ls_layer_bytes(d) * d->layers * (1 + d->spec_tokens);
    if (need > x->env->budget_bytes)
        return BENCH_OOM;
    /* The pool's slot operations are what a pool benchmark measures (the case's impl); for a
     * kernel benchmark they only prepare state, with the runtime's default impl. */
    const unsigned state_ops = BENCH_OP(LS_OP_STATE_COPY) | BENCH_OP(LS_OP_STATE_ACCEPT) | BENCH_OP(LS_OP_STATE_ZERO);
    int own = x->c && (x->c->e->ops & state_ops) != 0;
    ls_tuning def;
    const ls_impl *im = own ? x->im : ls_impl_default(x->be);
    if (!own && im)
        ls_tuning_default(im, &def);
    ls_pool_config cfg = {capacity, LS_PAD_LAST, zero, im, own ? x->tune : &def};
    x->pool = ls_pool_create(d, &cfg, x->be);
    /* The descriptor is valid, so a failure here is the backend running out of memory. */
    if (!x->pool)
        return BENCH_OOM;
    return pool_fill_random(x) == 0 ? 0 : -1;
}

int bench_pool_create(bench_ctx *x, int layers, ls_dtype dt, int spec_tokens, int32_t capacity,
                      ls_zero_policy zero)
{
    ls_state_desc d;
    if (ls_state_desc_from_shape(&x->c->shape, dt, spec_tokens, &d) != 0)
        return -1;
    d.layers = layers;
    return bench_pool_create_desc(x, &d, capacity, zero);
}

int bench_kernel_setup(bench_ctx *x, ls_state_desc *d, int32_t capacity, int64_t layer_inputs, int per_layer,
                       size_t priv_bytes)
{
    const bench_case *c = x->c;
    int64_t layer_pool = (int64_t)(capacity + 1) * ls_layer_bytes(d) * (1 + d->spec_tokens) + layer_inputs;
    int n_rot = bench_rotation_layers(x, c->e->bytes(x), layer_pool), rc;
    if (n_rot == 0)
        return BENCH_OOM;
    d->layers = n_rot;
    /* An impl whose slot 0 is a null block (LS_IMPL_NULL_SLOT0, vLLM's) gets a pool one slot
     * larger with slot 0 held, as its own server reserves it: the case's B slots never include it. */
    const int null0 = x->im && (x->im->caps & LS_IMPL_NULL_SLOT0) != 0;
    if ((rc = bench_pool_create_desc(x, d, capacity + null0, LS_ZERO_AT_FREE)) != 0)
        return rc;
    int32_t s0 = -1;
    if (null0 && (ls_pool_alloc(x->pool, 1, &s0) != 0 || s0 != 0))
        return ls_fail("bench: the null slot 0 of impl %s is not free (got slot %d)", x->im->name, s0);
    x->null_slot = null0;
    x->n_rot = x->rotated = n_rot;
    if ((per_layer ? bench_take_layer_slots(x, c->batch) : bench_take_slots(x, c->batch)) != 0)
        return -1;
    x->priv = bench_host_alloc(x, priv_bytes);
    return x->priv ? 0 : -1;
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

int32_t bench_case_capacity(const bench_case *c, const bench_env *env)
{
    int host = env && env->be && !(env->be->caps & LS_RT_DEVICE_MEMORY);
    int32_t s = c->pool_slots;
    if (s <= 0)
        s = c->tokens > 1 ? BENCH_SERVING_SLOTS_SPEC : host ? BENCH_SERVING_SLOTS_HOST : BENCH_SERVING_SLOTS;
    return s > c->batch ? s : c->batch;
}

int bench_take_layer_slots(bench_ctx *x, int32_t B)
{
    int32_t S = ls_pool_free_count(x->pool); /* every slot but a held null slot 0 */
    int L = x->n_rot;
    if (B > S)
        return ls_fail("bench: batch %d over the pool's %d free slots", B, S);
    int32_t *all = bench_host_alloc(x, (size_t)S * sizeof *all);
    /* each layer's list starts on a 128-byte boundary: kernels (the Triton peers' among them) may
     * be compiled for 16-byte-aligned index pointers */
    const size_t stride = ((size_t)B + 31) / 32 * 32;
    int32_t *h = bench_host_alloc(x, (size_t)L * stride * sizeof *h);
    if (!all || !h || ls_pool_alloc(x->pool, S, all) != 0)
        return -1;
    /* Per layer, a partial Fisher-Yates over every slot: B distinct ones in random order. */
    for (int l = 0; l < L; l++)
        for (int32_t i = 0; i < B; i++) {
            int32_t j = i + (int32_t)(bench_rand_u64(&x->rng) % (uint64_t)(S - i));
            int32_t t = all[i];
            all[i] = all[j];
            all[j] = t;
            h[(size_t)l * stride + i] = all[i];
        }
    int32_t *d = bench_dev_alloc(x, (size_t)L * stride * sizeof *d);
    if (!d || x->be->copy_h2d(d, h, (size_t)L * stride * sizeof *h) != 0)
        return -1;
    x->slots = h;
    x->slots_dev = d;
    x->layer_slots = (int)stride;
    return 0;
}

const int32_t *bench_layer_slots(const bench_ctx *x, int l)
{
    return x->layer_slots ? x->slots_dev + (size_t)l * (size_t)x->layer_slots : x->slots_dev;
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
    x->layer_slots = x->null_slot = 0;
    x->priv = NULL;
}
