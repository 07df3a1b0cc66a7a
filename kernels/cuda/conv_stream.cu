/*
 * conv_stream.cu — the large-batch decode kernel of the causal conv1d update
 * (LS_CONV_VARIANT=stream; the launcher in conv1d_update.cu picks it): conv_vec8's math
 * (conv_step8 on 8 channels per thread), with the data moved by bulk asynchronous copies (TMA).
 *
 * Why: the register kernels run B = 512 as two waves of short chains (slot index -> state ->
 * math -> store), with at most 64 bytes per thread in flight; the second wave starts each chain
 * from the index again. Here a CTA owns one 1024-channel chunk of U rows: U threads load the U
 * slot indices at once, each issues its row's copies (state chunk and x chunk, one mbarrier per
 * row), so every load of the CTA is in flight after one index round trip and nothing in flight
 * sits in registers. Rows are then processed in order as their copies land: window and x from
 * shared memory, y stored to global, the shifted window written back in place and the chunk sent
 * home by one bulk store, which overlaps the next rows' math. The grid is sized to one wave.
 *
 * Layout: block (bx, by) = channels bx*1024 .. +1024 (the last chunk may be shorter) of rows by,
 * by + gridDim.y, ... (U of them at most); thread t = channels 8t .. 8t+7 of the chunk. Shared
 * memory per row: the state chunk in the state's own orientation (channel-major [ch][W-1],
 * window-major [W-1][ch]) then x[ch]. Padding rows: no copy, nothing written. Decode only (T = 1,
 * no inter windows); needs the conv_vec_ok conditions.
 */
#include "conv_vec.cuh"

namespace {

constexpr int STREAM_THREADS = 128;
constexpr int STREAM_CH = 8 * STREAM_THREADS; /* channels per chunk */
constexpr int STREAM_MAX_ROWS = 8;             /* rows per CTA at most */

/* Bytes of one row's stage: state chunk + x chunk (16-byte multiples: ch is a multiple of 8). */
static __host__ __device__ uint32_t stage_bytes(int ch, int W) { return (uint32_t)ch * W * 2; }

static __device__ __forceinline__ void bulk_store(void *gmem, const void *smem, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(ls_smem_u32(smem)),
                 "r"(bytes)
                 : "memory");
}

template <int W, bool WMAJ, typename WT>
__global__ void __launch_bounds__(STREAM_THREADS, 8) conv_stream(const conv_args a, int rows_per_cta)
{
    constexpr int N = W - 1;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __shared__ uint64_t bar[STREAM_MAX_ROWS];
    __shared__ int slot[STREAM_MAX_ROWS];
    const ls_conv_params &p = a.p;
    const int tid = threadIdx.x;
    const int c0 = blockIdx.x * STREAM_CH;
    const int ch = min(STREAM_CH, p.channels - c0);
    const uint32_t sb = stage_bytes(ch, W), xbytes = (uint32_t)ch * 2;
    const int nrows = min(rows_per_cta, (p.batch - (int)blockIdx.y + (int)gridDim.y - 1) / (int)gridDim.y);

    ls_pdl_wait();
    ls_pdl_trigger();
    /* thread u < nrows: row u's index, then its copies onto bar[u] */
    if (tid < nrows) {
        const int r = blockIdx.y + tid * gridDim.y;
        const int s = p.slot_idx[r];
        slot[tid] = s;
        if (s >= 0) {
            unsigned char *stg = smem_raw + tid * sb;
            ls_mbar_init(&bar[tid], 1);
            ls_mbar_arrive_tx(&bar[tid], sb);
            const uint16_t *st = (const uint16_t *)p.state + (int64_t)s * p.state_stride_slot;
            if (WMAJ)
                for (int j = 0; j < N; j++)
                    ls_bulk_load(stg + j * xbytes, st + (int64_t)j * p.state_stride_w + c0, xbytes, &bar[tid]);
            else
                ls_bulk_load(stg, st + (int64_t)c0 * N, xbytes * N, &bar[tid]);
            ls_bulk_load(stg + xbytes * N, p.x + (int64_t)r * p.x_stride_b + c0, xbytes, &bar[tid]);
        }
    }
    __syncthreads(); /* slots and barrier initialisations visible */

    const bool active = tid * 8 < ch;
    for (int u = 0; u < nrows; u++) {
        const int s = slot[u];
        if (s < 0)
            continue; /* padding row: uniform across the CTA */
        const int r = blockIdx.y + u * gridDim.y;
        unsigned char *stg = smem_raw + u * sb;
        ls_mbar_wait(&bar[u], 0);
        if (active) {
            uint16_t *win_s = (uint16_t *)stg;
            uint4 *wv[N];
            uint32_t win[4 * N];
#pragma unroll
            for (int k = 0; k < N; k++) {
                wv[k] = (uint4 *)(win_s + (WMAJ ? k * ch + tid * 8 : tid * 8 * N + 8 * k));
                const uint4 v = *wv[k];
                win[4 * k] = v.x, win[4 * k + 1] = v.y, win[4 * k + 2] = v.z, win[4 * k + 3] = v.w;
            }
            float yf[8];
            conv_step8<W, WMAJ, WT>(p, c0 + tid * 8, *(const uint4 *)(stg + xbytes * N + tid * 16), win, yf);
            ls_st16(p.y + (int64_t)r * p.y_stride_b + c0 + tid * 8, ls_pack_bf16x8(yf));
            if (!p.disable_state_update) {
#pragma unroll
                for (int k = 0; k < N; k++)
                    *wv[k] = make_uint4(win[4 * k], win[4 * k + 1], win[4 * k + 2], win[4 * k + 3]);
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); /* -> the bulk store */
            }
        }
        if (p.disable_state_update)
            continue;
        __syncthreads(); /* every thread's window of row u is in place */
        if (tid == 0) {
            uint16_t *st = (uint16_t *)p.state + (int64_t)s * p.state_stride_slot;
            if (WMAJ)
                for (int j = 0; j < N; j++)
                    bulk_store(st + (int64_t)j * p.state_stride_w + c0, stg + j * xbytes, xbytes);
            else
                bulk_store(st + (int64_t)c0 * N, stg, xbytes * N);
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
    if (tid == 0) /* shared memory must outlive the stores' reads of it */
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

/* deep: STREAM_MAX_ROWS rows per CTA whatever B (test variant stream_deep: several rows per
 * CTA, padding rows among them, at the small batches of the tests) */
template <int W, bool WMAJ, typename WT>
static int launch_stream_k(const conv_args &a, cudaStream_t st, bool deep)
{
    const int gx = (int)ls_ceil_div(a.p.channels, STREAM_CH);
    /* one wave: ~8 resident CTAs per SM (launch bound); rows per CTA so that the grid fits */
    const int64_t wave = 8LL * ls_cuda_sm_count();
    int u = deep ? STREAM_MAX_ROWS : (int)ls_ceil_div((int64_t)a.p.batch * gx, wave);
    u = u < 1 ? 1 : (u > STREAM_MAX_ROWS ? STREAM_MAX_ROWS : u);
    const int gy = (int)ls_ceil_div(a.p.batch, u);
    const size_t smem = (size_t)u * stage_bytes(STREAM_CH, W);
    static unsigned long long set_on = 0; /* per device, as in delta_bulk.cuh */
    int dev = 0;
    LS_CUDA_TRY(cudaGetDevice(&dev));
    const unsigned long long bit = 1ull << (dev & 63);
    if (!(set_on & bit)) {
        LS_CUDA_TRY(ls_allow_smem(conv_stream<W, WMAJ, WT>, (size_t)STREAM_MAX_ROWS * stage_bytes(STREAM_CH, W)));
        set_on |= bit;
    }
    LS_CUDA_LAUNCH((conv_stream<W, WMAJ, WT>), dim3((unsigned)gx, (unsigned)gy), STREAM_THREADS, smem, st, a, u);
    return 0;
}

template <int W, bool WMAJ>
static int launch_stream_w(const conv_args &a, cudaStream_t st, bool deep)
{
    return a.p.weight_dtype == LS_F32 ? launch_stream_k<W, WMAJ, float>(a, st, deep)
                                      : launch_stream_k<W, WMAJ, uint16_t>(a, st, deep);
}

} /* namespace */

bool ls_conv_stream_ok(const conv_args &a)
{
    return a.p.tokens == 1 && !a.p.inter && a.p.batch <= 65535LL * STREAM_MAX_ROWS;
}

int ls_conv_stream_launch(const conv_args &a, cudaStream_t st, int width, bool wmaj, bool deep)
{
    switch (width * 2 + (wmaj ? 1 : 0)) {
    case 4: return launch_stream_w<2, false>(a, st, deep);
    case 5: return launch_stream_w<2, true>(a, st, deep);
    case 6: return launch_stream_w<3, false>(a, st, deep);
    case 7: return launch_stream_w<3, true>(a, st, deep);
    case 8: return launch_stream_w<4, false>(a, st, deep);
    case 9: return launch_stream_w<4, true>(a, st, deep);
    }
    return ls_fail("conv_update: width=%d not in 2..4", width);
}
