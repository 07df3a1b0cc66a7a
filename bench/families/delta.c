/*
 * delta.c — the gdn and kda families: both run the gated delta rule over the pool's temporal state
 * through ls_delta_params (docs/ops.md). They differ only in the gate (the `kda` flag below, from
 * the model's mechanism) and in their bytes:
 *   gdn: Gated DeltaNet (Qwen3-Next) fused decode and target verify with the gating fused into
 *        the recurrence: scalar decay per value head, a [B,T,HV] bf16, bf16 dt_bias [HV].
 *   kda: Kimi Delta Attention decode as the fused in-place kernel of HEAD-fork (one state round
 *        trip; per-key-channel decay from the raw gate [B,T,HV,K], fp32 dt_bias [HV*K]), and a
 *        T-token verify with intermediate states (no upstream counterpart at AFTER; same contract
 *        as GDN verify).
 *
 * Decode (T = 1) updates the state in place. Verify (T > 1) writes T intermediate states into the
 * speculative buffer and no final state (disable_state_update), as SGLang's target verify does.
 * Launches rotate over layers. Every rotated layer has its own activations (q, k, v, a, b), output
 * o and parameters (A_log, dt_bias), as in a real forward pass (docs/timing.md "Setup"); they
 * count in the rotation's memory budget. Verification runs on layer 0.
 */
#include <math.h>
#include <string.h>

#include "family.h"

typedef struct delta_priv {
    int kda, T, B, H, HV, K, V;
    int packed;         /* q, k, v as views into one [B*T, 2HK + HV*V] row per token */
    uint16_t *q_h, *k_h, *v_h, *a_h, *b_h;
    float *A_log_h;
    void *dt_bias_h;
    ls_delta_params *p; /* [n_rot] */
} delta_priv;

static size_t gate_elems(const delta_priv *p)
{
    return p->kda ? (size_t)p->HV * p->K : (size_t)p->HV;
}

/* Bytes one rotated layer holds besides its pool share: q, k, v, a, b and o (bf16), A_log (fp32
 * [HV]) and dt_bias (KDA fp32 [HV*K], GDN bf16 [HV]). */
static int64_t delta_layer_inputs(const bench_case *c, int kda)
{
    const ls_shape *sh = &c->shape;
    int64_t BT = (int64_t)c->batch * c->tokens, ng = kda ? (int64_t)sh->heads_v * sh->dk : sh->heads_v;
    int64_t nq = BT * sh->heads_qk * sh->dk, nv = BT * sh->heads_v * sh->dv;
    return 2 * (2 * nq + 2 * nv + BT * ng + BT * sh->heads_v) + 4 * (int64_t)sh->heads_v + ng * (kda ? 4 : 2);
}

/* One row per token: q (hk), k (hk), v (hv) side by side. */
static void pack_qkv(uint16_t *dst, const uint16_t *q, const uint16_t *k, const uint16_t *v, size_t tokens,
                     size_t hk, size_t hv)
{
    const size_t row = 2 * hk + hv;
    for (size_t i = 0; i < tokens; i++) {
        memcpy(dst + i * row, q + i * hk, hk * 2);
        memcpy(dst + i * row + hk, k + i * hk, hk * 2);
        memcpy(dst + i * row + 2 * hk, v + i * hv, hv * 2);
    }
}

/* gdn decode: docs/bytes.md ("GDN fused decode"). gdn verify: the recurrence row with our fused
 * gating (a, b bf16 instead of g, β fp32; see ls_bytes_gdn_verify_fused). kda: docs/bytes.md
 * ("KDA decode, fused") (recurrence only); verify per ls_bytes_kda's documented rule. */
static int64_t delta_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    const ls_shape *s = &c->shape;
    int64_t s_s = (int64_t)ls_dtype_size(c->state_dtype);
    if (c->model->mechanism == LS_MECH_KDA)
        return ls_bytes_kda(c->batch, c->tokens, s->heads_qk, s->heads_v, s->dk, s->dv, 2, s_s, c->tokens > 1);
    if (c->tokens == 1)
        return ls_bytes_gdn_decode(c->batch, 1, s->heads_qk, s->heads_v, s->dk, s->dv, 2, s_s);
    return ls_bytes_gdn_verify_fused(c->batch, c->tokens, s->heads_qk, s->heads_v, s->dk, s->dv, 2, s_s);
}

static int delta_setup(bench_ctx *x)
{
    const bench_case *c = x->c;
    const int kda = c->model->mechanism == LS_MECH_KDA;
    const ls_shape *sh = &c->shape;
    int T = c->tokens, B = c->batch, spec = T > 1 ? T : 0, rc;
    ls_state_desc d;
    if (ls_state_desc_from_shape(sh, c->state_dtype, spec, &d) != 0)
        return -1;
    int32_t S = bench_case_capacity(c, x->env);
    if ((rc = bench_kernel_setup(x, &d, S, delta_layer_inputs(c, kda), 1, sizeof(delta_priv))) != 0)
        return rc;
    const int n_rot = x->n_rot;
    delta_priv *p = x->priv;
    *p = (delta_priv){.kda = kda, .T = T, .B = B, .H = sh->heads_qk, .HV = sh->heads_v, .K = sh->dk, .V = sh->dv};
    size_t BT = (size_t)B * T, nq = BT * p->H * p->K, nv = BT * p->HV * p->V, ng = gate_elems(p);
    /* An impl that reads q, k, v through token strides gets them packed, as SGLang's mixed_qkv
     * rows are; the values are the same draws as the three separate tensors of other impls. */
    p->packed = (x->im->caps & LS_IMPL_QKV_STRIDES) != 0;
    const size_t hk = (size_t)p->H * p->K, row = 2 * hk + (size_t)p->HV * p->V;
    size_t lq = nq, lv = nv; /* elements between layers of q/k and of v */
    void *h[7] = {NULL};
    uint16_t *q, *k, *v;
    if (p->packed) {
        h[0] = bench_host_rand(x, nq, LS_BF16, -1.0, 1.0);
        h[1] = bench_host_rand(x, nq, LS_BF16, -1.0, 1.0);
        h[2] = bench_host_rand(x, nv, LS_BF16, -1.0, 1.0);
        uint16_t *ph = bench_host_alloc(x, BT * row * 2);
        if (!h[0] || !h[1] || !h[2] || !ph)
            return -1;
        pack_qkv(ph, h[0], h[1], h[2], BT, hk, (size_t)p->HV * p->V);
        q = bench_dev_layers_from(x, n_rot, ph, BT * row, LS_BF16, -1.0, 1.0);
        k = q ? q + hk : NULL;
        v = q ? q + 2 * hk : NULL;
        lq = lv = BT * row;
    } else {
        q = bench_dev_rand_layers(x, n_rot, nq, LS_BF16, -1.0, 1.0, &h[0]);
        k = bench_dev_rand_layers(x, n_rot, nq, LS_BF16, -1.0, 1.0, &h[1]);
        v = bench_dev_rand_layers(x, n_rot, nv, LS_BF16, -1.0, 1.0, &h[2]);
    }
    uint16_t *a = bench_dev_rand_layers(x, n_rot, BT * ng, LS_BF16, -3.0, 1.0, &h[3]);
    uint16_t *b = bench_dev_rand_layers(x, n_rot, BT * p->HV, LS_BF16, -2.0, 2.0, &h[4]);
    float *A_log = bench_dev_rand_layers(x, n_rot, (size_t)p->HV, LS_F32, -2.0, 0.5, &h[5]);
    /* dt_bias: KDA fp32 [HV*K]; GDN bf16 [HV] (ls_kernels.h) */
    ls_dtype dt_dt = kda ? LS_F32 : LS_BF16;
    char *dt_bias = bench_dev_rand_layers(x, n_rot, ng, dt_dt, -0.5, 0.5, &h[6]);
    uint16_t *o = bench_dev_alloc(x, nv * 2 * (size_t)n_rot);
    p->p = bench_host_alloc(x, sizeof *p->p * (size_t)n_rot);
    if (!q || !k || !v || !a || !b || !A_log || !dt_bias || !o || !p->p)
        return -1;
    p->q_h = h[0], p->k_h = h[1], p->v_h = h[2], p->a_h = h[3], p->b_h = h[4], p->A_log_h = h[5];
    p->dt_bias_h = h[6];
    int64_t item = (int64_t)p->HV * p->K * p->V;
    for (int l = 0; l < n_rot; l++) {
        ls_delta_params *dp = &p->p[l];
        memset(dp, 0, sizeof *dp);
        dp->batch = B;
        dp->tokens = T;
        dp->heads_qk = p->H;
        dp->heads_v = p->HV;
        dp->dk = p->K;
        dp->dv = p->V;
        dp->disable_state_update = T > 1;
        dp->scale = (float)(1.0 / sqrt((double)p->K));
        dp->state_dtype = c->state_dtype;
        dp->q = q + (size_t)l * lq;
        dp->k = k + (size_t)l * lq;
        dp->v = v + (size_t)l * lv;
        dp->state_layout = c->layout;
        if (p->packed)
            dp->q_stride_tok = dp->k_stride_tok = dp->v_stride_tok = (int64_t)row;
        dp->a = a + (size_t)l * BT * ng;
        dp->b = b + (size_t)l * BT * p->HV;
        dp->A_log = A_log + (size_t)l * p->HV;
        dp->dt_bias = dt_bias + (size_t)l * ng * ls_dtype_size(dt_dt);
        dp->o = o + (size_t)l * nv;
        dp->state = ls_pool_temporal(x->pool, l);
        dp->state_stride_slot = item;
        dp->slot_idx = bench_layer_slots(x, l);
        dp->slots = ls_pool_slots(x->pool); /* the view's slot count: the index contract */
        if (spec) {
            dp->inter = ls_pool_spec_temporal(x->pool, l);
            dp->inter_stride_slot = item * T;
        }
    }
    return 0;
}

static int delta_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    delta_priv *p = x->priv;
    return bench_impl_rc(x, p->kda ? x->im->kda(&p->p[rot], x->tune, s) : x->im->gdn(&p->p[rot], x->tune, s));
}

/* Sub-batch of the sampled rows on layer 0: backend op vs ls_ref_gdn / ls_ref_kda. */
static int delta_verify(bench_ctx *x, double *max_rel_err)
{
    delta_priv *p = x->priv;
    const ls_delta_params *base = &p->p[0];
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows), T = p->T;
    int32_t *dslots, *compact, *hslots = bench_sub_slots(x, rows, n, &dslots, &compact);
    size_t item = (size_t)p->HV * p->K * p->V, ng = gate_elems(p);
    size_t row_q = (size_t)T * p->H * p->K * 2, row_v = (size_t)T * p->HV * p->V * 2;
    void *qd, *kd, *vd, *ad, *bd, *od;
    ls_delta_params dp = *base, hp = *base;
    if (!hslots)
        return -1;
    hp.q = bench_gather(x, p->q_h, row_q, rows, n, &qd);
    hp.k = bench_gather(x, p->k_h, row_q, rows, n, &kd);
    hp.v = bench_gather(x, p->v_h, row_v, rows, n, &vd);
    hp.a = bench_gather(x, p->a_h, (size_t)T * ng * 2, rows, n, &ad);
    hp.b = bench_gather(x, p->b_h, (size_t)T * p->HV * 2, rows, n, &bd);
    hp.o = bench_output_pair(x, (size_t)n * T * p->HV * p->V, LS_BF16, &od);
    bench_state_gate g = {base->state, base->state_stride_slot, base->inter, base->inter_stride_slot, item, T,
                          base->state_dtype, hslots, n, NULL, NULL};
    if (bench_state_gate_begin(x, &g) != 0 || !hp.q || !hp.k || !hp.v || !hp.a || !hp.b || !hp.o)
        return -1;
    hp.state = g.ref;
    hp.batch = dp.batch = n;
    hp.A_log = p->A_log_h;
    hp.dt_bias = p->dt_bias_h;
    hp.state_stride_slot = (int64_t)item;
    hp.slot_idx = compact;
    hp.inter = g.inter_ref;
    hp.inter_stride_slot = (int64_t)(item * T);
    hp.q_stride_tok = hp.k_stride_tok = hp.v_stride_tok = 0; /* the reference reads the compact copies */
    dp.q = qd;
    dp.k = kd;
    dp.v = vd;
    if (p->packed) { /* the impl reads the sub-batch packed, as it reads the timed batch */
        const size_t hk = (size_t)p->H * p->K, hv = (size_t)p->HV * p->V, toks = (size_t)n * T;
        uint16_t *ph = bench_host_alloc(x, toks * (2 * hk + hv) * 2);
        uint16_t *pd = bench_dev_alloc(x, toks * (2 * hk + hv) * 2);
        if (!ph || !pd)
            return -1;
        pack_qkv(ph, hp.q, hp.k, hp.v, toks, hk, hv);
        if (x->be->copy_h2d(pd, ph, toks * (2 * hk + hv) * 2) != 0)
            return -1;
        dp.q = pd, dp.k = pd + hk, dp.v = pd + 2 * hk;
    }
    dp.a = ad;
    dp.b = bd;
    dp.o = od;
    dp.slot_idx = dslots;
    int rc = bench_impl_rc(x, p->kda ? x->im->kda(&dp, x->tune, NULL) : x->im->gdn(&dp, x->tune, NULL));
    if (rc != 0 || x->be->sync(NULL) != 0 || (p->kda ? ls_ref_kda(&hp) : ls_ref_gdn(&hp)) != 0)
        return -1;
    return bench_verify_kernel(x, od, hp.o, (size_t)n * T * p->HV * p->V, &g, 1, max_rel_err);
}

static const void *delta_launch(const bench_ctx *x, ls_op *op)
{
    const delta_priv *p = x->priv;
    if (!p || !p->p)
        return NULL;
    *op = p->kda ? LS_OP_KDA : LS_OP_GDN;
    return &p->p[0];
}

/* clang-format off */
static const bench_entry rows[] = { /* bench_entry (bench.h) */
    {"gdn", "decode", "fused_gating", 1, GDN, B_ | D_ | G_ | P_, BENCH_DRAFT_DECODE,
     delta_setup, delta_run, NULL, delta_verify, NULL, delta_bytes, BENCH_OP(LS_OP_GDN), delta_launch},
    {"gdn", "verify", "fused_gating", 1, GDN, B_ | T_ | D_ | G_ | P_, BENCH_DRAFT_VERIFY,
     delta_setup, delta_run, NULL, delta_verify, NULL, delta_bytes, BENCH_OP(LS_OP_GDN), delta_launch},
    {"kda", "decode", "fused_inplace", 1, KDA, B_ | D_ | G_ | P_, BENCH_DRAFT_DECODE,
     delta_setup, delta_run, NULL, delta_verify, NULL, delta_bytes, BENCH_OP(LS_OP_KDA), delta_launch},
    {"kda", "verify", "fused_inplace", 1, KDA, B_ | T_ | D_ | G_ | P_, BENCH_DRAFT_VERIFY,
     delta_setup, delta_run, NULL, delta_verify, NULL, delta_bytes, BENCH_OP(LS_OP_KDA), delta_launch},
};
/* clang-format on */

const bench_family bench_family_delta = {rows, (int)(sizeof rows / sizeof rows[0])};
