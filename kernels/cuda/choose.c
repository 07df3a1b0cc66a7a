/*
 * choose.c — the kernel choice of every op of the "linstate" impl as pure host functions (see
 * choose.h), and the impl's knob table. Plain C: compiled in every build, CUDA or not.
 *
 * The per-shape rules (auto values) follow the A/B measurements logged in
 * results/h200/kernels.md; each rule below names what it chooses between and why.
 */
#include "choose.h"

#include <stdio.h>

const ls_knob_def ls_linstate_knobs[LS_KNOB_COUNT] = {
    [LS_KNOB_PDL] = {"pdl", "on|off",
                     "programmatic dependent launch: each kernel overlaps its start with the previous kernel of the stream"},
    [LS_KNOB_CONV_VARIANT] = {"conv.variant", "auto|vec2|vec8|tile|scalar|pair|quad|wlat",
                              "conv update kernel (auto, channel-major state: vec2 for small-batch decode, vec8 below "
                              "B = 64, tile above; pair for verify up to B = 16 (T >= 8: up to 128), tile above; "
                              "window-major state: wlat up to B = 512 (verify 128), pair / quad beyond; a forced kernel that does not fit the shape falls back to vec8, then "
                              "scalar; scalar: the fallback kernel everywhere, for tests; pair / quad: 2 / 4 channels "
                              "per thread with every token's x loaded at once, any T, either state orientation, either "
                              "weight dtype; wlat: window-major state up to T = 8, every load of a row issued before "
                              "any use (auto: window-major decode up to B = 512, verify up to B = 128); where it does "
                              "not fit, the auto choice)"},
    [LS_KNOB_CONV_PREFETCH] = {"conv.prefetch", "auto|on|off",
                               "conv tile / wlat kernels: prefetch what the rows read (tile: the state; wlat: state, "
                               "x, weights) into L2 before the PDL wait (auto: tile on; wlat on up to B = 32, off "
                               "above)"},
    [LS_KNOB_CONV_SPECULATE] = {"conv.speculate", "on|off|miss",
                                "conv vec2/vec8/pair/quad/wlat: guess each row's slot before the PDL wait (needs "
                                "params.slots; miss: every guess wrong, for tests of the reload path)"},
    [LS_KNOB_DELTA_VARIANT] = {"delta.variant", "auto|regs|bulk|vk4|vk8|split|split2",
                               "GDN/KDA kernel. kv layout, large batch: regs or bulk (auto: bulk from 16 heads per SM, "
                               "register tiles below); vk layout: vk4 or vk8 value rows per warp (auto: decode vk8 from 8 such "
                               "warps per SM, vk4 below; verify: GDN vk4, KDA with an fp32 state vk8 from 5 such warps "
                               "per SM). split / split2 (kv layout, K = V = 128, every batch): each 16-column tile over "
                               "4 / 2 warps along K, for small batches (auto, verify: split for KDA below 3 NARROW warps "
                               "per SM, split2 from 6 to 24 unless the WIDE tiles serve and "
                               "their last wave of 12 warps per SM is at least 33 % full). A value of the other layout "
                               "means auto; split(2) on other shapes: auto"},
    [LS_KNOB_SSU_SPECULATE] = {"ssu.speculate", "auto|on|off|miss",
                               "SSU: guess the slot and prefetch the state before the PDL wait (auto: when the grid "
                               "takes at most half the resident CTA slots; miss: every guess wrong, for tests)"},
    [LS_KNOB_SSU_VARIANT] = {"ssu.variant", "auto|tiles|rows|rows8",
                             "SSU kernel on the vector path (ds = 128 or 256, aligned): tiles = the wide / narrow "
                             "register tiles; rows = ssu_rows, 4 rows per warp with the next token's inputs loaded "
                             "ahead, decode and verify; rows8 = the same with 8 rows per warp (auto: rows8 up "
                             "to B = 128, decode with the slot guess on, verify in CTAs of 2 warps; tiles above)"},
    [LS_KNOB_SSU_BLOCK] = {"ssu.block", "auto|32|64|128",
                           "SSU rows / rows8 kernels: threads per CTA (auto: 128, 64 for auto's rows8 verify, "
                           "halved while the grid would not give every SM two CTAs); the tiles and the generic "
                           "kernel ignore it"},
    [LS_KNOB_CONV_DELTA_VARIANT] = {"conv_delta.variant", "auto|cluster|tiles|bulk|bulkp",
                                    "fused conv + GDN/KDA kernel: cluster = a cluster of CTAs per (row, key head), 4 "
                                    "lanes per value column; tiles = the same clusters, the conv in a per-CTA prologue "
                                    "into shared memory, then 1 warp per 16-column NARROW tile of the GDN/KDA op "
                                    "(vector state accesses; K <= 128, G*V/16 tiles per key head at most 64, else "
                                    "cluster); bulk = one CTA per (row, value head): the head's state pulled by bulk "
                                    "copies while the CTA runs the conv, then delta_bulk's math (where the bulk GDN/KDA "
                                    "kernel serves: K = V = 128 aligned, bf16 state decode only; G <= 8, T <= 16; else "
                                    "auto); bulkp = bulk with every load of its conv and gate prologue issued "
                                    "before any use and vector weight loads (the same shapes; else auto) (auto: "
                                    "bulkp with an fp32 state for decode and for verify from 3 CTAs (B*HV) per SM, "
                                    "tiles elsewhere on the vector path, K = V = 128 aligned; cluster otherwise)"},
    [LS_KNOB_STATE_GRID] = {"state.grid", "auto|full|persist",
                            "pool state ops (copy, accept, zero): full = one CTA per chunk, the hardware "
                            "schedules them; persist = a grid of at most 8 CTAs per SM walking the chunks "
                            "(auto: persist while 16 KB chunks fill at most 2 of its rounds, full above)"},
    [LS_KNOB_STATE_UNROLL] = {"state.unroll", "auto|1|2|4|8",
                              "pool state ops: vectors each thread moves per chunk, a chunk being 256 threads times "
                              "that (auto: 2, 8 KB chunks of 16-byte vectors, with one CTA per chunk; 4, 16 KB, under the "
                              "persistent grid)"},
    [LS_KNOB_DELTA_AHEAD] = {"delta.ahead", "auto|on|off",
                             "GDN/KDA verify on the vk layout: on = each token's activations loaded one token "
                             "ahead, under the previous token's work, and every state row stored as one vector "
                             "store; off = each token's loads at its start (decode and the kv layout ignore it; "
                             "auto, fp32 state: on with 4 rows per warp below 10 warps per SM, and for KDA from "
                             "80 warps per SM; KDA with 8 rows per warp always)"},
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }
static int mult8(int64_t v) { return (v & 7) == 0; }

static void plan_init(ls_plan *out, const ls_tuning *t)
{
    memset(out, 0, sizeof *out);
    out->kernel = LS_K_NONE;
    out->grid_x = out->grid_y = 1;
    out->pdl = ls_tune_get(t, LS_KNOB_PDL) == LS_PDL_ON;
    out->spec = LS_SPEC_OFF;
}

/* ------------------------------------------------------------------ conv update */

/* Orientation of a [C, W-1] view usable by the 8-channel kernels: 0 channel-major (contiguous),
 * 1 window-major (channel stride 1, column stride a multiple of 8), -1 neither. */
static int vec_orient(int64_t stride_c, int64_t stride_w, int W)
{
    if (stride_w == 1 && stride_c == W - 1)
        return 0;
    if (stride_c == 1 && mult8(stride_w))
        return 1;
    return -1;
}

int ls_conv_vec_ok(const ls_conv_params *p, int *state_wmaj, int *inter_wmaj)
{
    *state_wmaj = *inter_wmaj = 0;
    if (p->state_dtype != LS_BF16 || p->channels % 8 != 0)
        return 0;
    if (p->x_stride_c != 1 || p->y_stride_c != 1 || !mult8(p->x_stride_b) || !mult8(p->x_stride_t) ||
        !mult8(p->y_stride_b) || !mult8(p->y_stride_t))
        return 0;
    if (!aligned(p->x, 16) || !aligned(p->y, 16) || !aligned(p->weight, 16) || (p->bias && !aligned(p->bias, 16)))
        return 0;
    const int swm = vec_orient(p->state_stride_c, p->state_stride_w, p->width);
    if (swm < 0 || !aligned(p->state, 16) || !mult8(p->state_stride_slot))
        return 0;
    int iwm = 0;
    if (p->inter) {
        iwm = vec_orient(p->inter_stride_c, p->inter_stride_w, p->width);
        if (iwm < 0 || !aligned(p->inter, 16) || !mult8(p->inter_stride_slot) || !mult8(p->inter_stride_t))
            return 0;
    }
    *state_wmaj = swm, *inter_wmaj = iwm;
    return 1;
}

/* Grid of the per-row vector kernels: blocks of up to 128 threads over the channel groups (a
 * multiple of 32 that covers them when C is small), one block row per request row (the kernels
 * loop over rows past 65535). */
static void conv_row_grid(const ls_conv_params *p, int32_t groups, ls_plan *out)
{
    const int threads = groups >= 128 ? 128 : (int)ceil_div(groups, 32) * 32;
    out->groups = groups;
    out->block = threads;
    out->grid_x = (uint32_t)ceil_div(groups, threads);
    out->grid_y = (uint32_t)(p->batch < 65535 ? p->batch : 65535);
}

int ls_conv_wlat_ok(const ls_conv_params *p)
{
    int swm = 0, iwm = 0;
    return ls_conv_vec_ok(p, &swm, &iwm) && swm && p->tokens <= LS_CONV_WLAT_MAX_TOKENS;
}

int ls_conv_wlat_auto(const ls_conv_params *p, int max_b_decode, int max_b_verify)
{
    return ls_conv_wlat_ok(p) && p->batch <= (p->tokens == 1 ? max_b_decode : max_b_verify);
}

/*
 * auto, channel-major state and inter (measured on the H200, results/h200/kernels.md: "conv_vec2"
 * and the first-session conv table): conv_vec2 for single-token decode with bf16 weights up to
 * B = 16 (one dependent chain: more threads with less math each), conv_vec8 below B = 64, the
 * warp-tile kernel from B = 64 and for every verify (coalesced 512-byte warp accesses).
 * Window-major state or inter: conv_vec8 (the other vector kernels are channel-major only).
 * conv_pair / conv_quad (conv.variant=pair / quad) serve every shape the vector path takes. From
 * the H200 A/B (results/h200/kernels-e3a6ef2/): auto takes pair for channel-major verify at
 * B <= 16 (and T >= 8 up to B = 128), and for window-major state pair below B = 64, quad from it
 * (both beat vec8 there at every batch, by 1.2-2.8x for verify).
 * conv_wlat (window-major state, T <= 8): auto takes it up to LS_CONV_WLAT_MAX_B_DECODE /
 * _VERIFY rows (choose.h: the H200 A/B), its prefetch under conv.prefetch=auto up to
 * LS_CONV_WLAT_PREFETCH_MAX_B rows; forced, it serves the shapes of ls_conv_wlat_ok and leaves
 * the others to the auto choice.
 */
static int conv_auto(const ls_conv_params *p, int cm, int vec2_ok)
{
    if (ls_conv_wlat_auto(p, LS_CONV_WLAT_MAX_B_DECODE, LS_CONV_WLAT_MAX_B_VERIFY))
        return LS_CONV_WLAT;
    return !cm ? (p->batch < 64 ? LS_CONV_PAIR : LS_CONV_QUAD)
           : p->tokens > 1 ? ((p->batch <= 16 || (p->tokens >= 8 && p->batch <= 128)) ? LS_CONV_PAIR : LS_CONV_TILE)
           : (p->batch <= 16 && vec2_ok) ? LS_CONV_VEC2
           : p->batch < 64 ? LS_CONV_VEC8 : LS_CONV_TILE;
}

int ls_choose_conv(const ls_conv_params *p, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out)
{
    plan_init(out, t);
    if (p->width < 2 || p->width > 4)
        return ls_fail("conv_update: width=%d not in 2..4", p->width);
    if ((int64_t)p->batch * p->channels > INT32_MAX)
        return ls_fail("conv_update: batch*channels=%lld exceeds 2^31-1", (long long)p->batch * p->channels);
    int v = ls_tune_get(t, LS_KNOB_CONV_VARIANT);
    int swm = 0, iwm = 0;
    if (v == LS_CONV_SCALAR || !ls_conv_vec_ok(p, &swm, &iwm)) {
        out->kernel = LS_K_CONV_SCALAR;
        out->groups = p->channels;
        out->block = 256;
        out->grid_x = (uint32_t)ceil_div((int64_t)p->batch * p->channels, 256);
        return 0;
    }
    out->state_wmaj = swm, out->inter_wmaj = iwm;
    const int cm = !swm && !(p->inter && iwm);
    const int vec2_ok = cm && p->tokens == 1 && !p->inter && p->weight_dtype == LS_BF16;
    if (v == LS_CONV_AUTO || (v == LS_CONV_WLAT && !ls_conv_wlat_ok(p)))
        v = conv_auto(p, cm, vec2_ok);
    if ((v == LS_CONV_VEC2 && !vec2_ok) || (v == LS_CONV_TILE && !cm))
        v = LS_CONV_VEC8;
    if (v == LS_CONV_TILE) {
        out->kernel = LS_K_CONV_TILE;
        out->groups = (int32_t)ceil_div(p->channels, LS_CONV_TILE_CHANNELS);
        out->block = 128; /* 4 warps, one tile each */
        out->grid_x = (uint32_t)ceil_div((int64_t)p->batch * out->groups, 4);
        out->prefetch = ls_tune_get(t, LS_KNOB_CONV_PREFETCH) != LS_CPF_OFF;
        return 0;
    }
    out->kernel = v == LS_CONV_VEC2 ? LS_K_CONV_VEC2
                  : v == LS_CONV_PAIR ? LS_K_CONV_PAIR
                  : v == LS_CONV_QUAD ? LS_K_CONV_QUAD
                  : v == LS_CONV_WLAT ? LS_K_CONV_WLAT
                                      : LS_K_CONV_VEC8;
    conv_row_grid(p, p->channels / (v == LS_CONV_VEC8 ? 8 : v == LS_CONV_QUAD ? 4 : 2), out);
    if (v == LS_CONV_WLAT) {
        const int pf = ls_tune_get(t, LS_KNOB_CONV_PREFETCH);
        out->prefetch = pf == LS_CPF_ON || (pf == LS_CPF_AUTO && p->batch <= LS_CONV_WLAT_PREFETCH_MAX_B);
    }
    const int s = ls_tune_get(t, LS_KNOB_CONV_SPECULATE);
    out->spec = p->slots <= 0 ? LS_SPEC_OFF : s == LS_CSPEC_OFF ? LS_SPEC_OFF : s == LS_CSPEC_MISS ? LS_SPEC_MISS
                                                                                                   : LS_SPEC_ON;
    (void)dev;
    return 0;
}

/* ------------------------------------------------------------------ delta rule (GDN, KDA) */

int ls_delta_fast_ok(const ls_delta_params *p, int per_row)
{
    const size_t es = ls_dtype_size(p->state_dtype);
    const size_t sv = 4 * es; /* bytes of one lane's 4 state columns */
    int ok = p->dk == LS_DELTA_DIM_FAST && p->dv == LS_DELTA_DIM_FAST;
    ok = ok && aligned(p->state, sv) && (p->state_stride_slot * (int64_t)es) % (int64_t)sv == 0;
    ok = ok && (!p->inter || (aligned(p->inter, sv) && (p->inter_stride_slot * (int64_t)es) % (int64_t)sv == 0));
    ok = ok && aligned(p->q, 16) && aligned(p->k, 16);
    ok = ok && aligned(p->v, 8) && aligned(p->o, 8);
    ok = ok && (!per_row || (aligned(p->a, 16) && aligned(p->dt_bias, 16)));
    return ok;
}

/* The bulk kernel holds the state between tokens in the state dtype, so a bf16 state would be
 * rounded at every token where the contract keeps fp32: bf16 takes it for decode only. */
int ls_delta_bulk_ok(const ls_delta_params *p, int per_row)
{
    const int64_t es = (int64_t)ls_dtype_size(p->state_dtype);
    int ok = ls_delta_fast_ok(p, per_row) && (p->state_dtype == LS_F32 || p->tokens == 1);
    ok = ok && aligned(p->state, 16) && (p->state_stride_slot * es) % 16 == 0;
    ok = ok && (!p->inter || (aligned(p->inter, 16) && (p->inter_stride_slot * es) % 16 == 0));
    return ok && (int64_t)p->batch * p->heads_v <= 0x7fffffffLL;
}

/* Warps per CTA (a multiple of kw, at most 4): fewer when the work would not give every SM at
 * least two CTAs. -1 when the CTA count overflows the grid. */
static int pick_cta(int64_t warps_total, int kw, int sms, ls_plan *out)
{
    int w = 4;
    while (w > kw && warps_total < (int64_t)w * 2 * sms)
        w /= 2;
    const int64_t b = ceil_div(warps_total, w);
    if (b > 0x7fffffffLL)
        return -1;
    out->block = 32 * w;
    out->grid_x = (uint32_t)b;
    return 0;
}

/*
 * vk layout (delta_vk.cuh): warps of R value rows. Vector path (the kv conditions: K = V = 128,
 * aligned): decode takes R = 8 once that gives every SM LS_DELTA_VK8_MIN_WARPS_PER_SM warps,
 * R = 4 below (twice the warps for the small batches, whose time is latency, not bandwidth);
 * verify R = 4 for GDN (the H200 A/B, results/h200/kernels-e3a6ef2/: vk4 1-8 % ahead at T = 4
 * from B = 4 to 512, vk8 1-4 % ahead for decode from B = 16) and for KDA R = 8 with its loads a
 * token ahead where ls_delta_vk8_verify_auto says (results/h200/vk8-kda-9a18719/), R = 4 below.
 * vk4 / vk8 force either. Other shapes: the generic vk kernel (R = 4).
 */
static int choose_delta_vk(const ls_delta_params *p, int per_row, const ls_tuning *t, int sms, ls_plan *out)
{
    const int64_t rh = (int64_t)p->batch * p->heads_v;
    int rows = 4;
    if (!ls_delta_fast_ok(p, per_row)) {
        out->kernel = LS_K_DELTA_VK_GENERIC;
    } else {
        const int v = ls_tune_get(t, LS_KNOB_DELTA_VARIANT);
        const int64_t w8 = rh * (LS_DELTA_DIM_FAST / 8);
        const int wide = v == LS_DELTA_VK8 ||
                         (v != LS_DELTA_VK4 &&
                          (p->tokens == 1 ? w8 >= (int64_t)LS_DELTA_VK8_MIN_WARPS_PER_SM * sms
                                          : ls_delta_vk8_verify_auto(w8, sms, per_row, p->state_dtype == LS_F32)));
        rows = wide ? 8 : 4;
        out->kernel = wide ? LS_K_DELTA_VK8 : LS_K_DELTA_VK4;
    }
    const int64_t warps = rh * ceil_div(p->dv, rows);
    const int ah = ls_tune_get(t, LS_KNOB_DELTA_AHEAD);
    /* auto: where the A/Bs measured it, with an fp32 state: the R = 4 kernel by ls_delta_ahead_auto,
     * KDA's R = 8 kernel always (ahead beat off at every batch, results/h200/vk8-kda-9a18719/) */
    const int fp32 = p->state_dtype == LS_F32;
    const int ahead_auto = fp32 && (out->kernel == LS_K_DELTA_VK4 ? ls_delta_ahead_auto(warps, sms, per_row)
                                                                   : out->kernel == LS_K_DELTA_VK8 && per_row);
    out->ahead = p->tokens > 1 && (ah == LS_DAHEAD_ON || (ah == LS_DAHEAD_AUTO && ahead_auto));
    return pick_cta(warps, 1, sms, out);
}

int ls_delta_wide_over_split2(int64_t wide_warps, int sms)
{
    if (wide_warps < (int64_t)LS_DELTA_WIDE_MIN_WARPS_PER_SM * sms)
        return 0; /* NARROW would be the alternative: SPLIT2 */
    const int64_t wave = (int64_t)LS_DELTA_WIDE_VERIFY_WARPS_PER_SM * sms;
    const int64_t tail = wide_warps % wave;
    return tail == 0 || 100 * tail >= (int64_t)LS_DELTA_WIDE_MIN_TAIL_PCT * wave;
}

int ls_delta_ahead_auto(int64_t warps, int sms, int per_row)
{
    if (warps < (int64_t)LS_DELTA_AHEAD_MAX_WARPS_PER_SM * sms)
        return 1;
    return per_row && warps >= (int64_t)LS_DELTA_AHEAD_KDA_MIN_WARPS_PER_SM * sms;
}

int ls_delta_vk8_verify_auto(int64_t vk8_warps, int sms, int per_row, int fp32_state)
{
    return per_row && fp32_state && vk8_warps >= (int64_t)LS_DELTA_VK8_KDA_VERIFY_MIN_WARPS_PER_SM * sms;
}

int ls_delta_split_auto(int64_t narrow_warps, int sms, int max4, int min2, int max2)
{
    if (max4 > 0 && narrow_warps < (int64_t)max4 * sms)
        return 4;
    if (max2 > 0 && narrow_warps >= (int64_t)min2 * sms && narrow_warps < (int64_t)max2 * sms)
        return 2;
    return 0;
}

/*
 * vk layout: choose_delta_vk. kv layout, generic shapes: the generic kernel. Vector path: NARROW tiles while the batch is too small to
 * give each SM 8 warps of WIDE tiles (NARROW wins at B = 1, WIDE from B = 64 on); among WIDE
 * batches, auto takes the bulk kernel from 16 heads per SM (bulk wins at B = 512, the register
 * tiles at B = 64, level at B = 128: results/h200/kernels.md, "Head-per-CTA bulk-copy").
 * delta.variant=regs / bulk force either for every WIDE batch (bulk where ls_delta_bulk_ok).
 * delta.variant=split / split2 force the SPLIT / SPLIT2 tiles (NARROW's tiles over 4 / 2 warps
 * along K) at every batch of the vector path; auto (and a vk value) takes them for verify where
 * ls_delta_split_auto says (SPLIT for KDA only; limits and their A/B in choose.h), regs and
 * bulk never (NARROW below the WIDE batches, so regs is auto without SPLIT or bulk). Generic kv
 * shapes and the vk layout ignore split / split2 (their auto).
 */
int ls_choose_delta(const ls_delta_params *p, int per_row, const ls_tuning *t, const ls_choose_dev *dev,
                    ls_plan *out)
{
    plan_init(out, t);
    const char *op = per_row ? "kda" : "gdn";
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
    if (p->dk > 128)
        return ls_fail("cuda %s: dk=%d unsupported (at most 128)", op, p->dk);
    const int64_t rh = (int64_t)p->batch * p->heads_v;
    int rc;
    if (p->state_layout == LS_STATE_VK) {
        rc = choose_delta_vk(p, per_row, t, sms, out);
    } else if (!ls_delta_fast_ok(p, per_row)) {
        out->kernel = LS_K_DELTA_GENERIC;
        rc = pick_cta(rh * ceil_div(p->dv, 16), 1, sms, out);
    } else {
        const int v = ls_tune_get(t, LS_KNOB_DELTA_VARIANT);
        const int64_t narrow_warps = rh * (LS_DELTA_DIM_FAST / 16);
        const int64_t wide_warps = rh * (LS_DELTA_DIM_FAST / 32) * 2;
        const int kv_auto = v != LS_DELTA_REGS && v != LS_DELTA_BULK; /* vk values mean auto here */
        int split = v == LS_DELTA_SPLIT    ? 4
                    : v == LS_DELTA_SPLIT2 ? 2
                    : kv_auto && p->tokens > 1
                        ? ls_delta_split_auto(narrow_warps, sms, per_row ? LS_DELTA_SPLIT_MAX_WARPS_PER_SM : 0,
                                              LS_DELTA_SPLIT2_MIN_WARPS_PER_SM, LS_DELTA_SPLIT2_MAX_WARPS_PER_SM)
                        : 0;
        if (split == 2 && v != LS_DELTA_SPLIT2 && ls_delta_wide_over_split2(wide_warps, sms))
            split = 0; /* auto: WIDE's waves fill better */
        if (split) {
            out->kernel = split == 4 ? LS_K_DELTA_SPLIT : LS_K_DELTA_SPLIT2;
            rc = pick_cta(narrow_warps * split, split, sms, out);
        } else if (wide_warps >= (int64_t)LS_DELTA_WIDE_MIN_WARPS_PER_SM * sms) {
            const int bulk = v != LS_DELTA_REGS && ls_delta_bulk_ok(p, per_row) &&
                             (v == LS_DELTA_BULK || rh >= (int64_t)LS_DELTA_BULK_MIN_CTAS_PER_SM * sms);
            if (bulk) {
                out->kernel = LS_K_DELTA_BULK;
                out->block = 256;
                out->grid_x = (uint32_t)rh;
                return 0;
            }
            out->kernel = LS_K_DELTA_WIDE;
            rc = pick_cta(wide_warps, 2, sms, out);
        } else {
            out->kernel = LS_K_DELTA_NARROW;
            rc = pick_cta(narrow_warps, 1, sms, out);
        }
    }
    if (rc)
        return ls_fail("cuda %s: batch=%d too large", op, p->batch);
    return 0;
}

/* ------------------------------------------------------------------ Mamba2 SSU */

/* 32-column chunks for the vector path (4 or 8), or 0 when these params need the generic kernel. */
static int ssu_fast_chunks(const ls_ssu_params *p)
{
    const int64_t es = (int64_t)ls_dtype_size(p->state_dtype);
    const int64_t sv = 4 * es;
    if (p->dstate != 128 && p->dstate != 256)
        return 0;
    int ok = aligned(p->state, (size_t)sv) && (p->state_stride_slot * es) % sv == 0;
    ok = ok && (!p->inter || (aligned(p->inter, (size_t)sv) && (p->inter_stride_slot * es) % sv == 0));
    ok = ok && aligned(p->Bm, 8) && aligned(p->Cm, 8);
    return ok ? p->dstate / 32 : 0;
}

/* Warps of the whole launch with wr rows of a head per warp (tiles: 4 x rows per lane; ssu_rows /
 * rows8: 4 / 8). */
static int64_t ssu_warps(const ls_ssu_params *p, int wr)
{
    return (int64_t)p->batch * p->nheads * ceil_div(p->head_dim, wr);
}

int ls_ssu_rows_auto(const ls_ssu_params *p, int max_batch)
{
    return ssu_fast_chunks(p) && p->batch <= max_batch;
}

/*
 * ssu_rows8 (ssu.variant=rows8, or auto through ls_ssu_rows_auto up to LS_SSU_ROWS8_MAX_BATCH,
 * decode and verify) on the vector path: 8 rows per warp (SGLang's program shape), twice the
 * warps of the wide tiles; auto runs its verify in CTAs of at most LS_SSU_ROWS8_VERIFY_WARPS
 * warps and its decode with the slot guess on (ssu.block / ssu.speculate, when set, win). ssu_rows
 * (ssu.variant=rows only): the same kernel with 4 rows per warp. Otherwise:
 * Narrow tiles (half the rows per lane, twice the warps) while wide ones would give the SMs fewer
 * than 4 warps each (B = 1: narrow faster; at large B the two are level, so wide is kept:
 * results/h200/kernels.md). 1-4 warps per CTA, fewer while the grid would not give every SM two
 * CTAs; ssu.block forces the CTA size of the rows kernels (32, 64 or 128 threads: their
 * __launch_bounds__ caps them at 128). Slot guess, auto: only when the grid takes at most half
 * of the resident CTA slots, so it fits beside a predecessor of its size: work before the PDL
 * wait pays only when the CTA is resident while the previous kernel still runs (kernels.md:
 * faster at B = 1-4, slower at B = 8-32 when always on). Residency is by registers, so ssu_rows
 * (72 registers at ds = 128 fp32 verify: 28 warps per SM) guesses at B = 1 (1024 warps) and not
 * from B = 2 (2048 warps, more than half of 132 x 28); ssu_rows8 (128 registers: 16 warps per
 * SM, half the warps) up to B = 2. ssu.speculate=on forces the guess at every batch, rows
 * kernels included. The generic kernel never guesses.
 */
int ls_choose_ssu(const ls_ssu_params *p, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out)
{
    plan_init(out, t);
    if (p->dstate > 256)
        return ls_fail("cuda ssu: dstate=%d unsupported (at most 256)", p->dstate);
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
    const int nch = ssu_fast_chunks(p);
    const int v = ls_tune_get(t, LS_KNOB_SSU_VARIANT);
    const int auto8 = nch && v == LS_SSU_AUTO && ls_ssu_rows_auto(p, LS_SSU_ROWS8_MAX_BATCH);
    const int rows = nch && (v == LS_SSU_ROWS || v == LS_SSU_ROWS8 || auto8);
    const int narrow = nch && ssu_warps(p, 4 * 16 / nch) < 4LL * sms;
    int wr; /* rows of a head per warp */
    if (rows) {
        const int eight = v == LS_SSU_ROWS8 || auto8;
        out->kernel = eight ? LS_K_SSU_ROWS8 : LS_K_SSU_ROWS;
        out->nch = p->dstate / 128;
        out->rows_per_lane = wr = eight ? 8 : 4;
    } else {
        out->nch = nch ? nch : 8;
        out->rows_per_lane = (narrow ? 8 : 16) / out->nch;
        out->kernel = !nch ? LS_K_SSU_GENERIC : narrow ? LS_K_SSU_NARROW : LS_K_SSU_WIDE;
        wr = 4 * out->rows_per_lane;
    }
    const int64_t warps_total = ssu_warps(p, wr);
    const int blk = rows ? ls_tune_get(t, LS_KNOB_SSU_BLOCK) : LS_SBLK_AUTO;
    int warps = auto8 && p->tokens > 1 ? LS_SSU_ROWS8_VERIFY_WARPS : 4;
    if (blk != LS_SBLK_AUTO)
        warps = 1 << (blk - LS_SBLK_32); /* 32, 64, 128 threads */
    else
        while (warps > 1 && warps_total < (int64_t)warps * 2 * sms)
            warps /= 2;
    const int64_t blocks = ceil_div(warps_total, warps);
    if (blocks > 0x7fffffffLL)
        return ls_fail("cuda ssu: batch=%d too large (%lld CTAs)", p->batch, (long long)blocks);
    out->block = 32 * warps;
    out->grid_x = (uint32_t)blocks;
    if (!nch || p->slots <= 0)
        return 0;
    switch (ls_tune_get(t, LS_KNOB_SSU_SPECULATE)) {
    case LS_SSPEC_ON: out->spec = LS_SPEC_ON; break;
    case LS_SSPEC_OFF: out->spec = LS_SPEC_OFF; break;
    case LS_SSPEC_MISS: out->spec = LS_SPEC_MISS; break;
    default: {
        const int64_t slots = (int64_t)(dev ? dev->resident_per_sm : 0) * sms;
        out->spec = (auto8 && p->tokens == 1) || (slots > 0 && 2 * blocks <= slots) ? LS_SPEC_ON : LS_SPEC_OFF;
    }
    }
    return 0;
}

/* ------------------------------------------------------------------ conv + delta rule */

int ls_conv_delta_tiles_ok(const ls_conv_delta_params *p)
{
    const ls_delta_params *d = &p->delta;
    const int64_t tiles = (int64_t)(d->heads_v / d->heads_qk) * ceil_div(d->dv, 16);
    return d->dk <= LS_DELTA_DIM_FAST && tiles <= LS_CONV_DELTA_MAX_SPLIT * LS_CONV_DELTA_TILE_WARPS;
}

int ls_conv_delta_bulk_ok(const ls_conv_delta_params *p)
{
    const ls_delta_params *d = &p->delta;
    return ls_delta_bulk_ok(d, p->kda) && d->heads_v / d->heads_qk <= LS_CONV_DELTA_MAX_SPLIT &&
           d->tokens <= LS_CONV_DELTA_BULK_MAX_TOKENS;
}

int ls_conv_delta_bulk_auto(const ls_conv_delta_params *p, int sms)
{
    const ls_delta_params *d = &p->delta;
    if (d->state_dtype != LS_F32 || !ls_delta_fast_ok(d, 0))
        return 0;
    return d->tokens == 1 || (int64_t)d->batch * d->heads_v >= (int64_t)LS_CONV_DELTA_BULK_VERIFY_MIN_CTAS_PER_SM * sms;
}

/*
 * bulkp (auto where ls_conv_delta_bulk_auto says, or forced) and bulk (forced only: the same
 * kernel with the older prologue, 4-7 % slower at 5 of 40 shapes and never faster in the A/B of
 * results/h200/check-d8fad17/): one CTA per (row, value head), grid (B*H, G), the G value
 * heads of a key head one cluster (1, G) so that the q/k conv state, read by all G, has one
 * writer (rank 0, after the cluster barrier). Where ls_conv_delta_bulk_ok refuses, either variant
 * means auto without bulk.
 * The cluster and tiles kernels run a cluster of ns CTAs per (row r, key head h): grid (B*H, ns).
 * cluster: the largest power of two ns <= LS_CONV_DELTA_MAX_SPLIT that cuts the G*V value columns
 * into slices of at least 32 while B*H*ns stays within two CTAs per SM (small batches fill the
 * SMs, large ones keep one CTA per (row, head)); threads: 4 lanes per column of the slice, rounded
 * up to warps, 64..256 (more trips past 256).
 * tiles: the G*ceil(V/16) NARROW tiles of the key head spread over the ranks, at most
 * LS_CONV_DELTA_TILE_WARPS per CTA (an uneven count may leave the last ranks fewer tiles, or
 * none); ns then doubles while it divides the tiles evenly and B*H*ns stays within one CTA per SM.
 */
int ls_choose_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out)
{
    plan_init(out, t);
    const ls_delta_params *d = &p->delta;
    if (d->dk > LS_DELTA_DIM_FAST)
        return ls_fail("cuda conv_delta: dk=%d: the state column lives in registers, K <= %d", (int)d->dk,
                       LS_DELTA_DIM_FAST);
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
    const int64_t heads = (int64_t)d->batch * d->heads_qk;
    const int G = d->heads_v / d->heads_qk;
    int ns = 1;
    out->grid_x = (uint32_t)heads;
    const int cv_knob = ls_tune_get(t, LS_KNOB_CONV_DELTA_VARIANT);
    const int bulk_auto = cv_knob == LS_CD_AUTO && ls_conv_delta_bulk_auto(p, sms);
    const int bulk_forced = cv_knob == LS_CD_BULK || cv_knob == LS_CD_BULKP;
    if ((bulk_forced || bulk_auto) && ls_conv_delta_bulk_ok(p)) {
        out->kernel = cv_knob == LS_CD_BULK ? LS_K_CONV_DELTA_BULK : LS_K_CONV_DELTA_BULKP;
        out->block = LS_CONV_DELTA_BULK_THREADS;
        out->grid_y = (uint32_t)G;
        return 0;
    }
    const int cv = bulk_forced ? LS_CD_AUTO : cv_knob;
    const int tiles_auto = cv == LS_CD_AUTO && ls_delta_fast_ok(d, 0); /* measured on the vector path only */
    if ((cv == LS_CD_TILES || tiles_auto) && ls_conv_delta_tiles_ok(p)) {
        const int tiles = G * (int)ceil_div(d->dv, 16);
        while (ceil_div(tiles, ns) > LS_CONV_DELTA_TILE_WARPS)
            ns *= 2;
        while (ns < LS_CONV_DELTA_MAX_SPLIT && tiles % (2 * ns) == 0 && heads * 2 * ns <= sms)
            ns *= 2;
        const int wpc = (int)ceil_div(tiles, ns);
        out->kernel = ls_delta_fast_ok(d, 0) ? LS_K_CONV_DELTA_TILES : LS_K_CONV_DELTA_TILES_GENERIC;
        out->groups = wpc;
        out->block = 32 * (wpc > LS_CONV_DELTA_MIN_WARPS ? wpc : LS_CONV_DELTA_MIN_WARPS);
    } else {
        const int gv = G * d->dv;
        while (ns < LS_CONV_DELTA_MAX_SPLIT && gv % (2 * ns) == 0 && gv / (2 * ns) >= 32 && heads * 2 * ns <= 2LL * sms)
            ns *= 2;
        const int threads = (int)ceil_div(4LL * gv / ns, 32) * 32;
        out->kernel = LS_K_CONV_DELTA;
        out->block = threads < 64 ? 64 : threads > 256 ? 256 : threads;
    }
    out->grid_y = (uint32_t)ns;
    return 0;
}

/* ------------------------------------------------------------------ state ops */

/* Widest vector (bytes) dividing every item and aligning every pointer the op touches. */
static int state_vec_bytes(const ls_state_params *p, int accept)
{
    for (int vb = 16; vb > 1; vb /= 2) {
        int ok = 1;
        for (int b = 0; b < p->n_buffers && ok; b++) {
            if (accept && !p->buf[b].spec)
                continue;
            if (p->buf[b].item_bytes % vb != 0 || !aligned(p->buf[b].main, (size_t)vb) ||
                (accept && !aligned(p->buf[b].spec, (size_t)vb)))
                ok = 0;
        }
        if (ok)
            return vb;
    }
    return 1;
}

/*
 * Work is cut into chunks (one (buffer, layer, row) item, or a piece of it of LS_STATE_THREADS
 * times state.unroll vectors). state.grid=persist: at most 8 blocks per SM walk them, with as
 * few blocks as keep every block's share equal (no block runs one round longer); full: one block
 * per chunk, the hardware schedules them. auto: persist while the work, cut into 16 KB chunks
 * (unroll LS_STATE_UNROLL_PERSIST), fills at most LS_STATE_PERSIST_MAX_ROUNDS rounds of that
 * grid, full above, where on the H200 it moved 4-8 % more bytes per second in every copy /
 * accept case from B = 8 (results/h200/state-grid/). The rule counts 16 KB chunks whatever the
 * unroll, so a forced unroll never moves the switch. Unroll, auto: LS_STATE_UNROLL_PERSIST under
 * the persistent grid (what it ran before the knobs), LS_STATE_UNROLL_FULL under one block per
 * chunk. No work: LS_K_NONE.
 */
static int64_t state_chunks(const ls_state_params *p, int accept, int vb, int unroll)
{
    const int64_t chunk_vecs = (int64_t)LS_STATE_THREADS * unroll;
    int64_t total = 0;
    for (int b = 0; b < p->n_buffers; b++) {
        if (accept && !p->buf[b].spec)
            continue;
        total += (int64_t)p->layers * p->count * ceil_div(p->buf[b].item_bytes / vb, chunk_vecs);
    }
    return total;
}

int ls_choose_state(const ls_state_params *p, ls_op op, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out)
{
    plan_init(out, t);
    if (op != LS_OP_STATE_COPY && op != LS_OP_STATE_ACCEPT && op != LS_OP_STATE_ZERO)
        return ls_fail("cuda state op: op %d is not a state op", (int)op);
    const int accept = op == LS_OP_STATE_ACCEPT;
    if (p->count <= 0 || p->layers <= 0)
        return 0;
    const int vb = state_vec_bytes(p, accept);
    out->vec_bytes = vb;
    const int64_t chunks16 = state_chunks(p, accept, vb, LS_STATE_UNROLL_PERSIST);
    if (chunks16 == 0)
        return 0;
    const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 1;
    const int64_t cap = (int64_t)sms * (2048 / LS_STATE_THREADS);
    const int grid = ls_tune_get(t, LS_KNOB_STATE_GRID);
    const int full =
        grid == LS_SGRID_FULL || (grid == LS_SGRID_AUTO && ceil_div(chunks16, cap) > LS_STATE_PERSIST_MAX_ROUNDS);
    const int unr = ls_tune_get(t, LS_KNOB_STATE_UNROLL);
    out->unroll = unr != LS_SUNR_AUTO ? 1 << (unr - LS_SUNR_1) : full ? LS_STATE_UNROLL_FULL : LS_STATE_UNROLL_PERSIST;
    const int64_t total = out->unroll == LS_STATE_UNROLL_PERSIST ? chunks16 : state_chunks(p, accept, vb, out->unroll);
    out->chunks = total;
    const int64_t rounds = full ? ceil_div(total, INT32_MAX) : ceil_div(total, cap);
    out->kernel = LS_K_STATE_OP;
    out->block = LS_STATE_THREADS;
    out->grid_x = (uint32_t)ceil_div(total, rounds);
    return 0;
}

/* ------------------------------------------------------------------ any op, description */

int ls_choose(ls_op op, const void *params, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out)
{
    if (!params || !out)
        return ls_fail("choose: NULL params or plan");
    switch (op) {
    case LS_OP_CONV_UPDATE: return ls_choose_conv((const ls_conv_params *)params, t, dev, out);
    case LS_OP_GDN: return ls_choose_delta((const ls_delta_params *)params, 0, t, dev, out);
    case LS_OP_KDA: return ls_choose_delta((const ls_delta_params *)params, 1, t, dev, out);
    case LS_OP_SSU: return ls_choose_ssu((const ls_ssu_params *)params, t, dev, out);
    case LS_OP_CONV_DELTA: return ls_choose_conv_delta((const ls_conv_delta_params *)params, t, dev, out);
    case LS_OP_STATE_COPY:
    case LS_OP_STATE_ACCEPT:
    case LS_OP_STATE_ZERO: return ls_choose_state((const ls_state_params *)params, op, t, dev, out);
    default: return ls_fail("choose: unknown op %d", (int)op);
    }
}

const char *ls_kernel_name(ls_kernel_id k)
{
    static const char *const names[LS_K_COUNT] = {
        [LS_K_NONE] = "none",
        [LS_K_CONV_VEC2] = "conv_vec2",
        [LS_K_CONV_VEC8] = "conv_vec8",
        [LS_K_CONV_TILE] = "conv_cm_tile",
        [LS_K_CONV_SCALAR] = "conv_scalar",
        [LS_K_CONV_PAIR] = "conv_pair",
        [LS_K_CONV_QUAD] = "conv_quad",
        [LS_K_CONV_WLAT] = "conv_wlat",
        [LS_K_DELTA_NARROW] = "delta_rule_narrow",
        [LS_K_DELTA_WIDE] = "delta_rule_wide",
        [LS_K_DELTA_BULK] = "delta_bulk",
        [LS_K_DELTA_GENERIC] = "delta_rule_generic",
        [LS_K_DELTA_VK4] = "delta_vk4",
        [LS_K_DELTA_VK8] = "delta_vk8",
        [LS_K_DELTA_VK_GENERIC] = "delta_vk_generic",
        [LS_K_DELTA_SPLIT] = "delta_rule_split",
        [LS_K_DELTA_SPLIT2] = "delta_rule_split2",
        [LS_K_SSU_WIDE] = "ssu_wide",
        [LS_K_SSU_NARROW] = "ssu_narrow",
        [LS_K_SSU_GENERIC] = "ssu_generic",
        [LS_K_STATE_OP] = "state_op",
        [LS_K_SSU_ROWS] = "ssu_rows",
        [LS_K_SSU_ROWS8] = "ssu_rows8",
        [LS_K_CONV_DELTA] = "conv_delta",
        [LS_K_CONV_DELTA_TILES] = "conv_delta_tiles",
        [LS_K_CONV_DELTA_TILES_GENERIC] = "conv_delta_tiles_generic",
        [LS_K_CONV_DELTA_BULK] = "conv_delta_bulk",
        [LS_K_CONV_DELTA_BULKP] = "conv_delta_bulkp",
    };
    return (unsigned)k < LS_K_COUNT ? names[k] : "?";
}

int ls_choose_describe(ls_op op, const ls_plan *plan, char *buf, size_t cap)
{
    if (!cap)
        return -1;
    if (plan->kernel == LS_K_NONE) {
        int n = snprintf(buf, cap, "none (no work)");
        return n < (int)cap ? n : (int)cap - 1;
    }
    char extra[64] = "";
    if (op == LS_OP_SSU)
        snprintf(extra, sizeof extra, " rows/lane=%d", plan->rows_per_lane);
    else if (plan->kernel == LS_K_CONV_DELTA || plan->kernel == LS_K_CONV_DELTA_TILES ||
             plan->kernel == LS_K_CONV_DELTA_TILES_GENERIC || plan->kernel == LS_K_CONV_DELTA_BULK ||
             plan->kernel == LS_K_CONV_DELTA_BULKP)
        snprintf(extra, sizeof extra, " cluster=%u", plan->grid_y);
    else if (plan->kernel == LS_K_STATE_OP)
        snprintf(extra, sizeof extra, " vec=%dB chunks=%lld", plan->vec_bytes, (long long)plan->chunks);
    else if (plan->ahead)
        snprintf(extra, sizeof extra, " ahead");
    else if ((plan->kernel == LS_K_CONV_VEC8 || plan->kernel == LS_K_CONV_PAIR || plan->kernel == LS_K_CONV_QUAD ||
              plan->kernel == LS_K_CONV_WLAT) &&
             (plan->state_wmaj || plan->inter_wmaj))
        snprintf(extra, sizeof extra, " state=%s inter=%s", plan->state_wmaj ? "wmaj" : "cmaj",
                 plan->inter_wmaj ? "wmaj" : "cmaj");
    static const char *const spec[] = {"off", "on", "miss"};
    const int has_spec = plan->kernel == LS_K_CONV_VEC2 || plan->kernel == LS_K_CONV_VEC8 ||
                         plan->kernel == LS_K_CONV_PAIR || plan->kernel == LS_K_CONV_QUAD ||
                         plan->kernel == LS_K_CONV_WLAT || plan->kernel == LS_K_SSU_WIDE ||
                         plan->kernel == LS_K_SSU_NARROW || plan->kernel == LS_K_SSU_ROWS ||
                         plan->kernel == LS_K_SSU_ROWS8;
    int n = snprintf(buf, cap, "%s grid=(%u,%u) block=%d%s%s%s%s%s", ls_kernel_name(plan->kernel), plan->grid_x,
                     plan->grid_y, plan->block, plan->pdl ? " pdl" : "",
                     plan->kernel == LS_K_CONV_TILE || plan->kernel == LS_K_CONV_WLAT
                         ? (plan->prefetch ? " prefetch" : " prefetch=off")
                         : "",
                     has_spec ? " spec=" : "", has_spec ? spec[plan->spec >= 0 && plan->spec <= 2 ? plan->spec : 0] : "",
                     extra);
    if (n < 0)
        return -1;
    return n < (int)cap ? n : (int)cap - 1;
}
