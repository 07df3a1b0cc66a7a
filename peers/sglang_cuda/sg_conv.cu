// sg_conv.cu — the CUDA half of the sglang adapters (conv; sg_kda.cu: KDA): SGLang's causal_conv1d.cuh and
// kda_packed_decode.cuh compiled as they ship in the pinned wheel (flags of SGLang's JIT on sm_90:
// -std=c++20 -O3 --expt-relaxed-constexpr -DSGL_CUDA_ARCH=900, sm_90a; --use_fast_math for the conv
// only, as load_jit does), called through their own launchers, plus three pieces of our own:
//  - TVMFFIEnvGetStream: the one tvm-ffi runtime function SGLang's LaunchKernel(grid, block, DLDevice)
//    calls; it returns the stream of the entry point being run (thread-local), so no libtvm_ffi;
//  - ls_sg_pack_qkv: packs linstate's q, k, v into the [B, 2*H*K + HV*V] row the KDA kernel reads;
//  - ls_sg_kda_pad_rows: the zero-state output of padding rows (the kernel writes 0 there).
#include <mamba/causal_conv1d.cuh>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>

#include "ls_sglang_cuda.h"

#include "sg_internal.h"

static thread_local cudaStream_t g_stream = nullptr;
static thread_local char g_err[1024];
char* ls_sg_err() { return g_err; }

namespace {


int fail(const char* fmt, const char* a = "") {
  snprintf(g_err, sizeof g_err, fmt, a);
  return -1;
}

int check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(g_err, sizeof g_err, "%s: launch: %s", what, cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

}  // namespace

// tvm-ffi's C API function SGLang's LaunchKernel uses to find the stream (see the file comment).
extern "C" TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t, int32_t) { return g_stream; }

extern "C" const char* ls_sglang_cuda_last_error(void) { return g_err; }

extern "C" int ls_sglang_cuda_conv_update(const ls_conv_params* p, void* stream) {
  g_err[0] = 0;
  ls_sg_conv_plan pl;
  if (ls_sg_conv_map(p, &pl, 1, g_err, sizeof g_err) != 0) return -1;
  sglang::mamba_conv::MambaConvParams mp{};
  mp.batch = pl.batch;
  mp.dim = pl.dim;
  mp.seqlen = pl.seqlen;
  mp.width = pl.width;
  mp.pad_slot_id = -1;
  mp.silu_activation = pl.silu != 0;
  mp.x_ptr = pl.x;
  mp.weight_ptr = pl.weight;
  mp.bias_ptr = pl.bias;
  mp.out_ptr = pl.out;
  mp.x_batch_stride = pl.x_batch_stride;
  mp.x_c_stride = pl.x_c_stride;
  mp.x_l_stride = pl.x_l_stride;
  mp.weight_c_stride = pl.weight_c_stride;
  mp.weight_width_stride = pl.weight_width_stride;
  mp.out_batch_stride = pl.out_batch_stride;
  mp.out_c_stride = pl.out_c_stride;
  mp.out_l_stride = pl.out_l_stride;
  mp.conv_state_ptr = pl.conv_state;
  mp.conv_state_len = pl.conv_state_len;
  mp.conv_state_batch_stride = pl.conv_state_batch_stride;
  mp.conv_state_c_stride = pl.conv_state_c_stride;
  mp.conv_state_l_stride = pl.conv_state_l_stride;
  mp.cache_seqlens = nullptr;
  mp.conv_state_indices_ptr = pl.conv_state_indices;
  int dev = 0;
  cudaGetDevice(&dev);
  g_stream = static_cast<cudaStream_t>(stream);
  try {
    sglang::mamba_conv::causal_conv1d_update_cuda<sglang::bf16_t>(mp, DLDevice{kDLCUDA, dev});
  } catch (const std::exception& e) {
    g_stream = nullptr;
    return fail("sglang conv: %s", e.what());
  }
  g_stream = nullptr;
  return check_launch("sglang conv");
}

