/*
 * conv_pipe.cu — the persistent, software-pipelined variant of the conv1d update's vector
 * kernel (LS_CONV_VARIANT=pipe; selected by the launcher in conv1d_update.cu). Same work split
 * and same math as conv_vec8 (conv_vec.cuh); what differs is the grid (one wave, rows walked
 * per thread) and the loads (cp.async into a two-stage shared-memory buffer, one row ahead).
 */
#include <cuda_pipeline_primitives.h>

#include "conv_vec.cuh"

/* ------------------------------------------------------------- persistent pipelined path */

/*
 * conv_pipe (LS_CONV_VARIANT=pipe): conv_vec8's per-thread work (8 channels of a row, 16-byte
 * accesses, either state orientation) in a grid of about one full wave, each thread walking
 * several rows with a two-stage software pipeline. Block (bx, by) = channel groups
 * bx*128 + tid of rows by, by + gridDim.y, ...: a thread keeps ONE channel group (its weights
 * stay L1-hot) and the 128 threads of a block share a row (the slot index load is a broadcast).
 * In-flight data lives in shared memory, not registers: the next row's W-1 state vectors and
 * token-0 x are issued with cp.async (16 B, L1 bypass) into the other stage of a per-thread
 * buffer BEFORE the current row's math and stores, and the slot index of the row after that is
 * loaded one row ahead of its state, so two rows' loads are in flight per thread at the
 * register cost of conv_vec8. x is fetched for padding rows too (x covers all B rows; reading is
 * harmless), so x is off the index -> state chain. Padding rows never touch state, inter or y.
 * Buffer: [stage][vector k][tid] (k = 0..W-2 state, W-1 x): consecutive threads hit
 * consecutive 16-byte words (no bank conflicts); each thread only reads what it copied itself,
 * so __pipeline_wait_prior is the only synchronisation (no barriers; idle threads may exit).
 * The per-row token loop repeats conv_vec8's on purpose: sharing it as a helper changed ptxas's
 * allocation of the measured default (conv_vec8 W=4 decode 60 -> 64 registers).
 */
/* Stage fill: x (row r < B) and, when s >= 0, the W-1 state vectors; always one commit group. */
template <int N, bool WMAJ>
static __device__ __forceinline__ void conv_pipe_issue(const ls_conv_params &p, uint4 (*stg)[128], int tid, int r,
                                                       int s, int c0)
{
    if (r < p.batch) {
        __pipeline_memcpy_async(&stg[N][tid], p.x + (int64_t)r * p.x_stride_b + c0, 16);
        if (s >= 0) {
            const uint16_t *st = conv_state8<N, WMAJ>(p, s, c0);
#pragma unroll
            for (int k = 0; k < N; k++)
                __pipeline_memcpy_async(&stg[k][tid], st + (WMAJ ? k * p.state_stride_w : 8 * k), 16);
        }
    }
    __pipeline_commit();
}

template <int W, bool WMAJ, typename WT, bool INTER>
__global__ void __launch_bounds__(128) conv_pipe(const conv_args a)
{
    ls_pdl_wait();
    ls_pdl_trigger();
    constexpr int N = W - 1;
    __shared__ uint4 buf[2][W][128];
    const ls_conv_params &p = a.p;
    const int tid = threadIdx.x, g = blockIdx.x * 128 + tid;
    if (g >= a.groups)
        return;
    const int c0 = g * 8, B = p.batch, step = gridDim.y;

    int r = blockIdx.y; /* < B: the launcher caps gridDim.y at B */
    int s = p.slot_idx[r], sn = r + step < B ? p.slot_idx[r + step] : -1;
    conv_pipe_issue<N, WMAJ>(p, buf[0], tid, r, s, c0);
    for (int stage = 0;; stage ^= 1) {
        /* next row's state and x in flight, then the index of the row after it */
        conv_pipe_issue<N, WMAJ>(p, buf[stage ^ 1], tid, r + step, sn, c0);
        const int snn = r + 2 * step < B ? p.slot_idx[r + 2 * step] : -1;
        __pipeline_wait_prior(1); /* this stage's copies have landed */
        if (s >= 0) {
            /* c: c0 made opaque per row, so the compiler recomputes the weight/bias addresses
             * (two IMADs) instead of keeping them live across the row loop (an 8-byte spill) */
            int c = c0;
            asm volatile("" : "+r"(c));
            uint32_t win[4 * N];
#pragma unroll
            for (int k = 0; k < N; k++) {
                uint4 v = buf[stage][k][tid];
                win[4 * k] = v.x, win[4 * k + 1] = v.y, win[4 * k + 2] = v.z, win[4 * k + 3] = v.w;
            }
            const uint16_t *xp = p.x + (int64_t)r * p.x_stride_b + c;
            uint16_t *yp = p.y + (int64_t)r * p.y_stride_b + c;
#pragma unroll 1
            for (int t = 0; t < p.tokens; t++) {
                uint4 xv = t ? ls_ld16_ro(xp + (int64_t)t * p.x_stride_t) : buf[stage][N][tid];
                float yf[8];
                conv_step8<W, WMAJ, WT>(p, c, xv, win, yf);
                ls_st16(yp + (int64_t)t * p.y_stride_t, ls_pack_bf16x8(yf));
                if (INTER) {
                    uint16_t *ip = (uint16_t *)p.inter + (int64_t)s * p.inter_stride_slot + (int64_t)t * p.inter_stride_t;
                    if (a.inter_wmaj)
                        conv_store_win8<N, WMAJ, true>(ip + c, p.inter_stride_w, win);
                    else
                        conv_store_win8<N, WMAJ, false>(ip + (int64_t)c * N, 0, win);
                }
            }
            if (!p.disable_state_update)
                conv_store_win8<N, WMAJ, WMAJ>(conv_state8<N, WMAJ>(p, s, c), p.state_stride_w, win);
        }
        r += step;
        if (r >= B)
            break;
        s = sn, sn = snn;
    }
}

/*
 * conv_pipe grid: gx = ceil(groups/128) blocks per row; the rows are split over gy blocks so
 * that the grid is at most one wave (SMs x resident blocks of this instance, queried once and
 * cached) and every thread gets the same number k = ceil(B*gx / wave) of rows (gy = ceil(B/k)):
 * B*gx <= wave gives one row per thread (all loads in flight at once, as conv_vec8), larger B
 * gives 2, 3, ... rows per thread, pipelined, with no second wave and no partial-wave tail.
 */
template <int W, bool WMAJ, typename WT, bool INTER>
static int launch_pipe_k(const conv_args &a, cudaStream_t st, bool deep)
{
    const int per_sm = ls_resident_per_sm<conv_pipe<W, WMAJ, WT, INTER>>(128);
    if (per_sm <= 0)
        return ls_fail("cuda conv: the occupancy query of conv_pipe failed");
    const int64_t gx = ls_ceil_div(a.groups, 128), wave = (int64_t)per_sm * ls_cuda_sm_count();
    const int64_t k = ls_ceil_div((int64_t)a.p.batch * gx, wave > gx ? wave : gx);
    int64_t gy = deep ? 2 : ls_ceil_div(a.p.batch, k);
    if (gy > a.p.batch || gy > 65535)
        gy = a.p.batch < 65535 ? a.p.batch : 65535;
    LS_CUDA_LAUNCH((conv_pipe<W, WMAJ, WT, INTER>), dim3((unsigned)gx, (unsigned)gy), 128, 0, st, a);
    return 0;
}

/* deep: gridDim.y = 2 whatever B (test variant pipe_deep: each thread walks B/2 rows, so the
 * pipeline's steady state, padding rows inside it and both ends run at small B on any GPU). */
template <int W, bool WMAJ>
static int launch_pipe_w(const conv_args &a, cudaStream_t st, bool deep)
{
    bool wf = a.p.weight_dtype == LS_F32, inter = a.p.inter != NULL;
    if (wf && inter)
        return launch_pipe_k<W, WMAJ, float, true>(a, st, deep);
    if (wf)
        return launch_pipe_k<W, WMAJ, float, false>(a, st, deep);
    if (inter)
        return launch_pipe_k<W, WMAJ, uint16_t, true>(a, st, deep);
    return launch_pipe_k<W, WMAJ, uint16_t, false>(a, st, deep);
}

int ls_conv_pipe_launch(const conv_args &a, cudaStream_t st, int width, bool wmaj, bool deep)
{
    switch (width * 2 + (wmaj ? 1 : 0)) {
    case 4: return launch_pipe_w<2, false>(a, st, deep);
    case 5: return launch_pipe_w<2, true>(a, st, deep);
    case 6: return launch_pipe_w<3, false>(a, st, deep);
    case 7: return launch_pipe_w<3, true>(a, st, deep);
    case 8: return launch_pipe_w<4, false>(a, st, deep);
    case 9: return launch_pipe_w<4, true>(a, st, deep);
    }
    return ls_fail("conv_update: width=%d not in 2..4", width);
}
