/*
 * test_zero.c — the two zero policies, observed in memory for every preset:
 *   LS_ZERO_AT_FREE  (AFTER):  free zeroes the slot at once; alloc hands it out untouched;
 *   LS_ZERO_AT_ALLOC (#14792): free leaves the data; alloc zeroes before handing out.
 * Either way a freshly allocated slot reads zero, neighbours are never touched, spec buffers are
 * never zeroed by alloc/free (as upstream), and a new pool starts all zero.
 */
#include "pool_test_util.h"

enum { S = 3, T = 2 };

static void run(int preset, ls_zero_policy zero)
{
    ls_state_desc d = pt_data_desc(preset, LS_BF16, T);
    ls_pool *p = pt_pool(&d, S, LS_PAD_LAST, zero);
    /* a new pool is zero everywhere, padding slot and spec buffers included */
    for (int32_t s = 0; s <= S; s++) {
        LS_CHECK_EQ_INT(pt_mismatch(p, s, -1, PT_ZERO), 0);
        for (int t = 0; t < T; t++)
            LS_CHECK_EQ_INT(pt_mismatch(p, s, t, PT_ZERO), 0);
    }
    int32_t a[S];
    LS_REQUIRE(ls_pool_alloc(p, S, a) == 0);
    for (int i = 0; i < S; i++) {
        pt_fill(p, a[i], -1, 50 + (uint64_t)i);
        pt_fill(p, a[i], 1, 60 + (uint64_t)i);
    }
    LS_REQUIRE(ls_pool_free(p, 1, &a[1]) == 0);
    if (zero == LS_ZERO_AT_FREE)
        LS_CHECK_EQ_INT(pt_mismatch(p, a[1], -1, PT_ZERO), 0);
    else
        LS_CHECK_EQ_INT(pt_mismatch(p, a[1], -1, 51), 0); /* still the old data */
    LS_CHECK_EQ_INT(pt_mismatch(p, a[1], 1, 61), 0);       /* spec untouched by free */
    LS_CHECK_EQ_INT(pt_mismatch(p, a[0], -1, 50), 0);      /* neighbours untouched */
    LS_CHECK_EQ_INT(pt_mismatch(p, a[2], -1, 52), 0);

    /* write into the FREE slot behind the pool's back: only ZERO_AT_ALLOC clears it again */
    pt_fill(p, a[1], -1, 99);
    int32_t again = -1;
    LS_REQUIRE(ls_pool_alloc(p, 1, &again) == 0);
    LS_CHECK_EQ_INT(again, a[1]);
    LS_CHECK_EQ_INT(pt_mismatch(p, again, -1, zero == LS_ZERO_AT_ALLOC ? PT_ZERO : 99), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, again, 1, 61), 0);      /* spec untouched by alloc */
    LS_CHECK_EQ_INT(pt_mismatch(p, a[0], -1, 50), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, a[2], -1, 52), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, S, -1, PT_ZERO), 0);    /* padding slot untouched */

    /* freeing several at once zeroes all of them (ZERO_AT_FREE) or none (ZERO_AT_ALLOC) */
    int32_t two[2] = {a[2], a[0]};
    LS_REQUIRE(ls_pool_free(p, 2, two) == 0);
    const int zeroed = pt_rows(p) - pt_mismatch(p, a[2], -1, PT_ZERO);
    LS_CHECK_EQ_INT(zeroed, zero == LS_ZERO_AT_FREE ? pt_rows(p) : 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, a[0], -1, zero == LS_ZERO_AT_FREE ? PT_ZERO : 50), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, again, -1, zero == LS_ZERO_AT_ALLOC ? PT_ZERO : 99), 0);
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
