/*
 * conv_pair.cuh — conv_pair<CPT>, the causal conv1d update kernel with CPT = 2 (conv_pair,
 * conv.variant=pair) or 4 (conv_quad, conv.variant=quad) channels per thread, for any token
 * count, either state orientation, either inter orientation and either weight dtype. Included by
 * conv1d_update.cu, whose launcher instantiates it.
 *
 * Aimed at small-batch verify and window-major (KDA) decode, where conv_cm_tile / conv_vec8 put
 * few threads on few SMs and run the tokens one dependent x load after another. Here:
 *  - grid (channel groups / block, rows) as conv_vec2: with CPT = 2, 4x the threads of
 *    conv_vec8, so at B = 1, C = 4096 the call spreads over 16 SMs instead of 4 (SGLang's
 *    Triton kernel has the same shape: 256 channels per 128-thread program);
 *  - the x of up to PAIR_TOKENS tokens is issued at once beside the slot index, the weights and
 *    the (guessed) state, so a verify call is one L2 round trip plus math instead of T;
 *  - the window is CPT(W-1) bf16 values in registers; every access moves CPT contiguous values
 *    (4 or 8 bytes): x / y per token, one window column (window-major) or a CPT/(W-1)th of the
 *    contiguous CPT(W-1) values (channel-major), the weights row by row.
 * Slot guess (a.spec) as conv_vec8: read the first row's index through L2 before the PDL wait,
 * load the state at the guess after it beside the real index, reload on a miss.
 * Needs the ls_conv_vec_ok conditions (choose.c): then every access of CPT values is aligned to
 * its size (2 * CPT bytes for bf16, 4 * CPT for fp32 weights and bias).
 */
#ifndef LS_CONV_PAIR_CUH
#define LS_CONV_PAIR_CUH

#include "conv_vec.cuh"

/* Tokens whose x loads are issued together (TB of conv_pair for T > 1; a longer verify runs in
 * chunks of this many). Decode takes the TB = 1 instance: the 8-token unroll's address and
 * predicate registers cost occupancy (72 instead of 32 registers at W = 2, fp32 weights). */
constexpr int PAIR_TOKENS = 8;

/* K consecutive 32-bit words as one access (K = 1, 2, 4; the address aligned to 4K bytes):
 * loaded through the read-only path (RO: x, weights) or plainly (the state), and stored. */
template <int K, bool RO> static __device__ __forceinline__ void ldw(const void *p, uint32_t o[K])
{
    if constexpr (K == 1) {
        o[0] = RO ? __ldg((const uint32_t *)p) : *(const uint32_t *)p;
    } else if constexpr (K == 2) {
        const uint2 v = RO ? __ldg((const uint2 *)p) : *(const uint2 *)p;
        o[0] = v.x, o[1] = v.y;
    } else {
        static_assert(K == 4, "ldw: K in 1, 2, 4");
        const uint4 v = RO ? __ldg((const uint4 *)p) : *(const uint4 *)p;
        o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
    }
}

template <int K> static __device__ __forceinline__ void stw(void *p, const uint32_t o[K])
{
    if constexpr (K == 1)
        *(uint32_t *)p = o[0];
    else if constexpr (K == 2)
        *(uint2 *)p = make_uint2(o[0], o[1]);
    else
        *(uint4 *)p = make_uint4(o[0], o[1], o[2], o[3]);
}

/* The W weights and the bias of channels c0 .. c0 + CPT - 1 as floats: w[c][j], b[c]. Row-major
 * [C, W] weights: the CPT rows are CPT*W contiguous values (value (c, j) at c*W + j), loaded as W
 * accesses of CPT values each. */
template <int CPT, int W, typename WT> struct pair_wts {
    float w[CPT][W], b[CPT];
    __device__ __forceinline__ void load(const void *wp, const void *bp, int c0)
    {
        constexpr int K = CPT * (int)sizeof(WT) / 4; /* words per CPT values */
        uint32_t r[K * W], rb[K];
        const WT *q = (const WT *)wp + (int64_t)c0 * W;
#pragma unroll
        for (int k = 0; k < W; k++)
            ldw<K, true>(q + k * CPT, r + k * K);
        if (bp)
            ldw<K, true>((const WT *)bp + c0, rb);
        else
#pragma unroll
            for (int k = 0; k < K; k++)
                rb[k] = 0;
#pragma unroll
        for (int e = 0; e < CPT * W; e++)
            w[e / W][e % W] = sizeof(WT) == 2 ? pk_get(r, e) : __uint_as_float(r[e]);
#pragma unroll
        for (int c = 0; c < CPT; c++)
            b[c] = sizeof(WT) == 2 ? pk_get(rb, c) : __uint_as_float(rb[c]);
    }
};

/*
 * The window of channels c0 .. c0 + CPT - 1 (raw bf16 values v[c][j], column j = 0 oldest) of
 * one slot's view at base (state or inter window): window-major — column j is CPT values at
 * base + j*stride_w + c0; channel-major — the CPT*(W-1) values are contiguous at
 * base + c0*(W-1), value (c, j) at position c*(W-1) + j. Either way W-1 accesses of CPT values.
 */
template <int CPT, int N, bool WMAJ>
static __device__ __forceinline__ void pair_load_win(const uint16_t *base, int64_t stride_w, int c0,
                                                     uint32_t v[CPT][N])
{
    constexpr int K = CPT / 2;
    uint32_t r[K * N];
#pragma unroll
    for (int k = 0; k < N; k++)
        ldw<K, false>(WMAJ ? base + k * stride_w + c0 : base + (int64_t)c0 * N + k * CPT, r + k * K);
#pragma unroll
    for (int c = 0; c < CPT; c++)
#pragma unroll
        for (int j = 0; j < N; j++)
            v[c][j] = pk_raw(r, WMAJ ? j * CPT + c : c * N + j);
}

template <int CPT, int N, bool WMAJ>
static __device__ __forceinline__ void pair_store_win(uint16_t *base, int64_t stride_w, int c0,
                                                      const uint32_t v[CPT][N])
{
    constexpr int K = CPT / 2;
    uint32_t r[K * N];
#pragma unroll
    for (int k = 0; k < K * N; k++) { /* word k holds positions 2k (low half) and 2k + 1 */
        const int e0 = 2 * k, e1 = 2 * k + 1;
        r[k] = WMAJ ? (v[e0 % CPT][e0 / CPT] | (v[e1 % CPT][e1 / CPT] << 16))
                    : (v[e0 / N][e0 % N] | (v[e1 / N][e1 % N] << 16));
    }
#pragma unroll
    for (int k = 0; k < N; k++)
        stw<K>(WMAJ ? base + k * stride_w + c0 : base + (int64_t)c0 * N + k * CPT, r + k * K);
}

/* One token of CPT channels: y (packed bf16, CPT/2 words) = act(bias + sum_j w[j] u[t+j]),
 * u = the window then x (xw: CPT/2 words); the window shifts by one with x appended. */
template <int CPT, int W, typename WT>
static __device__ __forceinline__ void pair_step(const ls_conv_params &p, const pair_wts<CPT, W, WT> &cw,
                                                 const uint32_t xw[CPT / 2], uint32_t win[CPT][W - 1],
                                                 uint32_t yw[CPT / 2])
{
    constexpr int N = W - 1;
    float y[CPT];
#pragma unroll
    for (int c = 0; c < CPT; c++) {
        float acc = cw.b[c];
#pragma unroll
        for (int j = 0; j < N; j++)
            acc = fmaf(cw.w[c][j], __uint_as_float(win[c][j] << 16), acc);
        acc = fmaf(cw.w[c][N], pk_get(xw, c), acc);
        y[c] = p.silu ? ls_silu_fast(acc) : acc;
#pragma unroll
        for (int j = 0; j < N - 1; j++)
            win[c][j] = win[c][j + 1];
        win[c][N - 1] = pk_raw(xw, c);
    }
#pragma unroll
    for (int k = 0; k < CPT / 2; k++)
        yw[k] = ls_pack_bf16x2(y[2 * k], y[2 * k + 1]);
}

/* CPT channels per thread (2: conv_pair, 4: conv_quad), TB tokens' x per batch of loads. */
template <int CPT, int W, bool WMAJ, typename WT, bool INTER, int TB>
__global__ void __launch_bounds__(128) conv_pair(const conv_args a)
{
    constexpr int N = W - 1, K = CPT / 2;
    const ls_conv_params &p = a.p;
    const int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int guess = a.spec && g < a.groups ? ls_slot_guess(p.slot_idx, (int)blockIdx.y, p.slots, a.spec) : -1;
    ls_pdl_wait();
    ls_pdl_trigger();
    if (g >= a.groups)
        return;
    const int c0 = g * CPT;
    const uint16_t *state = (const uint16_t *)p.state;
    for (int r = (int)blockIdx.y; r < p.batch; r += (int)gridDim.y, guess = -1) {
        const uint16_t *xp = p.x + (int64_t)r * p.x_stride_b + c0;
        uint32_t xw[TB][K];
#pragma unroll
        for (int i = 0; i < TB; i++) /* the first chunk's x, independent of the slot */
            if (i < p.tokens)
                ldw<K, true>(xp + (int64_t)i * p.x_stride_t, xw[i]);
        uint32_t win[CPT][N];
        if (guess >= 0)
            pair_load_win<CPT, N, WMAJ>(state + (int64_t)guess * p.state_stride_slot, p.state_stride_w, c0, win);
        const int s = p.slot_idx[r];
        pair_wts<CPT, W, WT> cw;
        cw.load(p.weight, p.bias, c0);
        if (s < 0)
            continue;
        if (s != guess)
            pair_load_win<CPT, N, WMAJ>(state + (int64_t)s * p.state_stride_slot, p.state_stride_w, c0, win);
        uint16_t *yp = p.y + (int64_t)r * p.y_stride_b + c0;
#pragma unroll 1
        for (int t0 = 0; t0 < p.tokens; t0 += TB) {
            if (t0 > 0)
#pragma unroll
                for (int i = 0; i < TB; i++)
                    if (t0 + i < p.tokens)
                        ldw<K, true>(xp + (int64_t)(t0 + i) * p.x_stride_t, xw[i]);
#pragma unroll
            for (int i = 0; i < TB; i++) {
                const int t = t0 + i;
                if (t >= p.tokens) /* a guard, not a break: the break made ptxas spill at W = 2 */
                    continue;
                uint32_t yw[K];
                pair_step<CPT, W, WT>(p, cw, xw[i], win, yw);
                stw<K>(yp + (int64_t)t * p.y_stride_t, yw);
                if (INTER) {
                    uint16_t *ip =
                        (uint16_t *)p.inter + (int64_t)s * p.inter_stride_slot + (int64_t)t * p.inter_stride_t;
                    if (a.inter_wmaj)
                        pair_store_win<CPT, N, true>(ip, p.inter_stride_w, c0, win);
                    else
                        pair_store_win<CPT, N, false>(ip, 0, c0, win);
                }
            }
        }
        if (!p.disable_state_update)
            pair_store_win<CPT, N, WMAJ>((uint16_t *)p.state + (int64_t)s * p.state_stride_slot, p.state_stride_w, c0,
                                         win);
    }
}

#endif
