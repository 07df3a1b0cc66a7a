/*
 * test_delta_layout.c — the reference's state_layout: LS_STATE_VK ([V, K] per head) computes the
 * same recurrence as LS_STATE_KV on the transposed state. For GDN and KDA, fp32 and bf16 state,
 * K != V (a transposition mistake cannot hide), verify with intermediate states and padding
 * rows: outputs bit-identical, final and intermediate states the exact transposes. Also: an
 * out-of-range layout is rejected naming the field; q, k, v given as views into one packed
 * [B*T, 2HK + HV*V] row per token (the *_stride_tok fields) compute exactly what the contiguous
 * tensors do, and a stride below one token's row is rejected.
 */
#include "ref_fixtures.h"

/* dst[s][h] = transpose of src[s][h] (K x V -> V x K, or back with K and V swapped). */
static void transpose_heads(const void *src, void *dst, size_t n_heads, int rows, int cols, ls_dtype dt)
{
    const size_t es = ls_dtype_size(dt), item = (size_t)rows * cols;
    for (size_t h = 0; h < n_heads; h++)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                memcpy((char *)dst + (h * item + (size_t)j * rows + i) * es,
                       (const char *)src + (h * item + (size_t)i * cols + j) * es, es);
}

static void layout_case(uint64_t *sd, int kda, ls_dtype dt, int B, int T, int H, int HV, int K, int V)
{
    fx_delta f;
    fx_delta_make(&f, sd, kda, B, T, H, HV, K, V, 2 * B + 1, B > 1 ? 1 : 0, dt, T > 1);
    const size_t es = ls_dtype_size(dt);
    const size_t heads = f.state_n / ((size_t)K * V);
    void *state_kv0 = fx_dup(f.state, f.state_n * es);
    void *state_vk = fx_alloc(f.state_n * es);
    transpose_heads(state_kv0, state_vk, heads, K, V, dt);

    /* KV run */
    LS_REQUIRE((kda ? ls_ref_kda(&f.p) : ls_ref_gdn(&f.p)) == 0);
    void *o_kv = fx_dup(f.o, (size_t)B * T * HV * V * 2);
    void *inter_kv = f.inter ? fx_dup(f.inter, f.inter_n * es) : NULL;

    /* VK run on the transposed state, same inputs */
    ls_delta_params q = f.p;
    q.state_layout = LS_STATE_VK;
    q.state = state_vk;
    memset(f.o, FX_POISON, (size_t)B * T * HV * V * 2);
    if (f.inter)
        memset(f.inter, FX_POISON, f.inter_n * es);
    LS_REQUIRE((kda ? ls_ref_kda(&q) : ls_ref_gdn(&q)) == 0);
    LS_CHECK(memcmp(o_kv, f.o, (size_t)B * T * HV * V * 2) == 0);

    void *back = fx_alloc(f.state_n * es);
    transpose_heads(state_vk, back, heads, V, K, dt);
    LS_CHECK(memcmp(back, f.state, f.state_n * es) == 0); /* final states: exact transposes */
    if (f.inter) {
        void *iback = fx_alloc(f.inter_n * es);
        transpose_heads(f.inter, iback, f.inter_n / ((size_t)K * V), V, K, dt);
        LS_CHECK(memcmp(iback, inter_kv, f.inter_n * es) == 0);
        free(iback);
    }
    /* the layouts really differ in memory (K != V, random state) */
    LS_CHECK(memcmp(state_vk, f.state, f.state_n * es) != 0);
    free(state_kv0), free(state_vk), free(o_kv), free(inter_kv), free(back);
    fx_delta_free(&f);
}

/* q, k, v copied into one packed row per token and read through the token strides. */
static void packed_case(uint64_t *sd, int kda, int B, int T, int H, int HV, int K, int V)
{
    fx_delta f;
    fx_delta_make(&f, sd, kda, B, T, H, HV, K, V, 2 * B + 1, B > 1 ? 1 : 0, LS_F32, T > 1);
    const size_t BT = (size_t)B * T, hk = (size_t)H * K, hvv = (size_t)HV * V, row = 2 * hk + hvv;
    const size_t on = BT * hvv, sn = f.state_n * 4;
    void *state0 = fx_dup(f.state, sn);
    LS_REQUIRE((kda ? ls_ref_kda(&f.p) : ls_ref_gdn(&f.p)) == 0);
    void *o_ref = fx_dup(f.o, on * 2), *s_ref = fx_dup(f.state, sn);

    uint16_t *packed = (uint16_t *)fx_alloc(BT * row * 2);
    for (size_t i = 0; i < BT; i++) {
        memcpy(packed + i * row, f.q + i * hk, hk * 2);
        memcpy(packed + i * row + hk, f.k + i * hk, hk * 2);
        memcpy(packed + i * row + 2 * hk, f.v + i * hvv, hvv * 2);
    }
    ls_delta_params q = f.p;
    q.q = packed, q.k = packed + hk, q.v = packed + 2 * hk;
    q.q_stride_tok = q.k_stride_tok = q.v_stride_tok = (int64_t)row;
    memcpy(f.state, state0, sn);
    memset(f.o, FX_POISON, on * 2);
    LS_REQUIRE((kda ? ls_ref_kda(&q) : ls_ref_gdn(&q)) == 0);
    LS_CHECK(memcmp(o_ref, f.o, on * 2) == 0);
    LS_CHECK(memcmp(s_ref, f.state, sn) == 0);

    q.k_stride_tok = (int64_t)hk - 1; /* overlapping tokens: rejected, naming the fields */
    ls_clear_error();
    LS_CHECK((kda ? ls_ref_kda(&q) : ls_ref_gdn(&q)) != 0);
    LS_CHECK(strstr(ls_last_error(), "stride_tok") != NULL);
    free(state0), free(o_ref), free(s_ref), free(packed);
    fx_delta_free(&f);
}

int main(void)
{
    uint64_t sd = 777;
    for (int kda = 0; kda < 2; kda++) {
        layout_case(&sd, kda, LS_F32, 1, 1, 1, 2, 8, 4);
        layout_case(&sd, kda, LS_F32, 5, 3, 2, 4, 4, 6);
        layout_case(&sd, kda, LS_BF16, 3, 2, 1, 3, 6, 5);
    }
    packed_case(&sd, 0, 1, 1, 2, 4, 8, 8);
    packed_case(&sd, 0, 3, 3, 1, 2, 4, 6);
    packed_case(&sd, 1, 2, 2, 2, 4, 6, 4);
    fx_delta f;
    fx_delta_make(&f, &sd, 0, 1, 1, 1, 1, 4, 4, 2, 0, LS_F32, 0);
    f.p.state_layout = (ls_state_layout)7;
    ls_clear_error();
    LS_CHECK(ls_ref_gdn(&f.p) != 0);
    LS_CHECK(strstr(ls_last_error(), "state_layout=7") != NULL);
    fx_delta_free(&f);
    return ls_test_exit();
}
