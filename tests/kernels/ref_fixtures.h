/*
 * ref_fixtures.h — shared fixtures of the reference tests: random bf16/fp32 buffers, random
 * non-contiguous slot lists, and ready-made conv / delta-rule / SSU problems with every buffer
 * allocated, filled (never all zero) and outputs poisoned with 0xFF bytes (NaN in both fp32 and
 * bf16, so an output the op forgot to write can never pass a comparison).
 */
#ifndef LS_REF_FIXTURES_H
#define LS_REF_FIXTURES_H

#include "ls_kernels.h"
#include "ls_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_POISON 0xFF

static inline void *fx_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    LS_REQUIRE(p != NULL);
    return p;
}

static inline void *fx_dup(const void *src, size_t bytes)
{
    void *p = fx_alloc(bytes);
    memcpy(p, src, bytes);
    return p;
}

/* n random values in [lo, hi), stored as bf16 (exact values) or fp32. */
static inline void *fx_rand(uint64_t *sd, ls_dtype dt, size_t n, double lo, double hi)
{
    void *p = fx_alloc(n * ls_dtype_size(dt));
    for (size_t i = 0; i < n; i++) {
        float v = (float)ls_test_uniform(sd, lo, hi);
        if (dt == LS_F32)
            ((float *)p)[i] = v;
        else
            ((uint16_t *)p)[i] = ls_f32_to_bf16(v);
    }
    return p;
}
static inline uint16_t *fx_bf16(uint64_t *sd, size_t n, double lo, double hi)
{
    return (uint16_t *)fx_rand(sd, LS_BF16, n, lo, hi);
}

static inline double fx_get(const void *base, ls_dtype dt, size_t i)
{
    return dt == LS_F32 ? (double)((const float *)base)[i]
                        : (double)ls_bf16_to_f32(((const uint16_t *)base)[i]);
}

/* n distinct random slots from 0..pool-1 (pool >= n), then n_pad random rows set to -1. */
static inline void fx_slots(uint64_t *sd, int n, int pool, int n_pad, int32_t *out)
{
    LS_REQUIRE(pool >= n);
    int32_t *all = (int32_t *)fx_alloc(sizeof(int32_t) * (size_t)pool);
    for (int i = 0; i < pool; i++)
        all[i] = i;
    for (int i = 0; i < n; i++) { /* partial Fisher-Yates */
        int j = i + (int)(ls_test_rand_u64(sd) % (uint64_t)(pool - i));
        int32_t t = all[i];
        all[i] = all[j];
        all[j] = t;
        out[i] = all[i];
    }
    for (int k = 0; k < n_pad && k < n; k++)
        out[(int)(ls_test_rand_u64(sd) % (uint64_t)n)] = -1;
    free(all);
}

/* Copy token t of a contiguous [B, T, inner] bf16 tensor into a new [B, 1, inner] tensor. */
static inline uint16_t *fx_token(const uint16_t *src, int B, int T, size_t inner, int t)
{
    uint16_t *d = (uint16_t *)fx_alloc(sizeof(uint16_t) * (size_t)B * inner);
    for (int r = 0; r < B; r++)
        memcpy(d + (size_t)r * inner, src + ((size_t)r * T + t) * inner, sizeof(uint16_t) * inner);
    return d;
}

/* Number of elements whose bytes differ between two buffers of n elements of size esz. */
static inline size_t fx_diff_elems(const void *a, const void *b, size_t n, size_t esz)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp((const char *)a + i * esz, (const char *)b + i * esz, esz) != 0;
    return bad;
}

/* ------------------------------------------------------------------ conv problems */

enum {
    FX_BIAS = 1,         /* conv bias present */
    FX_SILU = 2,         /* SiLU activation */
    FX_INTER = 4,        /* intermediate windows / states */
    FX_WINDOW_MAJOR = 8, /* KDA orientation: state [slots, W-1, C] */
    FX_X_CT = 16,        /* x and y stored [B, C, T] (transposed view as in GDN verify) */
    FX_NO_UPDATE = 32    /* disable_state_update */
};

/*
 * The contract of a given slot count (ls_slots_check): run(params) is the op on a params struct
 * whose `slots` field is *slots and whose indices are idx[0..B). With slots one short of the
 * largest index the op fails, naming that row, and leaves the state (state_bytes at state)
 * untouched; with exactly enough it runs. *slots is 0 (not given) afterwards.
 */
static inline void fx_slots_contract(int (*run)(void *), void *params, int32_t *slots, const int32_t *idx, int B,
                                     const void *state, size_t state_bytes)
{
    int32_t max_slot = -1, max_row = 0;
    for (int r = 0; r < B; r++)
        if (idx[r] > max_slot)
            max_slot = idx[r], max_row = r;
    LS_REQUIRE(max_slot >= 0);
    void *before = fx_dup(state, state_bytes);
    char want[96];
    snprintf(want, sizeof want, "slot_idx[%d]=%d is not below slots=%d", (int)max_row, (int)max_slot, (int)max_slot);
    *slots = max_slot; /* one too few */
    LS_CHECK_EQ_INT(run(params), -1);
    if (!strstr(ls_last_error(), want))
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", ls_last_error(), want);
    LS_CHECK(strstr(ls_last_error(), want) != NULL);
    LS_CHECK(memcmp(before, state, state_bytes) == 0);
    *slots = max_slot + 1; /* exactly enough */
    LS_CHECK_EQ_INT(run(params), 0);
    *slots = 0;
    free(before);
}

typedef struct fx_conv {
    ls_conv_params p;
    int slots, flags;
    size_t xy_n, state_n, inter_n; /* elements */
    uint16_t *x, *y;
    void *w, *bias, *state, *inter;
    int32_t *slot;
} fx_conv;

static inline void fx_conv_make(fx_conv *f, uint64_t *sd, int B, int T, int C, int W, int slots,
                                int n_pad, ls_dtype wdt, ls_dtype sdt, int flags)
{
    memset(f, 0, sizeof *f);
    f->slots = slots;
    f->flags = flags;
    ls_conv_params *p = &f->p;
    p->batch = B, p->tokens = T, p->channels = C, p->width = W;
    p->silu = !!(flags & FX_SILU);
    p->disable_state_update = !!(flags & FX_NO_UPDATE);
    p->weight_dtype = wdt, p->state_dtype = sdt;
    f->xy_n = (size_t)B * T * C;
    f->x = fx_bf16(sd, f->xy_n, -2.0, 2.0);
    f->y = (uint16_t *)fx_alloc(f->xy_n * 2);
    memset(f->y, FX_POISON, f->xy_n * 2);
    if (flags & FX_X_CT) {
        p->x_stride_b = (int64_t)C * T, p->x_stride_t = 1, p->x_stride_c = T;
    } else {
        p->x_stride_b = (int64_t)T * C, p->x_stride_t = C, p->x_stride_c = 1;
    }
    p->y_stride_b = p->x_stride_b, p->y_stride_t = p->x_stride_t, p->y_stride_c = p->x_stride_c;
    p->x = f->x, p->y = f->y;
    f->w = fx_rand(sd, wdt, (size_t)C * W, -1.0, 1.0);
    p->weight = f->w;
    if (flags & FX_BIAS) {
        f->bias = fx_rand(sd, wdt, (size_t)C, -0.5, 0.5);
        p->bias = f->bias;
    }
    const int64_t cw = (int64_t)C * (W - 1);
    if (flags & FX_WINDOW_MAJOR)
        p->state_stride_c = 1, p->state_stride_w = C;
    else
        p->state_stride_c = W - 1, p->state_stride_w = 1;
    p->state_stride_slot = cw;
    f->state_n = (size_t)slots * (size_t)cw;
    f->state = fx_rand(sd, sdt, f->state_n, -2.0, 2.0);
    p->state = f->state;
    if (flags & FX_INTER) {
        f->inter_n = (size_t)slots * T * (size_t)cw;
        f->inter = fx_alloc(f->inter_n * ls_dtype_size(sdt));
        memset(f->inter, FX_POISON, f->inter_n * ls_dtype_size(sdt));
        p->inter = f->inter;
        p->inter_stride_slot = (int64_t)T * cw, p->inter_stride_t = cw;
        p->inter_stride_c = p->state_stride_c, p->inter_stride_w = p->state_stride_w;
    }
    f->slot = (int32_t *)fx_alloc(sizeof(int32_t) * (size_t)B);
    fx_slots(sd, B, slots, n_pad, f->slot);
    p->slot_idx = f->slot;
}

static inline void fx_conv_free(fx_conv *f)
{
    free(f->x), free(f->y), free(f->w), free(f->bias), free(f->state), free(f->inter),
        free(f->slot);
}

/* State element (slot s, channel c, column j) of a conv fixture's buffer `st`. */
static inline double fx_conv_state(const fx_conv *f, const void *st, int s, int c, int j)
{
    const ls_conv_params *p = &f->p;
    return fx_get(st, p->state_dtype,
                  (size_t)((int64_t)s * p->state_stride_slot + c * p->state_stride_c +
                           j * p->state_stride_w));
}

/* ------------------------------------------------------------------ delta-rule problems */

typedef struct fx_delta {
    ls_delta_params p;
    int slots, kda;
    size_t state_n, inter_n; /* elements */
    uint16_t *q, *k, *v, *a, *b, *o;
    float *A_log;
    void *dt_bias, *state, *inter;
    int32_t *slot;
} fx_delta;

static inline void fx_delta_make(fx_delta *f, uint64_t *sd, int kda, int B, int T, int H, int HV,
                                 int K, int V, int slots, int n_pad, ls_dtype sdt, int inter)
{
    memset(f, 0, sizeof *f);
    f->slots = slots, f->kda = kda;
    ls_delta_params *p = &f->p;
    p->batch = B, p->tokens = T, p->heads_qk = H, p->heads_v = HV, p->dk = K, p->dv = V;
    p->scale = (float)(1.0 / sqrt((double)K));
    p->state_dtype = sdt;
    const size_t BT = (size_t)B * T;
    f->q = fx_bf16(sd, BT * H * K, -1.0, 1.0);
    f->k = fx_bf16(sd, BT * H * K, -1.0, 1.0);
    f->v = fx_bf16(sd, BT * HV * V, -1.0, 1.0);
    f->a = fx_bf16(sd, BT * HV * (kda ? K : 1), -2.0, 2.0);
    f->b = fx_bf16(sd, BT * HV, -3.0, 3.0);
    f->o = (uint16_t *)fx_alloc(BT * HV * V * 2);
    memset(f->o, FX_POISON, BT * HV * V * 2);
    f->A_log = (float *)fx_rand(sd, LS_F32, (size_t)HV, -1.0, 0.5);
    f->dt_bias = kda ? fx_rand(sd, LS_F32, (size_t)HV * K, -0.5, 0.5)
                     : fx_rand(sd, LS_BF16, (size_t)HV, -0.5, 0.5);
    const int64_t slot = (int64_t)HV * K * V;
    f->state_n = (size_t)slots * (size_t)slot;
    f->state = fx_rand(sd, sdt, f->state_n, -1.0, 1.0);
    p->state_stride_slot = slot;
    if (inter) {
        f->inter_n = f->state_n * (size_t)T;
        f->inter = fx_alloc(f->inter_n * ls_dtype_size(sdt));
        memset(f->inter, FX_POISON, f->inter_n * ls_dtype_size(sdt));
        p->inter_stride_slot = slot * T;
    }
    f->slot = (int32_t *)fx_alloc(sizeof(int32_t) * (size_t)B);
    fx_slots(sd, B, slots, n_pad, f->slot);
    p->q = f->q, p->k = f->k, p->v = f->v, p->a = f->a, p->b = f->b, p->o = f->o;
    p->A_log = f->A_log, p->dt_bias = f->dt_bias, p->state = f->state, p->inter = f->inter;
    p->slot_idx = f->slot;
}

static inline void fx_delta_free(fx_delta *f)
{
    free(f->q), free(f->k), free(f->v), free(f->a), free(f->b), free(f->o), free(f->A_log);
    free(f->dt_bias), free(f->state), free(f->inter), free(f->slot);
}

/* A T=1 problem for token t of f: sliced inputs, fresh poisoned output, same state buffer,
 * no inter. Free with fx_delta_token_free. */
static inline ls_delta_params fx_delta_token(const fx_delta *f, int t)
{
    const ls_delta_params *s = &f->p;
    ls_delta_params p = *s;
    const int B = s->batch, T = s->tokens;
    p.tokens = 1;
    p.q = fx_token(s->q, B, T, (size_t)s->heads_qk * s->dk, t);
    p.k = fx_token(s->k, B, T, (size_t)s->heads_qk * s->dk, t);
    p.v = fx_token(s->v, B, T, (size_t)s->heads_v * s->dv, t);
    p.a = fx_token(s->a, B, T, (size_t)s->heads_v * (f->kda ? s->dk : 1), t);
    p.b = fx_token(s->b, B, T, (size_t)s->heads_v, t);
    size_t on = (size_t)B * s->heads_v * s->dv * 2;
    p.o = (uint16_t *)fx_alloc(on);
    memset(p.o, FX_POISON, on);
    p.inter = NULL;
    p.inter_stride_slot = 0;
    p.disable_state_update = 0;
    return p;
}
static inline void fx_delta_token_free(ls_delta_params *p)
{
    free((void *)p->q), free((void *)p->k), free((void *)p->v), free((void *)p->a);
    free((void *)p->b), free(p->o);
}

/* ------------------------------------------------------------------ SSU problems */

typedef struct fx_ssu {
    ls_ssu_params p;
    int slots;
    size_t state_n, inter_n;
    uint16_t *x, *dt, *Bm, *Cm, *z, *dt_bias, *D, *y;
    float *A;
    void *state, *inter;
    int32_t *slot;
} fx_ssu;

static inline void fx_ssu_make(fx_ssu *f, uint64_t *sd, int B, int T, int NH, int P, int N, int G,
                               int slots, int n_pad, ls_dtype sdt, int with_z, int inter)
{
    memset(f, 0, sizeof *f);
    f->slots = slots;
    ls_ssu_params *p = &f->p;
    p->batch = B, p->tokens = T, p->nheads = NH, p->head_dim = P, p->dstate = N, p->ngroups = G;
    p->state_dtype = sdt;
    const size_t BT = (size_t)B * T;
    f->x = fx_bf16(sd, BT * NH * P, -1.0, 1.0);
    f->dt = fx_bf16(sd, BT * NH, -2.0, 1.0);
    f->Bm = fx_bf16(sd, BT * G * N, -1.0, 1.0);
    f->Cm = fx_bf16(sd, BT * G * N, -1.0, 1.0);
    if (with_z)
        f->z = fx_bf16(sd, BT * NH * P, -2.0, 2.0);
    f->A = (float *)fx_rand(sd, LS_F32, (size_t)NH, -2.0, -0.1);
    f->dt_bias = fx_bf16(sd, (size_t)NH, -0.5, 0.5);
    f->D = fx_bf16(sd, (size_t)NH, -1.0, 1.0);
    f->y = (uint16_t *)fx_alloc(BT * NH * P * 2);
    memset(f->y, FX_POISON, BT * NH * P * 2);
    const int64_t slot = (int64_t)NH * P * N;
    f->state_n = (size_t)slots * (size_t)slot;
    f->state = fx_rand(sd, sdt, f->state_n, -1.0, 1.0);
    p->state_stride_slot = slot;
    if (inter) {
        f->inter_n = f->state_n * (size_t)T;
        f->inter = fx_alloc(f->inter_n * ls_dtype_size(sdt));
        memset(f->inter, FX_POISON, f->inter_n * ls_dtype_size(sdt));
        p->inter_stride_slot = slot * T;
    }
    f->slot = (int32_t *)fx_alloc(sizeof(int32_t) * (size_t)B);
    fx_slots(sd, B, slots, n_pad, f->slot);
    p->x = f->x, p->dt = f->dt, p->Bm = f->Bm, p->Cm = f->Cm, p->z = f->z, p->A = f->A;
    p->dt_bias = f->dt_bias, p->D = f->D, p->y = f->y, p->state = f->state, p->inter = f->inter;
    p->slot_idx = f->slot;
}

static inline void fx_ssu_free(fx_ssu *f)
{
    free(f->x), free(f->dt), free(f->Bm), free(f->Cm), free(f->z), free(f->A), free(f->dt_bias);
    free(f->D), free(f->y), free(f->state), free(f->inter), free(f->slot);
}

static inline ls_ssu_params fx_ssu_token(const fx_ssu *f, int t)
{
    const ls_ssu_params *s = &f->p;
    ls_ssu_params p = *s;
    const int B = s->batch, T = s->tokens;
    const size_t xp = (size_t)s->nheads * s->head_dim, gn = (size_t)s->ngroups * s->dstate;
    p.tokens = 1;
    p.x = fx_token(s->x, B, T, xp, t);
    p.dt = fx_token(s->dt, B, T, (size_t)s->nheads, t);
    p.Bm = fx_token(s->Bm, B, T, gn, t);
    p.Cm = fx_token(s->Cm, B, T, gn, t);
    p.z = s->z ? fx_token(s->z, B, T, xp, t) : NULL;
    p.y = (uint16_t *)fx_alloc((size_t)B * xp * 2);
    memset(p.y, FX_POISON, (size_t)B * xp * 2);
    p.inter = NULL;
    p.inter_stride_slot = 0;
    p.disable_state_update = 0;
    return p;
}
static inline void fx_ssu_token_free(ls_ssu_params *p)
{
    free((void *)p->x), free((void *)p->dt), free((void *)p->Bm), free((void *)p->Cm);
    free((void *)p->z), free(p->y);
}

#endif /* LS_REF_FIXTURES_H */
