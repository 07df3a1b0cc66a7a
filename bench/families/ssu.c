/*
 * ssu.c — the mamba2_ssu family: Mamba2 selective_state_update on the tied path (one dt and one
 * decay per head, docs/ops.md), decode in place and the #13434 verify (T tokens, intermediate
 * states, no final write). z = NULL as in SGLang (the gate runs in a separate RMSNorm).
 * Launches rotate over layers. Every rotated layer has its own activations (x, dt, B, C), output y
 * and parameters (A, dt_bias, D), as in a real forward pass (docs/timing.md "Setup"); they count
 * in the rotation's memory budget. Verification runs on layer 0.
 */
#include <string.h>

#include "family.h"

typedef struct ssu_priv {
    int T, B, nh, hd, ds, ng;
    uint16_t *x_h, *dt_h, *B_h, *C_h, *dt_bias_h, *D_h;
    float *A_h;
    ls_ssu_params *p; /* [n_rot] */
} ssu_priv;

/* docs/bytes.md ("Mamba2 selective_state_update, decode") / "Mamba2 verify (#13434)". */
static int64_t bench_ssu_bytes(const bench_ctx *x)
{
    const bench_case *c = x->c;
    const ls_shape *s = &c->shape;
    return ls_bytes_ssu(c->batch, c->tokens, s->nheads, s->head_dim, s->ngroups, s->dstate, 2,
                        (int64_t)ls_dtype_size(c->state_dtype), c->tokens > 1);
}

/* Bytes one rotated layer holds besides its pool share: x, y, dt, B, C (bf16), A (fp32 [nh]),
 * dt_bias and D (bf16 [nh]). */
static int64_t ssu_layer_inputs(const bench_case *c)
{
    const ls_shape *sh = &c->shape;
    int64_t BT = (int64_t)c->batch * c->tokens, nx = BT * sh->nheads * sh->head_dim;
    return 2 * (2 * nx + BT * sh->nheads + 2 * BT * sh->ngroups * sh->dstate) + (4 + 2 + 2) * (int64_t)sh->nheads;
}

static int bench_ssu_setup(bench_ctx *x)
{
    const bench_case *c = x->c;
    const ls_shape *sh = &c->shape;
    int T = c->tokens, B = c->batch, spec = T > 1 ? T : 0, rc;
    ls_state_desc d;
    if (ls_state_desc_from_shape(sh, c->state_dtype, spec, &d) != 0)
        return -1;
    int32_t S = bench_case_capacity(c, x->env);
    if ((rc = bench_kernel_setup(x, &d, S, ssu_layer_inputs(c), 1, sizeof(ssu_priv))) != 0)
        return rc;
    const int n_rot = x->n_rot;
    ssu_priv *p = x->priv;
    *p = (ssu_priv){.T = T, .B = B, .nh = sh->nheads, .hd = sh->head_dim, .ds = sh->dstate, .ng = sh->ngroups};
    size_t BT = (size_t)B * T, nx = BT * p->nh * p->hd, nbc = BT * p->ng * p->ds;
    size_t nh = (size_t)p->nh;
    void *h[7] = {NULL};
    uint16_t *xi = bench_dev_rand_layers(x, n_rot, nx, LS_BF16, -1.0, 1.0, &h[0]);
    uint16_t *dt = bench_dev_rand_layers(x, n_rot, BT * nh, LS_BF16, -2.0, 1.0, &h[1]);
    uint16_t *Bm = bench_dev_rand_layers(x, n_rot, nbc, LS_BF16, -1.0, 1.0, &h[2]);
    uint16_t *Cm = bench_dev_rand_layers(x, n_rot, nbc, LS_BF16, -1.0, 1.0, &h[3]);
    float *A = bench_dev_rand_layers(x, n_rot, nh, LS_F32, -2.0, -0.1, &h[4]); /* A = -exp(A_log) < 0 */
    uint16_t *dt_bias = bench_dev_rand_layers(x, n_rot, nh, LS_BF16, -0.5, 0.5, &h[5]);
    uint16_t *D = bench_dev_rand_layers(x, n_rot, nh, LS_BF16, -1.0, 1.0, &h[6]);
    uint16_t *y = bench_dev_alloc(x, nx * 2 * (size_t)n_rot);
    p->p = bench_host_alloc(x, sizeof *p->p * (size_t)n_rot);
    if (!xi || !dt || !Bm || !Cm || !A || !dt_bias || !D || !y || !p->p)
        return -1;
    p->x_h = h[0], p->dt_h = h[1], p->B_h = h[2], p->C_h = h[3], p->A_h = h[4], p->dt_bias_h = h[5], p->D_h = h[6];
    int64_t item = (int64_t)p->nh * p->hd * p->ds;
    for (int l = 0; l < n_rot; l++) {
        ls_ssu_params *q = &p->p[l];
        memset(q, 0, sizeof *q);
        q->batch = B;
        q->tokens = T;
        q->nheads = p->nh;
        q->head_dim = p->hd;
        q->dstate = p->ds;
        q->ngroups = p->ng;
        q->disable_state_update = T > 1;
        q->state_dtype = c->state_dtype;
        q->x = xi + (size_t)l * nx;
        q->dt = dt + (size_t)l * BT * nh;
        q->Bm = Bm + (size_t)l * nbc;
        q->Cm = Cm + (size_t)l * nbc;
        q->z = NULL;
        q->A = A + (size_t)l * nh;
        q->dt_bias = dt_bias + (size_t)l * nh;
        q->D = D + (size_t)l * nh;
        q->y = y + (size_t)l * nx;
        q->state = ls_pool_temporal(x->pool, l);
        q->state_stride_slot = item;
        q->slot_idx = bench_layer_slots(x, l);
        q->slots = ls_pool_slots(x->pool); /* the view's slot count: lets a backend guess early */
        if (spec) {
            q->inter = ls_pool_spec_temporal(x->pool, l);
            q->inter_stride_slot = item * T;
        }
    }
    return 0;
}

static int bench_ssu_run(void *vx, int rot, ls_stream s)
{
    bench_ctx *x = vx;
    ssu_priv *p = x->priv;
    return bench_impl_rc(x, x->im->ssu(&p->p[rot], x->tune, s));
}

/* Sub-batch of the sampled rows on layer 0: backend op vs ls_ref_ssu. */
static int bench_ssu_verify(bench_ctx *x, double *max_rel_err)
{
    ssu_priv *p = x->priv;
    const ls_ssu_params *base = &p->p[0];
    int rows[BENCH_VERIFY_ROWS], n = bench_pick_rows(x, rows), T = p->T;
    int32_t *dslots, *compact, *hslots = bench_sub_slots(x, rows, n, &dslots, &compact);
    size_t item = (size_t)p->nh * p->hd * p->ds, ny = (size_t)n * T * p->nh * p->hd;
    void *xd, *dtd, *Bd, *Cd, *yd;
    ls_ssu_params dp = *base, hp = *base;
    if (!hslots)
        return -1;
    hp.x = bench_gather(x, p->x_h, (size_t)T * p->nh * p->hd * 2, rows, n, &xd);
    hp.dt = bench_gather(x, p->dt_h, (size_t)T * p->nh * 2, rows, n, &dtd);
    hp.Bm = bench_gather(x, p->B_h, (size_t)T * p->ng * p->ds * 2, rows, n, &Bd);
    hp.Cm = bench_gather(x, p->C_h, (size_t)T * p->ng * p->ds * 2, rows, n, &Cd);
    hp.y = bench_output_pair(x, ny, LS_BF16, &yd);
    bench_state_gate g = {base->state, base->state_stride_slot, base->inter, base->inter_stride_slot, item, T,
                          base->state_dtype, hslots, n, NULL, NULL};
    if (bench_state_gate_begin(x, &g) != 0 || !hp.x || !hp.dt || !hp.Bm || !hp.Cm || !hp.y)
        return -1;
    hp.state = g.ref;
    hp.batch = dp.batch = n;
    hp.A = p->A_h;
    hp.dt_bias = p->dt_bias_h;
    hp.D = p->D_h;
    hp.state_stride_slot = (int64_t)item;
    hp.slot_idx = compact;
    hp.inter = g.inter_ref;
    hp.inter_stride_slot = (int64_t)(item * T);
    dp.x = xd;
    dp.dt = dtd;
    dp.Bm = Bd;
    dp.Cm = Cd;
    dp.y = yd;
    dp.slot_idx = dslots;
    if (bench_impl_rc(x, x->im->ssu(&dp, x->tune, NULL)) != 0 || x->be->sync(NULL) != 0 || ls_ref_ssu(&hp) != 0)
        return -1;
    return bench_verify_kernel(x, yd, hp.y, ny, &g, 1, max_rel_err);
}

static const void *bench_ssu_launch(const bench_ctx *x, ls_op *op)
{
    const ssu_priv *p = x->priv;
    if (!p || !p->p)
        return NULL;
    *op = LS_OP_SSU;
    return &p->p[0];
}

/* clang-format off */
static const bench_entry rows[] = { /* bench_entry (bench.h) */
    {"mamba2_ssu", "decode", "tied", 1, MAMBA2, B_ | D_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_ssu_setup, bench_ssu_run, NULL, bench_ssu_verify, NULL, bench_ssu_bytes, BENCH_OP(LS_OP_SSU), bench_ssu_launch},
    {"mamba2_ssu", "verify", "tied", 1, MAMBA2, B_ | T_ | D_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_ssu_setup, bench_ssu_run, NULL, bench_ssu_verify, NULL, bench_ssu_bytes, BENCH_OP(LS_OP_SSU), bench_ssu_launch},
};
/* clang-format on */

const bench_family bench_family_ssu = {rows, (int)(sizeof rows / sizeof rows[0])};
