/*
 * conv_delta_tiles.cuh — conv_delta's tiles kernel (conv_delta.variant=tiles; the file comment of
 * conv_delta.cu says what it does and how it splits the work). Included by conv_delta.cu only,
 * inside namespace ls_cd, after the helpers both kernels share (conv_channel, store_qk_state,
 * gate_load / decay_of / beta_of).
 */
#ifndef LS_CONV_DELTA_TILES_CUH
#define LS_CONV_DELTA_TILES_CUH

constexpr int TW = 16;   /* value columns of a NARROW tile (4 lanes x 4 columns) */
constexpr int KP = 128;  /* key rows of a shared q/k/decay row: 8 K-lanes x RK, zero (decay: one) past K */
constexpr int RK = 16;   /* key rows per lane */
/* Gate items per thread whose inputs are loaded before the conv (the generic kernel: 1; 2 spills). */
constexpr int gate_early(bool fast) { return fast ? 2 : 1; }

/* Shared-memory position of key row k in a KP row: lane group lk = k / 16 reads its rows
 * i = k % 16 as four 16-byte pieces (i / 4); piece i/4 of the 8 groups is one 128-byte run, so
 * the 8 K-lanes' reads of a piece hit 32 distinct banks. */
static __device__ __forceinline__ int kswz(int k) { return ((k & 15) >> 2) * 32 + (k >> 4) * 4 + (k & 3); }

/* Value heads a CTA of wpc consecutive tiles (vb tiles per value head) can touch, at most. */
static inline int tiles_heads(int wpc, int vb, int G)
{
    const int n = (wpc + vb - 2) / vb + 1;
    return n < G ? n : G;
}

/* Shared floats of a tiles CTA: q, k [T][KP], v [T][wpc*TW], decays [T][NG][KDA ? KP : 4] (GDN:
 * one per head, padded), betas [T][NG] (NG = tiles_heads). Every piece a multiple of 4 floats but
 * the last: 16-byte reads. */
static inline size_t tiles_smem_floats(const ls_conv_delta_params &P, int wpc)
{
    const ls_delta_params &d = P.delta;
    const size_t T = (size_t)d.tokens;
    const size_t ng = (size_t)tiles_heads(wpc, (d.dv + TW - 1) / TW, d.heads_v / d.heads_qk);
    return T * (2 * KP + (size_t)wpc * TW + ng * (P.kda ? KP : 4) + ng);
}

/* 4 consecutive shared floats (16-byte aligned) into out. */
static __device__ __forceinline__ void lds4(const float *p, float out[4])
{
    const float4 w = *reinterpret_cast<const float4 *>(p);
    out[0] = w.x, out[1] = w.y, out[2] = w.z, out[3] = w.w;
}

/*
 * This lane's part of a NARROW tile's state (value head hv, columns vb*16 ..): 16 key rows from
 * k0 = (lane / 4) * 16, 4 columns from vb*16 + (lane % 4) * 4; zero past K and V. Loaded before
 * the prologue, held through it, unpacked to fp32 after it: a FAST bf16 state stays in its packed
 * 8-byte pieces meanwhile (32 registers instead of 64, so the prologue does not spill).
 */
template <typename ST, bool FAST>
struct tile_state {
    float S[RK][4];
    __device__ __forceinline__ void load(const ST *src, int k0, int j0, int K, int V)
    {
#pragma unroll
        for (int i = 0; i < RK; i++) {
            if (FAST || k0 + i < K)
                ls_rec::load4<FAST>(src + (int64_t)(k0 + i) * V + j0, V - j0, S[i]);
            else
                S[i][0] = S[i][1] = S[i][2] = S[i][3] = 0.0f;
        }
    }
    __device__ __forceinline__ void unpack(float out[RK][4]) const
    {
#pragma unroll
        for (int i = 0; i < RK; i++)
#pragma unroll
            for (int c = 0; c < 4; c++)
                out[i][c] = S[i][c];
    }
};

template <>
struct tile_state<uint16_t, true> {
    uint2 raw[RK];
    __device__ __forceinline__ void load(const uint16_t *src, int k0, int j0, int, int V)
    {
#pragma unroll
        for (int i = 0; i < RK; i++)
            raw[i] = *reinterpret_cast<const uint2 *>(src + (int64_t)(k0 + i) * V + j0);
    }
    __device__ __forceinline__ void unpack(float out[RK][4]) const
    {
#pragma unroll
        for (int i = 0; i < RK; i++)
            ls_rec::unpack_bf16x4(raw[i], out[i]);
    }
};

template <typename ST, bool FAST>
__device__ __forceinline__ void load_tile(const ls_delta_params &d, int slot, int hv, int vb, tile_state<ST, FAST> &ts)
{
    const int lane = threadIdx.x & 31, K = FAST ? MAXK : d.dk, V = FAST ? MAXK : d.dv;
    const ST *src = (const ST *)d.state + (int64_t)slot * d.state_stride_slot + (int64_t)hv * K * V;
    ts.load(src, (lane / 4) * RK, vb * TW + (lane % 4) * 4, K, V);
}

/*
 * The T tokens of one NARROW tile (load_tile's S) of row r, the activations from shared memory:
 * q_s/k_s rows of KP (kswz order), v_s rows of vstride with the tile's 16 columns at vcol, e_s
 * decay rows (KDA: KP in kswz order; GDN: one float every 4), b_s betas; estride / bstride:
 * floats between tokens. Per token, as delta_tile: S *= decay; partial sums of |q|^2, |k|^2,
 * q.k, S^T k, S^T q over the lane's rows, reduced over the 8 K-lanes; the norms applied to the
 * sums; o = (S + kn u^T)^T qn; S += kn u^T. Then the per-step and final states as flags say.
 */
template <typename ST, bool KDA, bool FAST>
__device__ __forceinline__ void rec_tile(const ls_delta_params &d, int r, int slot, int hv, int vb, float S[RK][4],
                                         const float *q_s, const float *k_s, const float *v_s, int vstride, int vcol,
                                         const float *e_s, const float *b_s, int estride, int bstride)
{
    using ls_delta::COLS;
    constexpr int LV = ls_delta::shape_of<ls_delta::NARROW>::LV, NSUM = ls_delta::NSUM;
    static_assert(COLS == 4 && LV * COLS == TW, "a NARROW tile: 4 lanes x 4 columns");
    const int lane = threadIdx.x & 31, lv = lane % LV, lk = lane / LV;
    const int K = FAST ? MAXK : d.dk, V = FAST ? MAXK : d.dv, HV = d.heads_v, T = d.tokens;
    const int j0 = vb * TW + lv * COLS, valid = V - j0, k0 = lk * RK;
    const int64_t head = (int64_t)hv * K * V;

    for (int t = 0; t < T; t++) {
        const float *qr = q_s + t * KP + lk * 4, *kr = k_s + t * KP + lk * 4;
        float vv[COLS];
        lds4(v_s + t * vstride + vcol + lv * COLS, vv);
        const float beta = b_s[t * bstride];
        const float eg = KDA ? 1.0f : e_s[t * estride];
        float sum[NSUM];
#pragma unroll
        for (int j = 0; j < NSUM; j++)
            sum[j] = 0.0f;
#pragma unroll
        for (int p4 = 0; p4 < RK / 4; p4++) { /* four rows at a time: piece p4 of the lane's rows */
            float qv[4], kv[4], e[4];
            lds4(qr + p4 * 32, qv);
            lds4(kr + p4 * 32, kv);
            if (KDA)
                lds4(e_s + t * estride + lk * 4 + p4 * 32, e);
#pragma unroll
            for (int m = 0; m < 4; m++) {
                const int i = p4 * 4 + m;
#pragma unroll
                for (int c = 0; c < COLS; c++)
                    S[i][c] *= KDA ? e[m] : eg;
                ls_delta::add_row_sums(sum, S[i], qv[m], kv[m]);
            }
        }
#pragma unroll
        for (int j = 0; j < NSUM; j++)
            sum[j] = ls_delta::sum_k_lanes<LV>(sum[j]);
        float uk[COLS], o[COLS];
        ls_delta::token_out(sum, beta, d.scale, vv, o, uk);
#pragma unroll
        for (int p4 = 0; p4 < RK / 4; p4++) { /* k re-read from shared memory: fewer live registers */
            float kv[4];
            lds4(kr + p4 * 32, kv);
#pragma unroll
            for (int m = 0; m < 4; m++)
#pragma unroll
                for (int c = 0; c < COLS; c++)
                    S[p4 * 4 + m][c] = fmaf(kv[m], uk[c], S[p4 * 4 + m][c]);
        }
        if (lk == 0)
            ls_rec::store4<FAST>(d.o + (((int64_t)r * T + t) * HV + hv) * V + j0, valid, o);
        if (d.inter) {
            ST *dst = (ST *)d.inter + (int64_t)slot * d.inter_stride_slot + (int64_t)t * HV * K * V + head;
#pragma unroll
            for (int i = 0; i < RK; i++)
                if (FAST || k0 + i < K)
                    ls_rec::store4<FAST>(dst + (int64_t)(k0 + i) * V + j0, valid, S[i]);
        }
    }
    if (!d.disable_state_update) {
        ST *dst = (ST *)d.state + (int64_t)slot * d.state_stride_slot + head;
#pragma unroll
        for (int i = 0; i < RK; i++)
            if (FAST || k0 + i < K)
                ls_rec::store4<FAST>(dst + (int64_t)(k0 + i) * V + j0, valid, S[i]);
    }
}

/*
 * Grid (B*H, ns), cluster (1, ns): CTA rank of (row r, key head h) owns tiles rank*wpc ..
 * (tile = g * VB + vb: value head h*G + g, columns vb*16 ..), one warp each; ng = tiles_heads.
 */
template <typename ST, bool KDA, bool FAST>
__global__ void __launch_bounds__(32 * LS_CONV_DELTA_TILE_WARPS, 2)
conv_delta_tiles_kernel(const ls_conv_delta_params P, int wpc, int ng)
{
    extern __shared__ float4 sm4[];
    float *sm = reinterpret_cast<float *>(sm4);
    const ls_conv_params &c = P.conv;
    const ls_delta_params &d = P.delta;
    const int H = d.heads_qk, HV = d.heads_v, K = FAST ? MAXK : d.dk, V = FAST ? MAXK : d.dv, T = d.tokens;
    const int G = HV / H, VB = (V + TW - 1) / TW, tiles = G * VB;
    const int tile0 = blockIdx.y * wpc, ntl = min(wpc, tiles - tile0); /* ntl <= 0: a rank without tiles */
    const int g_lo = tile0 / VB;
    const int r = blockIdx.x / H, h = blockIdx.x % H;
    ls_pdl_wait();
    ls_pdl_trigger();
    const int slot = d.slot_idx[r];
    if (slot < 0)
        return; /* padding row: the whole cluster leaves (same row) */

    /* the tile's state loads first: their latency overlaps the prologue (the conv's stores go to
     * other buffers) */
    const int w = threadIdx.x >> 5, tile = tile0 + w, gl = tile / VB - g_lo;
    tile_state<ST, FAST> ts;
    if (w < ntl)
        load_tile<ST, FAST>(d, slot, h * G + tile / VB, tile % VB, ts);

    const int vstride = wpc * TW, estride = ng * (KDA ? KP : 4);
    float *q_s = sm, *k_s = q_s + T * KP, *v_s = k_s + T * KP;
    float *e_s = v_s + T * vstride, *b_s = e_s + T * estride;

    /* gate item i: (token t, head g_lo + gl [, key row k]); its decay (one past K or G) and, at
     * k = 0, its beta (0 past G) into shared memory. The first GU items of each thread have their
     * inputs loaded now, under the state loads and the conv. */
    const int nge = ntl > 0 ? T * ng * (KDA ? KP : 1) : 0;
    const auto gate_live = [&](int i) { return g_lo + (KDA ? i / KP : i) % ng < G && (!KDA || i % KP < K); };
    const auto gate_fetch = [&](int i) {
        const int tg = KDA ? i / KP : i;
        return gate_load<KDA>(d, (int64_t)r * T + tg / ng, h * G + g_lo + tg % ng, KDA ? i % KP : 0);
    };
    const auto gate_store = [&](int i, const gate_in &gi) {
        const int k = KDA ? i % KP : 0, tg = KDA ? i / KP : i, t = tg / ng, hl = tg % ng;
        e_s[t * estride + hl * (KDA ? KP : 4) + (KDA ? kswz(k) : 0)] = gate_live(i) ? decay_of<KDA>(gi) : 1.0f;
        if (k == 0)
            b_s[t * ng + hl] = g_lo + hl < G ? beta_of(gi) : 0.0f;
    };
    constexpr int GU = gate_early(FAST);
    gate_in gin[GU];
#pragma unroll
    for (int u = 0; u < GU; u++) {
        const int i = threadIdx.x + u * blockDim.x;
        if (i < nge && gate_live(i))
            gin[u] = gate_fetch(i);
    }

    /* ---- conv of the head's q/k channels (rows padded to KP) and of this CTA's tiles' v columns;
     * FAST: the first 8 tokens' x loaded up front (the generic kernel would spill) */
    constexpr int XH = FAST ? 8 : 0;
    const int nch = ntl > 0 ? 2 * KP + ntl * TW : 0;
    for (int i = threadIdx.x; i < nch; i += blockDim.x) {
        if (i < 2 * KP) {
            const int kk = i % KP;
            float *dst = (i < KP ? q_s : k_s) + kswz(kk);
            if (kk < K) /* windows: rank 0 stores them; the state: store_qk_state */
                conv_channel<XH>(c, r, slot, (i < KP ? 0 : H * K) + h * K + kk, T, dst, KP, blockIdx.y == 0, false);
            else
                for (int t = 0; t < T; t++)
                    dst[t * KP] = 0.0f;
        } else {
            const int lc = i - 2 * KP, tile = tile0 + lc / TW, j = (tile % VB) * TW + lc % TW;
            if (j < V) /* this CTA's own channel: read and written by no other */
                conv_channel<XH>(c, r, slot, 2 * H * K + (h * G + tile / VB) * V + j, T, v_s + lc, vstride, true, true);
            else
                for (int t = 0; t < T; t++)
                    v_s[t * vstride + lc] = 0.0f;
        }
    }
    store_qk_state(c, r, slot, h, H, K, T);
    if (ntl <= 0)
        return;

    /* ---- decays (KDA: per key row) and betas of the value heads g_lo .. g_lo+ng-1 */
#pragma unroll
    for (int u = 0; u < GU; u++) {
        const int i = threadIdx.x + u * blockDim.x;
        if (i < nge)
            gate_store(i, gin[u]);
    }
    for (int i = threadIdx.x + GU * blockDim.x; i < nge; i += blockDim.x)
        gate_store(i, gate_live(i) ? gate_fetch(i) : gate_in{});
    __syncthreads();
    if (w >= ntl)
        return; /* the prologue's spare warps */
    float S[RK][4];
    ts.unpack(S);
    rec_tile<ST, KDA, FAST>(d, r, slot, h * G + tile / VB, tile % VB, S, q_s, k_s, v_s, vstride, w * TW,
                            e_s + gl * (KDA ? KP : 4), b_s + gl, estride, ng);
}

#endif /* LS_CONV_DELTA_TILES_CUH */
