/*
 * test_gpu_peer_fla.c — the fla peer impl's kda (fla-core 0.6.0's fused recurrent KDA kernel,
 * AOT-compiled) against the host reference, label gpu. Exit 77 without a device, or when the
 * peer was not built (build/peers/libls_impl_fla.so: triton or .peers/src missing).
 *
 * Matrix: Kimi-Linear (KDA) at tp 1, 2, 4, 8; B in {1, 3, 64, 65}; T = 1 (decode: FLA's kernel
 * has no linstate verify, see peers/fla/README.md; every draft count 2..8 is checked to be
 * refused with the documented message and to write nothing); fp32 and bf16 state; both state
 * layouts (kv and vk: STATE_V_FIRST). No padding rows: fla-core 0.6.0's kernel does not skip a
 * negative slot index (it would read and write slot -1), so slots are all >= 0 here. o and the
 * whole state pool are poisoned and compared whole. gdn must be NULL (refused, documented).
 * LS_GPU_TEST_QUICK=1: tp 4, B <= 3.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

static const ls_impl *g_im;

static void run_case(int kda, const char *name, int tp, int H, int HV, int K, int V, int B, int T,
                     ls_dtype sdt, ls_state_layout lay, uint64_t seed)
{
    const int slots = B + 3 + B / 8;
    const size_t es = ls_dtype_size(sdt), head = (size_t)K * V;
    const size_t sstride = (size_t)HV * head, istride = (size_t)T * HV * head;
    const size_t nq = (size_t)B * T * H * K, nv = (size_t)B * T * HV * V, nb = (size_t)B * T * HV;
    const size_t na = kda ? nb * K : nb;
    const int use_inter = T > 1, disable = T > 2;
    printf("%s %s tp%d B=%d T=%d state=%s %s\n", kda ? "kda" : "gdn", name, tp, B, T, ls_dtype_name(sdt),
           ls_state_layout_name(lay));

    gt_buf q = gt_buf_new(nq * 2), k = gt_buf_new(nq * 2), v = gt_buf_new(nv * 2);
    gt_buf a = gt_buf_new(na * 2), bb = gt_buf_new(nb * 2), o = gt_buf_new(nv * 2);
    gt_buf alog = gt_buf_new((size_t)HV * 4);
    gt_buf dtb = gt_buf_new(kda ? (size_t)HV * K * 4 : (size_t)HV * 2);
    gt_buf st = gt_buf_new((size_t)slots * sstride * es);
    gt_buf in = gt_buf_new(use_inter ? (size_t)slots * istride * es : 16);
    gt_buf idx = gt_buf_new((size_t)B * 4);
    gt_fill_bf16(&seed, q.h, nq, -1, 1);
    gt_fill_bf16(&seed, k.h, nq, -1, 1);
    gt_fill_bf16(&seed, v.h, nv, -1, 1);
    gt_fill_bf16(&seed, a.h, na, -2, 2);
    gt_fill_bf16(&seed, bb.h, nb, -3, 3);
    gt_fill_f32(&seed, alog.h, HV, -1, 1);
    if (kda)
        gt_fill_f32(&seed, dtb.h, (size_t)HV * K, -1, 1);
    else
        gt_fill_bf16(&seed, dtb.h, HV, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, 0.0); /* no padding rows: see the header */
    gt_buf *inputs[] = {&q, &k, &v, &a, &bb, &alog, &dtb, &idx};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        gt_upload(inputs[i]);
    gt_poison(&o);
    gt_poison(&st);
    if (use_inter)
        gt_poison(&in);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * sstride * es;
            gt_fill(&seed, (char *)st.h + off, sdt, HV * head, -1, 1);
            gt_upload_range(&st, off, HV * head * es);
        }
    ls_delta_params p = {
        .batch = B, .tokens = T, .heads_qk = H, .heads_v = HV, .dk = K, .dv = V,
        .disable_state_update = disable, .scale = (float)(1.0 / sqrt((double)K)),
        .state_dtype = sdt, .state_stride_slot = (int64_t)sstride,
        .inter_stride_slot = use_inter ? (int64_t)istride : 0, .slots = slots,
        .state_layout = lay,
    };
    ls_delta_params ph = p, pd = p;
    ph.q = q.h, ph.k = k.h, ph.v = v.h, ph.a = a.h, ph.b = bb.h, ph.A_log = alog.h;
    ph.dt_bias = dtb.h, ph.o = o.h, ph.state = st.h, ph.slot_idx = idx.h;
    ph.inter = use_inter ? in.h : NULL;
    pd.q = q.d, pd.k = k.d, pd.v = v.d, pd.a = a.d, pd.b = bb.d, pd.A_log = alog.d;
    pd.dt_bias = dtb.d, pd.o = o.d, pd.state = st.d, pd.slot_idx = idx.d;
    pd.inter = use_inter ? in.d : NULL;

    ls_tuning t;
    ls_tuning_default(g_im, &t);
    int rc = g_im->kda(&pd, &t, NULL);
    if (T > 1) {
        /* verify is refused, before any launch: nothing may be written */
        LS_CHECK_EQ_INT(rc, LS_OP_UNSUPPORTED);
        LS_CHECK(strstr(ls_impl_error(g_im), "verify") != NULL);
    } else {
        LS_CHECK_EQ_INT(ls_ref_kda(&ph), 0);
        if (rc)
            fprintf(stderr, "fla op failed: %s\n", ls_impl_error(g_im));
        LS_CHECK_EQ_INT(rc, 0);
    }
    gt_init()->sync(NULL);
    gt_download(&o);
    gt_download(&st);
    if (use_inter)
        gt_download(&in);
    double w1 = 0, w2 = 0;
    const gt_tol to = {.atol = 0, .rtol = 1e-4, .group = (size_t)HV * V, .ulps = 2};
    const gt_tol ts = {.atol = 0, .rtol = 1e-5, .group = head, .ulps = sdt == LS_BF16 ? 2 : 0};
    /* refused (T > 1): the state must be bitwise what it was (the reference did not run, so
     * its copy is the initial state); o and inter were never written, nothing to compare */
    if (T == 1)
        LS_CHECK(gt_compare_buf("o", LS_BF16, &o, nv, to, &w1) == 0);
    LS_CHECK(gt_compare_buf("state", sdt, &st, (size_t)slots * sstride, ts, &w2) == 0);
    if (use_inter && T == 1)
        LS_CHECK(gt_compare_buf("inter", sdt, &in, (size_t)slots * istride, ts, &w2) == 0);
    gt_buf *all[] = {&q, &k, &v, &a, &bb, &o, &alog, &dtb, &st, &in, &idx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gt_buf_free(all[i]);
}

int main(void)
{
    gt_init();
    g_im = ls_impl_get("fla");
    if (!g_im) {
        printf("SKIP: fla peer not built: %s\n", ls_last_error());
        return 77;
    }
    LS_CHECK(g_im->gdn == NULL);
    LS_CHECK((g_im->caps & (LS_IMPL_KV | LS_IMPL_VK)) == (LS_IMPL_KV | LS_IMPL_VK));
    const int quick = gt_quick();
    static const int tps[] = {1, 2, 4, 8}, Bs[] = {1, 3, 64, 65};
    static const ls_dtype dts[] = {LS_F32, LS_BF16};
    static const ls_state_layout lays[] = {LS_STATE_KV, LS_STATE_VK};
    uint64_t seed = 0xf1a5eedULL;
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        if (m->mechanism != LS_MECH_KDA)
            continue;
        for (int ti = 0; ti < 4; ti++) {
            if (quick && tps[ti] != 4)
                continue;
            ls_shape s;
            LS_REQUIRE(ls_shape_from_model(m, tps[ti], &s) == 0);
            for (int li = 0; li < 2; li++)
                for (int di = 0; di < 2; di++)
                    for (int bi = 0; bi < 4; bi++)
                        for (int T = 1; T <= 8; T++) {
                            if (quick && Bs[bi] > 3)
                                continue;
                            if (T > 1 && Bs[bi] != 3)
                                continue; /* the refusal needs one shape */
                            run_case(1, m->name, tps[ti], s.heads_qk, s.heads_v, s.dk, s.dv, Bs[bi], T,
                                     dts[di], lays[li], ls_test_rand_u64(&seed));
                        }
        }
    }
    return ls_test_exit();
}
