/* bf16 state storage: the reference keeps S in double and rounds only when storing, so a run
 * with bf16 state must store exactly ls_f32_to_bf16 of what the same run stores in fp32
 * (final state and every intermediate state), and produce bitwise identical outputs (outputs
 * never see the storage dtype within one call). Checked for GDN, KDA and SSU at T = 1 and 3. */
#include "ref_fixtures.h"

static size_t mismatch_bf16_of_f32(const uint16_t *h, const float *f, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != ls_f32_to_bf16(f[i]);
    return bad;
}

static void delta_case(uint64_t seed, int kda, int B, int T)
{
    fx_delta h, f;
    uint64_t s1 = seed, s2 = seed;
    fx_delta_make(&h, &s1, kda, B, T, 2, 4, 8, 6, B + 2, B > 1, LS_BF16, 1);
    fx_delta_make(&f, &s2, kda, B, T, 2, 4, 8, 6, B + 2, B > 1, LS_F32, 1);
    for (size_t i = 0; i < h.state_n; i++)
        ((float *)f.state)[i] = ls_bf16_to_f32(((uint16_t *)h.state)[i]);
    memcpy(f.slot, h.slot, sizeof(int32_t) * (size_t)B);
    LS_REQUIRE((kda ? ls_ref_kda(&h.p) : ls_ref_gdn(&h.p)) == 0);
    LS_REQUIRE((kda ? ls_ref_kda(&f.p) : ls_ref_gdn(&f.p)) == 0);
    LS_CHECK_EQ_INT(mismatch_bf16_of_f32(h.state, f.state, h.state_n), 0);
    size_t bad_inter = 0, written = 0;
    for (size_t i = 0; i < h.inter_n; i++) {
        uint32_t fb;
        memcpy(&fb, (float *)f.inter + i, 4);
        if (fb == 0xFFFFFFFFu) /* unwritten slot: both still poison */
            bad_inter += ((uint16_t *)h.inter)[i] != 0xFFFF;
        else
            bad_inter += ((uint16_t *)h.inter)[i] != ls_f32_to_bf16(((float *)f.inter)[i]),
                written++;
    }
    LS_CHECK_EQ_INT(bad_inter, 0);
    LS_CHECK(written > 0);
    LS_CHECK_EQ_INT(fx_diff_elems(h.o, f.o, (size_t)B * T * 4 * 6, 2), 0);
    /* bf16 storage really rounds: some stored values are not what fp32 stored */
    size_t rounded = 0;
    for (size_t i = 0; i < h.state_n; i++)
        rounded += ls_bf16_to_f32(((uint16_t *)h.state)[i]) != ((float *)f.state)[i];
    LS_CHECK(rounded > 0);
    fx_delta_free(&h), fx_delta_free(&f);
}

static void ssu_case(uint64_t seed, int B, int T)
{
    fx_ssu h, f;
    uint64_t s1 = seed, s2 = seed;
    fx_ssu_make(&h, &s1, B, T, 4, 3, 8, 2, B + 2, B > 1, LS_BF16, 1, 1);
    fx_ssu_make(&f, &s2, B, T, 4, 3, 8, 2, B + 2, B > 1, LS_F32, 1, 1);
    for (size_t i = 0; i < h.state_n; i++)
        ((float *)f.state)[i] = ls_bf16_to_f32(((uint16_t *)h.state)[i]);
    memcpy(f.slot, h.slot, sizeof(int32_t) * (size_t)B);
    LS_REQUIRE(ls_ref_ssu(&h.p) == 0);
    LS_REQUIRE(ls_ref_ssu(&f.p) == 0);
    LS_CHECK_EQ_INT(mismatch_bf16_of_f32(h.state, f.state, h.state_n), 0);
    size_t bad_inter = 0;
    for (size_t i = 0; i < h.inter_n; i++) {
        uint32_t fb;
        memcpy(&fb, (float *)f.inter + i, 4);
        bad_inter += fb == 0xFFFFFFFFu
                         ? ((uint16_t *)h.inter)[i] != 0xFFFF
                         : ((uint16_t *)h.inter)[i] != ls_f32_to_bf16(((float *)f.inter)[i]);
    }
    LS_CHECK_EQ_INT(bad_inter, 0);
    LS_CHECK_EQ_INT(fx_diff_elems(h.y, f.y, (size_t)B * T * 4 * 3, 2), 0);
    fx_ssu_free(&h), fx_ssu_free(&f);
}

int main(void)
{
    for (int kda = 0; kda < 2; kda++) {
        delta_case(100 + kda, kda, 1, 1);
        delta_case(200 + kda, kda, 3, 3);
    }
    ssu_case(300, 1, 1);
    ssu_case(301, 5, 3);
    return ls_test_exit();
}
