/*
 * ref_common.c — what the reference kernels share: dtype load/store of whole rows and the
 * row-parallel helper (ls_ref.h).
 */
#define _GNU_SOURCE /* sysconf(_SC_NPROCESSORS_ONLN) */

#include "ls_ref.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LS_REF_MAX_THREADS 256
/* Below this much work (items x work_per_item, roughly flops) threads cost more than they save. */
#define LS_REF_PARALLEL_MIN_WORK 4.0e5

void ls_ref_load_bf16(const uint16_t *src, int64_t n, double *dst)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (double)ls_bf16_to_f32(src[i]);
}

void ls_ref_load(const void *src, ls_dtype dt, int64_t n, double *dst)
{
    if (dt == LS_F32) {
        const float *s = (const float *)src;
        for (int64_t i = 0; i < n; i++)
            dst[i] = (double)s[i];
    } else {
        ls_ref_load_bf16((const uint16_t *)src, n, dst);
    }
}

void ls_ref_store_bf16(uint16_t *dst, int64_t n, const double *src)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = ls_f32_to_bf16((float)src[i]);
}

void ls_ref_store(void *dst, ls_dtype dt, int64_t n, const double *src)
{
    if (dt == LS_F32) {
        float *d = (float *)dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = (float)src[i];
    } else {
        ls_ref_store_bf16((uint16_t *)dst, n, src);
    }
}

/*
 * LS_REF_THREADS: unset or empty -> online CPUs (capped); otherwise an integer in
 * 1..LS_REF_MAX_THREADS, anything else is an error naming the value. Read on every call so a
 * test can change it between calls (single-threaded callers only: getenv vs setenv).
 */
int ls_ref_threads(void)
{
    const char *e = getenv("LS_REF_THREADS");
    if (!e || !*e) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1)
            n = 1;
        return n > LS_REF_MAX_THREADS ? LS_REF_MAX_THREADS : (int)n;
    }
    char *end = NULL;
    long v = strtol(e, &end, 10);
    if (end == e || *end != '\0' || v < 1 || v > LS_REF_MAX_THREADS)
        return ls_fail("ref: LS_REF_THREADS='%s' is not an integer in 1..%d", e,
                       LS_REF_MAX_THREADS);
    return (int)v;
}

typedef struct ls_ref_job {
    ls_ref_range_fn fn;
    void *ctx;
    int64_t begin, end;
    int rc;
    char msg[256];
} ls_ref_job;

static void run_job(ls_ref_job *j)
{
    j->rc = j->fn(j->ctx, j->begin, j->end);
    if (j->rc != 0)
        snprintf(j->msg, sizeof j->msg, "%s", ls_last_error());
}

static void *job_thread(void *arg)
{
    run_job((ls_ref_job *)arg);
    return NULL;
}

/*
 * Contiguous chunks, one per thread; the caller runs chunk 0 itself. A thread that cannot be
 * created has its chunk run by the caller afterwards, so the result never depends on thread
 * availability (items are independent, so it never depends on the split either).
 */
int ls_ref_parallel(int64_t n, double work_per_item, ls_ref_range_fn fn, void *ctx)
{
    int nt = ls_ref_threads();
    if (nt < 0)
        return -1;
    if (n <= 0)
        return 0;
    if (nt == 1 || n == 1 || (double)n * work_per_item < LS_REF_PARALLEL_MIN_WORK)
        return fn(ctx, 0, n);
    if ((int64_t)nt > n)
        nt = (int)n;

    ls_ref_job jobs[LS_REF_MAX_THREADS];
    pthread_t tid[LS_REF_MAX_THREADS];
    int started[LS_REF_MAX_THREADS];
    for (int i = 0; i < nt; i++) {
        jobs[i] = (ls_ref_job){.fn = fn, .ctx = ctx, .begin = n * i / nt, .end = n * (i + 1) / nt};
        started[i] = 0;
    }
    for (int i = 1; i < nt; i++)
        started[i] = pthread_create(&tid[i], NULL, job_thread, &jobs[i]) == 0;
    run_job(&jobs[0]);
    for (int i = 1; i < nt; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            run_job(&jobs[i]);
    }
    for (int i = 0; i < nt; i++)
        if (jobs[i].rc != 0)
            return ls_fail("%s", jobs[i].msg);
    return 0;
}
