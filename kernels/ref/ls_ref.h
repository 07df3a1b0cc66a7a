/*
 * ls_ref.h — private header of kernels/ref: the host backend table, the row-parallel helper
 * and the small numeric helpers the reference kernels share. Not part of the public API.
 *
 * The reference computes in double. Values are converted from their storage dtype to double
 * once per row (dtype switch outside the inner loops) and rounded back only when stored:
 * double -> float -> bf16 (ls_f32_to_bf16), the same rounding a GPU kernel doing fp32 math does
 * on its final cast.
 */
#ifndef LS_REF_H
#define LS_REF_H

#include "ls_kernels.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The "host" backend table (ref/host_backend.c); reached through ls_runtime_host(). */
const ls_runtime *ls_ref_host_table(void);

/*
 * Work split over independent items [0, n): fn(ctx, begin, end) is called on disjoint ranges,
 * possibly from several threads (env LS_REF_THREADS, default = online CPUs, 1 = serial). Runs
 * serially when n * work_per_item is small. fn returns 0 or ls_fail(...); the first failure's
 * message is re-raised in the calling thread. A bad LS_REF_THREADS value is an error.
 */
typedef int (*ls_ref_range_fn)(void *ctx, int64_t begin, int64_t end);
int ls_ref_parallel(int64_t n, double work_per_item, ls_ref_range_fn fn, void *ctx);
/* Threads ls_ref_parallel would use for a large job; -1 (error set) for a bad LS_REF_THREADS. */
int ls_ref_threads(void);

/* Convert n contiguous elements of a storage dtype to double / round doubles into it. */
void ls_ref_load(const void *src, ls_dtype dt, int64_t n, double *dst);
void ls_ref_load_bf16(const uint16_t *src, int64_t n, double *dst);
void ls_ref_store(void *dst, ls_dtype dt, int64_t n, const double *src);
void ls_ref_store_bf16(uint16_t *dst, int64_t n, const double *src);

/* Scalar element at index i of a dtype array, as double. */
static inline double ls_ref_get(const void *base, ls_dtype dt, int64_t i)
{
    return dt == LS_F32 ? (double)((const float *)base)[i]
                        : (double)ls_bf16_to_f32(((const uint16_t *)base)[i]);
}

static inline uint16_t ls_ref_to_bf16(double v) { return ls_f32_to_bf16((float)v); }

/* softplus with the kernels' threshold: log1p(exp(x)) for x <= 20, x above. */
static inline double ls_ref_softplus(double x) { return x <= 20.0 ? log1p(exp(x)) : x; }
static inline double ls_ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline double ls_ref_silu(double x) { return x / (1.0 + exp(-x)); }

#endif /* LS_REF_H */
