/*
 * fla_impl.c — the "fla" peer impl: fla-core 0.6.0's fused recurrent KDA Triton kernel, compiled
 * ahead of time for sm_90 by peers/triton/aot.py from the pinned wheel's source
 * (peers/fla/kernels.py lists the variants) and launched through peers/triton/launch.c. Both state
 * layouts (STATE_V_FIRST). KDA decode only; gdn is NULL (fla_gdn_refusal says why).
 */
#include <stdio.h>
#include <string.h>

#include "fla_adapt.h"
#include "ls_kernels.h"
#include "tk.h"
#include "peer_arch.h" /* tk_launch answers PEER_UNSUPPORTED on another arch */

extern const tk_variant fla_variants[];
extern const int fla_n_variants;
extern const char fla_triton_version[];

static _Thread_local char err_buf[640];

static const char *fla_last_error(void) { return err_buf; }

static int resolve(const ls_delta_params *p, fla_plan *pl, const tk_variant **v)
{
    int rc = fla_kda_plan(p, pl, err_buf, sizeof err_buf);
    if (rc != 0)
        return rc;
    *v = tk_require(fla_variants, fla_n_variants, pl->kernel, pl->key, "fla",
                    "peers/fla/kernels.py lists the kimi-linear shapes at tp 1/2/4/8", err_buf, sizeof err_buf);
    return *v ? 0 : LS_OP_UNSUPPORTED;
}

static int fla_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    (void)t;
    fla_plan pl;
    const tk_variant *v;
    tk_call c;
    err_buf[0] = 0;
    int rc = resolve(p, &pl, &v);
    if (rc != 0)
        return rc;
    if (fla_kda_args(p, &pl, v, &c, err_buf, sizeof err_buf) != 0)
        return -1;
    return tk_launch(&c, s, err_buf, sizeof err_buf);
}

static int fla_explain(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev, char *buf,
                       size_t cap)
{
    (void)t;
    (void)dev;
    if (op == LS_OP_GDN) {
        snprintf(buf, cap, "%s", fla_gdn_refusal());
        return -1;
    }
    if (op != LS_OP_KDA)
        return -1;
    fla_plan pl;
    const tk_variant *v;
    if (resolve((const ls_delta_params *)params, &pl, &v) != 0)
        return -1;
    snprintf(buf, cap, "%s[%s] grid %u warps %d (gate+beta sigmoid in kernel, in-place continuous batching)",
             pl.kernel, pl.key, pl.grid[0], v->num_warps);
    return 0;
}

static const ls_impl impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "fla",
    .version = "fla-core 0.6.0 triton 3.6.0",
    .runtime = "cuda",
    .caps = LS_IMPL_GRAPH | LS_IMPL_KV | LS_IMPL_VK,
    .kda = fla_kda,
    .last_error = fla_last_error,
    .explain = fla_explain,
};

__attribute__((visibility("default"))) const ls_impl *linstate_impl_v1(int abi_version)
{
    if (abi_version != LS_IMPL_ABI)
        return NULL;
    if (strncmp(fla_triton_version, "3.6.", 4) != 0)
        return NULL;
    return &impl;
}
