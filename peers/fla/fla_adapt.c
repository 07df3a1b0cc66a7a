/* fla_adapt.c — marshalling ls_delta_params into fla-core 0.6.0's fused recurrent KDA kernel, as
 * fused_recurrent_kda_fwd launches it for a decode step over a slot pool (written from reading
 * that wrapper; peers/fla/README.md). */
#include "fla_adapt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static long long next_pow2(long long x)
{
    long long r = 1;
    while (r < x)
        r <<= 1;
    return r;
}

const char *fla_gdn_refusal(void)
{
    return "fla: gdn is not offered: fla-core 0.6.0's fused_recurrent_gated_delta_rule_fwd_kernel has no "
           "slot indices (h0/ht are [N, HV, K, V] by request row) and writes no per-step states, so it "
           "cannot run on a slot pool without a gather/scatter pass (peers/fla/README.md)";
}

int fla_kda_plan(const ls_delta_params *p, fla_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (p->batch < 1 || p->tokens < 1 || p->heads_qk < 1 || p->heads_v % p->heads_qk) {
        snprintf(err, cap, "fla: bad shape B=%d T=%d H=%d HV=%d", p->batch, p->tokens, p->heads_qk, p->heads_v);
        return -1;
    }
    if (p->tokens != 1) {
        snprintf(err, cap, "fla: kda verify (T=%d) refused: fla-core 0.6.0's fused_recurrent_kda_fwd_kernel "
                 "reads ssm_state_indices[n*stride + t] per step (one slot per draft token, vLLM's layout), "
                 "it has no inter[slot][t] buffer beside the state pool; decode (T=1) only", p->tokens);
        return LS_OP_UNSUPPORTED;
    }
    if (p->inter) {
        snprintf(err, cap, "fla: kda: intermediate states refused: the kernel writes no step states apart "
                 "from the in-place final state");
        return LS_OP_UNSUPPORTED;
    }
    if (p->disable_state_update) {
        snprintf(err, cap, "fla: kda: disable_state_update refused: the continuous-batching kernel always "
                 "stores the state in place (INPLACE_FINAL_STATE)");
        return LS_OP_UNSUPPORTED;
    }
    if (next_pow2(p->dk) != p->dk || p->dk > 256) {
        snprintf(err, cap, "fla: K=%d: compiled for one K block (BK = K, a power of 2)", p->dk);
        return LS_OP_UNSUPPORTED;
    }
    /* scale is a constexpr of the kernel: compiled as K**-0.5, the wrapper's default */
    double want = 1.0 / sqrt((double)p->dk);
    if (fabs((double)p->scale - want) > 1e-6 * want) {
        snprintf(err, cap, "fla: kda: scale %g: the kernel's scale is a constexpr, compiled as K^-0.5 = %g",
                 (double)p->scale, want);
        return LS_OP_UNSUPPORTED;
    }
    long long head = (long long)p->heads_v * p->dk * p->dv;
    if (p->state_stride_slot != head) {
        snprintf(err, cap, "fla: kda: state_stride_slot %lld: stride_init/final_state_token are constexprs, "
                 "compiled for a contiguous pool (HV*K*V = %lld)", (long long)p->state_stride_slot, head);
        return LS_OP_UNSUPPORTED;
    }
    out->kernel = FLA_KDA_KERNEL;
    snprintf(out->key, sizeof out->key, "H%d_HV%d_K%d_V%d_S%s_%s", p->heads_qk, p->heads_v, p->dk, p->dv,
             p->state_dtype == LS_F32 ? "f32" : "bf16", p->state_layout == LS_STATE_VK ? "vk" : "kv");
    /* grid (NK * NV * N * HV,), NK = 1 */
    out->grid[0] = (unsigned)((p->dv + FLA_KDA_BV - 1) / FLA_KDA_BV) * (unsigned)p->batch * (unsigned)p->heads_v;
    out->grid[1] = out->grid[2] = 1;
    return 0;
}

int fla_kda_args(const ls_delta_params *p, const fla_plan *pl, const tk_variant *v, tk_call *c, char *err,
                 size_t cap)
{
    (void)err;
    (void)cap;
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    tk_ptr(c, "q", p->q);
    tk_ptr(c, "k", p->k);
    tk_ptr(c, "v", p->v);
    tk_ptr(c, "g", p->a);           /* raw gate: use_gate_in_kernel */
    tk_ptr(c, "beta", p->b);        /* raw logits: use_beta_sigmoid_in_kernel */
    tk_ptr(c, "A_log", p->A_log);
    tk_ptr(c, "dt_bias", p->dt_bias);
    tk_ptr(c, "o", p->o);
    tk_ptr(c, "h0", p->state);      /* inplace_final_state: final_state = initial_state */
    tk_ptr(c, "ht", p->state);
    tk_ptr(c, "ssm_state_indices", p->slot_idx);
    tk_int(c, "N", p->batch);
    tk_int(c, "T", p->tokens);
    return 0;
}
