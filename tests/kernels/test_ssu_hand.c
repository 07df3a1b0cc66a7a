/* Mamba2 SSU on tiny cases with closed-form expectations:
 *  1. zero start, grouped heads (nh=4, ng=2, hd=ds=2), T=1: S = d x B[g]^T,
 *     y_p = d x_p (B[g].C[g]) + D x_p; with and without z (y *= z sigmoid(z));
 *  2. non-zero start, two tokens, one head: S1 = a1 S0 + d1 x1 B1^T, S2 = a2 S1 + d2 x2 B2^T,
 *     inter states and the final state checked. */
#include "ref_fixtures.h"

#include <string.h>

static double softplus(double x) { return x <= 20 ? log1p(exp(x)) : x; }
static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
static uint16_t bf(double v) { return ls_f32_to_bf16((float)v); }
static double rb(double v) { return ls_bf16_to_f32(bf(v)); }
static double f(uint16_t h) { return ls_bf16_to_f32(h); }

static void case_groups(int with_z)
{
    enum { NH = 4, P = 2, N = 2, G = 2 };
    uint64_t sd = 17 + with_z;
    uint16_t x[NH * P], dt[NH], Bm[G * N], Cm[G * N], z[NH * P], dtb[NH], D[NH], y[NH * P];
    float A[NH], state[2 * NH * P * N];
    for (int i = 0; i < NH * P; i++)
        x[i] = bf(ls_test_uniform(&sd, -1, 1)), z[i] = bf(ls_test_uniform(&sd, -2, 2));
    for (int i = 0; i < G * N; i++)
        Bm[i] = bf(ls_test_uniform(&sd, -1, 1)), Cm[i] = bf(ls_test_uniform(&sd, -1, 1));
    for (int h = 0; h < NH; h++)
        dt[h] = bf(ls_test_uniform(&sd, -1, 1)), dtb[h] = bf(0.25 * h), D[h] = bf(0.5 - 0.25 * h),
        A[h] = (float)(-1.0 - h);
    memset(state, 0, sizeof state);
    memset(y, FX_POISON, sizeof y);
    int32_t slot = 1;
    ls_ssu_params p = {.batch = 1,
                       .tokens = 1,
                       .nheads = NH,
                       .head_dim = P,
                       .dstate = N,
                       .ngroups = G,
                       .state_dtype = LS_F32,
                       .x = x,
                       .dt = dt,
                       .Bm = Bm,
                       .Cm = Cm,
                       .z = with_z ? z : NULL,
                       .A = A,
                       .dt_bias = dtb,
                       .D = D,
                       .y = y,
                       .state = state,
                       .state_stride_slot = NH * P * N,
                       .slot_idx = &slot};
    LS_REQUIRE(ls_ref_ssu(&p) == 0);
    for (int h = 0; h < NH; h++) {
        int g = h / (NH / G);
        double d = softplus(f(dt[h]) + f(dtb[h]));
        double bc = f(Bm[g * N]) * f(Cm[g * N]) + f(Bm[g * N + 1]) * f(Cm[g * N + 1]);
        for (int i = 0; i < P; i++) {
            double xp = f(x[h * P + i]);
            double want = d * xp * bc + f(D[h]) * xp;
            if (with_z)
                want *= f(z[h * P + i]) * sigm(f(z[h * P + i]));
            LS_CHECK_NEAR(f(y[h * P + i]), rb(want), 1e-6, 8e-3);
            for (int n = 0; n < N; n++)
                LS_CHECK_NEAR(state[NH * P * N + (h * P + i) * N + n], d * xp * f(Bm[g * N + n]),
                              1e-7, 1e-6);
        }
    }
    for (int i = 0; i < NH * P * N; i++)
        LS_CHECK(state[i] == 0.0f); /* slot 0 not touched */
}

static void case_two_tokens(void)
{
    enum { T = 2, P = 2, N = 3 };
    uint64_t sd = 23;
    uint16_t x[T * P], dt[T], Bm[T * N], Cm[T * N], dtb = bf(-0.25), D = bf(0.75), y[T * P];
    float A = -0.8f, state[P * N], inter[T * P * N];
    for (int i = 0; i < T * P; i++)
        x[i] = bf(ls_test_uniform(&sd, -1, 1));
    for (int i = 0; i < T * N; i++)
        Bm[i] = bf(ls_test_uniform(&sd, -1, 1)), Cm[i] = bf(ls_test_uniform(&sd, -1, 1));
    dt[0] = bf(0.5), dt[1] = bf(-1.0);
    for (int i = 0; i < P * N; i++)
        state[i] = (float)ls_test_uniform(&sd, -1, 1);
    double S[P][N];
    for (int i = 0; i < P * N; i++)
        S[i / N][i % N] = state[i];
    memset(y, FX_POISON, sizeof y);
    memset(inter, FX_POISON, sizeof inter);
    int32_t slot = 0;
    ls_ssu_params p = {.batch = 1,
                       .tokens = T,
                       .nheads = 1,
                       .head_dim = P,
                       .dstate = N,
                       .ngroups = 1,
                       .state_dtype = LS_F32,
                       .x = x,
                       .dt = dt,
                       .Bm = Bm,
                       .Cm = Cm,
                       .A = &A,
                       .dt_bias = &dtb,
                       .D = &D,
                       .y = y,
                       .state = state,
                       .state_stride_slot = P * N,
                       .slot_idx = &slot,
                       .inter = inter,
                       .inter_stride_slot = T * P * N,
                       .disable_state_update = 1};
    float state0[P * N];
    memcpy(state0, state, sizeof state0);
    LS_REQUIRE(ls_ref_ssu(&p) == 0);
    for (int t = 0; t < T; t++) {
        double d = softplus(f(dt[t]) + f(dtb)), a = exp(-0.8f * d);
        for (int i = 0; i < P; i++) {
            double acc = 0;
            for (int n = 0; n < N; n++) {
                S[i][n] = a * S[i][n] + d * f(x[t * P + i]) * f(Bm[t * N + n]);
                acc += S[i][n] * f(Cm[t * N + n]);
                LS_CHECK_NEAR(inter[t * P * N + i * N + n], S[i][n], 1e-7, 1e-6);
            }
            LS_CHECK_NEAR(f(y[t * P + i]), rb(acc + f(D) * f(x[t * P + i])), 1e-6, 8e-3);
        }
    }
    LS_CHECK(memcmp(state, state0, sizeof state) == 0); /* verify: no final write */
}

int main(void)
{
    case_groups(0);
    case_groups(1);
    case_two_tokens();
    return ls_test_exit();
}
