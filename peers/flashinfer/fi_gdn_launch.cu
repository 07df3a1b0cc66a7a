// fi_gdn_launch.cu — CUDA half of the flashinfer GDN op (ls_fi_gdn.h): the verify index rows
// (our kernel: FlashInfer's own callers build them in their metadata, once per step) and the
// launch of the AOT variant on the caller's stream. No sync; the row scratch grows outside
// stream capture only.
#include <cuda_runtime.h>

#include <cstdio>
#include <mutex>

#include "ls_fi_gdn.h"

namespace {

__global__ void fi_gdn_rows_kernel(const int32_t* slot, int B, int T, ls_fi_gdn_rows r, int32_t* idx,
                                   int32_t* out_idx, int32_t* ssm) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B * (T + 1)) return;
  const int row = i / (T + 1), c = i % (T + 1);
  const int64_t s = slot[row];
  if (c == T) {
    idx[row] = s < 0 ? -1 : (int32_t)(r.state_off + s * r.state_mul);
    out_idx[row] = -1;  // no final writeback: linstate's verify keeps state[s]
  } else {
    ssm[row * T + c] = s < 0 ? -1 : (int32_t)(r.inter_off + s * r.inter_mul + c);
  }
}

struct Scratch {
  int32_t* p = nullptr;
  size_t n = 0;
};
std::mutex g_mu;
Scratch g_scratch[64];

int fail(char* err, size_t cap, const char* what, cudaError_t e) {
  snprintf(err, cap, "flashinfer gdn: %s: %s", what, cudaGetErrorString(e));
  return -1;
}

}  // namespace

extern "C" int ls_fi_gdn_launch(ls_fi_gdn_plan* pl, void* stream, char* err, size_t cap) {
  cudaStream_t s = (cudaStream_t)stream;
  ls_fi_gdn_args x = pl->args;
  const int B = (int)x.B, T = (int)x.T;
  if (T > 1) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return fail(err, cap, "cudaGetDevice", e);
    const size_t need = (size_t)B * (T + 2);
    int32_t* rows = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      Scratch& sc = g_scratch[dev & 63];
      if (sc.n < need) {
        cudaStreamCaptureStatus st;
        if (cudaStreamIsCapturing(s, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone) {
          snprintf(err, cap, "flashinfer gdn: the index scratch must grow, which cannot happen while the "
                             "stream is captured (run the case once eagerly first)");
          return -1;
        }
        int32_t* p = nullptr;
        // 16-byte aligned pieces: idx [B], out_idx [B], ssm [B*T] (each rounded up to 4 ints)
        const size_t want = 2 * need + 64;
        if ((e = cudaMalloc(&p, want * sizeof(int32_t))) != cudaSuccess) return fail(err, cap, "cudaMalloc", e);
        if (sc.p) cudaFree(sc.p);
        sc.p = p;
        sc.n = want;
      }
      rows = sc.p;
    }
    const size_t b4 = ((size_t)B + 3) / 4 * 4;
    int32_t *idx = rows, *out_idx = rows + b4, *ssm = rows + 2 * b4;
    const int n = B * (T + 1);
    fi_gdn_rows_kernel<<<(n + 255) / 256, 256, 0, s>>>(pl->slot_idx, B, T, pl->rows, idx, out_idx, ssm);
    if ((e = cudaGetLastError()) != cudaSuccess) return fail(err, cap, "index rows launch", e);
    x.idx = idx;
    x.out_idx = out_idx;
    x.ssm_idx = ssm;
  }
  const int rc = pl->variant->run(&x, stream);
  if (rc != 0) {
    cudaError_t e = cudaGetLastError();
    snprintf(err, cap, "flashinfer gdn: variant %s returned %d (%s)", pl->variant->name, rc, cudaGetErrorString(e));
    return -1;
  }
  return 0;
}
