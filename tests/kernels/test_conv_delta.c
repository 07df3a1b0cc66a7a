/*
 * test_conv_delta.c — the fused conv update + delta rule's contract on the host (docs/ops.md):
 * the field checks name the bad field; ls_ref_conv_delta equals the two reference ops run back
 * to back through the other split (one packed conv + q/k/v token strides), bit for bit; a
 * padding row reads and writes nothing (o keeps its content); a T-token update that commits
 * both states equals T single-token decodes. GDN and KDA, both conv orientations, both state
 * dtypes, W = 2..4, with and without bias.
 */
#include <string.h>

#include "ls_test.h"
#include "ls_kernels.h"

enum { B = 3, SLOTS = 5, MAXT = 4 };

typedef struct fx {
    int kda, T, H, HV, K, V, W, C, window_major, bias;
    ls_dtype sdt, wdt;
    uint16_t *x, *a, *b, *o;
    float *A_log;
    void *dt_bias, *w, *bw, *cstate, *cinter, *state, *inter;
    int32_t slot[B];
    ls_conv_delta_params p;
} fx;

static uint64_t seed = 7;

static void *rand_arr(size_t n, ls_dtype dt, double lo, double hi)
{
    void *p = calloc(n, ls_dtype_size(dt));
    for (size_t i = 0; i < n; i++) {
        double v = ls_test_uniform(&seed, lo, hi);
        if (dt == LS_F32)
            ((float *)p)[i] = (float)v;
        else
            ((uint16_t *)p)[i] = ls_f32_to_bf16((float)v);
    }
    return p;
}

static void fx_make(fx *f, int kda, int T, int H, int G, int K, int V, int W, int window_major, ls_dtype sdt, int bias,
                    int commit)
{
    memset(f, 0, sizeof *f);
    *f = (fx){.kda = kda, .T = T, .H = H, .HV = H * G, .K = K, .V = V, .W = W, .window_major = window_major,
              .bias = bias, .sdt = sdt, .wdt = kda ? LS_F32 : LS_BF16};
    f->C = 2 * H * K + f->HV * V;
    const size_t BT = (size_t)B * T, ng = kda ? (size_t)f->HV * K : (size_t)f->HV;
    const size_t item = (size_t)f->HV * K * V, citem = (size_t)f->C * (W - 1);
    f->x = rand_arr(BT * f->C, LS_BF16, -1, 1);
    f->a = rand_arr(BT * ng, LS_BF16, -3, 1);
    f->b = rand_arr(BT * f->HV, LS_BF16, -2, 2);
    f->o = rand_arr(BT * f->HV * V, LS_BF16, 5, 6); /* sentinel content */
    f->A_log = rand_arr(f->HV, LS_F32, -2, 0.5);
    f->dt_bias = rand_arr(ng, kda ? LS_F32 : LS_BF16, -0.5, 0.5);
    f->w = rand_arr((size_t)f->C * W, f->wdt, -0.5, 0.5);
    f->bw = bias ? rand_arr(f->C, f->wdt, -0.5, 0.5) : NULL;
    f->cstate = rand_arr(SLOTS * citem, LS_BF16, -1, 1);
    f->cinter = T > 1 ? rand_arr(SLOTS * citem * T, LS_BF16, 7, 8) : NULL;
    f->state = rand_arr(SLOTS * item, sdt, -1, 1);
    f->inter = T > 1 ? rand_arr(SLOTS * item * T, sdt, 7, 8) : NULL;
    f->slot[0] = 3, f->slot[1] = -1, f->slot[2] = 0; /* row 1 is padding */
    ls_conv_params *c = &f->p.conv;
    ls_delta_params *d = &f->p.delta;
    f->p.kda = kda;
    c->batch = d->batch = B;
    c->tokens = d->tokens = T;
    c->channels = f->C;
    c->width = W;
    c->silu = 1;
    c->disable_state_update = d->disable_state_update = !commit;
    c->weight_dtype = f->wdt;
    c->state_dtype = LS_BF16;
    c->x = f->x;
    c->x_stride_b = (int64_t)T * f->C, c->x_stride_t = f->C, c->x_stride_c = 1;
    c->weight = f->w;
    c->bias = f->bw;
    c->state = f->cstate;
    c->state_stride_slot = (int64_t)citem;
    c->state_stride_c = window_major ? 1 : W - 1;
    c->state_stride_w = window_major ? f->C : 1;
    c->slot_idx = d->slot_idx = f->slot;
    c->slots = d->slots = SLOTS;
    if (T > 1) {
        c->inter = f->cinter;
        c->inter_stride_slot = (int64_t)(citem * T), c->inter_stride_t = (int64_t)citem;
        c->inter_stride_c = c->state_stride_c, c->inter_stride_w = c->state_stride_w;
        d->inter = f->inter;
        d->inter_stride_slot = (int64_t)(item * T);
    }
    d->heads_qk = H, d->heads_v = f->HV, d->dk = K, d->dv = V;
    d->scale = (float)(1.0 / sqrt((double)K));
    d->state_dtype = sdt;
    d->a = f->a, d->b = f->b, d->A_log = f->A_log, d->dt_bias = f->dt_bias, d->o = f->o;
    d->state = f->state;
    d->state_stride_slot = (int64_t)item;
}

/* A deep copy of every output buffer, pointers re-aimed. */
static void fx_clone(const fx *f, fx *g)
{
    *g = *f;
    const size_t BT = (size_t)B * f->T, item = (size_t)f->HV * f->K * f->V, citem = (size_t)f->C * (f->W - 1);
    size_t ss = ls_dtype_size(f->sdt);
#define DUP(field, bytes) (g->field = memcpy(malloc(bytes), f->field, bytes))
    DUP(o, BT * f->HV * f->V * 2);
    DUP(cstate, SLOTS * citem * 2);
    DUP(state, SLOTS * item * ss);
    if (f->T > 1) {
        DUP(cinter, SLOTS * citem * f->T * 2);
        DUP(inter, SLOTS * item * f->T * ss);
    }
#undef DUP
    g->p.delta.o = g->o, g->p.conv.state = g->cstate, g->p.delta.state = g->state;
    g->p.conv.inter = g->cinter, g->p.delta.inter = g->inter;
}

/* Frees what fx_make allocated. */
static void fx_free(fx *f)
{
    void *all[] = {f->x, f->a, f->b, f->o, f->A_log, f->dt_bias, f->w, f->bw, f->cstate, f->cinter, f->state, f->inter};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* Frees the output buffers fx_clone duplicated. */
static void fx_free_clone(fx *g)
{
    free(g->o), free(g->cstate), free(g->state), free(g->cinter), free(g->inter);
}

static int same(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

static void check_equal(const fx *f, const fx *g, const char *what)
{
    const size_t BT = (size_t)B * f->T, item = (size_t)f->HV * f->K * f->V, citem = (size_t)f->C * (f->W - 1);
    size_t ss = ls_dtype_size(f->sdt);
    int ok = same(f->o, g->o, BT * f->HV * f->V * 2) && same(f->cstate, g->cstate, SLOTS * citem * 2) &&
             same(f->state, g->state, SLOTS * item * ss);
    if (f->T > 1)
        ok = ok && same(f->cinter, g->cinter, SLOTS * citem * f->T * 2) && same(f->inter, g->inter, SLOTS * item * f->T * ss);
    if (!ok)
        fprintf(stderr, "mismatch: %s kda=%d T=%d W=%d wm=%d sdt=%s\n", what, f->kda, f->T, f->W, f->window_major,
                ls_dtype_name(f->sdt));
    LS_CHECK(ok);
}

/* The oracle against the packed back-to-back form, and the padding row. */
static void test_oracle(fx *f)
{
    fx g;
    fx_clone(f, &g);
    const size_t orow = (size_t)f->T * f->HV * f->V;
    uint16_t *sentinel = memcpy(malloc(orow * 2), f->o + orow, orow * 2);
    LS_REQUIRE(ls_ref_conv_delta(&f->p) == 0);
    LS_CHECK(same(f->o + orow, sentinel, orow * 2)); /* padding row 1: o untouched */
    uint16_t *qkv = calloc((size_t)B * f->T * f->C, 2);
    ls_conv_params conv[3];
    ls_delta_params rec;
    int n_conv = 0;
    LS_REQUIRE(ls_conv_delta_split(&g.p, qkv, 1, conv, &n_conv, &rec) == 0);
    LS_CHECK_EQ_INT(n_conv, 1);
    LS_REQUIRE(ls_ref_conv_update(&conv[0]) == 0);
    LS_REQUIRE((f->kda ? ls_ref_kda(&rec) : ls_ref_gdn(&rec)) == 0);
    memcpy(g.o + orow, sentinel, orow * 2); /* back to back writes o of the padding row: the fused op does not */
    check_equal(f, &g, "oracle vs packed back-to-back");
    free(qkv);
    free(sentinel);
    fx_free_clone(&g);
}

/* T tokens committed at once == T single-token decodes (o, both states). */
static void test_steps(int kda, int W, int window_major, ls_dtype sdt)
{
    const int T = 3;
    fx f, s;
    fx_make(&f, kda, T, 2, 2, 8, 6, W, window_major, sdt, 1, 1);
    f.p.conv.inter = NULL, f.p.delta.inter = NULL;
    fx_clone(&f, &s);
    LS_REQUIRE(ls_ref_conv_delta(&f.p) == 0);
    const size_t hv_v = (size_t)f.HV * f.V;
    uint16_t *o1 = malloc((size_t)B * hv_v * 2), *x1 = malloc((size_t)B * f.C * 2);
    uint16_t *a1 = malloc((size_t)B * f.HV * f.K * 2), *b1 = malloc((size_t)B * f.HV * 2);
    const size_t ng = kda ? (size_t)f.HV * f.K : (size_t)f.HV;
    for (int t = 0; t < T; t++) {
        for (int r = 0; r < B; r++) {
            memcpy(x1 + (size_t)r * f.C, f.x + ((size_t)r * T + t) * f.C, (size_t)f.C * 2);
            memcpy(a1 + r * ng, f.a + ((size_t)r * T + t) * ng, ng * 2);
            memcpy(b1 + (size_t)r * f.HV, f.b + ((size_t)r * T + t) * f.HV, (size_t)f.HV * 2);
            memcpy(o1 + r * hv_v, s.o + ((size_t)r * T + t) * hv_v, hv_v * 2);
        }
        ls_conv_delta_params q = s.p;
        q.conv.tokens = q.delta.tokens = 1;
        q.conv.x = x1, q.conv.x_stride_b = f.C, q.conv.x_stride_t = f.C;
        q.delta.a = a1, q.delta.b = b1, q.delta.o = o1;
        LS_REQUIRE(ls_ref_conv_delta(&q) == 0);
        for (int r = 0; r < B; r++)
            memcpy(s.o + ((size_t)r * T + t) * hv_v, o1 + r * hv_v, hv_v * 2);
    }
    /* the decodes round each state to its dtype between tokens: exact for fp32 state only */
    const size_t item = (size_t)f.HV * f.K * f.V, citem = (size_t)f.C * (W - 1);
    LS_CHECK(same(f.cstate, s.cstate, SLOTS * citem * 2));
    double worst = 0;
    for (size_t i = 0; i < (size_t)B * T * hv_v; i++) {
        double d = fabs((double)ls_bf16_to_f32(f.o[i]) - (double)ls_bf16_to_f32(s.o[i]));
        worst = d > worst ? d : worst;
    }
    for (size_t i = 0; i < SLOTS * item; i++) {
        double u = sdt == LS_F32 ? ((float *)f.state)[i] : ls_bf16_to_f32(((uint16_t *)f.state)[i]);
        double v = sdt == LS_F32 ? ((float *)s.state)[i] : ls_bf16_to_f32(((uint16_t *)s.state)[i]);
        worst = fabs(u - v) > worst ? fabs(u - v) : worst;
    }
    LS_CHECK_NEAR(worst, 0.0, sdt == LS_F32 ? 1e-5 : 3e-2, 0);
    free(o1), free(x1), free(a1), free(b1);
    fx_free_clone(&s);
    fx_free(&f);
}

static void expect_fail(const ls_conv_delta_params *p, const char *needle)
{
    LS_CHECK(ls_conv_delta_params_check(p) != 0);
    if (!strstr(ls_last_error(), needle)) {
        fprintf(stderr, "error '%s' does not name '%s'\n", ls_last_error(), needle);
        LS_CHECK(0);
    }
}

static void test_checks(void)
{
    fx f;
    fx_make(&f, 0, 2, 2, 2, 8, 6, 4, 0, LS_F32, 0, 0);
    LS_CHECK_EQ_INT(ls_conv_delta_params_check(&f.p), 0);
    ls_conv_delta_params p = f.p;
    p.kda = 2;
    expect_fail(&p, "kda=2");
    p = f.p, p.conv.y = f.o;
    expect_fail(&p, "conv.y");
    p = f.p, p.delta.k = f.x;
    expect_fail(&p, "delta.k");
    p = f.p, p.conv.channels -= 1;
    expect_fail(&p, "channels=");
    p = f.p, p.conv.tokens = 1;
    expect_fail(&p, "batch/tokens");
    int32_t other[B] = {0, 1, 2};
    p = f.p, p.conv.slot_idx = other;
    expect_fail(&p, "slot_idx");
    p = f.p, p.delta.slots = 4;
    expect_fail(&p, "slots=");
    p = f.p, p.conv.width = 5;
    expect_fail(&p, "width=5");
    p = f.p, p.delta.heads_v = 3;
    expect_fail(&p, "heads_v=3");
    f.slot[0] = SLOTS; /* the slot contract, enforced by the reference */
    LS_CHECK(ls_ref_conv_delta(&f.p) != 0);
    LS_CHECK(strstr(ls_last_error(), "slot_idx[0]=5") != NULL);
    LS_CHECK(ls_impl_op(ls_impl_get("host"), LS_OP_CONV_DELTA) != NULL);
    LS_CHECK(strcmp(ls_op_name(LS_OP_CONV_DELTA), "conv_delta") == 0);
    fx_free(&f);
}

int main(void)
{
    test_checks();
    for (int kda = 0; kda < 2; kda++)
        for (int wm = 0; wm < 2; wm++)
            for (int W = 2; W <= 4; W++)
                for (int T = 1; T <= MAXT; T += 3)
                    for (int sd = 0; sd < 2; sd++) {
                        fx f;
                        fx_make(&f, kda, T, 2, kda ? 1 : 2, 8, 6, W, wm, sd ? LS_BF16 : LS_F32, W != 3, T == 1);
                        test_oracle(&f);
                        fx_free(&f);
                    }
    for (int kda = 0; kda < 2; kda++)
        for (int W = 2; W <= 4; W++) {
            test_steps(kda, W, kda, LS_F32);
            test_steps(kda, W, !kda, LS_BF16);
        }
    return ls_test_exit();
}
