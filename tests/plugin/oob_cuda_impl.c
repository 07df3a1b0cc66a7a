/*
 * oob_cuda_impl.c — test plugin "oob_cuda" (CUDA builds): a cuda-runtime impl whose only op,
 * conv_update, writes the 512 bytes right before the conv state view it is given (a
 * cudaMemsetAsync on its stream) and nothing else. Its rows must be fail_bounds, with the guard
 * zone in device memory seen after the verification gate (test_plugin_guard.py, label gpu).
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "ls_kernels.h"

#define OOB_BYTES 512

static _Thread_local char oob_err[160];

static const char *oob_last_error(void) { return oob_err; }

static int oob_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    oob_err[0] = 0;
    cudaError_t e = cudaMemsetAsync((char *)p->state - OOB_BYTES, 0x3f, OOB_BYTES, (cudaStream_t)s);
    if (e != cudaSuccess) {
        snprintf(oob_err, sizeof oob_err, "oob_cuda: cudaMemsetAsync: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

static const ls_impl oob_cuda_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "oob_cuda",
    .version = "oob_cuda 0.1 (test: writes before the conv state)",
    .runtime = "cuda",
    .conv_update = oob_conv_update,
    .last_error = oob_last_error,
};

__attribute__((visibility("default"))) const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &oob_cuda_impl : NULL;
}
