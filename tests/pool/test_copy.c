/*
 * test_copy.c — ls_pool_copy on random data for every buffer and layer of every preset:
 * disjoint lists, overlapping lists with gather semantics (a->b, b->c; swaps; a 3-cycle; a mix
 * of staged and plain rows), self copies, spec buffers not copied, and errors (repeated dst,
 * unallocated / padding / out-of-range slots, bad count) that leave memory and bookkeeping
 * unchanged.
 */
#include "pool_test_util.h"

enum { S = 6 };

/* content[s] = seed held by slot s (what pt_mismatch should find) */
static int64_t content[S + 1];

static void fill_all(ls_pool *p, uint64_t base)
{
    for (int32_t s = 0; s < S; s++) {
        content[s] = (int64_t)(base + (uint64_t)s);
        pt_fill(p, s, -1, (uint64_t)content[s]);
    }
}

static void check_all(ls_pool *p, const char *what)
{
    for (int32_t s = 0; s < S; s++) {
        const int bad = pt_mismatch(p, s, -1, content[s]);
        LS_CHECK_EQ_INT(bad, 0);
        if (bad)
            fprintf(stderr, "  %s: slot %d has %d of %d rows wrong\n", what, s, bad, pt_rows(p));
    }
    LS_CHECK_EQ_INT(pt_mismatch(p, S, -1, PT_ZERO), 0); /* padding slot untouched */
}

/* Copy and update the expected contents with gather semantics. */
static void copy_ok(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst,
                    const char *what)
{
    int64_t old[S + 1];
    memcpy(old, content, sizeof old);
    LS_CHECK_EQ_INT(ls_pool_copy(p, n, src, dst), 0);
    for (int32_t i = 0; i < n; i++)
        content[dst[i]] = old[src[i]];
    check_all(p, what);
}

static void copy_err(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst,
                     const char *needle)
{
    pt_snap before = pt_snapshot(p);
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_pool_copy(p, n, src, dst), -1);
    LS_CHECK(pt_error_has(needle));
    pt_snap after = pt_snapshot(p);
    LS_CHECK(pt_same(&before, &after));
    check_all(p, needle);
}

static void run(int preset, int all_layers)
{
    ls_state_desc d = all_layers ? pt_desc(preset, 8, LS_BF16, 1)
                                 : pt_data_desc(preset, LS_BF16, 1);
    ls_pool *p = pt_pool(&d, S, LS_PAD_LAST, LS_ZERO_AT_FREE);
    int32_t a[S];
    LS_REQUIRE(ls_pool_alloc(p, S, a) == 0); /* slots 0..5 */
    fill_all(p, 100);
    check_all(p, "fill");

    /* disjoint: 0 -> 1, and a batch 2 -> 4, 3 -> 5 */
    copy_ok(p, 1, (int32_t[]){0}, (int32_t[]){1}, "0->1");
    copy_ok(p, 2, (int32_t[]){2, 3}, (int32_t[]){4, 5}, "2,3->4,5");
    /* the spec buffer of the source is not copied */
    pt_fill(p, 2, 0, 777);
    copy_ok(p, 1, (int32_t[]){2}, (int32_t[]){3}, "spec");
    LS_CHECK_EQ_INT(pt_mismatch(p, 3, 0, PT_ZERO), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 2, 0, 777), 0);

    /* chain a->b, b->c: c gets OLD b (gather), not a */
    fill_all(p, 200);
    copy_ok(p, 2, (int32_t[]){0, 1}, (int32_t[]){1, 2}, "chain");
    LS_CHECK_EQ_INT(content[2], 201);
    /* the same chain listed the other way round */
    fill_all(p, 300);
    copy_ok(p, 2, (int32_t[]){1, 0}, (int32_t[]){2, 1}, "chain reversed");
    /* swap, 3-cycle, self copy, and staged + plain rows in one call */
    fill_all(p, 400);
    copy_ok(p, 2, (int32_t[]){3, 4}, (int32_t[]){4, 3}, "swap");
    copy_ok(p, 3, (int32_t[]){0, 1, 2}, (int32_t[]){1, 2, 0}, "3-cycle");
    copy_ok(p, 1, (int32_t[]){5}, (int32_t[]){5}, "self");
    fill_all(p, 500);
    copy_ok(p, 5, (int32_t[]){5, 0, 3, 3, 1}, (int32_t[]){0, 2, 4, 3, 5}, "mixed");
    /* one source fanned out to several destinations, including itself */
    copy_ok(p, 3, (int32_t[]){4, 4, 4}, (int32_t[]){1, 4, 2}, "fan-out");

    /* errors: nothing written, nothing changed */
    fill_all(p, 600);
    copy_err(p, 2, (int32_t[]){0, 1}, (int32_t[]){3, 3}, "dst slot 3 appears twice");
    copy_err(p, 2, (int32_t[]){0, 1}, (int32_t[]){2, S}, "dst slot 6 is the padding slot");
    copy_err(p, 1, (int32_t[]){S}, (int32_t[]){2}, "src slot 6 is the padding slot");
    copy_err(p, 1, (int32_t[]){-1}, (int32_t[]){2}, "src slot -1 is out of range");
    copy_err(p, 1, (int32_t[]){0}, (int32_t[]){S + 1}, "dst slot 7 is out of range");
    copy_err(p, -1, a, a, "count -1");
    copy_err(p, 1, NULL, a, "NULL");
    LS_REQUIRE(ls_pool_free(p, 1, (int32_t[]){4}) == 0);
    content[4] = PT_ZERO;
    copy_err(p, 2, (int32_t[]){0, 4}, (int32_t[]){1, 2}, "src slot 4 is not allocated");
    copy_err(p, 2, (int32_t[]){0, 1}, (int32_t[]){2, 4}, "dst slot 4 is not allocated");
    LS_CHECK_EQ_INT(ls_pool_copy(p, 0, NULL, NULL), 0);
    ls_pool_destroy(p);
}

int main(void)
{
    for (int i = 0; i < ls_model_count(); i++) {
        const int before = ls_test_failures;
        run(i, 0);
        if (ls_test_failures > before)
            fprintf(stderr, "  ^ preset %s\n", ls_model_at(i)->name);
    }
    run(1, 1); /* once with every layer: Kimi-Linear, the most buffers (3 conv + temporal) */
    return ls_test_exit();
}
