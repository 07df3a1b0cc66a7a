/*
 * cuda_common.cuh — device helpers shared by every .cu file of kernels/cuda (private to that folder).
 *
 *  - bf16 <-> fp32 conversion (round to nearest even, like ls_f32_to_bf16 on the host);
 *  - a dtype-overloaded state load/store: ls_ld_state(const float* | const __nv_bfloat16*, i) -> float
 *    and ls_st_state(float* | __nv_bfloat16*, i, float), so one kernel template serves both state dtypes;
 *  - 16-byte vector load/store (plain, read-only path, streaming) and bf16x8 <-> float[8] (un)packing;
 *  - softplus / sigmoid / silu in fp32 with the SPEC's conventions (softplus threshold 20);
 *  - ls_ceil_div, ls_cuda_stream (ls_stream -> cudaStream_t), ls_cuda_sm_count (cached per device);
 *  - LS_CUDA_LAUNCH: launch + LS_CUDA_CHECK_LAUNCH in one statement;
 *  - ls_knob_read: a tuning knob (environment variable naming a kernel variant).
 *
 * Everything here is static inline; include it from .cu files only.
 */
#ifndef LS_CUDA_COMMON_CUH
#define LS_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ls_cuda.h"

/* ------------------------------------------------------------------ host-side helpers */

static inline __host__ __device__ int64_t ls_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline cudaStream_t ls_cuda_stream(ls_stream s) { return (cudaStream_t)s; }

/* Number of SMs of the current device (cached per device; 132 on an H200). Defined in
 * backend_cuda.cu. Returns a positive value even on error (falls back to 1). */
extern "C" int ls_cuda_sm_count(void);

/* Launch a __global__ function and check the launch, returning -1 with the error set on failure.
 * Usage (inside a function returning int): LS_CUDA_LAUNCH(kern, grid, block, smem, stream, args...); */
#define LS_CUDA_LAUNCH(kernel, grid, block, smem, stream, ...)                                   \
    do {                                                                                       \
        kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__);                            \
        LS_CUDA_CHECK_LAUNCH(#kernel);                                                         \
    } while (0)

/*
 * A tuning knob: environment variable `env` matched against names[0..n-1], names[0] being the
 * default (an unset or empty variable selects it too). v = the index, or -1 for a value that is
 * not in the list; raw = the value as read (cut to 31 characters), for the launcher's error
 * message. Callers read it ONCE per process and keep the result (a function-local static in an
 * inline function: one copy per program, thread-safe initialisation), never per launch.
 */
struct ls_knob {
    int v;
    char raw[32];
};

static inline ls_knob ls_knob_read(const char *env, const char *const *names, int n)
{
    ls_knob k;
    const char *s = getenv(env);
    k.v = (!s || !*s) ? 0 : -1;
    k.raw[0] = 0;
    if (s) {
        strncpy(k.raw, s, sizeof k.raw - 1);
        k.raw[sizeof k.raw - 1] = 0;
    }
    for (int i = 0; s && *s && i < n; i++)
        if (!strcmp(s, names[i]))
            k.v = i;
    return k;
}

/* True when p is 16-byte aligned (host or device). */
static inline __host__ __device__ bool ls_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

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
 * kernel never writes; _cs: streaming (evict-first) for data touched once. */
static __device__ __forceinline__ uint4 ls_ld16(const void *p) { return *(const uint4 *)p; }
static __device__ __forceinline__ uint4 ls_ld16_ro(const void *p) { return __ldg((const uint4 *)p); }
static __device__ __forceinline__ uint4 ls_ld16_cs(const void *p) { return __ldcs((const uint4 *)p); }
static __device__ __forceinline__ void ls_st16(void *p, uint4 v) { *(uint4 *)p = v; }
static __device__ __forceinline__ void ls_st16_cs(void *p, uint4 v) { __stcs((uint4 *)p, v); }

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

/* softplus(x) = log1p(exp(x)) for x <= 20, else x (SPEC §2.2 threshold). */
static __device__ __forceinline__ float ls_softplus(float x) { return x <= 20.0f ? log1pf(__expf(x)) : x; }
static __device__ __forceinline__ float ls_sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
static __device__ __forceinline__ float ls_silu(float x) { return x / (1.0f + __expf(-x)); }

#endif /* LS_CUDA_COMMON_CUH */
