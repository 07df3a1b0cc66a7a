// sg_kda.cu — the CUDA half of the sglang adapters (KDA; sg_conv.cu: conv and the shared parts): SGLang's causal_conv1d.cuh and
// kda_packed_decode.cuh compiled as they ship in the pinned wheel (flags of SGLang's JIT on sm_90:
// -std=c++20 -O3 --expt-relaxed-constexpr -DSGL_CUDA_ARCH=900, sm_90a; --use_fast_math for the conv
// only, as load_jit does), called through their own launchers, plus three pieces of our own:
//  - TVMFFIEnvGetStream: the one tvm-ffi runtime function SGLang's LaunchKernel(grid, block, DLDevice)
//    calls; it returns the stream of the entry point being run (thread-local), so no libtvm_ffi;
//  - ls_sg_pack_qkv: packs linstate's q, k, v into the [B, 2*H*K + HV*V] row the KDA kernel reads;
//  - ls_sg_kda_pad_rows: the zero-state output of padding rows (the kernel writes 0 there).
#include <attention/kda_packed_decode.cuh>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>

#include "ls_sglang_cuda.h"

#include "sg_internal.h"

#define g_err (ls_sg_err())

namespace {


int fail(const char* fmt, const char* a = "") {
  snprintf(g_err, 1024, fmt, a);
  return -1;
}

int check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(g_err, 1024, "%s: launch: %s", what, cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

// One packed row per request: [q (H*K) | k (H*K) | v (HV*V)], 8 bf16 (16 bytes) per thread.
__global__ void ls_sg_pack_qkv(const uint4* __restrict__ q, const uint4* __restrict__ k, const uint4* __restrict__ v,
                               uint4* __restrict__ out, int64_t qk16, int64_t v16, int64_t rows) {
  const int64_t row16 = 2 * qk16 + v16;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * row16; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / row16, c = i % row16;
    uint4 val;
    if (c < qk16)
      val = q[r * qk16 + c];
    else if (c < 2 * qk16)
      val = k[r * qk16 + (c - qk16)];
    else
      val = v[r * v16 + (c - 2 * qk16)];
    out[i] = val;
  }
}

__device__ float ls_bf(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

// Padding rows of linstate's kda: the state starts from zero, so S = kn u^T with u = beta*v and
// o = u * (kn . qn). One block of 128 threads per (row, value head); real rows return at once.
__global__ void ls_sg_kda_pad_rows(const uint16_t* __restrict__ q, const uint16_t* __restrict__ k,
                                   const uint16_t* __restrict__ v, const uint16_t* __restrict__ b,
                                   const int32_t* __restrict__ idx, __nv_bfloat16* __restrict__ o, int H, int HV,
                                   float scale, int64_t sq, int64_t sk, int64_t sv) {
  const int n = blockIdx.x / HV, hv = blockIdx.x % HV, h = hv / (HV / H);
  if (idx[n] >= 0) return;
  const int t = threadIdx.x;  // 128 = K = V
  const float qv = ls_bf(q[(int64_t)n * sq + h * 128 + t]);  // token strides: packed rows too
  const float kv = ls_bf(k[(int64_t)n * sk + h * 128 + t]);
  float qq = qv * qv, kk = kv * kv, qk = qv * kv;
  for (int off = 16; off > 0; off >>= 1) {
    qq += __shfl_xor_sync(0xffffffffu, qq, off);
    kk += __shfl_xor_sync(0xffffffffu, kk, off);
    qk += __shfl_xor_sync(0xffffffffu, qk, off);
  }
  __shared__ float red[3][4];
  if ((t & 31) == 0) {
    red[0][t >> 5] = qq;
    red[1][t >> 5] = kk;
    red[2][t >> 5] = qk;
  }
  __syncthreads();
  qq = red[0][0] + red[0][1] + red[0][2] + red[0][3];
  kk = red[1][0] + red[1][1] + red[1][2] + red[1][3];
  qk = red[2][0] + red[2][1] + red[2][2] + red[2][3];
  const float dot = qk * scale / (sqrtf(qq + 1e-6f) * sqrtf(kk + 1e-6f));
  const float beta = 1.0f / (1.0f + expf(-ls_bf(b[(int64_t)n * HV + hv])));
  const float vv = ls_bf(v[(int64_t)n * sv + hv * 128 + t]);
  o[((int64_t)n * HV + hv) * 128 + t] = __float2bfloat16(beta * vv * dot);
}

// The packed-row scratch: one per device, grown (cudaMalloc) outside stream capture only.
struct Scratch {
  void* p = nullptr;
  size_t bytes = 0;
};
std::mutex g_scratch_mu;
Scratch g_scratch[64];

int scratch_get(int64_t need, cudaStream_t s, void** out) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return fail("sglang kda: cudaGetDevice failed");
  std::lock_guard<std::mutex> lock(g_scratch_mu);
  Scratch& sc = g_scratch[dev];
  if ((size_t)need > sc.bytes) {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone)
      return fail("sglang kda: the packed q|k|v scratch must grow, which cannot happen while the stream is "
                  "captured into a graph: run the op once outside capture with this batch first");
    // At least 256 rows of the largest preset (Kimi-Linear tp1: 24 KiB a row) to avoid regrowth.
    size_t want = (size_t)need > (size_t)(6 << 20) ? (size_t)need : (size_t)(6 << 20);
    void* p = nullptr;
    if (cudaMalloc(&p, want) != cudaSuccess) {
      cudaGetLastError();
      return fail("sglang kda: cudaMalloc of the packed q|k|v scratch failed");
    }
    if (sc.p) cudaFree(sc.p);
    sc.p = p;
    sc.bytes = want;
  }
  *out = sc.p;
  return 0;
}

}  // namespace


extern "C" int ls_sglang_cuda_kda_decode(const ls_delta_params* p, void* stream) {
  g_err[0] = 0;
  ls_sg_kda_plan pl;
  if (ls_sg_kda_map(p, &pl, 1, g_err, 1024) != 0) return -1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (((uintptr_t)pl.q | (uintptr_t)pl.k | (uintptr_t)pl.v | (uintptr_t)pl.state) & 15u)
    return fail("sglang kda: q, k, v and state must be 16-byte aligned (vector loads)");
  // q, k, v already one packed row per request (the token strides say so, as the bench lays them
  // out for impls with LS_IMPL_QKV_STRIDES): the kernel reads them in place, as in SGLang.
  // Otherwise they are packed into the scratch first (one extra launch).
  const int64_t hk = (int64_t)pl.H * 128;
  const bool packed = p->q_stride_tok == pl.qkv_row && p->k_stride_tok == pl.qkv_row &&
                      p->v_stride_tok == pl.qkv_row && p->k == p->q + hk && p->v == p->q + 2 * hk;
  void* mixed = const_cast<uint16_t*>(p->q);
  const bool natural = (!p->q_stride_tok || p->q_stride_tok == hk) && (!p->k_stride_tok || p->k_stride_tok == hk) &&
                       (!p->v_stride_tok || p->v_stride_tok == (int64_t)pl.HV * 128);
  if (!packed && !natural)
    return fail("sglang kda: q/k/v token strides: contiguous or one packed row per request only");
  if (!packed) {
    if (scratch_get(pl.scratch_bytes, s, &mixed) != 0) return -1;
    const int64_t qk16 = (int64_t)pl.H * 128 / 8, v16 = (int64_t)pl.HV * 128 / 8;
    const int64_t total16 = (int64_t)pl.batch * (2 * qk16 + v16);
    const int threads = 256;
    const int blocks = (int)((total16 + threads - 1) / threads < 4096 ? (total16 + threads - 1) / threads : 4096);
    ls_sg_pack_qkv<<<blocks, threads, 0, s>>>(reinterpret_cast<const uint4*>(pl.q), reinterpret_cast<const uint4*>(pl.k),
                                              reinterpret_cast<const uint4*>(pl.v), static_cast<uint4*>(mixed), qk16,
                                              v16, pl.batch);
    if (check_launch("sglang kda: pack q|k|v") != 0) return -1;
  }

  sglang::KdaPackedDecodeParams kp{};
  kp.mixed_qkv = static_cast<const sglang::bf16_t*>(mixed);
  kp.a = reinterpret_cast<const sglang::bf16_t*>(pl.a);
  kp.b = reinterpret_cast<const sglang::bf16_t*>(pl.b);
  kp.A_log = pl.A_log;
  kp.dt_bias = pl.dt_bias;
  kp.o = reinterpret_cast<sglang::bf16_t*>(pl.o);
  kp.state = pl.state;
  kp.indices = pl.indices;
  kp.stride_mixed = pl.qkv_row;
  kp.stride_a = pl.stride_a;
  kp.stride_b = pl.stride_b;
  kp.stride_state = pl.stride_state;
  kp.H = (uint32_t)pl.H;
  kp.HV = (uint32_t)pl.HV;
  kp.scale = pl.scale;
  kp.lower_bound = 0.0f;
  kp.use_lower_bound = 0;
  try {
    // KdaPackedDecodeKernel<8, is_arch_support_pdl() = true on sm_90>::run's launch, minus its
    // TensorView checks (ls_sg_kda_map did them).
    sglang::host::LaunchKernel(pl.blocks, pl.threads, s).enable_pdl(true)(sglang::kda_packed_decode_kernel<8, true>, kp);
  } catch (const std::exception& e) {
    return fail("sglang kda: %s", e.what());
  }
  if (check_launch("sglang kda") != 0) return -1;
  ls_sg_kda_pad_rows<<<pl.blocks, 128, 0, s>>>(pl.q, pl.k, pl.v, pl.b, pl.indices,
                                               reinterpret_cast<__nv_bfloat16*>(pl.o), pl.H, pl.HV, pl.scale,
                                               p->q_stride_tok ? p->q_stride_tok : hk,
                                               p->k_stride_tok ? p->k_stride_tok : hk,
                                               p->v_stride_tok ? p->v_stride_tok : (int64_t)pl.HV * 128);
  return check_launch("sglang kda: padding rows");
}
