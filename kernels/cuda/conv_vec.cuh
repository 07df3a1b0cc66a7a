/*
 * conv_vec.cuh — the 8-channel vector building blocks of the causal conv1d update
 * (conv1d_update.cu: conv_vec8, conv_vec2, conv_cm_tile, the launcher):
 * the kernels' argument struct, packed-bf16 window helpers, weight loading, one conv token for
 * 8 channels (conv_step8) and the window store in either orientation (conv_store_win8).
 * Private to kernels/cuda; include from .cu files only.
 */
#ifndef LS_CONV_VEC_CUH
#define LS_CONV_VEC_CUH

#include "cuda_common.cuh"

/* Work description passed by value to every conv kernel (fields from the plan, choose.h). */
struct conv_args {
    ls_conv_params p;
    int32_t groups;      /* channel groups per row (C/2 conv_vec2 / pair / wlat, C/4 quad, C/8 conv_vec8, 256-channel tiles, C scalar) */
    int32_t inter_wmaj;  /* conv_vec8: inter windows are window-major (stride_c == 1) */
    int32_t prefetch;    /* conv_cm_tile / conv_wlat: warm L2 before the PDL wait (knob conv.prefetch) */
    int32_t spec;        /* the small-batch kernels' slot guess: an ls_spec (knob conv.speculate) */
};

/* --------------------------------------------------------------------- vector path */

/* bf16 value e of a packed array of 32-bit words (element 0 in the low half of word 0). */
static __device__ __forceinline__ uint32_t pk_raw(const uint32_t *w, int e)
{
    return (e & 1) ? (w[e >> 1] >> 16) : (w[e >> 1] & 0xffffu);
}
static __device__ __forceinline__ float pk_get(const uint32_t *w, int e) { return __uint_as_float(pk_raw(w, e) << 16); }
static __device__ __forceinline__ void pk_set(uint32_t *w, int e, uint32_t h)
{
    w[e >> 1] = (e & 1) ? ((w[e >> 1] & 0xffffu) | (h << 16)) : ((w[e >> 1] & 0xffff0000u) | h);
}

/* Position of window element (channel c, column j) in the 8(W-1) values of a group:
 * channel-major c*(W-1)+j (one contiguous run), window-major j*8+c (one vector per column). */
template <int N, bool WMAJ>
static __device__ __forceinline__ int win_pos(int c, int j) { return WMAJ ? j * 8 + c : c * N + j; }

/* Weights of the 8 channels (row-major [8][W]) and their bias, loaded with 16-byte vectors
 * through the read-only path (every row re-reads them: they live in L1/L2). bf16 weights stay
 * packed (4W words instead of 8W floats) and are widened at use. */
template <int W, typename WT> struct conv_wts;

template <int W> struct conv_wts<W, uint16_t> {
    uint32_t w[4 * W], b[4];
    __device__ __forceinline__ void load(const void *wp, const void *bp, int c0)
    {
        const uint16_t *wq = (const uint16_t *)wp + (int64_t)c0 * W;
#pragma unroll
        for (int k = 0; k < W; k++) {
            uint4 v = ls_ld16_ro(wq + 8 * k);
            w[4 * k] = v.x, w[4 * k + 1] = v.y, w[4 * k + 2] = v.z, w[4 * k + 3] = v.w;
        }
        uint4 v = bp ? ls_ld16_ro((const uint16_t *)bp + c0) : make_uint4(0, 0, 0, 0);
        b[0] = v.x, b[1] = v.y, b[2] = v.z, b[3] = v.w;
    }
    __device__ __forceinline__ float wt(int c, int j) const { return pk_get(w, c * W + j); }
    __device__ __forceinline__ float bias(int c) const { return pk_get(b, c); }
};

template <int W> struct conv_wts<W, float> {
    float w[8 * W], b[8];
    __device__ __forceinline__ void load(const void *wp, const void *bp, int c0)
    {
        const float *wq = (const float *)wp + (int64_t)c0 * W;
#pragma unroll
        for (int k = 0; k < 2 * W; k++) {
            float4 v = __ldg((const float4 *)(wq + 4 * k));
            w[4 * k] = v.x, w[4 * k + 1] = v.y, w[4 * k + 2] = v.z, w[4 * k + 3] = v.w;
        }
#pragma unroll
        for (int k = 0; k < 2; k++) {
            float4 v = bp ? __ldg((const float4 *)((const float *)bp + c0 + 4 * k)) : make_float4(0.f, 0.f, 0.f, 0.f);
            b[4 * k] = v.x, b[4 * k + 1] = v.y, b[4 * k + 2] = v.z, b[4 * k + 3] = v.w;
        }
    }
    __device__ __forceinline__ float wt(int c, int j) const { return w[c * W + j]; }
    __device__ __forceinline__ float bias(int c) const { return b[c]; }
};

/*
 * One token for 8 channels: y[c] = act(bias[c] + sum_j w[c,j] u[j]) with u = the window then x
 * (fp32 math), and the packed window (layout WMAJ) shifted by one with x appended.
 */
template <int W, bool WMAJ, typename WT>
static __device__ __forceinline__ void conv_step8(const ls_conv_params &p, const conv_wts<W, WT> &cw, uint4 xv,
                                                  uint32_t win[4 * (W - 1)], float yf[8])
{
    constexpr int N = W - 1;
    const uint32_t xw[4] = {xv.x, xv.y, xv.z, xv.w};
    uint32_t nw[4 * N];
#pragma unroll
    for (int k = 0; k < 4 * N; k++)
        nw[k] = 0;
#pragma unroll
    for (int c = 0; c < 8; c++) {
        float acc = cw.bias(c);
#pragma unroll
        for (int j = 0; j < N; j++)
            acc = fmaf(cw.wt(c, j), pk_get(win, win_pos<N, WMAJ>(c, j)), acc);
        acc = fmaf(cw.wt(c, N), pk_get(xw, c), acc);
        yf[c] = p.silu ? ls_silu_fast(acc) : acc;
#pragma unroll
        for (int j = 0; j < N - 1; j++)
            pk_set(nw, win_pos<N, WMAJ>(c, j), pk_raw(win, win_pos<N, WMAJ>(c, j + 1)));
        pk_set(nw, win_pos<N, WMAJ>(c, N - 1), pk_raw(xw, c));
    }
#pragma unroll
    for (int k = 0; k < 4 * N; k++)
        win[k] = nw[k];
}

/* The same, loading the weights of channels c0..c0+7 first. */
template <int W, bool WMAJ, typename WT>
static __device__ __forceinline__ void conv_step8(const ls_conv_params &p, int c0, uint4 xv, uint32_t win[4 * (W - 1)],
                                                  float yf[8])
{
    conv_wts<W, WT> cw;
    cw.load(p.weight, p.bias, c0);
    conv_step8<W, WMAJ, WT>(p, cw, xv, win, yf);
}

/* The state of slot s at channel c0 (a group's first channel) in either orientation: the
 * window's W-1 columns start here (window-major: columns stride_w apart; channel-major: the
 * group's 8(W-1) values contiguous). */
template <int N, bool WMAJ>
static __device__ __forceinline__ uint16_t *conv_state8(const ls_conv_params &p, int s, int c0)
{
    return (uint16_t *)p.state + (int64_t)s * p.state_stride_slot + (WMAJ ? c0 : (int64_t)c0 * N);
}

/* Store a packed window (layout FROM) in orientation TO: W-1 16-byte vectors at base, columns
 * stride_w apart when TO is window-major, contiguous when channel-major. */
template <int N, bool FROM, bool TO>
static __device__ __forceinline__ void conv_store_win8(uint16_t *base, int64_t stride_w, const uint32_t win[4 * N])
{
    uint32_t out[4 * N];
    if (FROM == TO) {
#pragma unroll
        for (int k = 0; k < 4 * N; k++)
            out[k] = win[k];
    } else {
#pragma unroll
        for (int k = 0; k < 4 * N; k++)
            out[k] = 0;
#pragma unroll
        for (int c = 0; c < 8; c++)
#pragma unroll
            for (int j = 0; j < N; j++)
                pk_set(out, win_pos<N, TO>(c, j), pk_raw(win, win_pos<N, FROM>(c, j)));
    }
#pragma unroll
    for (int k = 0; k < N; k++)
        ls_st16(base + (TO ? k * stride_w : 8 * k), make_uint4(out[4 * k], out[4 * k + 1], out[4 * k + 2], out[4 * k + 3]));
}

#endif /* LS_CONV_VEC_CUH */
