/*
 * test_gpu_delta.c — the linstate impl's GDN and KDA recurrences (kernels/cuda/gdn.cu, kda.cu)
 * against the host reference (ls_ref_gdn / ls_ref_kda), label gpu; exits 77 without a device.
 *
 * Per case: random bf16/fp32 inputs (q,k,v ~ U(-1,1), a ~ U(-2,2), b ~ U(-3,3), A_log ~ U(-1,1),
 * dt_bias ~ U(-1,1)); a pool of more slots than rows, rows on random distinct slots, ~1/4 of the
 * rows padding (-1) when B >= 3; o, state and inter poisoned whole (NaN bytes) on both sides,
 * then random initial state written into the slots of the real rows only. After the reference
 * and the CUDA op run, EVERY element of o, state and inter is compared: written ones within
 * tolerance, the rest (other slots, padding rows' slots, the gap between slots, steps of
 * padding rows) bit-identical to the poison.
 *
 * Tolerances: fp32 state |err| <= 1e-5 * max|ref| of its head; bf16 state adds 2 bf16 ulps (the
 * two sides may round a value to neighbouring bf16s); o (bf16) 2 ulps + 1e-4 * max|o| over the
 * token's value heads (the fp32 dot products of the GPU vs float64; a per-head scale fails when a
 * head's o is tiny by cancellation, e.g. a padding row with kn.qn ~ 0).
 *
 * Matrix: every GDN/KDA preset at tp 2 with B in {1, 3, 64} (B = 64 with T in {1, 4} only), T in
 * {1, 2, 4, 8}, fp32 and bf16 state; tp 1 and tp 8 with B = 3, T in {1, 4}; B = 140, T = 4
 * (fp32; verify) at tp 2; B = 257 at tp 2,
 * T = 1 (GDN fp32, KDA bf16 state); odd shapes
 * (K = 64, V = 48; K = 100, V = 36) that take the generic kernel. T = 1: decode (no inter,
 * state written); T = 2: inter and final state; T = 4, 8: verify (inter, no state write).
 * LS_GPU_TEST_QUICK=1 keeps B <= 3 and T <= 2.
 *
 * State layouts: everything runs for both kv ([K, V] per head) and vk ([V, K], K innermost:
 * the delta_vk kernels); the host reference transposes per head.
 *
 * The matrix runs once per tuning (gt_set_tuning): delta.variant=regs and =bulk (kv), vk4 and
 * vk8 (vk), and PDL off (both layouts), run the large-batch cases (run_large);
 * delta.variant=split (kv; the SPLIT tiles at every batch of the vector path, the generic kernel
 * for the odd shapes) runs those and, for kv, the B <= 3 part of the matrix above (every T,
 * dtype and tp; quick-trimmed alike); split2 (its 2-warp twin, meant for somewhat larger
 * batches) the large-batch cases only; delta.ahead=on and =off (vk verify with and without the
 * token-ahead loads; auto takes either by batch and family) the small and the large batches; the
 * default tuning, last, runs everything above (vk: decode vk4 up to B = 4 and vk8 above, verify
 * vk4 but vk8 for KDA with an fp32 state from B = 3 at tp 2, generic for the odd shapes). The
 * default only takes the bulk kernel from B·HV >= 16 per SM (B >= 133 at tp 2 shapes), so
 * B = 257 covers it there; "bulk" forces it from B = 9 on. (That an unknown value is rejected,
 * naming it, is a host test: tests/kernels/test_choose.c.) Every case gives the pool's slot count
 * (p.slots). The default tuning (test_gpu_delta) and the forced ones (test_gpu_delta_forced,
 * test_gpu_delta_forced2: the two halves of the list) are binaries of this file
 * (LS_DELTA_TEST_PART).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

typedef struct dcase {
    int per_channel;  /* 0 GDN, 1 KDA */
    const char *name; /* preset name or "custom" */
    int tp;
    int H, HV, K, V;
    int B, T;
    ls_dtype sdt;
    int disable, use_inter;
    int gap;          /* extra whole heads of poison between slots (stride test) */
    ls_state_layout lay;
} dcase;

static double g_worst_state_ratio, g_worst_o_ratio;

static void run_case(const ls_runtime *be, const dcase *c, uint64_t seed)
{
    const int B = c->B, T = c->T, H = c->H, HV = c->HV, K = c->K, V = c->V;
    const int slots = B + 3 + B / 8;
    const size_t es = ls_dtype_size(c->sdt);
    const size_t head = (size_t)K * V;
    const size_t sstride = (size_t)(HV + c->gap) * head;       /* elements between slots */
    const size_t istride = (size_t)T * HV * head + c->gap * head;
    const size_t nq = (size_t)B * T * H * K, nv = (size_t)B * T * HV * V, nb = (size_t)B * T * HV;
    const size_t na = c->per_channel ? nb * K : nb;

    printf("%s %s tp%d H=%d HV=%d K=%d V=%d B=%d T=%d state=%s layout=%s%s%s gap=%d\n",
           c->per_channel ? "kda" : "gdn", c->name, c->tp, H, HV, K, V, B, T, ls_dtype_name(c->sdt),
           ls_state_layout_name(c->lay), c->use_inter ? " inter" : "", c->disable ? " no-final-write" : "", c->gap);

    gt_buf q = gt_buf_new(nq * 2), k = gt_buf_new(nq * 2), v = gt_buf_new(nv * 2);
    gt_buf a = gt_buf_new(na * 2), bb = gt_buf_new(nb * 2), o = gt_buf_new(nv * 2);
    gt_buf alog = gt_buf_new((size_t)HV * 4);
    gt_buf dtb = gt_buf_new(c->per_channel ? (size_t)HV * K * 4 : (size_t)HV * 2);
    gt_buf st = gt_buf_new((size_t)slots * sstride * es);
    gt_buf in = gt_buf_new(c->use_inter ? (size_t)slots * istride * es : 1);
    gt_buf idx = gt_buf_new((size_t)B * 4);

    gt_fill_bf16(&seed, q.h, nq, -1, 1);
    gt_fill_bf16(&seed, k.h, nq, -1, 1);
    gt_fill_bf16(&seed, v.h, nv, -1, 1);
    gt_fill_bf16(&seed, a.h, na, -2, 2);
    gt_fill_bf16(&seed, bb.h, nb, -3, 3);
    gt_fill_f32(&seed, alog.h, HV, -1, 1);
    if (c->per_channel)
        gt_fill_f32(&seed, dtb.h, (size_t)HV * K, -1, 1);
    else
        gt_fill_bf16(&seed, dtb.h, HV, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, 0.25);
    const gt_buf *inputs[] = {&q, &k, &v, &a, &bb, &alog, &dtb, &idx};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        gt_upload(inputs[i]);

    gt_poison(&o);
    gt_poison(&st);
    if (c->use_inter)
        gt_poison(&in);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * sstride * es;
            gt_fill(&seed, (char *)st.h + off, c->sdt, HV * head, -1, 1);
            gt_upload_range(&st, off, HV * head * es);
        }

    ls_delta_params p = {
        .batch = B, .tokens = T, .heads_qk = H, .heads_v = HV, .dk = K, .dv = V,
        .disable_state_update = c->disable, .scale = (float)(1.0 / sqrt((double)K)),
        .state_dtype = c->sdt, .state_stride_slot = (int64_t)sstride, .state_layout = c->lay,
        .inter_stride_slot = c->use_inter ? (int64_t)istride : 0,
        .slots = slots, /* the reference checks every index against it */
    };
    ls_delta_params ph = p, pd = p;
    ph.q = q.h, ph.k = k.h, ph.v = v.h, ph.a = a.h, ph.b = bb.h, ph.A_log = alog.h;
    ph.dt_bias = dtb.h, ph.o = o.h, ph.state = st.h, ph.slot_idx = idx.h;
    ph.inter = c->use_inter ? in.h : NULL;
    pd.q = q.d, pd.k = k.d, pd.v = v.d, pd.a = a.d, pd.b = bb.d, pd.A_log = alog.d;
    pd.dt_bias = dtb.d, pd.o = o.d, pd.state = st.d, pd.slot_idx = idx.d;
    pd.inter = c->use_inter ? in.d : NULL;

    int rc_ref = c->per_channel ? ls_ref_kda(&ph) : ls_ref_gdn(&ph);
    if (rc_ref)
        fprintf(stderr, "reference failed: %s\n", ls_last_error());
    LS_CHECK_EQ_INT(rc_ref, 0);
    int rc = c->per_channel ? gt_impl()->kda(&pd, gt_tuning(), NULL) : gt_impl()->gdn(&pd, gt_tuning(), NULL);
    if (rc)
        fprintf(stderr, "cuda op failed: %s\n", ls_last_error());
    LS_CHECK_EQ_INT(rc, 0);

    gt_download(&o);
    gt_download(&st);
    if (c->use_inter)
        gt_download(&in);
    const gt_tol to = {.atol = 0, .rtol = 1e-4, .group = (size_t)HV * V, .ulps = 2};
    const gt_tol ts = {.atol = 0, .rtol = 1e-5, .group = head, .ulps = c->sdt == LS_BF16 ? 2 : 0};
    LS_CHECK(gt_compare_buf("o", LS_BF16, &o, nv, to, &g_worst_o_ratio) == 0);
    LS_CHECK(gt_compare_buf("state", c->sdt, &st, (size_t)slots * sstride, ts, &g_worst_state_ratio) == 0);
    if (c->use_inter)
        LS_CHECK(gt_compare_buf("inter", c->sdt, &in, (size_t)slots * istride, ts, &g_worst_state_ratio) == 0);

    gt_buf *all[] = {&q, &k, &v, &a, &bb, &o, &alog, &dtb, &st, &in, &idx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gt_buf_free(all[i]);
}

/* Case from a preset at a tp; T decides the mode (see the file comment). */
static void preset_case(const ls_runtime *be, const ls_model *m, int tp, int B, int T, ls_dtype sdt,
                        int gap, ls_state_layout lay, uint64_t *seed)
{
    ls_shape s;
    LS_REQUIRE(ls_shape_from_model(m, tp, &s) == 0);
    dcase c = {.per_channel = m->mechanism == LS_MECH_KDA, .name = m->name, .tp = tp,
               .H = s.heads_qk, .HV = s.heads_v, .K = s.dk, .V = s.dv, .B = B, .T = T, .sdt = sdt,
               .disable = T > 2, .use_inter = T > 1, .gap = gap, .lay = lay};
    run_case(be, &c, ls_test_rand_u64(seed));
}

/* Bad input reaches the caller as an error naming the value, with nothing launched. */
static void check_bad_input(const ls_runtime *be)
{
    ls_delta_params p = {.batch = 1, .tokens = 1, .heads_qk = 1, .heads_v = 1, .dk = 200, .dv = 16,
                         .scale = 1.0f, .state_dtype = LS_F32, .state_stride_slot = 200 * 16};
    uint16_t dummy16[8];
    float dummyf[8];
    int32_t slot = 0;
    p.q = p.k = p.v = p.a = p.b = dummy16, p.o = dummy16, p.A_log = dummyf, p.dt_bias = dummyf;
    p.state = dummyf, p.slot_idx = &slot;
    LS_CHECK(gt_impl()->gdn(&p, gt_tuning(), NULL) != 0);
    LS_CHECK(strstr(ls_last_error(), "dk=200") != NULL);
    p.dk = 16, p.heads_v = 3, p.heads_qk = 2;
    LS_CHECK(gt_impl()->kda(&p, gt_tuning(), NULL) != 0);
    LS_CHECK(strstr(ls_last_error(), "heads_v=3") != NULL);
}

/* The full matrix (see the file comment): the default tuning. small: only B <= 3 (and the odd
 * shapes), for a tuning whose large batches run_large covers. */
static void run_full(const ls_runtime *be, int quick, int small, uint64_t seed, ls_state_layout lay)
{
    static const int Bs[] = {1, 3, 64}, Ts[] = {1, 2, 4, 8};
    static const ls_dtype dts[] = {LS_F32, LS_BF16};
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        if (m->mechanism != LS_MECH_GDN && m->mechanism != LS_MECH_KDA)
            continue;
        for (int di = 0; di < 2; di++)
            for (int bi = 0; bi < 3; bi++)
                for (int ti = 0; ti < 4; ti++) {
                    if ((quick || small) && Bs[bi] > 3)
                        continue;
                    if (quick && Ts[ti] > 2)
                        continue;
                    if (Bs[bi] == 64 && Ts[ti] != 1 && Ts[ti] != 4)
                        continue; /* host time: the reference and the compare are O(B*T*state) */
                    preset_case(be, m, 2, Bs[bi], Ts[ti], dts[di], (bi + ti) % 2, lay, &seed);
                }
        for (int di = 0; di < 2; di++)
            for (int ti = 0; ti < 2; ti++) {
                if (quick && ti)
                    continue;
                preset_case(be, m, 1, 3, ti ? 4 : 1, dts[di], 0, lay, &seed);
                preset_case(be, m, 8, 3, ti ? 4 : 1, dts[di], 1, lay, &seed);
            }
        if (!quick && !small) { /* large batches (the bulk kernel): decode fp32 for GDN, bf16 for KDA; verify
                       * with inter windows (B = 140: just past the bulk threshold) */
            preset_case(be, m, 2, 257, 1, m->mechanism == LS_MECH_GDN ? LS_F32 : LS_BF16, 1, lay, &seed);
            preset_case(be, m, 2, 140, 4, LS_F32, 0, lay, &seed);
        }
    }
    /* odd shapes: the generic (predicated, scalar) kernel */
    for (int pc = 0; pc < 2; pc++)
        for (int di = 0; di < 2; di++) {
            dcase c = {.per_channel = pc, .name = "custom", .tp = 0, .H = 2, .HV = 6, .K = 64, .V = 48,
                       .B = 5, .T = 3, .sdt = dts[di], .disable = 0, .use_inter = 1, .gap = 1, .lay = lay};
            run_case(be, &c, ls_test_rand_u64(&seed));
            dcase d = {.per_channel = pc, .name = "custom", .tp = 0, .H = 1, .HV = 3, .K = 100, .V = 36,
                       .B = 4, .T = 1, .sdt = dts[di], .disable = 0, .use_inter = 0, .gap = 0, .lay = lay};
            run_case(be, &d, ls_test_rand_u64(&seed));
        }
}

/*
 * A forced regs / bulk changes only the kv WIDE launches (B·HV >= 132 at tp 2 shapes: B >= 9);
 * vk4 / vk8 change vk launches at any batch, but auto already runs vk4 at small batches and vk8
 * for decode and KDA verify above, so the large batches are where forcing adds coverage. Matrix:
 * every GDN/KDA preset at tp 2, B = 64 with T = 1 and 4 in both state dtypes, T = 2 (inter +
 * final write) and T = 8 in one dtype each; B = 12 (a grid smaller than one wave) and B = 257
 * (several waves), T = 1. ~1/4 of the rows are padding in every case (a padding row's state
 * still evolves over the tokens of a verify). LS_GPU_TEST_QUICK=1: B = 12 and B = 64 T = 1 only.
 */
static void run_large(const ls_runtime *be, int quick, uint64_t seed, ls_state_layout lay)
{
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        if (m->mechanism != LS_MECH_GDN && m->mechanism != LS_MECH_KDA)
            continue;
        const int kda = m->mechanism == LS_MECH_KDA;
        preset_case(be, m, 2, 12, 1, kda ? LS_BF16 : LS_F32, 1, lay, &seed);
        preset_case(be, m, 2, 64, 1, LS_F32, 0, lay, &seed);
        preset_case(be, m, 2, 64, 1, LS_BF16, 1, lay, &seed);
        if (quick)
            continue;
        preset_case(be, m, 2, 12, 4, kda ? LS_F32 : LS_BF16, 0, lay, &seed);
        preset_case(be, m, 2, 64, 4, LS_F32, 1, lay, &seed);
        preset_case(be, m, 2, 64, 4, LS_BF16, 0, lay, &seed);
        preset_case(be, m, 2, 64, 2, kda ? LS_F32 : LS_BF16, 1, lay, &seed);
        preset_case(be, m, 2, 64, 8, kda ? LS_BF16 : LS_F32, 0, lay, &seed);
        preset_case(be, m, 2, 257, 1, kda ? LS_F32 : LS_BF16, 1, lay, &seed);
    }
}

/* The parts of the run, three binaries of this file (CMake: test_gpu_delta = the default tuning,
 * test_gpu_delta_forced / test_gpu_delta_forced2 = the two halves of the forced kernels' list), so
 * that ctest -j runs them side by side within its timeout; a build without LS_DELTA_TEST_PART runs
 * all. */
#ifndef LS_DELTA_TEST_PART
#define LS_DELTA_TEST_PART 0
#endif

int main(void)
{
    const ls_runtime *be = gt_init();
    const int quick = gt_quick();
    const uint64_t seed = 0x5eedde17a0001ull;
    /* the forced kernels of the large batches, PDL off, per layout; split (every batch of the kv
     * vector path, made for the small ones): the small batches too */
    static const struct {
        ls_state_layout lay;
        const char *tuning;
        int small; /* also the small batches of run_full */
    } forced[] = {{LS_STATE_KV, "delta.variant=regs", 0}, {LS_STATE_KV, "delta.variant=bulk", 0},
                  {LS_STATE_KV, "pdl=off", 0},            {LS_STATE_VK, "delta.variant=vk4", 0},
                  {LS_STATE_VK, "delta.variant=vk8", 0},  {LS_STATE_VK, "pdl=off", 0},
                  {LS_STATE_KV, "delta.variant=split", 1}, {LS_STATE_KV, "delta.variant=split2", 0},
                  {LS_STATE_VK, "delta.ahead=on", 1},    {LS_STATE_VK, "delta.ahead=off", 1}};
    /* part 2 runs the first half of the list, part 3 the second (test_gpu_delta_forced, _forced2) */
    const size_t nf = sizeof forced / sizeof *forced, half = (nf + 1) / 2;
    const size_t f0 = LS_DELTA_TEST_PART == 3 ? half : 0, f1 = LS_DELTA_TEST_PART == 2 ? half : nf;
    for (size_t i = f0; LS_DELTA_TEST_PART != 1 && i < f1; i++) {
        gt_set_tuning(forced[i].tuning);
        const uint64_t s = seed + 1 + (uint64_t)i; /* a different draw per tuning */
        if (forced[i].small)
            run_full(be, quick, 1, s + 100, forced[i].lay);
        run_large(be, quick, s, forced[i].lay);
        printf("%s %s: worst error / tolerance: state %.3g, o %.3g\n", ls_state_layout_name(forced[i].lay),
               forced[i].tuning, g_worst_state_ratio, g_worst_o_ratio);
    }
    if (LS_DELTA_TEST_PART != 2) {
        gt_set_tuning("");
        if (be == ls_runtime_cuda()) /* the cuda launcher's limits (the host reference has others) */
            check_bad_input(be);
        run_full(be, quick, 0, seed, LS_STATE_KV);
        run_full(be, quick, 0, seed + 16, LS_STATE_VK);
        printf("default: worst error / tolerance: state %.3g, o %.3g\n", g_worst_state_ratio, g_worst_o_ratio);
    }
    return ls_test_exit();
}
