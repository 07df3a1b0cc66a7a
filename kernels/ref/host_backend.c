/*
 * host_backend.c — the "host" ls_runtime: plain memory, wall-clock events and the float64
 * reference kernels, so the pool, the benchmark sweeps, the CSV and the comparison scripts all
 * run on a machine without a GPU.
 *
 * Choices (each documented in the table below):
 *  - one device (index 0), named "host"; sm_count = online CPUs; clocks, driver and runtime 0;
 *    l2_bytes from sysconf when glibc knows it, else 0; total/free bytes = physical/available RAM;
 *  - memory: aligned_alloc(64, size rounded up to 64); 0 bytes gives a valid 64-byte block;
 *  - streams: a non-NULL dummy handle; everything is synchronous, so sync is a no-op;
 *  - events: CLOCK_MONOTONIC stamps taken at record time; elapsed = stop - start in µs
 *    (an event never recorded is an error);
 *  - graphs: the graph_* pointers are NULL (capture has no host meaning) — callers test them;
 *  - profiler_start/stop: succeed and do nothing;
 *  - kernels: the ls_ref_* functions; the stream argument is ignored.
 */
#define _GNU_SOURCE /* sysconf(_SC_PHYS_PAGES, _SC_LEVEL2_CACHE_SIZE), clock_gettime */

#include "ls_ref.h"
#include "impl_internal.h" /* kernels/ (the target's include directory) */

#include <stdlib.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

struct ls_event {
    struct timespec ts;
    int recorded;
};

static char host_stream_token; /* the address is the dummy stream handle */

static int host_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int host_device_count(void) { return 1; }

static int host_set_device(int index)
{
    if (index != 0)
        return ls_fail("host: device index %d out of range (only 0)", index);
    return 0;
}

static int host_device_info(int index, ls_device_info *out)
{
    if (!out)
        return ls_fail("host: device_info: out is NULL");
    if (index != 0)
        return ls_fail("host: device index %d out of range (only 0)", index);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "host");
    out->index = 0;
    out->sm_count = host_online_cpus();
#ifdef _SC_LEVEL2_CACHE_SIZE
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    out->l2_bytes = l2 > 0 ? (int64_t)l2 : 0;
#endif
    long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES),
         avail = sysconf(_SC_AVPHYS_PAGES);
    if (page > 0 && phys > 0)
        out->total_bytes = (int64_t)page * phys;
    if (page > 0 && avail > 0)
        out->free_bytes = (int64_t)page * avail;
    return 0;
}

static void *host_mem_alloc(size_t bytes)
{
    size_t rounded = bytes == 0 ? 64 : (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) { /* wrapped around */
        ls_fail("host: mem_alloc: %zu bytes is too large", bytes);
        return NULL;
    }
    void *p = aligned_alloc(64, rounded);
    if (!p)
        ls_fail("host: mem_alloc: out of memory allocating %zu bytes", bytes);
    return p;
}

static void host_mem_free(void *p) { free(p); }

static int host_mem_set(void *dst, int byte, size_t bytes, ls_stream s)
{
    if (bytes == 0)
        return 0;
    if (!dst)
        return ls_fail("host: mem_set: dst is NULL (%zu bytes)", bytes);
    memset(dst, byte, bytes);
    return 0;
}

/* All three copy directions are memmove on the host (overlap tolerated). */
static int host_copy(const char *what, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (!dst || !src)
        return ls_fail("host: %s: %s is NULL (%zu bytes)", what, dst ? "src" : "dst", bytes);
    memmove(dst, src, bytes);
    return 0;
}
static int host_copy_h2d(void *d, const void *s, size_t n)
{
    return host_copy("copy_h2d", d, s, n);
}
static int host_copy_d2h(void *d, const void *s, size_t n)
{
    return host_copy("copy_d2h", d, s, n);
}
/* The same checks as the cuda runtime's upload, so a caller that passes here passes there. */
static int host_upload(void *d, const void *s, size_t n, ls_stream st)
{
    (void)st;
    return ls_upload_check("host", d, n) ? -1 : host_copy("upload", d, s, n);
}
static int host_copy_d2d(void *d, const void *s, size_t n, ls_stream st)
{
    return host_copy("copy_d2d", d, s, n);
}

static int host_stream_create(ls_stream *out)
{
    if (!out)
        return ls_fail("host: stream_create: out is NULL");
    *out = &host_stream_token;
    return 0;
}
static int host_stream_destroy(ls_stream s) { return 0; }
static int host_sync(ls_stream s) { return 0; }

static int host_event_create(ls_event **out)
{
    if (!out)
        return ls_fail("host: event_create: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ls_fail("host: event_create: out of memory");
    return 0;
}

static int host_event_destroy(ls_event *e)
{
    free(e);
    return 0;
}

static int host_event_record(ls_event *e, ls_stream s)
{
    if (!e)
        return ls_fail("host: event_record: event is NULL");
    if (clock_gettime(CLOCK_MONOTONIC, &e->ts) != 0)
        return ls_fail("host: event_record: clock_gettime(CLOCK_MONOTONIC) failed");
    e->recorded = 1;
    return 0;
}

static int host_event_elapsed_us(ls_event *start, ls_event *stop, double *us)
{
    if (!start || !stop || !us)
        return ls_fail("host: event_elapsed_us: %s is NULL", !start  ? "start"
                                                             : !stop ? "stop"
                                                                     : "us");
    if (!start->recorded || !stop->recorded)
        return ls_fail("host: event_elapsed_us: %s event was never recorded",
                       !start->recorded ? "start" : "stop");
    *us = (double)(stop->ts.tv_sec - start->ts.tv_sec) * 1e6 +
          (double)(stop->ts.tv_nsec - start->ts.tv_nsec) * 1e-3;
    return 0;
}

static int host_profiler_noop(void) { return 0; }

static const ls_runtime host_table = {
    .abi_version = LS_RUNTIME_ABI,
    .name = "host",
    .caps = 0, /* host memory, no graphs, no hold, no PCI locality */
    .device_count = host_device_count,
    .set_device = host_set_device,
    .device_info = host_device_info,
    .mem_alloc = host_mem_alloc,
    .mem_free = host_mem_free,
    .mem_set = host_mem_set,
    .copy_h2d = host_copy_h2d,
    .copy_d2h = host_copy_d2h,
    .copy_d2d = host_copy_d2d,
    .upload = host_upload,
    .stream_create = host_stream_create,
    .stream_destroy = host_stream_destroy,
    .sync = host_sync,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_elapsed_us = host_event_elapsed_us,
    .graph_begin = NULL, /* graphs unsupported on host: callers must test the pointers */
    .graph_end = NULL,
    .graph_launch = NULL,
    .graph_destroy = NULL,
    .profiler_start = host_profiler_noop,
    .profiler_stop = host_profiler_noop,
    .hold_create = NULL, /* nothing to hold: host ops run when called */
    .hold_destroy = NULL,
    .hold_enqueue = NULL,
    .hold_release = NULL,
    .hold_result = NULL,
};

const ls_runtime *ls_ref_host_table(void) { return &host_table; }

/* ------------------------------------------------------------------ the "host" impl */

/* The reference ops with the impl signature: no knobs, the stream is ignored (host ops run when
 * called). */
static int host_conv(const ls_conv_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_conv_update(p); }
static int host_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_gdn(p); }
static int host_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_kda(p); }
static int host_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_ssu(p); }
static int host_copy_op(const ls_state_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_state_copy(p); }
static int host_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_state_accept(p); }
static int host_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s) { return ls_ref_state_zero(p); }
static int host_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s)
{
    return ls_ref_conv_delta(p);
}

static const ls_impl host_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "host",
    .version = "float64 reference",
    .runtime = "host",
    .caps = LS_IMPL_KV | LS_IMPL_VK,
    .knobs = NULL,
    .n_knobs = 0,
    .conv_update = host_conv,
    .gdn = host_gdn,
    .kda = host_kda,
    .ssu = host_ssu,
    .state_copy = host_copy_op,
    .state_accept = host_accept,
    .state_zero = host_zero,
    .last_error = NULL, /* ls_last_error() already holds the reason */
    .explain = NULL,
    .conv_delta = host_conv_delta,
};

const ls_impl *ls_impl_host_table(void) { return &host_impl; }
