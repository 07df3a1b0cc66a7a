/*
 * test_bufinfo.c — docs/pool.md contiguous buffer infos: one entry per (tensor, layer), tensors in
 * the order conv..., temporal, then (include_spec, spec present) spec temporal
 * ("intermediate_ssm"), spec conv...; data_ptr = &X[l][0], item_len = one slot (spec: T slots'
 * steps), data_len = slots * item_len. Counts: GDN/Mamba2 2 x L, KDA 4 x L, doubled with spec.
 */
#include "pool_test_util.h"

enum { S = 2, T = 2 };

static void run(int preset, int spec_tokens)
{
    ls_state_desc d = pt_desc(preset, 8, LS_BF16, spec_tokens);
    ls_pool *p = pt_pool(&d, S, LS_PAD_LAST, LS_ZERO_AT_FREE);
    const int L = d.layers, nb = d.n_conv + 1;
    const ls_mechanism mech = ls_model_at(preset)->mechanism;
    LS_CHECK_EQ_INT(nb, mech == LS_MECH_KDA ? 4 : 2);

    const int main_n = nb * L, full_n = spec_tokens ? 2 * main_n : main_n;
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 0, NULL, 0), main_n);
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 1, NULL, 0), full_n);

    ls_buf_info *v = calloc((size_t)full_n + 1, sizeof *v);
    LS_REQUIRE(v != NULL);
    /* without spec (#16708): only the main tensors, and together they are per_req per slot */
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 0, v, full_n + 1), main_n);
    int64_t per_slot = 0;
    for (int e = 0; e < main_n; e++) {
        const int b = e / L, l = e % L;
        void *want = b < d.n_conv ? ls_pool_conv(p, b, l) : ls_pool_temporal(p, l);
        LS_CHECK(v[e].data_ptr == want);
        LS_CHECK_EQ_INT(v[e].item_len, pt_item(p, b));
        LS_CHECK_EQ_INT(v[e].data_len, (S + 1) * pt_item(p, b));
        per_slot += v[e].item_len;
    }
    LS_CHECK_EQ_INT(per_slot, ls_bytes_per_req(&d));

    /* with spec (AFTER): the main part is identical, then spec temporal, then spec convs */
    memset(v, 0, ((size_t)full_n + 1) * sizeof *v);
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 1, v, full_n + 1), full_n);
    for (int e = main_n; e < full_n; e++) {
        const int t = (e - main_n) / L, l = (e - main_n) % L;
        const int b = t == 0 ? nb - 1 : t - 1; /* spec temporal first, then conv 0.. */
        void *want = b < d.n_conv ? ls_pool_spec_conv(p, b, l) : ls_pool_spec_temporal(p, l);
        LS_CHECK(want != NULL);
        LS_CHECK(v[e].data_ptr == want);
        LS_CHECK_EQ_INT(v[e].item_len, spec_tokens * pt_item(p, b));
        LS_CHECK_EQ_INT(v[e].data_len, (S + 1) * spec_tokens * pt_item(p, b));
    }
    /* a short output array is filled up to max and no further */
    memset(v, 0, ((size_t)full_n + 1) * sizeof *v);
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 1, v, 5), 5);
    LS_CHECK(v[4].data_ptr == ls_pool_conv(p, 0, 4));
    LS_CHECK(v[5].data_ptr == NULL);
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 1, v, 0), 0);
    free(v);
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
    /* docs/pool.md's own count: Qwen3-Next moves a request as 2 x 36 = 72 blocks */
    ls_state_desc q = pt_desc(0, 8, LS_F32, 0);
    ls_pool *p = pt_pool(&q, 1, LS_PAD_LAST, LS_ZERO_AT_FREE);
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 1, NULL, 0), 72);
    ls_pool_destroy(p);
    /* Kimi: 4 tensors x 20 layers */
    ls_state_desc k = pt_desc(1, 8, LS_F32, 0);
    p = pt_pool(&k, 1, LS_PAD_LAST, LS_ZERO_AT_FREE);
    LS_CHECK_EQ_INT(ls_pool_buf_infos(p, 1, NULL, 0), 80);
    ls_pool_destroy(p);
    return ls_test_exit();
}
