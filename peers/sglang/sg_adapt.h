/* sg_adapt.h — the sglang peer's adapters: which compiled SGLang kernel an ls_delta_params call
 * maps to (kernel, constexpr key, grid) and its arguments by name (tk_call). Host code only. */
#ifndef LS_SG_ADAPT_H
#define LS_SG_ADAPT_H

#include <stddef.h>

#include "ls_kernels.h"
#include "tk.h"

#define SG_PACKED_KERNEL "fused_recurrent_gated_delta_rule_packed_decode_kernel"
#define SG_KDA_PACKED_KERNEL "fused_recurrent_kda_packed_decode_kernel"
#define SG_GATING_KERNEL "fused_sigmoid_gating_delta_rule_update_kernel"
/* What peers/sglang/kernels.py compiles the preset kernels for (the "was not compiled" errors). */
#define SG_BUILT_PRESETS "peers/sglang/kernels.py lists the preset shapes at tp 1/2/4/8"
#define SG_CONV_KERNEL "_causal_conv1d_update_kernel"
#define SG_SSU_KERNEL "_selective_scan_update_kernel"
#define SG_KDA_CONV_VERIFY_KERNEL "fused_kda_conv_gating_verify_kernel"
#define SG_KDA_CONV_VERIFY_BV 4 /* KDA_VERIFY_BLOCK_V on CUDA */
#define SG_CONV_BLOCK_N 256 /* causal_conv1d_update's BLOCK_N */

/* gdn.decode knob: auto = SGLang's packed decode kernel when q, k, v are one mixed_qkv row,
 * else the sigmoid-gating kernel (SGLang's unpacked decode path); gating = always the latter.
 * KDA decode takes its packed kernel whenever the rows are packed (no knob). */
enum { SG_DECODE_AUTO = 0, SG_DECODE_GATING = 1 };

typedef struct sg_plan {
    const char *kernel;
    char key[128];
    unsigned grid[3];
    int packed;
    /* gating kernel: SGLang's query_start_loc, int32 [B + 1] = 0, T, 2T, ... on the device (the
     * caller sets it between plan and args: sg_qsl.c; host tests give any aligned address) */
    const void *cu_seqlens;
} sg_plan;

/* Per-token strides (elements) of q, k, v: the ls_delta_params fields when this ls_kernels.h
 * has them (LS_DELTA_HAS_QKV_STRIDES), else contiguous [B, T, H, K] / [B, T, HV, V]. */
void sg_qkv_strides(const ls_delta_params *p, long long *sq, long long *sk, long long *sv);
/* 1 when q, k, v are the q | k | v parts of one [B*T, 2HK + HV*V] mixed_qkv row. */
int sg_is_packed(const ls_delta_params *p);

/* The plan of one gdn (kda = 0) or kda (kda = 1) call; 0 or -1 with err. */
int sg_delta_plan(const ls_delta_params *p, int kda, int decode_knob, sg_plan *out, char *err, size_t cap);
/* The call's arguments by name, for variant v of the plan. 0 or -1 with err. */
int sg_delta_args(const ls_delta_params *p, int kda, const sg_plan *pl, const tk_variant *v, tk_call *c,
                  char *err, size_t cap);

/* conv_update: SGLang's Triton causal conv1d update. Every stride, the channel count and T are
 * constexprs of the kernel, so the plan checks the call's views against the layouts compiled
 * (peers/sglang/kernels.py): x/y [B, T, C] contiguous, state [slot, C, W-1] channel-major ("CM":
 * stride_c W-1, stride_w 1) or window-major ("WM": stride_c 1, stride_w C), slot pitch C*(W-1),
 * inter (T > 1) [slot, T, C, W-1] in the state's orientation with slot pitch T*C*(W-1). -1 with
 * err: a call the kernel cannot run as built (the impl answers LS_OP_UNSUPPORTED). */
int sg_conv_plan(const ls_conv_params *p, sg_plan *out, char *err, size_t cap);
int sg_conv_args(const ls_conv_params *p, const sg_plan *pl, const tk_variant *v, tk_call *c, char *err,
                 size_t cap);

/* ssu: SGLang's Triton selective_state_update (tied path, dt_softplus, D, dt_bias, optional z).
 * Compiled modes: "dec" (disable_state_update 0, no inter; any T) and "ver"
 * (disable_state_update 1, inter given: cache_steps = inter_stride_slot / (nh*hd*ds)). */
int sg_ssu_block_m(int dstate, int *num_warps);
int sg_ssu_plan(const ls_ssu_params *p, sg_plan *out, char *err, size_t cap);
int sg_ssu_args(const ls_ssu_params *p, const sg_plan *pl, const tk_variant *v, tk_call *c, char *err,
                size_t cap);

/* conv_delta: SGLang's fused KDA conv + recurrence chain-verify kernel. It runs KDA verify only:
 * kda 1, T in 3..8 (the wrapper asserts T >= W - 1; 8 compiled), W 4 with SiLU, fp32 weights, no
 * bias, bf16 conv state window-major (channel stride 1) with windows given in the same
 * orientation (window channel stride 1), recurrent state vk with slot pitch HV*K*V and steps
 * given (cache_steps = delta.inter_stride_slot / (HV*K*V) >= T), both disable_state_update = 1
 * (the kernel writes neither state), x rows [B*T, C] with channel stride 1. -1 with err: a call it
 * cannot run as built (the impl answers LS_OP_UNSUPPORTED). */
int sg_conv_delta_plan(const ls_conv_delta_params *p, sg_plan *out, char *err, size_t cap);
int sg_conv_delta_args(const ls_conv_delta_params *p, const sg_plan *pl, const tk_variant *v, tk_call *c,
                       char *err, size_t cap);

#endif
