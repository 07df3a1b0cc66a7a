/*
 * delta_stream.cuh — STREAM: a low-register decode (T = 1) of the delta rule, kv layout, vector
 * path (K = V = 128, aligned), GDN and KDA, fp32 and bf16 state. Included by delta_rule.cuh only,
 * inside namespace ls_delta, after delta_tile. Kernel delta_stream_kernel<ST, PER_ROW, RL> (plan
 * names delta_stream, RL = 8, and delta_stream4, RL = 4; delta.variant=stream / stream4, forced
 * only: verify takes auto's choice).
 *
 * Why: decode reads and writes every state byte once, so its time is the state's DRAM traffic,
 * and that needs loads in flight on every SM all the time. The WIDE tiles hold 64 state values
 * per lane (122 registers, about 23 % achieved occupancy on the H200, so an SM has few warps to
 * overlap one CTA's math and stores with another's loads); the bulk kernel waits for a whole head
 * per CTA. Here a lane holds RL rows x 4 columns, every state load issued before any use, in CTAs
 * small enough that many fit an SM.
 *
 * Work split: one CTA per (request r, value head hv, 32-column block cb): 4 CTAs per head, of
 * 128 / (4 RL) warps. Warp w owns key rows 4RL w .. 4RL w + 4RL - 1; lane l owns columns
 * 32cb + 4(l & 7)..+3 (one 16-byte fp32 / 8-byte bf16 access) of rows 4RL w + RL(l >> 3) + i,
 * i < RL: each warp load instruction reads 4 whole 128-byte (fp32) / 64-byte (bf16) row segments,
 * and the lane's RL q and RL k values are one 16- (8-) byte load each, held packed (RL registers
 * together) and unpacked where used.
 *
 * Per token (the ls_delta_params contract, fp32 math, the identities of token_out_normed):
 *   S *= decay (GDN: the head's; KDA: lane l of warp w computes row 4RL w + l % 4RL's, shuffled
 *   to the lanes holding it); in-lane sums over the lane's RL rows of S^T k, S^T q and of q.q,
 *   k.k, q.k (raw q, k); a reduce-scatter over the 4 K-lanes l >> 3 (shuffles 16, then 8 lanes
 *   apart): K-lane lk holds the warp's totals of 3 of the 12 sums; those through shared memory
 *   (one barrier), added over the warps; the reverse shuffles gather all 12 into every lane
 *   (each total summed once: the same bits in every lane); u = beta (v - sk rk);
 *   o = sq rq + (kn . qn) u (warp 0 stores it); S += k (u rk)^T, stored row by row (inter step 0
 *   when given, the state unless disabled).
 * Padding rows (slot < 0): no state load (zeros), o written, no state or inter store.
 *
 * Registers (sm_90, CUDA 13.0, ptxas -v): RL = 8 asks for 7 CTAs of 4 warps per SM (<= 72): GDN
 * 72 / 69, KDA 72 / 72 (bf16 / fp32 state), no spills; at 8 CTAs (<= 64) GDN fp32 and KDA bf16
 * spilled 4-8 bytes. RL = 4 asks for 4 CTAs of 8 warps (<= 64): 56 in all four, no spills.
 * Beside the 4 RL state values a lane holds about 40 (addresses, q/k/v, the decay, the 12 sums
 * and their shuffles; all-to-all shuffles of the 12 sums, 22 before the exchange and 22 after,
 * took about 8 more registers than the scatter / gather). One pass with the rows in registers, not
 * two (reduce, then re-read the rows from L1 for the update): the state fits either budget, and a
 * second pass would hold each CTA's rows in L1 between the passes and read them twice.
 */
#ifndef LS_DELTA_STREAM_CUH
#define LS_DELTA_STREAM_CUH

constexpr int STREAM_CG = 8;              /* lanes along V (column groups of 4) */
constexpr int STREAM_LK = 32 / STREAM_CG; /* lanes along K (4) */
static_assert(STREAM_CG * COLS * LS_DELTA_STREAM_BLOCKS == DIM_FAST, "4 CTAs of 32 columns cover V");

/* The CTA of RL rows per lane: DIM_FAST / (4 RL) warps; resident CTAs asked of the allocator. */
template <int RL> struct stream_shape;
template <> struct stream_shape<8> { static constexpr int WARPS = 4, MIN_CTAS = 7; }; /* <= 72 registers */
template <> struct stream_shape<4> { static constexpr int WARPS = 8, MIN_CTAS = 4; }; /* <= 64 registers */

/* RL consecutive bf16 (16-byte aligned for 8, 8-byte for 4) as RL / 2 packed words. */
template <int RL>
static __device__ __forceinline__ void stream_load_bf16(const uint16_t *p, uint32_t w[RL / 2])
{
    if constexpr (RL == 8) {
        const uint4 x = ls_ld16(p);
        w[0] = x.x, w[1] = x.y, w[2] = x.z, w[3] = x.w;
    } else {
        static_assert(RL == 4, "8 or 4 rows per lane");
        const uint2 x = *reinterpret_cast<const uint2 *>(p);
        w[0] = x.x, w[1] = x.y;
    }
}

/* Element i of those, as a float: unpacked where used, so q and k stay RL registers together. */
static __device__ __forceinline__ float stream_bf16_at(const uint32_t *w, int i)
{
    return __uint_as_float(i % 2 ? w[i / 2] & 0xffff0000u : w[i / 2] << 16);
}

/* A lane's per-token sums before the cross-lane reduction: S^T k and S^T q of its 4 columns,
 * q.q, k.k, q.k, and a zero that rounds the count to 4 x 3. */
constexpr int STREAM_NSUM = 12;

/* Reduce-scatter of the 12 sums over the 4 K-lanes (lanes 8 and 16 apart; 9 shuffles, not 22):
 * lanes 16 apart swap halves (K-lane lk keeps sums 0..5 when lk & 2 == 0, else 6..11), lanes 8
 * apart swap thirds of those; K-lane lk ends with the 4 lanes' totals of sums 3 lk .. 3 lk + 2. */
static __device__ __forceinline__ void stream_scatter(const float v[STREAM_NSUM], bool lo, bool hi, float out[3])
{
    float x6[6];
#pragma unroll
    for (int j = 0; j < 6; j++)
        x6[j] = (hi ? v[j + 6] : v[j]) + __shfl_xor_sync(0xffffffffu, hi ? v[j] : v[j + 6], 16);
#pragma unroll
    for (int j = 0; j < 3; j++)
        out[j] = (lo ? x6[j + 3] : x6[j]) + __shfl_xor_sync(0xffffffffu, lo ? x6[j] : x6[j + 3], 8);
}

/* Its inverse layout: K-lane lk's 3 values (sums 3 lk ..) gathered into all 12 in every K-lane. */
static __device__ __forceinline__ void stream_gather(const float in[3], bool lo, bool hi, float out[STREAM_NSUM])
{
    float g6[6];
#pragma unroll
    for (int j = 0; j < 3; j++) {
        const float p = __shfl_xor_sync(0xffffffffu, in[j], 8);
        g6[j] = lo ? p : in[j];
        g6[j + 3] = lo ? in[j] : p;
    }
#pragma unroll
    for (int j = 0; j < 6; j++) {
        const float o = __shfl_xor_sync(0xffffffffu, g6[j], 16);
        out[j] = hi ? o : g6[j];
        out[j + 6] = hi ? g6[j] : o;
    }
}

template <typename ST, bool PER_ROW, int RL>
__global__ void __launch_bounds__(32 * stream_shape<RL>::WARPS, stream_shape<RL>::MIN_CTAS)
delta_stream_kernel(const ls_delta_params p)
{
    constexpr int WARPS = stream_shape<RL>::WARPS, ROWS_W = STREAM_LK * RL; /* key rows per warp */
    constexpr int K = DIM_FAST, V = DIM_FAST;
    static_assert(WARPS * ROWS_W == DIM_FAST, "the warps cover K");
    __shared__ float red[WARPS][STREAM_CG][STREAM_NSUM]; /* each warp's sums of its rows */

    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int cg = lane % STREAM_CG, lk = lane / STREAM_CG;
    const int HV = p.heads_v;
    const int cb = (int)(blockIdx.x % LS_DELTA_STREAM_BLOCKS);
    const int rh = (int)(blockIdx.x / LS_DELTA_STREAM_BLOCKS);
    const int hv = rh % HV, r = rh / HV;
    const int h = hv / (HV / p.heads_qk);
    const int col0 = cb * STREAM_CG * COLS + cg * COLS;
    const int k0 = w * ROWS_W + lk * RL; /* the lane's rows: k0 + i */
    const long long lane_off = (long long)hv * K * V + k0 * V + col0;

    ls_pdl_wait();
    ls_pdl_trigger();
    const int slot = p.slot_idx[r];

    /* ---- the lane's RL state rows: every load issued before any use (zeros for padding rows) */
    float S[RL][COLS];
    if (slot >= 0) {
        const ST *src = (const ST *)p.state + slot * p.state_stride_slot + lane_off;
#pragma unroll
        for (int i = 0; i < RL; i++)
            ls_rec::load4<true>(src + i * V, 4, S[i]);
    } else {
#pragma unroll
        for (int i = 0; i < RL; i++)
            S[i][0] = S[i][1] = S[i][2] = S[i][3] = 0.0f;
    }

    /* ---- activations (T = 1: token row r), raw: q, k of the lane's rows, v of its columns, b */
    const long long qk_off = ((long long)r * p.heads_qk + h) * K + k0;
    uint32_t qw[RL / 2], kw[RL / 2];
    stream_load_bf16<RL>(p.q + qk_off, qw);
    stream_load_bf16<RL>(p.k + qk_off, kw);
    const long long rv = (long long)r * HV + hv;
    const uint2 vraw = *reinterpret_cast<const uint2 *>(p.v + rv * V + col0);
    const uint16_t braw = p.b[rv];
    const float neg_a = -expf(p.A_log[hv]);

    /* ---- decay (KDA: lane l computes row w ROWS_W + l % ROWS_W's, shuffled to the lanes holding
     * it), then the in-lane sums over the lane's rows (raw q, k) */
    float e[RL];
    if constexpr (PER_ROW) {
        const int kk = w * ROWS_W + lane % ROWS_W;
        const float mine =
            ls_rec::delta_decay(neg_a, ls_bf2f(p.a[rv * K + kk]) + ((const float *)p.dt_bias)[(long long)hv * K + kk]);
#pragma unroll
        for (int i = 0; i < RL; i++)
            e[i] = __shfl_sync(0xffffffffu, mine, RL * lk + i);
    } else {
        const float eg = ls_rec::delta_decay(neg_a, ls_bf2f(p.a[rv]) + ls_bf2f(((const uint16_t *)p.dt_bias)[hv]));
#pragma unroll
        for (int i = 0; i < RL; i++)
            e[i] = eg;
    }
    float sk[COLS] = {0.f, 0.f, 0.f, 0.f}, sq[COLS] = {0.f, 0.f, 0.f, 0.f};
    float nq = 0.f, nk = 0.f, nqk = 0.f;
#pragma unroll
    for (int i = 0; i < RL; i++) {
#pragma unroll
        for (int c = 0; c < COLS; c++)
            S[i][c] *= e[i];
        const float qi = stream_bf16_at(qw, i), ki = stream_bf16_at(kw, i);
        add_state_sums(sk, sq, S[i], qi, ki);
        nq = fmaf(qi, qi, nq);
        nk = fmaf(ki, ki, nk);
        nqk = fmaf(qi, ki, nqk);
    }

    /* ---- the warp's rows (a reduce-scatter over the K-lanes), then the CTA's warps through
     * shared memory (one barrier), then a gather back into every K-lane */
    const bool lo = lk & 1, hi = lk & 2;
    float piece[3];
    {
        const float v[STREAM_NSUM] = {sk[0], sk[1], sk[2], sk[3], sq[0], sq[1], sq[2], sq[3], nq, nk, nqk, 0.0f};
        stream_scatter(v, lo, hi, piece);
    }
#pragma unroll
    for (int j = 0; j < 3; j++)
        red[w][cg][3 * lk + j] = piece[j];
    __syncthreads();
    /* lane (lk, cg) adds its piece over the warps in warp order; each total is summed once and
     * copied, so every lane applies the same u */
    piece[0] = piece[1] = piece[2] = 0.0f;
#pragma unroll
    for (int wj = 0; wj < WARPS; wj++)
#pragma unroll
        for (int j = 0; j < 3; j++)
            piece[j] += red[wj][cg][3 * lk + j];
    float tot[STREAM_NSUM];
    stream_gather(piece, lo, hi, tot);
    const float *SK = tot, *SQ = tot + COLS, *N = tot + 2 * COLS;

    float vv[COLS];
    ls_rec::unpack_bf16x4(vraw, vv);
    const float beta = ls_sigmoid(ls_bf2f(braw));
    const float rq = rsqrtf(N[0] + 1e-6f) * p.scale;
    const float rk = rsqrtf(N[1] + 1e-6f);
    float uk[COLS], o[COLS];
    token_out_normed(SK, SQ, rq, rk, N[2] * rq * rk /* kn . qn */, beta, vv, o, uk);
    if (w == 0 && lk == 0)
        ls_rec::store4<true>(p.o + rv * V + col0, 4, o);

    /* ---- S += k uk^T, row by row into the inter step 0 (when given) and the state (unless
     * disabled); padding rows store nothing */
    if (slot < 0)
        return;
    ST *const dst_state = p.disable_state_update ? nullptr : (ST *)p.state + slot * p.state_stride_slot + lane_off;
    ST *const dst_inter = p.inter ? (ST *)p.inter + slot * p.inter_stride_slot + lane_off : nullptr;
#pragma unroll
    for (int i = 0; i < RL; i++) {
#pragma unroll
        for (int c = 0; c < COLS; c++)
            S[i][c] = fmaf(stream_bf16_at(kw, i), uk[c], S[i][c]);
        if (dst_inter)
            ls_rec::store4<true>(dst_inter + i * V, 4, S[i]);
        if (dst_state)
            ls_rec::store4<true>(dst_state + i * V, 4, S[i]);
    }
}

template <typename ST, bool PER_ROW>
static int launch_stream_k(const ls_delta_params *p, const ls_plan &pl, cudaStream_t st)
{
    if (pl.kernel == LS_K_DELTA_STREAM)
        LS_CUDA_LAUNCH((delta_stream_kernel<ST, PER_ROW, 8>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    else
        LS_CUDA_LAUNCH((delta_stream_kernel<ST, PER_ROW, 4>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    return 0;
}

#endif /* LS_DELTA_STREAM_CUH */
