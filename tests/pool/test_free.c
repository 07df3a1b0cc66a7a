/*
 * test_free.c — free errors (double free, never-allocated slot, padding slot, out of range,
 * repeated slot, bad count) each name the slot and leave the pool unchanged: bookkeeping,
 * free-list order, and memory (a list that is bad anywhere zeroes nothing, even its good slots).
 * One body for every preset and both padding policies.
 */
#include "pool_test_util.h"

enum { S = 4 };

/* A failing free: -1, message contains `needle`, bookkeeping and slot contents unchanged. */
static void expect_free_error(ls_pool *p, int32_t n, const int32_t *list, const char *needle,
                              const int32_t *live, int n_live)
{
    pt_snap before = pt_snapshot(p);
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_pool_free(p, n, list), -1);
    LS_CHECK(pt_error_has(needle));
    pt_snap after = pt_snapshot(p);
    LS_CHECK(pt_same(&before, &after));
    for (int i = 0; i < n_live; i++)
        LS_CHECK_EQ_INT(pt_mismatch(p, live[i], -1, 1000 + live[i]), 0);
}

static void run(int preset, ls_pad_policy pad)
{
    ls_state_desc d = pt_data_desc(preset, LS_BF16, 0);
    ls_pool *p = pt_pool(&d, S, pad, LS_ZERO_AT_FREE);
    const int32_t padding = ls_pool_padding_slot(p);
    int32_t a[3];
    LS_REQUIRE(ls_pool_alloc(p, 3, a) == 0); /* one slot stays free: a "never allocated" one */
    for (int i = 0; i < 3; i++)
        pt_fill(p, a[i], -1, 1000 + (uint64_t)a[i]);
    int32_t never = -1;
    for (int32_t s = 0; s <= S; s++)
        if (s != padding && !ls_pool_is_allocated(p, s))
            never = s;
    LS_REQUIRE(never >= 0);
    char msg[64];

    snprintf(msg, sizeof msg, "slot %d is not allocated", never);
    int32_t l1[2] = {a[0], never};
    expect_free_error(p, 2, l1, msg, a, 3);

    snprintf(msg, sizeof msg, "slot %d is the padding slot", padding);
    int32_t l2[2] = {a[1], padding};
    expect_free_error(p, 2, l2, msg, a, 3);

    int32_t l3[2] = {a[0], S + 1};
    snprintf(msg, sizeof msg, "slot %d is out of range 0..%d", S + 1, S);
    expect_free_error(p, 2, l3, msg, a, 3);
    int32_t l4[1] = {-1};
    expect_free_error(p, 1, l4, "slot -1 is out of range", a, 3);

    int32_t l5[3] = {a[2], a[0], a[2]};
    snprintf(msg, sizeof msg, "slot %d appears twice", a[2]);
    expect_free_error(p, 3, l5, msg, a, 3);

    expect_free_error(p, -3, a, "count -3", a, 3);
    expect_free_error(p, 2, NULL, "NULL", a, 3);

    /* a good free, then the same slot again: double free */
    LS_REQUIRE(ls_pool_free(p, 1, &a[1]) == 0);
    LS_CHECK_EQ_INT(ls_pool_is_allocated(p, a[1]), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, a[1], -1, PT_ZERO), 0);
    int32_t live[2] = {a[0], a[2]};
    snprintf(msg, sizeof msg, "slot %d is not allocated", a[1]);
    expect_free_error(p, 1, &a[1], msg, live, 2);
    LS_CHECK_EQ_INT(ls_pool_free(p, 0, NULL), 0); /* empty free is a no-op */

    /* the free list order survived every failed call: `never` first, then a[1] */
    int32_t got[2];
    LS_REQUIRE(ls_pool_alloc(p, 2, got) == 0);
    LS_CHECK_EQ_INT(got[0], never);
    LS_CHECK_EQ_INT(got[1], a[1]);
    ls_pool_destroy(p);
}

int main(void)
{
    for (int i = 0; i < ls_model_count(); i++) {
        const int before = ls_test_failures;
        run(i, LS_PAD_LAST);
        run(i, LS_PAD_FIRST);
        if (ls_test_failures > before)
            fprintf(stderr, "  ^ preset %s\n", ls_model_at(i)->name);
    }
    return ls_test_exit();
}
