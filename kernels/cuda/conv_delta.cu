/*
 * conv_delta.cu — the fused conv update + GDN/KDA recurrence (ls_conv_delta_params, docs/ops.md):
 * one kernel per call, the conv output never leaves the CTA.
 *
 * Work split: one cluster of NS CTAs (NS = 1, 2, 4 or 8; grid (B*H, NS)) per (request row r, key
 * head h). CTA `rank` of it takes a 1/NS slice of the G*V value columns of the G = HV/H value
 * heads sharing h: the conv of those v channels, and the conv of the head's K q and K k channels
 * (every rank needs them all; rank 0 alone stores their windows and state). A conv state element
 * thus has one writer, and the q/k state is stored only after the cluster barrier that follows
 * every rank's read of it, so no CTA reads a conv state another one is updating (decode updates
 * it in place). NS > 1 spreads small batches over the SMs (B*H alone is a few CTAs at B = 1).
 * Phases:
 *   1. conv: one thread per channel, the W-1 stored inputs in registers, T outputs SiLU'd and
 *      rounded to bf16 (as the conv op stores them) into shared memory; windows after each
 *      step and the final window stored as the conv half's flags say (q/k state: after the
 *      cluster barrier);
 *   2. gates (decay, beta) per (token, value head) and the L2 norms of q and k per token, in
 *      shared memory;
 *   3. recurrence: 4 adjacent lanes per (value head, value column j), each holding 32 key rows
 *      of the state column in registers (K <= 128); sums over K in-lane plus two shuffles; o,
 *      per-step states, final state.
 * Padding rows (slot < 0) leave at once: nothing read or written, o included.
 *
 * The recurrence keeps a serial K/4 loop per lane and the q/k conv is recomputed by every rank
 * of a cluster. It already moves the fused minimum (no conv output round trip); see docs/bytes.md.
 */
#include "ls_cuda.h"
#include "cuda_common.cuh"

#include <cooperative_groups.h>
#include <stdio.h>

namespace ls_cd {

constexpr int MAXK = 128;          /* a state column, split over LANES lanes, in registers */
constexpr int LANES = 4;           /* lanes per value column (adjacent: shuffles xor 1, 2) */
constexpr int ROWS = MAXK / LANES; /* key rows per lane: S, k and q rows stay in registers */
constexpr int MAXTHREADS = 256;
constexpr int MAXSPLIT = 8;      /* the portable cluster size */

static __device__ __forceinline__ float ld_any(const void *p, ls_dtype dt, int64_t i)
{
    return dt == LS_F32 ? ((const float *)p)[i] : ls_bf2f(((const uint16_t *)p)[i]);
}

static __device__ __forceinline__ void st_any(void *p, ls_dtype dt, int64_t i, float v)
{
    if (dt == LS_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = ls_f2bf(v);
}

static __device__ __forceinline__ float ld_st(const float *p, int64_t i) { return p[i]; }
static __device__ __forceinline__ float ld_st(const uint16_t *p, int64_t i) { return ls_bf2f(p[i]); }
static __device__ __forceinline__ void st_st(float *p, int64_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void st_st(uint16_t *p, int64_t i, float v) { p[i] = ls_f2bf(v); }

/* exp(-e^A_log softplus(x)) with full-precision expf/log1pf (as delta_rule.cuh's delta_decay). */
static __device__ __forceinline__ float decay(float neg_a, float x)
{
    return expf(neg_a * (x <= 20.0f ? log1pf(expf(x)) : x));
}

/* Shared floats of one CTA of an NS-way split: q, k [T][K], v [T][G*V/NS], gates
 * [T][G][KDA ? K : 1], beta [T][G]. */
static inline size_t smem_floats(const ls_conv_delta_params &P, int ns)
{
    const ls_delta_params &d = P.delta;
    const size_t T = (size_t)d.tokens, K = (size_t)d.dk, G = (size_t)(d.heads_v / d.heads_qk);
    return T * (2 * K + G * (size_t)d.dv / (size_t)ns + G * (P.kda ? K : 1) + G);
}

template <typename ST, bool KDA>
__global__ void __launch_bounds__(MAXTHREADS) conv_delta_kernel(const ls_conv_delta_params P)
{
    extern __shared__ float sm[];
    const ls_conv_params &c = P.conv;
    const ls_delta_params &d = P.delta;
    const int H = d.heads_qk, HV = d.heads_v, K = d.dk, V = d.dv, T = d.tokens, W = c.width;
    const int G = HV / H, NS = gridDim.y, rank = blockIdx.y;
    const int GVs = G * V / NS, col0 = rank * GVs; /* this CTA's value columns [col0, col0 + GVs) */
    const int r = blockIdx.x / H, h = blockIdx.x % H;
    ls_pdl_wait();
    ls_pdl_trigger();
    const int slot = d.slot_idx[r];
    if (slot < 0)
        return; /* padding row: nothing read or written (the whole cluster leaves: same row) */

    float *q_s = sm, *k_s = q_s + T * K, *v_s = k_s + T * K;
    float *g_s = v_s + (size_t)T * GVs, *b_s = g_s + (size_t)T * G * (KDA ? K : 1);

    /* ---- 1. conv of the head's 2K q/k channels and this CTA's GVs v channels */
    const int nch = 2 * K + GVs;
    const bool qk_owner = rank == 0;
    for (int i = threadIdx.x; i < nch; i += blockDim.x) {
        int ch, stride;
        float *dst;
        const bool qk = i < 2 * K;
        if (i < K) {
            ch = h * K + i, dst = q_s + i, stride = K;
        } else if (i < 2 * K) {
            ch = H * K + h * K + (i - K), dst = k_s + (i - K), stride = K;
        } else { /* v channels of value heads h*G .. h*G+G-1 are contiguous: column col of the group */
            ch = 2 * H * K + h * G * V + col0 + (i - 2 * K), dst = v_s + (i - 2 * K), stride = GVs;
        }
        const int64_t sbase = (int64_t)slot * c.state_stride_slot + (int64_t)ch * c.state_stride_c;
        float win[3], wt[4];
#pragma unroll
        for (int j = 0; j < 3; j++)
            win[j] = j < W - 1 ? ld_any(c.state, c.state_dtype, sbase + j * c.state_stride_w) : 0.0f;
#pragma unroll
        for (int j = 0; j < 4; j++)
            wt[j] = j < W ? ld_any(c.weight, c.weight_dtype, (int64_t)ch * W + j) : 0.0f;
        const float bias = c.bias ? ld_any(c.bias, c.weight_dtype, ch) : 0.0f;
        const float wlast = W == 2 ? wt[1] : W == 3 ? wt[2] : wt[3]; /* constant indices: registers */
        for (int t = 0; t < T; t++) {
            const float xt = ls_bf2f(c.x[(int64_t)r * c.x_stride_b + (int64_t)t * c.x_stride_t + (int64_t)ch * c.x_stride_c]);
            float acc = bias;
#pragma unroll
            for (int j = 0; j < 3; j++)
                if (j < W - 1)
                    acc = fmaf(wt[j], win[j], acc);
            acc = fmaf(wlast, xt, acc);
            if (c.silu)
                acc = acc / (1.0f + expf(-acc));
            dst[t * stride] = ls_bf2f(ls_f2bf(acc)); /* the conv op stores y as bf16 */
#pragma unroll
            for (int j = 0; j < 3; j++)
                if (j < W - 1)
                    win[j] = j + 1 < W - 1 ? win[j + 1] : xt;
            if (c.inter && (!qk || qk_owner)) {
                const int64_t ib = (int64_t)slot * c.inter_stride_slot + (int64_t)t * c.inter_stride_t +
                                   (int64_t)ch * c.inter_stride_c;
#pragma unroll
                for (int j = 0; j < 3; j++)
                    if (j < W - 1)
                        st_any(c.inter, c.state_dtype, ib + j * c.inter_stride_w, win[j]);
            }
        }
        if (!c.disable_state_update && !qk) /* v: this CTA's own channels, read by no other */
#pragma unroll
            for (int j = 0; j < 3; j++)
                if (j < W - 1)
                    st_any(c.state, c.state_dtype, sbase + j * c.state_stride_w, win[j]);
    }
    /* q/k state: rank 0 stores it once every rank of the cluster has read it */
    if (NS > 1 && !c.disable_state_update)
        cooperative_groups::this_cluster().sync();
    if (qk_owner && !c.disable_state_update)
        for (int i = threadIdx.x; i < 2 * K; i += blockDim.x) {
            const int ch = i < K ? h * K + i : H * K + h * K + (i - K);
            const int64_t sbase = (int64_t)slot * c.state_stride_slot + (int64_t)ch * c.state_stride_c;
            float win[3]; /* reloaded (phase 1's registers belong to other loop trips) */
            /* the last W-1 inputs u[T .. T+W-2]: the old state's tail, then x */
#pragma unroll
            for (int j = 0; j < 3; j++) {
                if (j >= W - 1)
                    continue;
                const int src = T + j; /* index into u = [state(W-1), x(T)] */
                win[j] = src < W - 1 ? ld_any(c.state, c.state_dtype, sbase + src * c.state_stride_w)
                                     : ls_bf2f(c.x[(int64_t)r * c.x_stride_b + (int64_t)(src - (W - 1)) * c.x_stride_t +
                                                   (int64_t)ch * c.x_stride_c]);
            }
#pragma unroll
            for (int j = 0; j < 3; j++)
                if (j < W - 1)
                    st_any(c.state, c.state_dtype, sbase + j * c.state_stride_w, win[j]);
        }

    /* ---- 2a. gates and beta per (token, value head [, key row]) */
    const int ng = T * G * (KDA ? K : 1);
    for (int i = threadIdx.x; i < ng; i += blockDim.x) {
        const int k = KDA ? i % K : 0, tg = KDA ? i / K : i, t = tg / G, hv = h * G + tg % G;
        const int64_t bt = (int64_t)r * T + t;
        const float neg_a = -expf(d.A_log[hv]);
        if (KDA)
            g_s[i] = decay(neg_a, ls_bf2f(d.a[(bt * HV + hv) * K + k]) + ((const float *)d.dt_bias)[(int64_t)hv * K + k]);
        else
            g_s[i] = decay(neg_a, ls_bf2f(d.a[bt * HV + hv]) + ls_bf2f(((const uint16_t *)d.dt_bias)[hv]));
        if (k == 0)
            b_s[tg] = 1.0f / (1.0f + expf(-ls_bf2f(d.b[bt * HV + hv])));
    }
    __syncthreads();

    /* ---- 2b. q <- q / |q| * scale, k <- k / |k| per token: one warp per row */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int row = warp; row < 2 * T; row += nwarps) {
        float *v = (row < T ? q_s : k_s) + (row % T) * K;
        float ss = 0.0f;
        for (int k = lane; k < K; k += 32)
            ss = fmaf(v[k], v[k], ss);
#pragma unroll
        for (int m = 16; m > 0; m >>= 1)
            ss += __shfl_xor_sync(0xffffffffu, ss, m);
        const float f = rsqrtf(ss + 1e-6f) * (row < T ? d.scale : 1.0f);
        __syncwarp();
        for (int k = lane; k < K; k += 32)
            v[k] *= f;
    }
    __syncthreads();

    /* ---- 3. recurrence: LANES adjacent lanes per (value head, column), each ROWS key rows of
     * the state column in registers; sums over K: in-lane, then shuffles among the LANES. Every
     * lane runs the same trip count (items rounded up to the CTA) so the shuffles see full warps. */
    const int items = LANES * GVs, trips = (items + blockDim.x - 1) / blockDim.x;
    for (int n = 0; n < trips; n++) {
        const int it = n * blockDim.x + threadIdx.x;
        const bool live = it < items;
        const int part = it % LANES, lc = (live ? it : 0) / LANES, col = col0 + lc;
        const int g = col / V, j = col % V, hv = h * G + g;
        const int k0 = part * ROWS;
        const int64_t head = (int64_t)hv * K * V + j;
        const ST *src = (const ST *)d.state + (int64_t)slot * d.state_stride_slot + head;
        float S[ROWS];
#pragma unroll
        for (int i = 0; i < ROWS; i++)
            S[i] = live && k0 + i < K ? ld_st(src, (int64_t)(k0 + i) * V) : 0.0f;
        for (int t = 0; t < T; t++) {
            const float *kn = k_s + t * K + k0, *qn = q_s + t * K + k0;
            if (KDA) {
                const float *e = g_s + (size_t)(t * G + g) * K + k0;
#pragma unroll
                for (int i = 0; i < ROWS; i++)
                    if (k0 + i < K)
                        S[i] *= e[i];
            } else {
                const float e = g_s[t * G + g];
#pragma unroll
                for (int i = 0; i < ROWS; i++)
                    S[i] *= e;
            }
            float sk = 0.0f;
#pragma unroll
            for (int i = 0; i < ROWS; i++)
                if (k0 + i < K)
                    sk = fmaf(S[i], kn[i], sk);
#pragma unroll
            for (int m = 1; m < LANES; m *= 2)
                sk += __shfl_xor_sync(0xffffffffu, sk, m);
            const float u = b_s[t * G + g] * (v_s[(size_t)t * GVs + lc] - sk);
            float o = 0.0f;
#pragma unroll
            for (int i = 0; i < ROWS; i++)
                if (k0 + i < K) {
                    S[i] = fmaf(kn[i], u, S[i]);
                    o = fmaf(S[i], qn[i], o);
                }
#pragma unroll
            for (int m = 1; m < LANES; m *= 2)
                o += __shfl_xor_sync(0xffffffffu, o, m);
            if (live && part == 0)
                d.o[(((int64_t)r * T + t) * HV + hv) * V + j] = ls_f2bf(o);
            if (live && d.inter) {
                ST *dst = (ST *)d.inter + (int64_t)slot * d.inter_stride_slot + (int64_t)t * HV * K * V + head;
#pragma unroll
                for (int i = 0; i < ROWS; i++)
                    if (k0 + i < K)
                        st_st(dst, (int64_t)(k0 + i) * V, S[i]);
            }
        }
        if (live && !d.disable_state_update) {
            ST *dst = (ST *)d.state + (int64_t)slot * d.state_stride_slot + head;
#pragma unroll
            for (int i = 0; i < ROWS; i++)
                if (k0 + i < K)
                    st_st(dst, (int64_t)(k0 + i) * V, S[i]);
        }
    }
}

/* Launch with a (1, ns, 1) cluster when ns > 1 and the PDL attribute when pdl. */
template <typename ST, bool KDA>
static int launch_typed(const ls_conv_delta_params *p, int ns, int threads, size_t smem, cudaStream_t st, int pdl)
{
    auto *kern = conv_delta_kernel<ST, KDA>;
    if (smem > 48 * 1024)
        LS_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(p->delta.batch * p->delta.heads_qk), (unsigned)ns, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cudaLaunchAttribute attr[2];
    int n = 0;
    if (pdl) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (ns > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = 1, attr[n].val.clusterDim.y = (unsigned)ns, attr[n].val.clusterDim.z = 1;
        n++;
    }
    cfg.attrs = attr, cfg.numAttrs = (unsigned)n;
    LS_CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, *p));
    LS_CUDA_CHECK_LAUNCH("conv_delta_kernel");
    return 0;
}

/*
 * Ways to split a (row, key head) over a cluster: the largest power of two <= MAXSPLIT that
 * divides G*V into slices of at least 32 columns, while B*H*ns stays within two CTAs per SM —
 * so small batches fill the SMs and large ones keep one CTA per (row, head).
 */
static int cta_split(const ls_conv_delta_params *p, int sm_count)
{
    const int gv = p->delta.heads_v / p->delta.heads_qk * p->delta.dv;
    const long long tiles = (long long)p->delta.batch * p->delta.heads_qk;
    int ns = 1;
    while (ns < MAXSPLIT && gv % (2 * ns) == 0 && gv / (2 * ns) >= 32 && tiles * 2 * ns <= 2LL * sm_count)
        ns *= 2;
    return ns;
}

/* Threads of a CTA: the recurrence's LANES*G*V/ns lanes rounded up to warps, 64..256 (more
 * trips past 256). */
static int cta_threads(const ls_conv_delta_params *p, int ns)
{
    const int items = LANES * (p->delta.heads_v / p->delta.heads_qk) * p->delta.dv / ns;
    const int t = (items + 31) / 32 * 32;
    return t < 64 ? 64 : t > MAXTHREADS ? MAXTHREADS : t;
}

} /* namespace ls_cd */

/* One line for explain (the `kernel` column), for a device of sm_count SMs. */
extern "C" int ls_cuda_conv_delta_describe(const ls_conv_delta_params *p, const ls_tuning *t, int sm_count,
                                           char *buf, size_t cap)
{
    const int ns = ls_cd::cta_split(p, sm_count > 0 ? sm_count : 1);
    const int n = snprintf(buf, cap, "conv_delta_%s grid=(%d,%d) cluster=%d block=%d smem=%zu%s",
                           p->kda ? "kda" : "gdn", p->delta.batch * p->delta.heads_qk, ns, ns,
                           ls_cd::cta_threads(p, ns), ls_cd::smem_floats(*p, ns) * sizeof(float),
                           ls_tune_get(t, LS_KNOB_PDL) == LS_PDL_ON ? " pdl" : "");
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

extern "C" int ls_cuda_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s)
{
    if (ls_conv_delta_params_check(p))
        return -1;
    if (p->delta.state_layout != LS_STATE_KV) /* the impl declares LS_IMPL_KV only */
        return ls_fail("cuda conv_delta: state_layout %s: this kernel takes kv ([K, V] per head) only",
                       ls_state_layout_name(p->delta.state_layout));
    if (p->delta.dk > ls_cd::MAXK)
        return LS_OP_UNSUPPORTED; /* the state column lives in registers: K <= 128 by design */
    const int ns = ls_cd::cta_split(p, ls_cuda_sm_count());
    const size_t smem = ls_cd::smem_floats(*p, ns) * sizeof(float);
    int dev = 0, max_smem = 0;
    LS_CUDA_TRY(cudaGetDevice(&dev));
    LS_CUDA_TRY(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (smem > (size_t)max_smem)
        return LS_OP_UNSUPPORTED; /* T x (2K + G*V ...) activations do not fit one CTA */
    const int threads = ls_cd::cta_threads(p, ns), pdl = ls_tune_get(t, LS_KNOB_PDL) == LS_PDL_ON;
    cudaStream_t st = ls_cuda_stream(s);
    if (p->delta.state_dtype == LS_F32)
        return p->kda ? ls_cd::launch_typed<float, true>(p, ns, threads, smem, st, pdl)
                      : ls_cd::launch_typed<float, false>(p, ns, threads, smem, st, pdl);
    return p->kda ? ls_cd::launch_typed<uint16_t, true>(p, ns, threads, smem, st, pdl)
                  : ls_cd::launch_typed<uint16_t, false>(p, ns, threads, smem, st, pdl);
}
