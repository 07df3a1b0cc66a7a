/*
 * kda.c — the kda family: Kimi Delta Attention decode as the fused in-place kernel of HEAD-fork
 * (docs/ops.md, one state round trip; per-key-channel decay from the raw gate [B,T,HV,K] and fp32
 * dt_bias [HV*K]), and a T-token verify with intermediate states (no upstream counterpart at
 * AFTER; same contract as GDN verify). The machinery is shared with gdn in delta.c.
 */
#include "family.h"

int bench_kda_setup(bench_ctx *x)
{
    return bench_delta_setup(x, 1);
}

int bench_kda_run(void *x, int rot, ls_stream s)
{
    return bench_delta_run(x, rot, s);
}

int bench_kda_verify(bench_ctx *x, double *max_rel_err)
{
    return bench_delta_verify(x, max_rel_err);
}

/* docs/bytes.md ("KDA decode, fused") (recurrence only); verify per ls_bytes_kda's documented rule. */
int64_t bench_kda_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    const ls_shape *s = &c->shape;
    return ls_bytes_kda(c->batch, c->tokens, s->heads_qk, s->heads_v, s->dk, s->dv, 2,
                        (int64_t)ls_dtype_size(c->state_dtype), c->tokens > 1);
}
