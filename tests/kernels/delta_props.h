/*
 * delta_props.h — property checks shared by the GDN and KDA tests (kda = 0 / 1):
 *  - verify over T tokens == T single-token decodes: o within one bf16 ulp, every intermediate
 *    state vs the state after that decode and the final state within a tight fp32 tolerance;
 *  - padding rows: their o equals the o of the same row run from a zeroed slot; no byte of an
 *    unlisted slot changes in state or inter;
 *  - disable_state_update leaves the state buffer bitwise unchanged.
 */
#ifndef LS_DELTA_PROPS_H
#define LS_DELTA_PROPS_H

#include "ref_fixtures.h"

static int delta_run(int kda, const ls_delta_params *p)
{
    return kda ? ls_ref_kda(p) : ls_ref_gdn(p);
}

static int delta_slot_listed(const int32_t *slot, int B, int s)
{
    for (int r = 0; r < B; r++)
        if (slot[r] == s)
            return 1;
    return 0;
}

static void delta_verify_vs_decodes(uint64_t *sd, int kda, int B, int T, int H, int HV, int K,
                                    int V)
{
    fx_delta f;
    const int slots = 2 * B + 2;
    fx_delta_make(&f, sd, kda, B, T, H, HV, K, V, slots, B > 1 ? 1 : 0, LS_F32, 1);
    const size_t sbytes = f.state_n * 4, slot_n = (size_t)HV * K * V;
    const size_t on = (size_t)B * T * HV * V;
    float *state0 = (float *)fx_dup(f.state, sbytes);

    LS_REQUIRE(delta_run(kda, &f.p) == 0);
    float *state_v = (float *)fx_dup(f.state, sbytes);
    const float *inter = (const float *)f.inter;

    /* decodes from the original state */
    memcpy(f.state, state0, sbytes);
    size_t bad_o = 0, bad_s = 0, nan_o = 0;
    for (int t = 0; t < T; t++) {
        ls_delta_params p = fx_delta_token(&f, t);
        LS_REQUIRE(delta_run(kda, &p) == 0);
        for (int r = 0; r < B; r++) {
            /* a padding row restarts from zero at every decode but carries S across a verify */
            for (size_t i = 0; (f.slot[r] >= 0 || t == 0) && i < (size_t)HV * V; i++) {
                double od = ls_bf16_to_f32(p.o[r * HV * V + i]);
                double ov = ls_bf16_to_f32(f.o[((size_t)r * T + t) * HV * V + i]);
                nan_o += isnan(ov);
                bad_o += !(fabs(od - ov) <= 1e-5 + 8e-3 * fabs(ov));
            }
            int s = f.slot[r];
            if (s < 0)
                continue;
            const float *sd_ = (const float *)f.state + (size_t)s * slot_n;
            const float *iv = inter + (size_t)s * T * slot_n + (size_t)t * slot_n;
            for (size_t i = 0; i < slot_n; i++)
                bad_s += !(fabs((double)sd_[i] - iv[i]) <= 1e-6 + 1e-5 * fabs(iv[i]));
        }
        fx_delta_token_free(&p);
    }
    LS_CHECK_EQ_INT(nan_o, 0);
    LS_CHECK_EQ_INT(bad_o, 0);
    LS_CHECK_EQ_INT(bad_s, 0);
    size_t bad_final = 0;
    for (size_t i = 0; i < f.state_n; i++)
        bad_final +=
            !(fabs((double)((float *)f.state)[i] - state_v[i]) <= 1e-6 + 1e-5 * fabs(state_v[i]));
    LS_CHECK_EQ_INT(bad_final, 0);

    /* unlisted slots: state bytes unchanged by the verify, inter still poison */
    size_t bad_slots = 0;
    for (int s = 0; s < slots; s++) {
        if (delta_slot_listed(f.slot, B, s))
            continue;
        bad_slots +=
            memcmp(state_v + (size_t)s * slot_n, state0 + (size_t)s * slot_n, slot_n * 4) != 0;
        const unsigned char *ib = (const unsigned char *)(inter + (size_t)s * T * slot_n);
        for (size_t i = 0; i < (size_t)T * slot_n * 4; i++)
            bad_slots += ib[i] != FX_POISON;
    }
    LS_CHECK_EQ_INT(bad_slots, 0);

    /* padding rows behave like a zero state: rerun with them pointed at a zeroed spare slot */
    int spare = -1;
    for (int s = 0; s < slots && spare < 0; s++)
        if (!delta_slot_listed(f.slot, B, s))
            spare = s;
    LS_REQUIRE(spare >= 0);
    int has_pad = 0;
    for (int r = 0; r < B; r++)
        has_pad |= f.slot[r] < 0;
    if (has_pad) {
        uint16_t *o_pad = (uint16_t *)fx_dup(f.o, on * 2);
        int32_t *slot2 = (int32_t *)fx_dup(f.slot, sizeof(int32_t) * (size_t)B);
        for (int r = 0; r < B; r++)
            if (slot2[r] < 0)
                slot2[r] = spare; /* more than one padding row would collide: fx makes at most 1 */
        memcpy(f.state, state0, sbytes);
        memset((float *)f.state + (size_t)spare * slot_n, 0, slot_n * 4);
        ls_delta_params p = f.p;
        p.slot_idx = slot2, p.inter = NULL;
        memset(f.o, FX_POISON, on * 2);
        LS_REQUIRE(delta_run(kda, &p) == 0);
        LS_CHECK_EQ_INT(fx_diff_elems(o_pad, f.o, on, 2), 0);
        free(o_pad), free(slot2);
    }

    /* disable_state_update: state buffer bitwise unchanged */
    memcpy(f.state, state0, sbytes);
    f.p.disable_state_update = 1;
    LS_REQUIRE(delta_run(kda, &f.p) == 0);
    LS_CHECK(memcmp(f.state, state0, sbytes) == 0);

    free(state0), free(state_v);
    fx_delta_free(&f);
}

/* Shapes (H, HV, K, V) including grouped value heads and K != V. */
static const int delta_shapes[][4] = {{1, 1, 4, 4}, {2, 4, 8, 6}, {1, 3, 16, 8}, {3, 3, 5, 7}};

static int delta_verify_sweep(uint64_t *sd, int kda)
{
    const int Ts[] = {1, 2, 4, 8}, Bs[] = {1, 3, 5};
    int n = 0;
    for (int si = 0; si < 4; si++)
        for (int ti = 0; ti < 4; ti++)
            for (int bi = 0; bi < 3; bi++, n++)
                delta_verify_vs_decodes(sd, kda, Bs[bi], Ts[ti], delta_shapes[si][0],
                                        delta_shapes[si][1], delta_shapes[si][2],
                                        delta_shapes[si][3]);
    return n;
}

#endif /* LS_DELTA_PROPS_H */
