/*
 * test_gpu_peer_flashinfer_gdn.c — the flashinfer impl's gdn op (FlashInfer's CuTe-DSL decode and
 * MTP verify, compiled ahead of time: peers/flashinfer/gdn_aot.py) against the float64 host
 * reference; label gpu, exits 77 without a device or when the impl was built without the AOT
 * kernels. Qwen3-Next at tp 1 and 2 (the default AOT shapes), B in {1, 3, 8, 33, 64} (every MTP
 * launch bucket), T in {1, 2, 4, 8}, fp32 vk state, rows on random distinct slots of a larger pool
 * (slot 0 included when drawn), no padding rows (FlashInfer writes a zero output there; linstate
 * asks for the zero-state output: docs/peers.md). Verify: inter in the same allocation as the
 * state, a whole number of states above it (what the MTP kernel's one pool view needs).
 * State and inter 1e-4 * max|ref| per head, o 2 bf16 ulps + 1e-3; untouched slots bit-identical.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

static const ls_impl *g_fi;
static ls_tuning g_t;
static double g_wo, g_ws;

static void gdn_case(int B, int T, int H, int HV, int packed, uint64_t seed)
{
    const int K = 128, V = 128, slots = B + 3 + B / 8;
    const size_t item = (size_t)HV * K * V, row = packed ? (size_t)2 * H * K + (size_t)HV * V : 0;
    const size_t BT = (size_t)B * T, nq = BT * H * K, nv = BT * HV * V, nb = BT * HV;
    const size_t inter_slots = T > 1 ? (size_t)slots * T : 0;
    printf("flashinfer gdn B=%d T=%d H=%d HV=%d%s\n", B, T, H, HV, packed ? " packed" : "");
    gt_buf qkv = gt_buf_new((packed ? BT * row : 2 * nq + nv) * 2);
    gt_buf a = gt_buf_new(nb * 2), bb = gt_buf_new(nb * 2), o = gt_buf_new(nv * 2);
    gt_buf alog = gt_buf_new((size_t)HV * 4), dtb = gt_buf_new((size_t)HV * 2);
    gt_buf st = gt_buf_new(((size_t)slots + inter_slots) * item * 4), idx = gt_buf_new((size_t)B * 4);
    gt_fill_bf16(&seed, qkv.h, packed ? BT * row : 2 * nq + nv, -1, 1);
    gt_fill_bf16(&seed, a.h, nb, -3, 1);
    gt_fill_bf16(&seed, bb.h, nb, -2, 2);
    gt_fill_f32(&seed, alog.h, HV, -2, 0.5);
    gt_fill_bf16(&seed, dtb.h, HV, -0.5, 0.5);
    gt_random_slots(&seed, idx.h, B, slots, 0.0);
    const gt_buf *inputs[] = {&qkv, &a, &bb, &alog, &dtb, &idx};
    for (size_t i = 0; i < 6; i++)
        gt_upload(inputs[i]);
    gt_poison(&o);
    gt_poison(&st);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++) {
        size_t off = (size_t)slot[r] * item * 4;
        gt_fill_f32(&seed, (float *)((char *)st.h + off), item, -1, 1);
        gt_upload_range(&st, off, item * 4);
    }
    ls_delta_params p = {.batch = B, .tokens = T, .heads_qk = H, .heads_v = HV, .dk = K, .dv = V,
                         .scale = (float)(1.0 / sqrt((double)K)), .state_dtype = LS_F32,
                         .state_stride_slot = (int64_t)item, .slots = slots, .state_layout = LS_STATE_VK,
                         .disable_state_update = T > 1, .inter_stride_slot = (int64_t)item * T,
                         .q_stride_tok = (int64_t)row, .k_stride_tok = (int64_t)row, .v_stride_tok = (int64_t)row};
    ls_delta_params ph = p, pd = p;
    const size_t qo = 0, ko = packed ? (size_t)H * K : nq, vo = packed ? (size_t)2 * H * K : 2 * nq;
    ph.q = (uint16_t *)qkv.h + qo, ph.k = (uint16_t *)qkv.h + ko, ph.v = (uint16_t *)qkv.h + vo;
    pd.q = (uint16_t *)qkv.d + qo, pd.k = (uint16_t *)qkv.d + ko, pd.v = (uint16_t *)qkv.d + vo;
    ph.a = a.h, ph.b = bb.h, ph.A_log = alog.h, ph.dt_bias = dtb.h, ph.o = o.h, ph.state = st.h, ph.slot_idx = idx.h;
    pd.a = a.d, pd.b = bb.d, pd.A_log = alog.d, pd.dt_bias = dtb.d, pd.o = o.d, pd.state = st.d, pd.slot_idx = idx.d;
    if (T > 1) {
        ph.inter = (float *)st.h + (size_t)slots * item;
        pd.inter = (float *)st.d + (size_t)slots * item;
    }
    LS_CHECK_EQ_INT(ls_ref_gdn(&ph), 0);
    int rc = g_fi->gdn(&pd, &g_t, NULL);
    if (rc)
        fprintf(stderr, "flashinfer gdn failed: %s\n", ls_impl_error(g_fi));
    LS_CHECK_EQ_INT(rc, 0);
    gt_download(&o);
    gt_download(&st);
    LS_CHECK(gt_compare_buf("o", LS_BF16, &o, nv, (gt_tol){.rtol = 1e-3, .group = (size_t)HV * V, .ulps = 2}, &g_wo) == 0);
    LS_CHECK(gt_compare_buf("state+inter", LS_F32, &st, ((size_t)slots + inter_slots) * item,
                            (gt_tol){.rtol = 1e-4, .group = (size_t)K * V}, &g_ws) == 0);
    gt_buf *all[] = {&qkv, &a, &bb, &o, &alog, &dtb, &st, &idx};
    for (size_t i = 0; i < 8; i++)
        gt_buf_free(all[i]);
}

int main(void)
{
    gt_init();
    const int quick = gt_quick();
    g_fi = ls_impl_get("flashinfer");
    if (!g_fi)
        fprintf(stderr, "%s\n", ls_last_error());
    LS_REQUIRE(g_fi != NULL);
    if (!g_fi->gdn) {
        printf("skip: flashinfer built without its GDN AOT kernels (scripts/peers.sh aot-flashinfer-gdn)\n");
        return 77;
    }
    ls_tuning_default(g_fi, &g_t);
    uint64_t seed = 0xf1a5ull;
    static const int Bs[] = {1, 3, 8, 33, 64};
    for (int tp = 1; tp <= 2; tp++) {
        ls_shape s;
        const ls_model *m = ls_model_find("qwen3-next-80b-a3b");
        LS_REQUIRE(m && ls_shape_from_model(m, tp, &s) == 0);
        for (int bi = 0; bi < 5; bi++)
            for (int T = 1; T <= 8; T *= 2) {
                if (quick && Bs[bi] > 3)
                    continue;
                gdn_case(Bs[bi], T, s.heads_qk, s.heads_v, bi % 2, ls_test_rand_u64(&seed));
            }
    }
    printf("worst error / tolerance: state %.3g, o %.3g\n", g_ws, g_wo);
    return ls_test_exit();
}
