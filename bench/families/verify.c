/*
 * verify.c — the correctness gate's shared machinery. Before a case is timed, its family runs the
 * op on the backend and the host reference (ls_ref_*) over a SAMPLE of at most BENCH_VERIFY_ROWS
 * request rows gathered into a small sub-batch (rows are independent), starting from the same
 * random states, and compares outputs, final states and intermediate states. The error of one
 * tensor is max|dev - ref| / max|ref|; the case's max_rel_err is the worst tensor. NaN or inf
 * anywhere makes the error +inf, so NaN never passes. A case over tolerance is fail_numerics and
 * is not timed.
 *
 * Outputs are poisoned (NaN) on both sides before the op, so an output the op forgot to write
 * shows up as NaN.
 */
#include <math.h>
#include <string.h>

#include "family.h"

double bench_verify_tolerance(const bench_case *c)
{
    if (strcmp(c->e->family, "pool") == 0)
        return 0.0; /* pure data movement: bit-exact */
    /* bf16 outputs/state round to 2^-8 relative; fp32 math vs the float64 oracle is far below. */
    return c->state_dtype == LS_BF16 && strcmp(c->e->family, "conv1d_update") != 0 ? 2e-2 : 1e-2;
}

static double value_at(const void *p, size_t i, ls_dtype dt)
{
    return dt == LS_BF16 ? (double)ls_bf16_to_f32(((const uint16_t *)p)[i]) : (double)((const float *)p)[i];
}

double bench_compare(const void *dev, const void *ref, size_t n, ls_dtype dt, double *worst)
{
    double max_diff = 0, max_ref = 0, err;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = value_at(dev, i, dt), r = value_at(ref, i, dt);
        if (!isfinite(d) || !isfinite(r)) {
            bad = 1;
            break;
        }
        double diff = fabs(d - r);
        if (diff > max_diff)
            max_diff = diff;
        if (fabs(r) > max_ref)
            max_ref = fabs(r);
    }
    if (bad)
        err = INFINITY;
    else if (max_ref == 0)
        err = max_diff == 0 ? 0 : INFINITY;
    else
        err = max_diff / max_ref;
    if (!(err <= *worst)) /* also replaces a NaN worst */
        *worst = err;
    return err;
}

int bench_poison(bench_ctx *x, void *dev_ptr, size_t n, ls_dtype dt)
{
    /* 0xff bytes are NaN in both bf16 (0xffff) and fp32 (0xffffffff). */
    if (x->be->mem_set(dev_ptr, 0xff, n * ls_dtype_size(dt), NULL) != 0)
        return -1;
    return x->be->sync(NULL);
}

int bench_d2h(bench_ctx *x, void *host, const void *dev, size_t bytes)
{
    return x->be->copy_d2h(host, dev, bytes);
}

void *bench_gather(bench_ctx *x, const void *src, size_t row_bytes, const int *rows, int n, void **dev_out)
{
    char *h = bench_host_alloc(x, row_bytes * (size_t)n);
    if (!h)
        return NULL;
    for (int k = 0; k < n; k++)
        memcpy(h + row_bytes * (size_t)k, (const char *)src + row_bytes * (size_t)rows[k], row_bytes);
    if (dev_out) {
        void *d = bench_dev_alloc(x, row_bytes * (size_t)n);
        if (!d || x->be->copy_h2d(d, h, row_bytes * (size_t)n) != 0)
            return NULL;
        *dev_out = d;
    }
    return h;
}

void *bench_output_pair(bench_ctx *x, size_t n, ls_dtype dt, void **dev_out)
{
    size_t bytes = n * ls_dtype_size(dt);
    void *h = bench_host_alloc(x, bytes);
    void *d = bench_dev_alloc(x, bytes);
    if (!h || !d)
        return NULL;
    memset(h, 0xff, bytes);
    if (bench_poison(x, d, n, dt) != 0)
        return NULL;
    *dev_out = d;
    return h;
}

void *bench_state_seed(bench_ctx *x, void *dev_base, int64_t slot_stride, size_t item, ls_dtype dt,
                       const int32_t *slots, int n)
{
    size_t es = ls_dtype_size(dt);
    char *h = bench_host_rand(x, item * (size_t)n, dt, -1.0, 1.0);
    if (!h)
        return NULL;
    for (int k = 0; k < n; k++) {
        char *dst = (char *)dev_base + (size_t)slots[k] * (size_t)slot_stride * es;
        if (x->be->copy_h2d(dst, h + item * es * (size_t)k, item * es) != 0)
            return NULL;
    }
    return h;
}

void *bench_state_poison(bench_ctx *x, void *dev_base, int64_t slot_stride, size_t item, ls_dtype dt,
                         const int32_t *slots, int n)
{
    size_t es = ls_dtype_size(dt);
    char *h = bench_host_alloc(x, item * es * (size_t)n);
    if (!h)
        return NULL;
    memset(h, 0xff, item * es * (size_t)n);
    for (int k = 0; k < n; k++) {
        char *dst = (char *)dev_base + (size_t)slots[k] * (size_t)slot_stride * es;
        if (x->be->mem_set(dst, 0xff, item * es, NULL) != 0)
            return NULL;
    }
    return x->be->sync(NULL) == 0 ? h : NULL;
}

int bench_state_check(bench_ctx *x, const void *dev_base, int64_t slot_stride, size_t item, ls_dtype dt,
                      const int32_t *slots, int n, const void *ref, double *worst)
{
    size_t es = ls_dtype_size(dt);
    char *h = bench_host_alloc(x, item * es * (size_t)n);
    if (!h)
        return -1;
    for (int k = 0; k < n; k++) {
        const char *src = (const char *)dev_base + (size_t)slots[k] * (size_t)slot_stride * es;
        if (x->be->copy_d2h(h + item * es * (size_t)k, src, item * es) != 0)
            return -1;
    }
    bench_compare(h, ref, item * (size_t)n, dt, worst);
    return 0;
}

int bench_output_check(bench_ctx *x, const void *dev, const void *ref, size_t n, ls_dtype dt, double *worst)
{
    void *h = bench_host_alloc(x, n * ls_dtype_size(dt));
    if (!h || x->be->copy_d2h(h, dev, n * ls_dtype_size(dt)) != 0)
        return -1;
    bench_compare(h, ref, n, dt, worst);
    return 0;
}

int32_t *bench_sub_slots(bench_ctx *x, const int *rows, int n, int32_t **dev_out, int32_t **compact_out)
{
    int32_t *h = bench_host_alloc(x, (size_t)n * sizeof *h);
    int32_t *compact = bench_host_alloc(x, (size_t)n * sizeof *compact);
    int32_t *d = bench_dev_alloc(x, (size_t)n * sizeof *d);
    if (!h || !compact || !d)
        return NULL;
    for (int k = 0; k < n; k++) {
        h[k] = x->slots[rows[k]];
        compact[k] = k;
    }
    if (x->be->copy_h2d(d, h, (size_t)n * sizeof *h) != 0)
        return NULL;
    *dev_out = d;
    *compact_out = compact;
    return h;
}

int bench_state_gate_begin(bench_ctx *x, bench_state_gate *g)
{
    g->ref = bench_state_seed(x, g->state, g->state_stride, g->item, g->dt, g->slots, g->n);
    if (!g->ref)
        return -1;
    g->inter_ref = NULL;
    if (g->inter && !(g->inter_ref = bench_state_poison(x, g->inter, g->inter_stride, g->item * (size_t)g->T, g->dt,
                                                        g->slots, g->n)))
        return -1;
    return 0;
}

int bench_state_gate_check(bench_ctx *x, const bench_state_gate *g, double *worst)
{
    if (bench_state_check(x, g->state, g->state_stride, g->item, g->dt, g->slots, g->n, g->ref, worst) != 0)
        return -1;
    if (g->inter && bench_state_check(x, g->inter, g->inter_stride, g->item * (size_t)g->T, g->dt, g->slots, g->n,
                                      g->inter_ref, worst) != 0)
        return -1;
    return 0;
}

int bench_verify_kernel(bench_ctx *x, const void *dev, const void *ref, size_t n_out, const bench_state_gate *g,
                        int n, double *max_rel_err)
{
    *max_rel_err = 0;
    if (bench_output_check(x, dev, ref, n_out, LS_BF16, max_rel_err) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (bench_state_gate_check(x, &g[i], max_rel_err) != 0)
            return -1;
    return 0;
}
