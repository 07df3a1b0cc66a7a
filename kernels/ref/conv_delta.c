/*
 * conv_delta.c — host reference of the fused conv update + delta rule (docs/ops.md): by
 * definition the two reference ops back to back, composed through ls_conv_delta_split (three
 * conv updates over the q, k and v channel ranges into a float64-accumulated, bf16-stored
 * scratch, then ls_ref_gdn / ls_ref_kda on it). The recurrence writes o into a scratch too:
 * only the rows with a real slot are copied out, so a padding row's o keeps its content, as the
 * fused contract says (back to back, the recurrence would write o from the conv output the conv
 * op never wrote for that row).
 */
#include "ls_ref.h"

#include <stdlib.h>
#include <string.h>

int ls_ref_conv_delta(const ls_conv_delta_params *p)
{
    if (ls_conv_delta_params_check(p) || ls_slots_check("conv_delta", p->conv.slot_idx, p->conv.batch, p->conv.slots))
        return -1;
    const ls_delta_params *d = &p->delta;
    const size_t B = (size_t)d->batch, T = (size_t)d->tokens, C = (size_t)p->conv.channels;
    const size_t o_row = T * (size_t)d->heads_v * (size_t)d->dv; /* o elements of one request row */
    uint16_t *qkv = calloc(B * T * C + B * o_row, sizeof *qkv);
    if (!qkv)
        return ls_fail("conv_delta: out of memory (scratch for B=%zu T=%zu C=%zu)", B, T, C);
    uint16_t *o = qkv + B * T * C;
    ls_conv_params conv[3];
    ls_delta_params rec;
    int n_conv = 0, rc = ls_conv_delta_split(p, qkv, 0, conv, &n_conv, &rec);
    for (int i = 0; rc == 0 && i < n_conv; i++)
        rc = ls_ref_conv_update(&conv[i]);
    if (rc == 0) {
        rec.o = o;
        rc = p->kda ? ls_ref_kda(&rec) : ls_ref_gdn(&rec);
    }
    for (size_t r = 0; rc == 0 && r < B; r++)
        if (d->slot_idx[r] >= 0)
            memcpy(d->o + r * o_row, o + r * o_row, o_row * sizeof *o);
    free(qkv);
    return rc;
}
