/*
 * test_accept.c — speculative acceptance (docs/pool.md) for every preset: main <- spec step j for
 * every buffer and layer, rows with step < 0 skipped (even with a garbage slot), other slots and
 * the spec buffers untouched; errors (no spec buffers, step >= T, unallocated / padding /
 * repeated slot, bad count) change nothing.
 */
#include "pool_test_util.h"

enum { S = 4, T = 3 };

static uint64_t main_seed(int32_t s) { return 10 + (uint64_t)s; }
static uint64_t spec_seed(int32_t s, int t) { return 100 + 10 * (uint64_t)s + (uint64_t)t; }

static void check_spec_intact(ls_pool *p)
{
    for (int32_t s = 0; s < S; s++)
        for (int t = 0; t < T; t++)
            LS_CHECK_EQ_INT(pt_mismatch(p, s, t, (int64_t)spec_seed(s, t)), 0);
}

static void expect_accept_error(ls_pool *p, int32_t n, const int32_t *slots, const int32_t *steps,
                                const char *needle)
{
    pt_snap before = pt_snapshot(p);
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_pool_accept(p, n, slots, steps), -1);
    LS_CHECK(pt_error_has(needle));
    pt_snap after = pt_snapshot(p);
    LS_CHECK(pt_same(&before, &after));
    for (int32_t s = 0; s < S; s++)
        LS_CHECK_EQ_INT(pt_mismatch(p, s, -1, (int64_t)main_seed(s)), 0);
}

static void run(int preset)
{
    ls_state_desc d = pt_data_desc(preset, LS_BF16, T);
    ls_pool *p = pt_pool(&d, S, LS_PAD_LAST, LS_ZERO_AT_ALLOC);
    int32_t a[S];
    LS_REQUIRE(ls_pool_alloc(p, S, a) == 0);
    for (int32_t s = 0; s < S; s++) {
        pt_fill(p, s, -1, main_seed(s));
        for (int t = 0; t < T; t++)
            pt_fill(p, s, t, spec_seed(s, t));
    }

    /* errors first, while every main slot still holds its own seed */
    expect_accept_error(p, 1, (int32_t[]){0}, (int32_t[]){T},
                        "step 3 of row 0 must be < spec_tokens 3");
    expect_accept_error(p, 2, (int32_t[]){0, S}, (int32_t[]){1, 1}, "slot 4 is the padding slot");
    expect_accept_error(p, 1, (int32_t[]){9}, (int32_t[]){0}, "slot 9 is out of range");
    expect_accept_error(p, 3, (int32_t[]){1, 2, 1}, (int32_t[]){0, 1, 2}, "slot 1 appears twice");
    expect_accept_error(p, -2, a, a, "count -2");
    expect_accept_error(p, 1, a, NULL, "NULL");

    /* rows 0..3: steps 2, skip, 0, 1; a skipped row with a garbage slot is ignored */
    int32_t slots[5] = {0, 1, 2, 3, -1}, steps[5] = {2, -1, 0, 1, -1};
    LS_REQUIRE(ls_pool_accept(p, 5, slots, steps) == 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 0, -1, (int64_t)spec_seed(0, 2)), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 1, -1, (int64_t)main_seed(1)), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 2, -1, (int64_t)spec_seed(2, 0)), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 3, -1, (int64_t)spec_seed(3, 1)), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, S, -1, PT_ZERO), 0); /* padding slot untouched */
    check_spec_intact(p);

    /* a subset leaves the others alone; a skipped row may repeat an accepted slot */
    pt_fill(p, 0, -1, main_seed(0));
    pt_fill(p, 2, -1, main_seed(2));
    LS_REQUIRE(ls_pool_accept(p, 2, (int32_t[]){2, 2}, (int32_t[]){-1, 2}) == 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 2, -1, (int64_t)spec_seed(2, 2)), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 0, -1, (int64_t)main_seed(0)), 0);
    LS_CHECK_EQ_INT(ls_pool_accept(p, 0, NULL, NULL), 0);
    LS_CHECK_EQ_INT(ls_pool_accept(p, 1, (int32_t[]){0}, (int32_t[]){-7}), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 0, -1, (int64_t)main_seed(0)), 0);

    /* an unallocated slot */
    LS_REQUIRE(ls_pool_free(p, 1, (int32_t[]){3}) == 0);
    LS_CHECK_EQ_INT(ls_pool_accept(p, 1, (int32_t[]){3}, (int32_t[]){0}), -1);
    LS_CHECK(pt_error_has("slot 3 is not allocated"));
    ls_pool_destroy(p);

    /* a pool without spec buffers refuses */
    ls_state_desc d0 = pt_data_desc(preset, LS_BF16, 0);
    ls_pool *q = pt_pool(&d0, 2, LS_PAD_LAST, LS_ZERO_AT_FREE);
    int32_t s0;
    LS_REQUIRE(ls_pool_alloc(q, 1, &s0) == 0);
    LS_CHECK_EQ_INT(ls_pool_accept(q, 1, &s0, (int32_t[]){0}), -1);
    LS_CHECK(pt_error_has("no speculative buffers"));
    ls_pool_destroy(q);
}

int main(void)
{
    for (int i = 0; i < ls_model_count(); i++) {
        const int before = ls_test_failures;
        run(i);
        if (ls_test_failures > before)
            fprintf(stderr, "  ^ preset %s\n", ls_model_at(i)->name);
    }
    return ls_test_exit();
}
