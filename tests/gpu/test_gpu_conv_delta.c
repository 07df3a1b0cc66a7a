/*
 * test_gpu_conv_delta.c — the linstate impl's fused conv update + GDN/KDA recurrence
 * (kernels/cuda/conv_delta.cu) against its oracle, ls_ref_conv_delta (the reference conv update
 * and recurrence back to back), label gpu; exits 77 without a device.
 *
 * Per case: random packed x [B, T, 2HK + HV*V] ~ U(-1,1), conv weights and bias ~ U(-0.5,0.5) in
 * the model's weight dtype, gates as test_gpu_delta.c; a pool of more slots than rows, rows on
 * random distinct slots, ~1/4 of the rows padding (-1) when B >= 3. o, both states and both
 * speculative buffers are poisoned whole (NaN bytes) on both sides, then random initial states
 * are written into the real rows' slots. After both run, EVERY element is compared: written ones
 * within tolerance, the rest (other slots, padding rows' o and slots) bit-identical to the poison.
 *
 * Tolerances: conv windows and conv state are copies of inputs: exact. o and the recurrent
 * states: the GPU's fp32 conv may round a q/k/v value to the neighbouring bf16 of the float64
 * oracle's (one bf16 ulp, 2^-8 relative), which then moves the state and o by up to ~1e-3 of
 * their scale: 4e-3 of the head's max |ref| (state) or of the token's max |o| (o), plus 2 bf16
 * ulps. A wrong channel, gate or step gives O(1) errors.
 *
 * Matrix: every GDN/KDA preset at tp 2 with B in {1, 3, 64}, T in {1, 2, 4, 8} (B = 64: T in
 * {1, 4}), fp32 and bf16 state; tp 1 and tp 8 with B = 3, T in {1, 4}; B = 200 T = 1 at tp 2;
 * odd shapes (H = 2, HV = 6, K = 64, V = 48, W = 3, both conv orientations; H = 1, HV = 3,
 * K = 100, V = 36, W = 2, no bias; H = 1, HV = 11, K = 32, V = 48: 33 tiles, a cluster rank
 * without one; H = 2, HV = 6, K = V = 128, W = 3, bias, fp32 T = 3 and bf16 T = 1). T = 1:
 * decode (both states written); T = 2: windows, steps and both final states; T >= 4: verify
 * (windows and steps, neither state written). Then PDL off on a few cases.
 * LS_GPU_TEST_QUICK=1 keeps B <= 3 and T <= 2.
 *
 * Everything runs four times: conv_delta.variant=cluster (conv_delta_kernel), =tiles (the
 * NARROW-tile kernel), =bulk (the head-per-CTA bulk-copy kernel; it serves the presets with
 * fp32 state at every T and bf16 state at T = 1, GDN in clusters of G = 2 value heads, and the
 * K = V = 128 odd shape in clusters of 3) and =bulkp (the same kernel with every prologue load
 * issued first, the q/k conv state of a cluster stored from registers, W = 4 weights as vectors:
 * the presets; the W = 3 odd shape takes the scalar weight loads). Where the variant serves the
 * shape, explain must name its kernel, so the run cannot pass on another one; where bulk does not
 * (bf16 verify, the other odd shapes) neither bulk kernel may be named.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda/choose.h"
#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

typedef struct ccase {
    int kda;
    const char *name;
    int tp, H, HV, K, V, W;
    int B, T;
    ls_dtype sdt, wdt;
    int bias, window_major;
} ccase;

static double g_worst;
enum { V_CLUSTER, V_TILES, V_BULK, V_BULKP };
static int g_variant; /* the conv_delta.variant the runs ask for */

static void run_case(const ccase *c, uint64_t seed)
{
    const int B = c->B, T = c->T, H = c->H, HV = c->HV, K = c->K, V = c->V, W = c->W;
    const int C = 2 * H * K + HV * V, slots = B + 3 + B / 8;
    const size_t es = ls_dtype_size(c->sdt), ws = ls_dtype_size(c->wdt);
    const size_t item = (size_t)HV * K * V, citem = (size_t)C * (W - 1);
    const size_t BT = (size_t)B * T, nb = BT * HV, na = c->kda ? nb * K : nb, nv = BT * HV * V;
    const int verify = T > 1, commit = T <= 2;

    printf("%s %s tp%d H=%d HV=%d K=%d V=%d W=%d B=%d T=%d state=%s weight=%s%s %s\n", c->kda ? "kda" : "gdn",
           c->name, c->tp, H, HV, K, V, W, B, T, ls_dtype_name(c->sdt), ls_dtype_name(c->wdt), c->bias ? " bias" : "",
           c->window_major ? "window-major" : "channel-major");

    gt_buf x = gt_buf_new(BT * C * 2), w = gt_buf_new((size_t)C * W * ws), bias = gt_buf_new((size_t)C * ws);
    gt_buf a = gt_buf_new(na * 2), bb = gt_buf_new(nb * 2), o = gt_buf_new(nv * 2);
    gt_buf alog = gt_buf_new((size_t)HV * 4);
    gt_buf dtb = gt_buf_new(c->kda ? (size_t)HV * K * 4 : (size_t)HV * 2);
    gt_buf cst = gt_buf_new((size_t)slots * citem * 2), st = gt_buf_new((size_t)slots * item * es);
    gt_buf cin = gt_buf_new(verify ? (size_t)slots * citem * T * 2 : 2);
    gt_buf in = gt_buf_new(verify ? (size_t)slots * item * T * es : 2);
    gt_buf idx = gt_buf_new((size_t)B * 4);

    gt_fill_bf16(&seed, x.h, BT * C, -1, 1);
    gt_fill(&seed, w.h, c->wdt, (size_t)C * W, -0.5, 0.5);
    gt_fill(&seed, bias.h, c->wdt, (size_t)C, -0.5, 0.5);
    gt_fill_bf16(&seed, a.h, na, -2, 2);
    gt_fill_bf16(&seed, bb.h, nb, -3, 3);
    gt_fill_f32(&seed, alog.h, HV, -1, 1);
    gt_fill(&seed, dtb.h, c->kda ? LS_F32 : LS_BF16, c->kda ? (size_t)HV * K : (size_t)HV, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, 0.25);
    const gt_buf *inputs[] = {&x, &w, &bias, &a, &bb, &alog, &dtb, &idx};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        gt_upload(inputs[i]);
    gt_buf *poisoned[] = {&o, &cst, &st, &cin, &in};
    for (size_t i = 0; i < sizeof poisoned / sizeof *poisoned; i++)
        gt_poison(poisoned[i]);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            gt_fill_bf16(&seed, (uint16_t *)cst.h + (size_t)slot[r] * citem, citem, -1, 1);
            gt_upload_range(&cst, (size_t)slot[r] * citem * 2, citem * 2);
            gt_fill(&seed, (char *)st.h + (size_t)slot[r] * item * es, c->sdt, item, -1, 1);
            gt_upload_range(&st, (size_t)slot[r] * item * es, item * es);
        }

    ls_conv_delta_params p = {.kda = c->kda};
    ls_conv_params *cv = &p.conv;
    ls_delta_params *d = &p.delta;
    cv->batch = d->batch = B;
    cv->tokens = d->tokens = T;
    cv->channels = C;
    cv->width = W;
    cv->silu = 1;
    cv->disable_state_update = d->disable_state_update = !commit;
    cv->weight_dtype = c->wdt;
    cv->state_dtype = LS_BF16;
    cv->x_stride_b = (int64_t)T * C, cv->x_stride_t = C, cv->x_stride_c = 1;
    cv->state_stride_slot = (int64_t)citem;
    cv->state_stride_c = c->window_major ? 1 : W - 1;
    cv->state_stride_w = c->window_major ? C : 1;
    cv->slots = d->slots = slots;
    if (verify) {
        cv->inter_stride_slot = (int64_t)(citem * T), cv->inter_stride_t = (int64_t)citem;
        cv->inter_stride_c = cv->state_stride_c, cv->inter_stride_w = cv->state_stride_w;
        d->inter_stride_slot = (int64_t)(item * T);
    }
    d->heads_qk = H, d->heads_v = HV, d->dk = K, d->dv = V;
    d->scale = (float)(1.0 / sqrt((double)K));
    d->state_dtype = c->sdt;
    d->state_stride_slot = (int64_t)item;
    ls_conv_delta_params ph = p, pd = p;
#define SIDE(P, M)                                                                                              \
    (P.conv.x = x.M, P.conv.weight = w.M, P.conv.bias = c->bias ? bias.M : NULL, P.conv.state = cst.M,         \
     P.conv.slot_idx = P.delta.slot_idx = idx.M, P.conv.inter = verify ? cin.M : NULL, P.delta.a = a.M,        \
     P.delta.b = bb.M, P.delta.A_log = alog.M, P.delta.dt_bias = dtb.M, P.delta.o = o.M, P.delta.state = st.M, \
     P.delta.inter = verify ? in.M : NULL)
    SIDE(ph, h);
    SIDE(pd, d);
#undef SIDE
    int rc_ref = ls_ref_conv_delta(&ph);
    if (rc_ref)
        fprintf(stderr, "reference failed: %s\n", ls_last_error());
    LS_CHECK_EQ_INT(rc_ref, 0);
    int rc = gt_impl()->conv_delta(&pd, gt_tuning(), NULL);
    if (rc)
        fprintf(stderr, "cuda op failed (rc %d): %s\n", rc, ls_last_error());
    LS_CHECK_EQ_INT(rc, 0);
    if (gt_impl()->explain) { /* the kernel the variant asked for is the one planned */
        char kb[256];
        LS_CHECK_EQ_INT(gt_impl()->explain(LS_OP_CONV_DELTA, &pd, gt_tuning(), NULL, kb, sizeof kb), 0);
        const int tiles = strncmp(kb, "conv_delta_tiles", 16) == 0, bulk = strncmp(kb, "conv_delta_bulk_", 16) == 0;
        const int bulkp = strncmp(kb, "conv_delta_bulkp_", 17) == 0;
        LS_CHECK_EQ_INT(bulk, g_variant == V_BULK && ls_conv_delta_bulk_ok(&pd));
        LS_CHECK_EQ_INT(bulkp, g_variant == V_BULKP && ls_conv_delta_bulk_ok(&pd));
        if (g_variant != V_BULK && g_variant != V_BULKP)
            LS_CHECK_EQ_INT(tiles, g_variant == V_TILES && ls_conv_delta_tiles_ok(&pd));
    }
    for (size_t i = 0; i < sizeof poisoned / sizeof *poisoned; i++)
        gt_download(poisoned[i]);
    const gt_tol exact = {0, 0, 0, 0};
    const gt_tol to = {.atol = 0, .rtol = 4e-3, .group = (size_t)HV * V, .ulps = 2};
    const gt_tol ts = {.atol = 0, .rtol = 4e-3, .group = (size_t)K * V, .ulps = 2};
    LS_CHECK(gt_compare_buf("o", LS_BF16, &o, nv, to, &g_worst) == 0);
    LS_CHECK(gt_compare_buf("conv state", LS_BF16, &cst, (size_t)slots * citem, exact, &g_worst) == 0);
    LS_CHECK(gt_compare_buf("state", c->sdt, &st, (size_t)slots * item, ts, &g_worst) == 0);
    if (verify) {
        LS_CHECK(gt_compare_buf("conv windows", LS_BF16, &cin, (size_t)slots * citem * T, exact, &g_worst) == 0);
        LS_CHECK(gt_compare_buf("inter", c->sdt, &in, (size_t)slots * item * T, ts, &g_worst) == 0);
    }
    gt_buf *all[] = {&x, &w, &bias, &a, &bb, &o, &alog, &dtb, &cst, &st, &cin, &in, &idx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gt_buf_free(all[i]);
}

static void preset_case(const ls_model *m, int tp, int B, int T, ls_dtype sdt, uint64_t *seed)
{
    ls_shape s;
    LS_REQUIRE(ls_shape_from_model(m, tp, &s) == 0);
    ccase c = {.kda = m->mechanism == LS_MECH_KDA, .name = m->name, .tp = tp, .H = s.heads_qk, .HV = s.heads_v,
               .K = s.dk, .V = s.dv, .W = s.conv_width, .B = B, .T = T, .sdt = sdt, .wdt = m->conv_weight_dtype,
               .bias = m->conv_bias, .window_major = m->mechanism == LS_MECH_KDA};
    run_case(&c, ls_test_rand_u64(seed));
}

static void run_matrix(int quick, uint64_t seed)
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
                    if ((quick && (Bs[bi] > 3 || Ts[ti] > 2)) || (Bs[bi] == 64 && Ts[ti] != 1 && Ts[ti] != 4))
                        continue;
                    preset_case(m, 2, Bs[bi], Ts[ti], dts[di], &seed);
                }
        for (int ti = 0; ti < 2; ti++) {
            if (quick && ti)
                continue;
            preset_case(m, 1, 3, ti ? 4 : 1, LS_F32, &seed);
            preset_case(m, 8, 3, ti ? 4 : 1, LS_BF16, &seed);
        }
        if (!quick)
            preset_case(m, 2, 200, 1, LS_F32, &seed);
    }
    for (int kda = 0; kda < 2; kda++)
        for (int di = 0; di < 2; di++) {
            for (int wm = 0; wm < 2; wm++) {
                ccase c = {.kda = kda, .name = "custom", .H = 2, .HV = 6, .K = 64, .V = 48, .W = 3, .B = 5,
                           .T = quick ? 2 : 3, .sdt = dts[di], .wdt = kda ? LS_F32 : LS_BF16, .bias = 1,
                           .window_major = wm};
                run_case(&c, ls_test_rand_u64(&seed));
            }
            ccase d = {.kda = kda, .name = "custom", .H = 1, .HV = 3, .K = 100, .V = 36, .W = 2, .B = 4, .T = 1,
                       .sdt = dts[di], .wdt = LS_BF16, .bias = 0, .window_major = kda};
            run_case(&d, ls_test_rand_u64(&seed));
            ccase e = {.kda = kda, .name = "custom", .H = 1, .HV = 11, .K = 32, .V = 48, .W = 4, .B = 3,
                       .T = di ? 1 : 2, .sdt = dts[di], .wdt = LS_BF16, .bias = 1, .window_major = !kda};
            run_case(&e, ls_test_rand_u64(&seed));
            /* K = V = 128 with G = 3 (a cluster of 3 for bulk), W = 3, a bias, the other orientation */
            ccase f = {.kda = kda, .name = "custom", .H = 2, .HV = 6, .K = 128, .V = 128, .W = 3, .B = 5,
                       .T = di ? 1 : quick ? 2 : 3, .sdt = dts[di], .wdt = kda ? LS_F32 : LS_BF16, .bias = 1,
                       .window_major = !kda};
            run_case(&f, ls_test_rand_u64(&seed));
        }
}

/* Bad input: one line naming the field, nothing launched; K > 128 is not an error but
 * LS_OP_UNSUPPORTED (the state column lives in registers), cuda only. */
static void check_bad_input(const ls_runtime *be)
{
    uint16_t d16[64];
    float df[64];
    int32_t slot = 0;
    ls_conv_delta_params p = {.kda = 0};
    ls_conv_params *c = &p.conv;
    ls_delta_params *d = &p.delta;
    c->batch = d->batch = 1, c->tokens = d->tokens = 1, c->width = 4, c->silu = 1;
    c->weight_dtype = LS_BF16, c->state_dtype = LS_BF16;
    c->x = d16, c->weight = d16, c->state = d16, c->slot_idx = d->slot_idx = &slot;
    d->heads_qk = d->heads_v = 1, d->dk = 200, d->dv = 16, d->scale = 1.0f, d->state_dtype = LS_F32;
    c->channels = 2 * 200 + 16;
    c->x_stride_c = 1, c->x_stride_t = c->x_stride_b = c->channels;
    c->state_stride_c = 3, c->state_stride_w = 1, c->state_stride_slot = 3 * c->channels;
    d->a = d->b = d->o = d16, d->A_log = df, d->dt_bias = d16, d->state = df;
    d->state_stride_slot = 200 * 16;
    LS_CHECK_EQ_INT(gt_impl()->conv_delta(&p, gt_tuning(), NULL), LS_OP_UNSUPPORTED);
    c->y = d16;
    LS_CHECK(gt_impl()->conv_delta(&p, gt_tuning(), NULL) != 0);
    LS_CHECK(strstr(ls_last_error(), "conv.y") != NULL);
    (void)be;
}

int main(void)
{
    const ls_runtime *be = gt_init();
    if (be == ls_runtime_cuda())
        check_bad_input(be);
    const int quick = gt_quick();
    const uint64_t seed = 0xc0dede17a0002ull;
    static const char *const variants[] = {"conv_delta.variant=cluster", "conv_delta.variant=tiles",
                                           "conv_delta.variant=bulk", "conv_delta.variant=bulkp"};
    for (int vi = 0; vi < 4; vi++) {
        char spec[96];
        g_variant = vi;
        printf("== %s\n", variants[vi]);
        snprintf(spec, sizeof spec, "pdl=off,%s", variants[vi]);
        gt_set_tuning(spec);
        for (int mi = 0; mi < ls_model_count(); mi++) {
            const ls_model *m = ls_model_at(mi);
            if (m->mechanism == LS_MECH_GDN || m->mechanism == LS_MECH_KDA) {
                uint64_t s = seed + 1 + (uint64_t)mi;
                preset_case(m, 2, 3, 1, LS_F32, &s);
                preset_case(m, 2, 3, 4, vi >= V_BULK ? LS_F32 : LS_BF16, &s); /* bulk: bf16 decode only */
            }
        }
        gt_set_tuning(variants[vi]);
        run_matrix(quick, seed);
    }
    printf("worst error / tolerance: %.3g\n", g_worst);
    return ls_test_exit();
}
