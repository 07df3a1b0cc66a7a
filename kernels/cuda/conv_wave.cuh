/*
 * conv_wave.cuh — conv_cm_wave (conv.variant=wave): single-token decode (T = 1) of a
 * channel-major bf16 conv state on a grid of at most one resident wave, for large batches.
 * Included by conv1d_update.cu, whose launcher instantiates it; the plan is ls_choose_conv's.
 *
 * conv_cm_tile at B = 512 (qwen3-next tp 2: 8192 warp tiles) runs 2048 CTAs in 1.94 waves: every
 * CTA start pays the index -> state chain again, and the second wave's CTAs start as the first
 * ones drain (results/h200/profile-goals-6e5f9d8/). Here the same warp tiles (conv_tile.cuh: 256
 * channels of one row per warp, coalesced 512-byte accesses through warp-private shared memory)
 * are walked by a grid the plan sizes to fit in one wave (LS_CONV_WAVE_CTAS_PER_SM CTAs of 4 warps
 * per SM, the residency the decode instance's __launch_bounds__ asks of ptxas), each warp taking
 * tiles w, w + nw, w + 2nw, ... (nw = the grid's warps: the warps in flight together cover
 * neighbouring tiles, as conv_cm_tile's do). The plan trims the grid so every warp gets the same
 * number of tiles (ceil(tiles / wave)), up to the last few: no partial second wave.
 * Software pipeline through shared memory: a warp's tiles land by asynchronous copies (cp.async,
 * 16 bytes per lane, coalesced as conv_cm_tile's loads) in two stages of warp-private shared
 * memory, so the bytes in flight cost no registers: while the warp computes and stores tile i,
 * the copies of tile i + 1 are already issued (its slot index was read one tile earlier still, so
 * they never wait on the index) and tile i + 2's index load is in flight; at B = 512 a warp's
 * two tiles are both in flight from its first instructions. Before the PDL wait the warp
 * prefetches its first two tiles into L2 (conv.prefetch, tile_prefetch).
 * Contract points as conv_cm_tile: padding rows (slot < 0) read and write nothing (their x is not
 * loaded), a partial last tile (C % 256 != 0) stores only its channels, inter windows (T = 1:
 * the new window at inter[s, 0]) when p.inter is set, no state write under
 * disable_state_update. Needs the ls_conv_vec_ok conditions with a channel-major state and inter.
 * Two rows naming one slot are outside the contract (as for every kernel: they race).
 */
#ifndef LS_CONV_WAVE_CUH
#define LS_CONV_WAVE_CUH

#include "conv_tile.cuh"

/* One warp tile: its row, first channel and the count of 16-byte state vectors it covers. */
struct wave_tile {
    int row, c0, nv;
};

template <int N>
static __device__ __forceinline__ wave_tile wave_locate(const ls_conv_params &p, uint32_t tile, uint32_t tiles_per_row)
{
    wave_tile t;
    t.row = (int)(tile / tiles_per_row);
    t.c0 = (int)(tile - (uint32_t)t.row * tiles_per_row) * LS_CONV_TILE_CHANNELS;
    t.nv = min(LS_CONV_TILE_CHANNELS, p.channels - t.c0) * N / 8;
    return t;
}

/* One stage of a warp's pipeline in shared memory: the tile's state vectors in load order
 * (vector k*32+lane, then read back in the lane layout as tile_swap_in does) and its x. */
template <int N> struct wave_stage {
    uint4 st[32 * N];
    uint4 x[32];
};

/* 16-byte asynchronous copy global -> shared through L2 only (cp.async.cg: the state and x are
 * read once), and the group fences: a group per tile, waited on with at most one newer pending. */
static __device__ __forceinline__ void wave_cp16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(ls_smem_u32(dst)), "l"(src) : "memory");
}
static __device__ __forceinline__ void wave_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
static __device__ __forceinline__ void wave_wait_prev() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }

/* Issue the tile's state copies (coalesced: vector k*32+lane) and its x (the lane's 8 channels)
 * into stage g, then close the tile's group (empty for a padding row: the group count stays
 * uniform). */
template <int N>
static __device__ __forceinline__ void wave_issue(const ls_conv_params &p, int s, const wave_tile &t, int lane,
                                                  wave_stage<N> &g)
{
    if (s >= 0) {
        const uint16_t *base = (const uint16_t *)p.state + (int64_t)s * p.state_stride_slot + (int64_t)t.c0 * N;
#pragma unroll
        for (int k = 0; k < N; k++)
            if (k * 32 + lane < t.nv)
                wave_cp16(&g.st[k * 32 + lane], base + 8 * (k * 32 + lane));
        if (lane * N < t.nv)
            wave_cp16(&g.x[lane], p.x + (int64_t)t.row * p.x_stride_b + t.c0 + lane * 8);
    }
    wave_commit();
}

/* The landed tile of slot s (stage g): the lane's window, y, then the inter window and the state
 * (tile_swap_out through the same stage: each lane rewrites only the vectors it read). */
template <int W, typename WT, bool INTER>
static __device__ __forceinline__ void wave_compute(const ls_conv_params &p, wave_stage<W - 1> &g, const wave_tile &t,
                                                    int s, int lane)
{
    constexpr int N = W - 1;
    const bool active = lane * N < t.nv;
    const int c = t.c0 + lane * 8;
    uint32_t win[4 * N];
#pragma unroll
    for (int k = 0; k < N; k++) {
        const uint4 u = active ? g.st[lane * N + k] : make_uint4(0, 0, 0, 0);
        win[4 * k] = u.x, win[4 * k + 1] = u.y, win[4 * k + 2] = u.z, win[4 * k + 3] = u.w;
    }
    if (active) {
        float yf[8];
        conv_step8<W, false, WT>(p, c, g.x[lane], win, yf);
        ls_st16(p.y + (int64_t)t.row * p.y_stride_b + c, ls_pack_bf16x8(yf));
    }
    if (INTER)
        tile_swap_out<N>(g.st, win, lane, t.nv, (uint16_t *)p.inter + (int64_t)s * p.inter_stride_slot + (int64_t)t.c0 * N);
    if (!p.disable_state_update)
        tile_swap_out<N>(g.st, win, lane, t.nv, (uint16_t *)p.state + (int64_t)s * p.state_stride_slot + (int64_t)t.c0 * N);
}

/* Blocks per SM asked of ptxas: LS_CONV_WAVE_CTAS_PER_SM (the wave the plan sizes its grid to)
 * for the bf16-weight decode instance without inter windows (GDN, Mamba2); the others keep
 * their natural count (their grid may then be more than one wave: still correct). */
template <typename WT, bool INTER> constexpr int wave_min_blocks()
{
    return (!INTER && sizeof(WT) == 2) ? LS_CONV_WAVE_CTAS_PER_SM : 1;
}

template <int W, typename WT, bool INTER>
__global__ void __launch_bounds__(128, (wave_min_blocks<WT, INTER>())) conv_cm_wave(const conv_args a)
{
    constexpr int N = W - 1;
    __shared__ wave_stage<N> stages[4][2];
    const ls_conv_params &p = a.p;
    const int lane = threadIdx.x & 31;
    wave_stage<N> *g = stages[threadIdx.x >> 5];
    const uint32_t tpr = (uint32_t)a.groups, ntiles = (uint32_t)p.batch * tpr, stride = gridDim.x * 4;
    uint32_t tile = blockIdx.x * 4 + (threadIdx.x >> 5); /* warp-uniform, as everything below */
    if (a.prefetch) { /* the warp's first two tiles (at B = 512 all of its work) */
        tile_prefetch<N, 1>(p, tile, tpr, ntiles, lane);
        tile_prefetch<N, 1>(p, tile + stride, tpr, ntiles, lane);
    }
    ls_pdl_wait();
    ls_pdl_trigger();
    if (tile >= ntiles)
        return;
    wave_tile cur = wave_locate<N>(p, tile, tpr);
    int s = p.slot_idx[cur.row];
    int s_next = tile + stride < ntiles ? p.slot_idx[(tile + stride) / tpr] : -1;
    wave_issue<N>(p, s, cur, lane, g[0]);
    for (int b = 0;; b ^= 1) {
        const uint32_t nt = tile + stride;
        const bool more = nt < ntiles;
        wave_tile nxt = cur;
        int s_after = -1;
        if (more) { /* the next tile's copies and the index after it, before this tile's math */
            nxt = wave_locate<N>(p, nt, tpr);
            if (nt + stride < ntiles)
                s_after = p.slot_idx[(nt + stride) / tpr];
        }
        wave_issue<N>(p, more ? s_next : -1, nxt, lane, g[b ^ 1]); /* an empty group past the end */
        wave_wait_prev(); /* this tile's group has landed (the next one may still fly) */
        __syncwarp();
        if (s >= 0)
            wave_compute<W, WT, INTER>(p, g[b], cur, s, lane);
        if (!more)
            return;
        __syncwarp(); /* every lane is done with stage b before the copies of tile + 2 stride */
        tile = nt, cur = nxt, s = s_next, s_next = s_after;
    }
}

#endif /* LS_CONV_WAVE_CUH */
