/*
 * test_gpu_peer_sglang_ops.c — the sglang peer impl's conv_update and ssu (SGLang 0.5.23's Triton
 * causal_conv1d_update and selective_state_update, AOT-compiled) against the host reference,
 * labels gpu;peers. Exit 77 without a device, or when the peer was not built.
 *
 * conv_update: qwen3-next (channel-major, bf16 weights), kimi-linear per q/k/v buffer and as
 * SGLang's one concatenated mixed_qkv tensor (3C channels; window-major, fp32 weights),
 * nemotron-h-8b and nemotron-nano-9b-v2 (channel-major, bias) at tp 1, 2, 4, 8, each in BOTH
 * orientations; B in {1, 3, 65}; T = 1 (decode) and every draft count T = 2..8 (verify, intermediate windows, the state shifted).
 * ~1/4 padding rows (-1) when B >= 3: y, state and windows are poisoned and compared whole, so a
 * kernel that wrote y of a padding row fails here (docs/ops.md: y keeps its content). State and
 * windows are copies of inputs: bit-exact. y: SGLang multiplies bf16 inputs by bf16 weights in
 * bf16 (each product rounded before the fp32 sum), so bf16-weight cases get an absolute 8e-3
 * (4 products of |x|,|w| <= 1, 2^-9 each) on top of 2 ulps; fp32 weights (Kimi) 2 ulps + 1e-5.
 * The refusals: disable_state_update, T = 9, T > 1 without windows, x as [B, C, T], W = 3 give
 * LS_OP_UNSUPPORTED (skipped:unsupported), not a failure.
 *
 * ssu: nemotron-h-8b (with and without z), nemotron-nano-9b-v2, falcon-h1-7b at tp 1, 2, 4, 8,
 * fp32 and bf16 state, B in {1, 3, 65} (65: T = 1, and T = 4 at tp 2 only, for both ops), T = 1
 * decode (state written) and T = 2..8 verify
 * (disable_state_update, inter per step); padding rows compute y from a zero state and store no
 * state. Tolerances as tests/gpu/test_gpu_ssu.c.
 * LS_GPU_TEST_QUICK=1: tp 2 only, B <= 3, T <= 3.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

static const ls_impl *g_im;
static int g_cases;

/* ----------------------------------------------------------------------------- conv */

typedef struct ccase {
    const char *name;
    int tp, B, T, C, bias, wm;
    ls_dtype wdt;
} ccase;

static void conv_params(const ccase *k, int slots, ls_conv_params *p, void *x, void *y, void *w, void *bias,
                        void *st, void *in, void *idx)
{
    const int64_t N = 3, C = k->C, T = k->T;
    memset(p, 0, sizeof *p);
    p->batch = k->B, p->tokens = k->T, p->channels = k->C, p->width = 4, p->silu = 1;
    p->weight_dtype = k->wdt, p->state_dtype = LS_BF16;
    p->x = x, p->y = y, p->weight = w, p->bias = k->bias ? bias : NULL, p->state = st, p->slot_idx = idx;
    p->x_stride_b = p->y_stride_b = T * C, p->x_stride_t = p->y_stride_t = C, p->x_stride_c = p->y_stride_c = 1;
    p->state_stride_slot = C * N;
    p->state_stride_c = k->wm ? 1 : N;
    p->state_stride_w = k->wm ? C : 1;
    if (T > 1) {
        p->inter = in;
        p->inter_stride_slot = T * C * N, p->inter_stride_t = C * N;
        p->inter_stride_c = p->state_stride_c, p->inter_stride_w = p->state_stride_w;
    }
    p->slots = slots;
}

static void conv_case_run(const ccase *k, uint64_t seed)
{
    const int B = k->B, T = k->T, C = k->C, slots = B + 3 + B / 8;
    const size_t ws = ls_dtype_size(k->wdt), item = (size_t)C * 3, nx = (size_t)B * T * C;
    printf("conv %s tp%d B=%d T=%d C=%d %s w=%s bias=%d\n", k->name, k->tp, B, T, C,
           k->wm ? "window-major" : "channel-major", ls_dtype_name(k->wdt), k->bias);
    gt_buf x = gt_buf_new(nx * 2), y = gt_buf_new(nx * 2), w = gt_buf_new((size_t)C * 4 * ws);
    gt_buf bias = gt_buf_new((size_t)C * ws), st = gt_buf_new((size_t)slots * item * 2);
    gt_buf in = gt_buf_new(T > 1 ? (size_t)slots * T * item * 2 : 16), idx = gt_buf_new((size_t)B * 4);
    gt_fill_bf16(&seed, x.h, nx, -1, 1);
    gt_fill(&seed, w.h, k->wdt, (size_t)C * 4, -1, 1);
    gt_fill(&seed, bias.h, k->wdt, (size_t)C, -0.5, 0.5);
    gt_random_slots(&seed, idx.h, B, slots, B >= 3 ? 0.25 : 0.0);
    gt_poison(&y);
    gt_poison(&st);
    gt_poison(&in);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * item * 2;
            gt_fill(&seed, (char *)st.h + off, LS_BF16, item, -1, 1);
            gt_upload_range(&st, off, item * 2);
        }
    gt_buf *inputs[] = {&x, &w, &bias, &idx};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        gt_upload(inputs[i]);
    ls_conv_params ph, pd;
    conv_params(k, slots, &ph, x.h, y.h, w.h, bias.h, st.h, in.h, idx.h);
    conv_params(k, slots, &pd, x.d, y.d, w.d, bias.d, st.d, in.d, idx.d);
    LS_REQUIRE(ls_ref_conv_update(&ph) == 0);
    ls_tuning t;
    ls_tuning_default(g_im, &t);
    int rc = g_im->conv_update(&pd, &t, NULL);
    if (rc)
        fprintf(stderr, "  sglang conv_update rc %d: %s\n", rc, ls_impl_error(g_im));
    LS_CHECK_EQ_INT(rc, 0);
    gt_init()->sync(NULL);
    gt_download(&y);
    gt_download(&st);
    if (T > 1)
        gt_download(&in);
    double worst = 0;
    const gt_tol ty = {.atol = k->wdt == LS_BF16 ? 8e-3 : 1e-5, .rtol = 0, .group = 0, .ulps = 2};
    const gt_tol exact = {0, 0, 0, 0};
    LS_CHECK(gt_compare_buf("y", LS_BF16, &y, nx, ty, &worst) == 0);
    LS_CHECK(gt_compare_buf("state", LS_BF16, &st, (size_t)slots * item, exact, &worst) == 0);
    if (T > 1)
        LS_CHECK(gt_compare_buf("inter", LS_BF16, &in, (size_t)slots * T * item, exact, &worst) == 0);
    g_cases++;
    gt_buf *all[] = {&x, &y, &w, &bias, &st, &in, &idx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gt_buf_free(all[i]);
}

/* Calls the impl must refuse with LS_OP_UNSUPPORTED (nothing launched). */
static void conv_refusals(void)
{
    static const int32_t idx[1] = {0};
    ccase k = {"refusal", 2, 1, 4, 4096, 0, 0, LS_BF16};
    ls_conv_params p;
    /* fake, aligned addresses: a refused call must not touch them */
    void *d = (void *)(uintptr_t)0x1000;
    conv_params(&k, 4, &p, d, d, d, d, d, d, (void *)idx);
    ls_tuning t;
    ls_tuning_default(g_im, &t);
    ls_conv_params q = p;
    q.disable_state_update = 1;
    LS_CHECK_EQ_INT(g_im->conv_update(&q, &t, NULL), LS_OP_UNSUPPORTED);
    printf("refused (dsu): %s\n", ls_impl_error(g_im));
    q = p;
    q.tokens = 9, q.x_stride_b = q.y_stride_b = 9 * 4096, q.inter_stride_slot = 9LL * 4096 * 3;
    LS_CHECK_EQ_INT(g_im->conv_update(&q, &t, NULL), LS_OP_UNSUPPORTED);
    q = p;
    q.inter = NULL;
    LS_CHECK_EQ_INT(g_im->conv_update(&q, &t, NULL), LS_OP_UNSUPPORTED);
    q = p;
    q.x_stride_t = 1, q.x_stride_c = 4;
    LS_CHECK_EQ_INT(g_im->conv_update(&q, &t, NULL), LS_OP_UNSUPPORTED);
    q = p;
    q.width = 3, q.state_stride_c = 2, q.state_stride_slot = 8192, q.inter = NULL, q.tokens = 1;
    LS_CHECK_EQ_INT(g_im->conv_update(&q, &t, NULL), LS_OP_UNSUPPORTED);
    q = p;
    q.channels = 4000, q.x_stride_b = q.y_stride_b = 4 * 4000, q.x_stride_t = q.y_stride_t = 4000;
    q.state_stride_slot = 12000, q.inter_stride_slot = 48000, q.inter_stride_t = 12000;
    LS_CHECK_EQ_INT(g_im->conv_update(&q, &t, NULL), LS_OP_UNSUPPORTED); /* not a preset shape */
    printf("refused (shape): %s\n", ls_impl_error(g_im));
    char buf[256];
    LS_CHECK(g_im->explain && g_im->explain(LS_OP_CONV_UPDATE, &p, &t, NULL, buf, sizeof buf) == 0);
    printf("explain: %s\n", buf);
    LS_CHECK(strstr(buf, "_causal_conv1d_update_kernel[C4096_T4_W4_CM_wbf16_B0] grid 1x16x1") != NULL);
}

/* ----------------------------------------------------------------------------- ssu */

typedef struct scase {
    const char *name;
    int tp, nh, hd, ds, ng, B, T, gate;
    ls_dtype sdt;
} scase;

static void ssu_case_run(const scase *c, uint64_t seed)
{
    const int B = c->B, T = c->T, nh = c->nh, hd = c->hd, ds = c->ds, ng = c->ng, inter = T > 1;
    const int slots = B + 3 + B / 8;
    const size_t es = ls_dtype_size(c->sdt), head = (size_t)hd * ds, sstride = (size_t)nh * head;
    const size_t istride = (size_t)T * sstride;
    const size_t nx = (size_t)B * T * nh * hd, ndt = (size_t)B * T * nh, nbc = (size_t)B * T * ng * ds;
    printf("ssu %s tp%d nh=%d hd=%d ds=%d ng=%d B=%d T=%d state=%s%s\n", c->name, c->tp, nh, hd, ds, ng, B, T,
           ls_dtype_name(c->sdt), c->gate ? " z" : "");
    gt_buf x = gt_buf_new(nx * 2), z = gt_buf_new(c->gate ? nx * 2 : 16), y = gt_buf_new(nx * 2);
    gt_buf dt = gt_buf_new(ndt * 2), Bm = gt_buf_new(nbc * 2), Cm = gt_buf_new(nbc * 2);
    gt_buf A = gt_buf_new((size_t)nh * 4), dtb = gt_buf_new((size_t)nh * 2), D = gt_buf_new((size_t)nh * 2);
    gt_buf st = gt_buf_new((size_t)slots * sstride * es);
    gt_buf in = gt_buf_new(inter ? (size_t)slots * istride * es : 16), idx = gt_buf_new((size_t)B * 4);
    gt_fill_bf16(&seed, x.h, nx, -1, 1);
    if (c->gate)
        gt_fill_bf16(&seed, z.h, nx, -2, 2);
    gt_fill_bf16(&seed, dt.h, ndt, -3, 1);
    gt_fill_bf16(&seed, Bm.h, nbc, -1, 1);
    gt_fill_bf16(&seed, Cm.h, nbc, -1, 1);
    float *Ah = (float *)A.h;
    for (int h = 0; h < nh; h++)
        Ah[h] = (float)-exp(ls_test_uniform(&seed, -1, 1));
    gt_fill_bf16(&seed, dtb.h, nh, -1, 1);
    gt_fill_bf16(&seed, D.h, nh, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, B >= 3 ? 0.25 : 0.0);
    gt_buf *inputs[] = {&x, &z, &dt, &Bm, &Cm, &A, &dtb, &D, &idx};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        gt_upload(inputs[i]);
    gt_poison(&y);
    gt_poison(&st);
    gt_poison(&in);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * sstride * es;
            gt_fill(&seed, (char *)st.h + off, c->sdt, sstride, -1, 1);
            gt_upload_range(&st, off, sstride * es);
        }
    ls_ssu_params p = {.batch = B, .tokens = T, .nheads = nh, .head_dim = hd, .dstate = ds, .ngroups = ng,
                       .disable_state_update = inter, .state_dtype = c->sdt,
                       .state_stride_slot = (int64_t)sstride, .inter_stride_slot = inter ? (int64_t)istride : 0,
                       .slots = slots};
    ls_ssu_params ph = p, pd = p;
    ph.x = x.h, ph.dt = dt.h, ph.Bm = Bm.h, ph.Cm = Cm.h, ph.z = c->gate ? z.h : NULL, ph.A = A.h;
    ph.dt_bias = dtb.h, ph.D = D.h, ph.y = y.h, ph.state = st.h, ph.slot_idx = idx.h;
    ph.inter = inter ? in.h : NULL;
    pd.x = x.d, pd.dt = dt.d, pd.Bm = Bm.d, pd.Cm = Cm.d, pd.z = c->gate ? z.d : NULL, pd.A = A.d;
    pd.dt_bias = dtb.d, pd.D = D.d, pd.y = y.d, pd.state = st.d, pd.slot_idx = idx.d;
    pd.inter = inter ? in.d : NULL;
    LS_REQUIRE(ls_ref_ssu(&ph) == 0);
    ls_tuning t;
    ls_tuning_default(g_im, &t);
    int rc = g_im->ssu(&pd, &t, NULL);
    if (rc)
        fprintf(stderr, "  sglang ssu rc %d: %s\n", rc, ls_impl_error(g_im));
    LS_CHECK_EQ_INT(rc, 0);
    gt_init()->sync(NULL);
    gt_download(&y);
    gt_download(&st);
    if (inter)
        gt_download(&in);
    double worst = 0;
    const gt_tol ty = {.atol = 0, .rtol = 1e-4, .group = (size_t)nh * hd, .ulps = 2};
    const gt_tol ts = {.atol = 0, .rtol = 1e-5, .group = head, .ulps = c->sdt == LS_BF16 ? 2 : 0};
    LS_CHECK(gt_compare_buf("y", LS_BF16, &y, nx, ty, &worst) == 0);
    LS_CHECK(gt_compare_buf("state", c->sdt, &st, (size_t)slots * sstride, ts, &worst) == 0);
    if (inter)
        LS_CHECK(gt_compare_buf("inter", c->sdt, &in, (size_t)slots * istride, ts, &worst) == 0);
    g_cases++;
    gt_buf *all[] = {&x, &z, &y, &dt, &Bm, &Cm, &A, &dtb, &D, &st, &in, &idx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gt_buf_free(all[i]);
}

static void ssu_refusals(void)
{
    static const int32_t idx[1] = {0};
    void *d = (void *)(uintptr_t)0x1000;
    ls_ssu_params p = {.batch = 1, .tokens = 4, .nheads = 64, .head_dim = 64, .dstate = 128, .ngroups = 4,
                       .disable_state_update = 1, .state_dtype = LS_F32, .state_stride_slot = 64 * 64 * 128};
    p.x = d, p.dt = d, p.Bm = d, p.Cm = d, p.A = d, p.dt_bias = d, p.D = d, p.y = d, p.state = d, p.slot_idx = idx;
    ls_tuning t;
    ls_tuning_default(g_im, &t);
    LS_CHECK_EQ_INT(g_im->ssu(&p, &t, NULL), LS_OP_UNSUPPORTED); /* dsu without inter */
    p.disable_state_update = 0;
    p.nheads = 48; /* not a preset shape */
    LS_CHECK_EQ_INT(g_im->ssu(&p, &t, NULL), LS_OP_UNSUPPORTED);
    printf("refused (shape): %s\n", ls_impl_error(g_im));
    p.nheads = 64;
    char buf[256];
    LS_CHECK(g_im->explain(LS_OP_SSU, &p, &t, NULL, buf, sizeof buf) == 0);
    printf("explain: %s\n", buf);
    LS_CHECK(strstr(buf, "_selective_scan_update_kernel[NH64_HD64_DS128_NG4_Sf32_dec_Z0] grid 8x1x64") != NULL);
}

int main(void)
{
    gt_init();
    g_im = ls_impl_get("sglang");
    if (!g_im) {
        printf("SKIP: sglang peer not built: %s\n", ls_last_error());
        return 77;
    }
    LS_REQUIRE(g_im->conv_update && g_im->ssu);
    const int quick = gt_quick();
    static const int tps[] = {1, 2, 4, 8}, Bs[] = {1, 3, 65};
    uint64_t seed = 0x5c0471ULL;
    conv_refusals();
    ssu_refusals();
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        int is_mamba = m->mechanism == LS_MECH_MAMBA2;
        for (int ti = 0; ti < 4; ti++) {
            if (quick && tps[ti] != 2)
                continue;
            ls_shape s;
            if (ls_shape_from_model(m, tps[ti], &s) != 0)
                continue;
            for (int bi = 0; bi < 3; bi++)
                for (int T = 1; T <= 8; T++) {
                    if (quick && (Bs[bi] > 3 || T > 3))
                        continue;
                    if (Bs[bi] > 3 && T != 1 && (T != 4 || tps[ti] != 2))
                        continue; /* host time of the reference: B = 65 decodes, and verifies at tp 2 */
                    int conv_model = strcmp(m->name, "falcon-h1-7b") != 0; /* its decode conv is CUDA JIT */
                    if (conv_model) {
                        /* KDA: each q/k/v buffer, and SGLang's concatenated mixed_qkv (3C) */
                        for (int cat = 0; cat <= (m->mechanism == LS_MECH_KDA); cat++)
                            for (int wm = 0; wm < 2; wm++) {
                                ccase k = {m->name, tps[ti], Bs[bi], T, s.conv_channels * (cat ? 3 : 1),
                                           m->conv_bias, wm, m->conv_weight_dtype};
                                conv_case_run(&k, ls_test_rand_u64(&seed));
                            }
                    }
                    if (is_mamba)
                        for (int di = 0; di < 2; di++)
                            for (int gate = 0; gate <= (strcmp(m->name, "nemotron-h-8b") == 0); gate++) {
                                scase c = {m->name, tps[ti], s.nheads, s.head_dim, s.dstate, s.ngroups,
                                           Bs[bi], T, gate, di ? LS_BF16 : LS_F32};
                                ssu_case_run(&c, ls_test_rand_u64(&seed));
                            }
                }
        }
    }
    printf("%d cases\n", g_cases);
    return ls_test_exit();
}
