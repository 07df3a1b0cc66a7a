/* Accept equivalence (docs/pool.md), for GDN, KDA and Mamba2 layers: run a verify over T tokens
 * (conv with windows + recurrence with intermediate states, no final write), then
 * ls_ref_state_accept with a step j per request. Each accepted slot must equal the state after
 * decoding j+1 tokens from the original state: conv windows bitwise, fp32 recurrent state
 * within a tight tolerance. A row with j = -1 keeps its original state bitwise. */
#include "ref_fixtures.h"

enum { MECH_GDN = 0, MECH_KDA = 1, MECH_MAMBA2 = 2 };

static void run_case(uint64_t *sd, int mech, int B, int T)
{
    const int slots = 2 * B + 3, C = 12, W = 4;
    fx_conv cf;
    fx_conv_make(&cf, sd, B, T, C, W, slots, 0, mech == MECH_KDA ? LS_F32 : LS_BF16, LS_BF16,
                 FX_INTER | FX_NO_UPDATE | FX_SILU |
                     (mech == MECH_KDA ? FX_WINDOW_MAJOR : FX_BIAS));
    fx_delta df;
    fx_ssu sf;
    void *tstate, *tinter;
    size_t tslot_bytes, tn;
    if (mech == MECH_MAMBA2) {
        fx_ssu_make(&sf, sd, B, T, 4, 3, 8, 2, slots, 0, LS_F32, 0, 1);
        memcpy(sf.slot, cf.slot, sizeof(int32_t) * (size_t)B);
        sf.p.disable_state_update = 1;
        tstate = sf.state, tinter = sf.inter, tn = sf.state_n;
        tslot_bytes = (size_t)sf.p.state_stride_slot * 4;
    } else {
        fx_delta_make(&df, sd, mech == MECH_KDA, B, T, 2, 4, 8, 8, slots, 0, LS_F32, 1);
        memcpy(df.slot, cf.slot, sizeof(int32_t) * (size_t)B);
        df.p.disable_state_update = 1;
        tstate = df.state, tinter = df.inter, tn = df.state_n;
        tslot_bytes = (size_t)df.p.state_stride_slot * 4;
    }
    const size_t cbytes = cf.state_n * 2, tbytes = tn * 4;
    void *conv0 = fx_dup(cf.state, cbytes), *temp0 = fx_dup(tstate, tbytes);

    /* verify */
    LS_REQUIRE(ls_ref_conv_update(&cf.p) == 0);
    LS_REQUIRE((mech == MECH_MAMBA2 ? ls_ref_ssu(&sf.p)
                : mech == MECH_KDA  ? ls_ref_kda(&df.p)
                                    : ls_ref_gdn(&df.p)) == 0);
    LS_CHECK(memcmp(cf.state, conv0, cbytes) == 0 && memcmp(tstate, temp0, tbytes) == 0);

    /* accept step j_r */
    int32_t *step = (int32_t *)fx_alloc(sizeof(int32_t) * (size_t)B);
    for (int r = 0; r < B; r++)
        step[r] = (int32_t)(ls_test_rand_u64(sd) % (uint64_t)T);
    if (B > 1)
        step[B / 2] = -1;
    ls_state_params sp;
    memset(&sp, 0, sizeof sp);
    sp.n_buffers = 2, sp.layers = 1, sp.slots = slots, sp.spec_tokens = T, sp.count = B;
    sp.buf[0].main = cf.state, sp.buf[0].spec = cf.inter,
    sp.buf[0].item_bytes = (int64_t)C * (W - 1) * 2;
    sp.buf[1].main = tstate, sp.buf[1].spec = tinter, sp.buf[1].item_bytes = (int64_t)tslot_bytes;
    sp.dst = cf.slot, sp.step = step;
    LS_REQUIRE(ls_ref_state_accept(&sp) == 0);
    void *conv_acc = fx_dup(cf.state, cbytes), *temp_acc = fx_dup(tstate, tbytes);

    /* decode token by token from the originals; compare rows whose j == t */
    memcpy(cf.state, conv0, cbytes);
    memcpy(tstate, temp0, tbytes);
    size_t bad_conv = 0, bad_temp = 0;
    const size_t cslot = (size_t)C * (W - 1) * 2;
    for (int t = 0; t < T; t++) {
        ls_conv_params cp = cf.p;
        cp.tokens = 1, cp.inter = NULL, cp.disable_state_update = 0;
        cp.x = cf.x + t * cf.p.x_stride_t;
        cp.y = cf.y + t * cf.p.y_stride_t;
        LS_REQUIRE(ls_ref_conv_update(&cp) == 0);
        if (mech == MECH_MAMBA2) {
            ls_ssu_params p = fx_ssu_token(&sf, t);
            LS_REQUIRE(ls_ref_ssu(&p) == 0);
            fx_ssu_token_free(&p);
        } else {
            ls_delta_params p = fx_delta_token(&df, t);
            LS_REQUIRE((mech == MECH_KDA ? ls_ref_kda(&p) : ls_ref_gdn(&p)) == 0);
            fx_delta_token_free(&p);
        }
        for (int r = 0; r < B; r++) {
            if (step[r] != t)
                continue;
            size_t s = (size_t)cf.slot[r];
            bad_conv +=
                memcmp((char *)conv_acc + s * cslot, (char *)cf.state + s * cslot, cslot) != 0;
            const float *a = (const float *)((char *)temp_acc + s * tslot_bytes);
            const float *d = (const float *)((char *)tstate + s * tslot_bytes);
            for (size_t i = 0; i < tslot_bytes / 4; i++)
                bad_temp += !(fabs((double)a[i] - d[i]) <= 1e-6 + 1e-5 * fabs(d[i]));
        }
    }
    for (int r = 0; r < B; r++)
        if (step[r] < 0) {
            size_t s = (size_t)cf.slot[r];
            bad_conv += memcmp((char *)conv_acc + s * cslot, (char *)conv0 + s * cslot, cslot) != 0;
            bad_temp += memcmp((char *)temp_acc + s * tslot_bytes, (char *)temp0 + s * tslot_bytes,
                               tslot_bytes) != 0;
        }
    LS_CHECK_EQ_INT(bad_conv, 0);
    LS_CHECK_EQ_INT(bad_temp, 0);

    free(conv0), free(temp0), free(conv_acc), free(temp_acc), free(step);
    fx_conv_free(&cf);
    if (mech == MECH_MAMBA2)
        fx_ssu_free(&sf);
    else
        fx_delta_free(&df);
}

int main(void)
{
    uint64_t sd = 555;
    const int Ts[] = {1, 2, 4, 8}, Bs[] = {1, 3, 6};
    for (int mech = 0; mech < 3; mech++)
        for (int ti = 0; ti < 4; ti++)
            for (int bi = 0; bi < 3; bi++)
                run_case(&sd, mech, Bs[bi], Ts[ti]);
    return ls_test_exit();
}
