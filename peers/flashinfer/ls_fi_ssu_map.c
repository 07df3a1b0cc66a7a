/*
 * ls_fi_ssu_map.c — host half of the flashinfer SSU adapter: ls_ssu_params -> ls_fi_ssu_plan,
 * with every case FlashInfer's kernels cannot run under linstate's contract refused by name.
 * The contract differences (docs/peers.md, "flashinfer"):
 *  - FlashInfer compiles head_dim, dstate and the token count into the kernel: only the
 *    combinations this build instantiated run;
 *  - heads per group (nheads/ngroups) must be one of 1, 2, 4, ..., 64 (its dispatchRatio);
 *  - its multi-token kernel writes EITHER the intermediate states (into inter[slot][t], with the
 *    slot pitch cache_steps * nheads*dim*dstate) OR the final state, never both: a verify that
 *    asks for both is refused; the single-token kernel has no intermediate output;
 *  - vertical/horizontal exist for T = 1 only on sm_90 (multi-token ones are SM100+).
 * Padding rows: FlashInfer skips rows whose index equals pad_slot_id = -1 (zero state in, no
 * state out, output written) — linstate's rule for -1, the only padding value linstate uses.
 */
#include "ls_fi_ssu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "peer_err.h"


static int pow2_upto64(int32_t r)
{
    return r >= 1 && r <= 64 && (r & (r - 1)) == 0;
}

static int map(const ls_ssu_params *p, int algorithm, const ls_fi_ssu_inst *insts, int n_insts,
               ls_fi_ssu_plan *out, char *err, size_t cap, int need_ptrs)
{
    if (!p || !out)
        return peer_fail(err, cap, "flashinfer ssu: NULL params");
    memset(out, 0, sizeof *out);
    if (p->batch < 1 || p->tokens < 1 || p->nheads < 1 || p->head_dim < 1 || p->dstate < 1 || p->ngroups < 1)
        return peer_fail(err, cap, "flashinfer ssu: batch, tokens, nheads, head_dim, dstate, ngroups must be >= 1 "
                    "(got %d, %d, %d, %d, %d, %d)", p->batch, p->tokens, p->nheads, p->head_dim, p->dstate, p->ngroups);
    if (p->nheads % p->ngroups != 0)
        return peer_fail(err, cap, "flashinfer ssu: nheads %d is not a multiple of ngroups %d", p->nheads, p->ngroups);
    if (need_ptrs && (!p->x || !p->dt || !p->Bm || !p->Cm || !p->A || !p->dt_bias || !p->D || !p->y || !p->state || !p->slot_idx))
        return peer_fail(err, cap, "flashinfer ssu: x, dt, Bm, Cm, A, dt_bias, D, y, state and slot_idx are required");
    if (p->state_dtype != LS_F32 && p->state_dtype != LS_BF16)
        return peer_fail(err, cap, "flashinfer ssu: state dtype %d is neither fp32 nor bf16", (int)p->state_dtype);
    int32_t ratio = p->nheads / p->ngroups;
    if (!pow2_upto64(ratio))
        return peer_fail(err, cap, "flashinfer ssu: nheads/ngroups = %d/%d = %d heads per group; FlashInfer 0.7.2 "
                    "dispatches only 1, 2, 4, 8, 16, 32, 64", p->nheads, p->ngroups, ratio);
    const int64_t head_elems = (int64_t)p->head_dim * p->dstate;
    const int64_t slot_elems = head_elems * p->nheads;
    if (p->state_stride_slot < slot_elems)
        return peer_fail(err, cap, "flashinfer ssu: state_stride_slot %lld < nheads*head_dim*dstate %lld",
                    (long long)p->state_stride_slot, (long long)slot_elems);
    if (algorithm < LS_FI_ALGO_AUTO || algorithm > LS_FI_ALGO_HORIZONTAL)
        return peer_fail(err, cap, "flashinfer ssu: algorithm %d unknown", algorithm);
    const int T = p->tokens;
    if (T > 1 && (algorithm == LS_FI_ALGO_VERTICAL || algorithm == LS_FI_ALGO_HORIZONTAL))
        return peer_fail(err, cap, "flashinfer ssu: algorithm %s with T = %d: FlashInfer's multi-token vertical/horizontal "
                    "kernels are SM100+ only; on sm_90 T > 1 runs 'simple' (or 'auto')",
                    algorithm == LS_FI_ALGO_VERTICAL ? "vertical" : "horizontal", T);
    if (insts && n_insts > 0) {
        int found = 0;
        for (int i = 0; i < n_insts && !found; i++)
            found = insts[i].dim == p->head_dim && insts[i].dstate == p->dstate && insts[i].tokens == T;
        if (!found) {
            char list[512];
            size_t len = 0;
            list[0] = 0;
            for (int i = 0; i < n_insts && len + 32 < sizeof list; i++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%dx%d/T%d", i ? " " : "", insts[i].dim,
                                        insts[i].dstate, insts[i].tokens);
            return peer_fail(err, cap, "flashinfer ssu: head_dim %d, dstate %d, T %d was not compiled (FlashInfer fixes them "
                        "at compile time; this build has: %s)", p->head_dim, p->dstate, T, list);
        }
    }
    if (p->inter && T == 1)
        return peer_fail(err, cap, "flashinfer ssu: T = 1 with inter: FlashInfer's single-token kernel has no "
                    "intermediate-state output");
    if (p->inter && !p->disable_state_update)
        return peer_fail(err, cap, "flashinfer ssu: T = %d with inter and disable_state_update = 0: FlashInfer's "
                    "multi-token kernel writes the intermediate states or the final state, not both", T);
    if (p->inter) {
        if (p->inter_stride_slot % slot_elems != 0 || p->inter_stride_slot / slot_elems < T)
            return peer_fail(err, cap, "flashinfer ssu: inter_stride_slot %lld must be a multiple (>= T = %d) of "
                        "nheads*head_dim*dstate %lld: FlashInfer addresses inter[slot][t] as "
                        "(slot*cache_steps + t)*nheads*head_dim*dstate", (long long)p->inter_stride_slot, T,
                        (long long)slot_elems);
        out->cache_steps = (uint64_t)(p->inter_stride_slot / slot_elems);
        out->intermediate_states = p->inter;
        out->intermediate_state_indices = (void *)p->slot_idx;
        out->inter_stride_batch = p->inter_stride_slot;
    }

    out->batch = p->batch;
    out->tokens = T;
    out->nheads = p->nheads;
    out->dim = p->head_dim;
    out->dstate = p->dstate;
    out->ngroups = p->ngroups;
    out->state_bf16 = p->state_dtype == LS_BF16;
    out->mtp = T > 1;
    out->update_state = !p->disable_state_update;
    out->algorithm = algorithm;
    /* The TMA descriptors of the vertical/horizontal kernels are bounded by the slot count; without
     * one (slots = 0) the bound is 2^24 slots (addresses are only formed for real indices). */
    out->state_cache_size = p->slots > 0 ? (uint32_t)p->slots : (1u << 24);
    const int64_t xh = (int64_t)p->nheads * p->head_dim; /* x, z, y: [B, T, nh, hd] */
    const int64_t bc = (int64_t)p->ngroups * p->dstate;  /* B, C: [B, T, ng, ds] */
    out->x_stride_mtp = out->out_stride_mtp = xh;
    out->x_stride_batch = out->out_stride_batch = xh * T;
    out->dt_stride_mtp = p->nheads;
    out->dt_stride_batch = (int64_t)p->nheads * T;
    out->B_stride_mtp = out->C_stride_mtp = bc;
    out->B_stride_batch = out->C_stride_batch = bc * T;
    if (p->z) {
        out->z_stride_mtp = xh;
        out->z_stride_batch = xh * T;
    }
    out->state_stride_batch = p->state_stride_slot;
    out->state = p->state;
    out->x = (void *)p->x;
    out->dt = (void *)p->dt;
    out->dt_bias = (void *)p->dt_bias;
    out->A = (void *)p->A;
    out->B = (void *)p->Bm;
    out->C = (void *)p->Cm;
    out->D = (void *)p->D;
    out->z = (void *)p->z;
    out->out = p->y;
    out->state_batch_indices = (void *)p->slot_idx;
    return 0;
}

int ls_fi_ssu_map(const ls_ssu_params *p, int algorithm, const ls_fi_ssu_inst *insts, int n_insts,
                  ls_fi_ssu_plan *out, char *err, size_t cap)
{
    return map(p, algorithm, insts, n_insts, out, err, cap, 1);
}

int ls_fi_ssu_map_shape(const ls_ssu_params *p, int algorithm, const ls_fi_ssu_inst *insts, int n_insts,
                        ls_fi_ssu_plan *out, char *err, size_t cap)
{
    return map(p, algorithm, insts, n_insts, out, err, cap, 0);
}

int ls_fi_ssu_auto_algorithm(const ls_fi_ssu_plan *pl, int sm_count)
{
    if (pl->mtp)
        return LS_FI_ALGO_SIMPLE; /* sm_90 build: MTP auto is always simple */
    return (int64_t)pl->batch * pl->nheads < 2 * (int64_t)sm_count ? LS_FI_ALGO_SIMPLE : LS_FI_ALGO_VERTICAL;
}

const char *ls_fi_ssu_explain(const ls_fi_ssu_plan *pl, int sm_count, char *buf, size_t cap)
{
    int algo = pl->algorithm == LS_FI_ALGO_AUTO ? ls_fi_ssu_auto_algorithm(pl, sm_count) : pl->algorithm;
    const char *st = pl->state_bf16 ? "bf16" : "fp32";
    const int64_t blocks = (int64_t)pl->batch * pl->nheads;
    if (pl->mtp) {
        /* invokeSelectiveStateUpdateMTP, simple: CTAS_PER_HEAD from {4, 2, 1}, rows per pass 16 */
        int max_ctas = pl->dim / 16;
        int64_t c = blocks > 0 ? (int64_t)sm_count * 10 / blocks : 1;
        if (c < 1)
            c = 1;
        if (c > max_ctas)
            c = max_ctas;
        int ctas = 1;
        for (int k = 4; k >= 1; k /= 2)
            if (pl->dim / k >= 16 && c >= k) {
                ctas = k;
                break;
            }
        snprintf(buf, cap, "flashinfer ssu mtp simple T=%d grid=(%d,%d,%d) block=(32,4) state=%s%s", pl->tokens,
                 pl->batch, pl->nheads, ctas, st, pl->intermediate_states ? " inter" : "");
    } else if (algo == LS_FI_ALGO_SIMPLE) {
        if (blocks < 2 * (int64_t)sm_count)
            snprintf(buf, cap, "flashinfer ssu stp simple-tiled grid=(%d,%d,%d) block=(32,4) state=%s", pl->batch,
                     pl->nheads, (pl->dim + 3) / 4, st);
        else
            snprintf(buf, cap, "flashinfer ssu stp simple grid=(%d,%d) block=(32,4) state=%s", pl->batch, pl->nheads, st);
    } else if (algo == LS_FI_ALGO_VERTICAL) {
        snprintf(buf, cap, "flashinfer ssu stp vertical (TMA producer/consumer) grid=(%d,%d) block=(32,5) state=%s",
                 pl->batch, pl->nheads, st);
    } else {
        snprintf(buf, cap, "flashinfer ssu stp horizontal (TMA producer/consumer) grid=(%d,%d) block=(32,%d) state=%s",
                 pl->batch, pl->nheads, 1 + pl->dim / 64 * 4, st);
    }
    return buf;
}
