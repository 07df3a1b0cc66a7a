/*
 * pool.c — lifecycle of the unified state pool, its buffer views (addresses, ls_state_params)
 * and the contiguous buffer infos of docs/pool.md Slot operations live in slots.c.
 *
 * A pool is n_conv + 1 buffers (conv list, then temporal), each [L, S+1, item] bytes in backend
 * memory, plus, when the descriptor asks for T draft tokens, a speculative twin [L, S+1, T, item].
 * All memory comes from the backend table and starts zeroed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool_private.h"

/* a * b into *out; 0, or -1 when the product leaves [0, INT64_MAX]. Operands are >= 0. */
static int mul_i64(int64_t a, int64_t b, int64_t *out)
{
    if (a != 0 && b > INT64_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

/* The pool needs these entries of the table; a backend missing one is rejected by name. */
static int backend_check(const ls_runtime *be)
{
    if (!be)
        return ls_fail("pool: create: backend is NULL");
    if (be->abi_version != LS_RUNTIME_ABI)
        return ls_fail("pool: create: backend '%s' has ABI %d, expected %d",
                       be->name ? be->name : "?", be->abi_version, LS_RUNTIME_ABI);
    const struct { const char *name; int present; } need[] = {
        {"mem_alloc", be->mem_alloc != NULL},     {"mem_free", be->mem_free != NULL},
        {"mem_set", be->mem_set != NULL},         {"copy_h2d", be->copy_h2d != NULL},
        {"copy_d2d", be->copy_d2d != NULL},       {"sync", be->sync != NULL},
        {"upload", be->upload != NULL},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!need[i].present)
            return ls_fail("pool: create: backend '%s' lacks %s", be->name ? be->name : "?",
                           need[i].name);
    return 0;
}

/* The impl whose state ops serve the slot operations, as the caller chose it (the pool picks no
 * default): it must run on this runtime, have all three state ops, and come with a tuning of
 * its knobs. */
static const ls_impl *impl_check(const ls_pool_config *cfg, const ls_runtime *be)
{
    const ls_impl *im = cfg->impl;
    if (!im) {
        ls_fail("pool: create: config has no impl (the caller picks one, e.g. ls_impl_default)");
        return NULL;
    }
    if (!cfg->tuning) {
        ls_fail("pool: create: config has no tuning for impl '%s' (e.g. ls_tuning_default)", im->name);
        return NULL;
    }
    if (cfg->tuning->n != im->n_knobs) {
        ls_fail("pool: create: tuning has %d knob values, impl '%s' declares %d knobs",
                (int)cfg->tuning->n, im->name, (int)im->n_knobs);
        return NULL;
    }
    if (strcmp(im->runtime, be->name) != 0) {
        ls_fail("pool: create: impl '%s' runs on runtime %s, the pool is on %s", im->name, im->runtime, be->name);
        return NULL;
    }
    if (!im->state_copy || !im->state_accept || !im->state_zero) {
        ls_fail("pool: create: impl '%s' lacks %s", im->name,
                !im->state_copy ? "state_copy" : !im->state_accept ? "state_accept" : "state_zero");
        return NULL;
    }
    return im;
}

static int config_check(const ls_pool_config *cfg)
{
    if (!cfg)
        return ls_fail("pool: create: config is NULL");
    if (cfg->capacity < 1 || cfg->capacity > INT32_MAX - 1)
        return ls_fail("pool: create: capacity %d must be in 1..%d", cfg->capacity, INT32_MAX - 1);
    if (cfg->pad != LS_PAD_LAST && cfg->pad != LS_PAD_FIRST)
        return ls_fail("pool: create: pad policy %d is not LS_PAD_LAST (0) or LS_PAD_FIRST (1)",
                       (int)cfg->pad);
    if (cfg->zero != LS_ZERO_AT_FREE && cfg->zero != LS_ZERO_AT_ALLOC)
        return ls_fail("pool: create: zero policy %d is not LS_ZERO_AT_FREE (0) or "
                       "LS_ZERO_AT_ALLOC (1)", (int)cfg->zero);
    return 0;
}

/* One zeroed backend allocation of `bytes`; NULL with the error set. */
static void *alloc_zeroed(const ls_runtime *be, int64_t bytes, const char *what, int b)
{
    if ((uint64_t)bytes > SIZE_MAX) {
        ls_fail("pool: create: %s buffer %d of %lld bytes exceeds the address space", what, b,
                (long long)bytes);
        return NULL;
    }
    void *ptr = be->mem_alloc((size_t)bytes);
    if (!ptr)
        return NULL; /* the backend set the error */
    if (be->mem_set(ptr, 0, (size_t)bytes, NULL)) {
        be->mem_free(ptr);
        return NULL;
    }
    return ptr;
}

/* Backend buffers: main [L, S+1, item] and, with T > 0, spec [L, S+1, T, item]; index scratch. */
static int alloc_buffers(ls_pool *p)
{
    const ls_runtime *be = p->be;
    const int64_t T = p->desc.spec_tokens;
    for (int b = 0; b < p->n_buf; b++) {
        int64_t main_bytes, spec_bytes = 0;
        if (mul_i64((int64_t)p->desc.layers * p->slots, p->item[b], &main_bytes) ||
            mul_i64(main_bytes, T, &spec_bytes))
            return ls_fail("pool: create: buffer %d of %d slots x %d layers overflows int64", b,
                           p->slots, p->desc.layers);
        if (!(p->main[b] = alloc_zeroed(be, main_bytes, "main", b)))
            return -1;
        if (T > 0 && !(p->spec[b] = alloc_zeroed(be, spec_bytes, "spec", b)))
            return -1;
    }
    /* the scratch of one operation's lists, then the identity table one-row lists point into */
    const int32_t iota_len = p->slots > p->desc.spec_tokens ? p->slots : p->desc.spec_tokens;
    p->dev_idx = be->mem_alloc((3 * (size_t)p->slots + (size_t)iota_len) * sizeof(int32_t));
    if (!p->dev_idx)
        return -1;
    p->dev_iota = p->dev_idx + 3 * (size_t)p->slots;
    p->iota_len = iota_len;
    int32_t *iota = malloc((size_t)iota_len * sizeof *iota);
    if (!iota)
        return ls_fail("pool: create: out of host memory for %d indices", iota_len);
    for (int32_t i = 0; i < iota_len; i++)
        iota[i] = i;
    const int rc = be->copy_h2d(p->dev_iota, iota, (size_t)iota_len * sizeof *iota);
    free(iota);
    return rc;
}

/* Host bookkeeping: ring free list in the policy's order, allocated flags, scratch. */
static int alloc_host(ls_pool *p)
{
    const int32_t S = p->cfg.capacity;
    p->ring = malloc((size_t)S * sizeof *p->ring);
    p->allocated = calloc((size_t)p->slots, 1);
    p->mark = calloc((size_t)p->slots, 1);
    p->host_idx = malloc(3 * (size_t)p->slots * sizeof *p->host_idx);
    p->host_pack = malloc(3 * (size_t)p->slots * sizeof *p->host_pack);
    if (!p->ring || !p->allocated || !p->mark || !p->host_idx || !p->host_pack)
        return ls_fail("pool: create: out of host memory for %d slots", p->slots);
    const int32_t first = p->cfg.pad == LS_PAD_FIRST ? 1 : 0;
    for (int32_t i = 0; i < S; i++)
        p->ring[i] = first + i;
    p->ring_head = 0;
    p->n_free = S;
    return 0;
}

/* Frees whatever a (possibly half-built) pool holds; no sync, and no error of its own. */
static void pool_release(ls_pool *p)
{
    const ls_runtime *be = p->be;
    for (int b = 0; b < p->n_buf; b++) {
        if (p->main[b])
            be->mem_free(p->main[b]);
        if (p->spec[b])
            be->mem_free(p->spec[b]);
    }
    if (p->dev_idx)
        be->mem_free(p->dev_idx);
    free(p->ring);
    free(p->allocated);
    free(p->mark);
    free(p->host_idx);
    free(p->host_pack);
    free(p);
}

/*
 * Validates descriptor, config and backend, then allocates every buffer zeroed and waits for the
 * zeroing (so kernels on any stream see zeros). On any failure whatever was allocated is released
 * and NULL is returned with ls_last_error() naming the cause.
 */
ls_pool *ls_pool_create(const ls_state_desc *d, const ls_pool_config *cfg, const ls_runtime *be)
{
    if (ls_state_desc_check(d) || config_check(cfg) || backend_check(be))
        return NULL;
    const ls_impl *im = impl_check(cfg, be);
    if (!im)
        return NULL;
    ls_pool *p = calloc(1, sizeof *p);
    if (!p) {
        ls_fail("pool: create: out of host memory");
        return NULL;
    }
    p->desc = *d;
    p->cfg = *cfg;
    p->be = be;
    p->impl = im;
    p->tuning = *cfg->tuning;
    p->cfg.tuning = NULL; /* the copy above is the pool's own */
    p->slots = cfg->capacity + 1;
    p->n_buf = d->n_conv + 1;
    for (int i = 0; i < d->n_conv; i++)
        p->item[i] = ls_conv_item_bytes(d, i);
    p->item[d->n_conv] = ls_temporal_item_bytes(d);
    if (alloc_host(p) || alloc_buffers(p) || be->sync(NULL)) {
        pool_release(p);
        return NULL;
    }
    return p;
}

void ls_pool_destroy(ls_pool *p)
{
    if (!p)
        return;
    p->be->sync(NULL); /* nothing of ours may still be in flight when the memory goes */
    pool_release(p);
}

/* ------------------------------------------------------------------------ accessors */

const ls_state_desc *ls_pool_desc(const ls_pool *p) { return &p->desc; }
const ls_runtime *ls_pool_runtime(const ls_pool *p) { return p->be; }
const ls_impl *ls_pool_impl(const ls_pool *p) { return p->impl; }
int32_t ls_pool_capacity(const ls_pool *p) { return p->cfg.capacity; }
int32_t ls_pool_slots(const ls_pool *p) { return p->slots; }
int32_t ls_pool_padding_slot(const ls_pool *p)
{
    return p->cfg.pad == LS_PAD_FIRST ? 0 : p->cfg.capacity;
}
int32_t ls_pool_free_count(const ls_pool *p) { return p->n_free; }
int32_t ls_pool_n_buffers(const ls_pool *p) { return p->n_buf; }

int ls_pool_is_allocated(const ls_pool *p, int32_t slot)
{
    return slot >= 0 && slot < p->slots && p->allocated[slot];
}

/* &X[layer][0] of buffer b (main or spec), NULL with the error set when out of range. */
static void *layer_view(const ls_pool *p, int b, int layer, int spec, const char *fn)
{
    if (b < 0 || b >= p->n_buf || layer < 0 || layer >= p->desc.layers) {
        ls_fail("pool: %s: buffer %d layer %d outside %d buffers x %d layers", fn, b, layer,
                p->n_buf, p->desc.layers);
        return NULL;
    }
    char *base = spec ? p->spec[b] : p->main[b];
    if (!base)
        return NULL; /* no spec buffers: not an error, the header promises NULL */
    int64_t per_layer = (int64_t)p->slots * p->item[b] * (spec ? p->desc.spec_tokens : 1);
    return base + (int64_t)layer * per_layer;
}

void *ls_pool_conv(const ls_pool *p, int i, int layer)
{
    if (i < 0 || i >= p->desc.n_conv) {
        ls_fail("pool: conv: conv index %d outside 0..%d", i, p->desc.n_conv - 1);
        return NULL;
    }
    return layer_view(p, i, layer, 0, "conv");
}

void *ls_pool_temporal(const ls_pool *p, int layer)
{
    return layer_view(p, p->n_buf - 1, layer, 0, "temporal");
}

void *ls_pool_spec_conv(const ls_pool *p, int i, int layer)
{
    if (i < 0 || i >= p->desc.n_conv) {
        ls_fail("pool: spec_conv: conv index %d outside 0..%d", i, p->desc.n_conv - 1);
        return NULL;
    }
    return layer_view(p, i, layer, 1, "spec_conv");
}

void *ls_pool_spec_temporal(const ls_pool *p, int layer)
{
    return layer_view(p, p->n_buf - 1, layer, 1, "spec_temporal");
}

/* The buffer table of the state ops, in pool order (conv..., temporal); no index arrays. */
void ls_pool_state_params(const ls_pool *p, ls_state_params *out)
{
    memset(out, 0, sizeof *out);
    out->n_buffers = p->n_buf;
    out->layers = p->desc.layers;
    out->slots = p->slots;
    out->spec_tokens = p->desc.spec_tokens;
    for (int b = 0; b < p->n_buf; b++) {
        out->buf[b].main = p->main[b];
        out->buf[b].spec = p->spec[b];
        out->buf[b].item_bytes = p->item[b];
    }
}

/*
 * docs/pool.md buffer infos, one per (tensor, layer), layer-minor:
 *   conv[0..n_conv-1], temporal, then with include_spec and spec buffers present
 *   intermediate_ssm (spec temporal) and intermediate_conv_window[0..n_conv-1].
 * Spec entries have item_len = T x slot bytes (one slot's T steps). Writes at most `max`
 * entries; with out == NULL returns how many entries the full list has.
 */
int ls_pool_buf_infos(const ls_pool *p, int include_spec, ls_buf_info *out, int max)
{
    const int with_spec = include_spec && p->desc.spec_tokens > 0;
    const int total = p->n_buf * p->desc.layers * (with_spec ? 2 : 1);
    if (!out)
        return total;
    /* tensor order as (buffer, spec?) pairs: conv..., temporal, spec temporal, spec conv... */
    int order_b[2 * LS_MAX_BUFFERS], order_spec[2 * LS_MAX_BUFFERS], n_t = 0;
    for (int b = 0; b < p->n_buf; b++, n_t++) {
        order_b[n_t] = b;
        order_spec[n_t] = 0;
    }
    if (with_spec) {
        order_b[n_t] = p->n_buf - 1;
        order_spec[n_t++] = 1;
        for (int b = 0; b < p->n_buf - 1; b++, n_t++) {
            order_b[n_t] = b;
            order_spec[n_t] = 1;
        }
    }
    int n = 0;
    for (int t = 0; t < n_t; t++) {
        const int b = order_b[t], spec = order_spec[t];
        const int64_t item = p->item[b] * (spec ? p->desc.spec_tokens : 1);
        for (int l = 0; l < p->desc.layers && n < max; l++, n++) {
            out[n].data_ptr = layer_view(p, b, l, spec, "buf_infos");
            out[n].item_len = item;
            out[n].data_len = item * p->slots;
        }
    }
    return n;
}

/* ------------------------------------------------------------------------ index upload */

/* 1 when every given one-entry list names an entry of the identity table. */
static int one_row_in_iota(const ls_pool *p, const int32_t *const host[3])
{
    for (int k = 0; k < 3; k++)
        if (host[k] && (host[k][0] < 0 || host[k][0] >= p->iota_len))
            return 0; /* cannot happen for validated lists; the upload path stays correct */
    return 1;
}

/*
 * Packs up to three host index lists (src, dst, step: whichever are given, in that order) of n
 * entries into the host staging, copies them to the backend scratch in one piece and points
 * `sp` at them. n <= slots always holds for validated lists, so the scratch (3 * slots) fits.
 * One-row lists (a fork, a one-slot alloc, free, copy or accept) upload nothing: each points at
 * its value's entry of the identity table written at create, so the state op is the only launch.
 * A list of at most LS_UPLOAD_MAX_BYTES goes through be->upload, which never waits for the
 * device (a fork's or a small alloc's whole cost would otherwise be host-device round trips);
 * a longer one through copy_h2d, which waits for the default stream first. Either way the
 * scratch is written in stream order after the previous operation's kernels read it.
 */
int ls_pool_upload_rows(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst,
                        const int32_t *step, ls_state_params *sp)
{
    ls_pool_state_params(p, sp);
    sp->count = n;
    const int32_t *host[3] = {src, dst, step};
    const int32_t **field[3] = {&sp->src, &sp->dst, &sp->step};
    if (n == 1 && one_row_in_iota(p, host)) {
        for (int k = 0; k < 3; k++)
            if (host[k])
                *field[k] = p->dev_iota + host[k][0];
        return 0;
    }
    size_t words = 0;
    for (int k = 0; k < 3; k++) {
        if (!host[k])
            continue;
        memcpy(p->host_pack + words, host[k], (size_t)n * sizeof(int32_t));
        *field[k] = p->dev_idx + words;
        words += (size_t)n;
    }
    const size_t bytes = words * sizeof(int32_t);
    if (bytes == 0)
        return 0;
    return bytes <= LS_UPLOAD_MAX_BYTES ? p->be->upload(p->dev_idx, p->host_pack, bytes, NULL)
                                        : p->be->copy_h2d(p->dev_idx, p->host_pack, bytes);
}
