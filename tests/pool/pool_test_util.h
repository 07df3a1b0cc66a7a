/*
 * pool_test_util.h — helpers shared by the pool tests: backend choice, pool construction from a
 * preset, and reading/writing one slot's rows through the backend table (copy_h2d / copy_d2h),
 * so the same test code would run on any backend whose memory is not host-readable.
 *
 * Slot contents are random odd BYTES (never zero) generated from a seed per
 * (slot content seed, buffer, layer); "zero" and "seeded" contents are therefore never confused,
 * and comparing bytes means NaN bit patterns cannot pass or fail by accident.
 */
#ifndef POOL_TEST_UTIL_H
#define POOL_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "ls_pool.h"
#include "ls_test.h"

/* Runtime under test: $LS_TEST_BACKEND or "host"; exit 77 (skipped) when cuda is asked for and
 * unavailable; any other name is a mistake and fails (a typo must not skip every test). */
static inline const ls_runtime *pt_backend(void)
{
    const char *name = getenv("LS_TEST_BACKEND");
    if (name && *name && strcmp(name, "host") != 0 && strcmp(name, "cuda") != 0) {
        fprintf(stderr, "LS_TEST_BACKEND=%s: not host or cuda\n", name);
        exit(1);
    }
    const ls_runtime *be = ls_runtime_get(name && *name ? name : "host");
    if (!be) {
        fprintf(stderr, "skipped: %s\n", ls_last_error());
        exit(77);
    }
    return be;
}

/* Descriptor of preset i at tp with the given temporal dtype and spec tokens; fatal on error. */
static inline ls_state_desc pt_desc(int i, int tp, ls_dtype tdt, int spec)
{
    ls_shape s;
    ls_state_desc d;
    const ls_model *m = ls_model_at(i);
    LS_REQUIRE(m != NULL);
    if (ls_shape_from_model(m, tp, &s) || ls_state_desc_from_shape(&s, tdt, spec, &d)) {
        fprintf(stderr, "pt_desc(%s, tp %d): %s\n", m->name, tp, ls_last_error());
        exit(1);
    }
    return d;
}

/*
 * The data tests (they write and compare every byte of many slots) use the preset at tp 8 with
 * its layer count capped at PT_DATA_LAYERS: every buffer keeps its real per-rank shape and
 * orientation, and the pool's per-layer loop is the same for any L, so this only trims bytes
 * (ASan builds stay quick). Full-L layouts are covered by the views, bufinfo and budget tests.
 */
#define PT_DATA_LAYERS 4
static inline ls_state_desc pt_data_desc(int i, ls_dtype tdt, int spec)
{
    ls_state_desc d = pt_desc(i, 8, tdt, spec);
    if (d.layers > PT_DATA_LAYERS)
        d.layers = PT_DATA_LAYERS;
    return d;
}

static inline ls_pool *pt_pool(const ls_state_desc *d, int32_t cap, ls_pad_policy pad,
                               ls_zero_policy zero)
{
    const ls_impl *im = ls_impl_default(pt_backend()); /* the pool's slot ops: the runtime's own */
    ls_tuning tune;
    ls_tuning_default(im, &tune);
    ls_pool_config cfg = {.capacity = cap, .pad = pad, .zero = zero, .impl = im, .tuning = &tune};
    ls_pool *p = ls_pool_create(d, &cfg, pt_backend());
    if (!p) {
        fprintf(stderr, "ls_pool_create: %s\n", ls_last_error());
        exit(1);
    }
    return p;
}

static inline int64_t pt_item(const ls_pool *p, int b)
{
    const ls_state_desc *d = ls_pool_desc(p);
    return b < d->n_conv ? ls_conv_item_bytes(d, b) : ls_temporal_item_bytes(d);
}

/* Address of slot `slot` (spec: draft step `step`, else step < 0) of buffer b, layer l. */
static inline char *pt_row_addr(const ls_pool *p, int b, int l, int32_t slot, int step)
{
    const ls_state_desc *d = ls_pool_desc(p);
    const int64_t item = pt_item(p, b);
    if (step < 0) {
        char *base = b < d->n_conv ? ls_pool_conv(p, b, l) : ls_pool_temporal(p, l);
        return base + (int64_t)slot * item;
    }
    char *base = b < d->n_conv ? ls_pool_spec_conv(p, b, l) : ls_pool_spec_temporal(p, l);
    return base + ((int64_t)slot * d->spec_tokens + step) * item;
}

static inline int64_t pt_max_item(const ls_pool *p)
{
    int64_t m = 0;
    for (int b = 0; b < ls_pool_n_buffers(p); b++)
        if (pt_item(p, b) > m)
            m = pt_item(p, b);
    return m;
}

/* PRNG state of the pattern for (seed, b, l). */
static inline uint64_t pt_pattern_state(uint64_t seed, int b, int l)
{
    return seed * 0x100000001b3ull + (uint64_t)b * 7919u + (uint64_t)l * 104729u + 1u;
}

/* Next 8 pattern bytes: random odd bytes, so never zero. */
static inline uint64_t pt_pattern_word(uint64_t *st)
{
    return ls_test_rand_u64(st) | 0x0101010101010101ull;
}

/* Deterministic non-zero bytes for (seed, b, l). */
static inline void pt_pattern(unsigned char *buf, int64_t n, uint64_t seed, int b, int l)
{
    uint64_t st = pt_pattern_state(seed, b, l);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint64_t r = pt_pattern_word(&st);
        memcpy(buf + i, &r, 8);
    }
    if (i < n) {
        const uint64_t r = pt_pattern_word(&st);
        memcpy(buf + i, &r, (size_t)(n - i));
    }
}

/* buf[0..n) equals pt_pattern(seed, b, l), compared word by word as it is generated. */
static inline int pt_pattern_equal(const unsigned char *buf, int64_t n, uint64_t seed, int b, int l)
{
    uint64_t st = pt_pattern_state(seed, b, l);
    int64_t i = 0;
    uint64_t diff = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t got;
        memcpy(&got, buf + i, 8);
        diff |= got ^ pt_pattern_word(&st);
    }
    if (i < n) {
        const uint64_t r = pt_pattern_word(&st);
        diff |= (uint64_t)(memcmp(buf + i, &r, (size_t)(n - i)) != 0);
    }
    return diff == 0;
}

/* buf[0..n) is all zero bytes: the first byte is zero and every byte equals its successor. */
static inline int pt_all_zero(const unsigned char *buf, int64_t n)
{
    return n == 0 || (buf[0] == 0 && memcmp(buf, buf + 1, (size_t)n - 1) == 0);
}

/* Write the seeded pattern into every buffer and layer of one slot (main, or spec step). */
static inline void pt_fill(const ls_pool *p, int32_t slot, int step, uint64_t seed)
{
    const ls_runtime *be = ls_pool_runtime(p);
    unsigned char *buf = malloc((size_t)pt_max_item(p));
    LS_REQUIRE(buf != NULL);
    for (int b = 0; b < ls_pool_n_buffers(p); b++)
        for (int l = 0; l < ls_pool_desc(p)->layers; l++) {
            pt_pattern(buf, pt_item(p, b), seed, b, l);
            LS_REQUIRE(be->copy_h2d(pt_row_addr(p, b, l, slot, step), buf,
                                    (size_t)pt_item(p, b)) == 0);
        }
    free(buf);
}

enum { PT_ZERO = -1 };

/*
 * Number of (buffer, layer) rows of one slot that do NOT hold the expected content:
 * the seeded pattern, or all zero bytes when seed == PT_ZERO.
 */
static inline int pt_mismatch(const ls_pool *p, int32_t slot, int step, int64_t seed)
{
    const ls_runtime *be = ls_pool_runtime(p);
    unsigned char *got = malloc((size_t)pt_max_item(p));
    LS_REQUIRE(got != NULL);
    int bad = 0;
    for (int b = 0; b < ls_pool_n_buffers(p); b++)
        for (int l = 0; l < ls_pool_desc(p)->layers; l++) {
            const int64_t n = pt_item(p, b);
            memset(got, 0xA5, (size_t)n); /* poison: a copy that does nothing cannot match */
            LS_REQUIRE(be->copy_d2h(got, pt_row_addr(p, b, l, slot, step), (size_t)n) == 0);
            bad += seed == PT_ZERO ? !pt_all_zero(got, n)
                                   : !pt_pattern_equal(got, n, (uint64_t)seed, b, l);
        }
    free(got);
    return bad;
}

/* Rows of the pool's layout: buffers x layers (what pt_mismatch can count at most). */
static inline int pt_rows(const ls_pool *p)
{
    return ls_pool_n_buffers(p) * ls_pool_desc(p)->layers;
}

/* ls_last_error() contains `needle` (prints the message when it does not). */
static inline int pt_error_has(const char *needle)
{
    const char *e = ls_last_error();
    if (strstr(e, needle))
        return 1;
    fprintf(stderr, "  error \"%s\" lacks \"%s\"\n", e, needle);
    return 0;
}

/* Snapshot of the host-visible pool bookkeeping, to assert "unchanged" after a failed op. */
typedef struct pt_snap {
    int32_t free_count;
    unsigned char alloc[4096];
} pt_snap;

static inline pt_snap pt_snapshot(const ls_pool *p)
{
    pt_snap s;
    memset(&s, 0, sizeof s);
    s.free_count = ls_pool_free_count(p);
    for (int32_t i = 0; i < ls_pool_slots(p) && i < 4096; i++)
        s.alloc[i] = (unsigned char)ls_pool_is_allocated(p, i);
    return s;
}

static inline int pt_same(const pt_snap *a, const pt_snap *b)
{
    return a->free_count == b->free_count && memcmp(a->alloc, b->alloc, sizeof a->alloc) == 0;
}

#endif /* POOL_TEST_UTIL_H */
