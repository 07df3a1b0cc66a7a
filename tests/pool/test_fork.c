/*
 * test_fork.c — ls_pool_fork for every preset and both zero policies: the new slot is the head
 * of the free list, holds the source's data in every buffer and layer, the source is untouched;
 * an exhausted pool, a free / padding / out-of-range source and a NULL output are errors that
 * change nothing.
 */
#include "pool_test_util.h"

enum { S = 4 };

static void expect_fork_error(ls_pool *p, int32_t src, int32_t *out, const char *needle)
{
    pt_snap before = pt_snapshot(p);
    int32_t sentinel = out ? *out : 0;
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_pool_fork(p, src, out), -1);
    LS_CHECK(pt_error_has(needle));
    pt_snap after = pt_snapshot(p);
    LS_CHECK(pt_same(&before, &after));
    if (out)
        LS_CHECK_EQ_INT(*out, sentinel);
}

static void run(int preset, ls_zero_policy zero)
{
    ls_state_desc d = pt_data_desc(preset, LS_F32, 0);
    ls_pool *p = pt_pool(&d, S, LS_PAD_FIRST, zero);
    int32_t a[S - 2];
    LS_REQUIRE(ls_pool_alloc(p, S - 2, a) == 0); /* slots 1, 2 */
    pt_fill(p, a[0], -1, 31);
    pt_fill(p, a[1], -1, 32);
    /* dirty the free slots: a fork must overwrite every row whatever the policy */
    pt_fill(p, 3, -1, 91);
    pt_fill(p, 4, -1, 92);

    int32_t f = -1;
    LS_REQUIRE(ls_pool_fork(p, a[1], &f) == 0);
    LS_CHECK_EQ_INT(f, 3); /* head of the free list */
    LS_CHECK(ls_pool_is_allocated(p, f));
    LS_CHECK_EQ_INT(ls_pool_free_count(p), 1);
    LS_CHECK_EQ_INT(pt_mismatch(p, f, -1, 32), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, a[1], -1, 32), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, a[0], -1, 31), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 4, -1, 92), 0); /* the other free slot untouched */

    /* fork of a fork */
    int32_t g = -1;
    LS_REQUIRE(ls_pool_fork(p, f, &g) == 0);
    LS_CHECK_EQ_INT(g, 4);
    LS_CHECK_EQ_INT(pt_mismatch(p, g, -1, 32), 0);
    LS_CHECK_EQ_INT(ls_pool_free_count(p), 0);

    /* exhausted */
    int32_t h = -55;
    expect_fork_error(p, a[0], &h, "no free slot");
    /* bad sources (one slot freed so only the source is wrong) */
    LS_REQUIRE(ls_pool_free(p, 1, &g) == 0);
    expect_fork_error(p, g, &h, "src slot 4 is not allocated");
    expect_fork_error(p, 0, &h, "src slot 0 is the padding slot");
    expect_fork_error(p, S + 1, &h, "src slot 5 is out of range");
    expect_fork_error(p, a[0], NULL, "dst_out is NULL");
    ls_pool_destroy(p);
}

int main(void)
{
    for (int i = 0; i < ls_model_count(); i++) {
        const int before = ls_test_failures;
        run(i, LS_ZERO_AT_FREE);
        run(i, LS_ZERO_AT_ALLOC);
        if (ls_test_failures > before)
            fprintf(stderr, "  ^ preset %s\n", ls_model_at(i)->name);
    }
    return ls_test_exit();
}
