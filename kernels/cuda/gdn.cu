/*
 * gdn.cu — Gated DeltaNet (Qwen3-Next) recurrence on the GPU: fused decode (SPEC §2.2) and target
 * verify with intermediate states (SPEC §2.3, gating fused in). The kernel is the shared
 * delta-rule template (delta_rule.cuh) with a scalar decay per value head.
 */
#include "delta_rule.cuh"

extern "C" int ls_cuda_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    return ls_delta::launch<false>(p, s);
}
