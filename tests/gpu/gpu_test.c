/*
 * gpu_test.c — shared utilities of the GPU-vs-reference tests; see gpu_test.h for the contract.
 */
#include "gpu_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ls_test.h"

static const ls_runtime *g_be;
static const ls_impl *g_impl;
static ls_tuning g_tuning;

/* Prints the reason with the backend's last error and exits 1 (a setup failure, not a check). */
static void gt_die(const char *what)
{
    fprintf(stderr, "gpu test setup failed: %s: %s\n", what, ls_last_error());
    exit(1);
}

const ls_runtime *gt_init(void)
{
    /* LS_GPU_TEST_BACKEND=host runs the test against the host backend (reference vs itself):
     * a self-test of the test's plumbing on machines without a GPU. */
    const char *name = getenv("LS_GPU_TEST_BACKEND");
    const ls_runtime *be = name && *name ? ls_runtime_get(name) : ls_runtime_get("cuda");
    if (!be || be->device_count() <= 0) {
        printf("no GPU\n");
        exit(77);
    }
    if (be->set_device(0) != 0)
        gt_die("set_device(0)");
    ls_device_info info;
    if (be->device_info(0, &info) != 0)
        gt_die("device_info(0)");
    printf("device: %s (%d SMs, driver %d, runtime %d)%s\n", info.name, info.sm_count,
           info.driver_version, info.runtime_version, gt_quick() ? " [quick]" : "");
    g_be = be;
    g_impl = ls_impl_default(be);
    if (!g_impl)
        gt_die("impl of the runtime");
    ls_tuning_default(g_impl, &g_tuning);
    return be;
}

const ls_impl *gt_impl(void) { return g_impl; }

const ls_tuning *gt_tuning(void) { return &g_tuning; }

void gt_set_tuning(const char *spec)
{
    if (!g_impl)
        gt_die("gt_set_tuning before gt_init");
    ls_tuning_default(g_impl, &g_tuning);
    if (spec && *spec && g_impl->n_knobs > 0 && ls_tuning_parse(g_impl, spec, &g_tuning) != 0)
        gt_die("tuning");
    char buf[512];
    if (ls_tuning_string(g_impl, &g_tuning, buf, sizeof buf) < 0)
        buf[0] = 0;
    printf("=== tuning: %s%s\n", g_impl->n_knobs ? buf : "(impl without knobs) ", g_impl->n_knobs ? "" : spec ? spec : "");
}

int gt_quick(void)
{
    const char *q = getenv("LS_GPU_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* ------------------------------------------------------------------ mirrored buffers */

gt_buf gt_buf_new(size_t bytes)
{
    gt_buf b;
    b.bytes = bytes;
    b.h = malloc(bytes ? bytes : 1);
    b.got = malloc(bytes ? bytes : 1);
    if (!b.h || !b.got) {
        fprintf(stderr, "gpu test setup failed: host malloc(%zu bytes)\n", bytes);
        exit(1);
    }
    if (!g_be)
        gt_die("gt_buf_new before gt_init");
    b.d = g_be->mem_alloc(bytes);
    if (!b.d)
        gt_die("device alloc");
    return b;
}

void gt_buf_free(gt_buf *b)
{
    free(b->h);
    free(b->got);
    if (g_be && b->d)
        g_be->mem_free(b->d);
    memset(b, 0, sizeof *b);
}

void gt_upload(const gt_buf *b)
{
    if (b->bytes && g_be->copy_h2d(b->d, b->h, b->bytes) != 0)
        gt_die("upload");
}

void gt_upload_range(const gt_buf *b, size_t off, size_t len)
{
    if (off + len > b->bytes) {
        fprintf(stderr, "gpu test setup failed: upload range %zu+%zu past %zu bytes\n", off, len, b->bytes);
        exit(1);
    }
    if (len && g_be->copy_h2d((char *)b->d + off, (const char *)b->h + off, len) != 0)
        gt_die("upload range");
}

void gt_download(const gt_buf *b)
{
    if (g_be->sync(NULL) != 0)
        gt_die("sync before download");
    if (b->bytes && g_be->copy_d2h(b->got, b->d, b->bytes) != 0)
        gt_die("download");
}

void gt_poison(const gt_buf *b)
{
    memset(b->h, GT_POISON, b->bytes);
    if (b->bytes && (g_be->mem_set(b->d, GT_POISON, b->bytes, NULL) != 0 || g_be->sync(NULL) != 0))
        gt_die("poison");
}

/* ------------------------------------------------------------------ random data */

void gt_fill_bf16(uint64_t *seed, uint16_t *p, size_t n, double lo, double hi)
{
    int nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        p[i] = ls_f32_to_bf16((float)ls_test_uniform(seed, lo, hi));
        nonzero |= (p[i] & 0x7fffu) != 0;
    }
    if (n && !nonzero) {
        fprintf(stderr, "gt_fill_bf16: all-zero data (range [%g, %g))\n", lo, hi);
        exit(1);
    }
}

void gt_fill_f32(uint64_t *seed, float *p, size_t n, double lo, double hi)
{
    int nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        p[i] = (float)ls_test_uniform(seed, lo, hi);
        nonzero |= p[i] != 0.0f;
    }
    if (n && !nonzero) {
        fprintf(stderr, "gt_fill_f32: all-zero data (range [%g, %g))\n", lo, hi);
        exit(1);
    }
}

void gt_fill(uint64_t *seed, void *p, ls_dtype dt, size_t n, double lo, double hi)
{
    if (dt == LS_F32)
        gt_fill_f32(seed, (float *)p, n, lo, hi);
    else
        gt_fill_bf16(seed, (uint16_t *)p, n, lo, hi);
}

/* 8 bytes per draw; the tail byte-wise. Random bytes may form NaN patterns: fine for copies,
 * which compare bytes, never values. Bytes equal to the poison are avoided so a missed copy
 * of a payload can never look like "left as poison". */
void gt_fill_bytes(uint64_t *seed, void *p, size_t n)
{
    unsigned char *c = (unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t r = ls_test_rand_u64(seed);
        memcpy(c + i, &r, 8);
    }
    for (; i < n; i++)
        c[i] = (unsigned char)ls_test_rand_u64(seed);
    for (i = 0; i < n; i++)
        if (c[i] == GT_POISON)
            c[i] = 0x5a;
}

int gt_rand_int(uint64_t *seed, int lo, int hi)
{
    return lo + (int)(ls_test_rand_u64(seed) % (uint64_t)(hi - lo + 1));
}

void gt_random_slots(uint64_t *seed, int32_t *out, int rows, int slots, double pad_frac)
{
    if (rows > slots || rows < 0) {
        fprintf(stderr, "gt_random_slots: rows=%d > slots=%d\n", rows, slots);
        exit(1);
    }
    int32_t *perm = (int32_t *)malloc(sizeof(int32_t) * (size_t)(slots ? slots : 1));
    if (!perm) {
        fprintf(stderr, "gt_random_slots: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < slots; i++)
        perm[i] = i;
    for (int i = 0; i < rows; i++) { /* partial Fisher-Yates */
        int j = gt_rand_int(seed, i, slots - 1);
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        out[i] = perm[i];
    }
    free(perm);
    if (rows < 3 || pad_frac <= 0.0)
        return;
    int npad = (int)(rows * pad_frac + 0.5);
    if (npad < 1)
        npad = 1;
    if (npad > rows - 1)
        npad = rows - 1;
    for (int k = 0; k < npad; k++) {
        int r;
        do
            r = gt_rand_int(seed, 0, rows - 1);
        while (out[r] < 0);
        out[r] = -1;
    }
}

/* ------------------------------------------------------------------ comparison */

/* The spacing of bf16 values at |x|: 2^(floor(log2 |x|) - 7) for normal values, 2^-133 below.
 * Read from the double's exponent field (x >= 2^-126 is a normal double): frexp / ldexp per
 * element were a tenth of a GPU test's host time. */
double gt_ulp_bf16(double x)
{
    x = fabs(x);
    if (!(x >= 0x1p-126))
        return 0x1p-133; /* subnormal spacing (NaN too) */
    if (x == INFINITY)
        return 0x1p-8; /* what frexp's exponent 0 for an infinity gave: such a ref fails anyway */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int e = (int)((bits >> 52) & 0x7ff) - 1023; /* x = 1.m * 2^e */
    const uint64_t ulp = (uint64_t)(e - 7 + 1023) << 52;
    double u;
    memcpy(&u, &ulp, sizeof u);
    return u;
}

/* Element access for gt_compare, specialised for 4- and 2-byte elements when inlined with a
 * constant size: whether element i is the poison, whether got and ref hold the same bits, and its
 * value (fp32, else bf16, as the ops' dtypes) and whether it is finite. */
static inline int gt_poison_at(const unsigned char *p, size_t i, size_t sz)
{
    if (sz == 4) {
        uint32_t w;
        memcpy(&w, p + i * 4, 4);
        return w == (uint32_t)GT_POISON * 0x01010101u;
    }
    if (sz == 2) {
        uint16_t w;
        memcpy(&w, p + i * 2, 2);
        return w == (uint16_t)(GT_POISON * 0x0101u);
    }
    for (size_t k = 0; k < sz; k++)
        if (p[i * sz + k] != GT_POISON)
            return 0;
    return 1;
}

static inline int gt_same_at(const unsigned char *a, const unsigned char *b, size_t i, size_t sz)
{
    if (sz == 4) {
        uint32_t x, y;
        memcpy(&x, a + i * 4, 4);
        memcpy(&y, b + i * 4, 4);
        return x == y;
    }
    if (sz == 2) {
        uint16_t x, y;
        memcpy(&x, a + i * 2, 2);
        memcpy(&y, b + i * 2, 2);
        return x == y;
    }
    return memcmp(a + i * sz, b + i * sz, sz) == 0;
}

static inline double gt_value_at(const unsigned char *p, size_t i, int f32)
{
    if (f32) {
        float v;
        memcpy(&v, p + i * 4, 4);
        return (double)v;
    }
    uint16_t w;
    memcpy(&w, p + i * 2, 2);
    return (double)ls_bf16_to_f32(w);
}

/* Whether element i is finite (an infinity or NaN never passes a numeric compare). */
static inline int gt_finite_at(const unsigned char *p, size_t i, size_t sz, int f32)
{
    if (sz == 4 && f32) {
        uint32_t w;
        memcpy(&w, p + i * 4, 4);
        return (w & 0x7f800000u) != 0x7f800000u;
    }
    if (sz == 2 && !f32) {
        uint16_t w;
        memcpy(&w, p + i * 2, 2);
        return (w & 0x7f80u) != 0x7f80u;
    }
    return isfinite(gt_value_at(p, i, f32));
}

static double gt_value(ls_dtype dt, const void *p, size_t i)
{
    return gt_value_at((const unsigned char *)p, i, dt == LS_F32);
}

static int gt_is_poison(ls_dtype dt, const void *p, size_t i)
{
    return gt_poison_at((const unsigned char *)p, i, ls_dtype_size(dt));
}

/* Elements [g0, g1) (one tolerance group, or a run of ungrouped elements) into r. A run whose
 * bytes match the reference's is only counted: its poison stays poison and its touched elements
 * have error 0. */
static inline __attribute__((always_inline)) void gt_compare_run(const unsigned char *got, const unsigned char *ref,
                                                                 size_t g0, size_t g1, size_t sz, int f32,
                                                                 const gt_tol *tol, gt_cmp *r)
{
    if (memcmp(got + g0 * sz, ref + g0 * sz, (g1 - g0) * sz) == 0) {
        size_t untouched = 0, nonfinite = 0;
        for (size_t i = g0; i < g1; i++) {
            const int poison = gt_poison_at(ref, i, sz);
            untouched += (size_t)poison;
            nonfinite += (size_t)(!poison && !gt_finite_at(ref, i, sz, f32));
        }
        if (nonfinite == 0) { /* else the full loop below, which fails them (|inf - inf| is NaN) */
            r->untouched += untouched;
            r->touched += g1 - g0 - untouched;
            return;
        }
    }
    double gmax = 0.0;
    if (tol->group)
        for (size_t i = g0; i < g1; i++)
            if (!gt_poison_at(ref, i, sz)) {
                double a = fabs(gt_value_at(ref, i, f32));
                if (a > gmax)
                    gmax = a;
            }
    for (size_t i = g0; i < g1; i++) {
        if (gt_poison_at(ref, i, sz)) {
            r->untouched++;
            if (!gt_same_at(got, ref, i, sz)) {
                r->poison_bad++;
                if (r->first_bad == SIZE_MAX)
                    r->first_bad = i;
            }
            continue;
        }
        r->touched++;
        double rv = gt_value_at(ref, i, f32), gv = gt_value_at(got, i, f32);
        double err = fabs(gv - rv);
        double t = tol->atol + tol->rtol * (tol->group ? gmax : fabs(rv)) +
                   (tol->ulps != 0.0 ? tol->ulps * gt_ulp_bf16(rv) : 0.0);
        int ok = err <= t; /* NaN in either side fails here */
        double ratio = t > 0.0 ? err / t : (err == 0.0 ? 0.0 : INFINITY);
        if (!(err == err))
            err = ratio = INFINITY;
        if (err > r->worst_err)
            r->worst_err = err;
        if (ratio > r->worst_ratio) {
            r->worst_ratio = ratio;
            r->worst_idx = i;
        }
        if (!ok) {
            r->bad++;
            if (r->first_bad == SIZE_MAX)
                r->first_bad = i;
        }
    }
}

int gt_compare(const char *what, ls_dtype dt, const void *got, const void *ref, size_t n,
               gt_tol tol, gt_cmp *out)
{
    gt_cmp r;
    memset(&r, 0, sizeof r);
    r.first_bad = SIZE_MAX;
    const size_t sz = ls_dtype_size(dt);
    const int f32 = dt == LS_F32;
    const unsigned char *a = (const unsigned char *)got, *b = (const unsigned char *)ref;
    /* groups as the tolerance defines them; ungrouped elements in runs of 4096 (each its own scale) */
    const size_t g = tol.group ? tol.group : 4096;
    for (size_t g0 = 0; g0 < n; g0 += g) {
        const size_t g1 = g0 + g < n ? g0 + g : n;
        if (sz == 4 && f32)
            gt_compare_run(a, b, g0, g1, 4, 1, &tol, &r);
        else if (sz == 2 && !f32)
            gt_compare_run(a, b, g0, g1, 2, 0, &tol, &r);
        else
            gt_compare_run(a, b, g0, g1, sz, f32, &tol, &r);
    }
    int fail = r.bad || r.poison_bad;
    printf("  %-28s touched=%zu untouched=%zu worst_err=%.3g (%.3g x tol) bad=%zu poison_bad=%zu%s\n",
           what, r.touched, r.untouched, r.worst_err, r.worst_ratio, r.bad, r.poison_bad,
           fail ? "  FAIL" : "");
    if (fail) {
        size_t i = r.first_bad;
        fprintf(stderr, "  %s: first failure at element %zu: got %.9g ref %.9g%s\n", what, i,
                gt_value(dt, got, i), gt_value(dt, ref, i),
                gt_is_poison(dt, ref, i) ? " (should have stayed poison)" : "");
    }
    if (out)
        *out = r;
    return fail;
}

int gt_compare_buf(const char *what, ls_dtype dt, const gt_buf *b, size_t n, gt_tol tol, double *worst)
{
    gt_cmp r;
    int bad = gt_compare(what, dt, b->got, b->h, n, tol, &r) != 0;
    if (r.touched == 0) {
        printf("  %s: no element was written\n", what);
        bad = 1;
    }
    if (r.worst_ratio > *worst)
        *worst = r.worst_ratio;
    return bad;
}

int gt_compare_bytes(const char *what, const void *got, const void *ref, size_t bytes)
{
    const unsigned char *a = (const unsigned char *)got, *b = (const unsigned char *)ref;
    size_t ndiff = 0, first = SIZE_MAX;
    if (memcmp(a, b, bytes) != 0)
        for (size_t i = 0; i < bytes; i++)
            if (a[i] != b[i]) {
                if (first == SIZE_MAX)
                    first = i;
                ndiff++;
            }
    printf("  %-28s %zu bytes, %zu differ%s\n", what, bytes, ndiff, ndiff ? "  FAIL" : "");
    if (ndiff)
        fprintf(stderr, "  %s: first differing byte %zu: got 0x%02x ref 0x%02x\n", what, first, a[first],
                b[first]);
    return ndiff != 0;
}
