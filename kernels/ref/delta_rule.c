/*
 * delta_rule.c — host reference of the gated delta rule: GDN and KDA (docs/ops.md),
 * contract in the ls_delta_params comment of ls_kernels.h.
 *
 * ONE recurrence serves both: per token a decay vector dec[k] is formed — GDN fills it with the
 * single scalar exp(g), KDA with exp(g_k) per key row — and everything after that is shared, so
 * KDA with equal per-channel gates reproduces GDN bit for bit. The state S (K x V, V innermost)
 * stays in double across tokens and is rounded to the state dtype only when stored (inter after
 * each token, final state at the end). Outputs are rounded double -> float -> bf16.
 * Work is split over (row, value head) items; each item owns its S.
 */
#include "ls_ref.h"

#include <stdlib.h>

typedef struct delta_ctx {
    const ls_delta_params *p;
    int per_channel; /* 0 GDN, 1 KDA */
} delta_ctx;

/* L2-normalise n bf16 values (eps inside the sqrt) and multiply by mult. */
static void l2norm_bf16(const uint16_t *x, int n, double mult, double *out)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++) {
        out[i] = (double)ls_bf16_to_f32(x[i]);
        ss += out[i] * out[i];
    }
    double inv = 1.0 / sqrt(ss + 1e-6);
    for (int i = 0; i < n; i++)
        out[i] = out[i] * inv * mult;
}

/* Decay per key row for token (r, t) of value head hv. */
static void delta_decay(const ls_delta_params *p, int per_channel, int64_t rt, int hv, double *dec)
{
    const int K = p->dk;
    const double ea = exp((double)p->A_log[hv]);
    if (per_channel) {
        const uint16_t *a = p->a + (rt * p->heads_v + hv) * K;
        const float *dtb = (const float *)p->dt_bias + (int64_t)hv * K;
        for (int k = 0; k < K; k++)
            dec[k] = exp(-ea * ls_ref_softplus((double)ls_bf16_to_f32(a[k]) + (double)dtb[k]));
    } else {
        double a = (double)ls_bf16_to_f32(p->a[rt * p->heads_v + hv]);
        double dtb = (double)ls_bf16_to_f32(((const uint16_t *)p->dt_bias)[hv]);
        double d = exp(-ea * ls_ref_softplus(a + dtb));
        for (int k = 0; k < K; k++)
            dec[k] = d;
    }
}

/*
 * One token on S (K x V, V innermost): S <- diag(dec) S; u = beta (v - S^T kn); S += kn u^T;
 * o = S^T qn. Loops run over V innermost with restrict pointers so they vectorise; the sums
 * over k are accumulated in k order into per-v accumulators (no cross-lane reduction).
 */
static void delta_step(double *restrict S, const double *restrict dec, const double *restrict kn,
                       const double *restrict qn, const uint16_t *restrict vt, double beta,
                       double *restrict u, double *restrict o, int K, int V)
{
    for (int v = 0; v < V; v++)
        u[v] = 0.0;
    for (int k = 0; k < K; k++) {
        double *restrict row = S + (int64_t)k * V;
        const double dk = dec[k], kk = kn[k];
        for (int v = 0; v < V; v++) {
            row[v] *= dk;
            u[v] += row[v] * kk;
        }
    }
    for (int v = 0; v < V; v++)
        u[v] = beta * ((double)ls_bf16_to_f32(vt[v]) - u[v]);
    for (int v = 0; v < V; v++)
        o[v] = 0.0;
    for (int k = 0; k < K; k++) {
        double *restrict row = S + (int64_t)k * V;
        const double kk = kn[k], qq = qn[k];
        for (int v = 0; v < V; v++) {
            row[v] += kk * u[v];
            o[v] += row[v] * qq;
        }
    }
}

/* One head's state between memory (layout p->state_layout) and S (K x V, V innermost); tmp holds
 * K*V doubles for the transpose of the VK layout. */
static void state_load(const ls_delta_params *p, const char *src, double *S, double *tmp)
{
    const int K = p->dk, V = p->dv;
    if (p->state_layout == LS_STATE_KV) {
        ls_ref_load(src, p->state_dtype, (int64_t)K * V, S);
        return;
    }
    ls_ref_load(src, p->state_dtype, (int64_t)K * V, tmp);
    for (int v = 0; v < V; v++)
        for (int k = 0; k < K; k++)
            S[(int64_t)k * V + v] = tmp[(int64_t)v * K + k];
}

static void state_store(const ls_delta_params *p, char *dst, const double *S, double *tmp)
{
    const int K = p->dk, V = p->dv;
    if (p->state_layout == LS_STATE_KV) {
        ls_ref_store(dst, p->state_dtype, (int64_t)K * V, S);
        return;
    }
    for (int v = 0; v < V; v++)
        for (int k = 0; k < K; k++)
            tmp[(int64_t)v * K + k] = S[(int64_t)k * V + v];
    ls_ref_store(dst, p->state_dtype, (int64_t)K * V, tmp);
}

/* The recurrence for one (row r, value head hv); scratch holds 2*K*V + 3K + 2V doubles. */
static void delta_item(const ls_delta_params *p, int per_channel, int64_t r, int hv,
                       double *scratch)
{
    const int K = p->dk, V = p->dv, T = p->tokens, H = p->heads_qk, HV = p->heads_v;
    const int h = hv / (HV / H);
    const int64_t KV = (int64_t)K * V, step = (int64_t)HV * KV;
    double *S = scratch, *qn = S + KV, *kn = qn + K, *dec = kn + K, *u = dec + K, *o = u + V, *tmp = o + V;
    const int32_t s = p->slot_idx[r];
    const int64_t esz = (int64_t)ls_dtype_size(p->state_dtype);
    char *state =
        s >= 0 ? (char *)p->state + ((int64_t)s * p->state_stride_slot + hv * KV) * esz : NULL;

    const int64_t sq = p->q_stride_tok ? p->q_stride_tok : (int64_t)H * K;
    const int64_t sk = p->k_stride_tok ? p->k_stride_tok : (int64_t)H * K;
    const int64_t sv = p->v_stride_tok ? p->v_stride_tok : (int64_t)HV * V;
    if (state)
        state_load(p, state, S, tmp);
    else
        memset(S, 0, sizeof(double) * (size_t)KV);

    for (int t = 0; t < T; t++) {
        const int64_t rt = r * T + t;
        delta_decay(p, per_channel, rt, hv, dec);
        const double beta = ls_ref_sigmoid((double)ls_bf16_to_f32(p->b[rt * HV + hv]));
        l2norm_bf16(p->q + rt * sq + h * K, K, (double)p->scale, qn);
        l2norm_bf16(p->k + rt * sk + h * K, K, 1.0, kn);
        delta_step(S, dec, kn, qn, p->v + rt * sv + hv * V, beta, u, o, K, V);
        ls_ref_store_bf16(p->o + (rt * HV + hv) * V, V, o);
        if (p->inter && state) {
            char *in =
                (char *)p->inter + ((int64_t)s * p->inter_stride_slot + t * step + hv * KV) * esz;
            state_store(p, in, S, tmp);
        }
    }
    if (!p->disable_state_update && state)
        state_store(p, state, S, tmp);
}

static int delta_range(void *vctx, int64_t begin, int64_t end)
{
    const delta_ctx *cx = (const delta_ctx *)vctx;
    const ls_delta_params *p = cx->p;
    size_t n = 2u * (size_t)p->dk * (size_t)p->dv + 3u * (size_t)p->dk + 2u * (size_t)p->dv;
    double *scratch = malloc(sizeof(double) * n);
    if (!scratch)
        return ls_fail("%s: out of memory (state scratch K=%d V=%d)",
                       cx->per_channel ? "kda" : "gdn", (int)p->dk, (int)p->dv);
    for (int64_t it = begin; it < end; it++)
        delta_item(p, cx->per_channel, it / p->heads_v, (int)(it % p->heads_v), scratch);
    free(scratch);
    return 0;
}

static int delta_run(const ls_delta_params *p, int per_channel)
{
    if (ls_delta_params_check(p, per_channel) ||
        ls_slots_check(per_channel ? "kda" : "gdn", p->slot_idx, p->batch, p->slots))
        return -1;
    delta_ctx cx = {.p = p, .per_channel = per_channel};
    double work = 6.0 * (double)p->tokens * (double)p->dk * (double)p->dv;
    return ls_ref_parallel((int64_t)p->batch * p->heads_v, work, delta_range, &cx);
}

int ls_ref_gdn(const ls_delta_params *p) { return delta_run(p, 0); }
int ls_ref_kda(const ls_delta_params *p) { return delta_run(p, 1); }
