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

/* The tile's nv state vectors of slot s, coalesced (vector k*32+lane in v[k]). */
template <int N>
static __device__ __forceinline__ void tile_load(const ls_conv_params &p, int s, int c0, int nv, int lane, uint4 v[N])
{
    const uint16_t *base = (const uint16_t *)p.state + (int64_t)s * p.state_stride_slot + (int64_t)c0 * N;
#pragma unroll
    for (int k = 0; k < N; k++)
        if (k * 32 + lane < nv)
            v[k] = ls_ld16(base + 8 * (k * 32 + lane));
}

/*
 * Before the PDL wait (while the previous kernel of the stream may still run), a warp pulls its
 * tile's state (at slot s, read through L2 by ls_slot_guess: below the view's slot count, or -1
 * for none) and first-token x into L2. A prefetch changes no value, so a stale slot costs one
 * wasted prefetch and nothing else (L2 is the point of coherence: a later write by the previous
 * kernel updates the prefetched line), and a slot checked against p.slots never names an
 * address outside the state view. The loads after the wait then hit L2 for the CTAs that were
 * resident early: at large B the first wave's state no longer waits on DRAM.
 */
template <int N>
static __device__ __forceinline__ void tile_prefetch(const ls_conv_params &p, int s, int row, int c0, int nv, int lane)
{
    const int nbytes = nv * 16, xbytes = nv * 16 / N; /* the tile's state (contiguous) and x */
    if (s >= 0 && lane * 128 < nbytes)
        ls_prefetch_l2((const char *)p.state + ((int64_t)s * p.state_stride_slot + (int64_t)c0 * N) * 2 + lane * 128);
    else if (lane >= 28 && (lane - 28) * 128 < xbytes) /* x of token 0: up to 512 bytes, 4 lines */
        ls_prefetch_l2((const char *)(p.x + (int64_t)row * p.x_stride_b + c0) + (lane - 28) * 128);
}

#endif /* LS_CONV_TILE_CUH */
