/*
 * test_alloc.c — allocation for every preset (one test body, all three mechanisms) and both
 * padding policies: FIFO order, padding slot position and never handed out, exhaustion is an
 * error that takes nothing, bad counts are named.
 */
#include "pool_test_util.h"

enum { S = 5 };

static void run(int preset, ls_pad_policy pad)
{
    ls_state_desc d = pt_desc(preset, 8, LS_BF16, 0);
    ls_pool *p = pt_pool(&d, S, pad, LS_ZERO_AT_FREE);
    const int32_t first = pad == LS_PAD_FIRST ? 1 : 0;
    const int32_t padding = pad == LS_PAD_FIRST ? 0 : S;

    LS_CHECK_EQ_INT(ls_pool_capacity(p), S);
    LS_CHECK_EQ_INT(ls_pool_slots(p), S + 1);
    LS_CHECK_EQ_INT(ls_pool_padding_slot(p), padding);
    LS_CHECK_EQ_INT(ls_pool_free_count(p), S);
    for (int32_t i = -1; i <= S + 1; i++)
        LS_CHECK_EQ_INT(ls_pool_is_allocated(p, i), 0);

    /* first allocation: the first two slots of the policy's range, in order */
    int32_t a[S + 2];
    LS_REQUIRE(ls_pool_alloc(p, 2, a) == 0);
    LS_CHECK_EQ_INT(a[0], first);
    LS_CHECK_EQ_INT(a[1], first + 1);
    LS_CHECK_EQ_INT(ls_pool_free_count(p), S - 2);
    LS_CHECK(ls_pool_is_allocated(p, first) && ls_pool_is_allocated(p, first + 1));

    /* more than is free: error, nothing taken, output untouched */
    int32_t b[S + 2];
    for (int i = 0; i < S + 2; i++)
        b[i] = -77;
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_pool_alloc(p, S - 1, b), -1);
    LS_CHECK(pt_error_has("4 slots requested, only 3"));
    LS_CHECK_EQ_INT(ls_pool_free_count(p), S - 2);
    for (int i = 0; i < S + 2; i++)
        LS_CHECK_EQ_INT(b[i], -77);

    /* bad counts */
    LS_CHECK_EQ_INT(ls_pool_alloc(p, -1, b), -1);
    LS_CHECK(pt_error_has("count -1"));
    LS_CHECK_EQ_INT(ls_pool_alloc(p, 1, NULL), -1);
    LS_CHECK_EQ_INT(ls_pool_alloc(p, 0, b), 0);
    LS_CHECK_EQ_INT(ls_pool_free_count(p), S - 2);

    /* the rest: exactly the policy's range, never the padding slot */
    LS_REQUIRE(ls_pool_alloc(p, S - 2, a + 2) == 0);
    LS_CHECK_EQ_INT(ls_pool_free_count(p), 0);
    int seen[S + 1] = {0};
    for (int i = 0; i < S; i++) {
        LS_CHECK(a[i] >= 0 && a[i] <= S);
        LS_CHECK(a[i] != padding);
        LS_CHECK_EQ_INT(a[i], first + i);
        if (a[i] >= 0 && a[i] <= S)
            seen[a[i]]++;
    }
    for (int i = 0; i <= S; i++)
        LS_CHECK_EQ_INT(seen[i], i == padding ? 0 : 1);
    LS_CHECK_EQ_INT(ls_pool_is_allocated(p, padding), 0);

    /* exhausted: error, nothing taken */
    LS_CHECK_EQ_INT(ls_pool_alloc(p, 1, b), -1);
    LS_CHECK(pt_error_has("only 0"));
    LS_CHECK_EQ_INT(ls_pool_free_count(p), 0);

    /* freed slots come back in FIFO order (SGLang appends to the free list) */
    int32_t back[2] = {a[3], a[1]};
    LS_REQUIRE(ls_pool_free(p, 2, back) == 0);
    LS_CHECK_EQ_INT(ls_pool_free_count(p), 2);
    LS_REQUIRE(ls_pool_alloc(p, 1, b) == 0);
    LS_CHECK_EQ_INT(b[0], a[3]);
    LS_REQUIRE(ls_pool_alloc(p, 1, b) == 0);
    LS_CHECK_EQ_INT(b[0], a[1]);

    /* many rounds: the ring wraps and the padding slot still never appears */
    for (int round = 0; round < 3 * S; round++) {
        int32_t x = a[round % S];
        LS_REQUIRE(ls_pool_free(p, 1, &x) == 0);
        int32_t y = -1;
        LS_REQUIRE(ls_pool_alloc(p, 1, &y) == 0);
        LS_CHECK_EQ_INT(y, x);
        LS_CHECK(y != padding);
    }
    LS_CHECK_EQ_INT(ls_pool_free_count(p), 0);
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
