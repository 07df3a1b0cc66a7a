/*
 * timing.c — time one op through the backend table: events around the measured region, warm-up
 * first, an explicit cache regime, optional CUDA-graph replay, stopping rules, profile mode.
 *
 * What is inside the timed region (between the two events) and nothing else:
 *   eager:  n_rot launches of the callback, rotation indices 0..n_rot-1 (hot: always 0);
 *   graph:  one replay of a graph that captured exactly those n_rot launches.
 * Outside it: the L2 flush (flush regime, enqueued on the same stream BEFORE the start event so
 * stream order keeps it out of the measurement), the NVTX pushes, and one host sync per sample
 * (never per launch) to read the elapsed time. A held sample (ls_timing_holds) is enqueued as
 * hold, start event, launches, stop event, release: the launches wait queued on the GPU, so
 * the host's launch latency stays outside the region too. The optional reset hook
 * (cfg.reset: e.g. a pool path putting back the slots it consumed) runs before the flush and the
 * hold of every sample, and before every warm-up round, so it is never timed either. So are the
 * clock guard's NVML reads (cfg.clocks) just before and after each sample.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness_internal.h"
#include "ls_harness.h"

struct ls_timer {
    ls_timing_config cfg;
    ls_launch_fn fn;
    void *ctx;
    ls_event *start, *stop;
    ls_graph *graph;
    ls_stream own_stream; /* created here for graph mode on the default stream */
    ls_hold *hold;        /* non-NULL when samples are held */
};

double lsh_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *ls_cache_regime_name(ls_cache_regime r)
{
    switch (r) {
    case LS_CACHE_ROTATE: return "rotate";
    case LS_CACHE_FLUSH: return "flush";
    case LS_CACHE_HOT: return "hot";
    }
    return "unknown";
}

int ls_cache_regime_parse(const char *s, ls_cache_regime *out)
{
    static const ls_cache_regime all[] = {LS_CACHE_ROTATE, LS_CACHE_FLUSH, LS_CACHE_HOT};
    for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, ls_cache_regime_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return ls_fail("unknown cache regime '%s' (expected rotate, flush or hot)", s ? s : "(null)");
}

/* Rotation index of the i-th launch of a sample: the layer it touches. */
static int rot_of(const ls_timer *t, int i)
{
    return t->cfg.regime == LS_CACHE_HOT ? 0 : i;
}

/* The untimed reset before a round or sample (no-op without cfg.reset). */
static int reset(ls_timer *t)
{
    if (!t->cfg.reset || t->cfg.reset(t->ctx) == 0)
        return 0;
    return lsh_fail_cause("reset callback failed");
}

/* One eager round: n_rot launches in rotation order. */
static int launch_round(ls_timer *t)
{
    for (int i = 0; i < t->cfg.n_rot; i++) {
        int rot = rot_of(t, i);
        if (t->fn(t->ctx, rot, t->cfg.stream) != 0)
            return lsh_fail_cause("launch callback failed at rotation %d", rot);
    }
    return 0;
}

/* Rejects a configuration that cannot be timed, naming the offending field. */
static int check_config(const ls_timing_config *c, ls_launch_fn fn)
{
    if (!c || !c->be || !fn)
        return ls_fail("timing: NULL %s", !c ? "config" : !c->be ? "backend" : "launch callback");
    const ls_runtime *be = c->be;
    if (be->abi_version != LS_RUNTIME_ABI)
        return ls_fail("timing: backend '%s' has abi_version %d, expected %d", be->name,
                       be->abi_version, LS_RUNTIME_ABI);
    if (!be->event_create || !be->event_destroy || !be->event_record || !be->event_elapsed_us ||
        !be->sync)
        return ls_fail("timing: backend '%s' lacks events or sync", be->name);
    if (c->regime != LS_CACHE_ROTATE && c->regime != LS_CACHE_FLUSH && c->regime != LS_CACHE_HOT)
        return ls_fail("timing: bad cache regime %d", (int)c->regime);
    if (c->n_rot < 1)
        return ls_fail("timing: n_rot = %d, need >= 1", c->n_rot);
    if (c->warmup < 0)
        return ls_fail("timing: warmup = %d, need >= 0", c->warmup);
    if (c->min_samples < 0)
        return ls_fail("timing: min_samples = %d, need >= 0", c->min_samples);
    if (c->max_samples < 1)
        return ls_fail("timing: max_samples = %d, need >= 1", c->max_samples);
    if (!(c->noise_target_pct >= 0.0))
        return ls_fail("timing: noise_target_pct = %g, need >= 0", c->noise_target_pct);
    if (c->regime == LS_CACHE_FLUSH && (!c->flush_buf || c->flush_bytes == 0 || !be->mem_set))
        return ls_fail("timing: flush regime needs flush_buf and flush_bytes (got %zu bytes)",
                       c->flush_bytes);
    if (c->graph && (!be->graph_begin || !be->graph_end || !be->graph_launch || !be->graph_destroy))
        return ls_fail("timing: graph mode needs CUDA graphs; backend '%s' has none", be->name);
    return 0;
}

int ls_timing_holds(const ls_timing_config *c)
{
    const ls_runtime *be = c ? c->be : NULL;
    return be && c->hold && !c->profile && be->hold_create && be->hold_destroy && be->hold_enqueue &&
           be->hold_release && be->hold_result;
}

/* Captures one round of n_rot launches. An eager round runs first so that lazy module loading
 * and first-launch work never happen inside the capture. No NVTX range: capture is not replay. */
static int capture_graph(ls_timer *t)
{
    const ls_runtime *be = t->cfg.be;
    if (reset(t) || launch_round(t) || be->sync(t->cfg.stream))
        return -1;
    if (be->graph_begin(t->cfg.stream))
        return -1;
    if (launch_round(t) != 0) {
        ls_graph *g = NULL;
        be->graph_end(t->cfg.stream, &g); /* leave capture mode; keep the first error */
        if (g)
            be->graph_destroy(g);
        return -1;
    }
    return be->graph_end(t->cfg.stream, &t->graph);
}

/* The warm-up inside the NVTX "warmup" phase: cfg.warmup rounds (replays in graph mode). With
 * warmup 0 there is no range at all, so a caller running its own warm-up (e.g. with a state
 * reset between samples) can push the one "warmup" phase of the case itself. */
static int warm_up(ls_timer *t)
{
    const ls_runtime *be = t->cfg.be;
    int rc = 0;
    if (t->cfg.warmup == 0)
        return 0;
    ls_nvtx_phase_push(LS_PHASE_WARMUP);
    for (int r = 0; r < t->cfg.warmup && rc == 0; r++)
        rc = reset(t) || (t->graph ? be->graph_launch(t->graph, t->cfg.stream) : launch_round(t)) ? -1 : 0;
    if (rc == 0)
        rc = be->sync(t->cfg.stream);
    ls_nvtx_phase_pop();
    return rc;
}

/* The default stream cannot be captured: graph mode without a stream times on a stream of its
 * own, after a device-wide sync so that the caller's set-up work (on the default stream, which a
 * non-blocking stream does not wait for) is complete. */
static int own_stream_for_graph(ls_timer *t)
{
    const ls_runtime *be = t->cfg.be;
    if (!t->cfg.graph || t->cfg.stream)
        return 0;
    if (!be->stream_create || !be->stream_destroy)
        return ls_fail("timing: graph mode needs a stream; backend '%s' cannot create one",
                       be->name);
    if (be->sync(NULL) || be->stream_create(&t->own_stream))
        return -1;
    t->cfg.stream = t->own_stream;
    return 0;
}

ls_timer *ls_timer_create(const ls_timing_config *cfg, ls_launch_fn fn, void *ctx)
{
    if (check_config(cfg, fn))
        return NULL;
    ls_timer *t = calloc(1, sizeof *t);
    if (!t) {
        ls_fail("timing: out of host memory");
        return NULL;
    }
    t->cfg = *cfg;
    t->fn = fn;
    t->ctx = ctx;
    const ls_runtime *be = cfg->be;
    if (own_stream_for_graph(t) || be->event_create(&t->start) || be->event_create(&t->stop) ||
        (ls_timing_holds(cfg) && be->hold_create(&t->hold, LS_HOLD_TIMEOUT_MS)) ||
        (cfg->graph && capture_graph(t)) || warm_up(t)) {
        ls_timer_destroy(t);
        return NULL;
    }
    return t;
}

int ls_timer_sample(ls_timer *t, double *us)
{
    if (!t || !us)
        return ls_fail("ls_timer_sample: NULL %s", t ? "us" : "timer");
    const ls_runtime *be = t->cfg.be;
    ls_stream s = t->cfg.stream;
    if (reset(t))
        return -1;
    if (t->cfg.regime == LS_CACHE_FLUSH &&
        be->mem_set(t->cfg.flush_buf, 0x5a, t->cfg.flush_bytes, s))
        return -1;
    int rc = t->hold ? be->hold_enqueue(t->hold, s) : 0;
    if (rc)
        return -1;
    if (t->graph) {
        ls_nvtx_range_push("graph_replay");
        rc = be->event_record(t->start, s);
        if (rc == 0)
            rc = be->graph_launch(t->graph, s);
        if (rc == 0)
            rc = be->event_record(t->stop, s);
        ls_nvtx_range_pop();
    } else {
        rc = be->event_record(t->start, s);
        if (rc == 0)
            rc = launch_round(t);
        if (rc == 0)
            rc = be->event_record(t->stop, s);
    }
    if (t->hold) /* also on failure: never leave the stream held */
        be->hold_release(t->hold);
    double el = 0.0;
    if (rc == 0)
        rc = be->sync(s);
    if (rc == 0 && t->hold && be->hold_result(t->hold))
        return ls_fail("timing: the stream hold timed out after %d ms: the launch queue filled "
                       "while held (n_rot = %d, graph %d); time without the hold (--no-hold)",
                       LS_HOLD_TIMEOUT_MS, t->cfg.n_rot, t->cfg.graph);
    if (rc == 0)
        rc = be->event_elapsed_us(t->start, t->stop, &el);
    if (rc)
        return -1;
    *us = el / t->cfg.n_rot;
    return 0;
}

void ls_timer_destroy(ls_timer *t)
{
    if (!t)
        return;
    const ls_runtime *be = t->cfg.be;
    if (t->graph)
        be->graph_destroy(t->graph);
    if (t->start)
        be->event_destroy(t->start);
    if (t->stop)
        be->event_destroy(t->stop);
    if (t->own_stream) {
        be->sync(t->own_stream);
        be->stream_destroy(t->own_stream);
    }
    if (t->hold)
        be->hold_destroy(t->hold);
    free(t);
}

/* Profile mode: exactly min(LS_PROFILE_SAMPLES, cap) samples between profiler start and stop. */
static int sample_profile(ls_timer *t, double *samples_us, int cap, int *n_out)
{
    const ls_runtime *be = t->cfg.be;
    int n_target = cap < LS_PROFILE_SAMPLES ? cap : LS_PROFILE_SAMPLES;
    if (be->profiler_start && be->profiler_start())
        return -1;
    int rc = 0;
    while (rc == 0 && *n_out < n_target) {
        rc = ls_timer_sample(t, &samples_us[*n_out]);
        if (rc == 0)
            (*n_out)++;
    }
    if (be->profiler_stop && be->profiler_stop() && rc == 0)
        rc = -1;
    return rc;
}

/* One sample bracketed by the clock guard (cfg.clocks); *kept = 0 when it flags the sample as
 * throttled (ls_clocks_after). The guard's NVML reads are outside the timed region. */
static int guarded_sample(ls_timer *t, double *us, int *kept)
{
    ls_clocks_before(t->cfg.clocks);
    if (ls_timer_sample(t, us))
        return -1;
    *kept = ls_clocks_after(t->cfg.clocks);
    return 0;
}

const char *ls_stop_reason_name(ls_stop_reason r)
{
    switch (r) {
    case LS_STOP_NONE: return "";
    case LS_STOP_NOISE: return "noise";
    case LS_STOP_MIN_TIME: return "min_time";
    case LS_STOP_TIME_LIMIT: return "time_limit";
    case LS_STOP_MAX_SAMPLES: return "max_samples";
    case LS_STOP_PROFILE: return "profile";
    }
    return "unknown";
}

/* Inserts x into ascending v[0..n-1] (room for n+1): the running sorted copy that the noise
 * rule reads after every sample (an O(n) move, small next to a sample's sync). */
static void insert_sorted(double *v, int n, double x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(v + lo + 1, v + lo, (size_t)(n - lo) * sizeof *v);
    v[lo] = x;
}

/* The stopping rules of ls_harness.h; t0 is when timing began (the wall budget covers warm-up).
 * The minimums (samples, measured time) come first; then, with a noise target, sampling goes on
 * until the median's noise is within it, the wall budget is spent or the sample cap is hit. */
static int sample_until_done(ls_timer *t, double t0, double *samples_us, int cap, int *n_out,
                             ls_stop_reason *why)
{
    const ls_timing_config *c = &t->cfg;
    int limit = c->max_samples < cap ? c->max_samples : cap;
    double *sorted = c->noise_target_pct > 0 ? malloc((size_t)limit * sizeof *sorted) : NULL;
    if (c->noise_target_pct > 0 && !sorted)
        return ls_fail("timing: out of host memory for %d samples", limit);
    double measured_s = 0.0;
    *why = LS_STOP_MAX_SAMPLES;
    /* discarded (throttled) samples count against the cap, never towards the minimums or noise */
    for (int taken = 0; taken < limit;) {
        double us;
        int kept;
        if (guarded_sample(t, &us, &kept)) {
            free(sorted);
            return -1;
        }
        taken++;
        if (kept) {
            if (sorted)
                insert_sorted(sorted, *n_out, us);
            samples_us[(*n_out)++] = us;
            measured_s += us * c->n_rot * 1e-6;
            if (*n_out >= c->min_samples && measured_s >= c->min_time_s) {
                if (!sorted) {
                    *why = LS_STOP_MIN_TIME;
                    break;
                }
                if (ls_median_noise_pct(sorted, *n_out) <= c->noise_target_pct) {
                    *why = LS_STOP_NOISE;
                    break;
                }
            }
        }
        if (c->max_time_s > 0 && lsh_wall_s() - t0 >= c->max_time_s) {
            *why = taken < limit ? LS_STOP_TIME_LIMIT : LS_STOP_MAX_SAMPLES;
            break;
        }
    }
    free(sorted);
    return 0;
}

int ls_time_launches(const ls_timing_config *cfg, ls_launch_fn fn, void *ctx, double *samples_us,
                     int cap, int *n_out)
{
    return ls_time_launches_why(cfg, fn, ctx, samples_us, cap, n_out, NULL);
}

int ls_time_launches_why(const ls_timing_config *cfg, ls_launch_fn fn, void *ctx, double *samples_us,
                         int cap, int *n_out, ls_stop_reason *why)
{
    ls_stop_reason why_local = LS_STOP_NONE;
    if (!why)
        why = &why_local;
    *why = LS_STOP_NONE;
    if (n_out)
        *n_out = 0;
    if (!samples_us || !n_out)
        return ls_fail("ls_time_launches: NULL %s", samples_us ? "n_out" : "samples_us");
    if (cap < 1)
        return ls_fail("ls_time_launches: cap = %d, need >= 1", cap);
    double t0 = lsh_wall_s();
    ls_timer *t = ls_timer_create(cfg, fn, ctx);
    if (!t)
        return -1;
    ls_nvtx_phase_push(LS_PHASE_MEASURE);
    int rc;
    if (cfg->profile) {
        rc = sample_profile(t, samples_us, cap, n_out);
        *why = rc == 0 ? LS_STOP_PROFILE : LS_STOP_NONE;
    } else {
        rc = sample_until_done(t, t0, samples_us, cap, n_out, why);
    }
    ls_nvtx_phase_pop();
    ls_timer_destroy(t);
    return rc;
}
