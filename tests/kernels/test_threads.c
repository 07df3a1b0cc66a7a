/* The reference's row split (LS_REF_THREADS): results are bitwise identical for 1, 3 and the
 * default number of threads on problems big enough to be split; a bad LS_REF_THREADS value is
 * rejected by name before anything is written; a failure inside a worker thread is re-raised in
 * the calling thread with its message. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "ref/ls_ref.h"
#include "ref_fixtures.h"

#include <stdlib.h>

static int fail_at_7(void *ctx, int64_t begin, int64_t end)
{
    int *calls = (int *)ctx;
    __atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
    for (int64_t i = begin; i < end; i++)
        if (i == 7)
            return ls_fail("worker: item %lld failed", (long long)i);
    return 0;
}

static const char *const settings[] = {"1", "3", NULL};

static void set_threads(const char *v)
{
    if (v)
        setenv("LS_REF_THREADS", v, 1);
    else
        unsetenv("LS_REF_THREADS");
}

int main(void)
{
    uint64_t sd = 9;
    /* conv */
    fx_conv c;
    fx_conv_make(&c, &sd, 4, 4, 4096, 4, 9, 1, LS_BF16, LS_BF16, FX_INTER | FX_BIAS | FX_SILU);
    void *cs0 = fx_dup(c.state, c.state_n * 2), *cy = NULL, *cst = NULL, *cin = NULL;
    for (int i = 0; i < 3; i++) {
        set_threads(settings[i]);
        memcpy(c.state, cs0, c.state_n * 2);
        memset(c.y, FX_POISON, c.xy_n * 2);
        LS_REQUIRE(ls_ref_conv_update(&c.p) == 0);
        if (i == 0) {
            cy = fx_dup(c.y, c.xy_n * 2), cst = fx_dup(c.state, c.state_n * 2);
            cin = fx_dup(c.inter, c.inter_n * 2);
        } else {
            LS_CHECK_EQ_INT(fx_diff_elems(cy, c.y, c.xy_n, 2), 0);
            LS_CHECK_EQ_INT(fx_diff_elems(cst, c.state, c.state_n, 2), 0);
            LS_CHECK_EQ_INT(fx_diff_elems(cin, c.inter, c.inter_n, 2), 0);
        }
    }
    /* gdn and kda */
    for (int kda = 0; kda < 2; kda++) {
        fx_delta d;
        fx_delta_make(&d, &sd, kda, 16, 2, 2, 4, 32, 32, 20, 1, LS_F32, 1);
        void *s0 = fx_dup(d.state, d.state_n * 4), *o1 = NULL, *s1 = NULL;
        size_t on = (size_t)16 * 2 * 4 * 32;
        for (int i = 0; i < 3; i++) {
            set_threads(settings[i]);
            memcpy(d.state, s0, d.state_n * 4);
            LS_REQUIRE((kda ? ls_ref_kda(&d.p) : ls_ref_gdn(&d.p)) == 0);
            if (i == 0) {
                o1 = fx_dup(d.o, on * 2), s1 = fx_dup(d.state, d.state_n * 4);
            } else {
                LS_CHECK_EQ_INT(fx_diff_elems(o1, d.o, on, 2), 0);
                LS_CHECK_EQ_INT(fx_diff_elems(s1, d.state, d.state_n, 4), 0);
            }
        }
        free(s0), free(o1), free(s1);
        fx_delta_free(&d);
    }
    /* ssu */
    fx_ssu s;
    fx_ssu_make(&s, &sd, 8, 2, 8, 32, 32, 2, 12, 1, LS_BF16, 1, 1);
    void *ss0 = fx_dup(s.state, s.state_n * 2), *sy = NULL, *sst = NULL;
    size_t yn = (size_t)8 * 2 * 8 * 32;
    for (int i = 0; i < 3; i++) {
        set_threads(settings[i]);
        memcpy(s.state, ss0, s.state_n * 2);
        LS_REQUIRE(ls_ref_ssu(&s.p) == 0);
        if (i == 0) {
            sy = fx_dup(s.y, yn * 2), sst = fx_dup(s.state, s.state_n * 2);
        } else {
            LS_CHECK_EQ_INT(fx_diff_elems(sy, s.y, yn, 2), 0);
            LS_CHECK_EQ_INT(fx_diff_elems(sst, s.state, s.state_n, 2), 0);
        }
    }

    /* bad values are named; nothing is written */
    const char *bad[] = {"abc", "0", "-2", "999", "4x"};
    for (int i = 0; i < 5; i++) {
        set_threads(bad[i]);
        memcpy(c.state, cs0, c.state_n * 2);
        ls_clear_error();
        LS_CHECK_EQ_INT(ls_ref_conv_update(&c.p), -1);
        char want[64];
        snprintf(want, sizeof want, "LS_REF_THREADS='%s'", bad[i]);
        LS_CHECK(strstr(ls_last_error(), want) != NULL);
        LS_CHECK(memcmp(c.state, cs0, c.state_n * 2) == 0);
        LS_CHECK_EQ_INT(ls_ref_ssu(&s.p), -1);
    }

    /* worker failures reach the caller, from any thread */
    set_threads("4");
    int calls = 0;
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_ref_parallel(16, 1e9, fail_at_7, &calls), -1);
    LS_CHECK(strstr(ls_last_error(), "worker: item 7 failed") != NULL);
    LS_CHECK_EQ_INT(calls, 4);
    calls = 0;
    LS_CHECK_EQ_INT(ls_ref_parallel(6, 1e9, fail_at_7, &calls), 0); /* no item 7 */
    LS_CHECK_EQ_INT(calls, 4);
    calls = 0;
    LS_CHECK_EQ_INT(ls_ref_parallel(100, 1.0, fail_at_7, &calls), -1); /* small: serial */
    LS_CHECK_EQ_INT(calls, 1);
    LS_CHECK_EQ_INT(ls_ref_threads(), 4);

    free(cs0), free(cy), free(cst), free(cin), free(ss0), free(sy), free(sst);
    fx_conv_free(&c);
    fx_ssu_free(&s);
    return ls_test_exit();
}
