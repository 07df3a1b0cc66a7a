/* Conv update on tiny hand-computed cases: W = 2..4, bias, SiLU, both state orientations, fp32
 * weights, T < W-1 and T > W-1 state shifts, windows, disable_state_update, padding rows.
 * Expected numbers are worked out in the comments; all are exact in bf16 unless SiLU is on. */
#include "ref_fixtures.h"

#include <string.h>

/* Build a conv problem over caller arrays: x [B=rows, T, C] contiguous, bf16 state/inter in
 * the chosen orientation, slots given. */
typedef struct hand {
    uint16_t x[16], y[16], state[64], inter[128];
    float wf[16], bf[4];
    uint16_t wb[16], bb[4];
    int32_t slot[2];
    ls_conv_params p;
} hand;

static void hand_init(hand *h, int B, int T, int C, int W, int window_major, ls_dtype wdt,
                      const double *x, const double *w, const double *bias, const double *st,
                      int slots)
{
    memset(h, 0, sizeof *h);
    memset(h->y, FX_POISON, sizeof h->y);
    memset(h->inter, FX_POISON, sizeof h->inter);
    for (int i = 0; i < B * T * C; i++)
        h->x[i] = ls_f32_to_bf16((float)x[i]);
    for (int i = 0; i < C * W; i++)
        h->wf[i] = (float)w[i], h->wb[i] = ls_f32_to_bf16((float)w[i]);
    for (int c = 0; bias && c < C; c++)
        h->bf[c] = (float)bias[c], h->bb[c] = ls_f32_to_bf16((float)bias[c]);
    ls_conv_params *p = &h->p;
    p->batch = B, p->tokens = T, p->channels = C, p->width = W;
    p->weight_dtype = wdt, p->state_dtype = LS_BF16;
    p->x = h->x, p->y = h->y;
    p->x_stride_b = p->y_stride_b = (int64_t)T * C;
    p->x_stride_t = p->y_stride_t = C;
    p->x_stride_c = p->y_stride_c = 1;
    p->weight = wdt == LS_F32 ? (const void *)h->wf : (const void *)h->wb;
    p->bias = !bias ? NULL : wdt == LS_F32 ? (const void *)h->bf : (const void *)h->bb;
    p->state_stride_c = window_major ? 1 : W - 1;
    p->state_stride_w = window_major ? C : 1;
    p->state_stride_slot = (int64_t)C * (W - 1);
    /* st is given channel-major [slots][C][W-1] */
    for (int s = 0; s < slots; s++)
        for (int c = 0; c < C; c++)
            for (int j = 0; j < W - 1; j++)
                h->state[s * p->state_stride_slot + c * p->state_stride_c + j * p->state_stride_w] =
                    ls_f32_to_bf16((float)st[(s * C + c) * (W - 1) + j]);
    p->state = h->state;
    p->inter = h->inter;
    p->inter_stride_slot = (int64_t)T * C * (W - 1);
    p->inter_stride_t = (int64_t)C * (W - 1);
    p->inter_stride_c = p->state_stride_c, p->inter_stride_w = p->state_stride_w;
    p->slot_idx = h->slot;
}

static double Y(const hand *h, int r, int t, int c)
{
    return ls_bf16_to_f32(h->y[r * h->p.y_stride_b + t * h->p.y_stride_t + c]);
}
static double ST(const hand *h, int s, int c, int j)
{
    const ls_conv_params *p = &h->p;
    return ls_bf16_to_f32(
        h->state[s * p->state_stride_slot + c * p->state_stride_c + j * p->state_stride_w]);
}
static double IN(const hand *h, int s, int t, int c, int j)
{
    const ls_conv_params *p = &h->p;
    return ls_bf16_to_f32(h->inter[s * p->inter_stride_slot + t * p->inter_stride_t +
                                   c * p->inter_stride_c + j * p->inter_stride_w]);
}

int main(void)
{
    hand h;

    /* W=2, C=1, T=1, no bias: y = 0.5*3 + 2*1 = 3.5; state <- [1]. */
    {
        const double x[] = {1}, w[] = {0.5, 2}, st[] = {3};
        hand_init(&h, 1, 1, 1, 2, 0, LS_BF16, x, w, NULL, st, 1);
        h.slot[0] = 0;
        LS_CHECK_EQ_INT(ls_ref_conv_update(&h.p), 0);
        LS_CHECK(Y(&h, 0, 0, 0) == 3.5);
        LS_CHECK(ST(&h, 0, 0, 0) == 1.0);
        LS_CHECK(IN(&h, 0, 0, 0, 0) == 1.0);
    }

    /* W=3, C=2, T=2, bias, both orientations, bf16 and fp32 weights.
     * ch0: u = [1,2,3,4], w = [.5,.25,2], bias 1: y0 = 1+.5+.5+6 = 8, y1 = 1+1+.75+8 = 10.75;
     *      windows t0 [2,3], t1 [3,4]; state [3,4].
     * ch1: u = [-1,.5,2,-2], w = [1,-1,.5], bias -.5: y0 = -.5-1-.5+1 = -1, y1 = -.5+.5-2-1 = -3;
     *      windows t0 [.5,2], t1 [2,-2]; state [2,-2]. Slot 1 of 2 is used; slot 0 untouched. */
    for (int orient = 0; orient < 2; orient++)
        for (int wdt = 0; wdt < 2; wdt++) {
            const double x[] = {3, 2, 4, -2}; /* [t][c] */
            const double w[] = {0.5, 0.25, 2, 1, -1, 0.5}, bias[] = {1, -0.5};
            const double st[] = {9, 9, 9, 9, /* slot 0 */ 1, 2, -1, 0.5 /* slot 1 */};
            hand_init(&h, 1, 2, 2, 3, orient, (ls_dtype)wdt, x, w, bias, st, 2);
            h.slot[0] = 1;
            LS_CHECK_EQ_INT(ls_ref_conv_update(&h.p), 0);
            LS_CHECK(Y(&h, 0, 0, 0) == 8.0 && Y(&h, 0, 1, 0) == 10.75);
            LS_CHECK(Y(&h, 0, 0, 1) == -1.0 && Y(&h, 0, 1, 1) == -3.0);
            LS_CHECK(ST(&h, 1, 0, 0) == 3.0 && ST(&h, 1, 0, 1) == 4.0);
            LS_CHECK(ST(&h, 1, 1, 0) == 2.0 && ST(&h, 1, 1, 1) == -2.0);
            LS_CHECK(IN(&h, 1, 0, 0, 0) == 2.0 && IN(&h, 1, 0, 0, 1) == 3.0);
            LS_CHECK(IN(&h, 1, 1, 0, 0) == 3.0 && IN(&h, 1, 1, 0, 1) == 4.0);
            LS_CHECK(IN(&h, 1, 0, 1, 0) == 0.5 && IN(&h, 1, 0, 1, 1) == 2.0);
            LS_CHECK(IN(&h, 1, 1, 1, 0) == 2.0 && IN(&h, 1, 1, 1, 1) == -2.0);
            for (int c = 0; c < 2; c++)
                for (int j = 0; j < 2; j++)
                    LS_CHECK(ST(&h, 0, c, j) == 9.0);
            /* slot 0 windows were never written (still poison) */
            LS_CHECK(h.inter[0] == 0xFFFF && h.inter[7] == 0xFFFF);
        }

    /* W=4, C=1, T=1 (T < W-1), SiLU: z = .25*1 + .5*(-1) - .25*2 + 1*.5 = -0.25,
     * y = silu(-0.25) = -0.25 / (1 + e^0.25); state shifts by one: [-1, 2, 0.5]. */
    {
        const double x[] = {0.5}, w[] = {0.25, 0.5, -0.25, 1}, st[] = {1, -1, 2};
        hand_init(&h, 1, 1, 1, 4, 0, LS_F32, x, w, NULL, st, 1);
        h.p.silu = 1;
        h.slot[0] = 0;
        LS_CHECK_EQ_INT(ls_ref_conv_update(&h.p), 0);
        double want = -0.25 / (1.0 + exp(0.25));
        LS_CHECK(h.y[0] == ls_f32_to_bf16((float)want));
        LS_CHECK_NEAR(Y(&h, 0, 0, 0), -0.1094553, 1e-3, 0.0);
        LS_CHECK(ST(&h, 0, 0, 0) == -1.0 && ST(&h, 0, 0, 1) == 2.0 && ST(&h, 0, 0, 2) == 0.5);
    }

    /* W=2, T=3 (T > W-1): state keeps only the last input; y_t = w0*u_t + w1*u_{t+1}.
     * u = [5, 1, 2, 3], w = [1, 10]: y = [15, 21, 32]; windows [1], [2], [3]. */
    {
        const double x[] = {1, 2, 3}, w[] = {1, 10}, st[] = {5};
        hand_init(&h, 1, 3, 1, 2, 1, LS_BF16, x, w, NULL, st, 1);
        h.slot[0] = 0;
        LS_CHECK_EQ_INT(ls_ref_conv_update(&h.p), 0);
        LS_CHECK(Y(&h, 0, 0, 0) == 15.0 && Y(&h, 0, 1, 0) == 21.0 && Y(&h, 0, 2, 0) == 32.0);
        LS_CHECK(ST(&h, 0, 0, 0) == 3.0);
        LS_CHECK(IN(&h, 0, 0, 0, 0) == 1.0 && IN(&h, 0, 1, 0, 0) == 2.0 &&
                 IN(&h, 0, 2, 0, 0) == 3.0);
    }

    /* W=4, T=2, disable_state_update: windows written, state untouched.
     * u = [1,2,3, 4,5]: windows t0 [2,3,4], t1 [3,4,5]; w = [1,0,0,0] picks u[t]: y = [1, 2]. */
    {
        const double x[] = {4, 5}, w[] = {1, 0, 0, 0}, st[] = {1, 2, 3};
        hand_init(&h, 1, 2, 1, 4, 0, LS_BF16, x, w, NULL, st, 1);
        h.p.disable_state_update = 1;
        h.slot[0] = 0;
        LS_CHECK_EQ_INT(ls_ref_conv_update(&h.p), 0);
        LS_CHECK(Y(&h, 0, 0, 0) == 1.0 && Y(&h, 0, 1, 0) == 2.0);
        LS_CHECK(ST(&h, 0, 0, 0) == 1.0 && ST(&h, 0, 0, 1) == 2.0 && ST(&h, 0, 0, 2) == 3.0);
        LS_CHECK(IN(&h, 0, 0, 0, 0) == 2.0 && IN(&h, 0, 0, 0, 1) == 3.0 &&
                 IN(&h, 0, 0, 0, 2) == 4.0);
        LS_CHECK(IN(&h, 0, 1, 0, 0) == 3.0 && IN(&h, 0, 1, 0, 1) == 4.0 &&
                 IN(&h, 0, 1, 0, 2) == 5.0);
    }

    /* Two rows, the first a padding row: its y stays poison, slot 0 is untouched; row 1 uses
     * slot 0: u = [2, 7], w = [1, 1]: y = 9, state [7]. */
    {
        const double x[] = {100, 7}, w[] = {1, 1}, st[] = {2};
        hand_init(&h, 2, 1, 1, 2, 0, LS_BF16, x, w, NULL, st, 1);
        h.slot[0] = -1, h.slot[1] = 0;
        LS_CHECK_EQ_INT(ls_ref_conv_update(&h.p), 0);
        LS_CHECK(h.y[0] == 0xFFFF);
        LS_CHECK(Y(&h, 1, 0, 0) == 9.0);
        LS_CHECK(ST(&h, 0, 0, 0) == 7.0);
    }
    return ls_test_exit();
}
