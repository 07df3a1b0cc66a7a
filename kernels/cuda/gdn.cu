/*
 * gdn.cu — Gated DeltaNet (Qwen3-Next) recurrence on the GPU: fused decode and target verify
 * with intermediate states, gating fused in (docs/ops.md). The kernel is the shared delta-rule
 * template (delta_rule.cuh) with a scalar decay per value head.
 */
#include "delta_rule.cuh"

extern "C" int ls_cuda_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    return ls_delta::launch<false>(p, t, s);
}
