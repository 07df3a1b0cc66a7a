/*
 * stats.c — summary statistics of a set of timing samples (microseconds per call).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ls_harness.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile q in [0, 1] of sorted v[0..n-1] by linear interpolation between closest ranks
 * (numpy's default "linear" method): position q*(n-1). */
static double percentile_sorted(const double *v, int n, double q)
{
    double pos = q * (double)(n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : n - 1;
    double frac = pos - (double)lo;
    return v[lo] + (v[hi] - v[lo]) * frac;
}

/*
 * Sorts a copy of the samples and fills every field. stddev is the SAMPLE standard deviation
 * (n-1 denominator), 0 for a single sample. NaN samples are not filtered: they sort to an
 * unspecified place and poison mean/stddev, which is what we want a caller to notice.
 * Returns -1 (error set) when n < 1 or a pointer is NULL, or when the copy cannot be allocated.
 */
int ls_stats_compute(const double *samples, int n, ls_stats *out)
{
    if (!out || !samples)
        return ls_fail("ls_stats_compute: NULL %s", out ? "samples" : "out");
    if (n < 1)
        return ls_fail("ls_stats_compute: n = %d, need at least one sample", n);
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return ls_fail("ls_stats_compute: out of memory for %d samples", n);
    memcpy(v, samples, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);

    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / n;
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);

    out->n = n;
    out->median = percentile_sorted(v, n, 0.5);
    out->p10 = percentile_sorted(v, n, 0.1);
    out->p90 = percentile_sorted(v, n, 0.9);
    out->mean = mean;
    out->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    out->min = v[0];
    out->max = v[n - 1];
    out->noise_pct = ls_median_noise_pct(v, n);
    free(v);
    return 0;
}

double ls_median_noise_pct(const double *sorted, int n)
{
    if (!sorted || n < LS_NOISE_MIN_N)
        return NAN;
    double half = 1.96 * sqrt((double)n);
    int lo = (int)floor(((double)n - half) / 2.0);      /* 1-based ranks */
    int hi = (int)ceil(1.0 + ((double)n + half) / 2.0);
    if (lo < 1)
        lo = 1;
    if (hi > n)
        hi = n;
    double med = percentile_sorted(sorted, n, 0.5);
    if (!(med > 0.0))
        return NAN;
    return 100.0 * 0.5 * (sorted[hi - 1] - sorted[lo - 1]) / med;
}
