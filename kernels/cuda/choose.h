/*
 * choose.h — private header of kernels/cuda: what each op of the "linstate" impl launches.
 *
 * For every op a pure host function maps (params, tuning, device numbers) to a plan: which
 * kernel, its grid and block, and the flags it runs with (PDL, the conv tile's L2 prefetch, the
 * slot-guess mode). The launchers (.cu files) call these with the real device numbers and then
 * launch exactly what the plan says; the impl's `explain` prints the plan (ls_choose_describe).
 * Nothing here touches CUDA: choose.c is plain C, compiled into ls_kernels in every build, and
 * unit-tested without a GPU (tests/kernels/test_choose.c).
 *
 * The knob table of the impl lives here too (ls_linstate_knobs), so the tests can parse tunings
 * with ls_tuning_parse in builds without CUDA. LS_KNOB_* index ls_tuning.v and the table; the
 * value enums below index each knob's "a|b|c" list (first = default).
 */
#ifndef LS_CHOOSE_H
#define LS_CHOOSE_H

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ knobs */

enum {
    LS_KNOB_PDL = 0,
    LS_KNOB_CONV_VARIANT,
    LS_KNOB_CONV_PREFETCH,
    LS_KNOB_CONV_SPECULATE,
    LS_KNOB_DELTA_VARIANT,
    LS_KNOB_SSU_SPECULATE,
    LS_KNOB_SSU_VARIANT,
    LS_KNOB_SSU_BLOCK,
    LS_KNOB_CONV_DELTA_VARIANT,
    LS_KNOB_STATE_GRID,
    LS_KNOB_STATE_UNROLL,
    LS_KNOB_DELTA_AHEAD,
    LS_KNOB_COUNT
};

/* Value indices, in the order of each knob's values string (ls_linstate_knobs). */
enum { LS_PDL_ON = 0, LS_PDL_OFF };
enum { LS_CONV_AUTO = 0, LS_CONV_VEC2, LS_CONV_VEC8, LS_CONV_TILE, LS_CONV_SCALAR, LS_CONV_PAIR, LS_CONV_QUAD, LS_CONV_WLAT };
enum { LS_CPF_AUTO = 0, LS_CPF_ON, LS_CPF_OFF }; /* conv.prefetch */
enum { LS_CSPEC_ON = 0, LS_CSPEC_OFF, LS_CSPEC_MISS };
enum { LS_DELTA_AUTO = 0, LS_DELTA_REGS, LS_DELTA_BULK, LS_DELTA_VK4, LS_DELTA_VK8, LS_DELTA_SPLIT, LS_DELTA_SPLIT2 };
enum { LS_DAHEAD_AUTO = 0, LS_DAHEAD_ON, LS_DAHEAD_OFF }; /* delta.ahead */
enum { LS_SSPEC_AUTO = 0, LS_SSPEC_ON, LS_SSPEC_OFF, LS_SSPEC_MISS };
enum { LS_SSU_AUTO = 0, LS_SSU_TILES, LS_SSU_ROWS, LS_SSU_ROWS8 };
enum { LS_SBLK_AUTO = 0, LS_SBLK_32, LS_SBLK_64, LS_SBLK_128 }; /* ssu.block: threads per CTA */
enum { LS_CD_AUTO = 0, LS_CD_CLUSTER, LS_CD_TILES, LS_CD_BULK, LS_CD_BULKP }; /* conv_delta.variant */
enum { LS_SGRID_AUTO = 0, LS_SGRID_FULL, LS_SGRID_PERSIST };                /* state.grid */
enum { LS_SUNR_AUTO = 0, LS_SUNR_1, LS_SUNR_2, LS_SUNR_4, LS_SUNR_8 };      /* state.unroll */

extern const ls_knob_def ls_linstate_knobs[LS_KNOB_COUNT];

/* Value index of knob k in t; 0 (the default) when t is NULL or does not cover k. */
static inline int ls_tune_get(const ls_tuning *t, int k)
{
    return (t && k >= 0 && k < t->n && k < LS_MAX_KNOBS) ? (int)t->v[k] : 0;
}

/* ------------------------------------------------------------------ plans */

/* The slot-guess mode a kernel runs with (the conv small-batch and SSU kernels): off, on, or
 * miss (every guess made wrong on purpose, so tests run the reload path). */
enum ls_spec { LS_SPEC_OFF = 0, LS_SPEC_ON = 1, LS_SPEC_MISS = 2 };

typedef enum ls_kernel_id {
    LS_K_NONE = 0,        /* nothing to launch (a state op without work) */
    LS_K_CONV_VEC2,       /* conv_vec2: 2 channels per thread, small-batch decode */
    LS_K_CONV_VEC8,       /* conv_vec8: 8 channels per thread, either orientation */
    LS_K_CONV_TILE,       /* conv_cm_tile: warp tiles of 256 channels, channel-major */
    LS_K_CONV_SCALAR,     /* conv_scalar: one thread per channel, any layout (the fallback) */
    LS_K_CONV_PAIR,       /* conv_pair: 2 channels per thread, every token's x at once, either orientation */
    LS_K_CONV_QUAD,       /* conv_quad: conv_pair with 4 channels per thread */
    LS_K_CONV_WLAT,       /* conv_wlat: window-major state, small batch, every load before any use */
    LS_K_DELTA_NARROW,    /* delta_rule_kernel, vector path, 1 warp per 16-column tile */
    LS_K_DELTA_WIDE,      /* delta_rule_kernel, vector path, 2 warps per 32-column tile */
    LS_K_DELTA_BULK,      /* delta_bulk_kernel: one head per CTA, state by bulk copies */
    LS_K_DELTA_GENERIC,   /* delta_rule_kernel, generic (any K <= 128, V) */
    LS_K_DELTA_VK4,       /* delta_vk_kernel (vk layout), vector path, 4 value rows per warp */
    LS_K_DELTA_VK8,       /* delta_vk_kernel (vk layout), vector path, 8 value rows per warp */
    LS_K_DELTA_VK_GENERIC,/* delta_vk_kernel (vk layout), generic (any K <= 128, V), 4 rows */
    LS_K_DELTA_SPLIT,     /* delta_rule_kernel, vector path, 16-column tile over 4 warps along K */
    LS_K_DELTA_SPLIT2,    /* delta_rule_kernel, vector path, 16-column tile over 2 warps along K */
    LS_K_SSU_WIDE,        /* ssu_kernel, vector path, 64 state floats per lane */
    LS_K_SSU_NARROW,      /* ssu_kernel, vector path, half the rows per lane */
    LS_K_SSU_GENERIC,     /* ssu_kernel, generic (any ds <= 256) */
    LS_K_STATE_OP,        /* state_op_kernel (copy / accept / zero) */
    LS_K_SSU_ROWS,        /* ssu_rows_kernel: vector path, 32 lanes along ds, 4 rows per warp */
    LS_K_SSU_ROWS8,       /* ssu_rows_kernel: vector path, 32 lanes along ds, 8 rows per warp */
    LS_K_CONV_DELTA,      /* conv_delta_kernel: cluster of CTAs per (row, key head), 4 lanes per value column */
    LS_K_CONV_DELTA_TILES,/* conv_delta_tiles_kernel, vector path: NARROW tiles (1 warp per 16 columns) */
    LS_K_CONV_DELTA_TILES_GENERIC, /* conv_delta_tiles_kernel, generic (any K <= 128, V) */
    LS_K_CONV_DELTA_BULK, /* conv_delta_bulk_kernel: one CTA per (row, value head), the conv as delta_bulk's prologue */
    LS_K_CONV_DELTA_BULKP,/* conv_delta_bulk_kernel with every prologue load issued first (bulk_prologue_early) */
    LS_K_COUNT
} ls_kernel_id;

typedef struct ls_plan {
    ls_kernel_id kernel;
    uint32_t grid_x, grid_y;
    int32_t block;        /* threads per CTA */
    int32_t pdl;          /* 1: launched with programmatic dependent launch */
    int32_t prefetch;     /* conv tile / wlat: prefetch what the rows read into L2 before the PDL wait */
    int32_t spec;         /* an ls_spec: the slot guess of conv_vec2 / vec8 / pair / quad / wlat, ssu (vector) */
    int32_t groups;       /* conv: channel groups per row (C/2 vec2 / pair / wlat, C/4 quad, C/8, tiles of 256, or C);
                           * conv_delta tiles: tile warps per CTA */
    int32_t state_wmaj;   /* conv vector kernels: the state is window-major */
    int32_t inter_wmaj;   /* conv vector kernels: the inter windows are window-major */
    int32_t nch;          /* ssu: 32-column chunks per lane (4 or 8; 8 for the generic kernel);
                           * ssu_rows / rows8: 128-column chunks per lane (1 or 2) */
    int32_t rows_per_lane;/* ssu: state rows per lane (ssu_rows / rows8: 4 / 8, the warp's rows) */
    int32_t vec_bytes;    /* state ops: bytes per vector access (16, 8, 4, 2, 1) */
    int64_t chunks;       /* state ops: chunks of work the grid walks */
    int32_t unroll;       /* state ops: vectors per thread per chunk (a chunk = block * unroll vectors) */
    int32_t ahead;        /* delta vk verify: the token-ahead kernel (delta_vk.cuh, AHEAD) */
} ls_plan;

/* The device numbers a choice depends on (passed in; nothing here queries CUDA). */
typedef struct ls_choose_dev {
    int32_t sm_count;
    /* Resident CTAs per SM of the kernel being planned at the planned block size; only the SSU's
     * automatic slot guess reads it. 0 = unknown (then no automatic guess). The SSU launcher
     * plans once with 0, asks the occupancy of the kernel the plan names, and plans again. */
    int32_t resident_per_sm;
} ls_choose_dev;

/* Sizes shared with the kernels. */
#define LS_CONV_TILE_CHANNELS 256  /* channels per warp tile of conv_cm_tile */
#define LS_CONV_WLAT_MAX_TOKENS 8  /* conv_wlat: token bound of its largest instance */
/* auto: window-major rows up to this batch take conv_wlat, decode and verify (0 = never); with
 * conv.prefetch=auto its prefetch is on up to LS_CONV_WLAT_PREFETCH_MAX_B rows, off above. H200
 * A/B (results/h200/variants-08b9550/, kimi-linear tp 2, against the auto of 08b9550): with the
 * prefetch, wlat won decode up to B = 32 (-27 to -30 %) and verify up to 32 (-24 to -34 %); at
 * B = 128 the prefetch costs (decode +18 %, verify -7 to -16 % with it, -13 to -19 % without);
 * without it wlat won decode at 128 / 512 (-2 / -6 %) and verify at 128; verify at 512 was mixed
 * (-8 to +4 %), so verify stops at 128. */
#define LS_CONV_WLAT_MAX_B_DECODE 512
#define LS_CONV_WLAT_MAX_B_VERIFY 128
#define LS_CONV_WLAT_PREFETCH_MAX_B 32
#define LS_DELTA_DIM_FAST 128      /* delta vector path: K = V = 128 */
#define LS_DELTA_BULK_MIN_CTAS_PER_SM 16 /* auto: bulk kernel from this many heads per SM */
#define LS_DELTA_VK8_MIN_WARPS_PER_SM 8  /* auto, vk layout: 8 rows per warp from this many warps per SM */
/* auto, vk layout, KDA verify with an fp32 state: 8 rows per warp, with the token-ahead loads, from
 * this many such warps per SM (ls_delta_vk8_verify_auto; R = 4 below, GDN R = 4 at every batch).
 * The decays of the 128 key rows are KDA's per-token work that every warp of a head repeats
 * (4 full-precision exp / log1p / exp per lane): 8 rows share them over twice the state. H200,
 * kimi-linear tp 2 (HV 16: 16 B such warps, 1.9 B per SM on 132), two processes (median spread
 * 0.1 %, one case 3.2 %; results/h200/vk8-kda-9a18719/rule/): vk8 with the loads ahead took
 * 0.65-0.99x auto's (R = 4) time at B = 3-512, T = 2 / 4 / 8, but 1.01-1.02x at T = 8 B = 13, 256
 * and 512; 1.05-1.06x at B = 1 and 0.99-1.02x at B = 2 (1-2-warp CTAs). vk8 with each token's
 * loads at its start took 1.01-1.26x the ahead form's time (B = 4-512, T = 2 / 4). */
#define LS_DELTA_VK8_KDA_VERIFY_MIN_WARPS_PER_SM 5
/* auto, SSU on the vector path, decode and verify: ssu_rows8 up to this batch, the wide / narrow
 * tiles above; decode with the slot guess on, verify in CTAs of at most LS_SSU_ROWS8_VERIFY_WARPS
 * warps. H200 A/B (results/h200/variants-4db0dd1/, nemotron-h tp 2, ds = 128, against the auto of
 * 4db0dd1: rows for verify up to 128, tiles for decode): verify, rows8 in CTAs of 2 warps won at
 * B = 2-8 (-8 to -23 %), B = 1 (-3 to -4 %) and was level or ahead from 16 to 128 (-4.4 to
 * +0.1 %); decode, rows8 with the guess forced on won at B = 4 (-14 %), 8 (-10 %), 16 (-11 %),
 * 32 (-7 %), 128 (-3 %) and B = 1 / 2 (-7 / -5 %). B = 512 not measured: the tiles. (Before:
 * rows for verify up to 128, results/h200/variants-08b9550/.) */
#define LS_SSU_ROWS8_MAX_BATCH 128
#define LS_SSU_ROWS8_VERIFY_WARPS 2
/* auto, kv vector path, verify only (T > 1; decode lost at every batch): the SPLIT tiles (4 warps
 * each) for KDA while NARROW would give the SMs fewer than LS_DELTA_SPLIT_MAX_WARPS_PER_SM warps
 * each, the SPLIT2 tiles (2 warps) for GDN and KDA from LS_DELTA_SPLIT2_MIN_ to below
 * LS_DELTA_SPLIT2_MAX_WARPS_PER_SM. From the H200 A/B of results/h200/variants-08b9550/ (tp 2,
 * HV 16: NARROW's warps per SM ~ 0.97 B): split won KDA verify at B = 1 (-10 to -19 %) and 2
 * (-4 to -10 %), lost from B = 4 and for GDN from B = 2; split2 won verify at B = 8 (KDA -7 to
 * -15 %, GDN -2 %) and 16 (GDN -3 to -10 %, KDA -8 to -9 % at T >= 4), lost at B = 4 and 32. */
#define LS_DELTA_SPLIT_MAX_WARPS_PER_SM 3
#define LS_DELTA_SPLIT2_MIN_WARPS_PER_SM 6
#define LS_DELTA_SPLIT2_MAX_WARPS_PER_SM 24
/* kv vector path: WIDE tiles from this many WIDE warps per SM (NARROW below). Within SPLIT2's
 * range auto takes WIDE instead where WIDE serves and the last wave of its grid, at
 * LS_DELTA_WIDE_VERIFY_WARPS_PER_SM resident warps per SM (3 CTAs of 4 warps: 136-156 registers
 * in the verify kernels), is at least LS_DELTA_WIDE_MIN_TAIL_PCT % full
 * (ls_delta_wide_over_split2). H200, tp 2, T = 2, 4, 8, auto against delta.variant=regs and
 * =split2 (results/h200/split2-wide-ccfb6fe/, one process; results/h200/wide-tail-ccd833d/, two
 * processes within 3 %): WIDE took 0.75-0.89x SPLIT2's time at B = 9-12 (one WIDE wave, 73-97 %
 * full), 0.90-0.96x at 17 (second wave 37 % full), 0.88-0.93x at 18 (45 %), 0.87-0.97x at 19-24
 * (54-94 %), but 0.99-1.12x at B = 16 (29 %) and 0.99-1.15x at 13 (5 %): the threshold lies
 * between 29 and 37 %. At B = 8 (NARROW the alternative) SPLIT2 stays (NARROW 1.01-1.16x).
 * Measured with an fp32 state; a bf16 state's WIDE kernels (141-156 registers) hold the same 3
 * CTAs per SM and follow the same rule, unmeasured. */
#define LS_DELTA_WIDE_MIN_WARPS_PER_SM 8
#define LS_DELTA_WIDE_VERIFY_WARPS_PER_SM 12
#define LS_DELTA_WIDE_MIN_TAIL_PCT 33
/* conv_delta (both kernels): a cluster of at most this many CTAs per (row, key head). auto takes
 * the tiles kernel wherever its vector path serves (ls_conv_delta_tiles_ok, K = V = 128 aligned),
 * the cluster kernel otherwise: H200 A/B (results/h200/variants-ebc4333/ab-fused.csv, graph
 * replays, kimi-linear and qwen3-next tp 2, B 1-512, decode and T = 4) tiles took 0.29-0.73x the
 * cluster kernel's time in every one of the 20 cases. */
#define LS_CONV_DELTA_MAX_SPLIT 8
/* auto, vk layout, verify (delta.ahead, delta_vk.cuh): the token-ahead kernel while the R = 4 grid
 * gives the SMs fewer than LS_DELTA_AHEAD_MAX_WARPS_PER_SM warps each, and for KDA from
 * LS_DELTA_AHEAD_KDA_MIN_WARPS_PER_SM (fp32 state, the measured one; R = 8 and the generic kernel
 * never). H200 A/B (results/h200/ahead-rule-058e16c/: qwen3-next and kimi-linear tp 2, HV 16,
 * 3.9 B warps per SM; T = 2, 4, 8; two processes within 1 % of each other): on won B = 1 and 2
 * (GDN -8 to -14 %, KDA -14 to -22 %); lost B = 4 (GDN -1 / +7 / +13 % at T = 2 / 4 / 8, KDA
 * +5 / +17 / +26 %) and B = 8 (GDN +3 to +6 %, KDA level to +9 %); GDN lost B = 16 (+4 to +5 %)
 * and T = 2 at every B from 16 (+2 to +3 %), was level at T = 4 / 8 from B = 24 (-1.1 to +0.5 %);
 * KDA B = 16 -1.8 / -1.3 % at T = 4 / 8 but +2.3 % at T = 2, from B = 24 level to -4.5 %. */
#define LS_DELTA_AHEAD_MAX_WARPS_PER_SM 10
#define LS_DELTA_AHEAD_KDA_MIN_WARPS_PER_SM 80
/* conv_delta tiles kernel: at most this many tile warps per CTA (the q/k/v prologue is shared by
 * a CTA's warps; more tiles per head take a larger cluster), and at least LS_CONV_DELTA_MIN_WARPS
 * warps per CTA (the spare ones help the prologue only). The cluster grows (fewer tiles per CTA,
 * the q/k conv recomputed by more CTAs) while B*H*ns stays within one CTA per SM. */
#define LS_CONV_DELTA_TILE_WARPS 8
#define LS_CONV_DELTA_MIN_WARPS 8
/* conv_delta bulk kernel (conv_delta.variant=bulk): one CTA of LS_CONV_DELTA_BULK_THREADS per
 * (row, value head), the G value heads of a key head one cluster (G <= LS_CONV_DELTA_MAX_SPLIT),
 * T <= LS_CONV_DELTA_BULK_MAX_TOKENS (the T tokens' q, k, v and gates sit in shared memory beside
 * the 64 KB state: 106 KB at T = 16, fp32 state). auto takes it on the vector path with an fp32
 * state (the measured one) for decode at every batch and for verify from
 * LS_CONV_DELTA_BULK_VERIFY_MIN_CTAS_PER_SM CTAs (B*HV) per SM: H200 A/B
 * (results/h200/variants-8f5a322/ab-fused.csv, graph replays, kimi-linear and qwen3-next tp 2):
 * decode B 1-512 0.78-0.97x the tiles kernel's time in all 10 cases; verify T = 4 at B = 32-512
 * (3.9-62 CTAs per SM) 0.95-0.97x but GDN B = 512 (1.005x), at B = 8 (1 per SM) 0.99 / 1.03x, at
 * B = 1 1.40 / 1.50x. auto runs it with bulkp's prologue (LS_K_CONV_DELTA_BULKP) since the A/B
 * of results/h200/check-d8fad17/ (compare-fused-bulkp.txt: 40 shapes, bulkp 4-7 % faster at 5,
 * none slower; at verify B = 8 0.94 / 0.98x the tiles kernel, too few shapes to move the rule). */
#define LS_CONV_DELTA_BULK_THREADS 256
#define LS_CONV_DELTA_BULK_MAX_TOKENS 16
#define LS_CONV_DELTA_BULK_VERIFY_MIN_CTAS_PER_SM 3
#define LS_STATE_THREADS 256
/* state ops, auto: the persistent grid while 16 KB chunks fill at most this many of its rounds,
 * one CTA per chunk above. On the H200 (results/h200/state-grid/) one CTA per chunk was 5-12 %
 * slower at 1.25 rounds (kimi-linear B = 1: a second wave a quarter full), even at 2.2 and
 * 1-6 % faster from 2.5 rounds on. */
#define LS_STATE_PERSIST_MAX_ROUNDS 2
/* auto's vectors per thread per chunk: 4 (16 KB chunks of 16-byte vectors) under the persistent
 * grid, as before the knobs; 2 (8 KB) with one CTA per chunk, 1-1.5 % faster than 4 in every
 * copy / accept case from B = 8 (results/h200/state-grid/knobs2/). */
#define LS_STATE_UNROLL_PERSIST 4
#define LS_STATE_UNROLL_FULL 2

/* Conv: the vector-path conditions (bf16 state, C % 8 == 0, unit channel stride of x/y,
 * 16-byte aligned bases and strides that keep each 8-channel group aligned), with the
 * orientations. 1 when they hold. */
int ls_conv_vec_ok(const ls_conv_params *p, int *state_wmaj, int *inter_wmaj);

/* Conv: conv_wlat serves the shape (the vector-path conditions, a window-major state, T up to
 * LS_CONV_WLAT_MAX_TOKENS; either inter orientation, either weight dtype). 1 when it does. */
int ls_conv_wlat_ok(const ls_conv_params *p);
/* Conv, auto: whether the rule takes conv_wlat for a shape it serves, given the largest batch that
 * takes it for decode (T = 1) and for verify (T > 1); 0 = never. ls_choose_conv passes
 * LS_CONV_WLAT_MAX_B_DECODE / _VERIFY; the unit test passes others. */
int ls_conv_wlat_auto(const ls_conv_params *p, int max_b_decode, int max_b_verify);

/* Each returns 0 with *out filled, or -1 with ls_last_error() set (a shape no kernel serves).
 * Params are those that passed ls_*_params_check; their pointers are only tested for alignment. */
int ls_choose_conv(const ls_conv_params *p, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out);
int ls_choose_delta(const ls_delta_params *p, int per_row, const ls_tuning *t, const ls_choose_dev *dev,
                    ls_plan *out);
int ls_choose_ssu(const ls_ssu_params *p, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out);
/* op: LS_OP_STATE_COPY, LS_OP_STATE_ACCEPT or LS_OP_STATE_ZERO. */
int ls_choose_state(const ls_state_params *p, ls_op op, const ls_tuning *t, const ls_choose_dev *dev,
                    ls_plan *out);

/* The SSU auto rule between ssu_rows8 and the tiles (ls_choose_ssu passes LS_SSU_ROWS8_MAX_BATCH;
 * the tests pass others): 1 on the vector path up to max_batch, decode and verify. */
int ls_ssu_rows_auto(const ls_ssu_params *p, int max_batch);

/* The delta vector-path and bulk-kernel conditions (shape and alignment). */
int ls_delta_fast_ok(const ls_delta_params *p, int per_row);
int ls_delta_bulk_ok(const ls_delta_params *p, int per_row);
/* auto's SPLIT rule on the kv vector path: the warps per 16-column tile it takes, 4 (SPLIT) when
 * narrow_warps (B * HV * V / 16, NARROW's warps) is below max4 warps per SM, else 2 (SPLIT2)
 * when it is at least min2 and below max2 warps per SM, else 0 (no split layout); a maximum
 * <= 0 never holds. ls_choose_delta passes the LS_DELTA_SPLIT* limits for verify (max4 for KDA
 * only) and nothing for decode; the tests pass others. */
int ls_delta_split_auto(int64_t narrow_warps, int sms, int max4, int min2, int max2);
/* auto, kv verify: WIDE rather than SPLIT2 for a grid of wide_warps WIDE warps (choose.h) */
int ls_delta_wide_over_split2(int64_t wide_warps, int sms);
/* auto of delta.ahead for a vk verify grid of `warps` warps (the R = 4 kernel, fp32 state) */
int ls_delta_ahead_auto(int64_t warps, int sms, int per_row);
/* auto, vk verify: 8 rows per warp (and the token-ahead loads) for a grid of vk8_warps such warps:
 * KDA (per_row) with an fp32 state from LS_DELTA_VK8_KDA_VERIFY_MIN_WARPS_PER_SM per SM (choose.h) */
int ls_delta_vk8_verify_auto(int64_t vk8_warps, int sms, int per_row, int fp32_state);

/* The fused conv + delta rule (conv_delta.cu). Kernels: conv_delta_kernel (LS_K_CONV_DELTA,
 * grid (B*H, ns), cluster (1, ns)), the NARROW-tile kernel (LS_K_CONV_DELTA_TILES[_GENERIC],
 * same grid and clusters, plan.groups = tile warps per CTA) or the bulk kernel
 * (LS_K_CONV_DELTA_BULK, grid (B*H, G), cluster (1, G): one CTA per value head; LS_K_CONV_DELTA_BULKP
 * the same grid with bulkp's prologue).
 * conv_delta.variant: auto (bulkp where ls_conv_delta_bulk_auto says so, else tiles on its vector
 * path, else cluster), cluster, tiles (where it does not fit: the cluster kernel), bulk and bulkp
 * (where ls_conv_delta_bulk_ok refuses: auto's choice without them).
 * -1 with ls_last_error() when no kernel serves the shape (K > 128). */
int ls_choose_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out);
/* 1 when the tiles kernel serves the shape: K <= 128 and G*ceil(V/16) tiles per key head within
 * LS_CONV_DELTA_MAX_SPLIT * LS_CONV_DELTA_TILE_WARPS. */
int ls_conv_delta_tiles_ok(const ls_conv_delta_params *p);
/* 1 when the bulk kernel serves the shape: ls_delta_bulk_ok of the recurrence (K = V = 128,
 * aligned, bf16 state for decode only), G = HV/H <= LS_CONV_DELTA_MAX_SPLIT (one cluster) and
 * T <= LS_CONV_DELTA_BULK_MAX_TOKENS. */
int ls_conv_delta_bulk_ok(const ls_conv_delta_params *p);
/* auto's bulk rule on a shape the bulk kernel serves: 1 for an fp32 state on the vector path
 * (ls_delta_fast_ok) at decode (T = 1), or at verify with B*HV >= LS_CONV_DELTA_BULK_VERIFY_MIN_CTAS_PER_SM
 * CTAs per SM. */
int ls_conv_delta_bulk_auto(const ls_conv_delta_params *p, int sms);

/* One line: "conv_vec2 grid=(64,1) block=128 pdl spec=on". Returns the length written (cut to
 * cap - 1), or -1 when cap is 0. */
int ls_choose_describe(ls_op op, const ls_plan *plan, char *buf, size_t cap);
const char *ls_kernel_name(ls_kernel_id k);

/* Plan of any op (params cast by op; GDN and KDA differ in per_row): the explain helper. */
int ls_choose(ls_op op, const void *params, const ls_tuning *t, const ls_choose_dev *dev, ls_plan *out);

#ifdef __cplusplus
}
#endif
#endif /* LS_CHOOSE_H */
