/*
 * conv_pair.cuh — conv_pair, the causal conv1d update kernel with 2 channels per thread for any
 * token count, either state orientation, either inter orientation and either weight dtype
 * (knob conv.variant=pair; included by conv1d_update.cu, whose launcher instantiates it).
 *
 * Aimed at small-batch verify and window-major (KDA) decode, where conv_cm_tile / conv_vec8 put
 * few threads on few SMs and run the tokens one dependent x load after another. Here:
 *  - grid (channel pairs / block, rows) as conv_vec2: 4x the threads of conv_vec8, so at B = 1
 *    C = 4096 the call spreads over 16 SMs instead of 4;
 *  - the x of up to PAIR_TOKENS tokens is issued at once beside the slot index, the weights and
 *    the (guessed) state, so a verify call is one L2 round trip plus math instead of T;
 *  - the window is 2(W-1) bf16 values in registers; y, inter and state stores are 32-bit words
 *    (a warp's accesses are contiguous runs: 128 bytes of x / y per token, 384 bytes of a
 *    channel-major window).
 * Slot guess (a.spec) as conv_vec8: read the first row's index through L2 before the PDL wait,
 * load the state at the guess after it beside the real index, reload on a miss.
 * Needs the ls_conv_vec_ok conditions (choose.c): then every pair's words are 4-byte aligned
 * (bf16 weights, x, y, state, inter) and 8-byte aligned (fp32 weights and bias).
 */
#ifndef LS_CONV_PAIR_CUH
#define LS_CONV_PAIR_CUH

#include "conv_vec.cuh"

/* Tokens whose x loads are issued together (TB of conv_pair for T > 1; a longer verify runs in
 * chunks of this many). Decode takes the TB = 1 instance: the 8-token unroll's address and
 * predicate registers cost occupancy (72 instead of 32 registers at W = 2, fp32 weights). */
constexpr int PAIR_TOKENS = 8;

/* The W weights and the bias of channels c0, c0 + 1 as floats: [c][j]. */
template <int W, typename WT> struct pair_wts;

template <int W> struct pair_wts<W, uint16_t> {
    float w[2][W], b[2];
    __device__ __forceinline__ void load(const void *wp, const void *bp, int c0)
    {
        const uint32_t *q = (const uint32_t *)((const uint16_t *)wp + (int64_t)c0 * W); /* 2W bf16 = W words */
        uint32_t r[W];
#pragma unroll
        for (int k = 0; k < W; k++)
            r[k] = __ldg(q + k);
#pragma unroll
        for (int e = 0; e < 2 * W; e++)
            w[e / W][e % W] = pk_get(r, e);
        const uint32_t bw = bp ? __ldg((const uint32_t *)((const uint16_t *)bp + c0)) : 0u;
        b[0] = pk_get(&bw, 0), b[1] = pk_get(&bw, 1);
    }
};

template <int W> struct pair_wts<W, float> {
    float w[2][W], b[2];
    __device__ __forceinline__ void load(const void *wp, const void *bp, int c0)
    {
        const float2 *q = (const float2 *)((const float *)wp + (int64_t)c0 * W); /* 2W floats = W float2 */
#pragma unroll
        for (int k = 0; k < W; k++) {
            const float2 v = __ldg(q + k);
            w[(2 * k) / W][(2 * k) % W] = v.x, w[(2 * k + 1) / W][(2 * k + 1) % W] = v.y;
        }
        const float2 bv = bp ? __ldg((const float2 *)((const float *)bp + c0)) : make_float2(0.f, 0.f);
        b[0] = bv.x, b[1] = bv.y;
    }
};

/*
 * A pair's window (raw bf16 values, v[c][j], column j = 0 oldest) at base, the view's origin for
 * the pair's slot (state or inter window): window-major — column j is the word at
 * base + j*stride_w + c0; channel-major — the pair's 2(W-1) values are W-1 contiguous words at
 * base + c0*(W-1), value (c, j) at position c*(W-1) + j.
 */
template <int N, bool WMAJ>
static __device__ __forceinline__ void pair_load_win(const uint16_t *base, int64_t stride_w, int c0, uint32_t v[2][N])
{
    uint32_t r[N];
#pragma unroll
    for (int k = 0; k < N; k++)
        r[k] = WMAJ ? *(const uint32_t *)(base + k * stride_w + c0) : *((const uint32_t *)(base + (int64_t)c0 * N) + k);
#pragma unroll
    for (int c = 0; c < 2; c++)
#pragma unroll
        for (int j = 0; j < N; j++)
            v[c][j] = WMAJ ? pk_raw(r + j, c) : pk_raw(r, c * N + j);
}

template <int N, bool WMAJ>
static __device__ __forceinline__ void pair_store_win(uint16_t *base, int64_t stride_w, int c0, const uint32_t v[2][N])
{
    uint32_t r[N];
#pragma unroll
    for (int k = 0; k < N; k++) {
        const int e0 = 2 * k, e1 = 2 * k + 1; /* channel-major positions of the word's two values */
        r[k] = WMAJ ? (v[0][k] | (v[1][k] << 16)) : (v[e0 / N][e0 % N] | (v[e1 / N][e1 % N] << 16));
    }
#pragma unroll
    for (int k = 0; k < N; k++) {
        if (WMAJ)
            *(uint32_t *)(base + k * stride_w + c0) = r[k];
        else
            *((uint32_t *)(base + (int64_t)c0 * N) + k) = r[k];
    }
}

/* One token of the pair: y (packed bf16 pair) = act(bias + sum_j w[j] u[t+j]), u = the window
 * then x; the window shifts by one with x appended. */
template <int W, typename WT>
static __device__ __forceinline__ uint32_t pair_step(const ls_conv_params &p, const pair_wts<W, WT> &cw, uint32_t xw,
                                                     uint32_t win[2][W - 1])
{
    constexpr int N = W - 1;
    float y[2];
#pragma unroll
    for (int c = 0; c < 2; c++) {
        float acc = cw.b[c];
#pragma unroll
        for (int j = 0; j < N; j++)
            acc = fmaf(cw.w[c][j], __uint_as_float(win[c][j] << 16), acc);
        acc = fmaf(cw.w[c][N], pk_get(&xw, c), acc);
        y[c] = p.silu ? ls_silu_fast(acc) : acc;
#pragma unroll
        for (int j = 0; j < N - 1; j++)
            win[c][j] = win[c][j + 1];
        win[c][N - 1] = pk_raw(&xw, c);
    }
    return ls_pack_bf16x2(y[0], y[1]);
}

template <int W, bool WMAJ, typename WT, bool INTER, int TB>
__global__ void __launch_bounds__(128) conv_pair(const conv_args a)
{
    constexpr int N = W - 1;
    const ls_conv_params &p = a.p;
    const int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int guess = a.spec && g < a.groups ? ls_slot_guess(p.slot_idx, (int)blockIdx.y, p.slots, a.spec) : -1;
    ls_pdl_wait();
    ls_pdl_trigger();
    if (g >= a.groups)
        return;
    const int c0 = g * 2;
    const uint16_t *state = (const uint16_t *)p.state;
    for (int r = (int)blockIdx.y; r < p.batch; r += (int)gridDim.y, guess = -1) {
        const uint16_t *xp = p.x + (int64_t)r * p.x_stride_b + c0;
        uint32_t xw[TB];
#pragma unroll
        for (int i = 0; i < TB; i++) /* the first chunk's x, independent of the slot */
            xw[i] = i < p.tokens ? __ldg((const uint32_t *)(xp + (int64_t)i * p.x_stride_t)) : 0u;
        uint32_t win[2][N];
        if (guess >= 0)
            pair_load_win<N, WMAJ>(state + (int64_t)guess * p.state_stride_slot, p.state_stride_w, c0, win);
        const int s = p.slot_idx[r];
        pair_wts<W, WT> cw;
        cw.load(p.weight, p.bias, c0);
        if (s < 0)
            continue;
        if (s != guess)
            pair_load_win<N, WMAJ>(state + (int64_t)s * p.state_stride_slot, p.state_stride_w, c0, win);
        uint16_t *yp = p.y + (int64_t)r * p.y_stride_b + c0;
#pragma unroll 1
        for (int t0 = 0; t0 < p.tokens; t0 += TB) {
            if (t0 > 0)
#pragma unroll
                for (int i = 0; i < TB; i++)
                    if (t0 + i < p.tokens)
                        xw[i] = __ldg((const uint32_t *)(xp + (int64_t)(t0 + i) * p.x_stride_t));
#pragma unroll
            for (int i = 0; i < TB; i++) {
                const int t = t0 + i;
                if (t >= p.tokens) /* a guard, not a break: the break made ptxas spill at W = 2 */
                    continue;
                *(uint32_t *)(yp + (int64_t)t * p.y_stride_t) = pair_step<W>(p, cw, xw[i], win);
                if (INTER) {
                    uint16_t *ip = (uint16_t *)p.inter + (int64_t)s * p.inter_stride_slot + (int64_t)t * p.inter_stride_t;
                    if (a.inter_wmaj)
                        pair_store_win<N, true>(ip, p.inter_stride_w, c0, win);
                    else
                        pair_store_win<N, false>(ip, 0, c0, win);
                }
            }
        }
        if (!p.disable_state_update)
            pair_store_win<N, WMAJ>((uint16_t *)p.state + (int64_t)s * p.state_stride_slot, p.state_stride_w, c0, win);
    }
}

#endif
