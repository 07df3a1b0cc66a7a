/* GDN properties: verify == decodes, padding and unlisted slots, disable_state_update (see
 * delta_props.h), and the identity case: beta = 0 and g = 0 (b = -1e4, A_log = -1e4) leave the
 * state bitwise unchanged (fp32 and bf16) and give o = S^T qn. */
#include "delta_props.h"

static void identity_case(uint64_t *sd, ls_dtype sdt, int B, int T, int H, int HV, int K, int V)
{
    fx_delta f;
    fx_delta_make(&f, sd, 0, B, T, H, HV, K, V, B + 3, 0, sdt, 1);
    for (size_t i = 0; i < (size_t)B * T * HV; i++)
        f.b[i] = ls_f32_to_bf16(-1e4f);
    for (int i = 0; i < HV; i++)
        f.A_log[i] = -1e4f;
    const size_t esz = ls_dtype_size(sdt), slot_n = (size_t)HV * K * V;
    void *state0 = fx_dup(f.state, f.state_n * esz);
    LS_REQUIRE(ls_ref_gdn(&f.p) == 0);
    LS_CHECK(memcmp(state0, f.state, f.state_n * esz) == 0);
    size_t bad_inter = 0, bad_o = 0;
    for (int r = 0; r < B; r++) {
        int s = f.slot[r];
        for (int t = 0; t < T; t++) {
            bad_inter += memcmp((char *)f.inter + ((size_t)s * T + t) * slot_n * esz,
                                (char *)state0 + (size_t)s * slot_n * esz, slot_n * esz) != 0;
            for (int hv = 0; hv < HV; hv++) {
                int h = hv / (HV / H);
                const uint16_t *q = f.q + (((size_t)r * T + t) * H + h) * K;
                double nq = 0;
                for (int k = 0; k < K; k++)
                    nq += (double)ls_bf16_to_f32(q[k]) * ls_bf16_to_f32(q[k]);
                nq = sqrt(nq + 1e-6);
                for (int v = 0; v < V; v++) {
                    double acc = 0;
                    for (int k = 0; k < K; k++)
                        acc +=
                            fx_get(state0, sdt, (size_t)s * slot_n + ((size_t)hv * K + k) * V + v) *
                            (ls_bf16_to_f32(q[k]) / nq * f.p.scale);
                    double got = ls_bf16_to_f32(f.o[(((size_t)r * T + t) * HV + hv) * V + v]);
                    double want = ls_bf16_to_f32(ls_f32_to_bf16((float)acc));
                    bad_o += !(fabs(got - want) <= 1e-6 + 8e-3 * fabs(want));
                }
            }
        }
    }
    LS_CHECK_EQ_INT(bad_inter, 0);
    LS_CHECK_EQ_INT(bad_o, 0);
    free(state0);
    fx_delta_free(&f);
}

int main(void)
{
    uint64_t sd = 4242;
    int n = delta_verify_sweep(&sd, 0);
    identity_case(&sd, LS_F32, 3, 4, 2, 4, 8, 6);
    identity_case(&sd, LS_BF16, 1, 2, 1, 2, 16, 16);
    identity_case(&sd, LS_BF16, 5, 1, 3, 3, 4, 5);
    printf("%d verify-vs-decode cases\n", n);
    return ls_test_exit();
}
