/*
 * test_budget.c — docs/pool.md: the pool sizes of the #13004 benchmarks and the capacity formula
 * S = floor(budget * r/(1+r) / per_req / (1+T)).
 *
 * The full-size pools (1.76 GiB + 7.05 GiB, 10.37 GiB) are created for real on a "reserve"
 * backend: the host table with mem_alloc/mem_set/mem_free/copy_h2d replaced by address-space
 * reservations (PROT_NONE, never touched), so the test checks what the pool asks the backend
 * for — every byte — without needing the memory.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <sys/mman.h>

#include "pool_test_util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ------------------------------------------------------------- the reserve backend */

#define MAX_RES 64
static struct { void *ptr; size_t bytes; } g_res[MAX_RES];
static int64_t g_reserved, g_live;

static void *res_alloc(size_t bytes)
{
    for (int i = 0; i < MAX_RES; i++) {
        if (g_res[i].ptr)
            continue;
        void *p = mmap(NULL, bytes ? bytes : 1, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            ls_fail("reserve: mmap of %zu bytes failed", bytes);
            return NULL;
        }
        g_res[i].ptr = p;
        g_res[i].bytes = bytes;
        g_reserved += (int64_t)bytes;
        g_live++;
        return p;
    }
    ls_fail("reserve: table full");
    return NULL;
}

static void res_free(void *p)
{
    for (int i = 0; i < MAX_RES; i++)
        if (g_res[i].ptr == p) {
            munmap(p, g_res[i].bytes ? g_res[i].bytes : 1);
            g_res[i].ptr = NULL;
            g_live--;
            return;
        }
}

static int res_set(void *dst, int byte, size_t bytes, ls_stream s) { return 0; }
static int res_h2d(void *dst, const void *src, size_t bytes) { return 0; }

static ls_runtime reserve_backend(void)
{
    ls_runtime be = *ls_runtime_host();
    be.name = "reserve";
    be.mem_alloc = res_alloc;
    be.mem_free = res_free;
    be.mem_set = res_set;
    be.copy_h2d = res_h2d;
    return be;
}

/* The host impl's state ops, declared to run on the "reserve" runtime (the pool checks). */
static const ls_impl *reserve_impl(void)
{
    static ls_impl im;
    im = *ls_impl_get("host");
    im.runtime = "reserve";
    return &im;
}

/* ------------------------------------------------------------- tests */

static ls_state_desc desc_named(const char *model, int tp, ls_dtype tdt, int spec)
{
    for (int i = 0; i < ls_model_count(); i++)
        if (strcmp(ls_model_at(i)->name, model) == 0)
            return pt_desc(i, tp, tdt, spec);
    exit(1);
}

/* Sum of data_len over the buffer infos [from, to). */
static int64_t infos_bytes(const ls_buf_info *v, int from, int to)
{
    int64_t sum = 0;
    for (int i = from; i < to; i++)
        sum += v[i].data_len;
    return sum;
}

/*
 * Qwen3-Next + NEXTN at tp 2, fp32 SSM, T = 4, radix off: S = 48 -> main 49 x 38,633,472 B
 * (1.76 GiB), spec 49 x 4 x 38,633,472 B (7.05 GiB).
 */
static void test_qwen_nextn(void)
{
    const ls_runtime be = reserve_backend();
    ls_state_desc d = desc_named("qwen3-next-80b-a3b", 2, LS_F32, 4);
    const int64_t per_req = 38633472;
    LS_CHECK_EQ_INT(ls_bytes_per_req(&d), per_req);
    g_reserved = 0;
    ls_pool_config cfg = {.capacity = 48, .pad = LS_PAD_LAST, .zero = LS_ZERO_AT_FREE, .impl = reserve_impl(),
                          .tuning = &(ls_tuning){0}};
    ls_pool *p = ls_pool_create(&d, &cfg, &be);
    LS_REQUIRE(p != NULL);
    const int64_t idx_bytes = (3 + 1) * 49 * 4; /* index scratch src | dst | step, identity table */
    LS_CHECK_EQ_INT(g_reserved, 49 * per_req + 49 * 4 * per_req + idx_bytes);

    ls_buf_info v[4 * 36];
    LS_REQUIRE(ls_pool_buf_infos(p, 1, v, 4 * 36) == 4 * 36);
    const int64_t main_bytes = infos_bytes(v, 0, 72), spec_bytes = infos_bytes(v, 72, 144);
    LS_CHECK_EQ_INT(main_bytes, 49 * per_req);
    LS_CHECK_EQ_INT(spec_bytes, 49 * 4 * per_req);
    LS_CHECK_NEAR(main_bytes / GIB, 1.76, 0.005, 0);
    LS_CHECK_NEAR(spec_bytes / GIB, 7.05, 0.005, 0);
    ls_pool_destroy(p);
    LS_CHECK_EQ_INT(g_live, 0);
}

/* Kimi-Linear at tp 2 (radix forced off, no spec): S = 512 -> 513 x 21,708,800 B = 10.37 GiB. */
static void test_kimi(void)
{
    const ls_runtime be = reserve_backend();
    ls_state_desc d = desc_named("kimi-linear-48b-a3b", 2, LS_F32, 0);
    g_reserved = 0;
    ls_pool_config cfg = {.capacity = 512, .pad = LS_PAD_LAST, .zero = LS_ZERO_AT_FREE, .impl = reserve_impl(),
                          .tuning = &(ls_tuning){0}};
    ls_pool *p = ls_pool_create(&d, &cfg, &be);
    LS_REQUIRE(p != NULL);
    LS_CHECK_EQ_INT(g_reserved - (3 + 1) * 513 * 4, 513ll * 21708800); /* index scratch, identity */
    LS_CHECK_NEAR(513.0 * 21708800 / GIB, 10.37, 0.005, 0);
    ls_buf_info v[80];
    LS_REQUIRE(ls_pool_buf_infos(p, 1, v, 80) == 80); /* no spec: include_spec changes nothing */
    LS_CHECK_EQ_INT(infos_bytes(v, 0, 80), 513ll * 21708800);
    ls_pool_destroy(p);
    LS_CHECK_EQ_INT(g_live, 0);
}

/* The capacity formula, checked against the same arithmetic done exactly (r = 0.9 -> 9/19). */
static void test_formula(void)
{
    for (int i = 0; i < ls_model_count(); i++)
        for (int T = 0; T <= 4; T += 4) {
            ls_state_desc d = pt_desc(i, 2, LS_F32, T);
            const int64_t per_req = ls_bytes_per_req(&d);
            /* half-way budgets: no float rounding can move them across a slot boundary */
            for (int64_t k = 0; k < 600; k += 37) {
                const int64_t m = k * per_req * (1 + T) + per_req / 2;    /* pool bytes */
                const int64_t budget = m * 19 / 9;                        /* rest */
                int64_t want = (budget * 9 / 19) / per_req / (1 + T);
                LS_CHECK_EQ_INT(want, k);
                LS_CHECK_EQ_INT(ls_capacity_from_budget(&d, budget, 0.9), k);
            }
        }
    /* an 80 GiB rest on Qwen3-Next tp 2: M = 80 GiB * 0.9/1.9 */
    ls_state_desc q = desc_named("qwen3-next-80b-a3b", 2, LS_F32, 0);
    const int64_t rest = 80ll << 30;
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, rest, 0.9), (rest * 9 / 19) / 38633472);
    ls_state_desc q4 = desc_named("qwen3-next-80b-a3b", 2, LS_F32, 4);
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q4, rest, 0.9), (rest * 9 / 19) / 38633472 / 5);
    /* another ratio: r = 1 gives half the budget */
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, 10 * 38633472ll, 1.0), 5);
    /* does not fit one slot: 0 */
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, 38633472, 0.9), 0);
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, 0, 0.9), 0);
    /* bad inputs are named */
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, -1, 0.9), -1);
    LS_CHECK(pt_error_has("budget -1"));
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, rest, 0.0), -1);
    LS_CHECK(pt_error_has("ratio 0"));
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&q, rest, NAN), -1);
    LS_CHECK(pt_error_has("ratio"));
    ls_state_desc bad = q;
    bad.layers = 0;
    LS_CHECK_EQ_INT(ls_capacity_from_budget(&bad, rest, 0.9), -1);
    LS_CHECK(pt_error_has("layers 0"));
}

int main(void)
{
    test_qwen_nextn();
    test_kimi();
    test_formula();
    return ls_test_exit();
}
