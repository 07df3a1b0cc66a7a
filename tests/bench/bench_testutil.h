/*
 * bench_testutil.h — sets up ONE planned case of linstate-bench in-process, as the runner does
 * (plan -> context -> entry setup), for the tests of tests/bench. The case is selected by
 * (family or family/op, model, B, T, state dtype, variant) at tp 8 and must plan to exactly one
 * case; the memory budget is given, rotation is capped at 2 layers as on the host backend.
 * The device is described by BT_DEVICE below, not read from this machine: the rotation count
 * follows the L2 size and the host runtime takes it (and the core count) from sysconf, so a
 * test that read the machine would pass or fail with the machine's caches (docs/timing.md).
 */
#ifndef LS_BENCH_TESTUTIL_H
#define LS_BENCH_TESTUTIL_H

#include <string.h>

#include "families/family.h"
#include "ls_test.h"

typedef struct bt_case {
    bench_plan plan;
    bench_env env;
    bench_ctx x;
    const bench_case *c;
    int setup_rc; /* the entry's setup return: 0, BENCH_OOM or -1 */
    ls_tuning tuning;
} bt_case;

/* The impl the next bt_setup uses (NULL: the runtime's default impl); tests that plant a faulty
 * impl set it. */
static const ls_impl *bt_impl;
/* --pool-slots of the next bt_setup (0: not given, the serving default). */
static int bt_pool_slots;
/* The cache regime of the next bt_setup (default rotate). */
static ls_cache_regime bt_cache = LS_CACHE_ROTATE;

/* The fixed device every bt_setup case sees: an H200's L2 and SM count, so the rotation rule
 * (8 x L2 / bytes per call, capped at 2 here) gives the same layer count on every machine. */
#define BT_L2_BYTES ((int64_t)60 << 20)
#define BT_SM_COUNT 132

/* variant NULL = the default variant. Exits the test if the selection is not exactly one case. */
static inline void bt_setup(bt_case *t, const ls_runtime *be, const char *family, const char *model, int batch,
                            int draft, ls_dtype dt, const char *variant, int64_t budget)
{
    bench_opts o;
    bench_opts_init(&o);
    o.models[0] = model;
    o.n_models = 1;
    o.tp[0] = 8;
    o.batch[0] = batch;
    o.n_batch = 1;
    o.draft[0] = draft;
    o.n_draft = 1;
    o.dtypes[0] = dt;
    o.families[0] = family;
    o.n_families = 1;
    if (variant) {
        o.variants[0] = variant;
        o.n_variants = 1;
    }
    if (bt_pool_slots) {
        o.pool_slots[0] = bt_pool_slots;
        o.n_pool_slots = 1;
    }
    int dev = 0;
    memset(t, 0, sizeof *t);
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &t->plan) == 0);
    if (t->plan.n != 1)
        fprintf(stderr, "%s %s B=%d T=%d variant %s: %d cases planned\n", family, model, batch, draft,
                variant ? variant : "(default)", t->plan.n);
    LS_REQUIRE(t->plan.n == 1);
    t->c = &t->plan.cases[0];
    t->env.be = be;
    LS_REQUIRE(be->device_info(0, &t->env.dev) == 0);
    t->env.dev.l2_bytes = BT_L2_BYTES;
    t->env.dev.sm_count = BT_SM_COUNT;
    t->env.budget_bytes = budget;
    t->env.cache = bt_cache;
    t->env.max_rot = 2;
    t->x.c = t->c;
    t->x.env = &t->env;
    t->x.be = be;
    t->x.im = bt_impl ? bt_impl : ls_impl_default(be);
    LS_REQUIRE(t->x.im != NULL);
    ls_tuning_default(t->x.im, &t->tuning);
    t->x.tune = &t->tuning;
    t->x.rng = bench_hash(t->c->key);
    t->setup_rc = t->c->e->setup(&t->x);
    if (t->setup_rc != 0 && t->setup_rc != BENCH_OOM)
        fprintf(stderr, "%s: setup: %d %s\n", t->c->name, t->setup_rc, ls_last_error());
}

static inline void bt_release(bt_case *t)
{
    bench_ctx_release(&t->x);
    bench_plan_free(&t->plan);
}

#endif /* LS_BENCH_TESTUTIL_H */
