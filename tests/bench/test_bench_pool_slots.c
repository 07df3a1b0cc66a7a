/*
 * test_bench_pool_slots.c — the pool-capacity axis (--pool-slots) on the host backend: the plan
 * (one case per N for the kernels only, /S:N keys, N < B not planned), the serving default
 * (bench_case_capacity), B distinct random slots of N per rotated layer with a different set per
 * layer, each layer's launch params reading its own list, the verification gate passing on those
 * random slots, and the memory budget counting all N + 1 slots (skipped:oom).
 */
#include <stdint.h>
#include <string.h>

#include "bench_testutil.h"

static void plan_axis(void)
{
    bench_opts o;
    bench_opts_init(&o);
    o.models[0] = "qwen3-next-80b-a3b";
    o.n_models = 1;
    o.tp[0] = 8;
    o.batch[0] = 1;
    o.batch[1] = 4;
    o.n_batch = 2;
    o.draft[0] = 1;
    o.n_draft = 1;
    o.families[0] = "gdn";
    o.families[1] = "pool/alloc";
    o.n_families = 2;
    o.pool_slots[0] = 2;
    o.pool_slots[1] = 64;
    o.n_pool_slots = 2;
    int dev = 0;
    bench_plan p;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
    int gdn = 0, pool = 0;
    for (int i = 0; i < p.n; i++) {
        const bench_case *c = &p.cases[i];
        if (strcmp(c->e->family, "gdn") == 0) {
            gdn++;
            LS_CHECK(c->pool_slots >= c->batch);
            char want[64];
            snprintf(want, sizeof want, "/fp32/S:%d", (int)c->pool_slots);
            LS_CHECK(strstr(c->key, want) != NULL);
        } else {
            pool++;
            LS_CHECK_EQ_INT(c->pool_slots, 0); /* the pool paths keep their own capacity rule */
            LS_CHECK(strstr(c->key, "/S:") == NULL);
        }
    }
    LS_CHECK_EQ_INT(gdn, 3); /* B 1 at S 2 and 64, B 4 at S 64 (S 2 < B 4 is not planned) */
    LS_CHECK_EQ_INT(pool, 2);
    bench_plan_free(&p);
}

static void serving_default(void)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    bench_env gpu, host;
    memset(&gpu, 0, sizeof gpu);
    memset(&host, 0, sizeof host);
    ls_runtime dev_rt = *ls_runtime_host();
    dev_rt.caps |= LS_RT_DEVICE_MEMORY;
    gpu.be = &dev_rt;
    host.be = ls_runtime_host();
    c.batch = 4;
    c.tokens = 1;
    LS_CHECK_EQ_INT(bench_case_capacity(&c, &gpu), BENCH_SERVING_SLOTS);
    LS_CHECK_EQ_INT(bench_case_capacity(&c, &host), BENCH_SERVING_SLOTS_HOST);
    c.tokens = 4;
    LS_CHECK_EQ_INT(bench_case_capacity(&c, &gpu), BENCH_SERVING_SLOTS_SPEC);
    c.batch = 600;
    LS_CHECK_EQ_INT(bench_case_capacity(&c, &gpu), 600); /* never under the batch */
    c.tokens = 1;
    LS_CHECK_EQ_INT(bench_case_capacity(&c, &gpu), 600);
    c.pool_slots = 1000;
    LS_CHECK_EQ_INT(bench_case_capacity(&c, &host), 1000);
}

/* Layer l's B slots: distinct, in [0, S), the params of layer l read them; layers differ. */
static void random_slots(const char *family, const char *model, int B, int T, ls_dtype dt)
{
    const int S = 64;
    bt_pool_slots = S;
    bt_case t;
    bt_setup(&t, ls_runtime_host(), family, model, B, T, dt, NULL, (int64_t)1 << 31);
    LS_REQUIRE(t.setup_rc == 0);
    LS_CHECK_EQ_INT(ls_pool_capacity(t.x.pool), S);
    LS_CHECK_EQ_INT(ls_pool_slots(t.x.pool), S + 1);
    LS_REQUIRE(t.x.n_rot == 2);
    int differ = 0, outside_first_b = 0;
    for (int l = 0; l < t.x.n_rot; l++) {
        const int32_t *h = bench_layer_slots(&t.x, l); /* host backend: host memory */
        LS_CHECK((uintptr_t)h % 16 == 0); /* kernels compiled for aligned index pointers */
        for (int i = 0; i < B; i++) {
            LS_CHECK(h[i] >= 0 && h[i] < S);
            outside_first_b += h[i] >= B;
            for (int j = 0; j < i; j++)
                LS_CHECK(h[i] != h[j]);
            differ += l > 0 && h[i] != bench_layer_slots(&t.x, 0)[i];
        }
    }
    LS_CHECK(differ > 0);          /* a different set (or order) per rotated layer */
    LS_CHECK(outside_first_b > 0); /* not the pool's first B slots */
    /* the gate's slots (host copy) are layer 0's */
    LS_CHECK(memcmp(t.x.slots, bench_layer_slots(&t.x, 0), sizeof(int32_t) * (size_t)B) == 0);
    if (strcmp(family, "conv1d_update") == 0) {
        const ls_conv_params *p;
        for (int l = 0; l < t.x.n_rot; l++) {
            LS_REQUIRE(bench_conv_layer_params(&t.x, l, &p) >= 1);
            LS_CHECK(p->slot_idx == bench_layer_slots(&t.x, l));
        }
    }
    double err = -1;
    LS_CHECK_EQ_INT(t.c->e->verify(&t.x, &err), 0);
    LS_CHECK(err == 0.0); /* host impl vs the float64 reference, on the random slots */
    LS_CHECK_EQ_INT(t.c->e->run(&t.x, 1, NULL), 0);
    bt_release(&t);
    bt_pool_slots = 0;
}

/* The budget holds the whole pool: S + 1 slots of main and spec state per rotated layer. */
static void budget_counts_pool(void)
{
    bt_pool_slots = 4096;
    bt_case t;
    bt_setup(&t, ls_runtime_host(), "gdn/decode", "qwen3-next-80b-a3b", 1, 1, LS_F32, NULL, (int64_t)256 << 20);
    LS_CHECK_EQ_INT(t.setup_rc, BENCH_OOM); /* 4097 x ~262 KiB > 256 MiB for one layer */
    bt_release(&t);
    bt_pool_slots = 0;
}

int main(void)
{
    plan_axis();
    serving_default();
    random_slots("gdn/decode", "qwen3-next-80b-a3b", 8, 1, LS_F32);
    random_slots("kda/verify", "kimi-linear-48b-a3b", 4, 2, LS_F32);
    random_slots("mamba2_ssu/decode", "nemotron-h-8b", 8, 1, LS_BF16);
    random_slots("conv1d_update/decode", "qwen3-next-80b-a3b", 8, 1, LS_BF16);
    budget_counts_pool();
    return ls_test_exit();
}
