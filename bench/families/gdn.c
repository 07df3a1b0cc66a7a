/*
 * gdn.c — the gdn family: Gated DeltaNet (Qwen3-Next) fused decode (docs/ops.md) and target verify
 * with the gating fused into the recurrence (docs/ops.md): scalar decay per value head, bf16 a/b gate
 * inputs, bf16 dt_bias. The machinery is shared with kda in delta.c.
 */
#include "family.h"

int bench_gdn_setup(bench_ctx *x)
{
    return bench_delta_setup(x, 0);
}

int bench_gdn_run(void *x, int rot, ls_stream s)
{
    return bench_delta_run(x, rot, s);
}

int bench_gdn_verify(bench_ctx *x, double *max_rel_err)
{
    return bench_delta_verify(x, max_rel_err);
}

/* Decode: docs/bytes.md ("GDN fused decode"). Verify: the recurrence row with our fused gating
 * (a, b bf16 instead of g, β fp32; see ls_bytes_gdn_verify_fused). */
int64_t bench_gdn_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    const ls_shape *s = &c->shape;
    int64_t s_s = (int64_t)ls_dtype_size(c->state_dtype);
    if (c->tokens == 1)
        return ls_bytes_gdn_decode(c->batch, 1, s->heads_qk, s->heads_v, s->dk, s->dv, 2, s_s);
    return ls_bytes_gdn_verify_fused(c->batch, c->tokens, s->heads_qk, s->heads_v, s->dk, s->dv, 2, s_s);
}
