/* Conv update properties over random problems: W 2..4, both orientations, bf16/fp32 state,
 * T in {1,2,4,8}, batch 1 and odd sizes, random non-contiguous slots in a larger pool with
 * padding rows:
 *  - verify over T tokens == T single-token decodes (y, every window, final state: bitwise);
 *  - padding rows and unlisted slots: no byte of state or inter changes, y rows stay poison;
 *  - disable_state_update leaves the whole state buffer bitwise unchanged;
 *  - channel-major and window-major layouts give identical results. */
#include "ref_fixtures.h"

#include <string.h>

static int slot_listed(const fx_conv *f, int s)
{
    for (int r = 0; r < f->p.batch; r++)
        if (f->slot[r] == s)
            return 1;
    return 0;
}

/* Logical comparison of state element-wise between two fixtures' buffers (same slot set). */
static size_t state_mismatch(const fx_conv *a, const void *sa, const fx_conv *b, const void *sb)
{
    size_t bad = 0;
    for (int s = 0; s < a->slots; s++)
        for (int c = 0; c < a->p.channels; c++)
            for (int j = 0; j < a->p.width - 1; j++) {
                double x = fx_conv_state(a, sa, s, c, j), y = fx_conv_state(b, sb, s, c, j);
                bad += memcmp(&x, &y, sizeof x) != 0;
            }
    return bad;
}

static void verify_vs_decodes(uint64_t *sd, int B, int T, int C, int W, ls_dtype sdt, int flags)
{
    fx_conv f;
    int slots = 2 * B + 3;
    fx_conv_make(&f, sd, B, T, C, W, slots, B > 1 ? 1 : 0, LS_BF16, sdt, flags | FX_INTER);
    const size_t esz = ls_dtype_size(sdt), sbytes = f.state_n * esz;
    void *state0 = fx_dup(f.state, sbytes);

    LS_REQUIRE(ls_ref_conv_update(&f.p) == 0);
    void *state_verify = fx_dup(f.state, sbytes);

    /* T decodes on the original state */
    memcpy(f.state, state0, sbytes);
    uint16_t *ydec = (uint16_t *)fx_alloc(f.xy_n * 2);
    memset(ydec, FX_POISON, f.xy_n * 2);
    size_t bad_win = 0;
    for (int t = 0; t < T; t++) {
        ls_conv_params p = f.p;
        p.tokens = 1;
        p.x = f.x + t * f.p.x_stride_t;
        p.y = ydec + t * f.p.y_stride_t;
        p.inter = NULL;
        p.disable_state_update = 0;
        LS_REQUIRE(ls_ref_conv_update(&p) == 0);
        /* window t of verify == state after decode t, for every real row (bitwise) */
        for (int r = 0; r < B; r++) {
            int s = f.slot[r];
            if (s < 0)
                continue;
            for (int c = 0; c < C; c++)
                for (int j = 0; j < W - 1; j++) {
                    size_t iw = (size_t)(s * f.p.inter_stride_slot + t * f.p.inter_stride_t +
                                         c * f.p.inter_stride_c + j * f.p.inter_stride_w);
                    size_t is = (size_t)(s * f.p.state_stride_slot + c * f.p.state_stride_c +
                                         j * f.p.state_stride_w);
                    bad_win +=
                        memcmp((char *)f.inter + iw * esz, (char *)f.state + is * esz, esz) != 0;
                }
        }
    }
    LS_CHECK_EQ_INT(bad_win, 0);
    LS_CHECK_EQ_INT(fx_diff_elems(ydec, f.y, f.xy_n, 2), 0);                  /* y bitwise */
    LS_CHECK_EQ_INT(fx_diff_elems(f.state, state_verify, f.state_n, esz), 0); /* final state */

    /* padding rows: y stays poison; unlisted slots: state bytes and inter bytes untouched */
    size_t bad_pad = 0, bad_slots = 0;
    for (int r = 0; r < B; r++)
        if (f.slot[r] < 0)
            for (int t = 0; t < T; t++)
                for (int c = 0; c < C; c++)
                    bad_pad +=
                        f.y[r * f.p.y_stride_b + t * f.p.y_stride_t + c * f.p.y_stride_c] != 0xFFFF;
    size_t slot_bytes = (size_t)f.p.state_stride_slot * esz,
           islot = (size_t)f.p.inter_stride_slot * esz;
    for (int s = 0; s < slots; s++) {
        if (slot_listed(&f, s))
            continue;
        bad_slots += memcmp((char *)state_verify + s * slot_bytes, (char *)state0 + s * slot_bytes,
                            slot_bytes) != 0;
        for (size_t i = 0; i < islot; i++)
            bad_slots += ((unsigned char *)f.inter)[s * islot + i] != FX_POISON;
    }
    LS_CHECK_EQ_INT(bad_pad, 0);
    LS_CHECK_EQ_INT(bad_slots, 0);

    /* disable_state_update: the state buffer does not change at all; y is the same */
    memcpy(f.state, state0, sbytes);
    memset(f.y, FX_POISON, f.xy_n * 2);
    f.p.disable_state_update = 1;
    LS_REQUIRE(ls_ref_conv_update(&f.p) == 0);
    LS_CHECK(memcmp(f.state, state0, sbytes) == 0);
    LS_CHECK_EQ_INT(fx_diff_elems(ydec, f.y, f.xy_n, 2), 0);

    free(state0), free(state_verify), free(ydec);
    fx_conv_free(&f);
}

/* Same seed, both orientations: identical y and identical logical state/windows. */
static void orientations_agree(uint64_t seed, int B, int T, int C, int W, int flags)
{
    fx_conv a, b;
    uint64_t s1 = seed, s2 = seed;
    fx_conv_make(&a, &s1, B, T, C, W, B + 2, 0, LS_F32, LS_BF16, flags | FX_INTER);
    fx_conv_make(&b, &s2, B, T, C, W, B + 2, 0, LS_F32, LS_BF16,
                 flags | FX_INTER | FX_WINDOW_MAJOR);
    /* b's buffers hold the same numbers in a different layout: rewrite b's state from a */
    for (int s = 0; s < a.slots; s++)
        for (int c = 0; c < C; c++)
            for (int j = 0; j < W - 1; j++)
                ((uint16_t *)b.state)[s * b.p.state_stride_slot + c * b.p.state_stride_c +
                                      j * b.p.state_stride_w] =
                    ((uint16_t *)a.state)[s * a.p.state_stride_slot + c * a.p.state_stride_c +
                                          j * a.p.state_stride_w];
    LS_REQUIRE(ls_ref_conv_update(&a.p) == 0);
    LS_REQUIRE(ls_ref_conv_update(&b.p) == 0);
    LS_CHECK_EQ_INT(fx_diff_elems(a.y, b.y, a.xy_n, 2), 0);
    LS_CHECK_EQ_INT(state_mismatch(&a, a.state, &b, b.state), 0);
    size_t bad = 0;
    for (int r = 0; r < B; r++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++)
                for (int j = 0; j < W - 1; j++) {
                    int s = a.slot[r];
                    bad +=
                        ((uint16_t *)a.inter)[s * a.p.inter_stride_slot + t * a.p.inter_stride_t +
                                              c * a.p.inter_stride_c + j * a.p.inter_stride_w] !=
                        ((uint16_t *)b.inter)[s * b.p.inter_stride_slot + t * b.p.inter_stride_t +
                                              c * b.p.inter_stride_c + j * b.p.inter_stride_w];
                }
    LS_CHECK_EQ_INT(bad, 0);
    fx_conv_free(&a), fx_conv_free(&b);
}

int main(void)
{
    uint64_t sd = 2024;
    const int Ts[] = {1, 2, 4, 8}, Bs[] = {1, 3, 7};
    int cases = 0;
    for (int W = 2; W <= 4; W++)
        for (int ti = 0; ti < 4; ti++)
            for (int bi = 0; bi < 3; bi++)
                for (int variant = 0; variant < 4; variant++) {
                    int flags = (variant & 1 ? FX_WINDOW_MAJOR : 0) |
                                (variant & 2 ? FX_SILU | FX_BIAS : FX_X_CT);
                    ls_dtype sdt = (cases % 3 == 2) ? LS_F32 : LS_BF16;
                    verify_vs_decodes(&sd, Bs[bi], Ts[ti], 5 + bi * 6, W, sdt, flags);
                    cases++;
                }
    for (int W = 2; W <= 4; W++) {
        orientations_agree(77 + W, 3, 4, 9, W, FX_BIAS | FX_SILU);
        orientations_agree(99 + W, 1, 1, 300, W, 0); /* more channels than one block */
    }
    printf("%d verify-vs-decode cases\n", cases);
    return ls_test_exit();
}
