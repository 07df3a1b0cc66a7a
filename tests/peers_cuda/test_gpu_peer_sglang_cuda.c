/*
 * test_gpu_peer_sglang_cuda.c — the "sglang_cuda" impl (SGLang's CUDA conv update and KDA packed
 * decode, peers/sglang_cuda) against the host reference; label gpu, exits 77 without a device.
 * Pattern of tests/gpu: a pool larger than the batch, rows on random distinct slots, ~1/4 padding
 * rows (-1) from B = 3, outputs and state poisoned whole on both sides; written elements within
 * tolerance, the rest bit-identical to the poison.
 *
 * conv: nemotron-h-8b / falcon-h1-7b (bias) and qwen3-next (no bias) at tp 2 and 8, channel-major;
 *   window-major (KDA's pool orientation) with bf16 weights; W = 2, 3, 4; B in {1, 3, 7, 64};
 *   T in {1, 2, 4} (the state advanced by T, no windows); SiLU on and off. y: 2 bf16 ulps + 1e-3
 *   (fast-math SiLU); state bit-exact (copies of inputs); padding rows' y left as poison.
 * kda: kimi-linear-48b-a3b at tp 2 and 8 (H = HV), a grouped case (H = 2, HV = 8); B in
 *   {1, 3, 7, 8, 64}; fp32 state [slot, HV, V, K]; decode. State 1e-4 * max|ref| of its head,
 *   o 2 ulps + 1e-3 * max|o| of the token's heads; padding rows' o is the zero-state output.
 * Then refused cases return an error naming the reason. LS_GPU_TEST_QUICK=1: B <= 3.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

static const ls_impl *g_sg;
static ls_tuning g_t;
static double g_wy, g_ws;

static void conv_case(int B, int T, int C, int W, int bias, int wmaj, int silu, uint64_t seed)
{
    const int slots = B + 3 + B / 8, W1 = W - 1;
    const size_t nx = (size_t)B * T * C, sst = (size_t)C * W1 + 8; /* 8 elements of poison between slots */
    printf("sglang conv B=%d T=%d C=%d W=%d%s%s%s\n", B, T, C, W, bias ? " bias" : "", wmaj ? " window-major" : "",
           silu ? " silu" : "");
    gt_buf x = gt_buf_new(nx * 2), y = gt_buf_new(nx * 2), w = gt_buf_new((size_t)C * W * 2);
    gt_buf bs = gt_buf_new(bias ? (size_t)C * 2 : 2), st = gt_buf_new((size_t)slots * sst * 2);
    gt_buf idx = gt_buf_new((size_t)B * 4);
    gt_fill_bf16(&seed, x.h, nx, -1, 1);
    gt_fill_bf16(&seed, w.h, (size_t)C * W, -1, 1);
    if (bias)
        gt_fill_bf16(&seed, bs.h, C, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, 0.25);
    const gt_buf *inputs[] = {&x, &w, &bs, &idx};
    for (size_t i = 0; i < 4; i++)
        gt_upload(inputs[i]);
    gt_poison(&y);
    gt_poison(&st);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * sst * 2;
            gt_fill_bf16(&seed, (uint16_t *)((char *)st.h + off), (size_t)C * W1, -1, 1);
            gt_upload_range(&st, off, (size_t)C * W1 * 2);
        }
    ls_conv_params p = {.batch = B, .tokens = T, .channels = C, .width = W, .silu = silu,
                        .weight_dtype = LS_BF16, .state_dtype = LS_BF16,
                        .x_stride_b = (int64_t)T * C, .x_stride_t = C, .x_stride_c = 1,
                        .y_stride_b = (int64_t)T * C, .y_stride_t = C, .y_stride_c = 1,
                        .state_stride_slot = (int64_t)sst, .state_stride_c = wmaj ? 1 : W1,
                        .state_stride_w = wmaj ? C : 1, .slots = slots};
    ls_conv_params ph = p, pd = p;
    ph.x = x.h, ph.y = y.h, ph.weight = w.h, ph.bias = bias ? bs.h : NULL, ph.state = st.h, ph.slot_idx = idx.h;
    pd.x = x.d, pd.y = y.d, pd.weight = w.d, pd.bias = bias ? bs.d : NULL, pd.state = st.d, pd.slot_idx = idx.d;
    LS_CHECK_EQ_INT(ls_ref_conv_update(&ph), 0);
    int rc = g_sg->conv_update(&pd, &g_t, NULL);
    if (rc)
        fprintf(stderr, "sglang conv failed: %s\n", ls_impl_error(g_sg));
    LS_CHECK_EQ_INT(rc, 0);
    gt_download(&y);
    gt_download(&st);
    /* the tolerance of linstate's own conv GPU test (test_gpu_conv.c): 2 bf16 ulps, 1e-5 absolute */
    LS_CHECK(gt_compare_buf("y", LS_BF16, &y, nx, (gt_tol){.atol = 1e-5, .ulps = 2}, &g_wy) == 0);
    LS_CHECK(gt_compare("state", LS_BF16, st.got, st.h, (size_t)slots * sst, (gt_tol){0}, NULL) == 0);
    gt_buf *all[] = {&x, &y, &w, &bs, &st, &idx};
    for (size_t i = 0; i < 6; i++)
        gt_buf_free(all[i]);
}

static void kda_case(int B, int H, int HV, uint64_t seed)
{
    const int K = 128, V = 128, slots = B + 3 + B / 8;
    const size_t head = (size_t)K * V, sstride = (size_t)(HV + 1) * head;
    const size_t nq = (size_t)B * H * K, nv = (size_t)B * HV * V, nb = (size_t)B * HV;
    printf("sglang kda B=%d H=%d HV=%d\n", B, H, HV);
    gt_buf q = gt_buf_new(nq * 2), k = gt_buf_new(nq * 2), v = gt_buf_new(nv * 2), a = gt_buf_new(nb * K * 2);
    gt_buf bb = gt_buf_new(nb * 2), o = gt_buf_new(nv * 2), alog = gt_buf_new((size_t)HV * 4);
    gt_buf dtb = gt_buf_new((size_t)HV * K * 4), st = gt_buf_new((size_t)slots * sstride * 4);
    gt_buf idx = gt_buf_new((size_t)B * 4);
    gt_fill_bf16(&seed, q.h, nq, -1, 1);
    gt_fill_bf16(&seed, k.h, nq, -1, 1);
    gt_fill_bf16(&seed, v.h, nv, -1, 1);
    gt_fill_bf16(&seed, a.h, nb * K, -2, 2);
    gt_fill_bf16(&seed, bb.h, nb, -3, 3);
    gt_fill_f32(&seed, alog.h, HV, -1, 1);
    gt_fill_f32(&seed, dtb.h, (size_t)HV * K, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, 0.25);
    const gt_buf *inputs[] = {&q, &k, &v, &a, &bb, &alog, &dtb, &idx};
    for (size_t i = 0; i < 8; i++)
        gt_upload(inputs[i]);
    gt_poison(&o);
    gt_poison(&st);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * sstride * 4;
            gt_fill_f32(&seed, (float *)((char *)st.h + off), HV * head, -1, 1);
            gt_upload_range(&st, off, HV * head * 4);
        }
    ls_delta_params p = {.batch = B, .tokens = 1, .heads_qk = H, .heads_v = HV, .dk = K, .dv = V,
                         .scale = (float)(1.0 / sqrt((double)K)), .state_dtype = LS_F32,
                         .state_stride_slot = (int64_t)sstride, .slots = slots, .state_layout = LS_STATE_VK};
    ls_delta_params ph = p, pd = p;
    ph.q = q.h, ph.k = k.h, ph.v = v.h, ph.a = a.h, ph.b = bb.h, ph.A_log = alog.h, ph.dt_bias = dtb.h;
    ph.o = o.h, ph.state = st.h, ph.slot_idx = idx.h;
    pd.q = q.d, pd.k = k.d, pd.v = v.d, pd.a = a.d, pd.b = bb.d, pd.A_log = alog.d, pd.dt_bias = dtb.d;
    pd.o = o.d, pd.state = st.d, pd.slot_idx = idx.d;
    LS_CHECK_EQ_INT(ls_ref_kda(&ph), 0);
    int rc = g_sg->kda(&pd, &g_t, NULL);
    if (rc)
        fprintf(stderr, "sglang kda failed: %s\n", ls_impl_error(g_sg));
    LS_CHECK_EQ_INT(rc, 0);
    gt_download(&o);
    gt_download(&st);
    LS_CHECK(gt_compare_buf("o", LS_BF16, &o, nv, (gt_tol){.rtol = 1e-3, .group = (size_t)HV * V, .ulps = 2}, &g_wy) == 0);
    LS_CHECK(gt_compare_buf("state", LS_F32, &st, (size_t)slots * sstride, (gt_tol){.rtol = 1e-4, .group = head},
                            &g_ws) == 0);
    gt_buf *all[] = {&q, &k, &v, &a, &bb, &o, &alog, &dtb, &st, &idx};
    for (size_t i = 0; i < 10; i++)
        gt_buf_free(all[i]);
}

static void check_refusals(void)
{
    uint16_t d16[8] = {0};
    float df[8] = {0};
    int32_t slot = 0;
    ls_delta_params p = {.batch = 1, .tokens = 1, .heads_qk = 4, .heads_v = 4, .dk = 128, .dv = 128,
                         .scale = 0.1f, .state_dtype = LS_F32, .state_stride_slot = 4 * 128 * 128,
                         .state_layout = LS_STATE_KV};
    p.q = p.k = p.v = p.a = p.b = d16, p.o = d16, p.A_log = df, p.dt_bias = df, p.state = df, p.slot_idx = &slot;
    LS_CHECK_EQ_INT(g_sg->kda(&p, &g_t, NULL), LS_OP_UNSUPPORTED);
    LS_CHECK(strstr(ls_impl_error(g_sg), "(vk)") != NULL);
    p.state_layout = LS_STATE_VK, p.tokens = 3;
    LS_CHECK_EQ_INT(g_sg->kda(&p, &g_t, NULL), LS_OP_UNSUPPORTED);
    LS_CHECK(strstr(ls_impl_error(g_sg), "T = 1 only") != NULL);
    ls_conv_params c = {.batch = 1, .tokens = 1, .channels = 8, .width = 4, .weight_dtype = LS_F32,
                        .state_dtype = LS_BF16, .x_stride_b = 8, .x_stride_t = 8, .x_stride_c = 1, .y_stride_b = 8,
                        .y_stride_t = 8, .y_stride_c = 1, .state_stride_slot = 24, .state_stride_c = 1,
                        .state_stride_w = 8};
    c.x = d16, c.y = d16, c.weight = df, c.state = d16, c.slot_idx = &slot;
    LS_CHECK_EQ_INT(g_sg->conv_update(&c, &g_t, NULL), LS_OP_UNSUPPORTED);
    LS_CHECK(strstr(ls_impl_error(g_sg), "fp32 weights") != NULL);
}

int main(void)
{
    gt_init();
    const int quick = gt_quick();
    g_sg = ls_impl_get("sglang_cuda");
    if (!g_sg)
        fprintf(stderr, "%s\n", ls_last_error());
    LS_REQUIRE(g_sg != NULL);
    ls_tuning_default(g_sg, &g_t);
    uint64_t seed = 0x5e1a9c0dull;
    static const int Bs[] = {1, 3, 7, 64};
    static const char *const convm[] = {"nemotron-h-8b", "falcon-h1-7b", "qwen3-next-80b-a3b"};
    int variant = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int tpi = 0; tpi < 2; tpi++) {
            ls_shape s;
            const ls_model *m = ls_model_find(convm[mi]);
            LS_REQUIRE(m && ls_shape_from_model(m, tpi ? 8 : 2, &s) == 0);
            for (int bi = 0; bi < 4; bi++)
                for (int T = 1; T <= 4; T *= 2) {
                    if (quick && Bs[bi] > 3)
                        continue;
                    conv_case(Bs[bi], T, s.conv_channels, s.conv_width, mi != 2, 0, 1, ls_test_rand_u64(&seed));
                }
        }
    for (int W = 2; W <= 4; W++)
        for (int bi = 0; bi < 4; bi++) {
            if (quick && Bs[bi] > 3)
                continue;
            conv_case(Bs[bi], 1 + (variant % 3), 1000 + 8 * W, W, variant % 2, 1, variant % 2, ls_test_rand_u64(&seed));
            variant++;
            conv_case(Bs[bi], 1, 520, W, 1, 0, 0, ls_test_rand_u64(&seed));
        }
    static const int Bk[] = {1, 3, 7, 8, 64};
    for (int tpi = 0; tpi < 2; tpi++) {
        ls_shape s;
        const ls_model *m = ls_model_find("kimi-linear-48b-a3b");
        LS_REQUIRE(m && ls_shape_from_model(m, tpi ? 8 : 2, &s) == 0);
        for (int bi = 0; bi < 5; bi++) {
            if (quick && Bk[bi] > 3)
                continue;
            kda_case(Bk[bi], s.heads_qk, s.heads_v, ls_test_rand_u64(&seed));
        }
    }
    kda_case(7, 2, 8, ls_test_rand_u64(&seed));
    check_refusals();
    printf("worst error / tolerance: state %.3g, y/o %.3g\n", g_ws, g_wy);
    return ls_test_exit();
}
