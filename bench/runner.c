/*
 * runner.c — drives the plan's cases through Google Benchmark and writes one CSV row per case
 * and repetition.
 *
 * GB is the runner: every case is registered with a fixed iteration count of 1, so GB calls the
 * case's callback exactly once per repetition (--repetitions / --benchmark_repetitions), and its
 * filter, repetitions and JSON output work as usual. One call = one measurement with our own
 * sampling rules (harness ls_time_launches: warm-up, >= min_samples and >= min_time of measured
 * time, wall-clock cap; the entry's reset hook, if any, runs untimed before every sample), one
 * CSV row, and one GB iteration whose manual time is the median. The rows also go into a
 * bench_results (R->res) that report.c reads; report.c never sees the runner.
 *
 * A case is set up (pool + inputs) and verified once, when GB first reaches it, and kept until
 * GB moves to another case, so repetitions re-time the same buffers. The NVTX case range of a
 * measurement encloses setup and verify (first repetition only), warm-up and measure.
 *
 * Statuses: ok; skipped:oom (pool does not fit: the sweep goes on); skipped:no_graph (graph
 * timing on a runtime without graphs, or an impl that cannot be captured); skipped:unsupported
 * (the impl lacks an op the benchmark calls); fail_numerics (verification over tolerance: not timed);
 * fail_bounds (a guard zone around a case buffer changed, after verification or timing: not
 * timed, or its timing discarded; guard.c); error:setup|verify|timing (message on stderr);
 * error:crash|exit|timeout (the worker process died or hung during the case: supervise.c, the
 * cause in the message column).
 *
 * With a worker (main.c: bench_runner_init_supervised) the parent's runner only writes and
 * records rows and picks each repetition's index (skipping those --resume kept); the worker's
 * (bench_runner_init) measures them (bench_runner_measure), guard zones included. A failed CSV
 * write stops the sweep: the remaining cases are not run.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "ls_pyimpl.h"



static bench_runner *g_runner; /* the GB callback's way back (its ctx is the case) */

/* ------------------------------------------------------------------ devices */

/* The clock guard of a device (docs/timing.md "Clocks"); without it the run goes on, its clock
 * columns empty, and says so once. */
static void open_clocks(bench_device *D)
{
    static int said;
    D->clocks = ls_clocks_open(NULL, D->env.dev.pci_bus_id);
    if (!D->clocks && !said++)
        fprintf(stderr, "linstate-bench: clocks not sampled (%s)\n", ls_last_error());
}

/*
 * Start-up of one device: select it, bind this thread to its local CPUs (a failure is a warning:
 * the run is still valid, only less controlled), provenance, copy peak (1 GiB on a GPU; the host
 * backend caps it), flush buffer for the flush regime, and the memory budget for case pools.
 */
static int device_init(bench_runner *R, bench_device *D, int index)
{
    const ls_runtime *be = R->be;
    memset(D, 0, sizeof *D);
    D->index = index;
    if (be->set_device(index) != 0 || be->device_info(index, &D->env.dev) != 0 ||
        ls_provenance_fill(&D->prov, be, index) != 0) {
        fprintf(stderr, "linstate-bench: device %d: %s\n", index, ls_last_error());
        return -1;
    }
    if (R->o->bind != BENCH_BIND_NONE && ls_bind_to_device(be, index, R->o->bind == BENCH_BIND_CORE, &D->prov) != 0)
        fprintf(stderr, "linstate-bench: warning: not bound to device %d's CPUs: %s\n", index, ls_last_error());
    D->copy_peak_bytes = (be->caps & LS_RT_DEVICE_MEMORY) ? (size_t)1 << 30 : LS_COPY_PEAK_HOST_BYTES;
    if (ls_measure_copy_peak(be, D->copy_peak_bytes, &D->copy_peak_gbps) != 0) {
        fprintf(stderr, "linstate-bench: device %d: copy peak: %s\n", index, ls_last_error());
        return -1;
    }
    int host = !(be->caps & LS_RT_DEVICE_MEMORY);
    if (!host)
        open_clocks(D);
    int64_t l2 = D->env.dev.l2_bytes > 0 ? D->env.dev.l2_bytes : (int64_t)32 << 20;
    if (R->o->cache == LS_CACHE_FLUSH) {
        D->flush_bytes = (size_t)(2 * l2);
        D->flush_buf = be->mem_alloc(D->flush_bytes);
        if (!D->flush_buf) {
            fprintf(stderr, "linstate-bench: device %d: flush buffer: %s\n", index, ls_last_error());
            return -1;
        }
    }
    ls_device_info now;
    int64_t free_b = be->device_info(index, &now) == 0 ? now.free_bytes : D->env.dev.free_bytes;
    if (free_b <= 0)
        free_b = (int64_t)4 << 30;
    /* Host: the reference keeps host copies too, so take half of what is free. */
    D->env.budget_bytes = host ? free_b / 2 : (int64_t)((double)free_b * 0.85);
    D->env.be = be;
    D->env.cache = R->o->cache;
    D->env.max_rot = host ? 2 : 0; /* the float64 reference is slow; host timings are smoke only */
    fprintf(stderr, "linstate-bench: device %d (%s): copy peak %.1f GB/s, case budget %.1f GiB\n", index,
            D->env.dev.name, D->copy_peak_gbps, (double)D->env.budget_bytes / (double)(1 << 30));
    return 0;
}

static bench_device *device_of(bench_runner *R, int index)
{
    for (int i = 0; i < R->n_devs; i++)
        if (R->devs[i].index == index)
            return &R->devs[i];
    return &R->devs[0];
}

/* Makes D current: select it and, with several devices, re-bind to its CPUs. */
static void select_device(bench_runner *R, bench_device *D)
{
    if (R->cur_dev == D)
        return;
    if (R->be->set_device(D->index) != 0)
        fprintf(stderr, "linstate-bench: device %d: %s\n", D->index, ls_last_error());
    if (R->cur_dev && R->o->bind != BENCH_BIND_NONE &&
        ls_bind_to_device(R->be, D->index, R->o->bind == BENCH_BIND_CORE, NULL) != 0)
        fprintf(stderr, "linstate-bench: warning: not bound to device %d's CPUs: %s\n", D->index, ls_last_error());
    R->cur_dev = D;
}

/* The runner's memory, no device touched yet. 0 or -1. */
static int runner_alloc(bench_runner *R, const bench_opts *o, const ls_runtime *be, const bench_plan *plan,
                        int n_devices)
{
    memset(R, 0, sizeof *R);
    R->o = o;
    R->be = be;
    R->plan = plan;
    R->cur_err = NAN;
    R->devs = calloc((size_t)n_devices, sizeof *R->devs);
    R->reps = calloc((size_t)(plan->n ? plan->n : 1), sizeof *R->reps);
    R->cap_samples = BENCH_MAX_SAMPLES;
    R->res.o = o;
    R->res.plan_n = plan->n;
    R->samples = malloc(sizeof *R->samples * (size_t)R->cap_samples);
    if (!R->devs || !R->reps || !R->samples) {
        fprintf(stderr, "linstate-bench: out of host memory\n");
        return -1;
    }
    g_runner = R;
    return 0;
}

int bench_runner_init(bench_runner *R, const bench_opts *o, const ls_runtime *be, const bench_plan *plan,
                      const int *devices, int n_devices)
{
    if (runner_alloc(R, o, be, plan, n_devices) != 0)
        return -1;
    for (int i = 0; i < n_devices; i++) {
        if (device_init(R, &R->devs[i], devices[i]) != 0)
            return -1;
        R->n_devs++;
        R->cur_dev = &R->devs[i];
        if (i < BENCH_MAX_LIST) {
            R->res.dev_index[i] = R->devs[i].index;
            R->res.dev_copy_peak_gbps[i] = R->devs[i].copy_peak_gbps;
            R->res.n_devs = i + 1;
        }
    }
    return 0;
}

int bench_runner_init_supervised(bench_runner *R, const bench_opts *o, const ls_runtime *be, const bench_plan *plan,
                                 const int *devices, int n_devices, int argc, char **argv)
{
    if (runner_alloc(R, o, be, plan, n_devices) != 0)
        return -1;
    for (int i = 0; i < n_devices; i++) /* the rest comes with the worker's HELLO */
        R->devs[i].index = devices[i];
    R->n_devs = n_devices;
    return bench_sup_start(R, argc, argv, o->case_timeout_s);
}

/* ------------------------------------------------------------------ case life cycle */

static void release_case(bench_runner *R)
{
    if (R->cur)
        bench_ctx_release(&R->ctx);
    memset(&R->ctx, 0, sizeof R->ctx);
    R->cur = NULL;
}

static void set_status(bench_runner *R, const char *status, const char *what)
{
    snprintf(R->cur_status, sizeof R->cur_status, "%s", status);
    if (what)
        fprintf(stderr, "linstate-bench: %s: %s: %s\n", R->cur->name, what, ls_last_error());
}

/* Why an impl's cases are skipped:unsupported for lack of an op, once per (impl, op) and process:
 * a pool row names the three ops every pool needs (pool/pool.c), whichever one the row times. */
static void say_missing_op(const ls_impl *im, ls_op op, unsigned ops)
{
    static struct {
        const ls_impl *im;
        ls_op op;
    } said[64];
    static int n_said;
    for (int i = 0; i < n_said; i++)
        if (said[i].im == im && said[i].op == op)
            return;
    if (n_said < (int)(sizeof said / sizeof said[0]))
        said[n_said].im = im, said[n_said++].op = op;
    const unsigned pool_ops = BENCH_OP(LS_OP_STATE_COPY) | BENCH_OP(LS_OP_STATE_ACCEPT) | BENCH_OP(LS_OP_STATE_ZERO);
    fprintf(stderr, "linstate-bench: impl %s has no %s: its cases that call it are skipped:unsupported%s\n", im->name,
            ls_op_name(op),
            (ops & pool_ops) == pool_ops ? " (a pool's slot operations need state_copy, state_accept and state_zero)" : "");
}

/* Whether ceilings are re-measured per case (--ceiling; auto: on backends with device memory). */
static int ceiling_per_case(const bench_runner *R)
{
    return R->o->ceiling == BENCH_CEILING_CASE ||
           (R->o->ceiling == BENCH_CEILING_AUTO && (R->be->caps & LS_RT_DEVICE_MEMORY));
}

/*
 * The ceiling of the case about to be set up: the start-up one, or (per case) the same copy
 * measured again now, after the previous case freed its memory and before this one allocates.
 * On the H200 a GPU that has just freed tens of GB copies every buffer (kept or new) ~11 %
 * slower for some tens of milliseconds (docs/timing.md): the copies first settle, until they
 * reach 99 % of the start-up ceiling or CEILING_SETTLE_S passes, so neither this ceiling nor the
 * case measured after it sits in that transient; a GPU that stays slower gives a lower ceiling
 * and a negative drift. On failure: the start-up ceiling.
 */
#define CEILING_SETTLE_S 0.1
static void measure_case_ceiling(bench_runner *R, bench_device *D)
{
    R->cur_peak_gbps = D->copy_peak_gbps;
    if (!ceiling_per_case(R))
        return;
    double g = 0.0;
    if (ls_measure_copy_peak_settled(R->be, D->copy_peak_bytes, 0.99 * D->copy_peak_gbps,
                                     CEILING_SETTLE_S, &g) == 0 && g > 0)
        R->cur_peak_gbps = g;
    else
        fprintf(stderr, "linstate-bench: warning: ceiling not re-measured, start-up one used: %s\n",
                ls_last_error());
}

/* Setup (NVTX phase "setup") and verification gate (phase "verify") of case c on device D. */
static void begin_case(bench_runner *R, const bench_case *c, bench_device *D)
{
    release_case(R);
    R->cur = c;
    R->cur_err = NAN;
    bench_ctx *x = &R->ctx;
    x->c = c;
    x->env = &D->env;
    x->be = bench_guard_runtime(R->be); /* every buffer it allocates has guard zones (guard.c) */
    x->im = c->pt->impl;
    x->tune = &c->pt->tuning;
    x->rng = bench_hash(c->key);
    R->cur_kernel[0] = 0;
    R->cur_ops = 0;
    snprintf(R->cur_status, sizeof R->cur_status, "ok");
    const ls_pyimpl *py = ls_pyimpl_of(x->im);
    if (py && py->case_begin(py) != 0) { /* a Python impl drops what it kept of the last case */
        set_status(R, "error:setup", "python case_begin");
        return;
    }
    for (int op = 0; op < LS_OP_COUNT; op++)
        if ((c->e->ops & BENCH_OP(op)) && !ls_impl_op(x->im, (ls_op)op)) {
            set_status(R, "skipped:unsupported", NULL);
            say_missing_op(x->im, (ls_op)op, c->e->ops);
            return;
        }
    if (c->has_layout && !(x->im->caps & (c->layout == LS_STATE_VK ? LS_IMPL_VK : LS_IMPL_KV))) {
        set_status(R, "skipped:unsupported", NULL);
        return;
    }
    if (c->graph && (!(R->be->caps & LS_RT_GRAPHS) || !(x->im->caps & LS_IMPL_GRAPH))) {
        set_status(R, "skipped:no_graph", NULL);
        return;
    }
    ls_clear_error();
    ls_nvtx_phase_push(LS_PHASE_SETUP);
    int rc = c->e->setup(x);
    ls_nvtx_phase_pop();
    if (rc == BENCH_OOM) {
        set_status(R, "skipped:oom", NULL);
        return;
    }
    if (rc != 0 && x->unsupported) {
        set_status(R, "skipped:unsupported", "the impl does not take this case");
        return;
    }
    if (rc != 0) {
        set_status(R, "error:setup", "setup failed");
        return;
    }
    ls_op op;
    const void *params = c->e->launch ? c->e->launch(x, &op) : NULL;
    R->cur_ops = params ? BENCH_OP(op) : c->e->ops; /* impl_layout: the op the row launches */
    if (params && x->im->explain &&
        x->im->explain(op, params, x->tune, &D->env.dev, R->cur_kernel, sizeof R->cur_kernel) != 0)
        R->cur_kernel[0] = 0;
    if (!R->o->verify)
        return;
    ls_nvtx_phase_push(LS_PHASE_VERIFY);
    double err = NAN;
    rc = c->e->verify(x, &err);
    ls_nvtx_phase_pop();
    if (rc != 0 && x->unsupported) {
        set_status(R, "skipped:unsupported", "the impl does not take this case");
        return;
    }
    if (rc != 0) {
        set_status(R, "error:verify", "verification failed to run");
        return;
    }
    R->cur_err = err;
    if (!(err <= bench_verify_tolerance(c))) {
        fprintf(stderr, "linstate-bench: %s: max_rel_err %.3g over tolerance %.3g\n", c->name, err,
                bench_verify_tolerance(c));
        set_status(R, "fail_numerics", NULL);
    }
}

/* Whether the current case's samples are queued behind a stream hold: asked for (no --no-hold),
 * a run callback that never waits for the device (the graph-capturable entries) and an impl
 * whose ops never wait either (LS_IMPL_GRAPH). */
static int case_hold(const bench_runner *R, const bench_case *c)
{
    return !R->o->no_hold && (c->e->axes & BENCH_AXIS_GRAPH) != 0 && (c->pt->impl->caps & LS_IMPL_GRAPH);
}

/* Warm-up and timed samples of the set-up case into R->samples, and the row's clock columns;
 * 0 or -1. */
static int time_case(bench_runner *R, bench_device *D, ls_row *row, int *n)
{
    const bench_opts *o = R->o;
    int host = !(R->be->caps & LS_RT_DEVICE_MEMORY);
    ls_timing_config cfg = {
        .be = R->be,
        .stream = NULL,
        .regime = o->cache,
        .graph = R->cur->graph,
        .n_rot = R->ctx.n_rot,
        .warmup = host ? 1 : 3,
        .min_samples = o->min_samples,
        .max_samples = o->max_samples < R->cap_samples ? o->max_samples : R->cap_samples,
        .noise_target_pct = o->noise_target_pct,
        .min_time_s = o->min_time_s,
        .max_time_s = o->max_time_s,
        .profile = o->profile,
        .flush_buf = D->flush_buf,
        .flush_bytes = D->flush_bytes,
        .hold = case_hold(R, R->cur),
        .reset = R->cur->e->reset, /* pool alloc/free/fork: restore the pool, untimed */
        .clocks = D->clocks,
    };
    *n = 0;
    ls_clocks_case_begin(D->clocks);
    R->cur_stop = LS_STOP_NONE;
    int rc = ls_time_launches_why(&cfg, R->cur->e->run, &R->ctx, R->samples, R->cap_samples, n, &R->cur_stop);
    ls_clocks_case_end(D->clocks, &row->sm_clock_min_mhz, &row->sm_clock_median_mhz,
                       &row->samples_discarded);
    if (rc == 0 && *n == 0 && row->samples_discarded > 0)
        return ls_fail("all %d samples were taken while the GPU was throttled (discarded)",
                       row->samples_discarded);
    return rc;
}

static void fill_row(const bench_runner *R, const bench_case *c, ls_row *row)
{
    const bench_ctx *x = &R->ctx;
    snprintf(row->case_key, sizeof row->case_key, "%s", c->key);
    snprintf(row->mechanism, sizeof row->mechanism, "%s", ls_mechanism_name(c->model->mechanism));
    snprintf(row->op, sizeof row->op, "%s/%s", c->e->family, c->e->op);
    snprintf(row->variant, sizeof row->variant, "%s", c->e->variant);
    snprintf(row->model, sizeof row->model, "%s", c->model->name);
    row->tp = c->tp;
    row->batch = c->batch;
    row->draft_tokens = c->tokens;
    row->layers = x->pool ? ls_pool_desc(x->pool)->layers : 0;
    snprintf(row->conv_dtype, sizeof row->conv_dtype, "%s",
             ls_dtype_name(x->pool ? ls_pool_desc(x->pool)->conv_dtype : LS_BF16));
    snprintf(row->state_dtype, sizeof row->state_dtype, "%s", ls_dtype_name(c->state_dtype));
    row->pool_slots = x->pool ? ls_pool_slots(x->pool) - x->null_slot : 0; /* a held null slot 0 not counted */
    snprintf(row->cache_regime, sizeof row->cache_regime, "%s", ls_cache_regime_name(R->o->cache));
    row->graph = c->graph;
    ls_timing_config held = {.be = R->be, .hold = case_hold(R, c), .profile = R->o->profile};
    row->held = ls_timing_holds(&held);
    row->rotated = x->pool ? x->rotated : 0;
    row->max_rel_err = R->cur_err;
    snprintf(row->impl, sizeof row->impl, "%s", c->pt->impl->name);
    snprintf(row->impl_version, sizeof row->impl_version, "%s", c->pt->impl->version ? c->pt->impl->version : "");
    snprintf(row->tuning, sizeof row->tuning, "%s", c->pt->tune);
    snprintf(row->state_layout, sizeof row->state_layout, "%s", c->has_layout ? ls_state_layout_name(c->layout) : "");
    snprintf(row->kernel, sizeof row->kernel, "%s", R->cur == c ? R->cur_kernel : "");
    bench_impl_row(c->pt->impl, R->cur == c && R->cur_ops ? R->cur_ops : c->e->ops, row);
}

/* Records the row for the report and counts failures; NULL when out of memory. */
static bench_result *push_result(bench_runner *R, const bench_case *c, const ls_row *row)
{
    bench_results *res = &R->res;
    if (res->n == res->cap) {
        int ncap = res->cap ? 2 * res->cap : 256;
        bench_result *nr = realloc(res->rows, sizeof *nr * (size_t)ncap);
        if (!nr)
            return NULL;
        res->rows = nr;
        res->cap = ncap;
    }
    bench_result *r = &res->rows[res->n++];
    memset(r, 0, sizeof *r);
    r->c = c;
    r->repetition = row->repetition;
    r->median_us = row->t.median;
    r->gbps = row->gbps;
    r->pct_of_copy_peak = row->pct_of_copy_peak;
    r->max_rel_err = row->max_rel_err;
    snprintf(r->status, sizeof r->status, "%s", row->status);
    snprintf(r->kernel, sizeof r->kernel, "%s", row->kernel);
    if (strncmp(r->status, "fail_", 5) == 0 || strncmp(r->status, "error", 5) == 0)
        res->failures++;
    return r;
}

void bench_runner_keep_row(bench_runner *R, const bench_case *c, const ls_row *row)
{
    push_result(R, c, row);
}

/* Records the row for the report, counts failures, prints progress. */
static void record(bench_runner *R, const bench_case *c, const ls_row *row)
{
    bench_result *r = push_result(R, c, row);
    if (r)
        bench_report_progress(&R->res, r);
}

/* Guard zones of the set-up case (guard.c), read back outside any timed region: NULL intact, else
 * the status the row gets (fail_bounds, or `unreadable` when the read-back failed) and a line. */
static const char *guard_status(bench_runner *R, const char *when, const char *unreadable)
{
    char msg[512];
    int rc = bench_guard_check(&R->ctx, msg, sizeof msg);
    if (rc == 0)
        return NULL;
    if (rc > 0)
        fprintf(stderr, "linstate-bench: %s: %s: %s\n", R->cur->name, when, msg);
    else
        fprintf(stderr, "linstate-bench: %s: guard zones not read back %s: %s\n", R->cur->name, when, ls_last_error());
    return rc > 0 ? "fail_bounds" : unreadable;
}

/* One repetition (number rep) of case c here, in this process: (setup + verify the first time),
 * time, stats; the row, its samples in R->samples. Returns the sample count. */
int bench_runner_measure(bench_runner *R, const bench_case *c, int rep, ls_row *row)
{
    bench_device *D = device_of(R, c->device);
    int fresh = R->cur != c;
    if (fresh)
        release_case(R); /* on the device that owns its memory */
    select_device(R, D);
    if (fresh)
        measure_case_ceiling(R, D); /* outside the case's NVTX range */
    ls_nvtx_case_push(c->key, ls_mechanism_name(c->model->mechanism), c->batch, c->tokens);
    if (fresh) {
        bench_guard_arm(1);
        begin_case(R, c, D);
        bench_guard_arm(0);
        const char *g = strcmp(R->cur_status, "ok") == 0 || strcmp(R->cur_status, "fail_numerics") == 0
                            ? guard_status(R, "after verification", "error:verify") : NULL;
        if (g)
            snprintf(R->cur_status, sizeof R->cur_status, "%s", g);
    }
    ls_row_init(row, &D->prov);
    row->repetition = rep;
    snprintf(row->status, sizeof row->status, "%s", R->cur_status);
    int n = 0;
    if (strcmp(R->cur_status, "ok") == 0) {
        ls_clear_error();
        const ls_pyimpl *py = ls_pyimpl_of(c->pt->impl);
        if (py) /* host_call_us: the Python calls of this measurement only */
            py->calls_reset(py);
        int trc = time_case(R, D, row, &n);
        if (py)
            row->host_call_us = py->calls_median_us(py);
        if (trc != 0 && R->ctx.unsupported) {
            fprintf(stderr, "linstate-bench: %s: the impl does not take this case: %s\n", c->name, ls_last_error());
            snprintf(row->status, sizeof row->status, "skipped:unsupported");
        } else if (trc != 0 || n < 1) {
            fprintf(stderr, "linstate-bench: %s: timing failed: %s\n", c->name, ls_last_error());
            snprintf(row->status, sizeof row->status, "error:timing");
        }
        const char *g = guard_status(R, "after timing", "error:timing");
        if (g) { /* the samples are discarded; later repetitions are not timed */
            snprintf(row->status, sizeof row->status, "%s", g);
            snprintf(R->cur_status, sizeof R->cur_status, "%s", g);
        }
    }
    fill_row(R, c, row);
    ls_stats st;
    if (strcmp(row->status, "ok") == 0 && ls_stats_compute(R->samples, n, &st) == 0) {
        ls_row_set_result(row, &st, c->e->bytes(&R->ctx), R->cur_peak_gbps);
        row->noise_pct = st.noise_pct;
        snprintf(row->stop_reason, sizeof row->stop_reason, "%s", ls_stop_reason_name(R->cur_stop));
        /* Host rows fit in CPU caches while the 64 MiB copy peak does not: a share of it is
         * meaningless (300-600 %), so it is left empty (docs/csv.md). */
        if (!(R->be->caps & LS_RT_DEVICE_MEMORY))
            row->pct_of_copy_peak = NAN;
    } else {
        row->bytes = c->e->bytes(&R->ctx);
    }
    row->copy_peak_drift_pct = ls_copy_peak_drift_pct(R->cur_peak_gbps, D->copy_peak_gbps);
    ls_nvtx_case_pop();
    return strcmp(row->status, "ok") == 0 ? n : 0;
}

bench_device *bench_runner_device(bench_runner *R, int index)
{
    return device_of(R, index);
}

void bench_runner_error_row(bench_runner *R, const bench_case *c, int rep, const char *status, const char *message,
                            ls_row *row)
{
    ls_row_init(row, &device_of(R, c->device)->prov);
    row->repetition = rep;
    fill_row(R, c, row);
    snprintf(row->status, sizeof row->status, "%s", status);
    snprintf(row->message, sizeof row->message, "%s", message);
}

/* One repetition of case c, in the worker (R->sup) or here; its CSV row(s) written and recorded.
 * 0, or -1 when the sweep stops (R->stopped: the output failed, no worker could start). */
static int measure(bench_runner *R, const bench_case *c, ls_row *row)
{
    if (R->reps[c->index] == 0)
        R->res.started++;
    int rep = R->reps[c->index]++;
    while (bench_resume_kept(R, c->index, rep)) /* --resume: the indices not kept */
        rep = R->reps[c->index]++;
    int n = R->sup ? bench_sup_measure(R, c, rep, row) : bench_runner_measure(R, c, rep, row);
    if (n < 0) {
        R->stopped = 1;
        return -1;
    }
    ls_csv_signals_hold(); /* the row and its samples: a signal keeps both or neither */
    const int csv_bad = ls_csv_write(R->csv, row) != 0;
    const int samples_bad = !csv_bad && R->samples_csv && strcmp(row->status, "ok") == 0 &&
                            ls_samples_write(R->samples_csv, row, R->samples, n) != 0;
    if (csv_bad || samples_bad) {
        /* nothing more can be kept: stop measuring (the rows on disk stay whole). The error is
         * said here, once; the row is in neither file (a row without its samples is taken back
         * out of the CSV) and neither file is moved, so the two keep the same rows */
        fprintf(stderr, "linstate-bench: %s%s; the sweep stops here\n", samples_bad ? "--samples-out: " : "",
                ls_last_error());
        if (samples_bad && ls_csv_undo_last(R->csv) != 0)
            fprintf(stderr, "linstate-bench: %s: the CSV keeps this row, its samples are not saved\n",
                    ls_last_error());
        ls_csv_abandon(samples_bad ? R->csv : R->samples_csv,
                       samples_bad ? "the --samples-out write failed" : "the CSV write failed");
        R->csv_failed = 1;
        R->stopped = 1;
        R->res.failures++;
        /* the table shows it as not saved, not as a result (report.c) */
        snprintf(row->status, sizeof row->status, "not_saved");
        row->t.median = row->gbps = row->pct_of_copy_peak = NAN;
    }
    ls_csv_signals_release();
    record(R, c, row);
    return 0;
}

/* The GB callback: one call = one repetition = one measurement (iteration count fixed to 1). */
static void gb_case(ls_gb_state *st, void *vc)
{
    const bench_case *c = vc;
    bench_runner *R = g_runner;
    ls_row row;
    if (R->stopped || measure(R, c, &row) != 0) {
        ls_gb_skip_with_error(st, "not run: the sweep stopped");
        return;
    }
    if (strcmp(row.status, "ok") != 0) {
        ls_gb_skip_with_error(st, row.status);
        return;
    }
    while (ls_gb_keep_running(st))
        ls_gb_set_iteration_time(st, row.t.median * 1e-6);
    ls_gb_set_bytes_processed(st, row.bytes);
    ls_gb_set_counter(st, "GB/s", row.gbps);
    if (isfinite(row.pct_of_copy_peak))
        ls_gb_set_counter(st, "pct_copy_peak", row.pct_of_copy_peak);
    ls_gb_set_counter(st, "samples", (double)row.t.n);
}

int bench_runner_register(bench_runner *R)
{
    ls_gb_options opt = {.repetitions = R->o->repetitions, .iterations = 1, .min_time_s = 0};
    int n = 0;
    for (int i = 0; i < R->plan->n; i++) {
        int left = R->left ? R->left[i] : -1; /* --resume: the repetitions not kept */
        opt.repetitions = left < 0 ? R->o->repetitions : left;
        if (left != 0) {
            ls_gb_register_opts(R->plan->cases[i].name, gb_case, &R->plan->cases[i], &opt);
            n++;
        }
    }
    return n;
}

void bench_runner_free(bench_runner *R)
{
    bench_sup_free(R->sup);
    R->sup = NULL;
    release_case(R);
    for (int i = 0; i < R->n_devs; i++)
        ls_clocks_close(R->devs[i].clocks);
    for (int i = 0; i < R->n_devs; i++)
        if (R->devs[i].flush_buf) {
            R->be->set_device(R->devs[i].index);
            R->be->mem_free(R->devs[i].flush_buf);
        }
    free(R->devs);
    free(R->reps);
    free(R->left);
    free(R->kept);
    free(R->samples);
    free(R->res.rows);
    R->devs = NULL;
    R->reps = NULL;
    R->left = NULL;
    R->kept = NULL;
    R->samples = NULL;
    R->res.rows = NULL;
    R->res.n = R->res.cap = 0;
    g_runner = NULL;
}
