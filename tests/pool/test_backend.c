/*
 * test_backend.c — the pool reaches memory only through the runtime table and state ops only
 * through its impl, and a failure anywhere leaves the pool's bookkeeping unchanged and leaks
 * nothing.
 *
 * A "spy" runtime and impl wrap the host ones: it counts calls, tracks live allocations, poisons fresh
 * memory, and fails the k-th call of a chosen entry on demand. Checked: a new pool reads zero
 * despite the poison; which state ops each operation issues under each zero policy; staging of
 * overlapping copies through copy_d2d; create failing at every allocation releases everything;
 * state_zero / state_copy / state_accept / upload / copy_h2d / sync / mem_alloc failures return
 * -1 with the pool unchanged. Index lists travel through upload (never waiting for the device)
 * up to LS_UPLOAD_MAX_BYTES and through copy_h2d beyond, one-row lists not at all (they point
 * into the identity table create writes); no operation syncs but an overlapping copy, before it
 * frees its staging buffer.
 */
#include "pool_test_util.h"

enum { OP_ALLOC, OP_SET, OP_H2D, OP_UP, OP_D2D, OP_SYNC, OP_COPY, OP_ACCEPT, OP_ZERO, N_OPS };
static const char *k_op_names[N_OPS] = {"mem_alloc", "mem_set", "copy_h2d", "upload", "copy_d2d",
                                        "sync", "state_copy", "state_accept", "state_zero"};

static struct {
    int calls[N_OPS];
    int fail_op, fail_at; /* fail the fail_at-th call (1-based) of fail_op; -1 = never */
    int live;
} g;

static const ls_runtime *host(void) { return ls_runtime_host(); }

static int should_fail(int op)
{
    g.calls[op]++;
    if (op == g.fail_op && g.calls[op] == g.fail_at)
        return ls_fail("spy: injected %s failure", k_op_names[op]);
    return 0;
}

static void *spy_alloc(size_t n)
{
    if (should_fail(OP_ALLOC))
        return NULL;
    void *p = host()->mem_alloc(n);
    g.live += p != NULL;
    if (p)
        memset(p, 0xA5, n); /* fresh backend memory is garbage: the pool must zero it */
    return p;
}
static void spy_free(void *p)
{
    g.live--;
    host()->mem_free(p);
}
static int spy_set(void *d, int b, size_t n, ls_stream s)
{
    return should_fail(OP_SET) ? -1 : host()->mem_set(d, b, n, s);
}
static int spy_h2d(void *d, const void *s, size_t n)
{
    return should_fail(OP_H2D) ? -1 : host()->copy_h2d(d, s, n);
}
static int spy_up(void *d, const void *s, size_t n, ls_stream st)
{
    return should_fail(OP_UP) ? -1 : host()->upload(d, s, n, st);
}
static int spy_d2d(void *d, const void *s, size_t n, ls_stream st)
{
    return should_fail(OP_D2D) ? -1 : host()->copy_d2d(d, s, n, st);
}
static int spy_sync(ls_stream s) { return should_fail(OP_SYNC) ? -1 : host()->sync(s); }
static int spy_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return should_fail(OP_COPY) ? -1 : ls_impl_get("host")->state_copy(p, t, s);
}
static int spy_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return should_fail(OP_ACCEPT) ? -1 : ls_impl_get("host")->state_accept(p, t, s);
}
static int spy_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return should_fail(OP_ZERO) ? -1 : ls_impl_get("host")->state_zero(p, t, s);
}

static ls_runtime spy_backend(void)
{
    ls_runtime be = *host();
    be.name = "spy";
    be.mem_alloc = spy_alloc;
    be.mem_free = spy_free;
    be.mem_set = spy_set;
    be.copy_h2d = spy_h2d;
    be.upload = spy_up;
    be.copy_d2d = spy_d2d;
    be.sync = spy_sync;
    return be;
}

/* The pool's state ops come from an impl on the pool's runtime: the spy's own. */
static const ls_impl spy_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "spy",
    .runtime = "spy",
    .state_copy = spy_copy,
    .state_accept = spy_accept,
    .state_zero = spy_zero,
};

static void reset(int fail_op, int fail_at)
{
    memset(g.calls, 0, sizeof g.calls);
    g.fail_op = fail_op;
    g.fail_at = fail_at;
}

enum { S = 4, T = 2 };

static ls_pool *make(const ls_runtime *be, int preset, ls_zero_policy zero)
{
    ls_state_desc d = pt_data_desc(preset, LS_BF16, T);
    ls_pool_config cfg = {.capacity = S, .pad = LS_PAD_LAST, .zero = zero, .impl = &spy_impl,
                          .tuning = &(ls_tuning){0}};
    reset(-1, 0);
    ls_pool *p = ls_pool_create(&d, &cfg, be);
    LS_REQUIRE(p != NULL);
    return p;
}

/* Creation fails cleanly at every allocation and every zeroing memset. */
static void test_create_failures(const ls_runtime *be, int preset)
{
    ls_state_desc d = pt_data_desc(preset, LS_BF16, T);
    ls_pool_config cfg = {.capacity = S, .impl = &spy_impl, .tuning = &(ls_tuning){0}};
    reset(-1, 0);
    ls_pool *p = ls_pool_create(&d, &cfg, be);
    LS_REQUIRE(p != NULL);
    int n_calls[N_OPS];
    memcpy(n_calls, g.calls, sizeof n_calls);
    LS_CHECK_EQ_INT(n_calls[OP_ALLOC], 2 * (d.n_conv + 1) + 1); /* main + spec each, indices */
    LS_CHECK_EQ_INT(n_calls[OP_SET], 2 * (d.n_conv + 1));
    LS_CHECK_EQ_INT(n_calls[OP_SYNC], 1);                       /* the zeroing is complete */
    ls_pool_destroy(p);
    LS_CHECK_EQ_INT(g.live, 0);
    LS_CHECK_EQ_INT(n_calls[OP_H2D], 1);                        /* the identity table */
    static const int create_ops[] = {OP_ALLOC, OP_SET, OP_H2D, OP_SYNC};
    for (int o = 0; o < 4; o++)
        for (int k = 1, op = create_ops[o]; k <= n_calls[op]; k++) {
            reset(op, k);
            ls_clear_error();
            LS_CHECK(ls_pool_create(&d, &cfg, be) == NULL);
            LS_CHECK(pt_error_has("injected"));
            LS_CHECK_EQ_INT(g.live, 0);
        }
}

/* Which ops each operation issues; overlapping copies stage through copy_d2d. */
static void test_op_counts(const ls_runtime *be, int preset)
{
    for (int z = 0; z < 2; z++) {
        ls_pool *p = make(be, preset, (ls_zero_policy)z);
        const int L = ls_pool_desc(p)->layers, nb = ls_pool_n_buffers(p);
        for (int32_t s = 0; s <= S; s++) /* created zero, main and spec, despite the poison */
            for (int t = -1; t < T; t++)
                LS_CHECK_EQ_INT(pt_mismatch(p, s, t, PT_ZERO), 0);
        int32_t a[S];
        reset(-1, 0);
        LS_REQUIRE(ls_pool_alloc(p, S, a) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_ZERO], z == LS_ZERO_AT_ALLOC);
        reset(-1, 0);
        LS_REQUIRE(ls_pool_free(p, 1, a) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_ZERO], z == LS_ZERO_AT_FREE);
        LS_CHECK_EQ_INT(g.calls[OP_UP], 0);                    /* one row: the identity table */
        LS_CHECK_EQ_INT(g.calls[OP_SYNC], 0);                  /* queued, not waited for */
        reset(-1, 0);
        LS_REQUIRE(ls_pool_copy(p, 1, &a[1], &a[2]) == 0); /* disjoint: one state op */
        LS_CHECK_EQ_INT(g.calls[OP_COPY], 1);
        LS_CHECK_EQ_INT(g.calls[OP_UP], 0);
        LS_CHECK_EQ_INT(g.calls[OP_H2D] + g.calls[OP_SYNC], 0);
        LS_CHECK_EQ_INT(g.calls[OP_D2D], 0);
        LS_CHECK_EQ_INT(g.calls[OP_ALLOC], 0);
        reset(-1, 0);
        LS_REQUIRE(ls_pool_copy(p, 2, (int32_t[]){a[1], a[1]}, (int32_t[]){a[2], a[3]}) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_COPY], 1);
        LS_CHECK_EQ_INT(g.calls[OP_UP], 1);                  /* src and dst in one piece */
        LS_CHECK_EQ_INT(g.calls[OP_H2D] + g.calls[OP_SYNC], 0);
        reset(-1, 0);
        LS_REQUIRE(ls_pool_copy(p, 2, (int32_t[]){a[1], a[2]}, (int32_t[]){a[2], a[3]}) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_COPY], 1);                /* a[1] -> a[2] plain */
        LS_CHECK_EQ_INT(g.calls[OP_D2D], 2 * nb * L);        /* a[2] -> a[3] gathered+scattered */
        LS_CHECK_EQ_INT(g.calls[OP_ALLOC], 1);               /* the staging buffer ... */
        LS_CHECK_EQ_INT(g.calls[OP_SYNC], 1);                /* ... waited for before its free */
        reset(-1, 0);
        int32_t f;
        LS_REQUIRE(ls_pool_fork(p, a[1], &f) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_COPY], 1);
        LS_CHECK_EQ_INT(g.calls[OP_ZERO], 0);                /* overwritten anyway */
        LS_CHECK_EQ_INT(g.calls[OP_UP], 0);                  /* the copy is the only launch */
        LS_CHECK_EQ_INT(g.calls[OP_H2D] + g.calls[OP_SYNC], 0); /* no host-device round trip */
        reset(-1, 0);
        LS_REQUIRE(ls_pool_accept(p, 2, (int32_t[]){a[1], a[2]}, (int32_t[]){1, -1}) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_ACCEPT], 1);
        LS_CHECK_EQ_INT(g.calls[OP_UP], 0);                  /* one row accepted */
        LS_CHECK_EQ_INT(g.calls[OP_SYNC], 0);
        reset(-1, 0);
        LS_REQUIRE(ls_pool_accept(p, 2, (int32_t[]){a[1], a[2]}, (int32_t[]){1, 0}) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_UP], 1);                  /* dst and step in one piece */
        reset(-1, 0);
        LS_REQUIRE(ls_pool_free(p, 2, &a[1]) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_UP], z == LS_ZERO_AT_FREE); /* two rows: the list, once */
        reset(-1, 0);
        LS_REQUIRE(ls_pool_alloc(p, 2, a) == 0);
        LS_CHECK_EQ_INT(g.calls[OP_UP], z == LS_ZERO_AT_ALLOC);
        ls_pool_destroy(p);
        LS_CHECK_EQ_INT(g.live, 0);                          /* ... was released */
    }
}

/* Operation `what` fails when entry op fails at its k-th call: -1, bookkeeping unchanged. */
#define EXPECT_OP_FAILS(p, op, k, call)                                                       \
    do {                                                                                      \
        pt_snap before_ = pt_snapshot(p);                                                     \
        reset(op, k);                                                                         \
        ls_clear_error();                                                                     \
        LS_CHECK_EQ_INT((call), -1);                                                          \
        LS_CHECK(pt_error_has("injected"));                                                   \
        pt_snap after_ = pt_snapshot(p);                                                      \
        LS_CHECK(pt_same(&before_, &after_));                                                 \
        reset(-1, 0);                                                                         \
    } while (0)

static void test_op_failures(const ls_runtime *be, int preset)
{
    for (int z = 0; z < 2; z++) {
        ls_pool *p = make(be, preset, (ls_zero_policy)z);
        const int zero_op_on_alloc = z == LS_ZERO_AT_ALLOC;
        int32_t a[S], out[S];
        if (zero_op_on_alloc) {
            EXPECT_OP_FAILS(p, OP_ZERO, 1, ls_pool_alloc(p, 2, out));
            EXPECT_OP_FAILS(p, OP_UP, 1, ls_pool_alloc(p, 2, out));
        }
        LS_REQUIRE(ls_pool_alloc(p, S - 1, a) == 0); /* one slot left for fork */
        if (!zero_op_on_alloc) {
            EXPECT_OP_FAILS(p, OP_ZERO, 1, ls_pool_free(p, 1, a));
            EXPECT_OP_FAILS(p, OP_UP, 1, ls_pool_free(p, 2, a));
        }
        EXPECT_OP_FAILS(p, OP_COPY, 1, ls_pool_copy(p, 1, &a[0], &a[1]));
        EXPECT_OP_FAILS(p, OP_UP, 1, ls_pool_copy(p, 2, (int32_t[]){a[0], a[0]}, (int32_t[]){a[1], a[2]}));
        EXPECT_OP_FAILS(p, OP_ALLOC, 1, ls_pool_copy(p, 2, a, (int32_t[]){a[1], a[0]}));
        EXPECT_OP_FAILS(p, OP_D2D, 3, ls_pool_copy(p, 2, a, (int32_t[]){a[1], a[0]}));
        EXPECT_OP_FAILS(p, OP_SYNC, 1, ls_pool_copy(p, 2, a, (int32_t[]){a[1], a[0]}));
        LS_CHECK_EQ_INT(g.live, 2 * ls_pool_n_buffers(p) + 1); /* staging released on failure */
        int32_t f = -9;
        EXPECT_OP_FAILS(p, OP_COPY, 1, ls_pool_fork(p, a[0], &f));
        LS_CHECK_EQ_INT(f, -9);
        EXPECT_OP_FAILS(p, OP_ACCEPT, 1, ls_pool_accept(p, 1, a, (int32_t[]){1}));
        EXPECT_OP_FAILS(p, OP_UP, 1, ls_pool_accept(p, 2, a, (int32_t[]){1, 0}));
        /* and everything still works afterwards */
        LS_CHECK_EQ_INT(ls_pool_fork(p, a[0], &f), 0);
        LS_CHECK_EQ_INT(ls_pool_free(p, 1, &f), 0);
        ls_pool_destroy(p);
        LS_CHECK_EQ_INT(g.live, 0);
    }
}

/* An index list over LS_UPLOAD_MAX_BYTES goes through copy_h2d in one piece, up to it through
 * upload: alloc of 1000 slots (4000 bytes) and of 1001 under zero-at-alloc, on the preset with
 * the smallest one-layer state; the second alloc must zero every slot the first one dirtied. */
static void test_upload_paths(const ls_runtime *be)
{
    ls_state_desc d = pt_desc(0, 8, LS_BF16, 0);
    d.layers = 1;
    for (int i = 1; i < ls_model_count(); i++) {
        ls_state_desc c = pt_desc(i, 8, LS_BF16, 0);
        c.layers = 1;
        if (ls_bytes_per_req(&c) < ls_bytes_per_req(&d))
            d = c;
    }
    enum { N = LS_UPLOAD_MAX_BYTES / 4 };
    ls_pool_config cfg = {.capacity = N + 1, .zero = LS_ZERO_AT_ALLOC, .impl = &spy_impl,
                          .tuning = &(ls_tuning){0}};
    reset(-1, 0);
    ls_pool *p = ls_pool_create(&d, &cfg, be);
    LS_REQUIRE(p != NULL);
    int32_t *a = malloc((N + 1) * sizeof *a);
    LS_REQUIRE(a != NULL);
    reset(-1, 0);
    LS_REQUIRE(ls_pool_alloc(p, N, a) == 0);
    LS_CHECK_EQ_INT(g.calls[OP_UP], 1);
    LS_CHECK_EQ_INT(g.calls[OP_H2D], 0);
    for (int32_t i = 0; i < N; i++)
        pt_fill(p, a[i], -1, 0x5eed + (uint64_t)i);
    LS_REQUIRE(ls_pool_free(p, N, a) == 0);
    reset(-1, 0);
    LS_REQUIRE(ls_pool_alloc(p, N + 1, a) == 0);
    LS_CHECK_EQ_INT(g.calls[OP_UP], 0);
    LS_CHECK_EQ_INT(g.calls[OP_H2D], 1);
    int bad = 0;
    for (int32_t s = 0; s < ls_pool_slots(p); s++)
        bad += pt_mismatch(p, s, -1, PT_ZERO);
    LS_CHECK_EQ_INT(bad, 0);
    free(a);
    ls_pool_destroy(p);
    LS_CHECK_EQ_INT(g.live, 0);
}

int main(void)
{
    const ls_runtime be = spy_backend();
    test_upload_paths(&be);
    for (int i = 0; i < ls_model_count(); i++) {
        const int before = ls_test_failures;
        test_create_failures(&be, i);
        test_op_counts(&be, i);
        test_op_failures(&be, i);
        if (ls_test_failures > before)
            fprintf(stderr, "  ^ preset %s\n", ls_model_at(i)->name);
    }
    return ls_test_exit();
}
