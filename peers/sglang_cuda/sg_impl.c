/*
 * sg_impl.c — the standalone "sglang_cuda" impl (plugin libls_impl_sglang_cuda.so): SGLang 0.5.23's
 * CUDA conv update and KDA packed decode through ls_peer_sglang_cuda, unconditionally (for any batch;
 * SGLang itself takes the KDA kernel only from B = 8 and the CUDA conv only for some models:
 * docs/peers.md). The sglang impl of the Triton peers links the same library and dispatches.
 */
#include <stdio.h>
#include <string.h>

#include "ls_kernels.h"
#include "ls_sglang_cuda.h"
#define PEER_ARCH_CUDART
#include "peer_arch.h"

#ifndef LS_SG_VERSION
#define LS_SG_VERSION "sglang"
#endif

/* Why the last call was refused (the shape check below), else the library's own error. */
static _Thread_local char refused[1024];

static const char *sg_last_error(void) { return refused[0] ? refused : ls_sglang_cuda_last_error(); }

/* A call these kernels were not written for (fp32 weights, intermediate windows, verify, ...) is
 * LS_OP_UNSUPPORTED (skipped), checked without pointers before anything is launched. */
static int sg_conv(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    ls_sg_conv_plan pl;
    refused[0] = 0;
    if (peer_arch_refuse(LS_PEER_CUDA_ARCH, peer_cuda_cc(), "sglang_cuda conv", refused, sizeof refused))
        return LS_OP_UNSUPPORTED;
    if (p && ls_sg_conv_map(p, &pl, 0, refused, sizeof refused) != 0)
        return LS_OP_UNSUPPORTED;
    refused[0] = 0;
    return ls_sglang_cuda_conv_update(p, s);
}

static int sg_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    ls_sg_kda_plan pl;
    refused[0] = 0;
    if (peer_arch_refuse(LS_PEER_CUDA_ARCH, peer_cuda_cc(), "sglang_cuda kda", refused, sizeof refused))
        return LS_OP_UNSUPPORTED;
    if (p && ls_sg_kda_map(p, &pl, 0, refused, sizeof refused) != 0)
        return LS_OP_UNSUPPORTED;
    refused[0] = 0;
    return ls_sglang_cuda_kda_decode(p, s);
}

static int sg_explain(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev, char *buf,
                      size_t cap)
{
    (void)t;
    (void)dev;
    char err[512];
    if (!params)
        return -1;
    if (op == LS_OP_CONV_UPDATE) {
        ls_sg_conv_plan pl;
        if (ls_sg_conv_map((const ls_conv_params *)params, &pl, 0, err, sizeof err) != 0)
            snprintf(buf, cap, "refused: %s", err);
        else
            snprintf(buf, cap, "sglang causal_conv1d_update_kernel<64,%d> grid=(%u,%u) block=%u", pl.width, pl.grid_x,
                     pl.grid_y, pl.threads);
        return 0;
    }
    if (op == LS_OP_KDA) {
        ls_sg_kda_plan pl;
        if (ls_sg_kda_map((const ls_delta_params *)params, &pl, 0, err, sizeof err) != 0)
            snprintf(buf, cap, "refused: %s", err);
        else
            snprintf(buf, cap, "pack_qkv + sglang kda_packed_decode_kernel<8,pdl> grid=%u block=%u + pad_rows%s",
                     pl.blocks, pl.threads,
                     ls_sg_kda_sglang_covered((const ls_delta_params *)params) ? "" : " (SGLang: Triton below B=8)");
        return 0;
    }
    return -1;
}

static const ls_impl sg_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "sglang_cuda",
    .version = LS_SG_VERSION,
    .runtime = "cuda",
    .caps = LS_IMPL_GRAPH | LS_IMPL_VK | LS_IMPL_QKV_STRIDES, /* kda reads packed rows in place */
    .conv_update = sg_conv,
    .kda = sg_kda,
    .last_error = sg_last_error,
    .explain = sg_explain,
};

__attribute__((visibility("default"))) const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &sg_impl : NULL;
}
