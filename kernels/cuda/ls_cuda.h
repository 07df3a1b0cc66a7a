/*
 * ls_cuda.h — private header of kernels/cuda: the extern "C" launchers behind the "linstate"
 * impl table (impl_linstate.cu) and the checking macros every .cu file uses. Not part of the
 * public API (ls_kernels.h). The knobs (LS_KNOB_*) and the kernel choice are in choose.h.
 */
#ifndef LS_CUDA_H
#define LS_CUDA_H

#include "ls_kernels.h"
#include "choose.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launchers: validate params (ls_*_params_check), plan (choose.h) with the tuning t (NULL = every
 * knob at its default), launch what the plan says on stream s, check the launch. */
int ls_cuda_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_state_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_state_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_state_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s);
int ls_cuda_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s);
/* conv_delta's launch on a device of sm_count SMs as one line ("conv_delta_gdn grid=(8,8)
 * cluster=8 block=64 smem=... pdl"; conv_delta.variant=tiles: "conv_delta_tiles_kda ..."). */
int ls_cuda_conv_delta_describe(const ls_conv_delta_params *p, const ls_tuning *t, int sm_count, char *buf,
                                size_t cap);

/* Resident CTAs per SM of the SSU kernel a plan names, for these params' state dtype and token
 * count (mamba2_ssu.cu; an occupancy query, cached). 0 when unknown. */
int ls_cuda_ssu_resident(const ls_ssu_params *p, const ls_plan *plan);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>
/* Any CUDA runtime call: on failure record "file:line: call: error string" and return -1. */
#define LS_CUDA_TRY(call)                                                                      \
    do {                                                                                       \
        cudaError_t ls_e_ = (call);                                                            \
        if (ls_e_ != cudaSuccess)                                                              \
            return ls_fail("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(ls_e_)); \
    } while (0)
/* After every kernel launch. */
#define LS_CUDA_CHECK_LAUNCH(name) LS_CUDA_TRY(cudaGetLastError())
#endif

#endif /* LS_CUDA_H */
