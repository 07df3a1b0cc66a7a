/*
 * conv_delta_bulk.cuh — conv_delta's bulk kernel (conv_delta.variant=bulk): the GDN/KDA op's
 * head-per-CTA bulk-copy kernel (delta_bulk.cuh) with the conv as its prologue. Included by
 * conv_delta.cu only, inside namespace ls_cd, after the helpers the kernels share (conv_heads,
 * store_qk_state, gate_load / decay_of / beta_of), lds4 (conv_delta_tiles.cuh) and launch_cluster.
 *
 * One CTA of 8 warps per (request row r, value head hv), grid (B*H, G): blockIdx.x = r*H + h,
 * blockIdx.y = g, hv = h*G + g; the G value heads of key head h are one cluster (1, G). Per CTA:
 *   1. thread 0 issues the 8 bulk copies of the head's state (K = V = 128) into shared memory;
 *   2. while they fly: the conv of the key head's K q and K k channels (every rank; rank 0 stores
 *      their windows, and their state after the cluster barrier: store_qk_state; with G = 1 the
 *      CTA is their only reader and stores it as it goes) and of the head's V v channels (its
 *      own: windows and state), T tokens, into shared memory; the decays (KDA: per key row) and
 *      beta of each token, as the other kernels compute them;
 *   3. the T tokens of delta_bulk's math (bulk_tokens, bulk_norms) on those inputs: the copy is
 *      waited for at the first token.
 * Shared memory: the state tile and bulk_tail (as delta_bulk), then q, k, v [T][128] and decays
 * [T][KDA ? 128 : 1], betas [T] in fp32. Serves what ls_conv_delta_bulk_ok (choose.c) accepts:
 * ls_delta_bulk_ok's shapes (bf16 state only for T = 1: the tile holds the state in its dtype
 * between tokens), G <= 8, T <= 16; the plan gives the rest to auto's kernel.
 * Padding rows (slot < 0) leave at once: nothing read or written, o included (the conv_delta
 * contract; delta_bulk itself writes o for them).
 * EARLY (conv_delta.variant=bulkp): step 2 as bulk_prologue_early instead of conv_heads, the
 * same outputs; tokens and launch as bulk.
 */
#ifndef LS_CONV_DELTA_BULK_CUH
#define LS_CONV_DELTA_BULK_CUH

/* Shared bytes of the bulk kernel for the shape's state dtype, T and gate. */
static inline size_t bulk_smem(const ls_conv_delta_params &P)
{
    const size_t T = (size_t)P.delta.tokens, K = (size_t)MAXK;
    const size_t tile = P.delta.state_dtype == LS_F32 ? ls_delta::bulk_smem_bytes<float>()
                                                      : ls_delta::bulk_smem_bytes<uint16_t>();
    return tile + T * (3 * K + (P.kda ? K : 1) + 1) * sizeof(float);
}

/* Conv x of the first tokens loaded with each channel's window: decode 1, verify 4 (registers). */
constexpr int bulk_conv_xt(bool one_token) { return one_token ? 1 : 4; }

/*
 * bulkp's prologue (conv_delta.variant=bulkp): every global load of the conv and of the gates
 * issued before any of them is used, so the CTA waits one round trip instead of one per trip of
 * conv_heads' channel loop (then the gates, then store_qk_state's reloads). Thread i owns q/k
 * channel i of key head h (2K = 256: the whole CTA) and, for i < V, v channel i of value head hv:
 * both channels' windows, weights (one 8/16-byte vector per channel where conv_wvec allows: the
 * scalar loads touch 4 sectors per warp for every one they use), bias and first XT tokens of x,
 * and the thread's second gate item (the first, g0, is the caller's), then the two convs (the
 * same conv_fetch and conv_steps as every kernel's conv_channel) and the gates. With G > 1,
 * rank 0 stores the q/k conv state after the cluster barrier from the window the conv left in
 * registers (no reload). Gate items past the thread's first two (KDA verify past T = 4) are
 * loaded and stored last. The loads are held as raw bits (conv_in, gate_in) until the steps:
 * when each value was converted right after its load, the SASS waited for every load before
 * issuing the next (five round trips at decode: results/h200/state-unroll-73ee529/profile-fused/).
 */
template <int XT, typename Fetch, typename Store>
static __device__ __forceinline__ void bulk_prologue_early(const ls_conv_params &c, int r, int slot, int h, int H,
                                                           int hv, int T, float *q_s, float *k_s, float *v_s,
                                                           bool solo, Fetch gate_fetch, Store gate_store, int ng,
                                                           const gate_in &g0)
{
    constexpr int K = MAXK, V = MAXK, N = LS_CONV_DELTA_BULK_THREADS;
    static_assert(2 * K == N && V <= N, "bulkp: one q/k channel per thread, v channels on the first V");
    const int i = threadIdx.x;
    const bool wvec = conv_wvec(c), has_v = i < V, has_g1 = i + N < ng;
    const int qk_ch = i < K ? h * K + i : H * K + h * K + (i - K), v_ch = 2 * H * K + hv * V + i;
    conv_in<XT> qk, vc;
    float *qk_dst = i < K ? q_s + i : k_s + (i - K);
    conv_fetch<XT>(c, r, slot, qk_ch, T, wvec, qk);
    if (has_v)
        conv_fetch<XT>(c, r, slot, v_ch, T, wvec, vc);
    /* loaded unconditionally (item ng - 1 when the thread has no second one): behind a branch,
     * ptxas scheduled the conv's first FMA, which waits for the conv loads, above these loads */
    const gate_in g1 = gate_fetch(has_g1 ? i + N : ng - 1);
    conv_steps<XT>(c, r, slot, qk_ch, T, qk_dst, K, blockIdx.y == 0, solo, wvec, qk);
    /* G > 1: rank 0 overwrites the q/k conv state every rank read, so each rank arrives once
     * its reads are done (conv_steps stored outputs computed from every window value it loaded:
     * they have returned) and rank 0 waits just before its store. Relaxed, and split around the
     * rest of the prologue: a full cluster sync here (a release: every earlier store performed
     * first) took a fifth of the GDN decode kernel's stall samples
     * (results/h200/cluster-split-c579e78/profile/) */
    const bool shared_qk = !solo && !c.disable_state_update;
    if (shared_qk)
        ls_cluster_arrive_relaxed();
    if (has_v)
        conv_steps<XT>(c, r, slot, v_ch, T, v_s + i, V, true, true, wvec, vc);
    if (i < ng)
        gate_store(i, g0);
    if (has_g1)
        gate_store(i + N, g1);
    for (int j = i + 2 * N; j < ng; j += N) /* KDA verify past T = 4 */
        gate_store(j, gate_fetch(j));
    if (shared_qk) {
        ls_cluster_wait();
        if (blockIdx.y == 0)
            conv_store_state(c, conv_sbase(c, slot, qk_ch), qk.last);
    }
}

template <typename ST, bool KDA, bool ONE_TOKEN, bool EARLY>
__global__ void __launch_bounds__(LS_CONV_DELTA_BULK_THREADS, ONE_TOKEN ? 3 : 2)
conv_delta_bulk_kernel(const ls_conv_delta_params P)
{
    using ls_delta::BULK_ROWS;
    static_assert(LS_CONV_DELTA_BULK_THREADS == 32 * ls_delta::BULK_WARPS, "delta_bulk's 8 warps");
    constexpr int K = MAXK, V = MAXK, EK = KDA ? K : 1;
    extern __shared__ __align__(128) unsigned char smem_bulk[];
    ST *S = reinterpret_cast<ST *>(smem_bulk);
    ls_delta::bulk_tail &tl = *reinterpret_cast<ls_delta::bulk_tail *>(smem_bulk + K * V * sizeof(ST));
    const ls_conv_params &c = P.conv;
    const ls_delta_params &d = P.delta;
    const int H = d.heads_qk, HV = d.heads_v, G = HV / H, T = ONE_TOKEN ? 1 : d.tokens;
    const int r = blockIdx.x / H, h = blockIdx.x % H, hv = h * G + blockIdx.y;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, k0 = w * BULK_ROWS, col0 = 4 * lane;
    const long long head = (long long)hv * K * V;
    ls_pdl_wait();
    ls_pdl_trigger();
    const int slot = d.slot_idx[r];
    if (slot < 0)
        return; /* padding row: the whole cluster leaves (same row) */
    if (threadIdx.x == 0)
        ls_delta::bulk_fetch<ST>(smem_bulk, d, slot, head, &tl.bar);

    float *q_s = reinterpret_cast<float *>(smem_bulk + ls_delta::bulk_smem_bytes<ST>());
    float *k_s = q_s + T * K, *v_s = k_s + T * K, *e_s = v_s + T * V, *b_s = e_s + T * EK;

    /* gate item i = (token i / EK, key row i % EK): this thread's first one loaded before the conv */
    const int ng = T * EK;
    const auto gate_fetch = [&](int i) { return gate_load<KDA>(d, (int64_t)r * T + i / EK, hv, i % EK); };
    const auto gate_store = [&](int i, const gate_in &gi) {
        e_s[i] = decay_of<KDA>(gi);
        if (i % EK == 0)
            b_s[i / EK] = beta_of(gi);
    };
    gate_in g0 = {};
    if ((int)threadIdx.x < ng)
        g0 = gate_fetch(threadIdx.x);

    /* G = 1: this CTA alone reads the key head's q/k channels, so their state is stored by the conv
     * itself; else by rank 0 after the cluster barrier */
    const bool solo = gridDim.y == 1;
    if constexpr (EARLY)
        bulk_prologue_early<bulk_conv_xt(ONE_TOKEN)>(c, r, slot, h, H, hv, T, q_s, k_s, v_s, solo, gate_fetch,
                                                     gate_store, ng, g0);
    else {
        conv_heads<bulk_conv_xt(ONE_TOKEN)>(c, r, slot, h, H, K, T, q_s, k_s, v_s, hv * V, V, blockIdx.y == 0, solo);
        if (!solo)
            store_qk_state(c, r, slot, h, H, K, T);
        if ((int)threadIdx.x < ng)
            gate_store(threadIdx.x, g0);
        for (int i = threadIdx.x + blockDim.x; i < ng; i += blockDim.x)
            gate_store(i, gate_fetch(i));
    }
    __syncthreads(); /* q, k, v, gates (and the copy barrier's initialisation) visible */

    ls_delta::bulk_tokens(d, S, tl, lane, w, T, true, slot, head, [&](int t, ls_delta::bulk_in &in, long long &v_off) {
        const float *qt = q_s + t * K, *kt = k_s + t * K;
        float q4[4], k4[4];
        lds4(qt + col0, q4);
        lds4(kt + col0, k4);
#pragma unroll
        for (int i = 0; i < BULK_ROWS; i += 4) {
            lds4(qt + k0 + i, in.qr + i);
            lds4(kt + k0 + i, in.kr + i);
            if (KDA)
                lds4(e_s + t * K + k0 + i, in.e + i);
            else
                in.e[i] = in.e[i + 1] = in.e[i + 2] = in.e[i + 3] = e_s[t];
        }
        lds4(v_s + t * V + col0, in.vv);
        in.beta = b_s[t];
        ls_delta::bulk_norms(q4, k4, in.nq, in.nk, in.nqk);
        v_off = (((long long)r * T + t) * HV + hv) * V + col0;
    });
}

/* Launch the plan's bulk kernel (grid (B*H, G), cluster (1, G)); decode and (fp32 state) verify.
 * EARLY: bulkp's prologue (bulk_prologue_early). */
template <typename ST, bool KDA, bool EARLY>
static int launch_bulk(const ls_conv_delta_params *p, const ls_plan &pl, size_t smem, cudaStream_t st)
{
    const int G = (int)pl.grid_y;
    const char *name = EARLY ? "conv_delta_bulkp_kernel" : "conv_delta_bulk_kernel";
    if (p->delta.tokens == 1) {
        LS_CUDA_TRY(ls_allow_smem(conv_delta_bulk_kernel<ST, KDA, true, EARLY>, smem));
        return launch_cluster(conv_delta_bulk_kernel<ST, KDA, true, EARLY>, name, pl.grid_x, G, pl.block, smem, st,
                              pl.pdl, *p);
    }
    if constexpr (std::is_same<ST, float>::value) {
        LS_CUDA_TRY(ls_allow_smem(conv_delta_bulk_kernel<ST, KDA, false, EARLY>, smem));
        return launch_cluster(conv_delta_bulk_kernel<ST, KDA, false, EARLY>, name, pl.grid_x, G, pl.block, smem, st,
                              pl.pdl, *p);
    } else
        return ls_fail("cuda conv_delta: %s with a bf16 state and T=%d (decode only; the plan refuses it)", name,
                       (int)p->delta.tokens);
}

#endif /* LS_CONV_DELTA_BULK_CUH */
