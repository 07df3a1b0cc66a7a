/*
 * ls_sglang_cuda.h — SGLang's JIT CUDA kernels as C entry points (static library
 * ls_peer_sglang_cuda; docs/peers.md, "sglang CUDA kernels"):
 *   causal conv1d update  sglang/kernels/jit/csrc/mamba/causal_conv1d.cuh  (causal_conv1d_update_cuda)
 *   KDA packed decode     sglang/kernels/jit/csrc/attention/kda_packed_decode.cuh (kda_packed_decode_kernel)
 * compiled from the pinned sglang wheel. The sglang impl links the library and dispatches to these
 * where SGLang itself takes its CUDA path (ls_sglang_cuda_kda_covered); the standalone impl
 * "sglang_cuda" (libls_impl_sglang_cuda.so) exposes them as they are.
 *
 * Each entry takes linstate's params and stream, presents linstate's contract (docs/ops.md) or
 * refuses the case: returns 0, or -1 with ls_sglang_cuda_last_error() naming why.
 */
#ifndef LS_SGLANG_CUDA_H
#define LS_SGLANG_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* conv_update: bf16 weight, bias and state; decode/T>=1 without inter, state always advanced. */
int ls_sglang_cuda_conv_update(const ls_conv_params *p, void *stream);
/* kda, T = 1: K = V = 128, fp32 state, LS_STATE_VK ([slot, HV, V, K]), state always written. */
int ls_sglang_cuda_kda_decode(const ls_delta_params *p, void *stream);
/* 1 when SGLang 0.5.23 itself would take its CUDA KDA path for these params (its covered():
 * B >= 8, K = V = 128, fp32 state, HV % H == 0, T = 1), else 0. */
int ls_sglang_cuda_kda_covered(const ls_delta_params *p);
/* This thread's reason for the last failed entry ("" when none). */
const char *ls_sglang_cuda_last_error(void);

/* ------------------------------------------------------------- host half (sg_map.c) */

/* SGLang's MambaConvParams fields the decode kernel reads (our own struct; strides uint32 as there). */
typedef struct ls_sg_conv_plan {
    int32_t batch, dim, seqlen, width, silu;
    uint32_t x_batch_stride, x_c_stride, x_l_stride;
    uint32_t weight_c_stride, weight_width_stride;
    uint32_t out_batch_stride, out_c_stride, out_l_stride;
    int32_t conv_state_len;
    uint32_t conv_state_batch_stride, conv_state_c_stride, conv_state_l_stride;
    void *x, *weight, *bias, *out, *conv_state;
    const int32_t *conv_state_indices;
    uint32_t grid_x, grid_y, threads; /* causal_conv1d_update_launch: (batch, ceil(dim/64)) x 64 */
} ls_sg_conv_plan;

typedef struct ls_sg_kda_plan {
    int32_t batch, H, HV;
    int64_t qkv_row;          /* 2*H*K + HV*V: one packed mixed_qkv row (the kernel's input) */
    int64_t scratch_bytes;    /* batch * qkv_row * 2 */
    int64_t stride_a, stride_b, stride_state;
    float scale;
    uint32_t blocks, threads; /* kda_packed_decode: B*HV blocks of 8 warps */
    const uint16_t *q, *k, *v, *a, *b;
    const float *A_log, *dt_bias;
    uint16_t *o;
    float *state;
    const int32_t *indices;
} ls_sg_kda_plan;

/* Checks and maps; 0, or -1 with one line in err. need_ptrs = 0: shape only (explain). */
int ls_sg_conv_map(const ls_conv_params *p, ls_sg_conv_plan *out, int need_ptrs, char *err, size_t cap);
int ls_sg_kda_map(const ls_delta_params *p, ls_sg_kda_plan *out, int need_ptrs, char *err, size_t cap);
/* SGLang's KDA CUDA-path rule (kda_packed_decode.covered, _MIN_BATCH = 8). */
int ls_sg_kda_sglang_covered(const ls_delta_params *p);
#define LS_SG_KDA_MIN_BATCH 8

#ifdef __cplusplus
}
#endif
#endif
