/*
 * mamba2_ssu.cu — Mamba2 selective state update on the GPU (docs/ops.md): tied dt/decay per head,
 * grouped B/C, optional z gate, decode (T = 1) and verify (T tokens with intermediate states,
 * optional final write); slot -1 = padding (zero state in, nothing stored, y written).
 *
 * Work split. Rows p of a head's state S[hd, ds] are independent (the reduction of y runs along
 * ds, the innermost axis), so one WARP owns (request r, head h, block of rows): 8 lanes run along
 * ds (4 consecutive columns each, NCH chunks 32 columns apart: a warp instruction reads 4 rows x
 * 128 contiguous bytes of fp32 state), 4 lanes along rows, RP rows per lane; the tile stays in
 * registers across the T tokens. "Wide" tiles hold 64 state floats per lane (ds = 128: NCH = 4,
 * RP = 4, 16 rows per warp; ds = 256: NCH = 8, RP = 2); "narrow" ones half of that (twice the
 * warps), used when the batch is too small to give every SM 4 wide warps. y[p] is a 3-shuffle
 * reduction over the 8 ds-lanes. No shared memory, no barriers.
 *
 * ROWS (ssu_rows_kernel, ssu.variant=rows; fast shapes only): for small-batch verify, where the
 * tiles lose to SGLang's/vLLM's one-warp programs of 8 / 4 rows (same bytes, so per-token latency
 * and warps in flight decide). A warp owns 4 consecutive rows; all 32 lanes run along ds (lane l:
 * columns 4l + 128j), so a lane holds 16 (ds = 128) or 32 (ds = 256) state floats, 4x the warps
 * of the wide tiles, 72 / 128 registers at fp32 verify (wide tiles: 131 / 141), and a warp
 * store is one whole row. The tiles' T loop waits on several load round trips per token (their
 * PTX): dt, then (after the branchy softplus) B, C and the first row's x; every later row's x,
 * and each z, only after the previous row's y store, since y and inter could alias the inputs
 * and no load moves above a store. ssu_rows loads token t+1's dt, B, C, x and z into registers
 * at the top of token t, before any of its stores, so that latency hides under token t's math
 * and stores; its state stores are explicit vector stores (ls_rec::st_global4). y of the 4 rows: 2 + 1
 * halving shuffles leave each lane one row (lane / 8), 3 more finish it.
 * ROWS8 (the same kernel with WR = 8 rows per warp, ssu.variant=rows8; auto up to B = 128): SGLang's
 * program shape (BLOCK_SIZE_M = 8 rows x all of ds per warp). Each lane holds 8 rows x 4 columns
 * (32 state floats at ds = 128), so a warp keeps twice the state bytes in flight per token and
 * one set of dt / B / C loads serves 8 rows; half the warps of rows, 127 / 167 registers at fp32
 * verify (4 / 3 CTAs of 128 per SM). y: 4 + 2 + 1 halving shuffles (lane / 4), then 2.
 * ssu.block forces the CTA size of both rows kernels (32, 64 or 128 threads).
 *
 * FAST (ds = 128 or 256, aligned): vector accesses with immediate row strides. Generic (any
 * ds <= 256, any alignment): scalar predicated accesses, NCH = 8, RP = 2.
 * softplus/exp of the decay use full-precision expf/log1pf (ls_rec::softplus_precise).
 * A grid that takes at most half of the GPU (small batch) guesses the slot before the PDL wait
 * and prefetches its state into L2 meanwhile (ls_slot_guess; every fast kernel). Which kernel
 * (tiles, rows or rows8), CTA size and slot guess a launch takes: ls_choose_ssu (choose.c).
 */
#include "delta_rule.cuh" /* ls_rec:: 4-wide accesses */

namespace ls_ssu {

constexpr int LANES_N = 8;                 /* lanes along ds */
constexpr int LANES_R = 32 / LANES_N;      /* lanes along head_dim rows */
constexpr int CHUNK = LANES_N * 4;         /* ds columns covered by one chunk (32) */
constexpr int NCH_GENERIC = 8;             /* generic path: ds <= 256 */
constexpr int MAX_WARPS_PER_CTA = 4;

/* rows per lane: 64 state floats per lane ("wide"), or half of that ("narrow": twice the warps,
 * for batches too small to fill the SMs) */
constexpr int rows_per_lane(int nch, bool narrow) { return (narrow ? 8 : 16) / nch; }
constexpr int min_ctas(bool fast, bool one_token) { return fast ? (one_token ? 4 : 3) : 1; }

/* Sum over the 8 ds-lanes (lane bits 0..2); every lane receives the total. */
__device__ __forceinline__ float sum_n_lanes(float x)
{
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    x += __shfl_xor_sync(0xffffffffu, x, 2);
    x += __shfl_xor_sync(0xffffffffu, x, 4);
    return x;
}

/* The warp's state tile (rows row0 + i * RSTEP, 4 columns at n0 + j * CSTEP) from src, all
 * loads issued at once; zero where src is NULL (padding) or the row is past hd. */
template <typename ST, int NCH, int RP, bool FAST, int RSTEP = LANES_R, int CSTEP = CHUNK>
__device__ __forceinline__ void load_tile(const ST *src, int row0, int n0, int hd, int ds, float S[RP][NCH][4])
{
#pragma unroll
    for (int i = 0; i < RP; i++) {
        const int row = row0 + i * RSTEP;
#pragma unroll
        for (int j = 0; j < NCH; j++) {
            const int n = n0 + j * CSTEP;
            if (src && row < hd)
                ls_rec::load4<FAST>(src + (long long)row * ds + n, ds - n, S[i][j]);
            else
                S[i][j][0] = S[i][j][1] = S[i][j][2] = S[i][j][3] = 0.0f;
        }
    }
}

/* A fast-path tile back to dst (the layout of load_tile), rows past hd skipped. */
template <typename ST, int NCH, int RP, int RSTEP, int CSTEP>
__device__ __forceinline__ void store_tile(ST *dst, int row0, int n0, int hd, int ds, const float S[RP][NCH][4])
{
#pragma unroll
    for (int i = 0; i < RP; i++) {
        const int row = row0 + i * RSTEP;
        if (row < hd)
#pragma unroll
            for (int j = 0; j < NCH; j++)
                ls_rec::st_global4(dst + (long long)row * ds + n0 + j * CSTEP, S[i][j]);
    }
}

/* One token on a lane's NCH x 4 columns of one row: S <- a S + dx B (dx = d x[row]); returns
 * the lane's part of y[row], sum S C. */
template <int NCH>
__device__ __forceinline__ float step_row(float S[NCH][4], float a, float dx, const float Bv[NCH][4],
                                          const float Cv[NCH][4])
{
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < NCH; j++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            S[j][c] = fmaf(a, S[j][c], dx * Bv[j][c]);
            acc = fmaf(S[j][c], Cv[j][c], acc);
        }
    return acc;
}

/* The warp's place in the grid: request r, head h, row block rb (row block fastest; rblocks
 * per head). */
struct warp_at {
    int r, h, rb;
};
__device__ __forceinline__ warp_at locate_warp(int rblocks, int nh)
{
    const long long gw = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long rh = gw / rblocks;
    return {(int)(rh / nh), (int)(rh % nh), (int)(gw % rblocks)};
}

/* Before the PDL wait, with a slot guess (>= 0): the warp's rows [row, row + nrows) of the head
 * at `head` in that slot (contiguous, ds elements each) into L2, one line per lane per 4 KiB. */
template <typename ST>
__device__ __forceinline__ void prefetch_rows(const ls_ssu_params &p, int guess, long long head, int row, int nrows,
                                              int ds, int lane)
{
    if (guess >= 0) {
        const char *t = (const char *)((const ST *)p.state + guess * p.state_stride_slot + head + (long long)row * ds);
        const int bytes = nrows * ds * (int)sizeof(ST);
        for (int off = lane * 128; off < bytes; off += 32 * 128)
            ls_prefetch_l2(t + off);
    }
}

/* After the wait: the state tile (load_tile) at the guess, loaded beside the real index, and
 * again at the real slot on a miss; zeros for padding (no guess either). Returns the slot. */
template <typename ST, int NCH, int RP, bool FAST, int RSTEP = LANES_R, int CSTEP = CHUNK>
__device__ __forceinline__ int load_state(const ls_ssu_params &p, int r, int guess, long long head, int row0, int n0,
                                          int hd, int ds, float S[RP][NCH][4])
{
    if (guess >= 0)
        load_tile<ST, NCH, RP, FAST, RSTEP, CSTEP>((const ST *)p.state + guess * p.state_stride_slot + head, row0, n0,
                                                   hd, ds, S);
    const int slot = p.slot_idx[r];
    if (slot != guess || slot < 0)
        load_tile<ST, NCH, RP, FAST, RSTEP, CSTEP>(
            slot >= 0 ? (const ST *)p.state + slot * p.state_stride_slot + head : nullptr, row0, n0, hd, ds, S);
    return slot;
}

/*
 * ST: float or uint16_t (bf16) state. NCH: 32-column chunks per lane (FAST: ds = 32*NCH). RP:
 * rows per lane. ONE_TOKEN: T = 1 at compile time. Warp w (ordered r, h, row block; row block
 * fastest). spec (FAST only; the plan's ls_spec): the slot guess (ls_slot_guess). Before the
 * PDL wait the warp prefetches its tile at the guessed slot into L2 (its rows are contiguous:
 * WR x ds elements); after the wait it loads the tile there beside the real index and loads
 * again only when the two differ.
 */
template <typename ST, int NCH, int RP, bool FAST, bool ONE_TOKEN>
__global__ void __launch_bounds__(32 * MAX_WARPS_PER_CTA, min_ctas(FAST, ONE_TOKEN))
ssu_kernel(const ls_ssu_params p, int spec)
{
    constexpr int WR = LANES_R * RP; /* rows per warp */
    const int lane = threadIdx.x & 31;
    const int ln = lane % LANES_N, lr = lane / LANES_N;
    const int nh = p.nheads, hd = p.head_dim, ng = p.ngroups;
    const int ds = FAST ? CHUNK * NCH : p.dstate;
    const int T = ONE_TOKEN ? 1 : p.tokens;
    const int rblocks = (hd + WR - 1) / WR;
    const long long gw = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int rb = (int)(gw % rblocks);
    const long long rh = gw / rblocks;
    const int h = (int)(rh % nh);
    const int r = (int)(rh / nh);
    const long long head = (long long)h * hd * ds;
    const int guess = FAST && r < p.batch ? ls_slot_guess(p.slot_idx, r, p.slots, spec) : -1;
    if (guess >= 0) { /* the tile's WR rows are contiguous: one line per lane per 4 KiB */
        const char *t = (const char *)((const ST *)p.state + guess * p.state_stride_slot + head + (long long)rb * WR * ds);
        const int bytes = min(WR, hd - rb * WR) * ds * (int)sizeof(ST);
        for (int off = lane * 128; off < bytes; off += 32 * 128)
            ls_prefetch_l2(t + off);
    }
    ls_pdl_wait();
    ls_pdl_trigger();
    if (r >= p.batch)
        return; /* whole warp */

    const int g = h / (nh / ng);
    const int row0 = rb * WR + lr;  /* row of i = 0; row i is row0 + i * LANES_R */
    const int n0 = ln * 4;          /* column of chunk 0; chunk j is n0 + j * CHUNK */

    /* ---- state tile: all loads first (at the guess beside the index, then again on a miss) */
    float S[RP][NCH][4];
    if (guess >= 0)
        load_tile<ST, NCH, RP, FAST>((const ST *)p.state + guess * p.state_stride_slot + head, row0, n0, hd, ds, S);
    const int slot = p.slot_idx[r];
    if (slot != guess || slot < 0) /* a miss, or padding (no guess either): zeros */
        load_tile<ST, NCH, RP, FAST>(slot >= 0 ? (const ST *)p.state + slot * p.state_stride_slot + head : nullptr,
                                         row0, n0, hd, ds, S);

    if (!ONE_TOKEN) /* verify: later tokens' B, C rows into L2 under the state loads */
        for (int t = 1; t < T; t++) {
            const long long bg = (((long long)r * T + t) * ng + g) * ds + n0;
            ls_prefetch_l2(p.Bm + bg);
            ls_prefetch_l2(p.Cm + bg);
        }

    const float A = p.A[h];
    const float dt_bias = ls_bf2f(p.dt_bias[h]);
    const float D = ls_bf2f(p.D[h]);

    for (int t = 0; t < T; t++) {
        const long long bt = (long long)r * T + t;
        const float d = ls_rec::softplus_precise(ls_bf2f(p.dt[bt * nh + h]) + dt_bias);
        const float a = expf(A * d);
        float Bv[NCH][4], Cv[NCH][4];
        const long long bg = (bt * ng + g) * ds + n0;
#pragma unroll
        for (int j = 0; j < NCH; j++) {
            ls_rec::load4<FAST>(p.Bm + bg + j * CHUNK, ds - n0 - j * CHUNK, Bv[j]);
            ls_rec::load4<FAST>(p.Cm + bg + j * CHUNK, ds - n0 - j * CHUNK, Cv[j]);
        }
        const long long xrow = (bt * nh + h) * hd;
#pragma unroll
        for (int i = 0; i < RP; i++) {
            const int row = row0 + i * LANES_R;
            const bool live = row < hd;
            const float x = live ? ls_bf2f(p.x[xrow + row]) : 0.0f;
            const float acc = step_row<NCH>(S[i], a, d * x, Bv, Cv);
            float y = fmaf(D, x, sum_n_lanes(acc));
            if (live && ln == 0) {
                if (p.z)
                    y *= ls_silu(ls_bf2f(p.z[xrow + row]));
                p.y[xrow + row] = ls_f2bf(y);
            }
        }

        if (p.inter && slot >= 0) {
            ST *dst = (ST *)p.inter + slot * p.inter_stride_slot + (long long)t * nh * hd * ds + head;
#pragma unroll
            for (int i = 0; i < RP; i++) {
                const int row = row0 + i * LANES_R;
                if (row < hd)
#pragma unroll
                    for (int j = 0; j < NCH; j++)
                        ls_rec::store4<FAST>(dst + (long long)row * ds + n0 + j * CHUNK,
                                             ds - n0 - j * CHUNK, S[i][j]);
            }
        }
    }

    if (!p.disable_state_update && slot >= 0) {
        ST *dst = (ST *)p.state + slot * p.state_stride_slot + head;
#pragma unroll
        for (int i = 0; i < RP; i++) {
            const int row = row0 + i * LANES_R;
            if (row < hd)
#pragma unroll
                for (int j = 0; j < NCH; j++)
                    ls_rec::store4<FAST>(dst + (long long)row * ds + n0 + j * CHUNK, ds - n0 - j * CHUNK,
                                             S[i][j]);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * ssu_rows (plan kernels LS_K_SSU_ROWS / LS_K_SSU_ROWS8, ssu.variant=rows / rows8): all 32 lanes
 * along ds, WR = 4 or 8 consecutive rows per warp. NCH: 128-column chunks per lane (ds = 128 *
 * NCH). */
constexpr int ROWS_CHUNK = 128; /* columns of one chunk: 32 lanes x 4 */
/* 4-warp CTAs resident per SM (__launch_bounds__), i.e. the register cap. rows (WR = 4): ds =
 * 128 at 72 registers, ds = 256 at 128 (96 spilled at fp32 verify). rows8: ds = 128 at 128
 * (4 CTAs, 16 warps of 8 rows: more rows in flight per SM than rows' 28 warps of 4), ds = 256
 * at 168 (3 CTAs). No spills on sm_90. */
constexpr int rows_min_ctas(int wr, int nch) { return wr == 4 ? (nch == 1 ? 7 : 4) : (nch == 1 ? 4 : 3); }

/* One token's inputs of a rows warp, raw bf16 bits: dt, the lane's 4 columns of B and C per
 * chunk, x of the warp's WR rows (0 past hd), z of the lane's output row (0 without z). */
template <int WR, int NCH>
struct rows_in {
    uint16_t dt, z;
    uint16_t x[WR];
    uint2 b[NCH], c[NCH];
};

template <int WR, int NCH>
__device__ __forceinline__ void rows_load_in(const ls_ssu_params &p, long long bt, int h, int g, int row0, int orow,
                                             int n0, rows_in<WR, NCH> &in)
{
    const int nh = p.nheads, hd = p.head_dim;
    in.dt = p.dt[bt * nh + h];
    const long long bg = (bt * p.ngroups + g) * (ROWS_CHUNK * NCH) + n0;
#pragma unroll
    for (int j = 0; j < NCH; j++) {
        in.b[j] = *reinterpret_cast<const uint2 *>(p.Bm + bg + j * ROWS_CHUNK);
        in.c[j] = *reinterpret_cast<const uint2 *>(p.Cm + bg + j * ROWS_CHUNK);
    }
    const long long xrow = (bt * nh + h) * hd + row0;
#pragma unroll
    for (int i = 0; i < WR; i++)
        in.x[i] = row0 + i < hd ? p.x[xrow + i] : (uint16_t)0;
    in.z = p.z && row0 + orow < hd ? p.z[xrow + orow] : (uint16_t)0;
}

/* 4 bf16 (bits in w) as floats. */
__device__ __forceinline__ void unpack_bf16x4(uint2 w, float out[4])
{
    out[0] = __uint_as_float(w.x << 16), out[1] = __uint_as_float(w.x & 0xffff0000u);
    out[2] = __uint_as_float(w.y << 16), out[3] = __uint_as_float(w.y & 0xffff0000u);
}

/* log2 of the rows per warp: the lane bits (from bit 4 down) that pick a lane's output row. */
template <int WR>
constexpr int rows_log2() { return WR == 8 ? 3 : 2; }

/* Row sums of a WR-row tile spread over the 32 lanes (v[i]: this lane's part of row i). Halving
 * exchanges (xor 16, 8[, 4]: lanes with the bit set keep the upper half of the rows they still
 * hold, the others the lower) leave each lane one row, lane >> (5 - log2 WR); the remaining
 * xor shuffles finish it. WR = 4: 2 + 1 + 3 = 6 shuffles, WR = 8: 4 + 2 + 1 + 2 = 9, instead of
 * WR x 5. Returns that row's total, in every lane of its group. */
template <int WR>
__device__ __forceinline__ float sum_rows(const float v[WR], int lane)
{
    constexpr int LOG = rows_log2<WR>();
    bool up[LOG];
#pragma unroll
    for (int s = 0; s < LOG; s++)
        up[s] = lane & (16 >> s);
    float a[WR];
#pragma unroll
    for (int i = 0; i < WR; i++)
        a[i] = v[i];
#pragma unroll
    for (int s = 0; s < LOG; s++) {
        const int half = WR >> (s + 1), m = 16 >> s;
#pragma unroll
        for (int i = 0; i < half; i++)
            a[i] = (up[s] ? a[i + half] : a[i]) + __shfl_xor_sync(0xffffffffu, up[s] ? a[i] : a[i + half], m);
    }
    float s = a[0];
#pragma unroll
    for (int m = 16 >> LOG; m >= 1; m >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, m);
    return s;
}

/*
 * ST: float or uint16_t (bf16) state; the fast-path conditions of ls_choose_ssu hold (ds = 128 *
 * NCH, aligned state / inter / B / C). WR: rows per warp, 4 (rows) or 8 (rows8: SGLang's 8-row
 * programs, the per-token dt / B / C loads shared by twice the rows and twice the state bytes in
 * flight per warp). Warp w (ordered r, h, row block; row block fastest) owns rows row0..row0+WR-1
 * of head h: lane l holds columns 4l + 128j (NCH x 4 floats) of each, WR x 4 state floats per
 * lane at ds = 128 (16 / 32), so a small batch runs 4x / 2x the warps of the wide tiles. A warp
 * store writes one whole row (512 contiguous bytes of fp32).
 * Token t + 1's inputs (dt, B, C, x, z) are loaded into registers at the top of token t, before
 * its stores (which the compiler may not move loads across: y and inter could alias them), so
 * the load latency overlaps the current token's math and stores instead of adding up per token.
 * Slot guess and L2 prefetch as ssu_kernel (the warp's WR rows are contiguous).
 */
template <typename ST, int WR, int NCH, bool ONE_TOKEN>
__global__ void __launch_bounds__(32 * MAX_WARPS_PER_CTA, rows_min_ctas(WR, NCH))
ssu_rows_kernel(const ls_ssu_params p, int spec)
{
    constexpr int DS = ROWS_CHUNK * NCH;
    const int lane = threadIdx.x & 31;
    const int nh = p.nheads, hd = p.head_dim, ng = p.ngroups;
    const int T = ONE_TOKEN ? 1 : p.tokens;
    const warp_at w = locate_warp((hd + WR - 1) / WR, nh);
    const int r = w.r, h = w.h;
    const long long head = (long long)h * hd * DS;
    const int row0 = w.rb * WR;
    const int guess = r < p.batch ? ls_slot_guess(p.slot_idx, r, p.slots, spec) : -1;
    prefetch_rows<ST>(p, guess, head, row0, min(WR, hd - row0), DS, lane);
    ls_pdl_wait();
    ls_pdl_trigger();
    if (r >= p.batch)
        return; /* whole warp */

    const int g = h / (nh / ng);
    const int n0 = lane * 4;                        /* column of chunk 0; chunk j is n0 + j * ROWS_CHUNK */
    const int orow = lane >> (5 - rows_log2<WR>()); /* the row whose y this lane finishes (sum_rows) */

    const float A = p.A[h];
    const float dt_bias = ls_bf2f(p.dt_bias[h]);
    const float D = ls_bf2f(p.D[h]);
    /* token 0's inputs and the state tile in flight together */
    rows_in<WR, NCH> in;
    rows_load_in<WR, NCH>(p, (long long)r * T, h, g, row0, orow, n0, in);
    float S[WR][NCH][4];
    const int slot = load_state<ST, NCH, WR, true, 1, ROWS_CHUNK>(p, r, guess, head, row0, n0, hd, DS, S);

    if (!ONE_TOKEN) /* B, C of tokens 2.. into L2 (token 1's come with the pipeline) */
        for (int t = 2; t < T; t++) {
            const long long bg = (((long long)r * T + t) * ng + g) * DS + n0;
#pragma unroll
            for (int j = 0; j < NCH; j++) {
                ls_prefetch_l2(p.Bm + bg + j * ROWS_CHUNK);
                ls_prefetch_l2(p.Cm + bg + j * ROWS_CHUNK);
            }
        }

    for (int t = 0; t < T; t++) {
        const long long bt = (long long)r * T + t;
        rows_in<WR, NCH> next = in;
        if (!ONE_TOKEN && t + 1 < T)
            rows_load_in<WR, NCH>(p, bt + 1, h, g, row0, orow, n0, next);

        const float d = ls_rec::softplus_precise(ls_bf2f(in.dt) + dt_bias);
        const float a = expf(A * d);
        float Bv[NCH][4], Cv[NCH][4];
#pragma unroll
        for (int j = 0; j < NCH; j++) {
            unpack_bf16x4(in.b[j], Bv[j]);
            unpack_bf16x4(in.c[j], Cv[j]);
        }
        float part[WR], xs[WR];
#pragma unroll
        for (int i = 0; i < WR; i++) {
            xs[i] = ls_bf2f(in.x[i]);
            part[i] = step_row<NCH>(S[i], a, d * xs[i], Bv, Cv);
        }
        float xo;
        if constexpr (WR == 4)
            xo = orow == 0 ? xs[0] : orow == 1 ? xs[1] : orow == 2 ? xs[2] : xs[3];
        else {
            xo = xs[WR - 1]; /* x of row orow by selects (a dynamic index would go to local memory) */
#pragma unroll
            for (int i = WR - 2; i >= 0; i--)
                xo = orow == i ? xs[i] : xo;
        }
        float y = fmaf(D, xo, sum_rows<WR>(part, lane));
        if ((lane & (32 / WR - 1)) == 0 && row0 + orow < hd) {
            if (p.z)
                y *= ls_silu(ls_bf2f(in.z));
            p.y[(bt * nh + h) * hd + row0 + orow] = ls_f2bf(y);
        }
        if (p.inter && slot >= 0)
            store_tile<ST, NCH, WR, 1, ROWS_CHUNK>(
                (ST *)p.inter + slot * p.inter_stride_slot + (long long)t * nh * hd * DS + head, row0, n0, hd, DS, S);
        in = next;
    }

    if (!p.disable_state_update && slot >= 0)
        store_tile<ST, NCH, WR, 1, ROWS_CHUNK>((ST *)p.state + slot * p.state_stride_slot + head, row0, n0, hd, DS,
                                               S);
}

/* The plan's kernel (ls_choose_ssu): NCH chunks x RP rows per lane (ssu_rows: NCH 128-column
 * chunks, 4 or 8 rows per warp), decode or verify. The generic kernel's T loop serves decode too. */
typedef void (*ssu_fn)(const ls_ssu_params, int);

template <typename ST, int WR>
static ssu_fn pick_rows(int nch, bool one)
{
    if (nch == 1)
        return one ? ssu_rows_kernel<ST, WR, 1, true> : ssu_rows_kernel<ST, WR, 1, false>;
    if (nch == 2)
        return one ? ssu_rows_kernel<ST, WR, 2, true> : ssu_rows_kernel<ST, WR, 2, false>;
    return nullptr;
}

template <typename ST>
static ssu_fn pick(const ls_plan &pl, bool one)
{
    const int nch = pl.nch, rp = pl.rows_per_lane;
    if (pl.kernel == LS_K_SSU_ROWS)
        return pick_rows<ST, 4>(nch, one);
    if (pl.kernel == LS_K_SSU_ROWS8)
        return pick_rows<ST, 8>(nch, one);
    if (pl.kernel == LS_K_SSU_GENERIC)
        return ssu_kernel<ST, NCH_GENERIC, rows_per_lane(NCH_GENERIC, false), false, false>;
    if (nch == 4 && rp == 4)
        return one ? ssu_kernel<ST, 4, 4, true, true> : ssu_kernel<ST, 4, 4, true, false>;
    if (nch == 4 && rp == 2)
        return one ? ssu_kernel<ST, 4, 2, true, true> : ssu_kernel<ST, 4, 2, true, false>;
    if (nch == 8 && rp == 2)
        return one ? ssu_kernel<ST, 8, 2, true, true> : ssu_kernel<ST, 8, 2, true, false>;
    if (nch == 8 && rp == 1)
        return one ? ssu_kernel<ST, 8, 1, true, true> : ssu_kernel<ST, 8, 1, true, false>;
    return nullptr;
}

static ssu_fn pick_any(const ls_ssu_params *p, const ls_plan &pl)
{
    return p->state_dtype == LS_F32 ? pick<float>(pl, p->tokens == 1) : pick<uint16_t>(pl, p->tokens == 1);
}

} /* namespace ls_ssu */

/* Resident CTAs per SM of the plan's kernel at its block size: queried once per (kernel, block
 * size) and kept (a benign race: every thread stores the same value); 0 when the query fails. */
extern "C" int ls_cuda_ssu_resident(const ls_ssu_params *p, const ls_plan *pl)
{
    const ls_ssu::ssu_fn fn = ls_ssu::pick_any(p, *pl);
    if (!fn || pl->block <= 0 || pl->block > 1024)
        return 0;
    static struct {
        ls_ssu::ssu_fn fn;
        int block, n;
    } cache[64];
    for (auto &c : cache)
        if (c.fn == fn && c.block == pl->block)
            return c.n;
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, pl->block, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    for (auto &c : cache)
        if (!c.fn) {
            c.block = pl->block, c.n = n;
            c.fn = fn;
            break;
        }
    return n;
}

/* Validate, plan (ls_choose_ssu; the automatic slot guess needs the resident CTA count of the
 * planned kernel, so plan, query, plan again), launch the plan's instantiation, check. */
extern "C" int ls_cuda_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s)
{
    if (ls_ssu_params_check(p))
        return -1;
    ls_choose_dev dev = ls_cuda_choose_dev();
    ls_plan pl;
    if (ls_choose_ssu(p, t, &dev, &pl))
        return -1;
    if (ls_tune_get(t, LS_KNOB_SSU_SPECULATE) == LS_SSPEC_AUTO && pl.kernel != LS_K_SSU_GENERIC && p->slots > 0) {
        dev.resident_per_sm = ls_cuda_ssu_resident(p, &pl);
        if (ls_choose_ssu(p, t, &dev, &pl))
            return -1;
    }
    const ls_ssu::ssu_fn fn = ls_ssu::pick_any(p, pl);
    if (!fn)
        return ls_fail("cuda ssu: plan names no kernel (%s, %d chunks, %d rows per lane)", ls_kernel_name(pl.kernel),
                       pl.nch, pl.rows_per_lane);
    LS_CUDA_LAUNCH(fn, pl.grid_x, pl.block, 0, ls_cuda_stream(s), pl.pdl, *p, (int)pl.spec);
    return 0;
}
