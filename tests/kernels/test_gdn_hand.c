/* GDN on tiny cases with expected values in closed form (K = V = 2):
 *  1. two tokens, zero start, orthogonal keys, grouped heads (H=2, HV=4), a padding row and a
 *     real slot: o and the final state follow from the formulas in the comments;
 *  2. three tokens from a random non-zero fp32 state, every product written out for 2x2;
 *  3. tiny q and k (|k|^2 = 1e-6): the epsilon sits INSIDE the square root, so
 *     kn = k / sqrt(2e-6) and, from a zero state, o = beta v (kn . qn) = beta v scale / 2.
 * The delta-rule steps (ls_kernels.h): S <- e^g S; u = beta (v - S^T kn); S += kn u^T; o = S^T qn.
 */
#include "ref_fixtures.h"

#include <string.h>

static double softplus(double x) { return x <= 20 ? log1p(exp(x)) : x; }
static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
static uint16_t bf(double v) { return ls_f32_to_bf16((float)v); }
static double rb(double v) { return ls_bf16_to_f32(bf(v)); } /* value as stored in bf16 */

/* Case 1 layouts: q,k [B=2,T=2,H=2,K=2]; v,o [2,2,HV=4,2]; a,b [2,2,4]. */
static void case_orthogonal(void)
{
    enum { B = 2, T = 2, H = 2, HV = 4, K = 2, V = 2 };
    uint16_t q[B * T * H * K], k[B * T * H * K], v[B * T * HV * V], a[B * T * HV], b[B * T * HV];
    uint16_t o[B * T * HV * V], dtb[HV];
    float A_log[HV], state[3 * HV * K * V];
    int32_t slot[B] = {-1, 2};
    uint64_t sd = 5;
    for (int i = 0; i < B * T * HV * V; i++)
        v[i] = bf(ls_test_uniform(&sd, -1, 1));
    for (int i = 0; i < B * T * HV; i++)
        a[i] = bf(ls_test_uniform(&sd, -1, 1)), b[i] = bf(ls_test_uniform(&sd, -2, 2));
    for (int i = 0; i < HV; i++)
        dtb[i] = bf(0.125 * i), A_log[i] = (float)(-0.5 + 0.25 * i);
    for (int r = 0; r < B; r++)
        for (int h = 0; h < H; h++) {
            uint16_t *k0 = k + ((r * T + 0) * H + h) * K, *k1 = k + ((r * T + 1) * H + h) * K;
            uint16_t *q0 = q + ((r * T + 0) * H + h) * K, *q1 = q + ((r * T + 1) * H + h) * K;
            k0[0] = bf(h + 1), k0[1] = bf(0); /* t0 key along e0, length h+1 */
            k1[0] = bf(0), k1[1] = bf(2);     /* t1 key along e1, length 2 */
            q0[0] = bf(1), q0[1] = bf(0);
            q1[0] = bf(1), q1[1] = bf(h == 0 ? 1 : -1);
        }
    memset(state, 0, sizeof state);
    memset(o, FX_POISON, sizeof o);
    ls_delta_params p = {.batch = B,
                         .tokens = T,
                         .heads_qk = H,
                         .heads_v = HV,
                         .dk = K,
                         .dv = V,
                         .scale = 0.5f,
                         .state_dtype = LS_F32,
                         .q = q,
                         .k = k,
                         .v = v,
                         .a = a,
                         .b = b,
                         .A_log = A_log,
                         .dt_bias = dtb,
                         .o = o,
                         .state = state,
                         .state_stride_slot = HV * K * V,
                         .slot_idx = slot};
    LS_REQUIRE(ls_ref_gdn(&p) == 0);
    for (int r = 0; r < B; r++)
        for (int hv = 0; hv < HV; hv++) {
            int h = hv / (HV / H);
            double c1 = (h + 1) / sqrt((h + 1.0) * (h + 1.0) + 1e-6), c2 = 2 / sqrt(4 + 1e-6);
            double sgn = h == 0 ? 1 : -1;
            int i0 = (r * T + 0) * HV + hv, i1 = (r * T + 1) * HV + hv;
            double beta0 = sigm(ls_bf16_to_f32(b[i0])), beta1 = sigm(ls_bf16_to_f32(b[i1]));
            double d1 = exp(-exp((double)A_log[hv]) *
                            softplus(ls_bf16_to_f32(a[i1]) + ls_bf16_to_f32(dtb[hv])));
            for (int e = 0; e < V; e++) {
                double v0 = ls_bf16_to_f32(v[i0 * V + e]), v1 = ls_bf16_to_f32(v[i1 * V + e]);
                /* t0: S = beta0 c1 e0 v0^T;  o0 = S^T e0 * scale / sqrt(1 + 1e-6) */
                double o0 = beta0 * c1 * v0 * 0.5 / sqrt(1 + 1e-6);
                /* t1: row0 decays by d1; S^T kn1 = 0 so u = beta1 v1, row1 = c2 beta1 v1 */
                double row0 = d1 * beta0 * c1 * v0, row1 = c2 * beta1 * v1;
                double o1 = (row0 + sgn * row1) * 0.5 / sqrt(2 + 1e-6);
                LS_CHECK_NEAR(ls_bf16_to_f32(o[i0 * V + e]), rb(o0), 1e-6, 8e-3);
                LS_CHECK_NEAR(ls_bf16_to_f32(o[i1 * V + e]), rb(o1), 1e-6, 8e-3);
                if (slot[r] >= 0) {
                    const float *S = state + slot[r] * HV * K * V + hv * K * V;
                    LS_CHECK_NEAR(S[0 * V + e], row0, 1e-7, 1e-6);
                    LS_CHECK_NEAR(S[1 * V + e], row1, 1e-7, 1e-6);
                }
            }
        }
    /* the padding row stored nothing: slots 0 and 1 still zero */
    size_t nz = 0;
    for (int i = 0; i < 2 * HV * K * V; i++)
        nz += state[i] != 0.0f;
    LS_CHECK_EQ_INT(nz, 0);
}

/* Case 2: B=1, H=HV=1, K=V=2, T=3 from a random fp32 state; every step spelled out. */
static void case_general(void)
{
    enum { T = 3 };
    uint64_t sd = 99;
    uint16_t q[T * 2], k[T * 2], v[T * 2], a[T], b[T], o[T * 2], dtb = bf(0.3);
    float A_log = -0.7f, state[2 * 4], inter[2 * T * 4];
    int32_t slot = 1;
    for (int i = 0; i < T * 2; i++)
        q[i] = bf(ls_test_uniform(&sd, -1, 1)), k[i] = bf(ls_test_uniform(&sd, -1, 1)),
        v[i] = bf(ls_test_uniform(&sd, -1, 1));
    for (int i = 0; i < T; i++)
        a[i] = bf(ls_test_uniform(&sd, -2, 2)), b[i] = bf(ls_test_uniform(&sd, -2, 2));
    for (int i = 0; i < 8; i++)
        state[i] = (float)ls_test_uniform(&sd, -1, 1);
    memset(o, FX_POISON, sizeof o);
    memset(inter, FX_POISON, sizeof inter);
    double S00 = state[4], S01 = state[5], S10 = state[6], S11 = state[7]; /* slot 1, [k][v] */
    ls_delta_params p = {.batch = 1,
                         .tokens = T,
                         .heads_qk = 1,
                         .heads_v = 1,
                         .dk = 2,
                         .dv = 2,
                         .scale = 0.7071f,
                         .state_dtype = LS_F32,
                         .q = q,
                         .k = k,
                         .v = v,
                         .a = a,
                         .b = b,
                         .A_log = &A_log,
                         .dt_bias = &dtb,
                         .o = o,
                         .state = state,
                         .state_stride_slot = 4,
                         .slot_idx = &slot,
                         .inter = inter,
                         .inter_stride_slot = T * 4};
    LS_REQUIRE(ls_ref_gdn(&p) == 0);
    for (int t = 0; t < T; t++) {
        double q0 = ls_bf16_to_f32(q[2 * t]), q1 = ls_bf16_to_f32(q[2 * t + 1]);
        double k0 = ls_bf16_to_f32(k[2 * t]), k1 = ls_bf16_to_f32(k[2 * t + 1]);
        double v0 = ls_bf16_to_f32(v[2 * t]), v1 = ls_bf16_to_f32(v[2 * t + 1]);
        double nq = sqrt(q0 * q0 + q1 * q1 + 1e-6), nk = sqrt(k0 * k0 + k1 * k1 + 1e-6);
        double qn0 = q0 / nq * 0.7071f, qn1 = q1 / nq * 0.7071f, kn0 = k0 / nk, kn1 = k1 / nk;
        double d = exp(-exp(-0.7) * softplus(ls_bf16_to_f32(a[t]) + ls_bf16_to_f32(dtb)));
        double beta = sigm(ls_bf16_to_f32(b[t]));
        S00 *= d, S01 *= d, S10 *= d, S11 *= d;
        double u0 = beta * (v0 - (S00 * kn0 + S10 * kn1));
        double u1 = beta * (v1 - (S01 * kn0 + S11 * kn1));
        S00 += kn0 * u0, S01 += kn0 * u1, S10 += kn1 * u0, S11 += kn1 * u1;
        double o0 = S00 * qn0 + S10 * qn1, o1 = S01 * qn0 + S11 * qn1;
        LS_CHECK_NEAR(ls_bf16_to_f32(o[2 * t]), rb(o0), 1e-6, 8e-3);
        LS_CHECK_NEAR(ls_bf16_to_f32(o[2 * t + 1]), rb(o1), 1e-6, 8e-3);
        const float *I = inter + 1 * T * 4 + t * 4;
        LS_CHECK_NEAR(I[0], S00, 1e-7, 1e-6);
        LS_CHECK_NEAR(I[1], S01, 1e-7, 1e-6);
        LS_CHECK_NEAR(I[2], S10, 1e-7, 1e-6);
        LS_CHECK_NEAR(I[3], S11, 1e-7, 1e-6);
    }
    LS_CHECK_NEAR(state[4], S00, 1e-7, 1e-6);
    LS_CHECK_NEAR(state[7], S11, 1e-7, 1e-6);
    LS_CHECK(((unsigned char *)inter)[0] == FX_POISON); /* slot 0 windows untouched */
}

static void case_tiny_norm(void)
{
    /* 1e-3 is not exact in bf16: use the stored value t and |k|^2 = t^2 */
    const double t = ls_bf16_to_f32(bf(1e-3));
    uint16_t q[2] = {bf(1e-3), bf(0)}, k[2] = {bf(1e-3), bf(0)}, v[2] = {bf(1.0), bf(-0.5)};
    uint16_t a = bf(0.0), b = bf(1.0), o[2], dtb = bf(0.0);
    float A_log = 0.0f, state[4] = {0, 0, 0, 0};
    int32_t slot = 0;
    memset(o, FX_POISON, sizeof o);
    ls_delta_params p = {.batch = 1,
                         .tokens = 1,
                         .heads_qk = 1,
                         .heads_v = 1,
                         .dk = 2,
                         .dv = 2,
                         .scale = 1.0f,
                         .state_dtype = LS_F32,
                         .q = q,
                         .k = k,
                         .v = v,
                         .a = &a,
                         .b = &b,
                         .A_log = &A_log,
                         .dt_bias = &dtb,
                         .o = o,
                         .state = state,
                         .state_stride_slot = 4,
                         .slot_idx = &slot};
    LS_REQUIRE(ls_ref_gdn(&p) == 0);
    double n = t / sqrt(t * t + 1e-6); /* ~0.707, not ~1 */
    double beta = sigm(1.0);
    LS_CHECK(n > 0.70 && n < 0.71);
    LS_CHECK_NEAR(ls_bf16_to_f32(o[0]), rb(beta * 1.0 * n * n), 1e-6, 8e-3);
    LS_CHECK_NEAR(ls_bf16_to_f32(o[1]), rb(beta * -0.5 * n * n), 1e-6, 8e-3);
    LS_CHECK_NEAR(state[0], n * beta * 1.0, 1e-7, 1e-6);
    LS_CHECK_NEAR(state[1], n * beta * -0.5, 1e-7, 1e-6);
}

int main(void)
{
    case_orthogonal();
    case_general();
    case_tiny_norm();
    return ls_test_exit();
}
