/*
 * sg_map.c — host half of the sglang CUDA adapters: linstate params -> the fields SGLang's kernels
 * read, with the cases they cannot run under linstate's contract refused by name.
 *
 * conv (causal_conv1d_update_kernel): one dtype for x, weight, bias, state and out (bf16 here);
 *   any (batch, channel, token) strides for x/out and any (slot, channel, window) strides for the
 *   state, so both pool orientations (channel-major, window-major) run as they are; strides and
 *   offsets are uint32 in the kernel, so every addressed element must lie below 2^32; the state is
 *   always advanced and there is no window output (SGLang verifies with its Triton conv): inter and
 *   disable_state_update = 1 are refused. Padding: rows whose slot is -1 are skipped (y untouched).
 * kda (kda_packed_decode_kernel): T = 1, K = V = 128, fp32 state in [slot, HV, V, K] (LS_STATE_VK),
 *   state always written (disable_state_update = 1 and inter refused). It reads q|k|v as one packed
 *   row [2*H*K + HV*V] (SGLang's conv output): the adapter packs linstate's q, k, v into a scratch
 *   row first. Padding rows (-1) get a zero output from the kernel; linstate's contract wants the
 *   zero-state output, which a small adapter kernel writes afterwards.
 */
#include "ls_sglang_cuda.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "peer_err.h"


#define U32_LIMIT 4294967295LL

int ls_sg_conv_map(const ls_conv_params *p, ls_sg_conv_plan *out, int need_ptrs, char *err, size_t cap)
{
    if (!p || !out)
        return peer_fail(err, cap, "sglang conv: NULL params");
    memset(out, 0, sizeof *out);
    if (p->batch < 1 || p->tokens < 1 || p->channels < 1)
        return peer_fail(err, cap, "sglang conv: batch, tokens, channels must be >= 1 (got %d, %d, %d)", p->batch, p->tokens,
                    p->channels);
    if (p->width < 2 || p->width > 4)
        return peer_fail(err, cap, "sglang conv: width %d outside 2..4", p->width);
    if (p->weight_dtype != LS_BF16)
        return peer_fail(err, cap, "sglang conv: %s weights: SGLang's CUDA conv takes one dtype for x, weight, bias and "
                    "state (bf16); fp32 weights (Kimi) are refused", ls_dtype_name(p->weight_dtype));
    if (p->state_dtype != LS_BF16)
        return peer_fail(err, cap, "sglang conv: %s conv state: SGLang's CUDA conv takes the state in the activation "
                    "dtype (bf16)", ls_dtype_name(p->state_dtype));
    if (p->inter)
        return peer_fail(err, cap, "sglang conv: inter (intermediate windows): SGLang's CUDA conv has none (SGLang "
                    "verifies with its Triton conv)");
    if (p->disable_state_update)
        return peer_fail(err, cap, "sglang conv: disable_state_update = 1: SGLang's CUDA conv always advances the state");
    if (need_ptrs && (!p->x || !p->y || !p->weight || !p->state || !p->slot_idx))
        return peer_fail(err, cap, "sglang conv: x, y, weight, state and slot_idx are required");
    if (p->x_stride_b < 0 || p->x_stride_t < 0 || p->x_stride_c < 0 || p->y_stride_b < 0 || p->y_stride_t < 0 ||
        p->y_stride_c < 0 || p->state_stride_slot < 0 || p->state_stride_c < 0 || p->state_stride_w < 0)
        return peer_fail(err, cap, "sglang conv: negative stride");
    const int64_t B = p->batch, T = p->tokens, C = p->channels, W1 = p->width - 1;
    /* Largest element offset each view addresses; the kernel computes them in uint32. */
    int64_t x_last = (B - 1) * p->x_stride_b + (T - 1) * p->x_stride_t + (C - 1) * p->x_stride_c;
    int64_t y_last = (B - 1) * p->y_stride_b + (T - 1) * p->y_stride_t + (C - 1) * p->y_stride_c;
    int64_t s_in = (C - 1) * p->state_stride_c + (W1 - 1) * p->state_stride_w;
    int64_t strides[] = {p->x_stride_b, p->x_stride_t, p->x_stride_c, p->y_stride_b, p->y_stride_t,
                         p->y_stride_c, p->state_stride_slot, p->state_stride_c, p->state_stride_w};
    for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++)
        if (strides[i] > U32_LIMIT)
            return peer_fail(err, cap, "sglang conv: stride %lld does not fit the kernel's uint32 strides", (long long)strides[i]);
    if (x_last > U32_LIMIT || y_last > U32_LIMIT)
        return peer_fail(err, cap, "sglang conv: x/y offsets up to %lld/%lld exceed the kernel's uint32 arithmetic",
                    (long long)x_last, (long long)y_last);
    if (p->slots > 0 && (int64_t)(p->slots - 1) * p->state_stride_slot + s_in > U32_LIMIT)
        return peer_fail(err, cap, "sglang conv: state offsets up to %lld exceed the kernel's uint32 arithmetic",
                    (long long)((int64_t)(p->slots - 1) * p->state_stride_slot + s_in));

    out->batch = p->batch;
    out->dim = p->channels;
    out->seqlen = p->tokens;
    out->width = p->width;
    out->silu = p->silu ? 1 : 0;
    out->x_batch_stride = (uint32_t)p->x_stride_b;
    out->x_c_stride = (uint32_t)p->x_stride_c;
    out->x_l_stride = (uint32_t)p->x_stride_t;
    out->weight_c_stride = (uint32_t)p->width; /* weight [C, W] contiguous */
    out->weight_width_stride = 1;
    out->out_batch_stride = (uint32_t)p->y_stride_b;
    out->out_c_stride = (uint32_t)p->y_stride_c;
    out->out_l_stride = (uint32_t)p->y_stride_t;
    out->conv_state_len = p->width - 1;
    out->conv_state_batch_stride = (uint32_t)p->state_stride_slot;
    out->conv_state_c_stride = (uint32_t)p->state_stride_c;
    out->conv_state_l_stride = (uint32_t)p->state_stride_w;
    out->x = (void *)p->x;
    out->weight = (void *)p->weight;
    out->bias = (void *)p->bias;
    out->out = p->y;
    out->conv_state = p->state;
    out->conv_state_indices = p->slot_idx;
    out->threads = 64;
    out->grid_x = (uint32_t)p->batch;
    out->grid_y = (uint32_t)((p->channels + 63) / 64);
    return 0;
}

int ls_sg_kda_map(const ls_delta_params *p, ls_sg_kda_plan *out, int need_ptrs, char *err, size_t cap)
{
    if (!p || !out)
        return peer_fail(err, cap, "sglang kda: NULL params");
    memset(out, 0, sizeof *out);
    if (p->batch < 1 || p->tokens < 1 || p->heads_qk < 1 || p->heads_v < 1)
        return peer_fail(err, cap, "sglang kda: batch, tokens, heads_qk, heads_v must be >= 1");
    if (p->tokens != 1)
        return peer_fail(err, cap, "sglang kda: T = %d: SGLang's CUDA KDA decode (kda_packed_decode) is T = 1 only "
                    "(SGLang verifies with Triton)", p->tokens);
    if (p->dk != 128 || p->dv != 128)
        return peer_fail(err, cap, "sglang kda: K = %d, V = %d: the kernel is specialized for K = V = 128", p->dk, p->dv);
    if (p->heads_v % p->heads_qk != 0)
        return peer_fail(err, cap, "sglang kda: HV %d is not a multiple of H %d", p->heads_v, p->heads_qk);
    if (p->state_dtype != LS_F32)
        return peer_fail(err, cap, "sglang kda: %s state: the kernel takes fp32 state only", ls_dtype_name(p->state_dtype));
    if (p->state_layout != LS_STATE_VK)
        return peer_fail(err, cap, "sglang kda: state layout %s: SGLang keeps KDA state as [slot, HV, V, K] (vk)",
                    ls_state_layout_name(p->state_layout));
    if (p->disable_state_update)
        return peer_fail(err, cap, "sglang kda: disable_state_update = 1: the kernel always writes the state back");
    if (p->inter)
        return peer_fail(err, cap, "sglang kda: inter: the decode kernel writes no intermediate states");
    const int64_t HV = p->heads_v, H = p->heads_qk, K = 128, V = 128;
    if (p->state_stride_slot < HV * K * V)
        return peer_fail(err, cap, "sglang kda: state_stride_slot %lld < HV*V*K %lld", (long long)p->state_stride_slot,
                    (long long)(HV * K * V));
    if (p->state_stride_slot % 4 != 0)
        return peer_fail(err, cap, "sglang kda: state_stride_slot %lld: the kernel loads the state as float4",
                    (long long)p->state_stride_slot);
    if (need_ptrs && (!p->q || !p->k || !p->v || !p->a || !p->b || !p->A_log || !p->dt_bias || !p->o || !p->state ||
                      !p->slot_idx))
        return peer_fail(err, cap, "sglang kda: q, k, v, a, b, A_log, dt_bias, o, state and slot_idx are required");
    out->batch = p->batch;
    out->H = p->heads_qk;
    out->HV = p->heads_v;
    out->qkv_row = 2 * H * K + HV * V;
    out->scratch_bytes = (int64_t)p->batch * out->qkv_row * 2;
    out->stride_a = HV * K; /* a [B, 1, HV, K] */
    out->stride_b = HV;     /* b [B, 1, HV] */
    out->stride_state = p->state_stride_slot;
    out->scale = p->scale;
    out->blocks = (uint32_t)(p->batch * HV);
    out->threads = 8 * 32;
    out->q = p->q;
    out->k = p->k;
    out->v = p->v;
    out->a = p->a;
    out->b = p->b;
    out->A_log = p->A_log;
    out->dt_bias = (const float *)p->dt_bias;
    out->o = p->o;
    out->state = (float *)p->state;
    out->indices = p->slot_idx;
    return 0;
}

int ls_sg_kda_sglang_covered(const ls_delta_params *p)
{
    return p && p->batch >= LS_SG_KDA_MIN_BATCH && p->tokens == 1 && p->dk == 128 && p->dv == 128 &&
           p->heads_qk > 0 && p->heads_v % p->heads_qk == 0 && p->state_dtype == LS_F32 &&
           p->state_layout == LS_STATE_VK;
}

int ls_sglang_cuda_kda_covered(const ls_delta_params *p) { return ls_sg_kda_sglang_covered(p); }
