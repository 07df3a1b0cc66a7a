/*
 * test_choose.c — the kernel choice of the "linstate" impl (kernels/cuda/choose.c): which kernel,
 * grid, block and flags each op's plan names at representative shapes, under the default tuning
 * and under forced knob values; the knob table parsed with ls_tuning_parse; the one-line
 * description. Pure host code: runs in builds without CUDA.
 *
 * Device numbers are those of the H200 (132 SMs) unless a case says otherwise. Pointers are fake
 * addresses: the choice only tests their alignment.
 */
#include <string.h>

#include "cuda/choose.h"
#include "ls_kernels.h"
#include "ls_test.h"

#define A16 ((void *)(uintptr_t)0x100000) /* a 16-byte aligned fake address */

static const ls_impl *impl(void)
{
    static ls_impl im;
    im.abi_version = LS_IMPL_ABI;
    im.name = "linstate";
    im.runtime = "cuda";
    im.knobs = ls_linstate_knobs;
    im.n_knobs = LS_KNOB_COUNT;
    return &im;
}

/* The default tuning with `spec` applied (asserts that it parses). */
static ls_tuning tune(const char *spec)
{
    ls_tuning t;
    ls_tuning_default(impl(), &t);
    int rc = ls_tuning_parse(impl(), spec, &t);
    if (rc)
        fprintf(stderr, "tuning '%s': %s\n", spec, ls_last_error());
    LS_CHECK_EQ_INT(rc, 0);
    return t;
}

static const ls_choose_dev H200 = {132, 0};

/* ------------------------------------------------------------------ conv */

/* Qwen3-Next-like conv: C = 4096, W = 4, channel-major bf16 state, bf16 weights, slots given. */
static ls_conv_params conv(int B, int T)
{
    ls_conv_params p;
    memset(&p, 0, sizeof p);
    p.batch = B, p.tokens = T, p.channels = 4096, p.width = 4, p.silu = 1;
    p.weight_dtype = LS_BF16, p.state_dtype = LS_BF16;
    p.x = A16, p.y = A16, p.weight = A16, p.bias = A16, p.state = A16, p.slot_idx = A16;
    p.x_stride_b = (int64_t)T * 4096, p.x_stride_t = 4096, p.x_stride_c = 1;
    p.y_stride_b = (int64_t)T * 4096, p.y_stride_t = 4096, p.y_stride_c = 1;
    p.state_stride_slot = 4096 * 3, p.state_stride_c = 3, p.state_stride_w = 1;
    if (T > 1) {
        p.inter = A16;
        p.inter_stride_slot = (int64_t)T * 4096 * 3, p.inter_stride_t = 4096 * 3, p.inter_stride_c = 3,
        p.inter_stride_w = 1;
    }
    p.slots = 1024;
    return p;
}

/* The plan of op for params p under tuning spec on the H200 (ls_choose, which the impl calls). */
static ls_plan plan_op(ls_op op, const void *p, const char *spec)
{
    ls_tuning t = tune(spec);
    ls_plan pl;
    LS_CHECK_EQ_INT(ls_choose(op, p, &t, &H200, &pl), 0);
    return pl;
}

static ls_plan plan_conv(const ls_conv_params *p, const char *spec) { return plan_op(LS_OP_CONV_UPDATE, p, spec); }

/* The auto choice for a window-major state that conv_wlat serves: conv_wlat up to the batch
 * limits of choose.h (0 today: never), else pair below B = 64, quad from it. */
static ls_kernel_id wmaj_auto(int B, int T)
{
    if (B <= (T == 1 ? LS_CONV_WLAT_MAX_B_DECODE : LS_CONV_WLAT_MAX_B_VERIFY))
        return LS_K_CONV_WLAT;
    return B < 64 ? LS_K_CONV_PAIR : LS_K_CONV_QUAD;
}

static void test_conv(void)
{
    ls_conv_params p = conv(1, 1);
    ls_plan pl = plan_conv(&p, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_VEC2); /* small-batch decode, bf16 weights */
    LS_CHECK_EQ_INT(pl.grid_x, 16);             /* 2048 pairs / 128 threads */
    LS_CHECK_EQ_INT(pl.grid_y, 1);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.groups, 2048);
    LS_CHECK_EQ_INT(pl.pdl, 1);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON);

    p = conv(16, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_VEC2);
    p = conv(17, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_VEC8);
    p = conv(32, 1);
    pl = plan_conv(&p, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_VEC8);
    LS_CHECK_EQ_INT(pl.grid_x, 4); /* 512 groups / 128 */
    LS_CHECK_EQ_INT(pl.grid_y, 32);
    LS_CHECK_EQ_INT(pl.groups, 512);
    p = conv(63, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_VEC8);
    p = conv(64, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_TILE);
    p = conv(512, 1);
    pl = plan_conv(&p, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_TILE);
    LS_CHECK_EQ_INT(pl.groups, 16);      /* 4096 / 256 */
    LS_CHECK_EQ_INT(pl.grid_x, 2048);    /* 512 x 16 tiles, 4 per CTA */
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.prefetch, 1);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_OFF); /* the tile kernel does not guess */
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.prefetch=off").prefetch, 0);

    /* verify takes the tile kernel at every batch */
    /* channel-major verify: pair up to B = 16 (and T >= 8 up to B = 128), tile above */
    p = conv(1, 4);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_PAIR);
    p = conv(16, 2);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_PAIR);
    p = conv(17, 4);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_TILE);
    p = conv(128, 8);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_PAIR);
    p = conv(129, 8);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_TILE);
    p = conv(512, 4);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_TILE);

    /* fp32 weights (Kimi): no conv_vec2 */
    p = conv(1, 1);
    p.weight_dtype = LS_F32;
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_VEC8);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=vec2").kernel, LS_K_CONV_VEC8);

    /* window-major state (KDA): pair below B = 64, quad from it (conv_wlat below its limits);
     * tile (channel-major only) forced falls back to vec8 */
    p = conv(512, 1);
    p.state_stride_c = 1, p.state_stride_w = 4096;
    pl = plan_conv(&p, "");
    LS_CHECK_EQ_INT(pl.kernel, wmaj_auto(512, 1));
    LS_CHECK_EQ_INT(pl.state_wmaj, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=tile").kernel, LS_K_CONV_VEC8);
    p.batch = 64;
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, wmaj_auto(64, 1));
    p.batch = 63;
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, wmaj_auto(63, 1));

    /* forced variants */
    p = conv(512, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=vec2").kernel, LS_K_CONV_VEC2);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=vec8").kernel, LS_K_CONV_VEC8);
    p = conv(1, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=tile").kernel, LS_K_CONV_TILE);
    pl = plan_conv(&p, "conv.variant=scalar");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_SCALAR);
    LS_CHECK_EQ_INT(pl.grid_x, 16); /* 4096 channels / 256 */
    LS_CHECK_EQ_INT(pl.block, 256);
    p = conv(1, 4);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=vec2").kernel, LS_K_CONV_VEC8); /* vec2: decode only */

    /* conv_pair: forced, it serves decode and verify, either orientation, either weight dtype, on
     * the (channel pairs / block, rows) grid with the slot guess */
    p = conv(1, 4);
    pl = plan_conv(&p, "conv.variant=pair");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_PAIR);
    LS_CHECK_EQ_INT(pl.groups, 2048); /* 4096 channels / 2 */
    LS_CHECK_EQ_INT(pl.grid_x, 16);
    LS_CHECK_EQ_INT(pl.grid_y, 1);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON);
    LS_CHECK_EQ_INT(pl.state_wmaj, 0);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=pair,conv.speculate=miss").spec, LS_SPEC_MISS);
    p = conv(8, 1);
    p.weight_dtype = LS_F32;
    p.state_stride_c = 1, p.state_stride_w = 4096; /* KDA: window-major, fp32 weights */
    pl = plan_conv(&p, "conv.variant=pair");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_PAIR);
    LS_CHECK_EQ_INT(pl.state_wmaj, 1);
    LS_CHECK_EQ_INT(pl.grid_y, 8);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, wmaj_auto(8, 1));
    p = conv(100000, 2); /* rows past 65535 loop in the kernel */
    pl = plan_conv(&p, "conv.variant=pair");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_PAIR);
    LS_CHECK_EQ_INT(pl.grid_y, 65535);
    p = conv(1, 1);
    p.state_dtype = LS_F32; /* not the vector path: scalar */
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=pair").kernel, LS_K_CONV_SCALAR);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=quad").kernel, LS_K_CONV_SCALAR);
    /* conv_quad: 4 channels per thread on the same grid shape */
    p = conv(3, 8);
    p.state_stride_c = 1, p.state_stride_w = 4096;
    pl = plan_conv(&p, "conv.variant=quad,conv.speculate=off");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_QUAD);
    LS_CHECK_EQ_INT(pl.groups, 1024); /* 4096 channels / 4 */
    LS_CHECK_EQ_INT(pl.grid_x, 8);
    LS_CHECK_EQ_INT(pl.grid_y, 3);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_OFF);
    LS_CHECK_EQ_INT(pl.state_wmaj, 1);
    LS_CHECK_EQ_INT(pl.inter_wmaj, 0);
    p = conv(1, 1);
    p.channels = 40, p.state_stride_slot = 40 * 3; /* 10 quads: one block of 32 threads */
    pl = plan_conv(&p, "conv.variant=quad");
    LS_CHECK_EQ_INT(pl.groups, 10);
    LS_CHECK_EQ_INT(pl.block, 32);
    LS_CHECK_EQ_INT(pl.grid_x, 1);

    /* shapes the vector kernels cannot serve: scalar whatever the variant */
    p = conv(1, 1);
    p.channels = 4092, p.state_stride_slot = 4092 * 3;
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=vec2").kernel, LS_K_CONV_SCALAR);
    p = conv(1, 1);
    p.state_dtype = LS_F32;
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_SCALAR);
    p = conv(1, 1);
    p.x = (const uint16_t *)((char *)A16 + 8);
    LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, LS_K_CONV_SCALAR);

    /* slot guess: knob, and off without a slot count */
    p = conv(1, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.speculate=off").spec, LS_SPEC_OFF);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.speculate=miss").spec, LS_SPEC_MISS);
    p.slots = 0;
    LS_CHECK_EQ_INT(plan_conv(&p, "").spec, LS_SPEC_OFF);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.speculate=miss").spec, LS_SPEC_OFF);

    /* pdl off */
    p = conv(512, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "pdl=off").pdl, 0);

    /* NULL tuning = defaults */
    p = conv(1, 1);
    LS_CHECK_EQ_INT(ls_choose_conv(&p, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_VEC2);
    LS_CHECK_EQ_INT(pl.pdl, 1);

    /* width outside 2..4 fails */
    p.width = 5;
    LS_CHECK(ls_choose_conv(&p, NULL, &H200, &pl) != 0);
}

/* Kimi-like conv (KDA, tp 2): C = 2048, W = 4, window-major bf16 state and inter, fp32 weights,
 * no bias, slots given. */
static ls_conv_params conv_kimi(int B, int T)
{
    ls_conv_params p = conv(B, T);
    p.channels = 2048, p.weight_dtype = LS_F32, p.bias = NULL;
    p.x_stride_b = (int64_t)T * 2048, p.x_stride_t = 2048;
    p.y_stride_b = (int64_t)T * 2048, p.y_stride_t = 2048;
    p.state_stride_slot = 2048 * 3, p.state_stride_c = 1, p.state_stride_w = 2048;
    if (T > 1)
        p.inter_stride_slot = (int64_t)T * 2048 * 3, p.inter_stride_t = 2048 * 3, p.inter_stride_c = 1,
        p.inter_stride_w = 2048;
    return p;
}

/* conv_wlat: forced on the window-major shapes it serves (T <= 8), the auto choice elsewhere; the
 * auto rule's thresholds (LS_CONV_WLAT_MAX_B_*; 0 = never) checked as they stand and through
 * ls_conv_wlat_auto with others. */
static void test_conv_wlat(void)
{
    ls_conv_params p = conv_kimi(1, 1);
    ls_plan pl = plan_conv(&p, "conv.variant=wlat");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_WLAT);
    LS_CHECK_EQ_INT(pl.groups, 1024); /* 2048 channels / 2 */
    LS_CHECK_EQ_INT(pl.grid_x, 8);
    LS_CHECK_EQ_INT(pl.grid_y, 1);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.state_wmaj, 1);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON);
    LS_CHECK_EQ_INT(pl.prefetch, 1);
    LS_CHECK_EQ_INT(pl.pdl, 1);
    pl = plan_conv(&p, "conv.variant=wlat,conv.prefetch=off,conv.speculate=miss,pdl=off");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_WLAT);
    LS_CHECK_EQ_INT(pl.prefetch, 0);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_MISS);
    LS_CHECK_EQ_INT(pl.pdl, 0);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat,conv.speculate=off").spec, LS_SPEC_OFF);
    /* conv.prefetch=auto: wlat prefetches up to LS_CONV_WLAT_PREFETCH_MAX_B rows, not above; on
     * and off are taken as asked; the tile kernel prefetches under auto */
    LS_CHECK_EQ_INT(LS_CONV_WLAT_PREFETCH_MAX_B, 32);
    for (int b = 1; b <= 512; b *= 2) {
        ls_conv_params q = conv_kimi(b, 1);
        LS_CHECK_EQ_INT(plan_conv(&q, "").kernel, LS_K_CONV_WLAT); /* auto: window-major decode to 512 */
        LS_CHECK_EQ_INT(plan_conv(&q, "").prefetch, b <= 32);
        LS_CHECK_EQ_INT(plan_conv(&q, "conv.prefetch=on").prefetch, 1);
        LS_CHECK_EQ_INT(plan_conv(&q, "conv.prefetch=off").prefetch, 0);
        q = conv_kimi(b, 4);
        LS_CHECK_EQ_INT(plan_conv(&q, "").kernel == LS_K_CONV_WLAT, b <= 128); /* verify to 128 */
    }
    {
        ls_conv_params q = conv_kimi(1024, 1);
        LS_CHECK(plan_conv(&q, "").kernel != LS_K_CONV_WLAT);
        q = conv(512, 1);
        LS_CHECK_EQ_INT(plan_conv(&q, "").kernel, LS_K_CONV_TILE);
        LS_CHECK_EQ_INT(plan_conv(&q, "conv.prefetch=auto").prefetch, 1);
    }
    p.slots = 0; /* no slot count: no guess */
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").spec, LS_SPEC_OFF);

    /* verify up to 8 tokens, either inter orientation, bf16 weights with a bias too */
    static const int ts[] = {2, 3, 4, 7, 8};
    for (int i = 0; i < 5; i++) {
        p = conv_kimi(32, ts[i]);
        pl = plan_conv(&p, "conv.variant=wlat");
        LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_WLAT);
        LS_CHECK_EQ_INT(pl.grid_y, 32);
        LS_CHECK_EQ_INT(pl.inter_wmaj, 1);
    }
    p = conv_kimi(3, 4);
    p.inter_stride_c = 3, p.inter_stride_w = 1; /* channel-major inter windows */
    pl = plan_conv(&p, "conv.variant=wlat");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_WLAT);
    LS_CHECK_EQ_INT(pl.inter_wmaj, 0);
    p = conv_kimi(3, 1);
    p.weight_dtype = LS_BF16, p.bias = A16;
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, LS_K_CONV_WLAT);
    p = conv_kimi(100000, 2); /* rows past 65535 loop in the kernel */
    pl = plan_conv(&p, "conv.variant=wlat");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_WLAT);
    LS_CHECK_EQ_INT(pl.grid_y, 65535);

    /* shapes it does not serve: the auto choice (T > 8, channel-major state), scalar off the
     * vector path */
    p = conv_kimi(1, 9);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, plan_conv(&p, "").kernel);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, LS_K_CONV_PAIR);
    p = conv(1, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, LS_K_CONV_VEC2);
    p = conv(512, 1);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, LS_K_CONV_TILE);
    p = conv(1, 4);
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, LS_K_CONV_PAIR);
    p = conv_kimi(1, 1);
    p.state_dtype = LS_F32;
    LS_CHECK_EQ_INT(plan_conv(&p, "conv.variant=wlat").kernel, LS_K_CONV_SCALAR);

    /* the rule: window-major shapes it serves up to the given batch, decode and verify apart */
    p = conv_kimi(32, 1);
    LS_CHECK(ls_conv_wlat_ok(&p));
    LS_CHECK(ls_conv_wlat_auto(&p, 32, 0));
    LS_CHECK(!ls_conv_wlat_auto(&p, 31, 64));
    LS_CHECK(!ls_conv_wlat_auto(&p, 0, 0));
    p = conv_kimi(8, 4);
    LS_CHECK(ls_conv_wlat_auto(&p, 0, 8));
    LS_CHECK(!ls_conv_wlat_auto(&p, 64, 7));
    p = conv_kimi(1, 9);
    LS_CHECK(!ls_conv_wlat_ok(&p));
    LS_CHECK(!ls_conv_wlat_auto(&p, 512, 512));
    p = conv(1, 1); /* channel-major */
    LS_CHECK(!ls_conv_wlat_ok(&p));
    LS_CHECK(!ls_conv_wlat_auto(&p, 512, 512));

    /* auto, as the constants stand (0 today: never), at the batches and draft counts of the
     * side-by-side; channel-major shapes never take it */
    static const int bs[] = {1, 8, 32, 128, 512}, tks[] = {1, 2, 4, 8};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) {
            p = conv_kimi(bs[i], tks[j]);
            LS_CHECK_EQ_INT(plan_conv(&p, "").kernel, wmaj_auto(bs[i], tks[j]));
            p = conv(bs[i], tks[j]);
            LS_CHECK(plan_conv(&p, "").kernel != LS_K_CONV_WLAT);
        }
}

/* ------------------------------------------------------------------ delta rule */

/* Qwen3-Next-like GDN at tp 2: H = 8, HV = 16, K = V = 128, fp32 state. */
static ls_delta_params delta(int B, int T)
{
    ls_delta_params p;
    memset(&p, 0, sizeof p);
    p.batch = B, p.tokens = T, p.heads_qk = 8, p.heads_v = 16, p.dk = 128, p.dv = 128;
    p.scale = 0.08838834764831845f, p.state_dtype = LS_F32;
    p.q = A16, p.k = A16, p.v = A16, p.a = A16, p.b = A16, p.A_log = A16, p.dt_bias = A16, p.o = A16;
    p.state = A16, p.slot_idx = A16;
    p.state_stride_slot = 16 * 128 * 128;
    if (T > 1)
        p.inter = A16, p.inter_stride_slot = (int64_t)T * 16 * 128 * 128;
    return p;
}

static ls_plan plan_delta(const ls_delta_params *p, int per_row, const char *spec)
{
    ls_tuning t = tune(spec);
    ls_plan pl;
    LS_CHECK_EQ_INT(ls_choose_delta(p, per_row, &t, &H200, &pl), 0);
    return pl;
}

static void test_delta(void)
{
    ls_delta_params p = delta(1, 1);
    ls_plan pl = plan_delta(&p, 0, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_NARROW);
    LS_CHECK_EQ_INT(pl.block, 32);   /* 128 warps: one per CTA spreads them over the SMs */
    LS_CHECK_EQ_INT(pl.grid_x, 128);

    p = delta(64, 1);
    pl = plan_delta(&p, 0, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_WIDE); /* B = 64: register tiles beat bulk */
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.grid_x, 2048);

    p = delta(512, 1);
    pl = plan_delta(&p, 0, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_BULK);
    LS_CHECK_EQ_INT(pl.grid_x, 512 * 16);
    LS_CHECK_EQ_INT(pl.block, 256);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_BULK); /* KDA alike */

    /* the threshold: 16 heads per SM = 2112 heads = B 132 at HV 16 */
    p = delta(132, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_BULK);
    p = delta(131, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_WIDE);

    /* forced */
    p = delta(512, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=regs").kernel, LS_K_DELTA_WIDE);
    p = delta(64, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=bulk").kernel, LS_K_DELTA_BULK);
    p = delta(1, 1); /* below the WIDE batches every variant is the same */
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=bulk").kernel, LS_K_DELTA_NARROW);

    /* bf16 state: bulk for decode only */
    p = delta(512, 4);
    p.state_dtype = LS_BF16;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_WIDE);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=bulk").kernel, LS_K_DELTA_WIDE);
    p = delta(512, 1);
    p.state_dtype = LS_BF16;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_BULK);

    /* generic: other head sizes, or a KDA gate that is not 16-byte aligned (GDN ignores it) */
    p = delta(512, 1);
    p.dk = 64;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_GENERIC);
    p = delta(512, 1);
    p.a = (const uint16_t *)((char *)A16 + 8);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_GENERIC);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_BULK);

    p = delta(1, 1);
    p.dk = 256;
    LS_CHECK(ls_choose_delta(&p, 0, NULL, &H200, &pl) != 0);

    /* vk layout: its own kernel at every batch; 4 rows per warp until 8 rows per warp give every
     * SM 8 warps (16 warps per (row, head): B*16*16 >= 8*132 from B = 5 at HV 16) */
    p = delta(1, 1);
    p.state_layout = LS_STATE_VK;
    pl = plan_delta(&p, 0, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_VK4);
    LS_CHECK_EQ_INT(pl.block, 32); /* 512 warps: one per CTA spreads them over the SMs */
    LS_CHECK_EQ_INT(pl.grid_x, 16 * 32);
    p.batch = 4;
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_VK4);
    p.batch = 5;
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_VK8);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.ahead=on").ahead, 0); /* decode: one token, nothing ahead */
    p = delta(512, 4);
    p.state_layout = LS_STATE_VK;
    pl = plan_delta(&p, 0, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_VK4); /* GDN verify: 4 rows per warp at every batch */
    LS_CHECK_EQ_INT(pl.ahead, 0);               /* auto, GDN B = 512: each token's loads at its start */
    pl = plan_delta(&p, 1, "");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_VK8); /* KDA B = 512: 8 rows per warp, loads one token ahead */
    LS_CHECK_EQ_INT(pl.ahead, 1);
    LS_CHECK_EQ_INT(pl.grid_x, 512 * 16 * 16 / 4);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=vk4").kernel, LS_K_DELTA_VK4);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=vk4").ahead, 1); /* R = 4, KDA from 80 warps per SM */
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=vk8,delta.ahead=off").ahead, 0);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.ahead=on").ahead, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.ahead=off").ahead, 0);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.ahead=on,delta.variant=vk8").kernel, LS_K_DELTA_VK8);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.ahead=off").ahead, 0);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=bulk").kernel, LS_K_DELTA_VK4); /* kv values: auto */
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=regs").kernel, LS_K_DELTA_VK4);
    pl = plan_delta(&p, 0, "delta.variant=vk8");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_VK8); /* never the bulk or kv kernels */
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.grid_x, 512 * 16 * 16 / 4);
    p.tokens = 1;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_VK8); /* decode: 8 rows at B = 512 */
    p.tokens = 4;
    pl = plan_delta(&p, 0, "delta.variant=vk4");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_VK4);
    LS_CHECK_EQ_INT(pl.grid_x, 512 * 16 * 32 / 4);
    p = delta(1, 1);
    p.state_layout = LS_STATE_VK;
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=vk8").kernel, LS_K_DELTA_VK8);
    p.state_dtype = LS_BF16;
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_VK4);
    /* auto, tp 2 (HV 16: 512 B warps of 4 rows, 3.9 B per SM on 132; 256 B of 8 rows, 1.9 B per
     * SM), limits from the H200 A/Bs (choose.h). Rows per warp: decode 8 from 8 such warps per SM
     * (B >= 5); KDA verify with an fp32 state 8 from 5 (B >= 3), GDN verify 4. delta.ahead, verify
     * with an fp32 state: R = 4 below 10 warps per SM (B <= 2) and for KDA from 80 (B >= 21), KDA's
     * R = 8 always. */
    LS_CHECK_EQ_INT(LS_DELTA_AHEAD_MAX_WARPS_PER_SM, 10);
    LS_CHECK_EQ_INT(LS_DELTA_AHEAD_KDA_MIN_WARPS_PER_SM, 80);
    LS_CHECK_EQ_INT(LS_DELTA_VK8_KDA_VERIFY_MIN_WARPS_PER_SM, 5);
    for (int b = 1; b <= 512; b++)
        for (int t = 1; t <= 8; t *= 2)
            for (int kda = 0; kda < 2; kda++) {
                p = delta(b, t);
                p.state_layout = LS_STATE_VK;
                const int vk8 = t == 1 ? b >= 5 : kda && b >= 3;
                const int want = t > 1 && (b <= 2 || (kda && b >= 3));
                pl = plan_delta(&p, kda, "");
                LS_CHECK_EQ_INT(pl.kernel, vk8 ? LS_K_DELTA_VK8 : LS_K_DELTA_VK4);
                LS_CHECK_EQ_INT(pl.ahead, want);
                LS_CHECK_EQ_INT(plan_delta(&p, kda, "delta.ahead=auto").ahead, want);
                p.state_dtype = LS_BF16; /* not measured: R = 4 for verify, nothing ahead */
                pl = plan_delta(&p, kda, "");
                LS_CHECK_EQ_INT(pl.kernel, t == 1 && b >= 5 ? LS_K_DELTA_VK8 : LS_K_DELTA_VK4);
                LS_CHECK_EQ_INT(pl.ahead, 0);
            }
    /* the vk8 verify rule itself: KDA with an fp32 state, from 5 warps per SM */
    LS_CHECK_EQ_INT(ls_delta_vk8_verify_auto(5 * 132 - 1, 132, 1, 1), 0);
    LS_CHECK_EQ_INT(ls_delta_vk8_verify_auto(5 * 132, 132, 1, 1), 1);
    LS_CHECK_EQ_INT(ls_delta_vk8_verify_auto(5 * 132, 132, 0, 1), 0);
    LS_CHECK_EQ_INT(ls_delta_vk8_verify_auto(5 * 132, 132, 1, 0), 0);
    LS_CHECK_EQ_INT(ls_delta_vk8_verify_auto(5 * 66, 66, 1, 1), 1); /* per SM */
    LS_CHECK_EQ_INT(ls_delta_vk8_verify_auto(5 * 66, 132, 1, 1), 0);
    p = delta(1, 4);
    p.state_layout = LS_STATE_VK;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.ahead=off").ahead, 0);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=vk8").ahead, 0); /* GDN, R = 8: not measured */
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=vk8,delta.ahead=on").ahead, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=vk8").ahead, 1); /* KDA, R = 8: always ahead */
    p.state_dtype = LS_BF16; /* a bf16 state: not measured */
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").ahead, 0);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.ahead=on").ahead, 1);
    p = delta(1, 4);
    p.state_layout = LS_STATE_VK;
    p.dv = 96; /* the generic vk kernel: not measured */
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_VK_GENERIC);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").ahead, 0);
    /* the rule itself: below max warps per SM, and for KDA from the KDA minimum */
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(10 * 132 - 1, 132, 0), 1);
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(10 * 132, 132, 0), 0);
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(10 * 132, 132, 1), 0);
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(80 * 132 - 1, 132, 1), 0);
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(80 * 132, 132, 1), 1);
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(80 * 132, 132, 0), 0);
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(80 * 66, 66, 1), 1); /* per SM: half the SMs, half the warps */
    LS_CHECK_EQ_INT(ls_delta_ahead_auto(80 * 66, 132, 1), 0);
    /* the vk values and delta.ahead leave the kv layout at auto */
    p = delta(8, 4);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.ahead=on").ahead, 0);
    p = delta(512, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=vk4").kernel, LS_K_DELTA_BULK);
    p = delta(1, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=vk8").kernel, LS_K_DELTA_NARROW);
    /* generic vk: odd head sizes or a misaligned KDA gate, 4 rows per warp over ceil(V / 4) */
    p = delta(3, 1);
    p.state_layout = LS_STATE_VK;
    p.dk = 100, p.dv = 36;
    pl = plan_delta(&p, 0, "delta.variant=vk8");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_VK_GENERIC);
    LS_CHECK_EQ_INT((int64_t)pl.grid_x * (pl.block / 32), 3 * 16 * 9);
    p = delta(512, 1);
    p.state_layout = LS_STATE_VK;
    p.a = (const uint16_t *)((char *)A16 + 8);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_VK_GENERIC);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_VK8);
    p = delta(1, 1);
    p.state_layout = LS_STATE_VK;
    p.dk = 256;
    LS_CHECK(ls_choose_delta(&p, 0, NULL, &H200, &pl) != 0);
    p = delta(1, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "pdl=off").pdl, 0);
}

/* A forced kv vector-path variant (spec) on shapes off that path, B = 3 at T tokens: the generic
 * kernel for odd head sizes and a misaligned KDA gate, vk4 for the vk layout. */
static void check_off_vector_path(const char *spec, int T)
{
    ls_delta_params p = delta(3, T);
    p.dk = 64;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, spec).kernel, LS_K_DELTA_GENERIC);
    p = delta(3, T);
    p.dv = 48;
    LS_CHECK_EQ_INT(plan_delta(&p, 1, spec).kernel, LS_K_DELTA_GENERIC);
    p = delta(3, T);
    p.a = (const uint16_t *)((char *)A16 + 8); /* a KDA gate off the vector path */
    LS_CHECK_EQ_INT(plan_delta(&p, 1, spec).kernel, LS_K_DELTA_GENERIC);
    p = delta(3, T);
    p.state_layout = LS_STATE_VK;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, spec).kernel, LS_K_DELTA_VK4);
}

/* SPLIT / SPLIT2 (delta.variant=split / split2): NARROW's 16-column tiles over 4 / 2 warps along
 * K, forced at every batch of the kv vector path; auto takes them for verify in the bands of
 * choose.h (set from the H200 A/B). */
static void test_delta_split(void)
{
    LS_CHECK_EQ_INT(LS_DELTA_SPLIT, 5); /* appended: the older values keep their indices */
    LS_CHECK_EQ_INT(LS_DELTA_SPLIT2, 6);
    ls_delta_params p = delta(1, 1);
    ls_plan pl = plan_delta(&p, 0, "delta.variant=split");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_SPLIT);
    LS_CHECK_EQ_INT(pl.block, 128); /* a tile's 4 warps share a CTA (named barrier) */
    LS_CHECK_EQ_INT(pl.grid_x, 16 * 8); /* 128 NARROW tiles, 512 warps */
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=split").kernel, LS_K_DELTA_SPLIT); /* KDA */
    p = delta(8, 4); /* verify, bf16 state */
    p.state_dtype = LS_BF16;
    pl = plan_delta(&p, 1, "delta.variant=split,pdl=off");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_SPLIT);
    LS_CHECK_EQ_INT(pl.grid_x, 8 * 16 * 8);
    LS_CHECK_EQ_INT(pl.pdl, 0);
    /* forced past the WIDE and bulk batches too */
    p = delta(64, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=split").kernel, LS_K_DELTA_SPLIT);
    p = delta(512, 2);
    pl = plan_delta(&p, 0, "delta.variant=split");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_SPLIT);
    LS_CHECK_EQ_INT(pl.grid_x, 512 * 16 * 8);
    /* split2: 2 warps per tile, CTAs of 2 or 4 warps (whole tiles) */
    p = delta(1, 4);
    pl = plan_delta(&p, 1, "delta.variant=split2");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_SPLIT2);
    LS_CHECK_EQ_INT(pl.block, 64); /* 256 warps: under 2 CTAs of 4 per SM, so CTAs of 2 */
    LS_CHECK_EQ_INT(pl.grid_x, 128);
    p = delta(8, 1);
    pl = plan_delta(&p, 0, "delta.variant=split2");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_DELTA_SPLIT2);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.grid_x, 8 * 16 * 8 / 2);
    p = delta(512, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=split2").kernel, LS_K_DELTA_SPLIT2);
    /* other shapes ignore it: generic kv shapes, the vk layout */
    check_off_vector_path("delta.variant=split", 1);
    check_off_vector_path("delta.variant=split2", 1);
    p = delta(512, 1);
    p.state_layout = LS_STATE_VK;
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=split").kernel, LS_K_DELTA_VK8);

    /* auto (limits from the H200 A/B, choose.h), tp 2 shapes (HV 16) on 132 SMs: verify only;
     * SPLIT for KDA at B <= 2, SPLIT2 for GDN and KDA at B = 8..16; decode never */
    LS_CHECK_EQ_INT(LS_DELTA_SPLIT_MAX_WARPS_PER_SM, 3);
    LS_CHECK_EQ_INT(LS_DELTA_SPLIT2_MIN_WARPS_PER_SM, 6);
    LS_CHECK_EQ_INT(LS_DELTA_SPLIT2_MAX_WARPS_PER_SM, 24);
    for (int b = 1; b <= 1024; b *= 2)
        for (int t = 1; t <= 8; t *= 2)
            for (int kda = 0; kda < 2; kda++) {
                p = delta(b, t);
                const ls_kernel_id k = plan_delta(&p, kda, "").kernel;
                const ls_kernel_id want = t == 1               ? k /* decode: whatever it was, checked below */
                                          : kda && b <= 2      ? LS_K_DELTA_SPLIT
                                          : b >= 8 && b <= 16 ? LS_K_DELTA_SPLIT2
                                                               : k;
                LS_CHECK_EQ_INT(k, want);
                if (t == 1 || (b > 2 && b < 8) || b > 16 || (!kda && b <= 2))
                    LS_CHECK(k != LS_K_DELTA_SPLIT && k != LS_K_DELTA_SPLIT2);
            }
    p = delta(1, 1);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_NARROW);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "").kernel, LS_K_DELTA_NARROW); /* KDA decode B = 1 */
    p = delta(1, 4);
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "").kernel, LS_K_DELTA_NARROW); /* GDN verify B = 1 */
    LS_CHECK_EQ_INT(plan_delta(&p, 0, "delta.variant=regs").kernel, LS_K_DELTA_NARROW);
    p = delta(8, 4);
    LS_CHECK_EQ_INT(plan_delta(&p, 1, "delta.variant=regs").kernel, LS_K_DELTA_NARROW); /* regs: no split */
    /* within SPLIT2's range, WIDE where it serves (B >= 9 at HV 16 on 132 SMs: 128 B warps) and its
     * last wave of 12 warps per SM (1584) is at least 33 % full (523): B = 9-12 and 17-24; SPLIT2
     * at B = 7, 8 (NARROW the alternative) and 13-16 (WIDE's second wave 5-29 % full) */
    LS_CHECK_EQ_INT(LS_DELTA_WIDE_MIN_WARPS_PER_SM, 8);
    LS_CHECK_EQ_INT(LS_DELTA_WIDE_VERIFY_WARPS_PER_SM, 12);
    LS_CHECK_EQ_INT(LS_DELTA_WIDE_MIN_TAIL_PCT, 33);
    for (int b = 5; b <= 26; b++)
        for (int kda = 0; kda < 2; kda++) {
            p = delta(b, 4);
            const ls_kernel_id want = b < 7                            ? LS_K_DELTA_NARROW
                                      : (b >= 9 && b <= 12) || b >= 17 ? LS_K_DELTA_WIDE /* and past 24 */
                                                                       : LS_K_DELTA_SPLIT2;
            LS_CHECK_EQ_INT(plan_delta(&p, kda, "").kernel, want);
            LS_CHECK_EQ_INT(plan_delta(&p, kda, "delta.variant=split2").kernel, LS_K_DELTA_SPLIT2); /* forced */
            p.tokens = 1; /* decode: never split */
            LS_CHECK(plan_delta(&p, kda, "").kernel != LS_K_DELTA_SPLIT2);
        }
    p = delta(12, 4); /* auto's WIDE is the launch delta.variant=regs measured */
    pl = plan_delta(&p, 1, "");
    const ls_plan regs = plan_delta(&p, 1, "delta.variant=regs");
    LS_CHECK_EQ_INT(pl.kernel, regs.kernel);
    LS_CHECK_EQ_INT(pl.grid_x, regs.grid_x);
    LS_CHECK_EQ_INT(pl.block, regs.block);
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(8 * 132 - 1, 132), 0); /* NARROW the alternative */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(8 * 132, 132), 1);     /* first wave, 2/3 full */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(12 * 132, 132), 1);    /* whole waves */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(1584 + 523 - 1, 132), 0); /* second wave just under 33 % */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(1584 + 523, 132), 1);
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(2176, 132), 1);     /* B = 17: 37.4 % */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(2304, 132), 1);     /* B = 18: 45.5 % */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(2048, 132), 0);     /* B = 16: 29.3 % */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(2 * 1584 + 523 - 1, 132), 0); /* third wave */
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(2 * 1584 + 523, 132), 1);
    LS_CHECK_EQ_INT(ls_delta_wide_over_split2(8 * 66, 66), 1);        /* per SM: fewer SMs, fewer warps */
    /* the rule itself, at other thresholds: 4 warps per tile below max4 NARROW warps per SM, 2
     * from min2 to below max2 */
    LS_CHECK_EQ_INT(ls_delta_split_auto(128, 132, 0, 0, 0), 0);
    LS_CHECK_EQ_INT(ls_delta_split_auto(0, 132, 0, 0, 0), 0);
    LS_CHECK_EQ_INT(ls_delta_split_auto(128, 132, -1, 0, -1), 0);
    LS_CHECK_EQ_INT(ls_delta_split_auto(128, 132, 1, 0, 0), 4);    /* B = 1 at HV 16: 128 < 132 */
    LS_CHECK_EQ_INT(ls_delta_split_auto(132, 132, 1, 0, 0), 0);    /* exactly one per SM: NARROW */
    LS_CHECK_EQ_INT(ls_delta_split_auto(132, 132, 1, 0, 2), 2);
    LS_CHECK_EQ_INT(ls_delta_split_auto(128, 132, 0, 0, 8), 2);    /* split2 alone */
    LS_CHECK_EQ_INT(ls_delta_split_auto(512, 132, 3, 6, 24), 0);   /* B = 4: between the bands */
    LS_CHECK_EQ_INT(ls_delta_split_auto(1024, 132, 3, 6, 24), 2);  /* B = 8 */
    LS_CHECK_EQ_INT(ls_delta_split_auto(2048, 132, 3, 6, 24), 2);  /* B = 16 */
    LS_CHECK_EQ_INT(ls_delta_split_auto(4096, 132, 3, 6, 24), 0);  /* B = 32 */
    LS_CHECK_EQ_INT(ls_delta_split_auto(1024, 132, 8, 6, 16), 4);
    LS_CHECK_EQ_INT(ls_delta_split_auto((int64_t)1 << 40, 132, 1 << 30, 0, 1 << 30), 0); /* no overflow */
}

/* ------------------------------------------------------------------ conv + delta rule */

/* A conv_delta call: the delta(B, T) shapes above with H key heads (tp 2: Qwen3-Next H = 8,
 * HV = 16; Kimi-Linear H = HV = 16), q/k/v NULL (the conv output feeds them). */
static ls_conv_delta_params conv_delta(int B, int T, int H, int kda)
{
    ls_conv_delta_params p;
    memset(&p, 0, sizeof p);
    p.kda = kda;
    p.delta = delta(B, T);
    p.delta.heads_qk = H;
    p.delta.q = p.delta.k = p.delta.v = NULL;
    p.conv.batch = B, p.conv.tokens = T, p.conv.width = 4, p.conv.channels = 2 * H * 128 + 16 * 128;
    return p;
}

static ls_plan plan_cd(const ls_conv_delta_params *p, const char *spec) { return plan_op(LS_OP_CONV_DELTA, p, spec); }

static void test_conv_delta(void)
{
    /* cluster: ns doubles while B*H*ns <= 2 SMs' worth (264) and the G*V = 128 columns give
     * slices of >= 32: 4 at B = 1 (16 heads), 1 from B = 9 */
    for (int v = 0; v < 2; v++) {
        const char *spec = v ? "conv_delta.variant=cluster" : "conv_delta.variant=cluster,pdl=on";
        ls_conv_delta_params p = conv_delta(1, 4, 16, 1);
        ls_plan pl = plan_cd(&p, spec);
        LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA);
        LS_CHECK_EQ_INT(pl.grid_x, 16);
        LS_CHECK_EQ_INT(pl.grid_y, 4);
        LS_CHECK_EQ_INT(pl.block, 128); /* 4 lanes x 32 columns */
        LS_CHECK_EQ_INT(pl.pdl, 1);
        p = conv_delta(512, 4, 16, 1);
        pl = plan_cd(&p, spec);
        LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA);
        LS_CHECK_EQ_INT(pl.grid_x, 512 * 16);
        LS_CHECK_EQ_INT(pl.grid_y, 1);
        LS_CHECK_EQ_INT(pl.block, 256); /* 512 lanes: two trips */
        p = conv_delta(1, 1, 8, 0);     /* Qwen3-Next: G = 2, 256 columns: ns 8 (32 each) */
        pl = plan_cd(&p, spec);
        LS_CHECK_EQ_INT(pl.grid_y, 8);
        LS_CHECK_EQ_INT(pl.block, 128);
    }

    /* auto (H200 A/Bs, choose.h): on its vector path the bulkp kernel (fp32 state: decode, and
     * verify from 3 CTAs (B*HV) per SM, B >= 25 here; test_conv_delta_bulk), else the tiles
     * kernel; the cluster kernel where only the generic tiles would serve (a misaligned state)
     * and where the tiles do not fit */
    for (int b = 1; b <= 512; b *= 2)
        for (int T = 1; T <= 4; T *= 4)
            for (int kda = 0; kda < 2; kda++) {
                ls_conv_delta_params q = conv_delta(b, T, kda ? 16 : 8, kda);
                LS_CHECK_EQ_INT(plan_cd(&q, "").kernel,
                                T == 1 || b >= 32 ? LS_K_CONV_DELTA_BULKP : LS_K_CONV_DELTA_TILES);
                q.delta.state_dtype = LS_BF16;
                LS_CHECK_EQ_INT(plan_cd(&q, "").kernel, LS_K_CONV_DELTA_TILES);
                q.delta.state_dtype = LS_F32;
                q.delta.state = (void *)((uintptr_t)A16 + 4);
                LS_CHECK_EQ_INT(plan_cd(&q, "").kernel, LS_K_CONV_DELTA);
            }

    /* tiles, Kimi-Linear (8 tiles per key head): B = 1 spreads them 1 per CTA over 8 ranks
     * (128 CTAs <= 132 SMs), CTAs of the minimum 8 warps; from B = 9 one CTA of 8 tile warps */
    ls_conv_delta_params p = conv_delta(1, 4, 16, 1);
    ls_plan pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA_TILES);
    LS_CHECK_EQ_INT(pl.grid_x, 16);
    LS_CHECK_EQ_INT(pl.grid_y, 8);
    LS_CHECK_EQ_INT(pl.groups, 1);
    LS_CHECK_EQ_INT(pl.block, 32 * LS_CONV_DELTA_MIN_WARPS);
    p = conv_delta(2, 4, 16, 1); /* 32 heads: ns 4 (128 CTAs), 2 tiles each */
    pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.grid_y, 4);
    LS_CHECK_EQ_INT(pl.groups, 2);
    p = conv_delta(9, 1, 16, 1); /* 144 heads > 132 SMs: no split */
    pl = plan_cd(&p, "conv_delta.variant=tiles,pdl=off");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA_TILES);
    LS_CHECK_EQ_INT(pl.grid_x, 144);
    LS_CHECK_EQ_INT(pl.grid_y, 1);
    LS_CHECK_EQ_INT(pl.groups, 8);
    LS_CHECK_EQ_INT(pl.block, 256);
    LS_CHECK_EQ_INT(pl.pdl, 0);

    /* Qwen3-Next (G = 2: 16 tiles): at least 2 ranks (8 tile warps per CTA at most) */
    p = conv_delta(512, 4, 8, 0);
    pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.grid_y, 2);
    LS_CHECK_EQ_INT(pl.groups, 8);
    p = conv_delta(1, 4, 8, 0); /* 8 heads: ns 8 (64 CTAs; 16 would pass 8), 2 tiles each */
    pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.grid_y, 8);
    LS_CHECK_EQ_INT(pl.groups, 2);
    LS_CHECK_EQ_INT(pl.block, 256); /* the minimum 8 warps */

    /* generic tiles: a misaligned state; uneven tiles: H = 1, HV = 3, V = 48 -> 9 tiles: ns 2
     * (5 and 4 per CTA; 4 would not divide them); 33 tiles: ns 8 (5 per CTA, the last rank none) */
    p = conv_delta(1, 1, 16, 1);
    p.delta.state = (void *)((uintptr_t)A16 + 4);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=tiles").kernel, LS_K_CONV_DELTA_TILES_GENERIC);
    p = conv_delta(1, 3, 1, 0);
    p.delta.heads_v = 3, p.delta.dk = 64, p.delta.dv = 48;
    pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA_TILES_GENERIC);
    LS_CHECK_EQ_INT(pl.grid_y, 2);
    LS_CHECK_EQ_INT(pl.groups, 5);
    LS_CHECK_EQ_INT(ls_conv_delta_tiles_ok(&p), 1);
    p.delta.heads_v = 11;
    pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.grid_y, 8);
    LS_CHECK_EQ_INT(pl.groups, 5);

    /* tiles that do not fit (more than 8 x 8 tiles per key head): the cluster kernel */
    p = conv_delta(1, 1, 1, 0);
    p.delta.heads_v = 9; /* 72 tiles */
    LS_CHECK_EQ_INT(ls_conv_delta_tiles_ok(&p), 0);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=tiles").kernel, LS_K_CONV_DELTA);
    p.delta.heads_v = 8; /* 64 tiles: 8 ranks of 8 */
    pl = plan_cd(&p, "conv_delta.variant=tiles");
    LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA_TILES);
    LS_CHECK_EQ_INT(pl.grid_y, 8);
    LS_CHECK_EQ_INT(pl.groups, 8);

    /* K > 128: no kernel, an error naming dk */
    p = conv_delta(1, 1, 16, 1);
    p.delta.dk = 200;
    ls_tuning t = tune("");
    LS_CHECK(ls_choose_conv_delta(&p, &t, &H200, &pl) != 0);
    LS_CHECK(strstr(ls_last_error(), "dk=200") != NULL);
}

/* The plan's one-line description is `want` (printed when it is not). */
static void check_describe(ls_op op, const ls_plan *pl, const char *want)
{
    char buf[256];
    ls_choose_describe(op, pl, buf, sizeof buf);
    LS_CHECK(strcmp(buf, want) == 0);
    if (strcmp(buf, want))
        fprintf(stderr, "got '%s', want '%s'\n", buf, want);
}

/* describe's line for the plan of spec at Qwen3-Next B = 2, T = 4 (G = 2) is want. */
static void describe_cd(const char *spec, const char *want)
{
    const ls_conv_delta_params p = conv_delta(2, 4, 8, 0);
    const ls_plan pl = plan_cd(&p, spec);
    check_describe(LS_OP_CONV_DELTA, &pl, want);
}

/* bulk (conv_delta.variant=bulk): one CTA of 256 threads per (row, value head), grid (B*H, G)
 * with the G value heads of a key head one cluster; where the bulk GDN/KDA kernel would refuse
 * (ls_delta_bulk_ok: bf16 state with T > 1, misalignment, K or V != 128), with G > 8 or T > 16,
 * the variant means auto without it (the tiles kernel on its vector path, else cluster). auto
 * takes it with an fp32 state for decode and for verify from 3 CTAs per SM
 * (ls_conv_delta_bulk_auto, results/h200/variants-8f5a322/); tiles and cluster never. */
static void test_conv_delta_bulk(void)
{
    LS_CHECK_EQ_INT(LS_CD_BULK, 3); /* appended: the older values keep their indices */
    LS_CHECK_EQ_INT(tune("conv_delta.variant=bulk").v[LS_KNOB_CONV_DELTA_VARIANT], LS_CD_BULK);
    LS_CHECK(strcmp(ls_kernel_name(LS_K_CONV_DELTA_BULK), "conv_delta_bulk") == 0);
    for (int b = 1; b <= 512; b *= 8)
        for (int T = 1; T <= 8; T *= 2)
            for (int kda = 0; kda < 2; kda++) {
                const int H = kda ? 16 : 8; /* tp 2: Kimi-Linear G = 1, Qwen3-Next G = 2 */
                ls_conv_delta_params q = conv_delta(b, T, H, kda);
                LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&q), 1);
                ls_plan pl = plan_cd(&q, "conv_delta.variant=bulk");
                LS_CHECK_EQ_INT(pl.kernel, LS_K_CONV_DELTA_BULK);
                LS_CHECK_EQ_INT(pl.grid_x, b * H);
                LS_CHECK_EQ_INT(pl.grid_y, 16 / H);
                LS_CHECK_EQ_INT(pl.block, 256);
                LS_CHECK_EQ_INT(pl.pdl, 1);
                LS_CHECK_EQ_INT(plan_cd(&q, "conv_delta.variant=bulk,pdl=off").pdl, 0);
                /* auto (fp32 state): bulkp (bulk's shapes, bulk_prologue_early's prologue) for
                 * decode, and for verify from 3 CTAs (B*HV) per SM: B = 64 and 512 here (1024
                 * and 8192 >= 396), not B = 1 or 8 (16, 128) */
                const int want = T == 1 || b * 16 >= LS_CONV_DELTA_BULK_VERIFY_MIN_CTAS_PER_SM * 132;
                LS_CHECK_EQ_INT(want, T == 1 || b >= 64);
                LS_CHECK_EQ_INT(ls_conv_delta_bulk_auto(&q, 132), want);
                LS_CHECK_EQ_INT(plan_cd(&q, "").kernel == LS_K_CONV_DELTA_BULKP, want);
                LS_CHECK(plan_cd(&q, "").kernel != LS_K_CONV_DELTA_BULK);
                if (!want)
                    LS_CHECK_EQ_INT(plan_cd(&q, "").kernel, LS_K_CONV_DELTA_TILES);
                LS_CHECK(plan_cd(&q, "conv_delta.variant=tiles").kernel != LS_K_CONV_DELTA_BULK);
                LS_CHECK(plan_cd(&q, "conv_delta.variant=cluster").kernel != LS_K_CONV_DELTA_BULK);
                /* bf16 state: decode only (the tile holds the state in its dtype between tokens) */
                q.delta.state_dtype = LS_BF16;
                LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&q), T == 1);
                LS_CHECK_EQ_INT(ls_conv_delta_bulk_auto(&q, 132), 0); /* auto: measured on fp32 only */
                LS_CHECK_EQ_INT(plan_cd(&q, "").kernel, LS_K_CONV_DELTA_TILES);
                LS_CHECK_EQ_INT(plan_cd(&q, "conv_delta.variant=bulk").kernel,
                                T == 1 ? LS_K_CONV_DELTA_BULK : plan_cd(&q, "").kernel);
            }
    /* where it refuses: auto's kernel, with auto's grid */
    ls_conv_delta_params p = conv_delta(4, 4, 16, 1);
    p.delta.state_dtype = LS_BF16;
    ls_plan pa = plan_cd(&p, ""), pb = plan_cd(&p, "conv_delta.variant=bulk");
    LS_CHECK_EQ_INT(pb.kernel, LS_K_CONV_DELTA_TILES);
    LS_CHECK_EQ_INT(pb.grid_x, pa.grid_x);
    LS_CHECK_EQ_INT(pb.grid_y, pa.grid_y);
    LS_CHECK_EQ_INT(pb.groups, pa.groups);
    LS_CHECK_EQ_INT(pb.block, pa.block);
    p = conv_delta(4, 1, 16, 1);
    p.delta.state = (void *)((uintptr_t)A16 + 8); /* copies need 16-byte heads: auto's cluster kernel */
    LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&p), 0);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulk").kernel, LS_K_CONV_DELTA);
    p = conv_delta(4, 2, 16, 1);
    p.delta.inter_stride_slot += 2; /* a misaligned per-step head */
    LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&p), 0);
    LS_CHECK(plan_cd(&p, "conv_delta.variant=bulk").kernel != LS_K_CONV_DELTA_BULK);
    p = conv_delta(4, 1, 1, 0);
    p.delta.heads_v = 3, p.delta.dk = 64, p.delta.dv = 48; /* off K = V = 128 */
    LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&p), 0);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulk").kernel, LS_K_CONV_DELTA); /* auto off the vector path */
    p = conv_delta(4, 1, 2, 0);
    p.delta.heads_v = 16; /* G = 8: the largest cluster */
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulk").grid_y, 8);
    p.delta.heads_qk = 1; /* G = 16 */
    LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&p), 0);
    LS_CHECK(plan_cd(&p, "conv_delta.variant=bulk").kernel != LS_K_CONV_DELTA_BULK);
    p = conv_delta(4, LS_CONV_DELTA_BULK_MAX_TOKENS, 16, 1);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulk").kernel, LS_K_CONV_DELTA_BULK);
    p = conv_delta(4, LS_CONV_DELTA_BULK_MAX_TOKENS + 1, 16, 1);
    LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&p), 0);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulk").kernel, LS_K_CONV_DELTA_TILES);
    describe_cd("conv_delta.variant=bulk", "conv_delta_bulk grid=(16,2) block=256 pdl cluster=2");
}

/* bulkp (conv_delta.variant=bulkp): the bulk kernel with bulk_prologue_early's prologue. Its own
 * kernel id wherever bulk serves (ls_conv_delta_bulk_ok: decode and verify, batch 1, odd batches,
 * GDN in clusters of G = 2 and KDA, fp32 state at every T, bf16 at T = 1) with bulk's grid,
 * block, clusters and PDL; where bulk refuses, auto's plan; auto takes it where
 * ls_conv_delta_bulk_auto says (with bulk's grid); tiles, cluster and bulk never do. */
static void test_conv_delta_bulkp(void)
{
    LS_CHECK_EQ_INT(LS_CD_BULKP, 4); /* appended: the older values keep their indices */
    LS_CHECK_EQ_INT(tune("conv_delta.variant=bulkp").v[LS_KNOB_CONV_DELTA_VARIANT], LS_CD_BULKP);
    LS_CHECK(strcmp(ls_kernel_name(LS_K_CONV_DELTA_BULKP), "conv_delta_bulkp") == 0);
    static const int Bs[] = {1, 3, 7, 64, 200, 512};
    for (size_t bi = 0; bi < sizeof Bs / sizeof *Bs; bi++)
        for (int T = 1; T <= LS_CONV_DELTA_BULK_MAX_TOKENS; T *= 2)
            for (int kda = 0; kda < 2; kda++)
                for (int bf16 = 0; bf16 < 2; bf16++) {
                    ls_conv_delta_params q = conv_delta(Bs[bi], T, kda ? 16 : 8, kda);
                    if (bf16)
                        q.delta.state_dtype = LS_BF16;
                    const ls_plan pb = plan_cd(&q, "conv_delta.variant=bulk");
                    const ls_plan pp = plan_cd(&q, "conv_delta.variant=bulkp");
                    const ls_plan pa = plan_cd(&q, "");
                    const int serves = !bf16 || T == 1;
                    LS_CHECK_EQ_INT(ls_conv_delta_bulk_ok(&q), serves);
                    LS_CHECK_EQ_INT(pp.kernel, serves ? LS_K_CONV_DELTA_BULKP : pa.kernel);
                    LS_CHECK_EQ_INT(pp.grid_x, serves ? pb.grid_x : pa.grid_x);
                    LS_CHECK_EQ_INT(pp.grid_y, serves ? pb.grid_y : pa.grid_y);
                    LS_CHECK_EQ_INT(pp.block, serves ? pb.block : pa.block);
                    LS_CHECK_EQ_INT(pp.groups, serves ? pb.groups : pa.groups);
                    LS_CHECK_EQ_INT(pp.pdl, 1);
                    LS_CHECK_EQ_INT(plan_cd(&q, "conv_delta.variant=bulkp,pdl=off").pdl, 0);
                    if (serves) {
                        LS_CHECK_EQ_INT(pp.grid_x, Bs[bi] * (kda ? 16 : 8));
                        LS_CHECK_EQ_INT(pp.grid_y, kda ? 1 : 2);
                        LS_CHECK_EQ_INT(pp.block, LS_CONV_DELTA_BULK_THREADS);
                    }
                    const int bulk_auto = serves && ls_conv_delta_bulk_auto(&q, 132);
                    LS_CHECK_EQ_INT(pa.kernel == LS_K_CONV_DELTA_BULKP, bulk_auto);
                    if (bulk_auto) {
                        LS_CHECK_EQ_INT(pa.grid_x, pp.grid_x);
                        LS_CHECK_EQ_INT(pa.grid_y, pp.grid_y);
                        LS_CHECK_EQ_INT(pa.block, pp.block);
                    }
                    LS_CHECK(pb.kernel != LS_K_CONV_DELTA_BULKP);
                    LS_CHECK(plan_cd(&q, "conv_delta.variant=tiles").kernel != LS_K_CONV_DELTA_BULKP);
                    LS_CHECK(plan_cd(&q, "conv_delta.variant=cluster").kernel != LS_K_CONV_DELTA_BULKP);
                }
    /* where bulk refuses: a misaligned state (auto's cluster kernel), G = 16, T = 17 (tiles) */
    ls_conv_delta_params p = conv_delta(4, 1, 16, 1);
    p.delta.state = (void *)((uintptr_t)A16 + 8);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulkp").kernel, LS_K_CONV_DELTA);
    p = conv_delta(4, 1, 1, 0);
    p.delta.heads_v = 16;
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulkp").kernel, plan_cd(&p, "").kernel);
    LS_CHECK(plan_cd(&p, "conv_delta.variant=bulkp").kernel != LS_K_CONV_DELTA_BULKP);
    p = conv_delta(4, LS_CONV_DELTA_BULK_MAX_TOKENS + 1, 16, 1);
    LS_CHECK_EQ_INT(plan_cd(&p, "conv_delta.variant=bulkp").kernel, LS_K_CONV_DELTA_TILES);
    describe_cd("conv_delta.variant=bulkp", "conv_delta_bulkp grid=(16,2) block=256 pdl cluster=2");
}

/* ------------------------------------------------------------------ SSU */

/* Nemotron-H-8B-like SSU at tp 2: nheads 64, head_dim 64, dstate 128, 4 groups, fp32 state. */
static ls_ssu_params ssu(int B, int T)
{
    ls_ssu_params p;
    memset(&p, 0, sizeof p);
    p.batch = B, p.tokens = T, p.nheads = 64, p.head_dim = 64, p.dstate = 128, p.ngroups = 4;
    p.state_dtype = LS_F32;
    p.x = A16, p.dt = A16, p.Bm = A16, p.Cm = A16, p.A = A16, p.dt_bias = A16, p.D = A16, p.y = A16;
    p.state = A16, p.slot_idx = A16;
    p.state_stride_slot = 64 * 64 * 128;
    if (T > 1)
        p.inter = A16, p.inter_stride_slot = (int64_t)T * 64 * 64 * 128;
    p.slots = 1024;
    return p;
}

static ls_plan plan_ssu(const ls_ssu_params *p, const char *spec, int sms, int resident)
{
    ls_tuning t = tune(spec);
    ls_choose_dev d = {sms, resident};
    ls_plan pl;
    LS_CHECK_EQ_INT(ls_choose_ssu(p, &t, &d, &pl), 0);
    return pl;
}

static void test_ssu(void)
{
    /* the tiles (auto takes rows8 up to B = 128: test_ssu_rows8_auto) */
    /* wide tiles give 256 warps per row: narrow while that is below 4 per SM (528 on 132 SMs) */
    ls_ssu_params p = ssu(1, 1);
    ls_plan pl = plan_ssu(&p, "ssu.variant=tiles", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_NARROW);
    LS_CHECK_EQ_INT(pl.nch, 4);
    LS_CHECK_EQ_INT(pl.rows_per_lane, 2);
    LS_CHECK_EQ_INT(pl.block, 32); /* 512 warps, one per CTA */
    LS_CHECK_EQ_INT(pl.grid_x, 512);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON); /* 512 CTAs <= half of 16 x 132 */
    p = ssu(2, 1);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles", 132, 16).kernel, LS_K_SSU_NARROW);
    p = ssu(3, 1);
    pl = plan_ssu(&p, "ssu.variant=tiles", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_WIDE);
    LS_CHECK_EQ_INT(pl.rows_per_lane, 4);
    p = ssu(512, 1);
    pl = plan_ssu(&p, "ssu.variant=tiles", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_WIDE);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.grid_x, 512 * 256 / 4);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_OFF); /* far more than half the resident slots */

    /* ds = 256: 8 chunks */
    p = ssu(1, 1);
    p.dstate = 256, p.state_stride_slot = 64 * 64 * 256;
    pl = plan_ssu(&p, "ssu.variant=tiles", 132, 16);
    LS_CHECK_EQ_INT(pl.nch, 8);
    LS_CHECK_EQ_INT(pl.rows_per_lane, 1);

    /* the slot-guess rule at its edge, on 128 SMs: B = 1 narrow is 512 warps in 256 CTAs of 2
     * warps; on with 4 resident CTAs per SM (512 slots, the grid takes half), off with 3 */
    p = ssu(1, 1);
    pl = plan_ssu(&p, "ssu.variant=tiles", 128, 4);
    LS_CHECK_EQ_INT(pl.grid_x, 256);
    LS_CHECK_EQ_INT(pl.block, 64);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles", 128, 3).spec, LS_SPEC_OFF);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles", 128, 0).spec, LS_SPEC_OFF); /* unknown residency: no guess */

    /* forced modes; none without a slot count or on the generic kernel */
    p = ssu(512, 1);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles,ssu.speculate=on", 132, 0).spec, LS_SPEC_ON);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles,ssu.speculate=miss", 132, 0).spec, LS_SPEC_MISS);
    p = ssu(1, 1);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles,ssu.speculate=off", 132, 16).spec, LS_SPEC_OFF);
    p.slots = 0;
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles,ssu.speculate=on", 132, 16).spec, LS_SPEC_OFF);
    p = ssu(1, 1);
    p.dstate = 64, p.state_stride_slot = 64 * 64 * 64;
    pl = plan_ssu(&p, "ssu.variant=tiles,ssu.speculate=on", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_GENERIC);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_OFF);
    p = ssu(1, 1);
    p.Bm = (const uint16_t *)((char *)A16 + 4); /* B not 8-byte aligned: generic */
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles", 132, 16).kernel, LS_K_SSU_GENERIC);

    p = ssu(1, 1);
    p.dstate = 512;
    LS_CHECK(ls_choose_ssu(&p, NULL, &H200, &pl) != 0);
    p = ssu(1, 4);
    LS_CHECK_EQ_INT(plan_ssu(&p, "pdl=off", 132, 16).pdl, 0);
}

/* A rows kernel (k, forced by tuning) at ds = 256 (2 chunks of 128 columns per lane, bf16
 * state), and the generic kernel off the vector path (ds = 64, state or C misaligned). */
static void rows_shapes(const char *tuning, ls_kernel_id k)
{
    ls_ssu_params p = ssu(1, 2);
    p.dstate = 256, p.state_stride_slot = 64 * 64 * 256, p.inter_stride_slot = 2LL * 64 * 64 * 256;
    p.state_dtype = LS_BF16;
    ls_plan pl = plan_ssu(&p, tuning, 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, k);
    LS_CHECK_EQ_INT(pl.nch, 2);
    p = ssu(1, 4);
    p.dstate = 64, p.state_stride_slot = 64 * 64 * 64, p.inter_stride_slot = 4LL * 64 * 64 * 64;
    LS_CHECK_EQ_INT(plan_ssu(&p, tuning, 132, 16).kernel, LS_K_SSU_GENERIC);
    p = ssu(1, 4);
    p.state = (char *)A16 + 8; /* fp32 state not 16-byte aligned */
    LS_CHECK_EQ_INT(plan_ssu(&p, tuning, 132, 16).kernel, LS_K_SSU_GENERIC);
    p = ssu(1, 4);
    p.Cm = (const uint16_t *)((char *)A16 + 2); /* C not 8-byte aligned */
    LS_CHECK_EQ_INT(plan_ssu(&p, tuning, 132, 16).kernel, LS_K_SSU_GENERIC);
}

/* ssu.variant: rows forced on the vector path (verify and decode, ds = 128 and 256), the tiles
 * forced, and the auto rule (ls_ssu_rows_auto) at its threshold. */
static void test_ssu_rows(void)
{
    /* B = 1, T = 4, ds = 128: 64 heads x 16 row blocks = 1024 warps in CTAs of 2 (< 4 x 2 x 132) */
    ls_ssu_params p = ssu(1, 4);
    ls_plan pl = plan_ssu(&p, "ssu.variant=rows", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_ROWS);
    LS_CHECK_EQ_INT(pl.nch, 1);
    LS_CHECK_EQ_INT(pl.rows_per_lane, 4);
    LS_CHECK_EQ_INT(pl.block, 64);
    LS_CHECK_EQ_INT(pl.grid_x, 512);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON); /* 512 CTAs: at most half of 16 x 132 slots, not of 7 x 132 */
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows", 132, 7).spec, LS_SPEC_OFF);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows,ssu.speculate=miss", 132, 0).spec, LS_SPEC_MISS);
    /* decode too; B = 8: 8192 warps in CTAs of 4; a head_dim not a multiple of 4 rounds up */
    p = ssu(8, 1);
    pl = plan_ssu(&p, "ssu.variant=rows", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_ROWS);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.grid_x, 8 * 64 * 16 / 4);
    p.head_dim = 62, p.state_stride_slot = 64 * 62 * 128;
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows", 132, 16).grid_x, 8 * 64 * 16 / 4);
    rows_shapes("ssu.variant=rows", LS_K_SSU_ROWS);

    /* auto never takes rows (rows8 took its place: test_ssu_rows8_auto); tiles never takes rows */
    for (int b = 1; b <= 512; b *= 2)
        for (int T = 1; T <= 4; T *= 4) {
            p = ssu(b, T);
            LS_CHECK(plan_ssu(&p, "", 132, 16).kernel != LS_K_SSU_ROWS);
            LS_CHECK(plan_ssu(&p, "ssu.variant=tiles", 132, 16).kernel != LS_K_SSU_ROWS);
        }
    p = ssu(1, 4);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles", 132, 16).kernel, LS_K_SSU_NARROW);

    /* the rule at a threshold of 8: up to B = 8 on the vector path, decode and verify */
    p = ssu(8, 4);
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 8), 1);
    p = ssu(9, 4);
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 8), 0);
    p = ssu(1, 2);
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 8), 1);
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 0), 0);
    p = ssu(1, 1);
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 8), 1);
    p = ssu(9, 1);
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 8), 0);
    p = ssu(1, 4);
    p.dstate = 64, p.state_stride_slot = 64 * 64 * 64, p.inter_stride_slot = 4LL * 64 * 64 * 64;
    LS_CHECK_EQ_INT(ls_ssu_rows_auto(&p, 8), 0);
}

/* ssu.variant=rows8: ssu_rows with 8 rows per warp, forced only (auto never takes it); its CTA
 * sizes and the automatic slot guess, which its half-as-many warps take up to B = 2 at 16
 * resident warps per SM (127 registers at fp32 verify, ds = 128: 4 CTAs of 128). */
static void test_ssu_rows8(void)
{
    /* (B, T = 4, resident CTAs per SM) -> block, grid, automatic guess. B = 1: 64 heads x 8 row
     * blocks = 512 warps, below 2 x 2 x 132: one warp per CTA, 512 CTAs <= half of 16 x 132
     * slots. B = 2: 1024 warps in CTAs of 2; the guess holds while its 512 CTAs are at most half
     * the slots (8 per SM, not 7). B = 4: 2048 warps in CTAs of 4, 512 CTAs: more than half of
     * 4 x 132 */
    static const int cases[][5] = {
        {1, 16, 32, 512, LS_SPEC_ON}, {2, 8, 64, 512, LS_SPEC_ON}, {2, 7, 64, 512, LS_SPEC_OFF},
        {4, 4, 128, 512, LS_SPEC_OFF},
    };
    ls_ssu_params p;
    ls_plan pl;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        p = ssu(cases[i][0], 4);
        pl = plan_ssu(&p, "ssu.variant=rows8", 132, cases[i][1]);
        LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_ROWS8);
        LS_CHECK_EQ_INT(pl.nch, 1);
        LS_CHECK_EQ_INT(pl.rows_per_lane, 8);
        LS_CHECK_EQ_INT(pl.block, cases[i][2]);
        LS_CHECK_EQ_INT(pl.grid_x, cases[i][3]);
        LS_CHECK_EQ_INT(pl.spec, cases[i][4]);
    }
    /* decode too; a head_dim not a multiple of 8 rounds its row blocks up (62 and 60: 8 blocks) */
    p = ssu(16, 1);
    pl = plan_ssu(&p, "ssu.variant=rows8", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_ROWS8);
    LS_CHECK_EQ_INT(pl.grid_x, 16 * 64 * 8 / 4);
    p.head_dim = 62, p.state_stride_slot = 64 * 62 * 128;
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows8", 132, 16).grid_x, 16 * 64 * 8 / 4);
    p.head_dim = 60, p.state_stride_slot = 64 * 60 * 128;
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows8", 132, 16).grid_x, 16 * 64 * 8 / 4);
    p.head_dim = 57, p.state_stride_slot = 64 * 57 * 128;
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows8", 132, 16).grid_x, 16 * 64 * 8 / 4);
    rows_shapes("ssu.variant=rows8", LS_K_SSU_ROWS8);

    /* rows and tiles never take it */
    for (int b = 1; b <= 512; b *= 2)
        for (int T = 1; T <= 8; T *= 2) {
            p = ssu(b, T);
            LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows", 132, 16).kernel, LS_K_SSU_ROWS);
            LS_CHECK(plan_ssu(&p, "ssu.variant=tiles", 132, 16).kernel != LS_K_SSU_ROWS8);
        }
}

/* auto (H200 A/B, choose.h): rows8 up to B = 128, decode and verify, the tiles above; decode with
 * the slot guess on whatever the residency, verify in CTAs of at most 2 warps (halved while the
 * grid would not give every SM two CTAs); ssu.block and ssu.speculate, when set, win. */
static void test_ssu_rows8_auto(void)
{
    LS_CHECK_EQ_INT(LS_SSU_ROWS8_MAX_BATCH, 128);
    LS_CHECK_EQ_INT(LS_SSU_ROWS8_VERIFY_WARPS, 2);
    for (int b = 1; b <= 512; b *= 2)
        for (int T = 1; T <= 8; T *= 2) {
            ls_ssu_params p = ssu(b, T);
            const ls_plan pl = plan_ssu(&p, "", 132, 1);
            LS_CHECK_EQ_INT(pl.kernel == LS_K_SSU_ROWS8, b <= 128);
            if (b > 128)
                continue;
            const int64_t warps = (int64_t)b * 64 * 8;
            if (T == 1) {
                LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON); /* 1 resident CTA per SM: the guess is forced */
                LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.speculate=off", 132, 1).spec, LS_SPEC_OFF);
            } else {
                LS_CHECK_EQ_INT(pl.block, warps < 2 * 2 * 132 ? 32 : 64);
                LS_CHECK_EQ_INT(pl.spec, LS_SPEC_OFF); /* by residency: 1 per SM here */
                LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.block=128", 132, 1).block, 128);
            }
        }
    /* B = 4 verify: 2048 warps in 1024 CTAs of 64 threads; decode keeps 128-thread CTAs */
    ls_ssu_params p = ssu(4, 4);
    LS_CHECK_EQ_INT(plan_ssu(&p, "", 132, 16).grid_x, 1024);
    p = ssu(4, 1);
    LS_CHECK_EQ_INT(plan_ssu(&p, "", 132, 16).block, 128);
    /* the generic shapes stay generic */
    p = ssu(1, 4);
    p.dstate = 64, p.state_stride_slot = 64 * 64 * 64, p.inter_stride_slot = 4LL * 64 * 64 * 64;
    LS_CHECK_EQ_INT(plan_ssu(&p, "", 132, 16).kernel, LS_K_SSU_GENERIC);
}

/* ssu.speculate=on / miss reach both rows kernels at every batch, decode and verify, whatever the
 * residency (the automatic guess stops at B = 2 for rows, at B = 4 for rows8: test_ssu_rows*). */
static void test_ssu_rows_forced_guess(void)
{
    static const char *const on[] = {"ssu.variant=rows,ssu.speculate=on", "ssu.variant=rows8,ssu.speculate=on"};
    static const char *const miss[] = {"ssu.variant=rows,ssu.speculate=miss",
                                       "ssu.variant=rows8,ssu.speculate=miss"};
    for (int k = 0; k < 2; k++)
        for (int b = 1; b <= 512; b *= 2)
            for (int T = 1; T <= 8; T *= 4) {
                ls_ssu_params p = ssu(b, T);
                ls_plan pl = plan_ssu(&p, on[k], 132, 1);
                LS_CHECK_EQ_INT(pl.kernel, k ? LS_K_SSU_ROWS8 : LS_K_SSU_ROWS);
                LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON);
                LS_CHECK_EQ_INT(plan_ssu(&p, miss[k], 132, 0).spec, LS_SPEC_MISS);
                if (b >= 2 && k == 0) /* the automatic guess is off here (file comment) */
                    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows", 132, 7).spec, LS_SPEC_OFF);
            }
}

/* ssu.block: the CTA size of the rows kernels (threads 32, 64, 128); the grid rounds up; the
 * tiles and the generic kernel keep their own. */
static void test_ssu_block(void)
{
    /* B = 1, T = 4, rows: 1024 warps; auto takes 64 threads */
    ls_ssu_params p = ssu(1, 4);
    ls_plan pl = plan_ssu(&p, "ssu.variant=rows,ssu.block=128", 132, 7);
    LS_CHECK_EQ_INT(pl.block, 128);
    LS_CHECK_EQ_INT(pl.grid_x, 256);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_ON); /* 256 CTAs <= half of 7 x 132 */
    pl = plan_ssu(&p, "ssu.variant=rows,ssu.block=32", 132, 7);
    LS_CHECK_EQ_INT(pl.block, 32);
    LS_CHECK_EQ_INT(pl.grid_x, 1024);
    LS_CHECK_EQ_INT(pl.spec, LS_SPEC_OFF); /* 1024 CTAs > half of 7 x 132 */
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.block=64", 132, 16).block, 64); /* auto takes rows8 here */
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.block=32", 132, 16).kernel, LS_K_SSU_ROWS8);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.block=32", 132, 16).block, 32);
    /* rows8, B = 8: 4096 warps; auto 128 threads */
    p = ssu(8, 4);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=rows8", 132, 4).block, 128);
    pl = plan_ssu(&p, "ssu.variant=rows8,ssu.block=32", 132, 16);
    LS_CHECK_EQ_INT(pl.block, 32);
    LS_CHECK_EQ_INT(pl.grid_x, 4096);
    pl = plan_ssu(&p, "ssu.variant=rows8,ssu.block=64", 132, 16);
    LS_CHECK_EQ_INT(pl.block, 64);
    LS_CHECK_EQ_INT(pl.grid_x, 2048);
    /* a grid that does not fill its last CTA: 3 heads x 2 row blocks (hd = 6) = 6 warps */
    p = ssu(1, 4);
    p.nheads = 3, p.ngroups = 1, p.head_dim = 6, p.state_stride_slot = 3 * 6 * 128;
    p.inter_stride_slot = 4LL * 3 * 6 * 128;
    pl = plan_ssu(&p, "ssu.variant=rows,ssu.block=128", 132, 16);
    LS_CHECK_EQ_INT(pl.grid_x, 2);
    pl = plan_ssu(&p, "ssu.variant=rows8,ssu.block=64", 132, 16); /* 3 warps of 8 rows */
    LS_CHECK_EQ_INT(pl.grid_x, 2);
    /* the tiles and the generic kernel ignore it */
    p = ssu(1, 1);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles,ssu.block=128", 132, 16).block, 32); /* narrow, one warp per CTA */
    p = ssu(512, 1);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.block=32", 132, 16).block, 128);
    p = ssu(1, 4);
    LS_CHECK_EQ_INT(plan_ssu(&p, "ssu.variant=tiles,ssu.block=128", 132, 16).block,
                    plan_ssu(&p, "ssu.variant=tiles", 132, 16).block);
    p.dstate = 64, p.state_stride_slot = 64 * 64 * 64, p.inter_stride_slot = 4LL * 64 * 64 * 64;
    pl = plan_ssu(&p, "ssu.variant=rows,ssu.block=32", 132, 16);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_SSU_GENERIC);
    LS_CHECK_EQ_INT(pl.block, plan_ssu(&p, "", 132, 16).block);
}

/* ------------------------------------------------------------------ state ops */

static void test_state(void)
{
    ls_state_params p;
    memset(&p, 0, sizeof p);
    p.n_buffers = 2, p.layers = 36, p.slots = 1025, p.spec_tokens = 4, p.count = 4;
    p.buf[0].main = A16, p.buf[0].item_bytes = 24576;              /* conv: 1536 vectors, 2 chunks */
    p.buf[1].main = A16, p.buf[1].item_bytes = 1 << 20, p.buf[1].spec = A16; /* 65536 vectors, 64 */
    p.src = A16, p.dst = A16, p.step = A16;
    ls_plan pl;
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_STATE_OP);
    LS_CHECK_EQ_INT(pl.vec_bytes, 16);
    LS_CHECK_EQ_INT(pl.unroll, 2); /* auto: one block per chunk, 8 KB chunks */
    LS_CHECK_EQ_INT(pl.chunks, 36 * 4 * (3 + 128));
    LS_CHECK_EQ_INT(pl.grid_x, 36 * 4 * (3 + 128));
    LS_CHECK_EQ_INT(pl.block, 256);
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_ACCEPT, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.chunks, 36 * 4 * 128); /* accept skips buffers without spec */
    LS_CHECK_EQ_INT(pl.grid_x, 36 * 4 * 128);
    ls_tuning full = tune("state.grid=full");
    LS_CHECK_EQ_INT(full.v[LS_KNOB_STATE_GRID], LS_SGRID_FULL);
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_ACCEPT, &full, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.grid_x, 36 * 4 * 128);
    /* state.grid=persist: 16 KB chunks (unroll 4, its auto): 9504 over at most 1056 blocks, 9
     * rounds, 1056 blocks */
    ls_tuning pers = tune("state.grid=persist");
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, &pers, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 4);
    LS_CHECK_EQ_INT(pl.chunks, 36 * 4 * (2 + 64));
    LS_CHECK_EQ_INT(pl.grid_x, 1056);
    LS_CHECK_EQ_INT(pl.block, 256);
    LS_CHECK_EQ_INT(pl.vec_bytes, 16);
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_ACCEPT, &pers, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.grid_x, 1024); /* 9216 chunks in 9 rounds */
    /* state.unroll=1: 4 KB chunks, four times as many (24 KB conv items: 6 instead of 2) */
    ls_tuning u1 = tune("state.unroll=1");
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, &u1, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 1);
    LS_CHECK_EQ_INT(pl.chunks, 36 * 4 * (6 + 256));
    LS_CHECK_EQ_INT(pl.grid_x, 36 * 4 * (6 + 256));
    ls_tuning u2 = tune("state.grid=persist,state.unroll=2");
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_ACCEPT, &u2, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 2);
    LS_CHECK_EQ_INT(pl.chunks, 36 * 4 * 128);
    LS_CHECK_EQ_INT(pl.grid_x, 1024); /* 18432 chunks in 18 rounds */
    ls_tuning u2a = tune("state.unroll=2");
    /* auto at up to 2 persistent rounds of 16 KB chunks (2112 on 132 SMs) keeps the persistent
     * grid and its unroll 4: 20 layers x 1 row x 66 chunks = 1320 chunks, 2 rounds of 660
     * blocks; 36 layers (2376 chunks, 3 rounds) take one block per 8 KB chunk */
    p.layers = 20, p.count = 1;
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 4);
    LS_CHECK_EQ_INT(pl.chunks, 1320);
    LS_CHECK_EQ_INT(pl.grid_x, 660);
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, &full, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 2);
    LS_CHECK_EQ_INT(pl.grid_x, 20 * 131);
    /* a forced unroll does not move the switch (it counts 16 KB chunks): unroll 2 keeps the
     * persistent grid here, 2620 chunks in 3 rounds of 874 blocks */
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, &u2a, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 2);
    LS_CHECK_EQ_INT(pl.chunks, 2620);
    LS_CHECK_EQ_INT(pl.grid_x, 874);
    p.layers = 32; /* 2112 chunks: still 2 rounds */
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.grid_x, 1056);
    p.layers = 36;
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 2);
    LS_CHECK_EQ_INT(pl.grid_x, 36 * 131);
    p.count = 4;
    ls_tuning u8 = tune("state.unroll=8");
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, &u8, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.unroll, 8);
    LS_CHECK_EQ_INT(pl.chunks, 36 * 4 * (1 + 32)); /* a 24 KB item fits one 32 KB chunk */
    p.buf[0].item_bytes = 24574;
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_ZERO, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.vec_bytes, 2);
    p.count = 0;
    LS_CHECK_EQ_INT(ls_choose_state(&p, LS_OP_STATE_COPY, NULL, &H200, &pl), 0);
    LS_CHECK_EQ_INT(pl.kernel, LS_K_NONE);
    LS_CHECK(ls_choose_state(&p, LS_OP_GDN, NULL, &H200, &pl) != 0);
}

/* ------------------------------------------------------------------ knobs, description */

static void test_knobs(void)
{
    const ls_impl *im = impl();
    ls_tuning t0;
    ls_tuning_default(im, &t0);
    LS_CHECK_EQ_INT(ls_knob_index(im, "pdl"), LS_KNOB_PDL);
    LS_CHECK_EQ_INT(ls_knob_index(im, "conv.variant"), LS_KNOB_CONV_VARIANT);
    LS_CHECK_EQ_INT(ls_knob_index(im, "conv.prefetch"), LS_KNOB_CONV_PREFETCH);
    LS_CHECK_EQ_INT(ls_knob_index(im, "conv.speculate"), LS_KNOB_CONV_SPECULATE);
    LS_CHECK_EQ_INT(ls_knob_index(im, "delta.variant"), LS_KNOB_DELTA_VARIANT);
    LS_CHECK_EQ_INT(ls_knob_index(im, "ssu.speculate"), LS_KNOB_SSU_SPECULATE);
    LS_CHECK_EQ_INT(ls_knob_index(im, "ssu.variant"), LS_KNOB_SSU_VARIANT);
    LS_CHECK_EQ_INT(tune("ssu.variant=tiles").v[LS_KNOB_SSU_VARIANT], LS_SSU_TILES);
    LS_CHECK_EQ_INT(tune("ssu.variant=rows").v[LS_KNOB_SSU_VARIANT], LS_SSU_ROWS);
    LS_CHECK_EQ_INT(tune("ssu.variant=rows8").v[LS_KNOB_SSU_VARIANT], LS_SSU_ROWS8);
    LS_CHECK_EQ_INT(ls_knob_index(im, "ssu.block"), LS_KNOB_SSU_BLOCK);
    LS_CHECK_EQ_INT(tune("ssu.block=32").v[LS_KNOB_SSU_BLOCK], LS_SBLK_32);
    LS_CHECK_EQ_INT(tune("ssu.block=64").v[LS_KNOB_SSU_BLOCK], LS_SBLK_64);
    LS_CHECK_EQ_INT(tune("ssu.block=128").v[LS_KNOB_SSU_BLOCK], LS_SBLK_128);
    LS_CHECK_EQ_INT(ls_knob_index(im, "conv_delta.variant"), LS_KNOB_CONV_DELTA_VARIANT);
    LS_CHECK_EQ_INT(tune("conv_delta.variant=cluster").v[LS_KNOB_CONV_DELTA_VARIANT], LS_CD_CLUSTER);
    LS_CHECK_EQ_INT(tune("conv_delta.variant=tiles").v[LS_KNOB_CONV_DELTA_VARIANT], LS_CD_TILES);
    LS_CHECK(ls_tuning_parse(im, "conv_delta.variant=narrow", &t0) != 0);
    LS_CHECK(strstr(ls_last_error(), "conv_delta.variant") != NULL);

    /* value indices match the enums of choose.h */
    ls_tuning t = tune("conv.variant=scalar,delta.variant=bulk,ssu.speculate=miss,conv.speculate=miss,pdl=off");
    LS_CHECK_EQ_INT(t.v[LS_KNOB_CONV_VARIANT], LS_CONV_SCALAR);
    LS_CHECK_EQ_INT(t.v[LS_KNOB_DELTA_VARIANT], LS_DELTA_BULK);
    LS_CHECK_EQ_INT(t.v[LS_KNOB_SSU_SPECULATE], LS_SSPEC_MISS);
    LS_CHECK_EQ_INT(t.v[LS_KNOB_CONV_SPECULATE], LS_CSPEC_MISS);
    LS_CHECK_EQ_INT(t.v[LS_KNOB_PDL], LS_PDL_OFF);
    t = tune("delta.variant=vk4");
    LS_CHECK_EQ_INT(t.v[LS_KNOB_DELTA_VARIANT], LS_DELTA_VK4);
    t = tune("delta.variant=vk8");
    LS_CHECK_EQ_INT(t.v[LS_KNOB_DELTA_VARIANT], LS_DELTA_VK8);
    t = tune("delta.variant=split");
    LS_CHECK_EQ_INT(t.v[LS_KNOB_DELTA_VARIANT], LS_DELTA_SPLIT);
    t = tune("delta.variant=split2");
    LS_CHECK_EQ_INT(t.v[LS_KNOB_DELTA_VARIANT], LS_DELTA_SPLIT2);
    t = tune("conv.variant=vec2,conv.variant=vec8,conv.variant=tile");
    LS_CHECK_EQ_INT(t.v[LS_KNOB_CONV_VARIANT], LS_CONV_TILE);
    LS_CHECK_EQ_INT(tune("conv.variant=pair").v[LS_KNOB_CONV_VARIANT], LS_CONV_PAIR);
    LS_CHECK_EQ_INT(tune("conv.variant=quad").v[LS_KNOB_CONV_VARIANT], LS_CONV_QUAD);
    LS_CHECK_EQ_INT(tune("conv.variant=wlat").v[LS_KNOB_CONV_VARIANT], LS_CONV_WLAT);
    /* indices recorded by earlier rows keep their meaning: wlat came last */
    LS_CHECK_EQ_INT(LS_CONV_QUAD, 6);
    LS_CHECK_EQ_INT(LS_CONV_WLAT, 7);
    LS_CHECK_EQ_INT(LS_SSU_ROWS, 2);
    LS_CHECK_EQ_INT(LS_SSU_ROWS8, 3);

    char buf[512];
    ls_tuning d;
    ls_tuning_default(im, &d);
    LS_CHECK(ls_tuning_string(im, &d, buf, sizeof buf) > 0);
    LS_CHECK(strcmp(buf, "pdl=on,conv.variant=auto,conv.prefetch=auto,conv.speculate=on,delta.variant=auto,"
                         "ssu.speculate=auto,ssu.variant=auto,ssu.block=auto,conv_delta.variant=auto,state.grid=auto,"
                         "state.unroll=auto,delta.ahead=auto") == 0);

    /* unknown values and removed variants fail, naming them */
    ls_tuning_default(im, &t);
    LS_CHECK(ls_tuning_parse(im, "delta.variant=persist", &t) != 0);
    LS_CHECK(strstr(ls_last_error(), "persist") != NULL);
    LS_CHECK(strstr(ls_last_error(), "delta.variant") != NULL);
    LS_CHECK(ls_tuning_parse(im, "conv.variant=pipe", &t) != 0);
    LS_CHECK(strstr(ls_last_error(), "pipe") != NULL);
    LS_CHECK(ls_tuning_parse(im, "conv.variant=tile2", &t) != 0);
    LS_CHECK(ls_tuning_parse(im, "ssu.variant=narrow", &t) != 0); /* removed before ssu_rows */
    LS_CHECK(strstr(ls_last_error(), "narrow") != NULL);
    LS_CHECK(strstr(ls_last_error(), "ssu.variant") != NULL);
    LS_CHECK(ls_tuning_parse(im, "ssu.block=256", &t) != 0); /* above the rows kernels' launch bounds */
    LS_CHECK(strstr(ls_last_error(), "256") != NULL);
    LS_CHECK(strstr(ls_last_error(), "ssu.block") != NULL);
    LS_CHECK(ls_tuning_parse(im, "ssu.block=96", &t) != 0);
    LS_CHECK_EQ_INT(t.v[LS_KNOB_DELTA_VARIANT], 0); /* failed parses left it alone */

    /* ls_tune_get: NULL and short tunings read as defaults */
    LS_CHECK_EQ_INT(ls_tune_get(NULL, LS_KNOB_PDL), 0);
    t = tune("ssu.speculate=off");
    LS_CHECK_EQ_INT(ls_tune_get(&t, LS_KNOB_SSU_SPECULATE), LS_SSPEC_OFF);
    t.n = LS_KNOB_SSU_SPECULATE;
    LS_CHECK_EQ_INT(ls_tune_get(&t, LS_KNOB_SSU_SPECULATE), 0);

#ifdef LS_HAVE_CUDA
    const ls_impl *ls = ls_impl_get("linstate");
    LS_CHECK(ls != NULL);
    if (ls) {
        LS_CHECK(ls->knobs == ls_linstate_knobs);
        LS_CHECK_EQ_INT(ls->n_knobs, LS_KNOB_COUNT);
        LS_CHECK(ls->explain != NULL);
    }
#endif
}

static void test_describe(void)
{
    char buf[256];
    ls_conv_params c = conv(1, 1);
    ls_plan pl = plan_conv(&c, "");
    LS_CHECK(ls_choose_describe(LS_OP_CONV_UPDATE, &pl, buf, sizeof buf) > 0);
    check_describe(LS_OP_CONV_UPDATE, &pl, "conv_vec2 grid=(16,1) block=128 pdl spec=on");
    c = conv(512, 1);
    pl = plan_conv(&c, "pdl=off,conv.prefetch=off");
    check_describe(LS_OP_CONV_UPDATE, &pl, "conv_cm_tile grid=(2048,1) block=128 prefetch=off");
    c = conv(2, 4);
    c.state_stride_c = 1, c.state_stride_w = 4096;
    pl = plan_conv(&c, "conv.variant=pair");
    check_describe(LS_OP_CONV_UPDATE, &pl, "conv_pair grid=(16,2) block=128 pdl spec=on state=wmaj inter=cmaj");
    c = conv(2, 4);
    c.state_stride_c = 1, c.state_stride_w = 4096;
    pl = plan_conv(&c, "conv.variant=quad,pdl=off");
    check_describe(LS_OP_CONV_UPDATE, &pl, "conv_quad grid=(8,2) block=128 spec=on state=wmaj inter=cmaj");
    c = conv_kimi(1, 1);
    pl = plan_conv(&c, "conv.variant=wlat");
    check_describe(LS_OP_CONV_UPDATE, &pl, "conv_wlat grid=(8,1) block=128 pdl prefetch spec=on state=wmaj inter=cmaj");
    pl = plan_conv(&c, "conv.variant=wlat,conv.prefetch=off,conv.speculate=off");
    check_describe(LS_OP_CONV_UPDATE, &pl, "conv_wlat grid=(8,1) block=128 pdl prefetch=off spec=off state=wmaj inter=cmaj");
    ls_delta_params d = delta(512, 1);
    LS_CHECK_EQ_INT(ls_choose(LS_OP_KDA, &d, NULL, &H200, &pl), 0);
    check_describe(LS_OP_KDA, &pl, "delta_bulk grid=(8192,1) block=256 pdl");
    d.state_layout = LS_STATE_VK;
    LS_CHECK_EQ_INT(ls_choose(LS_OP_GDN, &d, NULL, &H200, &pl), 0);
    check_describe(LS_OP_GDN, &pl, "delta_vk8 grid=(32768,1) block=128 pdl");
    d.tokens = 4;
    pl = plan_delta(&d, 0, "delta.ahead=on");
    check_describe(LS_OP_GDN, &pl, "delta_vk4 grid=(65536,1) block=128 pdl ahead");
    LS_CHECK_EQ_INT(ls_choose(LS_OP_KDA, &d, NULL, &H200, &pl), 0);
    check_describe(LS_OP_KDA, &pl, "delta_vk8 grid=(32768,1) block=128 pdl ahead");
    d = delta(1, 2);
    pl = plan_delta(&d, 1, "delta.variant=split");
    check_describe(LS_OP_KDA, &pl, "delta_rule_split grid=(128,1) block=128 pdl");
    ls_conv_delta_params cd = conv_delta(1, 4, 16, 1);
    LS_CHECK_EQ_INT(ls_choose(LS_OP_CONV_DELTA, &cd, NULL, &H200, &pl), 0); /* auto: the tiles */
    check_describe(LS_OP_CONV_DELTA, &pl, "conv_delta_tiles grid=(16,8) block=256 pdl cluster=8");
    pl = plan_cd(&cd, "conv_delta.variant=cluster");
    check_describe(LS_OP_CONV_DELTA, &pl, "conv_delta grid=(16,4) block=128 pdl cluster=4");
    pl = plan_cd(&cd, "conv_delta.variant=tiles");
    check_describe(LS_OP_CONV_DELTA, &pl, "conv_delta_tiles grid=(16,8) block=256 pdl cluster=8");
    ls_ssu_params s = ssu(1, 1);
    pl = plan_ssu(&s, "ssu.variant=tiles,ssu.speculate=miss", 132, 0);
    check_describe(LS_OP_SSU, &pl, "ssu_narrow grid=(512,1) block=32 pdl spec=miss rows/lane=2");
    s = ssu(1, 4);
    static const char *const rows[][2] = {
        {"ssu.variant=rows", "ssu_rows grid=(512,1) block=64 pdl spec=on rows/lane=4"},
        {"ssu.variant=rows8,ssu.block=64", "ssu_rows8 grid=(256,1) block=64 pdl spec=on rows/lane=8"},
    };
    for (int i = 0; i < 2; i++) {
        pl = plan_ssu(&s, rows[i][0], 132, 16);
        check_describe(LS_OP_SSU, &pl, rows[i][1]);
    }
    pl = plan_ssu(&s, "ssu.speculate=miss,ssu.variant=tiles", 132, 0);
    /* cut to the buffer */
    LS_CHECK_EQ_INT(ls_choose_describe(LS_OP_SSU, &pl, buf, 6), 5);
    LS_CHECK(strcmp(buf, "ssu_n") == 0);
}

int main(void)
{
    test_conv();
    test_conv_wlat();
    test_delta();
    test_delta_split();
    test_conv_delta();
    test_conv_delta_bulk();
    test_conv_delta_bulkp();
    test_ssu();
    test_ssu_rows();
    test_ssu_rows8();
    test_ssu_rows8_auto();
    test_ssu_rows_forced_guess();
    test_ssu_block();
    test_state();
    test_knobs();
    test_describe();
    return ls_test_exit();
}
