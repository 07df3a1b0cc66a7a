/*
 * sglang_impl.c — the "sglang" peer impl: SGLang 0.5.23's GDN/KDA Triton kernels, compiled ahead
 * of time for sm_90 by peers/triton/aot.py from the pinned wheel's source (peers/sglang/kernels.py
 * lists the variants) and launched through peers/triton/launch.c. The adapters (sg_adapt.c)
 * present the kernels with the views SGLang's wrappers would build. State layout: [V, K] (vk).
 * The pool's state ops (copy, accept, zero) run SGLang's pool kernels (sg_pool_ops.c).
 */
#include <stdio.h>
#include <string.h>

#include "ls_kernels.h"
#include "sg_adapt.h"
#include "sg_pool_ops.h"
#ifdef LS_SGLANG_CUDA_KDA
#include "ls_sglang_cuda.h"
#endif
#include "tk.h"
#ifdef LS_SGLANG_CUDA_KDA
#define PEER_ARCH_CUDART
#endif
#include "peer_arch.h" /* tk_launch answers PEER_UNSUPPORTED on another arch */

extern const tk_variant sg_variants[];
extern const int sg_n_variants;
extern const char sg_triton_version[];

static _Thread_local char err_buf[512];

static const char *sg_last_error(void) { return err_buf; }

static const ls_knob_def knobs[] = {
    {"gdn.decode", "auto|gating",
     "GDN decode: SGLang's packed-decode kernel when q/k/v are one mixed_qkv row (auto), or always "
     "its sigmoid-gating recurrent kernel (gating)"},
};

/* The compiled variant of a plan, or NULL with err_buf saying which shapes were built. */
static const tk_variant *find_variant(const sg_plan *pl, const char *built)
{
    return tk_require(sg_variants, sg_n_variants, pl->kernel, pl->key, "sglang", built, err_buf, sizeof err_buf);
}

static int decode_knob(const ls_tuning *t) { return t && t->n > 0 ? t->v[0] : SG_DECODE_AUTO; }

static int resolve(const ls_delta_params *p, int kda, const ls_tuning *t, sg_plan *pl,
                   const tk_variant **v)
{
    /* a call SGLang's kernels were not written or built for: skipped, not failed */
    if (sg_delta_plan(p, kda, decode_knob(t), pl, err_buf, sizeof err_buf) != 0)
        return LS_OP_UNSUPPORTED;
    *v = find_variant(pl, SG_BUILT_PRESETS);
    return *v ? 0 : LS_OP_UNSUPPORTED;
}

static int run(const ls_delta_params *p, int kda, const ls_tuning *t, ls_stream s)
{
    sg_plan pl;
    const tk_variant *v;
    tk_call c;
    err_buf[0] = 0;
    int rc = resolve(p, kda, t, &pl, &v);
    if (rc != 0)
        return rc;
    if (!pl.packed && !(pl.cu_seqlens = sg_query_start_loc(p->batch, p->tokens, s, err_buf, sizeof err_buf)))
        return -1;
    if (sg_delta_args(p, kda, &pl, v, &c, err_buf, sizeof err_buf) != 0)
        return -1;
    return tk_launch(&c, s, err_buf, sizeof err_buf);
}

static int sg_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s) { return run(p, 0, t, s); }
/* KDA decode: SGLang 0.5.23 takes its CUDA kernel (kda_packed_decode) when B >= 8, K = V = 128,
 * fp32 state (ls_sglang_cuda_kda_covered); every other call takes the Triton kernel. */
static int sg_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
#ifdef LS_SGLANG_CUDA_KDA
    if (ls_sglang_cuda_kda_covered(p)) {
        err_buf[0] = 0;
        if (peer_arch_refuse(LS_PEER_CUDA_ARCH, peer_cuda_cc(), "sglang kda (CUDA kda_packed_decode)", err_buf,
                             sizeof err_buf))
            return LS_OP_UNSUPPORTED;
        int rc = ls_sglang_cuda_kda_decode(p, s);
        if (rc != 0)
            snprintf(err_buf, sizeof err_buf, "%s", ls_sglang_cuda_last_error());
        return rc;
    }
#endif
    return run(p, 1, t, s);
}

/* The plan and compiled variant of a conv_update / ssu call; LS_OP_UNSUPPORTED when the kernel was
 * not built for it (err_buf says why). */
static int resolve_other(ls_op op, const void *params, sg_plan *pl, const tk_variant **v)
{
    int rc = op == LS_OP_CONV_UPDATE ? sg_conv_plan((const ls_conv_params *)params, pl, err_buf, sizeof err_buf)
                                     : sg_ssu_plan((const ls_ssu_params *)params, pl, err_buf, sizeof err_buf);
    if (rc != 0)
        return LS_OP_UNSUPPORTED;
    *v = find_variant(pl, SG_BUILT_PRESETS);
    return *v ? 0 : LS_OP_UNSUPPORTED;
}

static int sg_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    sg_plan pl;
    const tk_variant *v;
    tk_call c;
    err_buf[0] = 0;
    int rc = resolve_other(LS_OP_CONV_UPDATE, p, &pl, &v);
    if (rc != 0)
        return rc;
    if (sg_conv_args(p, &pl, v, &c, err_buf, sizeof err_buf) != 0)
        return -1;
    return tk_launch(&c, s, err_buf, sizeof err_buf);
}

static int sg_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    sg_plan pl;
    const tk_variant *v;
    tk_call c;
    err_buf[0] = 0;
    int rc = resolve_other(LS_OP_SSU, p, &pl, &v);
    if (rc != 0)
        return rc;
    if (sg_ssu_args(p, &pl, v, &c, err_buf, sizeof err_buf) != 0)
        return -1;
    return tk_launch(&c, s, err_buf, sizeof err_buf);
}

/* conv_delta: the fused KDA conv + recurrence chain-verify kernel (KDA verify, T 3..8). */
static int resolve_conv_delta(const ls_conv_delta_params *p, sg_plan *pl, const tk_variant **v)
{
    if (sg_conv_delta_plan(p, pl, err_buf, sizeof err_buf) != 0)
        return LS_OP_UNSUPPORTED;
    *v = find_variant(pl, "peers/sglang/kernels.py lists the kimi-linear heads at tp 1/2/4/8, T 3..8");
    return *v ? 0 : LS_OP_UNSUPPORTED;
}

static int sg_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    sg_plan pl;
    const tk_variant *v;
    tk_call c;
    err_buf[0] = 0;
    int rc = resolve_conv_delta(p, &pl, &v);
    if (rc != 0)
        return rc;
    if (sg_conv_delta_args(p, &pl, v, &c, err_buf, sizeof err_buf) != 0)
        return -1;
    return tk_launch(&c, s, err_buf, sizeof err_buf);
}

/* Pool state ops: SGLang's pool kernels over the whole pool (sg_pool_ops.c). Several launches
 * per call, so another GPU arch is refused before the first (nothing written). */
static int pool_arch_refused(void)
{
    return tk_device_refuses(sg_n_variants > 0 ? sg_variants[0].arch : 0, "sglang pool ops (Triton AOT cubins)",
                             err_buf, sizeof err_buf);
}

static int sg_state_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    err_buf[0] = 0;
    return pool_arch_refused() ? LS_OP_UNSUPPORTED : sg_pool_copy(p, s, err_buf, sizeof err_buf);
}

static int sg_state_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    err_buf[0] = 0;
    return pool_arch_refused() ? LS_OP_UNSUPPORTED : sg_pool_accept(p, s, err_buf, sizeof err_buf);
}

static int sg_state_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    err_buf[0] = 0;
    return pool_arch_refused() ? LS_OP_UNSUPPORTED : sg_pool_zero(p, s, err_buf, sizeof err_buf);
}

static int sg_explain(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev,
                      char *buf, size_t cap)
{
    (void)dev;
    sg_plan pl;
    const tk_variant *v;
#ifdef LS_SGLANG_CUDA_KDA
    if (op == LS_OP_KDA && ls_sglang_cuda_kda_covered((const ls_delta_params *)params)) {
        snprintf(buf, cap, "sglang::kda_packed_decode_kernel<8> (CUDA, B >= 8 path) grid %d block 256 pdl",
                 ((const ls_delta_params *)params)->batch * ((const ls_delta_params *)params)->heads_v);
        return 0;
    }
#endif
    if (op == LS_OP_GDN || op == LS_OP_KDA) {
        if (resolve((const ls_delta_params *)params, op == LS_OP_KDA, t, &pl, &v) != 0)
            return -1;
    } else if (op == LS_OP_CONV_UPDATE || op == LS_OP_SSU) {
        if (resolve_other(op, params, &pl, &v) != 0)
            return -1;
    } else if (op == LS_OP_CONV_DELTA) {
        if (resolve_conv_delta((const ls_conv_delta_params *)params, &pl, &v) != 0)
            return -1;
    } else if (op == LS_OP_STATE_COPY || op == LS_OP_STATE_ACCEPT || op == LS_OP_STATE_ZERO) {
        return sg_pool_explain(op, (const ls_state_params *)params, buf, cap);
    } else {
        return -1;
    }
    snprintf(buf, cap, "%s[%s] grid %ux%ux%u warps %d%s", pl.kernel, pl.key, pl.grid[0], pl.grid[1],
             pl.grid[2], v->num_warps, v->launch_pdl ? " pdl" : "");
    return 0;
}

static const ls_impl impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "sglang",
    .version = "sglang 0.5.23 triton 3.6.0",
    .runtime = "cuda",
    .caps = LS_IMPL_GRAPH | LS_IMPL_VK | LS_IMPL_QKV_STRIDES, /* packed q/k/v: the mixed_qkv decode kernel */
    .knobs = knobs,
    .n_knobs = (int32_t)(sizeof knobs / sizeof knobs[0]),
    .conv_update = sg_conv_update,
    .gdn = sg_gdn,
    .kda = sg_kda,
    .ssu = sg_ssu,
    .state_copy = sg_state_copy,
    .state_accept = sg_state_accept,
    .state_zero = sg_state_zero,
    .last_error = sg_last_error,
    .explain = sg_explain,
    .conv_delta = sg_conv_delta,
};

__attribute__((visibility("default"))) const ls_impl *linstate_impl_v1(int abi_version)
{
    if (abi_version != LS_IMPL_ABI)
        return NULL;
    if (strncmp(sg_triton_version, "3.6.", 4) != 0)
        return NULL;
    return &impl;
}
