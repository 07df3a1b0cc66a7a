/*
 * conv_wlat.cuh — conv_wlat<W, WT, TM>, the causal conv1d update for a window-major bf16 state
 * ([slot, W-1, C], channels innermost: KDA) at small batch, where a call is a few KB and its time
 * is the dependent chain of one thread (conv.variant=wlat). Included by conv1d_update.cu, whose
 * launcher instantiates it; the shapes it serves: ls_conv_wlat_ok (choose.c).
 *
 * Why a kernel of its own: conv_pair (the same grid: 2 channels per thread, 128-thread CTAs per
 * 256 channels of a row) compiles to three dependent round trips after the PDL wait (sm_90 SASS
 * of the fp32-weight decode instance): the window at the guessed slot is unpacked inside its
 * branch, so the index load is issued only once the window arrived; the weights were sunk below
 * the padding-row branch on the index, so they are issued only once the index arrived (conv_vec2,
 * whose loads all precede its first branch, beats conv_pair on the same grid at channel-major
 * decode B = 1 by about that: 1.40 vs 1.60 us per call, results/h200/kernels-e3a6ef2/). Here:
 *  - every load of a row — slot index, weights, bias, the x of every token, the window at the
 *    guessed slot — is an inline-asm load (wl_ld: volatile, so the compiler neither reorders
 *    them nor sinks one below a branch), all issued before the first use of any: one round trip
 *    when the guess holds, two when it misses (the reload at the real slot);
 *  - the addresses that depend on no loaded value (weights, bias, x, y) are formed before the
 *    PDL wait, where they overlap the previous kernel (the window's waits for the guess: formed
 *    there only for its prefetch, so without it the wait is not held up by the guess's load);
 *  - with a.prefetch (conv.prefetch) the lines the row will read — weights, bias, x, the window
 *    at the guess — are pulled into L2 before the PDL wait (a prefetch changes no value, so a
 *    stale guess or an input the previous kernel still writes costs nothing but the hint: L2 is
 *    the point of coherence), so the loads after the wait hit L2 even when the inputs were not
 *    resident. The window's prefetch needs the guess, so its round trip comes before the wait:
 *    free while the previous kernel still runs, one round trip more where the CTA starts after
 *    it ended (pdl=off, a first kernel); conv.prefetch=off drops the prefetch;
 *  - the token count is a template bound TM in {1, 2, 4, 8} (the launcher takes the smallest
 *    TM >= T): the x loads, the token loop and the per-token stores are unrolled, the tokens past
 *    T predicated off; T = 1 carries no loop.
 * The window stays raw bf16 (values are copied unchanged: state and inter windows are bit-exact
 * copies of inputs); math fp32 as conv_pair (pair_step). Weights [C, W] of the thread's 2
 * channels are 2W contiguous values, loaded as the widest aligned vectors (fp32 W = 4: two
 * 16-byte loads). Padding rows (slot -1) read their index, x and weights and write nothing.
 */
#ifndef LS_CONV_WLAT_CUH
#define LS_CONV_WLAT_CUH

#include "conv_pair.cuh"

/* V consecutive 32-bit words at p (aligned to 4V bytes) into o, or zeros when pred is 0. NC: the
 * read-only path (x, weights, bias), else a plain load (the state, the slot index). */
template <int V, bool NC> static __device__ __forceinline__ void wl_ld(const void *p, int pred, uint32_t o[V])
{
    if constexpr (V == 1) {
        if constexpr (NC)
            asm volatile("{ .reg .pred q; setp.ne.b32 q, %2, 0; mov.b32 %0, 0; @q ld.global.nc.b32 %0, [%1]; }"
                         : "=r"(o[0]) : "l"(p), "r"(pred) : "memory");
        else
            asm volatile("{ .reg .pred q; setp.ne.b32 q, %2, 0; mov.b32 %0, 0; @q ld.global.b32 %0, [%1]; }"
                         : "=r"(o[0]) : "l"(p), "r"(pred) : "memory");
    } else if constexpr (V == 2) {
        static_assert(NC, "wl_ld: vectors are read-only inputs");
        asm volatile("{ .reg .pred q; setp.ne.b32 q, %3, 0; mov.b32 %0, 0; mov.b32 %1, 0;\n"
                     "  @q ld.global.nc.v2.b32 {%0, %1}, [%2]; }"
                     : "=r"(o[0]), "=r"(o[1]) : "l"(p), "r"(pred) : "memory");
    } else {
        static_assert(V == 4 && NC, "wl_ld: V in 1, 2, 4");
        asm volatile("{ .reg .pred q; setp.ne.b32 q, %5, 0; mov.b32 %0, 0; mov.b32 %1, 0; mov.b32 %2, 0;\n"
                     "  mov.b32 %3, 0; @q ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4]; }"
                     : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3]) : "l"(p), "r"(pred) : "memory");
    }
}

/* Forces v to be computed here (before the PDL wait that follows), not where it is first used. */
template <typename T> static __device__ __forceinline__ void wl_now(T *&v) { asm volatile("" : "+l"(v)); }

template <int W, typename WT, int TM>
__global__ void __launch_bounds__(128) conv_wlat(const conv_args a)
{
    constexpr int N = W - 1;
    constexpr int WW = 2 * W * (int)sizeof(WT) / 4;           /* weight words of the 2 channels */
    constexpr int WV = WW % 4 == 0 ? 4 : WW % 2 == 0 ? 2 : 1; /* words per weight load */
    constexpr int BW = (int)sizeof(WT) / 2;                   /* bias words of the 2 channels */
    const ls_conv_params &p = a.p;
    const int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int live = g < a.groups;
    const int c0 = 2 * g, r0 = (int)blockIdx.y;
    int guess = a.spec && live ? ls_slot_guess(p.slot_idx, r0, p.slots, a.spec) : -1;

    /* Addresses of the first row that depend on no loaded value (and the guess's). */
    const uint32_t *wq = (const uint32_t *)((const WT *)p.weight + (int64_t)c0 * W);
    const uint32_t *bq = (const uint32_t *)((const WT *)(p.bias ? p.bias : p.weight) + c0);
    const uint16_t *gst = (const uint16_t *)p.state + (int64_t)(guess < 0 ? 0 : guess) * p.state_stride_slot + c0;
    const uint16_t *xp = p.x + (int64_t)r0 * p.x_stride_b + c0;
    uint16_t *yp = p.y + (int64_t)r0 * p.y_stride_b + c0;
    wl_now(wq), wl_now(bq), wl_now(xp), wl_now(yp); /* not gst: it waits for the guess */
    if (a.prefetch && live) {
        ls_prefetch_l2(wq);
        ls_prefetch_l2(wq + WW - 1); /* the 2 channels' weights may straddle a line (W = 3) */
        if (p.bias)
            ls_prefetch_l2(bq);
#pragma unroll
        for (int t = 0; t < TM; t++)
            if (t < p.tokens)
                ls_prefetch_l2(xp + t * p.x_stride_t);
        if (guess >= 0) /* last: these wait for the guess (hidden while the previous kernel runs) */
#pragma unroll
            for (int k = 0; k < N; k++)
                ls_prefetch_l2(gst + k * p.state_stride_w);
    }
    ls_pdl_wait();
    ls_pdl_trigger();
    if (!live)
        return;

    uint32_t wr[WW], br[BW];
#pragma unroll
    for (int k = 0; k < WW / WV; k++)
        wl_ld<WV, true>(wq + k * WV, 1, wr + k * WV);
    wl_ld<BW, true>(bq, p.bias != NULL, br);
    const int64_t dx = (int64_t)gridDim.y * p.x_stride_b, dy = (int64_t)gridDim.y * p.y_stride_b; /* rows > 65535 */
    for (int r = r0; r < p.batch; r += (int)gridDim.y, guess = -1, xp += dx, yp += dy) {
        uint32_t s, xw[TM], gw[N];
        wl_ld<1, false>(p.slot_idx + r, 1, &s);
#pragma unroll
        for (int t = 0; t < TM; t++)
            wl_ld<1, true>(xp + t * p.x_stride_t, t < p.tokens, &xw[t]);
#pragma unroll
        for (int k = 0; k < N; k++)
            wl_ld<1, false>(gst + k * p.state_stride_w, guess >= 0, &gw[k]);
        /* every load of the row is in flight: first use */
        if ((int)s < 0)
            continue;
        uint16_t *sb = (uint16_t *)gst; /* the row's window: at the guess, or reloaded at s */
        if ((int)s != guess) {
            sb = (uint16_t *)p.state + (int64_t)(int)s * p.state_stride_slot + c0;
#pragma unroll
            for (int k = 0; k < N; k++)
                gw[k] = *(const uint32_t *)(sb + k * p.state_stride_w);
        }
        uint32_t win[2][N]; /* raw bf16 of channel c, column k (0 oldest) */
#pragma unroll
        for (int k = 0; k < N; k++)
            win[0][k] = gw[k] & 0xffffu, win[1][k] = gw[k] >> 16;
        pair_wts<2, W, WT> cw;
#pragma unroll
        for (int e = 0; e < 2 * W; e++)
            cw.w[e / W][e % W] = sizeof(WT) == 2 ? pk_get(wr, e) : __uint_as_float(wr[e]);
#pragma unroll
        for (int c = 0; c < 2; c++)
            cw.b[c] = sizeof(WT) == 2 ? pk_get(br, c) : __uint_as_float(br[c]);
#pragma unroll
        for (int t = 0; t < TM; t++) {
            if (t >= p.tokens) /* a guard, not a break (TM bounds T) */
                continue;
            uint32_t yw;
            pair_step<2, W, WT>(p, cw, &xw[t], win, &yw);
            *(uint32_t *)(yp + t * p.y_stride_t) = yw;
            if (p.inter) {
                uint16_t *ip = (uint16_t *)p.inter + (int64_t)(int)s * p.inter_stride_slot + t * p.inter_stride_t;
                if (a.inter_wmaj)
                    pair_store_win<2, N, true>(ip, p.inter_stride_w, c0, win);
                else
                    pair_store_win<2, N, false>(ip, 0, c0, win);
            }
        }
        if (!p.disable_state_update)
            pair_store_win<2, N, true>(sb - c0, p.state_stride_w, c0, win);
    }
}

#endif /* LS_CONV_WLAT_CUH */
