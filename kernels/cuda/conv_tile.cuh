/*
 * conv_tile.cuh — the warp-tile building blocks of the channel-major conv kernel conv_cm_tile
 * (conv1d_update.cu): a warp owns a tile of LS_CONV_TILE_CHANNELS = 256 channels (8 per lane) of
 * one row, whose channel-major state is 256(W-1) contiguous bf16 = 32(W-1) 16-byte vectors. Lanes
 * load / store vectors k*32+lane (coalesced 512-byte warp accesses) and swap them through
 * warp-private shared memory with the lane layout (vectors lane*(W-1)+k: the lane's own 8
 * channels; the 48-byte lane stride is bank-conflict free for 16-byte accesses). A partial last
 * tile (C % 256 != 0) has nv < 32(W-1) vectors; lanes past it hold zeros and store nothing.
 * Private to kernels/cuda; include from .cu files only.
 */
#ifndef LS_CONV_TILE_CUH
#define LS_CONV_TILE_CUH

#include "conv_vec.cuh"

/* Coalesced vectors (k*32+lane, nv of them) -> shared -> the lane's window (lane layout). */
template <int N>
static __device__ __forceinline__ void tile_swap_in(uint4 *sm, const uint4 v[N], int lane, int nv, uint32_t win[4 * N])
{
#pragma unroll
    for (int k = 0; k < N; k++)
        if (k * 32 + lane < nv)
            sm[k * 32 + lane] = v[k];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < N; k++) {
        uint4 u = lane * N < nv ? sm[lane * N + k] : make_uint4(0, 0, 0, 0);
        win[4 * k] = u.x, win[4 * k + 1] = u.y, win[4 * k + 2] = u.z, win[4 * k + 3] = u.w;
    }
    __syncwarp();
}

/* Window (lane layout) -> shared -> coalesced stores of the tile's nv vectors at dst. */
template <int N>
static __device__ __forceinline__ void tile_swap_out(uint4 *sm, const uint32_t win[4 * N], int lane, int nv, uint16_t *dst)
{
    if (lane * N < nv)
#pragma unroll
        for (int k = 0; k < N; k++)
            sm[lane * N + k] = make_uint4(win[4 * k], win[4 * k + 1], win[4 * k + 2], win[4 * k + 3]);
    __syncwarp();
#pragma unroll
    for (int k = 0; k < N; k++)
        if (k * 32 + lane < nv)
            ls_st16(dst + 8 * (k * 32 + lane), sm[k * 32 + lane]);
    __syncwarp();
}

/*
 * Before the PDL wait (while the previous kernel of the stream may still run), a warp pulls its
 * tiles' state and first-token x into L2, at the slot the index holds now: the read of the
 * index goes to L2 only (ld.cg, so no stale copy stays in L1 for the real read after the
 * wait), and a prefetch changes no value, so a stale index costs one wasted prefetch and
 * nothing else (L2 is the point of coherence: a later write by the previous kernel updates the
 * prefetched line). The state is prefetched only when the caller gives the view's slot count
 * (p.slots) and the index is below it, so even a garbage index never names an address outside
 * the state view. The loads after the wait then hit L2 for the CTAs that
 * were resident early: at large B the first wave's index -> state chain no longer waits on
 * DRAM.
 */
template <int N, int ITEMS>
static __device__ __forceinline__ void tile_prefetch(const ls_conv_params &p, uint32_t tile0, uint32_t tiles_per_row,
                                                     uint32_t ntiles, int lane)
{
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        if (tile0 + i >= ntiles)
            return;
        const int row = (int)((tile0 + i) / tiles_per_row);
        const int c0 = (int)(tile0 + i - (uint32_t)row * tiles_per_row) * 256;
        const int nc = min(256, p.channels - c0), nbytes = nc * N * 2; /* the tile's state, contiguous */
        const int s = __ldcg(p.slot_idx + row);
        if ((unsigned)s < (unsigned)p.slots && lane * 128 < nbytes) /* never outside the view */
            ls_prefetch_l2((const char *)p.state + ((int64_t)s * p.state_stride_slot + (int64_t)c0 * N) * 2 + lane * 128);
        else if (lane >= 28 && (lane - 28) * 128 < nc * 2) /* x of token 0: up to 512 bytes, 4 lines */
            ls_prefetch_l2((const char *)(p.x + (int64_t)row * p.x_stride_b + c0) + (lane - 28) * 128);
    }
}

#endif /* LS_CONV_TILE_CUH */
