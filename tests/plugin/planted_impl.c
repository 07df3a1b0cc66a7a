/*
 * planted_impl.c — a TEST-ONLY impl plugin that plants a known slowdown: "<wrapped>_planted"
 * forwards every op to the built-in impl PLANT_WRAPS ("linstate" or "host", fixed at build time)
 * and appends extra work to one op, gdn, so that scripts/compare.py can be shown to catch a
 * regression of known size (issue 13; scripts/aa-check.sh runs it). Never part of linstate's own
 * impls: it is only loaded with --impl-path.
 *
 * Knobs: the wrapped impl's knobs (same names, values and defaults, so its tuning string is the
 * wrapped impl's plus one item), then plant.pct = 5 | 0 | 10 | 50, the size of the slowdown.
 *
 * The planted work, after the forwarded gdn call, on gdn calls with batch >= PLANT_MIN_BATCH:
 *  - host runtime (synchronous): a spin of plant.pct % of the forwarded call's own wall time,
 *    measured around it, so the slowdown is plant.pct % by construction;
 *  - cuda runtime: a memset, on the op's stream, of plant.pct % of the call's state traffic,
 *    (1 + T) x the state bytes of its rows (decode reads and writes the state; verify reads it
 *    and writes T intermediate states), into a scratch buffer of this plugin. The state-bound
 *    gdn kernel and a memset move bytes at about the same rate, so this is about plant.pct % of
 *    the call's time; scripts/aa-check.sh measures and prints the real figure. The memset needs
 *    no CUDA code here and may be captured in a CUDA graph; the scratch is (re)allocated only
 *    when a larger call comes, which happens in the untimed verify / warm-up calls.
 *
 * linstate-bench exports its symbols (ENABLE_EXPORTS), so the wrapped impl and the runtime are
 * found with dlsym at load time.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ls_kernels.h"

#ifndef PLANT_WRAPS
#define PLANT_WRAPS "linstate"
#endif
#ifndef PLANT_MIN_BATCH
#define PLANT_MIN_BATCH 512
#endif

#define PL_EXPORT __attribute__((visibility("default")))

static const int plant_pcts[] = {5, 0, 10, 50}; /* the values of plant.pct, in order */

static const ls_impl *wrapped;
static const ls_runtime *rt;
static ls_knob_def knobs[LS_MAX_KNOBS];
static int plant_knob; /* index of plant.pct */
static ls_impl planted;
static char name_buf[64], version_buf[160];
static void *scratch;
static size_t scratch_bytes;
static char err_buf[256];

/* The wrapped impl's view of a tuning: the same values without plant.pct (the last knob). */
static ls_tuning inner(const ls_tuning *t)
{
    ls_tuning in;
    memset(&in, 0, sizeof in); /* no tuning given: every knob at its default (index 0) */
    if (t)
        in = *t;
    in.n = wrapped->n_knobs;
    return in;
}

static int pct_of(const ls_tuning *t)
{
    return t && t->n > plant_knob ? plant_pcts[t->v[plant_knob]] : plant_pcts[0];
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    snprintf(err_buf, sizeof err_buf, "%s_planted: %s", PLANT_WRAPS, what);
    return -1;
}

static int pl_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    int pct = pct_of(t);
    int plant = pct > 0 && p->batch >= PLANT_MIN_BATCH;
    double t0 = now_s();
    int rc = wrapped->gdn(p, &in, s);
    if (rc != 0 || !plant)
        return rc;
    if (!(rt->caps & LS_RT_DEVICE_MEMORY)) { /* host: spin pct % of the call just made */
        double end = now_s() + (now_s() - t0) * pct / 100.0;
        while (now_s() < end) {
        }
        return 0;
    }
    size_t elem = p->state_dtype == LS_BF16 ? 2 : 4;
    size_t state = (size_t)p->batch * (size_t)p->heads_v * (size_t)p->dk * (size_t)p->dv * elem;
    size_t bytes = (size_t)((double)state * (1.0 + p->tokens) * pct / 100.0);
    if (bytes > scratch_bytes) {
        if (scratch)
            rt->mem_free(scratch);
        scratch_bytes = 0;
        if (!(scratch = rt->mem_alloc(bytes)))
            return fail("cannot allocate the planted scratch");
        scratch_bytes = bytes;
    }
    return rt->mem_set(scratch, 0x3c, bytes, s) ? fail("planted memset failed") : 0;
}

static int pl_conv(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    return wrapped->conv_update(p, &in, s);
}
static int pl_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    return wrapped->kda(p, &in, s);
}
static int pl_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    return wrapped->ssu(p, &in, s);
}
static int pl_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    return wrapped->state_copy(p, &in, s);
}
static int pl_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    return wrapped->state_accept(p, &in, s);
}
static int pl_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    ls_tuning in = inner(t);
    return wrapped->state_zero(p, &in, s);
}

static const char *pl_last_error(void)
{
    if (err_buf[0])
        return err_buf;
    return wrapped->last_error ? wrapped->last_error() : NULL;
}

static int pl_explain(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev, char *buf,
                      size_t cap)
{
    ls_tuning in = inner(t);
    if (!cap)
        return -1;
    if (!wrapped->explain || wrapped->explain(op, params, &in, dev, buf, cap) != 0)
        buf[0] = '\0';
    size_t len = strlen(buf);
    if (op == LS_OP_GDN) /* scripts/aa-check.sh reads this to find the planted rows */
        snprintf(buf + len, cap - len, "%s+planted %d%% at B>=%d", len ? " " : "", pct_of(t), PLANT_MIN_BATCH);
    return buf[0] ? 0 : -1;
}

/* Builds the wrapper around the wrapped impl found in the host process; NULL when it is absent. */
static const ls_impl *build(void)
{
    const ls_impl *(*get)(const char *) = (const ls_impl *(*)(const char *))dlsym(RTLD_DEFAULT, "ls_impl_get");
    const ls_runtime *(*get_rt)(const char *) =
        (const ls_runtime *(*)(const char *))dlsym(RTLD_DEFAULT, "ls_runtime_get");
    if (!get || !get_rt || !(wrapped = get(PLANT_WRAPS)) || !wrapped->gdn ||
        !(rt = get_rt(wrapped->runtime)) || wrapped->n_knobs >= LS_MAX_KNOBS) {
        fprintf(stderr, "%s_planted: impl '%s' not found in this process (is linstate-bench built with "
                        "ENABLE_EXPORTS and %s?)\n", PLANT_WRAPS, PLANT_WRAPS, PLANT_WRAPS);
        return NULL;
    }
    for (int i = 0; i < wrapped->n_knobs; i++)
        knobs[i] = wrapped->knobs[i];
    plant_knob = wrapped->n_knobs;
    knobs[plant_knob] = (ls_knob_def){"plant.pct", "5|0|10|50",
                                      "TEST ONLY: slow gdn by this % (scripts/aa-check.sh)"};
    snprintf(name_buf, sizeof name_buf, "%s_planted", PLANT_WRAPS);
    snprintf(version_buf, sizeof version_buf, "%s + planted gdn slowdown (test only)",
             wrapped->version ? wrapped->version : "");
    planted = *wrapped;
    planted.name = name_buf;
    planted.version = version_buf;
    planted.knobs = knobs;
    planted.n_knobs = wrapped->n_knobs + 1;
    planted.gdn = pl_gdn;
    planted.conv_update = wrapped->conv_update ? pl_conv : NULL;
    planted.kda = wrapped->kda ? pl_kda : NULL;
    planted.ssu = wrapped->ssu ? pl_ssu : NULL;
    planted.state_copy = wrapped->state_copy ? pl_copy : NULL;
    planted.state_accept = wrapped->state_accept ? pl_accept : NULL;
    planted.state_zero = wrapped->state_zero ? pl_zero : NULL;
    planted.last_error = pl_last_error;
    planted.explain = pl_explain;
    return &planted;
}

PL_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    if (abi_version != LS_IMPL_ABI)
        return NULL;
    return wrapped ? &planted : build();
}
