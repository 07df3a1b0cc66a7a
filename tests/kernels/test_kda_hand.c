/* KDA on tiny cases with closed-form expectations (K = V = 2):
 *  1. beta = 0 (b = -1e4): S1 = diag(d) S0 with a different decay per key row
 *     d_k = exp(-e^{A_log} softplus(a_k + dt_bias_k)), o = S1^T qn, state stored bf16;
 *  2. two tokens from a random state with per-row decays, every product written out, inter
 *     states checked, grouped heads (H=1, HV=2) using per-head dt_bias [HV*K] and A_log. */
#include "ref_fixtures.h"

#include <string.h>

static double softplus(double x) { return x <= 20 ? log1p(exp(x)) : x; }
static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
static uint16_t bf(double v) { return ls_f32_to_bf16((float)v); }
static double rb(double v) { return ls_bf16_to_f32(bf(v)); }

static void case_pure_decay(void)
{
    uint16_t q[2] = {bf(3), bf(-4)}, k[2] = {bf(1), bf(1)}, v[2] = {bf(0.5), bf(-0.25)};
    uint16_t a[2] = {bf(-1.5), bf(2.0)}, b = bf(-1e4), o[2], state[4];
    float dtb[2] = {0.25f, -0.5f}, A_log = 0.1f;
    const double S0[4] = {0.75, -1.5, 2.0, 0.375}; /* [k][v], exact in bf16 */
    for (int i = 0; i < 4; i++)
        state[i] = bf(S0[i]);
    memset(o, FX_POISON, sizeof o);
    int32_t slot = 0;
    ls_delta_params p = {.batch = 1,
                         .tokens = 1,
                         .heads_qk = 1,
                         .heads_v = 1,
                         .dk = 2,
                         .dv = 2,
                         .scale = 1.0f,
                         .state_dtype = LS_BF16,
                         .q = q,
                         .k = k,
                         .v = v,
                         .a = a,
                         .b = &b,
                         .A_log = &A_log,
                         .dt_bias = dtb,
                         .o = o,
                         .state = state,
                         .state_stride_slot = 4,
                         .slot_idx = &slot};
    LS_REQUIRE(ls_ref_kda(&p) == 0);
    double d0 = exp(-exp(0.1f) * softplus(-1.5 + 0.25)), d1 = exp(-exp(0.1f) * softplus(2.0 - 0.5));
    LS_CHECK(d0 > d1 + 0.1); /* the two rows really decay differently */
    double nq = sqrt(9.0 + 16.0 + 1e-6), qn0 = 3 / nq, qn1 = -4 / nq;
    double S1[4] = {d0 * S0[0], d0 * S0[1], d1 * S0[2], d1 * S0[3]};
    LS_CHECK(state[0] == bf(S1[0]) && state[1] == bf(S1[1]));
    LS_CHECK(state[2] == bf(S1[2]) && state[3] == bf(S1[3]));
    LS_CHECK_NEAR(ls_bf16_to_f32(o[0]), rb(S1[0] * qn0 + S1[2] * qn1), 1e-6, 8e-3);
    LS_CHECK_NEAR(ls_bf16_to_f32(o[1]), rb(S1[1] * qn0 + S1[3] * qn1), 1e-6, 8e-3);
}

static void case_general(void)
{
    enum { T = 2, HV = 2, K = 2, V = 2 };
    uint64_t sd = 321;
    uint16_t q[T * K], k[T * K], v[T * HV * V], a[T * HV * K], b[T * HV], o[T * HV * V];
    float dtb[HV * K], A_log[HV] = {-0.3f, 0.4f}, state[HV * K * V], inter[T * HV * K * V];
    for (int i = 0; i < T * K; i++)
        q[i] = bf(ls_test_uniform(&sd, -1, 1)), k[i] = bf(ls_test_uniform(&sd, -1, 1));
    for (int i = 0; i < T * HV * V; i++)
        v[i] = bf(ls_test_uniform(&sd, -1, 1));
    for (int i = 0; i < T * HV * K; i++)
        a[i] = bf(ls_test_uniform(&sd, -3, 3));
    for (int i = 0; i < T * HV; i++)
        b[i] = bf(ls_test_uniform(&sd, -2, 2));
    for (int i = 0; i < HV * K; i++)
        dtb[i] = (float)ls_test_uniform(&sd, -0.5, 0.5);
    for (int i = 0; i < HV * K * V; i++)
        state[i] = (float)ls_test_uniform(&sd, -1, 1);
    float S0[HV * K * V];
    memcpy(S0, state, sizeof S0);
    memset(o, FX_POISON, sizeof o);
    memset(inter, FX_POISON, sizeof inter);
    int32_t slot = 0;
    ls_delta_params p = {.batch = 1,
                         .tokens = T,
                         .heads_qk = 1,
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
                         .slot_idx = &slot,
                         .inter = inter,
                         .inter_stride_slot = T * HV * K * V};
    LS_REQUIRE(ls_ref_kda(&p) == 0);
    for (int hv = 0; hv < HV; hv++) {
        double S[2][2] = {{S0[hv * 4 + 0], S0[hv * 4 + 1]}, {S0[hv * 4 + 2], S0[hv * 4 + 3]}};
        for (int t = 0; t < T; t++) {
            double q0 = ls_bf16_to_f32(q[2 * t]), q1 = ls_bf16_to_f32(q[2 * t + 1]);
            double k0 = ls_bf16_to_f32(k[2 * t]), k1 = ls_bf16_to_f32(k[2 * t + 1]);
            double nq = sqrt(q0 * q0 + q1 * q1 + 1e-6), nk = sqrt(k0 * k0 + k1 * k1 + 1e-6);
            double qn[2] = {q0 / nq * 0.5, q1 / nq * 0.5}, kn[2] = {k0 / nk, k1 / nk};
            double beta = sigm(ls_bf16_to_f32(b[t * HV + hv]));
            for (int kk = 0; kk < 2; kk++) {
                double g =
                    -exp((double)A_log[hv]) *
                    softplus(ls_bf16_to_f32(a[(t * HV + hv) * K + kk]) + (double)dtb[hv * K + kk]);
                S[kk][0] *= exp(g), S[kk][1] *= exp(g);
            }
            double u[2];
            for (int e = 0; e < 2; e++)
                u[e] = beta * (ls_bf16_to_f32(v[(t * HV + hv) * V + e]) -
                               (S[0][e] * kn[0] + S[1][e] * kn[1]));
            for (int kk = 0; kk < 2; kk++)
                for (int e = 0; e < 2; e++)
                    S[kk][e] += kn[kk] * u[e];
            for (int e = 0; e < 2; e++) {
                double oe = S[0][e] * qn[0] + S[1][e] * qn[1];
                LS_CHECK_NEAR(ls_bf16_to_f32(o[(t * HV + hv) * V + e]), rb(oe), 1e-6, 8e-3);
            }
            const float *I = inter + t * HV * K * V + hv * K * V;
            for (int i = 0; i < 4; i++)
                LS_CHECK_NEAR(I[i], S[i / 2][i % 2], 1e-7, 1e-6);
        }
        for (int i = 0; i < 4; i++)
            LS_CHECK_NEAR(state[hv * 4 + i], S[i / 2][i % 2], 1e-7, 1e-6);
    }
}

int main(void)
{
    case_pure_decay();
    case_general();
    return ls_test_exit();
}
