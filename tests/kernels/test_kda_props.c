/* KDA properties: verify == decodes, padding, disable_state_update (delta_props.h), and
 * KDA with all per-channel gates equal (a[..,k] and dt_bias[hv*K+k] equal over k) reproduces
 * GDN on the same inputs bit for bit (o, inter states, final state; fp32 and bf16 state). */
#include "delta_props.h"

static void equal_gates_match_gdn(uint64_t *sd, ls_dtype sdt, int B, int T, int H, int HV, int K,
                                  int V)
{
    fx_delta g, k;
    uint64_t s1 = *sd, s2 = *sd;
    fx_delta_make(&g, &s1, 0, B, T, H, HV, K, V, B + 2, B > 1 ? 1 : 0, sdt, 1);
    fx_delta_make(&k, &s2, 1, B, T, H, HV, K, V, B + 2, B > 1 ? 1 : 0, sdt, 1);
    *sd = s1 + 1;
    /* same q, k, v, b, A_log, state, slots by construction order? Not for a and dt_bias
     * (different sizes shift the stream), so copy everything from g into k explicitly. */
    const size_t BT = (size_t)B * T, esz = ls_dtype_size(sdt);
    memcpy(k.q, g.q, BT * H * K * 2);
    memcpy(k.k, g.k, BT * H * K * 2);
    memcpy(k.v, g.v, BT * HV * V * 2);
    memcpy(k.b, g.b, BT * HV * 2);
    memcpy(k.A_log, g.A_log, (size_t)HV * 4);
    memcpy(k.state, g.state, g.state_n * esz);
    memcpy(k.slot, g.slot, sizeof(int32_t) * (size_t)B);
    for (size_t i = 0; i < BT * HV; i++)
        for (int c = 0; c < K; c++)
            k.a[i * K + c] = g.a[i];
    for (int hv = 0; hv < HV; hv++)
        for (int c = 0; c < K; c++)
            ((float *)k.dt_bias)[hv * K + c] = ls_bf16_to_f32(((uint16_t *)g.dt_bias)[hv]);
    LS_REQUIRE(ls_ref_gdn(&g.p) == 0);
    LS_REQUIRE(ls_ref_kda(&k.p) == 0);
    LS_CHECK_EQ_INT(fx_diff_elems(g.o, k.o, BT * HV * V, 2), 0);
    LS_CHECK_EQ_INT(fx_diff_elems(g.state, k.state, g.state_n, esz), 0);
    LS_CHECK_EQ_INT(fx_diff_elems(g.inter, k.inter, g.inter_n, esz), 0);
    /* and they are not trivially equal: the state moved */
    size_t moved = 0;
    for (int r = 0; r < B; r++)
        moved += g.slot[r] >= 0;
    LS_CHECK(moved > 0);
    fx_delta_free(&g), fx_delta_free(&k);
}

/* Per-channel gates that differ must change the result vs a GDN with the mean gate. */
static void unequal_gates_differ(uint64_t *sd)
{
    fx_delta k;
    fx_delta_make(&k, sd, 1, 2, 2, 1, 2, 8, 8, 4, 0, LS_F32, 0);
    void *st0 = fx_dup(k.state, k.state_n * 4);
    LS_REQUIRE(ls_ref_kda(&k.p) == 0);
    void *st1 = fx_dup(k.state, k.state_n * 4);
    memcpy(k.state, st0, k.state_n * 4);
    for (size_t i = 0; i < (size_t)2 * 2 * 2; i++) /* flatten the gates of every (r,t,hv) */
        for (int c = 1; c < 8; c++)
            k.a[i * 8 + c] = k.a[i * 8];
    LS_REQUIRE(ls_ref_kda(&k.p) == 0);
    LS_CHECK(fx_diff_elems(st1, k.state, k.state_n, 4) > 0);
    free(st0), free(st1);
    fx_delta_free(&k);
}

int main(void)
{
    uint64_t sd = 777;
    int n = delta_verify_sweep(&sd, 1);
    equal_gates_match_gdn(&sd, LS_F32, 3, 4, 2, 4, 8, 6);
    equal_gates_match_gdn(&sd, LS_BF16, 1, 1, 1, 1, 16, 16);
    equal_gates_match_gdn(&sd, LS_F32, 5, 8, 1, 3, 4, 4);
    unequal_gates_differ(&sd);
    printf("%d verify-vs-decode cases\n", n);
    return ls_test_exit();
}
