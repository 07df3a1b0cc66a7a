/*
 * mamba2_ssu.cu — Mamba2 selective state update on the GPU (SPEC §2.6): tied dt/decay per head,
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
 * FAST (ds = 128 or 256, aligned): vector accesses with immediate row strides. Generic (any
 * ds <= 256, any alignment): scalar predicated accesses, NCH = 8, RP = 2.
 * softplus/exp of the decay use full-precision expf/log1pf (ls_rec::softplus_precise).
 * A grid that takes at most half of the GPU (small batch) guesses the slot before the PDL wait
 * and prefetches its state into L2 meanwhile (spec_for, ls_slot_guess).
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

/* The warp's state tile (rows row0 + i * LANES_R, chunks n0 + j * CHUNK) from src, all loads
 * issued at once; zero where src is NULL (padding) or the row is past hd. */
template <typename ST, int NCH, int RP, bool FAST, bool CS>
__device__ __forceinline__ void load_tile(const ST *src, int row0, int n0, int hd, int ds, float S[RP][NCH][4])
{
#pragma unroll
    for (int i = 0; i < RP; i++) {
        const int row = row0 + i * LANES_R;
#pragma unroll
        for (int j = 0; j < NCH; j++) {
            const int n = n0 + j * CHUNK;
            if (src && row < hd)
                ls_rec::load4<FAST, CS>(src + (long long)row * ds + n, ds - n, S[i][j]);
            else
                S[i][j][0] = S[i][j][1] = S[i][j][2] = S[i][j][3] = 0.0f;
        }
    }
}

/*
 * ST: float or uint16_t (bf16) state. NCH: 32-column chunks per lane (FAST: ds = 32*NCH). RP:
 * rows per lane. ONE_TOKEN: T = 1 at compile time. CS: streaming (evict-first) hints on the state
 * and inter accesses (LS_SSU_VARIANT=cs). Warp w (ordered r, h, row block; row block fastest).
 * spec (FAST only; the launcher's choice, spec_for): the slot guess (ls_slot_guess). Before the
 * PDL wait the warp prefetches its tile at the guessed slot into L2 (its rows are contiguous:
 * WR x ds elements); after the wait it loads the tile there beside the real index and loads
 * again only when the two differ.
 */
template <typename ST, int NCH, int RP, bool FAST, bool ONE_TOKEN, bool CS = false>
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
        load_tile<ST, NCH, RP, FAST, CS>((const ST *)p.state + guess * p.state_stride_slot + head, row0, n0, hd, ds, S);
    const int slot = p.slot_idx[r];
    if (slot != guess || slot < 0) /* a miss, or padding (no guess either): zeros */
        load_tile<ST, NCH, RP, FAST, CS>(slot >= 0 ? (const ST *)p.state + slot * p.state_stride_slot + head : nullptr,
                                         row0, n0, hd, ds, S);

    if (!ONE_TOKEN) /* verify: later tokens' B, C rows into L2 under the state loads */
        for (int t = 1; t < T; t++) {
            const long long bg = (((long long)r * T + t) * ng + g) * ds + n0;
            ls_rec::prefetch_l2(p.Bm + bg);
            ls_rec::prefetch_l2(p.Cm + bg);
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
            const float dx = d * x;
            float acc = 0.0f;
#pragma unroll
            for (int j = 0; j < NCH; j++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    S[i][j][c] = fmaf(a, S[i][j][c], dx * Bv[j][c]);
                    acc = fmaf(S[i][j][c], Cv[j][c], acc);
                }
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
                        ls_rec::store4<FAST, CS>(dst + (long long)row * ds + n0 + j * CHUNK,
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
                    ls_rec::store4<FAST, CS>(dst + (long long)row * ds + n0 + j * CHUNK, ds - n0 - j * CHUNK,
                                             S[i][j]);
        }
    }
}

/* Chunks for the vector path (4 or 8), or 0 when these params need the generic kernel. */
static int fast_chunks(const ls_ssu_params *p)
{
    const size_t es = ls_dtype_size(p->state_dtype);
    const size_t sv = 4 * es;
    if (p->dstate != 4 * CHUNK && p->dstate != 8 * CHUNK)
        return 0;
    bool ok = ls_rec::aligned_ok(p->state, sv) && (p->state_stride_slot * es) % sv == 0;
    ok = ok && (!p->inter || (ls_rec::aligned_ok(p->inter, sv) && (p->inter_stride_slot * es) % sv == 0));
    ok = ok && ls_rec::aligned_ok(p->Bm, 8) && ls_rec::aligned_ok(p->Cm, 8);
    return ok ? p->dstate / CHUNK : 0;
}

/*
 * The slot guess (LS_SSU_SPECULATE; auto = unset): by default only for a grid that takes at most
 * half of the GPU's resident CTA slots. Work before the PDL wait pays only when the CTA becomes
 * resident while the previous kernel still runs, i.e. when both grids fit beside each other (half
 * each for a predecessor of the same size). Measured on the H200 (results/h200/kernels.md):
 * B = 1 3.32 -> 2.93 us, B = 4 6.91 -> 6.72 us (256 CTAs of 528), but B = 8 (512 CTAs) 11.4 ->
 * 12.7 us, and level (within 1 %) at B = 64-128.
 */
template <auto K>
static int spec_for(const ls_ssu_params *p, unsigned blocks, int warps)
{
    const int spec = ls_spec_mode("LS_SSU_SPECULATE", p->slots);
    if (spec != LS_SPEC_AUTO)
        return spec;
    const long long slots = (long long)ls_resident_per_sm<K>(32 * warps) * ls_cuda_sm_count();
    return 2LL * blocks <= slots ? LS_SPEC_AUTO : LS_SPEC_OFF;
}

template <typename ST, int NCH, int RP, bool CS = false>
static int launch_mode(const ls_ssu_params *p, unsigned blocks, int warps, cudaStream_t st)
{
    if (p->tokens == 1) {
        const int spec = spec_for<ssu_kernel<ST, NCH, RP, true, true, CS>>(p, blocks, warps);
        LS_CUDA_LAUNCH((ssu_kernel<ST, NCH, RP, true, true, CS>), blocks, 32 * warps, 0, st, *p, spec);
    } else {
        const int spec = spec_for<ssu_kernel<ST, NCH, RP, true, false, CS>>(p, blocks, warps);
        LS_CUDA_LAUNCH((ssu_kernel<ST, NCH, RP, true, false, CS>), blocks, 32 * warps, 0, st, *p, spec);
    }
    return 0;
}

/*
 * Large-batch tuning knob LS_SSU_VARIANT, read once per process: "default" (or unset): wide
 * tiles once they give every SM 4 warps (the version measured in results/h200/kernels.md);
 * "narrow": narrow tiles at every batch (CUDA-B timed them equal or better at B = 512: decode
 * 92.5 vs 92.3 %, verify 91.5 vs 90.2 %, within the noise of one run); "cs": the default choice
 * with streaming (evict-first) hints on the wide tiles' state and inter accesses.
 */
enum variant_id { VAR_DEFAULT = 0, VAR_NARROW = 1, VAR_CS = 2 };

/* The knob, read on first use and kept for the process. Names in variant_id order. */
static const ls_knob &variant_knob()
{
    static const char *const names[] = {"default", "narrow", "cs"};
    static const ls_knob k = ls_knob_read("LS_SSU_VARIANT", names, 3);
    return k;
}

/* Warps of the whole launch with rows_per_lane rp. */
static long long warps_for(const ls_ssu_params *p, int rp)
{
    const int wr = LANES_R * rp;
    return (long long)p->batch * p->nheads * ((p->head_dim + wr - 1) / wr);
}

template <typename ST>
static int launch_typed(const ls_ssu_params *p, int nch, cudaStream_t st)
{
    const int sms = ls_cuda_sm_count();
    /* narrow tiles while wide ones would give the SMs fewer than 4 warps each (B = 1: 3.73 us
     * narrow vs 4.10 wide on the H200; results/h200/kernels.md) */
    const int var = variant_knob().v;
    const bool narrow = nch && (var == VAR_NARROW || warps_for(p, rows_per_lane(nch, false)) < 4LL * sms);
    const bool cs = var == VAR_CS;
    const long long warps_total = warps_for(p, rows_per_lane(nch ? nch : NCH_GENERIC, narrow));
    int warps = MAX_WARPS_PER_CTA;
    while (warps > 1 && warps_total < (long long)warps * 2 * sms)
        warps /= 2;
    const long long blocks = (warps_total + warps - 1) / warps;
    if (blocks > 0x7fffffffLL)
        return ls_fail("cuda ssu: batch=%d too large (%lld CTAs)", p->batch, blocks);
    const unsigned nb = (unsigned)blocks;
    if (nch == 4)
        return narrow ? launch_mode<ST, 4, 2>(p, nb, warps, st)
                      : (cs ? launch_mode<ST, 4, 4, true>(p, nb, warps, st) : launch_mode<ST, 4, 4>(p, nb, warps, st));
    if (nch == 8)
        return narrow ? launch_mode<ST, 8, 1>(p, nb, warps, st)
                      : (cs ? launch_mode<ST, 8, 2, true>(p, nb, warps, st) : launch_mode<ST, 8, 2>(p, nb, warps, st));
    /* generic: the T loop serves decode too */
    LS_CUDA_LAUNCH((ssu_kernel<ST, NCH_GENERIC, rows_per_lane(NCH_GENERIC, false), false, false>), nb, 32 * warps, 0,
                   st, *p, 0);
    return 0;
}

} /* namespace ls_ssu */

/* Validate, pick the instantiation (state dtype x ds path x decode/verify), launch, check. */
extern "C" int ls_cuda_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s)
{
    if (ls_ssu_params_check(p))
        return -1;
    if (ls_ssu::variant_knob().v < 0)
        return ls_fail("cuda ssu: LS_SSU_VARIANT=%s unknown (default|narrow|cs)", ls_ssu::variant_knob().raw);
    if (p->dstate > ls_ssu::NCH_GENERIC * ls_ssu::CHUNK)
        return ls_fail("cuda ssu: dstate=%d unsupported (at most %d)", p->dstate,
                       ls_ssu::NCH_GENERIC * ls_ssu::CHUNK);
    const int nch = ls_ssu::fast_chunks(p);
    if (p->state_dtype == LS_F32)
        return ls_ssu::launch_typed<float>(p, nch, ls_cuda_stream(s));
    return ls_ssu::launch_typed<uint16_t>(p, nch, ls_cuda_stream(s));
}
