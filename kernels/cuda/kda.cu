/*
 * kda.cu — Kimi Delta Attention recurrence on the GPU: the fused in-place decode (raw
 * per-channel gate in, decay computed inside, one state round trip) and the same recurrence over
 * T tokens with intermediate states (docs/ops.md). The kernel is the shared delta-rule template
 * (delta_rule.cuh) with a decay per key row.
 */
#include "delta_rule.cuh"

extern "C" int ls_cuda_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    return ls_delta::launch<true>(p, t, s);
}
