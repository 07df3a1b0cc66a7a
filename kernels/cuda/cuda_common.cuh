/*
 * cuda_common.cuh — device helpers shared by every .cu file of kernels/cuda (private to that folder).
 *
 *  - bf16 <-> fp32 conversion (round to nearest even, like ls_f32_to_bf16 on the host);
 *  - a dtype-overloaded state load/store: ls_ld_state(const float* | const __nv_bfloat16*, i) -> float
 *    and ls_st_state(float* | __nv_bfloat16*, i, float), so one kernel template serves both state dtypes;
 *  - 16-byte vector load/store (plain, read-only path, streaming) and bf16x8 <-> float[8] (un)packing;
 *  - softplus / sigmoid / silu in fp32 with the conventions of docs/ops.md (softplus threshold 20);
 *  - ls_ceil_div, ls_cuda_stream (ls_stream -> cudaStream_t), ls_cuda_sm_count (cached per device);
 *  - programmatic dependent launch (ls_launch, ls_pdl_wait / ls_pdl_trigger) and LS_CUDA_LAUNCH:
 *    launch + LS_CUDA_CHECK_LAUNCH in one statement;
 *  - bulk asynchronous copies (TMA) into shared memory through an mbarrier;
 *  - the slot guess before the PDL wait (ls_slot_guess; its mode comes from the plan, choose.h);
 *  - ls_cuda_choose_dev: the device numbers the kernel choice (choose.h) takes.
 *
 * Everything here is static inline; include it from .cu files only.
 */
#ifndef LS_CUDA_COMMON_CUH
#define LS_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "ls_cuda.h"

/* ------------------------------------------------------------------ host-side helpers */

static inline __host__ __device__ int64_t ls_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline cudaStream_t ls_cuda_stream(ls_stream s) { return (cudaStream_t)s; }

/* Number of SMs of the current device (cached per device; 132 on an H200). Defined in
 * backend_cuda.cu. Returns a positive value even on error (falls back to 1). */
extern "C" int ls_cuda_sm_count(void);

/* The device numbers of the current device for the kernel choice (resident_per_sm left 0: the
 * launchers that need it query their kernel). */
static inline ls_choose_dev ls_cuda_choose_dev(void)
{
    ls_choose_dev d;
    d.sm_count = ls_cuda_sm_count();
    d.resident_per_sm = 0;
    return d;
}

/*
 * Programmatic dependent launch (PDL, sm_90). Every kernel of this folder is launched through
 * ls_launch with programmatic stream serialization allowed, so the next kernel of the stream can
 * be scheduled while this one still runs; its launch latency then overlaps our work. The
 * contract that keeps stream order intact: every kernel calls ls_pdl_wait() before its first
 * global memory access whose value it uses (it returns once the previous grid has completed
 * and its writes are visible; at once when there is none), and ls_pdl_trigger() (dependents
 * may be scheduled once every CTA of this grid has passed it: they wait in their own
 * ls_pdl_wait). Kernels trigger right after their wait (triggering before it was measured
 * slower for conv: dependents then hold SM slots early). The conv kernels do work before
 * their wait that needs no value from earlier kernels (an L2 prefetch, a guess of the slot
 * checked afterwards: conv1d_update.cu), so that work overlaps the previous kernel. The plan's
 * pdl flag (knob pdl=off clears it) launches without the attribute, for comparison; the wait
 * and trigger then return at once.
 */
static __device__ __forceinline__ void ls_pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
static __device__ __forceinline__ void ls_pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

/*
 * The slot guess read BEFORE the PDL wait (the conv and SSU kernels): the index of row r
 * through L2 (ld.cg, so no stale copy stays in L1 for the real read after the wait), -1 when it
 * is padding or not below `slots` (the view's slot count; 0 = not given: no guess), so even a
 * garbage value never names an address outside the state view. A kernel may prefetch its state
 * into L2 at the guess before the wait and load it right after the wait, beside the real index;
 * it keeps those values only when the real index equals the guess (the state itself is always
 * read after the wait, so a stale guess costs a reload, never a stale value). mode: an ls_spec
 * (choose.h; LS_SPEC_MISS makes every guess wrong, so tests run the reload path).
 */
static __device__ __forceinline__ int ls_slot_guess(const int32_t *slot_idx, int r, int slots, int mode)
{
    if (mode == LS_SPEC_OFF)
        return -1;
    int guess = __ldcg(slot_idx + r);
    if (mode == LS_SPEC_MISS && guess >= 0)
        guess = guess + 1 < slots ? guess + 1 : 0;
    return (unsigned)guess < (unsigned)slots ? guess : -1;
}

/* Launch with the PDL attribute when pdl is non-zero (the plan's flag). */
template <typename... KArgs, typename... Args>
static inline cudaError_t ls_launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t st,
                                    int pdl, Args &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = smem, cfg.stream = st;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr, cfg.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args &&>(args)...);
}

/* Launch a __global__ function (ls_launch) and check the launch, returning -1 with the error set
 * on failure. Usage (inside a function returning int): LS_CUDA_LAUNCH(kern, grid, block, smem,
 * stream, pdl, args...); a template kernel goes in parentheses. */
#define LS_CUDA_LAUNCH(kernel, grid, block, smem, stream, pdl, ...)                              \
    do {                                                                                       \
        LS_CUDA_TRY(ls_launch(kernel, (grid), (block), (smem), (stream), (pdl), __VA_ARGS__));  \
        LS_CUDA_CHECK_LAUNCH(#kernel);                                                         \
    } while (0)

/*
 * Bulk asynchronous copies (the TMA unit, sm_90) from global to shared memory, completing on an
 * mbarrier (transaction bytes). Addresses and sizes are multiples of 16 bytes; shared addresses
 * are 32-bit (cvta). The calling pattern:
 *   one thread: ls_mbar_init(bar, 1); ls_mbar_arrive_tx(bar, total); ls_bulk_load(...) x n;
 *   __syncthreads(); every reader: ls_mbar_wait(bar, 0).
 */
static __device__ __forceinline__ uint32_t ls_smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

static __device__ __forceinline__ void ls_mbar_init(uint64_t *bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(ls_smem_u32(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

static __device__ __forceinline__ void ls_mbar_arrive_tx(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(ls_smem_u32(bar)), "r"(bytes)
                 : "memory");
}

static __device__ __forceinline__ void ls_mbar_wait(uint64_t *bar, uint32_t parity)
{
    uint32_t done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(ls_smem_u32(bar)), "r"(parity)
                     : "memory");
}

static __device__ __forceinline__ void ls_bulk_load(void *smem, const void *gmem, uint32_t bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     ls_smem_u32(smem)),
                 "l"(gmem), "r"(bytes), "r"(ls_smem_u32(bar))
                 : "memory");
}

/* The cluster barrier in two halves (sm_90), for a thread that must only know its peers reached
 * a point: arrive relaxed (no fence: a release arrive waits until every earlier store of the CTA
 * is performed), do other work, wait later. Every thread of the cluster calls both, in this
 * order, at the same points (.aligned: whole warps; CUDA's __cluster_barrier_arrive_relaxed /
 * __cluster_barrier_wait emit the non-aligned forms, a different kernel from the one measured). */
static __device__ __forceinline__ void ls_cluster_arrive_relaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
static __device__ __forceinline__ void ls_cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }

/* Let a kernel ask for `bytes` of dynamic shared memory (the default cap is 48 KB) on the current
 * device. Returns the CUDA error. */
template <typename... KArgs>
static inline cudaError_t ls_allow_smem(void (*kernel)(KArgs...), size_t bytes)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    return e;
}

/* ------------------------------------------------------------------ bf16 <-> fp32 */

/* Exact widening of a raw bf16 (uint16 storage, as in the params structs). Device twins of the
 * host ls_bf16_to_f32 / ls_f32_to_bf16 in ls_kernels.h (different names: same signatures would clash). */
static __device__ __forceinline__ float ls_bf2f(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

/* Round to nearest even; NaN stays NaN (hardware cvt.rn.bf16.f32). */
static __device__ __forceinline__ uint16_t ls_f2bf(float f)
{
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

/* ------------------------------------------------------------------ state load/store by dtype */

static __device__ __forceinline__ float ls_ld_state(const float *p, int64_t i) { return p[i]; }
static __device__ __forceinline__ float ls_ld_state(const __nv_bfloat16 *p, int64_t i)
{
    return __bfloat162float(p[i]);
}
static __device__ __forceinline__ void ls_st_state(float *p, int64_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void ls_st_state(__nv_bfloat16 *p, int64_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}

/* Weight/bias element as fp32, dtype chosen by template (uint16_t = bf16 raw, float = fp32). */
static __device__ __forceinline__ float ls_ld_param(const uint16_t *p, int64_t i) { return ls_bf2f(p[i]); }
static __device__ __forceinline__ float ls_ld_param(const float *p, int64_t i) { return p[i]; }

/* ------------------------------------------------------------------ 16-byte vectors */

/* Caller guarantees 16-byte alignment. _ro: read-only (non-coherent) path — only for data the
 * kernel never writes. */
static __device__ __forceinline__ uint4 ls_ld16(const void *p) { return *(const uint4 *)p; }
/* A hint: pull the 128-byte line holding p into L2 (no register result, no value changed). */
static __device__ __forceinline__ void ls_prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
static __device__ __forceinline__ uint4 ls_ld16_ro(const void *p) { return __ldg((const uint4 *)p); }
static __device__ __forceinline__ void ls_st16(void *p, uint4 v) { *(uint4 *)p = v; }

/* 8 bf16 in a uint4 (element 0 in the low half of .x) <-> 8 floats. */
static __device__ __forceinline__ void ls_unpack_bf16x8(uint4 v, float f[8])
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[2 * i] = __uint_as_float(w[i] << 16);
        f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

static __device__ __forceinline__ uint32_t ls_pack_bf16x2(float lo, float hi)
{
    return (uint32_t)ls_f2bf(lo) | ((uint32_t)ls_f2bf(hi) << 16);
}

static __device__ __forceinline__ uint4 ls_pack_bf16x8(const float f[8])
{
    uint4 v;
    v.x = ls_pack_bf16x2(f[0], f[1]);
    v.y = ls_pack_bf16x2(f[2], f[3]);
    v.z = ls_pack_bf16x2(f[4], f[5]);
    v.w = ls_pack_bf16x2(f[6], f[7]);
    return v;
}

/* ------------------------------------------------------------------ activations (fp32) */

/* softplus(x) = log1p(exp(x)) for x <= 20, else x (the threshold of docs/ops.md). */
static __device__ __forceinline__ float ls_softplus(float x) { return x <= 20.0f ? log1pf(__expf(x)) : x; }
static __device__ __forceinline__ float ls_sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
static __device__ __forceinline__ float ls_silu(float x) { return x / (1.0f + __expf(-x)); }
/* SiLU for the conv output (bf16): x * 1/(1 + 2^(-x log2 e)) with the hardware
 * approximations (ex2.approx.ftz, rcp.approx.ftz: ~2 ulp of fp32, far below bf16 rounding), five
 * instructions instead of the ~20 of an IEEE division with its slow path. Limits: for x below
 * about -87 the true value (|silu| < 1e-36) comes out as -0 (the reciprocal flushes to zero);
 * x -> +inf gives x; NaN stays NaN. The SSU keeps ls_silu: its z gate is one per output, and
 * the inline assembly costs its fast decode kernels ~24 bytes of spill. */
static __device__ __forceinline__ float ls_silu_fast(float x)
{
    float e, r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x * -1.4426950408889634f));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
    return x * r;
}

#endif /* LS_CUDA_COMMON_CUH */
