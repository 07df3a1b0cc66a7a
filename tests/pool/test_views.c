/*
 * test_views.c — buffer addresses and the state-op buffer table of every preset: per-layer
 * views [slots, item] laid out layer-major (main) and [slots, T, item] (spec), ls_pool_state_params
 * mirrors them (conv..., temporal last), out-of-range views are NULL with an error, spec views are
 * NULL without spec, and a state op driven by the exported table acts on the pool's slots.
 */
#include "pool_test_util.h"

enum { S = 3, T = 2 };

static void run(int preset, int spec)
{
    ls_state_desc d = pt_desc(preset, 8, LS_BF16, spec);
    ls_pool *p = pt_pool(&d, S, LS_PAD_LAST, LS_ZERO_AT_FREE);
    const int L = d.layers, nb = ls_pool_n_buffers(p);
    LS_CHECK_EQ_INT(nb, d.n_conv + 1);
    LS_CHECK(ls_pool_desc(p) != NULL && memcmp(ls_pool_desc(p), &d, sizeof d) == 0);
    LS_CHECK(ls_pool_runtime(p) == pt_backend());

    ls_state_params sp;
    memset(&sp, 0x7f, sizeof sp);
    ls_pool_state_params(p, &sp);
    LS_CHECK_EQ_INT(sp.n_buffers, nb);
    LS_CHECK_EQ_INT(sp.layers, L);
    LS_CHECK_EQ_INT(sp.slots, S + 1);
    LS_CHECK_EQ_INT(sp.spec_tokens, spec);
    LS_CHECK_EQ_INT(sp.count, 0);
    LS_CHECK(sp.src == NULL && sp.dst == NULL && sp.step == NULL);
    for (int b = 0; b < nb; b++) {
        const int64_t item = pt_item(p, b);
        const int is_conv = b < d.n_conv;
        LS_CHECK_EQ_INT(sp.buf[b].item_bytes, item);
        LS_CHECK(sp.buf[b].main == (is_conv ? ls_pool_conv(p, b, 0) : ls_pool_temporal(p, 0)));
        void *spec0 = is_conv ? ls_pool_spec_conv(p, b, 0) : ls_pool_spec_temporal(p, 0);
        LS_CHECK(sp.buf[b].spec == spec0);
        LS_CHECK(spec ? spec0 != NULL : spec0 == NULL);
        for (int l = 1; l < L; l++) {
            char *m = is_conv ? ls_pool_conv(p, b, l) : ls_pool_temporal(p, l);
            LS_CHECK_EQ_INT(m - (char *)sp.buf[b].main, (int64_t)l * (S + 1) * item);
            if (spec) {
                char *s = is_conv ? ls_pool_spec_conv(p, b, l) : ls_pool_spec_temporal(p, l);
                LS_CHECK_EQ_INT(s - (char *)sp.buf[b].spec, (int64_t)l * (S + 1) * spec * item);
            }
        }
    }
    for (int b = nb; b < LS_MAX_BUFFERS; b++)
        LS_CHECK(sp.buf[b].main == NULL && sp.buf[b].spec == NULL);

    /* out-of-range views */
    ls_clear_error();
    LS_CHECK(ls_pool_conv(p, d.n_conv, 0) == NULL);
    LS_CHECK(pt_error_has("conv index"));
    LS_CHECK(ls_pool_conv(p, -1, 0) == NULL);
    LS_CHECK(ls_pool_conv(p, 0, L) == NULL);
    LS_CHECK(pt_error_has("layer"));
    LS_CHECK(ls_pool_temporal(p, -1) == NULL);
    LS_CHECK(ls_pool_spec_temporal(p, L) == NULL);
    LS_CHECK(ls_pool_spec_conv(p, d.n_conv, 0) == NULL);

    /* the exported table drives a state op onto the pool's own slots (host: host indices) */
    if (strcmp(pt_backend()->name, "host") == 0) {
        int32_t a[S];
        LS_REQUIRE(ls_pool_alloc(p, S, a) == 0);
        pt_fill(p, 0, -1, 44);
        pt_fill(p, 2, -1, 45);
        int32_t src[1] = {0}, dst[1] = {2};
        sp.count = 1;
        sp.src = src;
        sp.dst = dst;
        LS_CHECK_EQ_INT(ls_impl_default(pt_backend())->state_copy(&sp, NULL, NULL), 0);
        LS_CHECK_EQ_INT(pt_mismatch(p, 2, -1, 44), 0);
        LS_CHECK_EQ_INT(pt_mismatch(p, 1, -1, PT_ZERO), 0);
    }
    ls_pool_destroy(p);
}

int main(void)
{
    for (int i = 0; i < ls_model_count(); i++) {
        const int before = ls_test_failures;
        run(i, 0);
        run(i, T);
        if (ls_test_failures > before)
            fprintf(stderr, "  ^ preset %s\n", ls_model_at(i)->name);
    }
    ls_pool_destroy(NULL); /* a no-op */
    return ls_test_exit();
}
