/*
 * conv_update.c — host reference of the causal conv1d update (docs/ops.md; contract in the
 * ls_conv_params comment of ls_kernels.h).
 *
 * Per request row r (slot s = slot_idx[r] >= 0) and channel c the row's whole input line
 * u = [state[s,c,0..W-2], x[r,0..T-1,c]] is loaded first (so y may even alias x), then
 *   y[r,t,c]         = act(bias[c] + sum_j w[c,j] u[t+j])    summed in double, j ascending
 *   inter[s,t,c,:]   = u[t+1 .. t+W-1]                        (if inter)
 *   state[s,c,:]     = u[T .. T+W-2]                          (unless disable_state_update)
 * Window and state values are copies of bf16 inputs or of the old state, so they are stored
 * bit-exactly. Padding rows (s < 0) read and write nothing; y keeps its old content.
 * Work is split over (row, block of channels) items.
 */
#include "ls_ref.h"

#include <stdlib.h>

#define CONV_CBLOCK 256

typedef struct conv_ctx {
    const ls_conv_params *p;
    const double *w;    /* [C, W] */
    const double *bias; /* [C] or NULL */
    int64_t cblocks;
} conv_ctx;

/* One (row, channel) line; sdt is a compile-time constant at each call site (specialised). */
static inline __attribute__((always_inline)) void conv_line(const ls_conv_params *p,
                                                            const double *w, const double *bias,
                                                            int64_t r, int32_t s, int64_t c,
                                                            double *u, ls_dtype sdt)
{
    const int W = p->width, T = p->tokens;
    const char *st = (const char *)p->state;
    const int64_t sbase = (int64_t)s * p->state_stride_slot + c * p->state_stride_c;
    for (int j = 0; j < W - 1; j++)
        u[j] = ls_ref_get(st, sdt, sbase + j * p->state_stride_w);
    for (int t = 0; t < T; t++)
        u[W - 1 + t] =
            (double)ls_bf16_to_f32(p->x[r * p->x_stride_b + t * p->x_stride_t + c * p->x_stride_c]);

    const double *wc = w + c * W;
    for (int t = 0; t < T; t++) {
        double acc = bias ? bias[c] : 0.0;
        for (int j = 0; j < W; j++)
            acc += wc[j] * u[t + j];
        if (p->silu)
            acc = ls_ref_silu(acc);
        p->y[r * p->y_stride_b + t * p->y_stride_t + c * p->y_stride_c] = ls_ref_to_bf16(acc);
    }
    if (p->inter) {
        char *in = (char *)p->inter;
        for (int t = 0; t < T; t++)
            for (int j = 0; j < W - 1; j++) {
                int64_t off = (int64_t)s * p->inter_stride_slot + t * p->inter_stride_t +
                              c * p->inter_stride_c + j * p->inter_stride_w;
                if (sdt == LS_F32)
                    ((float *)in)[off] = (float)u[t + 1 + j];
                else
                    ((uint16_t *)in)[off] = ls_ref_to_bf16(u[t + 1 + j]);
            }
    }
    if (!p->disable_state_update) {
        for (int j = 0; j < W - 1; j++) {
            int64_t off = sbase + j * p->state_stride_w;
            if (sdt == LS_F32)
                ((float *)p->state)[off] = (float)u[T + j];
            else
                ((uint16_t *)p->state)[off] = ls_ref_to_bf16(u[T + j]);
        }
    }
}

static int conv_range(void *vctx, int64_t begin, int64_t end)
{
    const conv_ctx *cx = (const conv_ctx *)vctx;
    const ls_conv_params *p = cx->p;
    double *u = malloc(sizeof(double) * (size_t)(p->width - 1 + p->tokens));
    if (!u)
        return ls_fail("conv: out of memory (scratch for T=%d)", (int)p->tokens);
    for (int64_t it = begin; it < end; it++) {
        int64_t r = it / cx->cblocks, c0 = (it % cx->cblocks) * CONV_CBLOCK;
        int64_t c1 = c0 + CONV_CBLOCK < p->channels ? c0 + CONV_CBLOCK : p->channels;
        int32_t s = p->slot_idx[r];
        if (s < 0)
            continue;
        if (p->state_dtype == LS_F32)
            for (int64_t c = c0; c < c1; c++)
                conv_line(p, cx->w, cx->bias, r, s, c, u, LS_F32);
        else
            for (int64_t c = c0; c < c1; c++)
                conv_line(p, cx->w, cx->bias, r, s, c, u, LS_BF16);
    }
    free(u);
    return 0;
}

int ls_ref_conv_update(const ls_conv_params *p)
{
    if (ls_conv_params_check(p) || ls_slots_check("conv", p->slot_idx, p->batch, p->slots))
        return -1;
    const int64_t C = p->channels, W = p->width;
    double *w = malloc(sizeof(double) * (size_t)(C * W + C));
    if (!w)
        return ls_fail("conv: out of memory (weights of C=%lld)", (long long)C);
    ls_ref_load(p->weight, p->weight_dtype, C * W, w);
    double *bias = NULL;
    if (p->bias) {
        bias = w + C * W;
        ls_ref_load(p->bias, p->weight_dtype, C, bias);
    }
    conv_ctx cx = {.p = p, .w = w, .bias = bias, .cblocks = (C + CONV_CBLOCK - 1) / CONV_CBLOCK};
    int64_t items = (int64_t)p->batch * cx.cblocks;
    double work = (double)CONV_CBLOCK * (double)p->tokens * (double)(2 * W + 2);
    int rc = ls_ref_parallel(items, work, conv_range, &cx);
    free(w);
    return rc;
}
