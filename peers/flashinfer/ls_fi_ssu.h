/*
 * ls_fi_ssu.h — the flashinfer peer's adapter for FlashInfer's Mamba2 selective state update
 * (flashinfer-python, include/flashinfer/mamba/). docs/peers.md, section "flashinfer".
 *
 * Two halves:
 *  - host C (ls_fi_ssu_map.c): checks an ls_ssu_params against what FlashInfer's kernels take and
 *    maps it to a plan (ls_fi_ssu_plan: FlashInfer's params fields, our own struct); predicts the
 *    algorithm and grid FlashInfer's dispatch picks. No CUDA needed: unit-tested on the host.
 *  - CUDA (fi_ssu_inst.cu.in, one translation unit per compiled (head_dim, dstate, tokens)): copies
 *    a plan into FlashInfer's SelectiveStateUpdateParams / SelectiveStateMTPParams and calls
 *    invokeSelectiveStateUpdate (T = 1) or invokeSelectiveStateUpdateMTP (T > 1).
 */
#ifndef LS_FI_SSU_H
#define LS_FI_SSU_H

#include <stddef.h>
#include <stdint.h>

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FlashInfer's SSUAlgorithm values (selective_state_update.cuh), also the ssu.algorithm knob. */
enum { LS_FI_ALGO_AUTO = 0, LS_FI_ALGO_SIMPLE = 1, LS_FI_ALGO_VERTICAL = 2, LS_FI_ALGO_HORIZONTAL = 3 };

typedef struct ls_fi_ssu_plan {
    int32_t batch, tokens, nheads, dim, dstate, ngroups;
    int32_t state_bf16;          /* 0: fp32 state (state_t float), 1: bf16 state */
    int32_t mtp;                 /* 0: single-token entry (T = 1), 1: multi-token entry */
    int32_t update_state;        /* !disable_state_update */
    int32_t algorithm;           /* LS_FI_ALGO_* passed to FlashInfer */
    uint32_t state_cache_size;   /* slots of the state view (TMA descriptor bound) */
    uint64_t cache_steps;        /* MTP with intermediates: steps per slot of `inter` */
    int64_t x_stride_batch, x_stride_mtp;
    int64_t dt_stride_batch, dt_stride_mtp;
    int64_t B_stride_batch, B_stride_mtp;
    int64_t C_stride_batch, C_stride_mtp;
    int64_t out_stride_batch, out_stride_mtp;
    int64_t z_stride_batch, z_stride_mtp;
    int64_t state_stride_batch;
    int64_t inter_stride_batch;
    void *state, *x, *dt, *dt_bias, *A, *B, *C, *D, *z, *out;
    void *state_batch_indices;          /* int32 [B]; -1 = padding (FlashInfer's pad_slot_id) */
    void *intermediate_states;          /* NULL or linstate's inter */
    void *intermediate_state_indices;   /* = state_batch_indices when intermediate_states is set */
} ls_fi_ssu_plan;

/* The (head_dim, dstate, tokens) combinations this build compiled (FlashInfer fixes them at compile
 * time); filled by the CUDA side's generated table, read by ls_fi_ssu_map. */
typedef struct ls_fi_ssu_inst {
    int32_t dim, dstate, tokens;
} ls_fi_ssu_inst;

/*
 * Checks p (and the tuning's algorithm) and fills *out. insts/n_insts: the compiled combinations
 * (NULL/0: not checked). Returns 0, or -1 with one line in err naming the field or the FlashInfer
 * limitation that refuses the case.
 */
int ls_fi_ssu_map(const ls_ssu_params *p, int algorithm, const ls_fi_ssu_inst *insts, int n_insts,
                  ls_fi_ssu_plan *out, char *err, size_t cap);
/* The same without requiring the pointers (explain: params may carry NULL pointers). */
int ls_fi_ssu_map_shape(const ls_ssu_params *p, int algorithm, const ls_fi_ssu_inst *insts, int n_insts,
                        ls_fi_ssu_plan *out, char *err, size_t cap);

/* What FlashInfer's dispatch launches for a plan on a device with sm_count SMs (sm_90 build):
 * "flashinfer ssu stp simple-tiled grid=(B,nh,dim/4) block=(32,4) ...". Returns buf. */
const char *ls_fi_ssu_explain(const ls_fi_ssu_plan *pl, int sm_count, char *buf, size_t cap);

/* The algorithm the auto rule resolves to (LS_FI_ALGO_SIMPLE/VERTICAL) on sm_90. */
int ls_fi_ssu_auto_algorithm(const ls_fi_ssu_plan *pl, int sm_count);

/* CUDA side: launches the plan on stream (cudaStream_t); 0, or -1 with err set. */
int ls_fi_ssu_launch(const ls_fi_ssu_plan *pl, void *stream, char *err, size_t cap);
/* The compiled combinations (CUDA side). */
const ls_fi_ssu_inst *ls_fi_ssu_instances(int *n);

#ifdef __cplusplus
}
#endif
#endif
