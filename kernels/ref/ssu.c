/*
 * ssu.c — host reference of the Mamba2 selective state update, tied path (docs/ops.md; contract in
 * the ls_ssu_params comment of ls_kernels.h). Decode (T = 1) and verify (T > 1, intermediate
 * states, optional final write) share one loop.
 *
 * Per row r (slot s), head h, group g = h / (nh/ng), token t:
 *   d = softplus(dt + dt_bias[h]);  a = exp(A[h] d)
 *   S[p,n] = a S[p,n] + (d x[p]) B[n];  y[p] = sum_n S[p,n] C[n] + D[h] x[p];  y *= silu(z) if z
 * S stays in double between tokens and is rounded to the state dtype only when stored.
 * Padding rows (s < 0) start from zero, store no state, but write y.
 * Work is split over (row, head) items.
 */
#include "ls_ref.h"

#include <stdlib.h>

/*
 * One state row: row <- a row + dx B (vectorised), then sum_n row[n] C[n] with four interleaved
 * partial sums (fixed order, so deterministic; breaks the add latency chain of a long ds).
 */
static double ssu_row(double *restrict row, double a, double dx, const double *restrict Bv,
                      const double *restrict Cv, int N)
{
    for (int n = 0; n < N; n++)
        row[n] = a * row[n] + dx * Bv[n];
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    int n = 0;
    for (; n + 4 <= N; n += 4)
        for (int j = 0; j < 4; j++)
            acc[j] += row[n + j] * Cv[n + j];
    for (; n < N; n++)
        acc[0] += row[n] * Cv[n];
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

static void ssu_item(const ls_ssu_params *p, int64_t r, int h, double *scratch)
{
    const int T = p->tokens, NH = p->nheads, P = p->head_dim, N = p->dstate, G = p->ngroups;
    const int g = h / (NH / G);
    const int64_t PN = (int64_t)P * N, step = (int64_t)NH * PN;
    const int64_t esz = (int64_t)ls_dtype_size(p->state_dtype);
    double *S = scratch, *x = S + PN, *Bv = x + P, *Cv = Bv + N, *y = Cv + N;
    const int32_t s = p->slot_idx[r];
    const double A = (double)p->A[h];
    const double dtb = (double)ls_bf16_to_f32(p->dt_bias[h]);
    const double Dh = (double)ls_bf16_to_f32(p->D[h]);

    if (s >= 0)
        ls_ref_load((const char *)p->state + ((int64_t)s * p->state_stride_slot + h * PN) * esz,
                    p->state_dtype, PN, S);
    else
        memset(S, 0, sizeof(double) * (size_t)PN);

    for (int t = 0; t < T; t++) {
        const int64_t rt = r * T + t;
        const double d = ls_ref_softplus((double)ls_bf16_to_f32(p->dt[rt * NH + h]) + dtb);
        const double a = exp(A * d);
        ls_ref_load_bf16(p->x + (rt * NH + h) * P, P, x);
        ls_ref_load_bf16(p->Bm + (rt * G + g) * N, N, Bv);
        ls_ref_load_bf16(p->Cm + (rt * G + g) * N, N, Cv);
        for (int i = 0; i < P; i++)
            y[i] = ssu_row(S + (int64_t)i * N, a, d * x[i], Bv, Cv, N) + Dh * x[i];
        if (p->z) {
            const uint16_t *z = p->z + (rt * NH + h) * P;
            for (int i = 0; i < P; i++)
                y[i] *= ls_ref_silu((double)ls_bf16_to_f32(z[i]));
        }
        ls_ref_store_bf16(p->y + (rt * NH + h) * P, P, y);
        if (p->inter && s >= 0)
            ls_ref_store((char *)p->inter +
                             ((int64_t)s * p->inter_stride_slot + t * step + h * PN) * esz,
                         p->state_dtype, PN, S);
    }
    if (!p->disable_state_update && s >= 0)
        ls_ref_store((char *)p->state + ((int64_t)s * p->state_stride_slot + h * PN) * esz,
                     p->state_dtype, PN, S);
}

static int ssu_range(void *vctx, int64_t begin, int64_t end)
{
    const ls_ssu_params *p = (const ls_ssu_params *)vctx;
    size_t n =
        (size_t)p->head_dim * (size_t)p->dstate + 2u * (size_t)p->head_dim + 2u * (size_t)p->dstate;
    double *scratch = malloc(sizeof(double) * n);
    if (!scratch)
        return ls_fail("ssu: out of memory (state scratch hd=%d ds=%d)", (int)p->head_dim,
                       (int)p->dstate);
    for (int64_t it = begin; it < end; it++)
        ssu_item(p, it / p->nheads, (int)(it % p->nheads), scratch);
    free(scratch);
    return 0;
}

int ls_ref_ssu(const ls_ssu_params *p)
{
    if (ls_ssu_params_check(p) || ls_slots_check("ssu", p->slot_idx, p->batch, p->slots))
        return -1;
    double work = 5.0 * (double)p->tokens * (double)p->head_dim * (double)p->dstate;
    return ls_ref_parallel((int64_t)p->batch * p->nheads, work, ssu_range, (void *)p);
}
