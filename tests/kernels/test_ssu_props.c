/* SSU properties over random problems (grouped heads, with/without z, T in {1,2,4,8}, batch 1
 * and odd, random non-contiguous slots, a padding row):
 *  - verify == T decodes (y within one bf16 ulp; inter states and final state tight, fp32);
 *  - padding rows: y equals the y of the row run from a zeroed slot; unlisted slots untouched;
 *  - disable_state_update leaves the state buffer bitwise unchanged. */
#include "ref_fixtures.h"

static int listed(const int32_t *slot, int B, int s)
{
    for (int r = 0; r < B; r++)
        if (slot[r] == s)
            return 1;
    return 0;
}

static void verify_vs_decodes(uint64_t *sd, int B, int T, int NH, int P, int N, int G, int with_z)
{
    fx_ssu f;
    const int slots = 2 * B + 2;
    fx_ssu_make(&f, sd, B, T, NH, P, N, G, slots, B > 1 ? 1 : 0, LS_F32, with_z, 1);
    const size_t sbytes = f.state_n * 4, slot_n = (size_t)NH * P * N, yn = (size_t)B * T * NH * P;
    float *state0 = (float *)fx_dup(f.state, sbytes);
    LS_REQUIRE(ls_ref_ssu(&f.p) == 0);
    float *state_v = (float *)fx_dup(f.state, sbytes);
    const float *inter = (const float *)f.inter;

    memcpy(f.state, state0, sbytes);
    size_t bad_y = 0, bad_s = 0, nan_y = 0;
    for (int t = 0; t < T; t++) {
        ls_ssu_params p = fx_ssu_token(&f, t);
        LS_REQUIRE(ls_ref_ssu(&p) == 0);
        for (int r = 0; r < B; r++) {
            for (size_t i = 0; (f.slot[r] >= 0 || t == 0) && i < (size_t)NH * P; i++) {
                double yd = ls_bf16_to_f32(p.y[r * NH * P + i]);
                double yv = ls_bf16_to_f32(f.y[((size_t)r * T + t) * NH * P + i]);
                nan_y += isnan(yv);
                bad_y += !(fabs(yd - yv) <= 1e-5 + 8e-3 * fabs(yv));
            }
            int s = f.slot[r];
            if (s < 0)
                continue;
            const float *a = (const float *)f.state + (size_t)s * slot_n;
            const float *b = inter + ((size_t)s * T + t) * slot_n;
            for (size_t i = 0; i < slot_n; i++)
                bad_s += !(fabs((double)a[i] - b[i]) <= 1e-6 + 1e-5 * fabs(b[i]));
        }
        fx_ssu_token_free(&p);
    }
    LS_CHECK_EQ_INT(nan_y, 0);
    LS_CHECK_EQ_INT(bad_y, 0);
    LS_CHECK_EQ_INT(bad_s, 0);
    size_t bad_final = 0;
    for (size_t i = 0; i < f.state_n; i++)
        bad_final +=
            !(fabs((double)((float *)f.state)[i] - state_v[i]) <= 1e-6 + 1e-5 * fabs(state_v[i]));
    LS_CHECK_EQ_INT(bad_final, 0);

    size_t bad_slots = 0;
    int spare = -1, has_pad = 0;
    for (int s = 0; s < slots; s++) {
        if (listed(f.slot, B, s))
            continue;
        if (spare < 0)
            spare = s;
        bad_slots +=
            memcmp(state_v + (size_t)s * slot_n, state0 + (size_t)s * slot_n, slot_n * 4) != 0;
        const unsigned char *ib = (const unsigned char *)(inter + (size_t)s * T * slot_n);
        for (size_t i = 0; i < (size_t)T * slot_n * 4; i++)
            bad_slots += ib[i] != FX_POISON;
    }
    LS_CHECK_EQ_INT(bad_slots, 0);
    for (int r = 0; r < B; r++)
        has_pad |= f.slot[r] < 0;
    if (has_pad) {
        uint16_t *y_pad = (uint16_t *)fx_dup(f.y, yn * 2);
        int32_t *slot2 = (int32_t *)fx_dup(f.slot, sizeof(int32_t) * (size_t)B);
        for (int r = 0; r < B; r++)
            if (slot2[r] < 0)
                slot2[r] = spare;
        memcpy(f.state, state0, sbytes);
        memset((float *)f.state + (size_t)spare * slot_n, 0, slot_n * 4);
        ls_ssu_params p = f.p;
        p.slot_idx = slot2, p.inter = NULL;
        memset(f.y, FX_POISON, yn * 2);
        LS_REQUIRE(ls_ref_ssu(&p) == 0);
        LS_CHECK_EQ_INT(fx_diff_elems(y_pad, f.y, yn, 2), 0);
        free(y_pad), free(slot2);
    }

    memcpy(f.state, state0, sbytes);
    f.p.disable_state_update = 1;
    LS_REQUIRE(ls_ref_ssu(&f.p) == 0);
    LS_CHECK(memcmp(f.state, state0, sbytes) == 0);
    free(state0), free(state_v);
    fx_ssu_free(&f);
}

int main(void)
{
    uint64_t sd = 31337;
    const int shapes[][4] = {{2, 4, 8, 1}, {4, 3, 5, 2}, {6, 2, 16, 3}};
    const int Ts[] = {1, 2, 4, 8}, Bs[] = {1, 3, 5};
    int n = 0;
    for (int si = 0; si < 3; si++)
        for (int ti = 0; ti < 4; ti++)
            for (int bi = 0; bi < 3; bi++, n++)
                verify_vs_decodes(&sd, Bs[bi], Ts[ti], shapes[si][0], shapes[si][1], shapes[si][2],
                                  shapes[si][3], n % 2);
    printf("%d verify-vs-decode cases\n", n);
    return ls_test_exit();
}
