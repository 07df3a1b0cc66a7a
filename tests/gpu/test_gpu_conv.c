/*
 * test_gpu_conv.c — the linstate impl's causal conv1d update against ls_ref_conv_update
 * (docs/ops.md).
 *
 * Matrix: every preset at tp 2, plus qwen3-next at tp 1 and kimi at tp 8 (channel-major state
 * for GDN/Mamba2 with and without bias, window-major state with fp32 weights for KDA), B in
 * {1, 3, 64}, T in {1, 2, 4, 8} (decode; verify with inter windows, with and without
 * disable_state_update), bf16 state (the vector path) and fp32 state (the scalar path); B = 257
 * for two presets; synthetic W = 2, 3, 4 in both orientations (and mixed state/inter
 * orientation); T = 3, 7, 9, 16, 17 (around conv_pair's and conv_quad's 8-token x chunk); a
 * strided case (x as [B, C, T], C not a multiple of 8) for the scalar fallback.
 * Every case: a pool of slots larger than the batch, random distinct slots, some rows -1, state/
 * inter/y poisoned whole (0xFF) identically on host and device. y within 2 bf16 ulps (+1e-5);
 * state and inter windows bit-exact (they are copies of inputs); untouched bytes stay poison.
 * The matrix runs once per tuning (the impl's knobs, gt_set_tuning): each forced conv.variant
 * (tile, vec8, scalar, vec2, pair, quad, wlat; a forced kernel that does not fit a shape falls
 * back, so vec2 runs the single-token bf16-weight cases, tile the channel-major ones and wlat
 * the window-major ones up to T = 8), vec8, vec2, pair, quad and wlat with the slot guess always
 * wrong (conv.speculate=miss: the reload path), vec8, pair and wlat with it off, the tile and
 * wlat kernels without their L2 prefetch, the default choice without PDL, then the default
 * tuning last. Decode also runs with inter windows (T = 1).
 * Every case gives the pool's slot count (p.slots), so the vector kernels guess the slot before
 * the PDL wait.
 * LS_GPU_TEST_QUICK=1: tp 8 presets, B <= 3, fewer T (for compute-sanitizer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

typedef struct conv_case {
    char name[96];
    int B, T, C, W;
    int bias;            /* conv has a bias */
    ls_dtype wdt, sdt;   /* weight/bias dtype, state/inter dtype */
    int state_wmaj;      /* state window-major ([W-1, C]) */
    int inter;           /* write inter windows */
    int inter_wmaj;
    int dsu;             /* disable_state_update */
    int silu;
    int x_cmajor;        /* x stored as [B, C, T] (strided view; forces the scalar path) */
} conv_case;


/* Point a params struct at one set of buffers (host or device side of the mirrors). */
static void conv_params(const conv_case *k, int slots, ls_conv_params *p, void *x, void *y, void *w, void *bias,
                        void *state, void *inter, void *idx)
{
    const int64_t N = k->W - 1;
    memset(p, 0, sizeof *p);
    p->batch = k->B;
    p->tokens = k->T;
    p->channels = k->C;
    p->width = k->W;
    p->silu = k->silu;
    p->disable_state_update = k->dsu;
    p->weight_dtype = k->wdt;
    p->state_dtype = k->sdt;
    p->x = (const uint16_t *)x;
    if (k->x_cmajor) {
        p->x_stride_b = (int64_t)k->C * k->T, p->x_stride_t = 1, p->x_stride_c = k->T;
    } else {
        p->x_stride_b = (int64_t)k->T * k->C, p->x_stride_t = k->C, p->x_stride_c = 1;
    }
    p->y = (uint16_t *)y;
    p->y_stride_b = (int64_t)k->T * k->C, p->y_stride_t = k->C, p->y_stride_c = 1;
    p->weight = w;
    p->bias = k->bias ? bias : NULL;
    p->state = state;
    p->state_stride_slot = k->C * N;
    p->state_stride_c = k->state_wmaj ? 1 : N;
    p->state_stride_w = k->state_wmaj ? k->C : 1;
    p->slot_idx = (const int32_t *)idx;
    if (k->inter) {
        p->inter = inter;
        p->inter_stride_slot = (int64_t)k->T * k->C * N;
        p->inter_stride_t = k->C * N;
        p->inter_stride_c = k->inter_wmaj ? 1 : N;
        p->inter_stride_w = k->inter_wmaj ? k->C : 1;
    }
    p->slots = slots; /* lets conv_vec8 guess the slot before the PDL wait */
}

/* One case end to end; returns nothing, failures are counted by LS_CHECK. */
static void run_case(const conv_case *k, uint64_t *seed)
{
    const int B = k->B, T = k->T, C = k->C, W = k->W, N = W - 1;
    const int slots = B + B / 2 + 3;
    const size_t ss = ls_dtype_size(k->sdt), ws = ls_dtype_size(k->wdt);
    const size_t slot_elems = (size_t)C * N;

    printf("case %s: B=%d T=%d C=%d W=%d bias=%d w=%s state=%s %s inter=%s dsu=%d silu=%d%s\n", k->name, B, T, C,
           W, k->bias, ls_dtype_name(k->wdt), ls_dtype_name(k->sdt), k->state_wmaj ? "window-major" : "channel-major",
           k->inter ? (k->inter_wmaj ? "window-major" : "channel-major") : "none", k->dsu, k->silu,
           k->x_cmajor ? " x=[B,C,T]" : "");

    gt_buf x = gt_buf_new((size_t)B * T * C * 2), y = gt_buf_new((size_t)B * T * C * 2);
    gt_buf w = gt_buf_new((size_t)C * W * ws), bias = gt_buf_new((size_t)C * ws);
    gt_buf st = gt_buf_new((size_t)slots * slot_elems * ss);
    gt_buf in = gt_buf_new(k->inter ? (size_t)slots * T * slot_elems * ss : 16);
    gt_buf idx = gt_buf_new((size_t)B * sizeof(int32_t));

    gt_fill_bf16(seed, (uint16_t *)x.h, (size_t)B * T * C, -1.0, 1.0);
    gt_fill(seed, w.h, k->wdt, (size_t)C * W, -1.0, 1.0);
    gt_fill(seed, bias.h, k->wdt, (size_t)C, -0.5, 0.5);
    int32_t *slot = (int32_t *)idx.h;
    gt_random_slots(seed, slot, B, slots, 0.2);
    gt_poison(&y);
    gt_poison(&in);
    memset(st.h, GT_POISON, st.bytes);
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0)
            gt_fill(seed, (char *)st.h + (size_t)slot[r] * slot_elems * ss, k->sdt, slot_elems, -1.0, 1.0);
    gt_upload(&x);
    gt_upload(&w);
    gt_upload(&bias);
    gt_upload(&st);
    gt_upload(&idx);

    ls_conv_params ph, pd;
    conv_params(k, slots, &ph, x.h, y.h, w.h, bias.h, st.h, in.h, idx.h);
    conv_params(k, slots, &pd, x.d, y.d, w.d, bias.d, st.d, in.d, idx.d);
    LS_REQUIRE(ls_ref_conv_update(&ph) == 0);
    int rc = gt_impl()->conv_update(&pd, gt_tuning(), NULL);
    if (rc != 0)
        fprintf(stderr, "  conv_update failed: %s\n", ls_last_error());
    LS_CHECK(rc == 0);
    gt_download(&y);
    gt_download(&st);
    gt_download(&in);

    gt_tol ty = {1e-5, 0.0, 0, 2.0}, exact = {0, 0, 0, 0};
    LS_CHECK(gt_compare("y", LS_BF16, y.got, y.h, (size_t)B * T * C, ty, NULL) == 0);
    LS_CHECK(gt_compare("state", k->sdt, st.got, st.h, (size_t)slots * slot_elems, exact, NULL) == 0);
    if (k->inter)
        LS_CHECK(gt_compare("inter", k->sdt, in.got, in.h, (size_t)slots * T * slot_elems, exact, NULL) == 0);

    gt_buf_free(&x), gt_buf_free(&y), gt_buf_free(&w), gt_buf_free(&bias);
    gt_buf_free(&st), gt_buf_free(&in), gt_buf_free(&idx);
}

/* A case from a preset shape (one conv tensor; KDA's three are identical in shape). */
static conv_case preset_case(const ls_shape *sh, int B, int T, ls_dtype sdt, int inter, int dsu)
{
    conv_case k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s/tp%d", sh->model->name, sh->tp);
    k.B = B, k.T = T, k.C = sh->conv_channels, k.W = sh->conv_width;
    k.bias = sh->model->conv_bias;
    k.wdt = sh->model->conv_weight_dtype;
    k.sdt = sdt;
    k.state_wmaj = k.inter_wmaj = sh->mechanism == LS_MECH_KDA;
    k.inter = inter, k.dsu = dsu, k.silu = 1;
    return k;
}

/* Decode and verify variants of one (preset, B): T=1 decode; T=2 verify (state update);
 * T=4 verify with and without disable_state_update; T=8 verify with dsu, and T=8 without inter. */
static void preset_sweep(const ls_shape *sh, int B, ls_dtype sdt, int quick, uint64_t *seed)
{
    conv_case k = preset_case(sh, B, 1, sdt, 0, 0);
    run_case(&k, seed);
    k = preset_case(sh, B, 4, sdt, 1, 1);
    run_case(&k, seed);
    if (quick)
        return;
    k = preset_case(sh, B, 2, sdt, 1, 0);
    run_case(&k, seed);
    k = preset_case(sh, B, 4, sdt, 1, 0);
    run_case(&k, seed);
    k = preset_case(sh, B, 8, sdt, 1, 1);
    run_case(&k, seed);
    k = preset_case(sh, B, 8, sdt, 0, 0);
    run_case(&k, seed);
}

static conv_case synth_case(const char *name, int B, int T, int C, int W, int bias, ls_dtype wdt, ls_dtype sdt,
                            int state_wmaj, int inter, int inter_wmaj, int dsu, int silu, int x_cmajor)
{
    conv_case k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s", name);
    k.B = B, k.T = T, k.C = C, k.W = W, k.bias = bias, k.wdt = wdt, k.sdt = sdt;
    k.state_wmaj = state_wmaj, k.inter = inter, k.inter_wmaj = inter_wmaj, k.dsu = dsu, k.silu = silu;
    k.x_cmajor = x_cmajor;
    return k;
}

/* The launcher rejects bad parameters with a message naming the field. */
static void bad_params(void)
{
    ls_conv_params p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.tokens = 1, p.channels = 8, p.width = 5;
    int rc = gt_impl()->conv_update(&p, gt_tuning(), NULL);
    LS_CHECK(rc != 0);
    LS_CHECK(strstr(ls_last_error(), "width") != NULL);
    printf("bad width rejected: %s\n", ls_last_error());
}

/* The whole matrix once (with the kernel variant currently selected). */
static void run_matrix(int quick, uint64_t seed)
{
    /* presets: every model at tp 2 (quick: tp 8), then tp 1 and tp 8 once each */
    for (int i = 0; i < ls_model_count(); i++) {
        ls_shape sh;
        LS_REQUIRE(ls_shape_from_model(ls_model_at(i), quick ? 8 : 2, &sh) == 0);
        int bs[3] = {1, 3, 64};
        for (int b = 0; b < (quick ? 2 : 3); b++)
            preset_sweep(&sh, bs[b], LS_BF16, quick, &seed);
        /* fp32 conv state (allowed by the contract; the scalar path) */
        conv_case k = preset_case(&sh, 3, 1, LS_F32, 0, 0);
        run_case(&k, &seed);
        k = preset_case(&sh, 3, 4, LS_F32, 1, 0);
        run_case(&k, &seed);
    }
    if (!quick) {
        ls_shape sh;
        LS_REQUIRE(ls_shape_from_model(ls_model_find("qwen3-next-80b-a3b"), 1, &sh) == 0);
        preset_sweep(&sh, 3, LS_BF16, 0, &seed);
        LS_REQUIRE(ls_shape_from_model(ls_model_find("kimi-linear-48b-a3b"), 8, &sh) == 0);
        preset_sweep(&sh, 3, LS_BF16, 0, &seed);
        /* large batch: one GDN and one Mamba2 (bias) preset, bf16 state */
        LS_REQUIRE(ls_shape_from_model(ls_model_find("qwen3-next-80b-a3b"), 2, &sh) == 0);
        conv_case k = preset_case(&sh, 257, 1, LS_BF16, 0, 0);
        run_case(&k, &seed);
        k = preset_case(&sh, 257, 4, LS_BF16, 1, 0);
        run_case(&k, &seed);
        LS_REQUIRE(ls_shape_from_model(ls_model_find("nemotron-h-8b"), 2, &sh) == 0);
        k = preset_case(&sh, 257, 1, LS_BF16, 0, 0);
        run_case(&k, &seed);
    }

    /* synthetic: every width, both orientations, both weight dtypes, mixed inter orientation */
    for (int W = 2; W <= 4; W++)
        for (int wm = 0; wm < 2; wm++) {
            char name[64];
            snprintf(name, sizeof name, "synth/W%d/%s", W, wm ? "wmaj" : "cmaj");
            conv_case k = synth_case(name, 3, 1, 256, W, 1, LS_BF16, LS_BF16, wm, 0, 0, 0, 1, 0);
            run_case(&k, &seed);
            k = synth_case(name, 5, 4, 256, W, 1, LS_F32, LS_BF16, wm, 1, !wm, 0, W != 3, 0);
            run_case(&k, &seed);
            k = synth_case(name, 3, 2, 256, W, 0, LS_F32, LS_F32, wm, 1, wm, 1, 1, 0);
            run_case(&k, &seed);
            /* decode without the state write, 33 channel groups */
            k = synth_case(name, 4, 1, 264, W, 0, LS_F32, LS_BF16, wm, 0, 0, 1, 0, 0);
            run_case(&k, &seed);
        }
    /* token counts around conv_pair's / conv_quad's 8-token x chunk (3, 7: one partial chunk;
     * 9, 16, 17: a second chunk), both orientations, both weight dtypes, mixed inter
     * orientation, one with disable_state_update and one without inter windows; 264 channels
     * (a partial last block) */
    static const int tk[] = {3, 7, 9, 16, 17};
    for (int i = 0; i < 5; i++)
        for (int wm = 0; wm < 2; wm++) {
            const ls_dtype wdt = (i & 1) ? LS_F32 : LS_BF16;
            conv_case k = synth_case("synth/tokens", 2, tk[i], 264, 4, i & 1, wdt, LS_BF16, wm, i != 4,
                                     (i & 1) ? !wm : wm, i == 2, 1, 0);
            run_case(&k, &seed);
        }
    /* single-token decode with bf16 weights and no state write over 264 channels (conv_vec2's
     * partial last block, conv_vec8's 33 groups) */
    conv_case kd = synth_case("synth/decode-dsu-bf16w", 5, 1, 264, 4, 1, LS_BF16, LS_BF16, 0, 0, 0, 1, 1, 0);
    run_case(&kd, &seed);
    /* a partial last channel tile (264 = 256 + 8 channels) for the tile kernel */
    conv_case kp = synth_case("synth/partial-tile", 5, 4, 264, 4, 1, LS_BF16, LS_BF16, 0, 1, 0, 0, 1, 0);
    run_case(&kp, &seed);
    kp = synth_case("synth/partial-tile", 6, 1, 520, 3, 0, LS_F32, LS_BF16, 0, 0, 0, 0, 1, 0);
    run_case(&kp, &seed);
    /* decode with inter windows (T = 1: the new window at inter[s, 0]), with and without the
     * state write, partial last tiles */
    kp = synth_case("synth/decode-inter", 5, 1, 520, 4, 1, LS_BF16, LS_BF16, 0, 1, 0, 0, 1, 0);
    run_case(&kp, &seed);
    kp = synth_case("synth/decode-inter-dsu", 4, 1, 264, 3, 0, LS_F32, LS_BF16, 0, 1, 0, 1, 1, 0);
    run_case(&kp, &seed);
    /* scalar fallback: C % 8 != 0, x as a [B, C, T] view */
    conv_case k = synth_case("synth/odd-C", 3, 4, 100, 4, 1, LS_BF16, LS_BF16, 0, 1, 0, 0, 1, 0);
    run_case(&k, &seed);
    k = synth_case("synth/x-transposed", 5, 4, 256, 4, 0, LS_BF16, LS_BF16, 0, 1, 0, 0, 1, 1);
    run_case(&k, &seed);
    k = synth_case("synth/odd-C-wmaj", 3, 1, 36, 3, 1, LS_F32, LS_BF16, 1, 0, 0, 0, 0, 0);
    run_case(&k, &seed);
}

int main(void)
{
    gt_init();
    bad_params();
    /* every kernel the launcher has, forced (scalar = conv_scalar even where the vector path
     * applies), the slot guess always wrong (the reload path) and off, the prefetch of the tile
     * kernel off and of wlat on at every batch (conv.prefetch=auto drops it above B = 32), PDL
     * off, then the default choice last */
    static const char *const tunings[] = {
        "conv.variant=tile",   "conv.variant=tile,conv.prefetch=off", "conv.variant=vec8",
        "conv.variant=vec8,conv.speculate=miss", "conv.variant=vec8,conv.speculate=off", "conv.variant=scalar",
        "conv.variant=vec2",   "conv.variant=vec2,conv.speculate=miss", "conv.variant=pair",
        "conv.variant=pair,conv.speculate=miss", "conv.variant=pair,conv.speculate=off", "conv.variant=quad",
        "conv.variant=quad,conv.speculate=miss", "conv.variant=wlat", "conv.variant=wlat,conv.prefetch=on",
        "conv.variant=wlat,conv.speculate=miss",
        "conv.variant=wlat,conv.speculate=off,conv.prefetch=off", "pdl=off", "",
    };
    const int nt = (int)(sizeof tunings / sizeof tunings[0]);
    for (int v = 0; v < nt; v++) {
        gt_set_tuning(tunings[v]);
        run_matrix(gt_quick(), 0x5eedc0471ull + (uint64_t)v);
    }
    return ls_test_exit();
}
