/*
 * conv1d_update.cu — causal depthwise conv1d update on the GPU (docs/ops.md; contract in
 * ls_kernels.h, ls_conv_params): decode (T = 1) and verify (T tokens, optional intermediate
 * windows), both state orientations, W in 2..4, optional bias (bf16 or fp32 weights), SiLU,
 * padding rows untouched, disable_state_update.
 *
 * Kernels:
 *  - conv_vec8: each thread owns 8 consecutive channels of one request row, so every access is a
 *    16-byte vector: x/y (8 bf16), the state (channel-major: the 8 channels' W-1 columns are one
 *    contiguous run of 8(W-1) bf16 = W-1 vectors; window-major: one vector per window column),
 *    the weights (8 x W) and bias. Grid (channel groups / block, rows); with p.slots it guesses
 *    the slot before the PDL wait (one dependent load less at small batch).
 *    Needs bf16 state, C % 8 == 0, unit channel stride of x/y, 16-byte aligned bases and
 *    strides that keep every 8-channel group 16-byte aligned (true for every preset).
 *  - conv_vec2 (channel-major single-token decode with bf16 weights, B <= 16): 2 channels per
 *    thread, the shortest dependent chain (x, weights and the guessed state beside the index);
 *  - conv_cm_tile (channel-major state: large-batch decode and every verify; prefetches its
 *    rows' state into L2 before the PDL wait);
 *  - conv_pair / conv_quad (conv_pair.cuh; conv.variant=pair / quad): 2 / 4 channels per thread
 *    for any token count, either orientation and weight dtype, every token's x issued at once
 *    (small-batch verify, window-major decode);
 *  - conv_wlat (conv_wlat.cuh; conv.variant=wlat): window-major state, T <= 8, conv_pair's grid
 *    with every load of a row (index, weights, x, the window at the guessed slot) issued before
 *    the first use of any, their addresses formed and (conv.prefetch) their lines pulled into L2
 *    before the PDL wait: one dependent round trip after the wait instead of conv_pair's three;
 *  - conv_scalar: one thread per (row, channel), arbitrary strides, fp32 or bf16 state — the
 *    fallback for everything else.
 * The window is held in fp32 registers; state values are bf16 (or fp32) inputs copied
 * unchanged, so the state and the windows are bit-exact copies of inputs. Math is fp32; the
 * SiLU uses the hardware exp2 / reciprocal approximations (ls_silu_fast: ~2 ulp of fp32 before
 * the bf16 rounding of y), five instructions instead of ~20 with an IEEE division's slow path,
 * which made the kernels issue-bound (results/h200/kernels.md).
 * Which kernel serves a launch, its grid and flags: ls_choose_conv (choose.c), from the shape
 * and the tuning (conv.variant, conv.prefetch, conv.speculate, pdl).
 */
#include <stdlib.h>
#include <string.h>

#include "conv_pair.cuh"
#include "conv_tile.cuh"
#include "conv_vec.cuh"
#include "conv_wlat.cuh"

/* --------------------------------------------------------------------- vector path */

/*
 * One thread = one request row x 8 channels; grid (channel groups / block, rows), so a thread
 * finds its row and channels without a division, and rows past gridDim.y (B > 65535) loop.
 * The kernel of small-batch decode: its time is one chain of dependent loads. x of token 0 does
 * not depend on the slot and is loaded beside the index. The weights are loaded at the step:
 * issuing them beside the index as well was measured slower at B = 1
 * (results/h200/kernels.md). Padding rows read x only.
 *
 * Slot guess (a.spec, when p.slots is given): before the PDL wait the thread reads its first
 * row's index through L2 (ld.cg: no stale copy stays in L1). After the wait it loads the state
 * at that guess at once, beside the real index instead of after it, and keeps it only if the
 * real index equals the guess; otherwise it loads again at the real slot. The state itself is
 * always read after the wait, so a stale guess costs a reload, never a stale value; the guess
 * is bounded by p.slots, so even a garbage one reads inside the state view. This takes one
 * L2 round trip off the index -> state chain, which is most of a B = 1 call.
 *
 * The window stays packed as bf16 pairs in the state's own layout (its values are bf16 inputs,
 * so packing is exact): 4(W-1) words instead of 8(W-1) floats. Per token: y = act(bias + sum_j
 * w[j] u[t+j]) for 8 channels, one 16-byte store; the window shifts (byte permutes); verify
 * stores the window after each token to inter[s, t]. INTER (p.inter != NULL) is a template
 * flag so the decode instance carries no window-store code (about 15 registers less).
 */
template <int N, bool WMAJ>
static __device__ __forceinline__ void vec8_load_win(const ls_conv_params &p, int s, int c0, uint32_t win[4 * N])
{
    const uint16_t *st = conv_state8<N, WMAJ>(p, s, c0);
#pragma unroll
    for (int k = 0; k < N; k++) {
        uint4 v = ls_ld16(st + (WMAJ ? k * p.state_stride_w : 8 * k));
        win[4 * k] = v.x, win[4 * k + 1] = v.y, win[4 * k + 2] = v.z, win[4 * k + 3] = v.w;
    }
}

/* The slot guess of the small-batch kernels (ls_slot_guess): the first row of the block. */
static __device__ __forceinline__ int slot_guess(const conv_args &a)
{
    return ls_slot_guess(a.p.slot_idx, (int)blockIdx.y, a.p.slots, a.spec);
}

/* Blocks per SM asked of ptxas: 10 (48 registers, no spill) for the channel-major bf16 decode
 * instance (GDN / Mamba2 decode: 40 warps per SM instead of 36 when it serves a large batch);
 * the others keep their natural count (a cap makes them spill). */
template <bool WMAJ, typename WT, bool INTER> constexpr int vec8_min_blocks()
{
    return (!WMAJ && !INTER && sizeof(WT) == 2) ? 10 : 1;
}

template <int W, bool WMAJ, typename WT, bool INTER>
__global__ void __launch_bounds__(128, (vec8_min_blocks<WMAJ, WT, INTER>())) conv_vec8(const conv_args a)
{
    constexpr int N = W - 1;
    const ls_conv_params &p = a.p;
    const int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int guess = a.spec && g < a.groups ? slot_guess(a) : -1; /* reset to -1 after the first row */
    ls_pdl_wait();
    ls_pdl_trigger();
    if (g >= a.groups)
        return;
    const int c0 = g * 8;
    for (int r = (int)blockIdx.y; r < p.batch; r += (int)gridDim.y, guess = -1) {
        const uint16_t *xp = p.x + (int64_t)r * p.x_stride_b + c0;
        uint4 xv = ls_ld16_ro(xp);
        uint32_t win[4 * N];
        if (guess >= 0)
            vec8_load_win<N, WMAJ>(p, guess, c0, win);
        const int s = p.slot_idx[r];
        if (s < 0)
            continue;
        if (s != guess)
            vec8_load_win<N, WMAJ>(p, s, c0, win);
        uint16_t *yp = p.y + (int64_t)r * p.y_stride_b + c0;
#pragma unroll 1
        for (int t = 0; t < p.tokens; t++) {
            if (t > 0)
                xv = ls_ld16_ro(xp + (int64_t)t * p.x_stride_t);
            float yf[8];
            conv_step8<W, WMAJ, WT>(p, c0, xv, win, yf);
            ls_st16(yp + (int64_t)t * p.y_stride_t, ls_pack_bf16x8(yf));
            if (INTER) {
                uint16_t *ip = (uint16_t *)p.inter + (int64_t)s * p.inter_stride_slot + (int64_t)t * p.inter_stride_t;
                if (a.inter_wmaj)
                    conv_store_win8<N, WMAJ, true>(ip + c0, p.inter_stride_w, win);
                else
                    conv_store_win8<N, WMAJ, false>(ip + (int64_t)c0 * N, 0, win);
            }
        }
        if (!p.disable_state_update)
            conv_store_win8<N, WMAJ, WMAJ>(conv_state8<N, WMAJ>(p, s, c0), p.state_stride_w, win);
    }
}

/*
 * conv_vec2: single-token decode of a channel-major bf16 state with bf16 weights, one thread per
 * (row, 2 channels): 4x the threads of conv_vec8 and a quarter of its per-thread math, for the
 * batches where the kernel is one dependent chain (B = 1: 2048 threads on 16 SMs instead of 512
 * on 4). The two channels' W-1 columns are 2(W-1) contiguous bf16 = W-1 aligned 32-bit words
 * (c0 even), their weights W words, x and y one word each. Slot guess as conv_vec8; x and the
 * weights are issued beside the index (here that was measured faster than after it, unlike in
 * conv_vec8: results/h200/kernels.md, "conv_vec2").
 */
template <int W>
__global__ void __launch_bounds__(128) conv_vec2(const conv_args a)
{
    constexpr int N = W - 1;
    const ls_conv_params &p = a.p;
    const int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int guess = a.spec && g < a.groups ? slot_guess(a) : -1; /* reset to -1 after the first row */
    ls_pdl_wait();
    ls_pdl_trigger();
    if (g >= a.groups)
        return;
    const int c0 = g * 2;
    const uint32_t *wq = (const uint32_t *)((const uint16_t *)p.weight + (int64_t)c0 * W);
    const uint32_t *bq = p.bias ? (const uint32_t *)((const uint16_t *)p.bias + c0) : NULL;
    for (int r = (int)blockIdx.y; r < p.batch; r += (int)gridDim.y, guess = -1) {
        const uint32_t xw = __ldg((const uint32_t *)(p.x + (int64_t)r * p.x_stride_b + c0));
        uint32_t win[N], wt[W], bw = 0;
        if (guess >= 0) {
            const uint32_t *st = (const uint32_t *)conv_state8<N, false>(p, guess, c0);
#pragma unroll
            for (int k = 0; k < N; k++)
                win[k] = st[k];
        }
        const int s = p.slot_idx[r];
#pragma unroll
        for (int k = 0; k < W; k++)
            wt[k] = __ldg(wq + k);
        if (bq)
            bw = __ldg(bq);
        if (s < 0)
            continue;
        uint32_t *st = (uint32_t *)conv_state8<N, false>(p, s, c0);
        if (s != guess)
#pragma unroll
            for (int k = 0; k < N; k++)
                win[k] = st[k];
        /* channel c in {0,1}: window element j at c*N + j, weight j at c*W + j (packed bf16) */
        float y2[2];
        uint32_t nw[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            nw[k] = 0;
#pragma unroll
        for (int c = 0; c < 2; c++) {
            float acc = pk_get(&bw, c);
#pragma unroll
            for (int j = 0; j < N; j++)
                acc = fmaf(pk_get(wt, c * W + j), pk_get(win, c * N + j), acc);
            acc = fmaf(pk_get(wt, c * W + N), pk_get(&xw, c), acc);
            y2[c] = p.silu ? ls_silu_fast(acc) : acc;
#pragma unroll
            for (int j = 0; j < N - 1; j++)
                pk_set(nw, c * N + j, pk_raw(win, c * N + j + 1));
            pk_set(nw, c * N + N - 1, pk_raw(&xw, c));
        }
        *(uint32_t *)(p.y + (int64_t)r * p.y_stride_b + c0) = ls_pack_bf16x2(y2[0], y2[1]);
        if (!p.disable_state_update)
#pragma unroll
            for (int k = 0; k < N; k++)
                st[k] = nw[k];
    }
}

/* ------------------------------------------------------------- channel-major tile path */

/*
 * Channel-major bf16 state (GDN, Mamba2), warp-cooperative so every global access is one
 * contiguous 512-byte warp transaction: one warp tile of 256 channels of one row (conv_tile.cuh),
 * computed as conv_vec8 and swapped back for the state / inter stores. ITEMS tiles per warp have
 * all their state and first-token x loads issued before any compute (more bytes in flight per
 * thread). Needs: the ls_conv_vec_ok conditions with a channel-major state and (if any)
 * channel-major inter.
 */
constexpr int TILE_ITEMS = 1; /* tiles per warp (two per warp was slower: results/h200/kernels.md) */

template <int W, typename WT, bool INTER>
__global__ void __launch_bounds__(128) conv_cm_tile(const conv_args a)
{
    constexpr int ITEMS = TILE_ITEMS;
    constexpr int N = W - 1;
    __shared__ uint4 smem[4][32 * N];
    const ls_conv_params &p = a.p;
    const int lane = threadIdx.x & 31;
    uint4 *sm = smem[threadIdx.x >> 5];
    const uint32_t tiles_per_row = (uint32_t)a.groups, ntiles = (uint32_t)p.batch * tiles_per_row;
    const uint32_t tile0 = (blockIdx.x * 4 + (threadIdx.x >> 5)) * ITEMS;
    if (a.prefetch)
        tile_prefetch<N, ITEMS>(p, tile0, tiles_per_row, ntiles, lane);
    ls_pdl_wait();
    ls_pdl_trigger();

    int row[ITEMS], s[ITEMS], c0[ITEMS], nv[ITEMS];
    uint4 sv[ITEMS][N], xv[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        s[i] = -1, row[i] = 0, c0[i] = 0, nv[i] = 0;
        if (tile0 + i < ntiles) {
            row[i] = (int)((tile0 + i) / tiles_per_row);
            c0[i] = (int)(tile0 + i - (uint32_t)row[i] * tiles_per_row) * 256;
            nv[i] = min(256, p.channels - c0[i]) * N / 8;
            s[i] = p.slot_idx[row[i]];
        }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) /* every load of every item before any compute */
        if (s[i] >= 0) {
            const uint16_t *base = (const uint16_t *)p.state + (int64_t)s[i] * p.state_stride_slot + (int64_t)c0[i] * N;
#pragma unroll
            for (int k = 0; k < N; k++)
                if (k * 32 + lane < nv[i])
                    sv[i][k] = ls_ld16(base + 8 * (k * 32 + lane));
            if (lane * N < nv[i])
                xv[i] = ls_ld16_ro(p.x + (int64_t)row[i] * p.x_stride_b + c0[i] + lane * 8);
        }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        if (s[i] < 0) /* warp-uniform: padding row or past the end */
            continue;
        const bool active = lane * N < nv[i];
        const int c = c0[i] + lane * 8;
        uint32_t win[4 * N];
        tile_swap_in<N>(sm, sv[i], lane, nv[i], win);
        uint16_t *yp = p.y + (int64_t)row[i] * p.y_stride_b + c;
#pragma unroll 1
        for (int t = 0; t < p.tokens; t++) {
            uint4 x = xv[i];
            if (t > 0 && active)
                x = ls_ld16_ro(p.x + (int64_t)row[i] * p.x_stride_b + (int64_t)t * p.x_stride_t + c);
            float yf[8];
            if (active) {
                conv_step8<W, false, WT>(p, c, x, win, yf);
                ls_st16(yp + (int64_t)t * p.y_stride_t, ls_pack_bf16x8(yf));
            }
            if (INTER)
                tile_swap_out<N>(sm, win, lane, nv[i],
                                 (uint16_t *)p.inter + (int64_t)s[i] * p.inter_stride_slot + (int64_t)t * p.inter_stride_t +
                                     (int64_t)c0[i] * N);
        }
        if (!p.disable_state_update)
            tile_swap_out<N>(sm, win, lane, nv[i],
                             (uint16_t *)p.state + (int64_t)s[i] * p.state_stride_slot + (int64_t)c0[i] * N);
    }
}

/* --------------------------------------------------------------------- scalar fallback */

/* One thread = one (row, channel); any strides; ST = float or __nv_bfloat16 state. */
template <int W, typename ST, typename WT>
__global__ void __launch_bounds__(256) conv_scalar(const conv_args a)
{
    ls_pdl_wait();
    ls_pdl_trigger();
    constexpr int N = W - 1;
    const ls_conv_params &p = a.p;
    uint32_t idx = blockIdx.x * blockDim.x + threadIdx.x; /* < 2^31: checked by the launcher */
    if (idx >= (uint32_t)p.batch * (uint32_t)a.groups)
        return;
    int r = (int)(idx / (uint32_t)a.groups);
    int c = (int)(idx - (uint32_t)r * a.groups);
    int s = p.slot_idx[r];
    if (s < 0)
        return;
    ST *st = (ST *)p.state + (int64_t)s * p.state_stride_slot + (int64_t)c * p.state_stride_c;
    float win[N];
#pragma unroll
    for (int j = 0; j < N; j++)
        win[j] = ls_ld_state(st, j * p.state_stride_w);
    const WT *w = (const WT *)p.weight + (int64_t)c * W;
    float wt[W];
#pragma unroll
    for (int j = 0; j < W; j++)
        wt[j] = ls_ld_param(w, j);
    float b = p.bias ? ls_ld_param((const WT *)p.bias, c) : 0.0f;
    for (int t = 0; t < p.tokens; t++) {
        float xv = ls_bf2f(p.x[(int64_t)r * p.x_stride_b + (int64_t)t * p.x_stride_t + (int64_t)c * p.x_stride_c]);
        float acc = b;
#pragma unroll
        for (int j = 0; j < N; j++)
            acc = fmaf(wt[j], win[j], acc);
        acc = fmaf(wt[N], xv, acc);
        p.y[(int64_t)r * p.y_stride_b + (int64_t)t * p.y_stride_t + (int64_t)c * p.y_stride_c] =
            ls_f2bf(p.silu ? ls_silu_fast(acc) : acc);
#pragma unroll
        for (int j = 0; j < N - 1; j++)
            win[j] = win[j + 1];
        win[N - 1] = xv;
        if (p.inter) {
            ST *ip = (ST *)p.inter + (int64_t)s * p.inter_stride_slot + (int64_t)t * p.inter_stride_t +
                     (int64_t)c * p.inter_stride_c;
#pragma unroll
            for (int j = 0; j < N; j++)
                ls_st_state(ip, j * p.inter_stride_w, win[j]);
        }
    }
    if (!p.disable_state_update)
#pragma unroll
        for (int j = 0; j < N; j++)
            ls_st_state(st, j * p.state_stride_w, win[j]);
}

/* --------------------------------------------------------------------- launcher */

/* The plan's kernel (ls_choose_conv) instantiated for width W, the state orientation, the
 * weight dtype and whether inter windows are written. */
template <int W, bool WMAJ>
static int launch_vec8_w(const conv_args &a, const ls_plan &pl, cudaStream_t st)
{
    const dim3 grid(pl.grid_x, pl.grid_y);
    const bool wf = a.p.weight_dtype == LS_F32, inter = a.p.inter != NULL;
    if (wf && inter)
        LS_CUDA_LAUNCH((conv_vec8<W, WMAJ, float, true>), grid, pl.block, 0, st, pl.pdl, a);
    else if (wf)
        LS_CUDA_LAUNCH((conv_vec8<W, WMAJ, float, false>), grid, pl.block, 0, st, pl.pdl, a);
    else if (inter)
        LS_CUDA_LAUNCH((conv_vec8<W, WMAJ, uint16_t, true>), grid, pl.block, 0, st, pl.pdl, a);
    else
        LS_CUDA_LAUNCH((conv_vec8<W, WMAJ, uint16_t, false>), grid, pl.block, 0, st, pl.pdl, a);
    return 0;
}

template <int CPT, int W, bool WMAJ>
static int launch_pair_w(const conv_args &a, const ls_plan &pl, cudaStream_t st)
{
    const dim3 grid(pl.grid_x, pl.grid_y);
    constexpr int TB = PAIR_TOKENS;
    const bool wf = a.p.weight_dtype == LS_F32, inter = a.p.inter != NULL;
    if (a.p.tokens == 1 && !inter) { /* decode: the one-token instance (fewer registers) */
        if (wf)
            LS_CUDA_LAUNCH((conv_pair<CPT, W, WMAJ, float, false, 1>), grid, pl.block, 0, st, pl.pdl, a);
        else
            LS_CUDA_LAUNCH((conv_pair<CPT, W, WMAJ, uint16_t, false, 1>), grid, pl.block, 0, st, pl.pdl, a);
    } else if (wf && inter)
        LS_CUDA_LAUNCH((conv_pair<CPT, W, WMAJ, float, true, TB>), grid, pl.block, 0, st, pl.pdl, a);
    else if (wf)
        LS_CUDA_LAUNCH((conv_pair<CPT, W, WMAJ, float, false, TB>), grid, pl.block, 0, st, pl.pdl, a);
    else if (inter)
        LS_CUDA_LAUNCH((conv_pair<CPT, W, WMAJ, uint16_t, true, TB>), grid, pl.block, 0, st, pl.pdl, a);
    else
        LS_CUDA_LAUNCH((conv_pair<CPT, W, WMAJ, uint16_t, false, TB>), grid, pl.block, 0, st, pl.pdl, a);
    return 0;
}

/* conv_wlat: the smallest token bound TM in {1, 2, 4, 8} that covers T (ls_conv_wlat_ok: T <= 8). */
template <int W, typename WT>
static int launch_wlat_wt(const conv_args &a, const ls_plan &pl, cudaStream_t st)
{
    const dim3 grid(pl.grid_x, pl.grid_y);
    const int T = a.p.tokens;
    if (T == 1)
        LS_CUDA_LAUNCH((conv_wlat<W, WT, 1>), grid, pl.block, 0, st, pl.pdl, a);
    else if (T == 2)
        LS_CUDA_LAUNCH((conv_wlat<W, WT, 2>), grid, pl.block, 0, st, pl.pdl, a);
    else if (T <= 4)
        LS_CUDA_LAUNCH((conv_wlat<W, WT, 4>), grid, pl.block, 0, st, pl.pdl, a);
    else if (T <= LS_CONV_WLAT_MAX_TOKENS)
        LS_CUDA_LAUNCH((conv_wlat<W, WT, LS_CONV_WLAT_MAX_TOKENS>), grid, pl.block, 0, st, pl.pdl, a);
    else
        return ls_fail("conv_update: conv_wlat planned for tokens=%d (at most %d)", T, LS_CONV_WLAT_MAX_TOKENS);
    return 0;
}

template <int W>
static int launch_tile_w(const conv_args &a, const ls_plan &pl, cudaStream_t st)
{
    const dim3 grid(pl.grid_x, pl.grid_y);
    const bool wf = a.p.weight_dtype == LS_F32, inter = a.p.inter != NULL;
    if (wf && inter)
        LS_CUDA_LAUNCH((conv_cm_tile<W, float, true>), grid, pl.block, 0, st, pl.pdl, a);
    else if (wf)
        LS_CUDA_LAUNCH((conv_cm_tile<W, float, false>), grid, pl.block, 0, st, pl.pdl, a);
    else if (inter)
        LS_CUDA_LAUNCH((conv_cm_tile<W, uint16_t, true>), grid, pl.block, 0, st, pl.pdl, a);
    else
        LS_CUDA_LAUNCH((conv_cm_tile<W, uint16_t, false>), grid, pl.block, 0, st, pl.pdl, a);
    return 0;
}

template <int W>
static int launch_scalar_w(const conv_args &a, const ls_plan &pl, cudaStream_t st)
{
    const dim3 grid(pl.grid_x, pl.grid_y);
    const bool sf = a.p.state_dtype == LS_F32, wf = a.p.weight_dtype == LS_F32;
    if (sf && wf)
        LS_CUDA_LAUNCH((conv_scalar<W, float, float>), grid, pl.block, 0, st, pl.pdl, a);
    else if (sf)
        LS_CUDA_LAUNCH((conv_scalar<W, float, uint16_t>), grid, pl.block, 0, st, pl.pdl, a);
    else if (wf)
        LS_CUDA_LAUNCH((conv_scalar<W, __nv_bfloat16, float>), grid, pl.block, 0, st, pl.pdl, a);
    else
        LS_CUDA_LAUNCH((conv_scalar<W, __nv_bfloat16, uint16_t>), grid, pl.block, 0, st, pl.pdl, a);
    return 0;
}

template <int W>
static int launch_w(const conv_args &a, const ls_plan &pl, cudaStream_t st)
{
    switch (pl.kernel) {
    case LS_K_CONV_VEC2: LS_CUDA_LAUNCH((conv_vec2<W>), dim3(pl.grid_x, pl.grid_y), pl.block, 0, st, pl.pdl, a); return 0;
    case LS_K_CONV_VEC8: return pl.state_wmaj ? launch_vec8_w<W, true>(a, pl, st) : launch_vec8_w<W, false>(a, pl, st);
    case LS_K_CONV_PAIR:
        return pl.state_wmaj ? launch_pair_w<2, W, true>(a, pl, st) : launch_pair_w<2, W, false>(a, pl, st);
    case LS_K_CONV_QUAD:
        return pl.state_wmaj ? launch_pair_w<4, W, true>(a, pl, st) : launch_pair_w<4, W, false>(a, pl, st);
    case LS_K_CONV_WLAT:
        if (!pl.state_wmaj)
            return ls_fail("conv_update: conv_wlat planned for a channel-major state");
        return a.p.weight_dtype == LS_F32 ? launch_wlat_wt<W, float>(a, pl, st) : launch_wlat_wt<W, uint16_t>(a, pl, st);
    case LS_K_CONV_TILE: return launch_tile_w<W>(a, pl, st);
    case LS_K_CONV_SCALAR: return launch_scalar_w<W>(a, pl, st);
    default: return ls_fail("conv_update: plan names kernel %s", ls_kernel_name(pl.kernel));
    }
}

/* Validates, plans (ls_choose_conv: kernel, grid, prefetch, slot guess, PDL), launches the plan's
 * kernel instantiated for the width (2..4). Asynchronous on stream s. */
extern "C" int ls_cuda_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    if (ls_conv_params_check(p))
        return -1;
    const ls_choose_dev dev = ls_cuda_choose_dev();
    ls_plan pl;
    if (ls_choose_conv(p, t, &dev, &pl))
        return -1;
    conv_args a;
    a.p = *p;
    a.groups = pl.groups;
    a.inter_wmaj = pl.inter_wmaj;
    a.prefetch = pl.prefetch;
    a.spec = pl.spec;
    cudaStream_t st = ls_cuda_stream(s);
    switch (p->width) {
    case 2: return launch_w<2>(a, pl, st);
    case 3: return launch_w<3>(a, pl, st);
    case 4: return launch_w<4>(a, pl, st);
    }
    return ls_fail("conv_update: width=%d not in 2..4", p->width);
}
