/*
 * test_bench_verify.c — the correctness gate of linstate-bench. Every registry entry is set up
 * on the host backend and verified: the host backend IS the reference, so the error must be
 * exactly 0 (and the sampled sub-batch path, B > BENCH_VERIFY_ROWS, must work). Then a faulty
 * backend (the host table with one op broken: a corrupted output value, a corrupted state, an
 * unwritten output or intermediate state, a no-op pool kernel) must be caught: error over the
 * case's tolerance, +inf for anything left NaN-poisoned.
 */
#include <math.h>
#include <string.h>

#include "bench_testutil.h"

static ls_runtime fake;
static ls_impl fake_impl; /* the faulty ops; bt_impl points here while faulty() runs */
static const ls_impl *host_impl(void) { return ls_impl_get("host"); }
static int mode; /* which fault the fake backend injects */
static int64_t budget = (int64_t)1 << 30; /* memory budget of the cases below */

enum { OK = 0, BAD_OUT, BAD_STATE, NO_INTER, NOOP, NO_STRIDES, UNSUPPORTED };

static void bump_bf16(uint16_t *v)
{
    *v = ls_f32_to_bf16(ls_bf16_to_f32(*v) + 1.0f);
}

static void bump_state(void *state, int64_t stride, int32_t slot, ls_dtype dt)
{
    if (dt == LS_F32)
        ((float *)state)[stride * slot] += 1.0f;
    else
        bump_bf16((uint16_t *)state + stride * slot);
}

static int fake_delta(const ls_delta_params *p, const ls_tuning *t, ls_stream s, int kda)
{
    ls_delta_params q = *p;
    if (mode == NO_INTER)
        q.inter = NULL;
    if (mode == UNSUPPORTED && p->tokens > 1) /* a decode-only impl refusing verify by design */
        return LS_OP_UNSUPPORTED;
    if (mode == NO_STRIDES) /* claims LS_IMPL_QKV_STRIDES but reads packed rows as contiguous */
        q.q_stride_tok = q.k_stride_tok = q.v_stride_tok = 0;
    int rc = kda ? host_impl()->kda(&q, t, s) : host_impl()->gdn(&q, t, s);
    if (mode == BAD_OUT)
        bump_bf16(&p->o[0]);
    if (mode == BAD_STATE)
        bump_state(p->state, p->state_stride_slot, p->slot_idx[p->batch - 1], p->state_dtype);
    return rc;
}

static int fake_gdn(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    return fake_delta(p, t, s, 0);
}

static int fake_kda(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    return fake_delta(p, t, s, 1);
}

static int fake_ssu(const ls_ssu_params *p, const ls_tuning *t, ls_stream s)
{
    int rc = host_impl()->ssu(p, t, s);
    if (mode == BAD_OUT)
        bump_bf16(&p->y[(int64_t)p->batch * p->tokens * p->nheads * p->head_dim - 1]);
    return rc;
}

static int fake_conv(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    return mode == NOOP ? 0 : host_impl()->conv_update(p, t, s);
}

static int fake_copy_d2d(void *dst, const void *src, size_t bytes, ls_stream s)
{
    (void)dst, (void)src, (void)bytes, (void)s;
    return 0;
}

/* Remembers the last copy_d2d source (the clone variant's real layer buffer); the conv runs as
 * asked (on the clone) and then ALSO on that real buffer, so only the "real state untouched"
 * check of the clone variant can catch it. */
static const void *clone_real;
static int record_copy_d2d(void *dst, const void *src, size_t bytes, ls_stream s)
{
    clone_real = src;
    return ls_runtime_host()->copy_d2d(dst, src, bytes, s);
}

static int fake_conv_on_real(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    ls_conv_params q = *p;
    if (host_impl()->conv_update(p, t, s) != 0 || !clone_real)
        return clone_real ? -1 : 0;
    q.state = (void *)clone_real;
    return host_impl()->conv_update(&q, t, s);
}

static int fake_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return mode == NOOP ? 0 : host_impl()->state_copy(p, t, s);
}

static int fake_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return mode == NOOP ? 0 : host_impl()->state_accept(p, t, s);
}

static int fake_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return mode == NOOP ? 0 : host_impl()->state_zero(p, t, s);
}

/* Sets up the one case selected by (family, model, B, T, dtype, variant) on be and verifies it.
 * Returns the verification error; *tol gets the case's tolerance (-1 when setup said OOM). */
static double verify_variant(const ls_runtime *be, const char *family, const char *model, int batch, int draft,
                             ls_dtype dt, const char *variant, double *tol)
{
    bt_case t;
    bt_setup(&t, be, family, model, batch, draft, dt, variant, budget);
    const bench_case *c = t.c;
    if (t.setup_rc == BENCH_OOM) { /* the budget test: nothing may be left allocated */
        LS_CHECK(t.x.pool == NULL);
        bt_release(&t);
        *tol = -1;
        return NAN;
    }
    LS_REQUIRE(t.setup_rc == 0);
    LS_CHECK(t.x.pool != NULL && t.x.n_rot >= 1);
    double err = NAN;
    int rc = c->e->verify(&t.x, &err);
    if (rc != 0)
        fprintf(stderr, "%s: verify: %s\n", c->key, ls_last_error());
    LS_CHECK_EQ_INT(rc, 0);
    /* The timed callback also runs (reset first where the entry has one). */
    LS_CHECK(c->e->reset == NULL || c->e->reset(&t.x) == 0);
    LS_CHECK_EQ_INT(c->e->run(&t.x, 0, NULL), 0);
    *tol = bench_verify_tolerance(c);
    bt_release(&t);
    return err;
}

/* The default variant of the selected case. */
static double verify_case(const ls_runtime *be, const char *family, const char *model, int batch, int draft,
                          ls_dtype dt, double *tol)
{
    return verify_variant(be, family, model, batch, draft, dt, NULL, tol);
}

/* Every variant of the registry, verified on the host backend (error exactly 0), B 1 and 10. */
static void honest_variants(void)
{
    static const struct {
        const char *family, *model, *variant;
        int draft;
    } cases[] = {
        {"conv1d_update/decode", "kimi-linear-48b-a3b", "3-buffer", 1},
        {"conv1d_update/decode", "kimi-linear-48b-a3b", "concat", 1},
        {"conv1d_update/verify", "kimi-linear-48b-a3b", "3-buffer", 4},
        {"conv1d_update/verify", "kimi-linear-48b-a3b", "concat", 4},
        {"conv1d_update/verify", "qwen3-next-80b-a3b", "in-place", 4},
        {"conv1d_update/verify", "qwen3-next-80b-a3b", "clone", 4},
        {"conv1d_update/verify", "qwen3-next-80b-a3b", "clone", 2},
        {"pool/copy", "qwen3-next-80b-a3b", "fused", 1},
        {"pool/copy", "qwen3-next-80b-a3b", "per-tensor", 1},
        {"pool/copy", "kimi-linear-48b-a3b", "per-tensor", 1},
        {"pool/copy", "nemotron-h-8b", "per-tensor", 1},
        {"pool/accept", "qwen3-next-80b-a3b", "fused", 4},
        {"pool/accept", "qwen3-next-80b-a3b", "per-tensor", 4},
        {"pool/accept", "kimi-linear-48b-a3b", "per-tensor", 3},
        {"pool/accept", "nemotron-h-8b", "per-tensor", 2},
    };
    double tol;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int b = 1; b <= 10; b += 9) {
            double err = verify_variant(ls_runtime_host(), cases[i].family, cases[i].model, b, cases[i].draft,
                                        LS_F32, cases[i].variant, &tol);
            if (err != 0)
                fprintf(stderr, "%s %s %s B=%d: err %g\n", cases[i].family, cases[i].model, cases[i].variant, b, err);
            LS_CHECK(err == 0);
        }
    double err = verify_variant(ls_runtime_host(), "pool/accept", "kimi-linear-48b-a3b", 3, 2, LS_BF16, "per-tensor",
                                &tol);
    LS_CHECK(err == 0);
}

static void honest(void)
{
    static const struct {
        const char *family, *model;
        int draft;
    } cases[] = {
        {"conv1d_update/decode", "qwen3-next-80b-a3b", 1}, {"conv1d_update/verify", "kimi-linear-48b-a3b", 3},
        {"conv1d_update/verify", "nemotron-h-8b", 2},      {"gdn/decode", "qwen3-next-80b-a3b", 1},
        {"gdn/verify", "qwen3-next-80b-a3b", 3},           {"kda/decode", "kimi-linear-48b-a3b", 1},
        {"kda/verify", "kimi-linear-48b-a3b", 2},          {"mamba2_ssu/decode", "nemotron-h-8b", 1},
        {"mamba2_ssu/verify", "nemotron-h-8b", 4},         {"pool/alloc", "kimi-linear-48b-a3b", 1},
        {"pool/free", "nemotron-h-8b", 1},                 {"pool/copy", "qwen3-next-80b-a3b", 1},
        {"pool/fork", "kimi-linear-48b-a3b", 1},           {"pool/accept", "qwen3-next-80b-a3b", 3},
    };
    double tol;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int b = 1; b <= 10; b += 9) { /* 10 > BENCH_VERIFY_ROWS: the sampled sub-batch */
            double err = verify_case(ls_runtime_host(), cases[i].family, cases[i].model, b, cases[i].draft, LS_F32,
                                     &tol);
            if (err != 0)
                fprintf(stderr, "%s %s B=%d: err %g\n", cases[i].family, cases[i].model, b, err);
            LS_CHECK(err == 0);
        }
    double err = verify_case(ls_runtime_host(), "gdn/verify", "qwen3-next-80b-a3b", 4, 2, LS_BF16, &tol);
    LS_CHECK(err == 0);
    LS_CHECK(tol > 0);
}

static void faulty(void)
{
    fake = *ls_runtime_host();
    fake_impl = *host_impl();
    fake_impl.name = "fake";
    fake_impl.gdn = fake_gdn;
    fake_impl.kda = fake_kda;
    fake_impl.ssu = fake_ssu;
    fake_impl.conv_update = fake_conv;
    fake_impl.state_copy = fake_copy;
    fake_impl.state_accept = fake_accept;
    fake_impl.state_zero = fake_zero;
    bt_impl = &fake_impl;
    double tol, err;

    mode = BAD_OUT;
    err = verify_case(&fake, "gdn/decode", "qwen3-next-80b-a3b", 3, 1, LS_F32, &tol);
    LS_CHECK(err > tol);
    err = verify_case(&fake, "kda/decode", "kimi-linear-48b-a3b", 12, 1, LS_BF16, &tol);
    LS_CHECK(err > tol);
    err = verify_case(&fake, "mamba2_ssu/verify", "nemotron-h-8b", 2, 2, LS_F32, &tol);
    LS_CHECK(err > tol);

    mode = BAD_STATE;
    err = verify_case(&fake, "gdn/decode", "qwen3-next-80b-a3b", 2, 1, LS_F32, &tol);
    LS_CHECK(err > tol);

    mode = NO_INTER; /* intermediate states left NaN-poisoned: NaN never passes */
    err = verify_case(&fake, "gdn/verify", "qwen3-next-80b-a3b", 2, 3, LS_F32, &tol);
    LS_CHECK(isinf(err));

    /* An impl that takes q/k/v token strides gets them packed (one row per token) in the timed
     * batch and in the verification sub-batch: an honest one passes, one that ignores the
     * strides fails. */
    fake_impl.caps |= LS_IMPL_QKV_STRIDES;
    mode = OK;
    err = verify_case(&fake, "gdn/verify", "qwen3-next-80b-a3b", 3, 2, LS_F32, &tol);
    LS_CHECK(err == 0);
    err = verify_case(&fake, "kda/decode", "kimi-linear-48b-a3b", 10, 1, LS_F32, &tol);
    LS_CHECK(err == 0);
    mode = NO_STRIDES;
    err = verify_case(&fake, "gdn/decode", "qwen3-next-80b-a3b", 3, 1, LS_F32, &tol);
    LS_CHECK(err > tol);
    err = verify_case(&fake, "kda/verify", "kimi-linear-48b-a3b", 2, 3, LS_F32, &tol);
    LS_CHECK(err > tol);
    fake_impl.caps &= ~LS_IMPL_QKV_STRIDES;

    mode = NOOP; /* conv output never written; pool kernels that move nothing */
    err = verify_case(&fake, "conv1d_update/decode", "kimi-linear-48b-a3b", 2, 1, LS_F32, &tol);
    LS_CHECK(isinf(err));
    static const char *const pool_ops[] = {"pool/copy", "pool/fork", "pool/alloc", "pool/free"};
    for (size_t i = 0; i < sizeof pool_ops / sizeof pool_ops[0]; i++) {
        err = verify_case(&fake, pool_ops[i], "qwen3-next-80b-a3b", 3, 1, LS_F32, &tol);
        if (!(err > tol))
            fprintf(stderr, "%s with a no-op kernel passed verification\n", pool_ops[i]);
        LS_CHECK(err > tol);
    }
    err = verify_case(&fake, "pool/accept", "nemotron-h-8b", 3, 2, LS_F32, &tol);
    LS_CHECK(err > tol);
    /* The variants: a conv that writes nothing (outputs stay NaN), state ops that move nothing. */
    static const struct {
        const char *family, *model, *variant;
        int draft;
    } vars[] = {
        {"conv1d_update/decode", "kimi-linear-48b-a3b", "concat", 1},
        {"conv1d_update/verify", "kimi-linear-48b-a3b", "concat", 2},
        {"conv1d_update/verify", "qwen3-next-80b-a3b", "clone", 3},
        {"pool/copy", "kimi-linear-48b-a3b", "per-tensor", 1},
        {"pool/accept", "qwen3-next-80b-a3b", "per-tensor", 4},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        err = verify_variant(&fake, vars[i].family, vars[i].model, 10, vars[i].draft, LS_F32, vars[i].variant, &tol);
        if (!(err > tol))
            fprintf(stderr, "%s %s with a no-op kernel passed verification\n", vars[i].family, vars[i].variant);
        LS_CHECK(err > tol);
    }
    mode = OK;

    /* clone with a copy_d2d that copies nothing: the conv reads the NaN-poisoned clone. */
    fake = *ls_runtime_host();
    fake.copy_d2d = fake_copy_d2d;
    err = verify_variant(&fake, "conv1d_update/verify", "qwen3-next-80b-a3b", 3, 2, LS_F32, "clone", &tol);
    LS_CHECK(isinf(err));
    /* clone whose conv also shifts the real state: the untouched check fails. */
    fake = *ls_runtime_host();
    fake_impl = *host_impl();
    fake_impl.conv_update = fake_conv_on_real;
    fake.copy_d2d = record_copy_d2d;
    err = verify_variant(&fake, "conv1d_update/verify", "qwen3-next-80b-a3b", 3, 2, LS_F32, "clone", &tol);
    LS_CHECK(err > tol);
    clone_real = NULL;
    bt_impl = NULL;
}

/* An op that answers LS_OP_UNSUPPORTED marks the case (the runner's skipped:unsupported), and
 * only then: decode runs on the same impl. */
static void unsupported(void)
{
    fake = *ls_runtime_host();
    fake_impl = *host_impl();
    fake_impl.gdn = fake_gdn;
    bt_impl = &fake_impl;
    mode = UNSUPPORTED;
    bt_case t;
    bt_setup(&t, &fake, "gdn/verify", "qwen3-next-80b-a3b", 3, 2, LS_F32, NULL, budget);
    LS_REQUIRE(t.setup_rc == 0);
    double err = NAN;
    LS_CHECK(t.c->e->verify(&t.x, &err) != 0);
    LS_CHECK_EQ_INT(t.x.unsupported, 1);
    bt_release(&t);
    bt_setup(&t, &fake, "gdn/decode", "qwen3-next-80b-a3b", 3, 1, LS_F32, NULL, budget);
    LS_REQUIRE(t.setup_rc == 0);
    LS_CHECK_EQ_INT(t.c->e->verify(&t.x, &err), 0);
    LS_CHECK_EQ_INT(t.x.unsupported, 0);
    bt_release(&t);
    mode = OK;
    bt_impl = NULL;
}

/* A pool over the memory budget is BENCH_OOM (-> skipped:oom), before anything is allocated. */
static void over_budget(void)
{
    static const char *const fams[] = {"gdn/verify", "conv1d_update/decode", "pool/copy", "pool/accept"};
    double tol;
    budget = 4 << 20;
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        int draft = strstr(fams[i], "decode") ? 1 : 4; /* decode is planned only for T = 1 */
        verify_case(ls_runtime_host(), fams[i], "qwen3-next-80b-a3b", 64, draft, LS_F32, &tol);
        if (tol != -1)
            fprintf(stderr, "%s: no BENCH_OOM with a 4 MiB budget\n", fams[i]);
        LS_CHECK(tol == -1);
    }
    budget = (int64_t)1 << 30;
}

int main(void)
{
    honest();
    honest_variants();
    faulty();
    unsupported();
    over_budget();
    return ls_test_exit();
}
