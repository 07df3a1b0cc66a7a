/*
 * copy_peak.c — the bandwidth yardstick of a run: a large device-to-device copy measured at
 * start-up, so every row's GB/s can be read as a share of what this GPU, in this run, can copy.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness_internal.h"
#include "ls_harness.h"

#define COPY_PEAK_REPS 9   /* timed copies; the median is reported */
#define SETTLE_REPS 3      /* copies per settling round */

/* Allocates src and dst of `bytes` each, halving when the device is full, down to the floor
 * min(bytes, LS_COPY_PEAK_HOST_BYTES). 0 with both set, or -1 (error set) when nothing fits. */
static int alloc_pair(const ls_runtime *be, size_t *bytes, void **src, void **dst)
{
    size_t floor_b = *bytes < LS_COPY_PEAK_HOST_BYTES ? *bytes : LS_COPY_PEAK_HOST_BYTES;
    for (size_t b = *bytes; b >= floor_b; b /= 2) {
        *src = be->mem_alloc(b);
        *dst = *src ? be->mem_alloc(b) : NULL;
        if (*src && *dst) {
            if (b != *bytes)
                fprintf(stderr,
                        "linstate: copy peak measured over %zu MiB (2 x %zu MiB did not fit)\n",
                        b >> 20, *bytes >> 20);
            *bytes = b;
            ls_clear_error(); /* an earlier, larger attempt may have failed */
            return 0;
        }
        if (*src)
            be->mem_free(*src);
        *src = *dst = NULL;
    }
    return lsh_fail_cause("copy peak: cannot allocate 2 x %zu bytes on backend '%s'", *bytes,
                          be->name);
}

/*
 * One warm-up copy, then COPY_PEAK_REPS copies each between two events; GB/s = 2 * bytes (read
 * plus write) / median time. The source is memset first so the copy moves real pages. Nothing
 * else is on the stream. Host backend: capped at LS_COPY_PEAK_HOST_BYTES, noted on stderr.
 */
int ls_measure_copy_peak(const ls_runtime *be, size_t bytes, double *gbps)
{
    return ls_measure_copy_peak_settled(be, bytes, 0.0, 0.0, gbps);
}

/* Median time of `reps` copies dst <- src, each between two events, in us (0 or -1). */
static int time_copies(const ls_runtime *be, void *dst, const void *src, size_t bytes, ls_event *e0,
                       ls_event *e1, int reps, double *median_us)
{
    double us[COPY_PEAK_REPS];
    int rc = 0;
    for (int i = 0; i < reps && rc == 0; i++)
        rc = be->event_record(e0, NULL) || be->copy_d2d(dst, src, bytes, NULL) ||
             be->event_record(e1, NULL) || be->sync(NULL) || be->event_elapsed_us(e0, e1, &us[i]);
    ls_stats st = {0};
    if (rc == 0 && ls_stats_compute(us, reps, &st) == 0 && st.median > 0) {
        *median_us = st.median;
        return 0;
    }
    return rc ? -1 : ls_fail("copy peak: non-positive median copy time %g us", st.median);
}

int ls_measure_copy_peak_settled(const ls_runtime *be, size_t bytes, double settle_gbps,
                                 double settle_max_s, double *gbps)
{
    if (!be || !gbps)
        return ls_fail("ls_measure_copy_peak: NULL %s", be ? "gbps" : "backend");
    if (bytes < 4096)
        return ls_fail("ls_measure_copy_peak: bytes = %zu, need >= 4096", bytes);
    if (!(be->caps & LS_RT_DEVICE_MEMORY) && bytes > LS_COPY_PEAK_HOST_BYTES) {
        fprintf(stderr, "linstate: host backend: copy peak over %zu MiB, not %zu MiB\n",
                LS_COPY_PEAK_HOST_BYTES >> 20, bytes >> 20);
        bytes = LS_COPY_PEAK_HOST_BYTES;
    }
    void *src = NULL, *dst = NULL;
    if (alloc_pair(be, &bytes, &src, &dst))
        return -1;
    ls_event *e0 = NULL, *e1 = NULL;
    int rc = be->event_create(&e0) || be->event_create(&e1) ||
             be->mem_set(src, 0x3c, bytes, NULL) || be->copy_d2d(dst, src, bytes, NULL) ||
             be->sync(NULL);
    /* settle: copies in rounds of SETTLE_REPS until a round's median reaches settle_gbps or the
     * budget is spent (a GPU that has just freed tens of GB copies slower for tens of ms) */
    double med = 0.0;
    for (double t0 = lsh_wall_s(); rc == 0 && settle_gbps > 0 && lsh_wall_s() - t0 < settle_max_s;) {
        rc = time_copies(be, dst, src, bytes, e0, e1, SETTLE_REPS, &med);
        if (rc == 0 && 2.0 * (double)bytes / (med * 1e3) >= settle_gbps)
            break;
    }
    if (rc == 0 && time_copies(be, dst, src, bytes, e0, e1, COPY_PEAK_REPS, &med) == 0)
        *gbps = 2.0 * (double)bytes / (med * 1e3);
    else
        rc = -1;
    if (e0)
        be->event_destroy(e0);
    if (e1)
        be->event_destroy(e1);
    be->mem_free(src);
    be->mem_free(dst);
    return rc ? -1 : 0;
}

double ls_copy_peak_drift_pct(double gbps, double first_gbps)
{
    return gbps > 0 && first_gbps > 0 ? 100.0 * (gbps / first_gbps - 1.0) : NAN;
}
