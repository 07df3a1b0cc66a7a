/*
 * state_ops.cu — the pool-wide state ops on the GPU (docs/pool.md; contract in ls_kernels.h,
 * ls_state_params): copy (main[l][dst[i]] <- main[l][src[i]]), accept (main[l][dst[i]] <-
 * spec[l][dst[i]][step[i]]) and zero (main[l][dst[i]] <- 0), every buffer and every layer in ONE
 * launch.
 *
 * Work is cut into chunks: a chunk is one (buffer, layer, row) item, or a piece of it of
 * THREADS * U vectors (U = the plan's unroll, knob state.unroll; 8 or 16 KB under auto), so 24 KB
 * conv items and 1-2 MB temporal items balance across the grid. Chunks are numbered buffer by
 * buffer (prefix table built on the host), layer-major then row; the grid walks them
 * grid-stride (grid and vector width from ls_choose_state, choose.c: one block per chunk, or a
 * persistent grid of at most 8 blocks per SM where 16 KB chunks fill at most two of its rounds,
 * knob state.grid). Inside a chunk each thread moves U vectors, all loads
 * issued before the stores. The vector is the widest of 16/8/4/2/1 bytes that divides every
 * item size and aligns every base pointer (16 for every preset).
 *
 * The device cannot report bad indices: rows whose slot (or step) is out of range are skipped
 * rather than written out of bounds; the host reference rejects them with an error instead.
 */
#include "cuda_common.cuh"

enum { OP_COPY = 0, OP_ACCEPT = 1, OP_ZERO = 2 };
enum { THREADS = LS_STATE_THREADS };

/* Everything the kernel needs, by value (about 400 bytes of kernel parameters). */
struct state_args {
    int32_t nb;                        /* buffers enumerated (accept: only those with spec) */
    int32_t layers, slots, spec_tokens, count;
    const int32_t *src, *dst, *step;
    char *main[LS_MAX_BUFFERS];
    const char *spec[LS_MAX_BUFFERS];
    int64_t item_vecs[LS_MAX_BUFFERS]; /* item size in vectors */
    int64_t cpi[LS_MAX_BUFFERS];       /* chunks per item */
    int64_t base[LS_MAX_BUFFERS + 1];  /* first chunk of each buffer; base[nb] = total */
};

/*
 * Grid-stride over chunks. The chunk -> (buffer, layer, row, piece) decode is uniform across
 * the block (a few integer ops per 16 KB moved). Zero reads nothing but the dst index.
 */
template <typename V, int OP, int U>
__global__ void __launch_bounds__(THREADS) state_op_kernel(const state_args a)
{
    ls_pdl_wait();
    ls_pdl_trigger();
    const int64_t total = a.base[a.nb];
    for (int64_t ch = blockIdx.x; ch < total; ch += gridDim.x) {
        int b = 0;
        while (ch >= a.base[b + 1])
            b++;
        int64_t local = ch - a.base[b];
        int64_t item = local / a.cpi[b];
        int64_t piece = local - item * a.cpi[b];
        int l = (int)(item / a.count);
        int i = (int)(item - (int64_t)l * a.count);

        int32_t d = a.dst[i];
        if (d < 0 || d >= a.slots)
            continue;
        const int64_t iv = a.item_vecs[b];
        V *out = (V *)a.main[b] + ((int64_t)l * a.slots + d) * iv;
        const V *in = NULL;
        if (OP == OP_COPY) {
            int32_t s = a.src[i];
            if (s < 0 || s >= a.slots)
                continue;
            in = (const V *)a.main[b] + ((int64_t)l * a.slots + s) * iv;
        } else if (OP == OP_ACCEPT) {
            int32_t j = a.step[i];
            if (j < 0 || j >= a.spec_tokens)
                continue;
            in = (const V *)a.spec[b] + (((int64_t)l * a.slots + d) * a.spec_tokens + j) * iv;
        }

        const int64_t v0 = piece * (THREADS * U) + threadIdx.x;
        if (OP == OP_ZERO) {
            V z;
            memset(&z, 0, sizeof z);
#pragma unroll
            for (int u = 0; u < U; u++) {
                int64_t v = v0 + u * THREADS;
                if (v < iv)
                    out[v] = z;
            }
        } else {
            V tmp[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                int64_t v = v0 + u * THREADS;
                if (v < iv)
                    tmp[u] = in[v];
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                int64_t v = v0 + u * THREADS;
                if (v < iv)
                    out[v] = tmp[u];
            }
        }
    }
}

template <typename V, int U>
static int launch_unroll(const state_args &a, int op, const ls_plan &pl, cudaStream_t st)
{
    const dim3 grid(pl.grid_x);
    if (op == OP_COPY)
        LS_CUDA_LAUNCH((state_op_kernel<V, OP_COPY, U>), grid, pl.block, 0, st, pl.pdl, a);
    else if (op == OP_ACCEPT)
        LS_CUDA_LAUNCH((state_op_kernel<V, OP_ACCEPT, U>), grid, pl.block, 0, st, pl.pdl, a);
    else
        LS_CUDA_LAUNCH((state_op_kernel<V, OP_ZERO, U>), grid, pl.block, 0, st, pl.pdl, a);
    return 0;
}

template <typename V>
static int launch_vec(const state_args &a, int op, const ls_plan &pl, cudaStream_t st)
{
    switch (pl.unroll) {
    case 1: return launch_unroll<V, 1>(a, op, pl, st);
    case 2: return launch_unroll<V, 2>(a, op, pl, st);
    case 4: return launch_unroll<V, 4>(a, op, pl, st);
    case 8: return launch_unroll<V, 8>(a, op, pl, st);
    default: return ls_fail("cuda state op: unroll %d is not 1, 2, 4 or 8", pl.unroll);
    }
}

/* Validate, plan (vector width, grid, PDL), build the chunk table, launch once (nothing when no
 * work). */
static int state_launch(const ls_state_params *p, int op, const ls_tuning *t, ls_stream s)
{
    if (ls_state_params_check(p, op == OP_COPY, op == OP_ACCEPT))
        return -1;
    static const ls_op ops[] = {LS_OP_STATE_COPY, LS_OP_STATE_ACCEPT, LS_OP_STATE_ZERO};
    const ls_choose_dev dev = ls_cuda_choose_dev();
    ls_plan pl;
    if (ls_choose_state(p, ops[op], t, &dev, &pl))
        return -1;
    if (pl.kernel == LS_K_NONE)
        return 0;
    const int vb = pl.vec_bytes;
    state_args a;
    memset(&a, 0, sizeof a);
    a.layers = p->layers;
    a.slots = p->slots;
    a.spec_tokens = p->spec_tokens;
    a.count = p->count;
    a.src = p->src;
    a.dst = p->dst;
    a.step = p->step;
    int nb = 0;
    for (int b = 0; b < p->n_buffers; b++) {
        if (op == OP_ACCEPT && !p->buf[b].spec)
            continue; /* buffers without spec are skipped by accept */
        a.main[nb] = (char *)p->buf[b].main;
        a.spec[nb] = (const char *)p->buf[b].spec;
        a.item_vecs[nb] = p->buf[b].item_bytes / vb;
        a.cpi[nb] = ls_ceil_div(a.item_vecs[nb], (int64_t)THREADS * pl.unroll);
        a.base[nb + 1] = a.base[nb] + (int64_t)p->layers * p->count * a.cpi[nb];
        nb++;
    }
    a.nb = nb;
    for (int b = nb + 1; b <= LS_MAX_BUFFERS; b++)
        a.base[b] = a.base[nb];
    if (a.base[nb] != pl.chunks)
        return ls_fail("cuda state op: %lld chunks, the plan counted %lld", (long long)a.base[nb], (long long)pl.chunks);
    cudaStream_t st = ls_cuda_stream(s);
    switch (vb) {
    case 16: return launch_vec<uint4>(a, op, pl, st);
    case 8: return launch_vec<uint2>(a, op, pl, st);
    case 4: return launch_vec<uint32_t>(a, op, pl, st);
    case 2: return launch_vec<uint16_t>(a, op, pl, st);
    default: return launch_vec<uint8_t>(a, op, pl, st);
    }
}

extern "C" int ls_cuda_state_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return state_launch(p, OP_COPY, t, s);
}
extern "C" int ls_cuda_state_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return state_launch(p, OP_ACCEPT, t, s);
}
extern "C" int ls_cuda_state_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return state_launch(p, OP_ZERO, t, s);
}
