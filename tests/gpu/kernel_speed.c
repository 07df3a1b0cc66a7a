/*
 * kernel_speed.c — a quick speed table of the CUDA kernels at tp 2 shapes (not a CTest test).
 *
 *   kernel_speed [--csv PATH] [--op SUBSTR[,SUBSTR...]] [--batch LIST] [--tokens LIST] [--samples N]
 *                [--tune KNOB=VALUE[,KNOB=VALUE...]]
 *
 * --op keeps the op cases whose name contains any of the comma-separated substrings.
 *
 * First a 1 GiB device-to-device copy (ls_measure_copy_peak, as the bench) gives the copy
 * bandwidth of this run ((read + write bytes) / time). Then, for each op case (the table
 * k_cases: GDN qwen3-next, KDA kimi, SSU nemotron-h-8b, conv qwen3-next, pool copy / accept /
 * zero of all layers of qwen3-next, fp32 SSM state; conv_pad: B = 1 with the row padding, i.e.
 * the launch + index-load floor; pool_copy_convbuf: the copy of the conv buffer alone, 24 KB
 * items at random slots, the conv state's access pattern as a plain copy) and each B in
 * {1,64,128,512}, T in {1,4}:
 * buffers for R "layers" are allocated and filled with random values (never zeros), so
 * consecutive launches rotate over distinct buffers (R chosen so R x bytes >= 256 MB, at most
 * 64; tiny B stays L2-resident anyway and is reported with R). Timing is the harness's
 * (ls_time_launches, as linstate-bench): after 3 warm-up rounds, each sample is the CUDA-event
 * time of R back-to-back launches / R (median of --samples, default 50), and the same R
 * launches captured in a CUDA graph are timed by replay (graph column); each sample is queued
 * behind a stream hold, so its start event does not absorb launch latency (LS_HOLD=0: not
 * held, the method of the runs before the hold existed). GB/s = the minimum bytes of
 * docs/bytes.md (bench/bytes.c, one function per op) / the faster of the two medians.
 * An op that fails at run time (not implemented yet, out of memory) prints n/a and its error.
 * Output: a markdown table on stdout; CSV (one row per case) to --csv. The ops are the linstate
 * impl's, run with the tuning --tune gives (ls_tuning_parse: e.g. "conv.variant=vec8,pdl=off";
 * default: every knob at its default); the whole tuning string and the hold (LS_HOLD) are
 * printed in the header line and recorded in the CSV's variant column.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h" /* ls_bytes_*: the minimum bytes of docs/bytes.md */
#include "gpu_test.h"
#include "ls_harness.h"
#include "ls_pool.h"

static const ls_runtime *be;

/* ------------------------------------------------------------------ minimum bytes (docs/bytes.md) */

/* The formulas live once, in bench/bytes.c (ls_bytes_*, one function per op of docs/bytes.md); bf16
 * activations (s_a = 2). GDN verify counts the fused gating (a, b bf16), as the bench does. */
static double bytes_conv(int B, int T, int C, int W, int sw, int bias, int inter)
{
    return (double)ls_bytes_conv_update(B, T, C, W, 2, 2, sw, bias, inter);
}
static double bytes_gdn(int B, int T, int H, int HV, int K, int V, int ss)
{
    return (double)(T == 1 ? ls_bytes_gdn_decode(B, T, H, HV, K, V, 2, ss)
                           : ls_bytes_gdn_verify_fused(B, T, H, HV, K, V, 2, ss));
}
static double bytes_kda(int B, int T, int H, int HV, int K, int V, int ss)
{
    return (double)ls_bytes_kda(B, T, H, HV, K, V, 2, ss, T > 1);
}
static double bytes_ssu(int B, int T, int nh, int hd, int ds, int ng, int ss)
{
    return (double)ls_bytes_ssu(B, T, nh, hd, ng, ds, 2, ss, T > 1);
}
static double bytes_pool(int n, int64_t per_req, int writes_only)
{
    return (double)(writes_only ? ls_bytes_pool_zero(n, per_req) : ls_bytes_pool_copy(n, per_req));
}

/* ------------------------------------------------------------------ device buffers */

#define RND_N (8u << 20) /* host random block: 8 Mi values */
static float *g_rnd_f32;
static uint16_t *g_rnd_bf16;

/* Allocations of one case, freed together. */
typedef struct arena {
    void *p[64];
    int n;
    int failed;
    char err[256];
} arena;

/* Device buffer of n elements of dt filled with U(-1,1) values (a host random block tiled). */
static void *dfill(arena *a, size_t n, ls_dtype dt)
{
    if (a->failed)
        return NULL;
    size_t es = ls_dtype_size(dt), bytes = n * es;
    void *d = be->mem_alloc(bytes);
    if (!d || a->n == 64) {
        a->failed = 1;
        snprintf(a->err, sizeof a->err, "alloc %zu bytes: %s", bytes, ls_last_error());
        if (d)
            be->mem_free(d);
        return NULL;
    }
    a->p[a->n++] = d;
    const void *src = dt == LS_F32 ? (const void *)g_rnd_f32 : (const void *)g_rnd_bf16;
    for (size_t off = 0; off < n; off += RND_N) {
        size_t k = n - off < RND_N ? n - off : RND_N;
        if (be->copy_h2d((char *)d + off * es, src, k * es)) {
            a->failed = 1;
            snprintf(a->err, sizeof a->err, "upload: %s", ls_last_error());
            return d;
        }
    }
    return d;
}

static int32_t *didx(arena *a, const int32_t *h, int n)
{
    if (a->failed)
        return NULL;
    int32_t *d = (int32_t *)be->mem_alloc((size_t)n * 4);
    if (!d) {
        a->failed = 1;
        snprintf(a->err, sizeof a->err, "alloc index: %s", ls_last_error());
        return NULL;
    }
    a->p[a->n++] = d;
    if (be->copy_h2d(d, h, (size_t)n * 4)) {
        a->failed = 1;
        snprintf(a->err, sizeof a->err, "upload index: %s", ls_last_error());
    }
    return d;
}

static void arena_free(arena *a)
{
    for (int i = 0; i < a->n; i++)
        be->mem_free(a->p[i]);
    a->n = 0;
}

/* ------------------------------------------------------------------ op cases */

typedef enum kind { K_CONV, K_GDN, K_KDA, K_SSU, K_COPY, K_ACCEPT, K_ZERO, K_COPY_CONV } kind;

typedef struct op_def {
    const char *op;      /* table name */
    kind k;
    const char *model;
    int multi_t;         /* takes T > 1 (verify) */
    int pad_only;        /* B = 1 only, the row is padding: launch + index-load floor */
} op_def;

static const op_def k_cases[] = {
    {"gdn", K_GDN, "qwen3-next-80b-a3b", 1, 0},
    {"kda", K_KDA, "kimi-linear-48b-a3b", 1, 0},
    {"ssu", K_SSU, "nemotron-h-8b", 1, 0},
    {"conv", K_CONV, "qwen3-next-80b-a3b", 1, 0},
    {"conv_pad", K_CONV, "qwen3-next-80b-a3b", 0, 1},
    {"pool_copy", K_COPY, "qwen3-next-80b-a3b", 0, 0},
    {"pool_accept", K_ACCEPT, "qwen3-next-80b-a3b", 0, 0},
    {"pool_zero", K_ZERO, "qwen3-next-80b-a3b", 0, 0},
    /* the conv state buffer alone (24 KB items at random slots, all layers): the access pattern
     * of the conv update's state, as a plain copy — the ceiling that pattern allows */
    {"pool_copy_convbuf", K_COPY_CONV, "qwen3-next-80b-a3b", 0, 0},
};

/* One prepared case: R parameter sets, one per rotated "layer". */
typedef struct prepared {
    kind k;
    int R;
    double bytes;
    ls_conv_params conv[64];
    ls_delta_params delta[64];
    ls_ssu_params ssu[64];
    ls_state_params st[64];
    ls_pool *pool;
    arena a;
} prepared;

static int rotations(double bytes, int max)
{
    int r = (int)ceil(256e6 / bytes);
    return r < 1 ? 1 : (r > max ? max : r);
}

/* A random permutation of 0..n-1 in out[0..n-1] (the rows' slots: scattered, distinct). */
static void shuffled(uint64_t *seed, int32_t *out, int n) { gt_random_slots(seed, out, n, n, 0.0); }

/* pad: every row is padding (slot -1): the kernel only loads the index (bytes = 4B). */
static void prep_conv(prepared *c, const ls_shape *sh, int B, int T, int pad, uint64_t *seed)
{
    const int C = sh->conv_channels, W = sh->conv_width, N = W - 1, S1 = B + 1;
    const ls_dtype wdt = sh->model->conv_weight_dtype;
    c->bytes = pad ? 4.0 * B : bytes_conv(B, T, C, W, (int)ls_dtype_size(wdt), sh->model->conv_bias, T > 1);
    c->R = rotations(c->bytes, 64);
    int32_t *slot = (int32_t *)malloc(sizeof(int32_t) * (size_t)B);
    shuffled(seed, slot, B);
    for (int r = 0; pad && r < B; r++)
        slot[r] = -1;
    int32_t *idx = didx(&c->a, slot, B);
    free(slot);
    const int R = c->R;
    char *x = dfill(&c->a, (size_t)R * B * T * C, LS_BF16), *y = dfill(&c->a, (size_t)R * B * T * C, LS_BF16);
    char *w = dfill(&c->a, (size_t)R * C * W, wdt), *bias = dfill(&c->a, (size_t)R * C, wdt);
    char *st = dfill(&c->a, (size_t)R * S1 * C * N, LS_BF16);
    char *in = T > 1 ? dfill(&c->a, (size_t)R * S1 * T * C * N, LS_BF16) : NULL;
    if (c->a.failed)
        return;
    for (int r = 0; r < R; r++) {
        ls_conv_params *p = &c->conv[r];
        memset(p, 0, sizeof *p);
        p->batch = B, p->tokens = T, p->channels = C, p->width = W, p->silu = 1;
        p->weight_dtype = wdt, p->state_dtype = LS_BF16;
        p->x = (const uint16_t *)(x + (size_t)r * B * T * C * 2);
        p->x_stride_b = (int64_t)T * C, p->x_stride_t = C, p->x_stride_c = 1;
        p->y = (uint16_t *)(y + (size_t)r * B * T * C * 2);
        p->y_stride_b = (int64_t)T * C, p->y_stride_t = C, p->y_stride_c = 1;
        p->weight = w + (size_t)r * C * W * ls_dtype_size(wdt);
        p->bias = sh->model->conv_bias ? bias + (size_t)r * C * ls_dtype_size(wdt) : NULL;
        p->state = st + (size_t)r * S1 * C * N * 2;
        p->state_stride_slot = (int64_t)C * N, p->state_stride_c = N, p->state_stride_w = 1;
        p->slot_idx = idx;
        p->slots = S1;
        if (in) {
            p->inter = in + (size_t)r * S1 * T * C * N * 2;
            p->inter_stride_slot = (int64_t)T * C * N, p->inter_stride_t = (int64_t)C * N;
            p->inter_stride_c = N, p->inter_stride_w = 1;
        }
    }
}

/* GDN (kda = 0) or KDA (kda = 1) decode / verify at fp32 state; verify: T inter states, no
 * final write (disable_state_update = 1), as the target-verify path does. */
static void prep_delta(prepared *c, const ls_shape *sh, int B, int T, int kda, uint64_t *seed)
{
    const int H = sh->heads_qk, HV = sh->heads_v, K = sh->dk, V = sh->dv, S1 = B + 1;
    c->bytes = kda ? bytes_kda(B, T, H, HV, K, V, 4) : bytes_gdn(B, T, H, HV, K, V, 4);
    c->R = rotations(c->bytes, 64);
    int32_t *slot = (int32_t *)malloc(sizeof(int32_t) * (size_t)B);
    shuffled(seed, slot, B);
    int32_t *idx = didx(&c->a, slot, B);
    free(slot);
    const int R = c->R;
    const size_t qk = (size_t)B * T * H * K, vv = (size_t)B * T * HV * V, ga = (size_t)B * T * HV * (kda ? K : 1);
    const size_t gb = (size_t)B * T * HV, hs = (size_t)HV * K * V;
    char *q = dfill(&c->a, R * qk, LS_BF16), *k = dfill(&c->a, R * qk, LS_BF16), *v = dfill(&c->a, R * vv, LS_BF16);
    char *a = dfill(&c->a, R * ga, LS_BF16), *b = dfill(&c->a, R * gb, LS_BF16), *o = dfill(&c->a, R * vv, LS_BF16);
    char *alog = dfill(&c->a, (size_t)R * HV, LS_F32);
    char *dtb = dfill(&c->a, (size_t)R * HV * (kda ? K : 1), kda ? LS_F32 : LS_BF16);
    char *st = dfill(&c->a, (size_t)R * S1 * hs, LS_F32);
    char *in = T > 1 ? dfill(&c->a, (size_t)R * S1 * T * hs, LS_F32) : NULL;
    if (c->a.failed)
        return;
    for (int r = 0; r < R; r++) {
        ls_delta_params *p = &c->delta[r];
        memset(p, 0, sizeof *p);
        p->batch = B, p->tokens = T, p->heads_qk = H, p->heads_v = HV, p->dk = K, p->dv = V;
        p->disable_state_update = T > 1;
        p->scale = 1.0f / sqrtf((float)K);
        p->state_dtype = LS_F32;
        p->q = (const uint16_t *)(q + r * qk * 2), p->k = (const uint16_t *)(k + r * qk * 2);
        p->v = (const uint16_t *)(v + r * vv * 2), p->a = (const uint16_t *)(a + r * ga * 2);
        p->b = (const uint16_t *)(b + r * gb * 2), p->o = (uint16_t *)(o + r * vv * 2);
        p->A_log = (const float *)(alog + (size_t)r * HV * 4);
        p->dt_bias = dtb + (size_t)r * HV * (kda ? K * 4 : 2);
        p->state = st + (size_t)r * S1 * hs * 4;
        p->state_stride_slot = (int64_t)hs;
        p->slot_idx = idx;
        p->slots = S1;
        if (in) {
            p->inter = in + (size_t)r * S1 * T * hs * 4;
            p->inter_stride_slot = (int64_t)T * hs;
        }
    }
}

static void prep_ssu(prepared *c, const ls_shape *sh, int B, int T, uint64_t *seed)
{
    const int nh = sh->nheads, hd = sh->head_dim, ds = sh->dstate, ng = sh->ngroups, S1 = B + 1;
    c->bytes = bytes_ssu(B, T, nh, hd, ds, ng, 4);
    c->R = rotations(c->bytes, 64);
    int32_t *slot = (int32_t *)malloc(sizeof(int32_t) * (size_t)B);
    shuffled(seed, slot, B);
    int32_t *idx = didx(&c->a, slot, B);
    free(slot);
    const int R = c->R;
    const size_t xs = (size_t)B * T * nh * hd, dts = (size_t)B * T * nh, bc = (size_t)B * T * ng * ds;
    const size_t hs = (size_t)nh * hd * ds;
    char *x = dfill(&c->a, R * xs, LS_BF16), *dt = dfill(&c->a, R * dts, LS_BF16);
    char *Bm = dfill(&c->a, R * bc, LS_BF16), *Cm = dfill(&c->a, R * bc, LS_BF16), *y = dfill(&c->a, R * xs, LS_BF16);
    char *A = dfill(&c->a, (size_t)R * nh, LS_F32), *dtb = dfill(&c->a, (size_t)R * nh, LS_BF16);
    char *D = dfill(&c->a, (size_t)R * nh, LS_BF16);
    char *st = dfill(&c->a, (size_t)R * S1 * hs, LS_F32);
    char *in = T > 1 ? dfill(&c->a, (size_t)R * S1 * T * hs, LS_F32) : NULL;
    if (c->a.failed)
        return;
    for (int r = 0; r < R; r++) {
        ls_ssu_params *p = &c->ssu[r];
        memset(p, 0, sizeof *p);
        p->batch = B, p->tokens = T, p->nheads = nh, p->head_dim = hd, p->dstate = ds, p->ngroups = ng;
        p->disable_state_update = T > 1;
        p->state_dtype = LS_F32;
        p->x = (const uint16_t *)(x + r * xs * 2), p->dt = (const uint16_t *)(dt + r * dts * 2);
        p->Bm = (const uint16_t *)(Bm + r * bc * 2), p->Cm = (const uint16_t *)(Cm + r * bc * 2);
        p->A = (const float *)(A + (size_t)r * nh * 4);
        p->dt_bias = (const uint16_t *)(dtb + (size_t)r * nh * 2), p->D = (const uint16_t *)(D + (size_t)r * nh * 2);
        p->y = (uint16_t *)(y + r * xs * 2);
        p->state = st + (size_t)r * S1 * hs * 4;
        p->state_stride_slot = (int64_t)hs;
        p->slot_idx = idx;
        p->slots = S1;
        if (in) {
            p->inter = in + (size_t)r * S1 * T * hs * 4;
            p->inter_stride_slot = (int64_t)T * hs;
        }
    }
}

/* Pool ops on an ls_pool of the cuda backend (fp32 temporal; accept: T = 4 spec buffers).
 * Rotation r uses its own disjoint slot lists. Buffers are filled with a non-zero byte. */
static void prep_pool(prepared *c, const ls_shape *sh, int B, uint64_t *seed)
{
    ls_state_desc d;
    if (ls_state_desc_from_shape(sh, LS_F32, c->k == K_ACCEPT ? 4 : 0, &d)) {
        c->a.failed = 1;
        snprintf(c->a.err, sizeof c->a.err, "desc: %s", ls_last_error());
        return;
    }
    int64_t per_req = ls_bytes_per_req(&d);
    if (c->k == K_COPY_CONV) /* buffer 0 only: the first conv buffer of every layer */
        per_req = (int64_t)d.layers * ls_conv_item_bytes(&d, 0);
    c->bytes = bytes_pool(B, per_req, c->k == K_ZERO);
    c->R = rotations(c->bytes, 4);
    const int per_rot = c->k == K_ACCEPT ? B : 2 * B;
    ls_pool_config cfg = {.capacity = per_rot * c->R, .pad = LS_PAD_LAST, .zero = LS_ZERO_AT_FREE};
    c->pool = ls_pool_create(&d, &cfg, be);
    if (!c->pool) {
        c->a.failed = 1;
        snprintf(c->a.err, sizeof c->a.err, "pool: %s", ls_last_error());
        return;
    }
    ls_state_params base;
    ls_pool_state_params(c->pool, &base);
    for (int b = 0; b < base.n_buffers; b++) {
        size_t mb = (size_t)base.layers * base.slots * base.buf[b].item_bytes;
        be->mem_set(base.buf[b].main, 0x3c, mb, NULL);
        if (base.buf[b].spec)
            be->mem_set(base.buf[b].spec, 0x3c, mb * (size_t)base.spec_tokens, NULL);
    }
    int n = per_rot * c->R;
    int32_t *perm = (int32_t *)malloc(sizeof(int32_t) * (size_t)n), *step = (int32_t *)malloc(sizeof(int32_t) * (size_t)B);
    shuffled(seed, perm, n);
    for (int i = 0; i < B; i++)
        step[i] = gt_rand_int(seed, 0, 3);
    for (int r = 0; r < c->R; r++) {
        ls_state_params *p = &c->st[r];
        *p = base;
        p->count = B;
        if (c->k == K_COPY_CONV)
            p->n_buffers = 1;
        const int32_t *rows = perm + (size_t)r * per_rot;
        p->dst = didx(&c->a, rows, B);
        if (c->k == K_COPY || c->k == K_COPY_CONV)
            p->src = didx(&c->a, rows + B, B);
        if (c->k == K_ACCEPT)
            p->step = didx(&c->a, step, B);
    }
    free(perm);
    free(step);
}

static int launch(const prepared *c, int r, ls_stream s)
{
    const ls_impl *im = gt_impl();
    const ls_tuning *t = gt_tuning();
    switch (c->k) {
    case K_CONV: return im->conv_update ? im->conv_update(&c->conv[r], t, s) : ls_fail("conv_update missing");
    case K_GDN: return im->gdn ? im->gdn(&c->delta[r], t, s) : ls_fail("gdn missing");
    case K_KDA: return im->kda ? im->kda(&c->delta[r], t, s) : ls_fail("kda missing");
    case K_SSU: return im->ssu ? im->ssu(&c->ssu[r], t, s) : ls_fail("ssu missing");
    case K_COPY:
    case K_COPY_CONV: return im->state_copy(&c->st[r], t, s);
    case K_ACCEPT: return im->state_accept(&c->st[r], t, s);
    case K_ZERO: return im->state_zero(&c->st[r], t, s);
    }
    return ls_fail("unknown op kind");
}

/* ------------------------------------------------------------------ timing */

static int launch_cb(void *ctx, int rot, ls_stream s) { return launch((const prepared *)ctx, rot, s); }

/* Whether samples are queued behind a stream hold (harness timing.c): on unless LS_HOLD=0. */
static int hold_on(void)
{
    const char *h = getenv("LS_HOLD");
    return !(h && !strcmp(h, "0"));
}

/* Median per-launch time (us) of R back-to-back launches (graph = 0) or of a graph replay of
 * them (graph = 1), through the harness timer: 3 warm-up rounds, then exactly `samples`. */
static int time_case(const prepared *c, ls_stream s, int graph, int samples, double *us)
{
    ls_timing_config cfg = {
        .be = be, .stream = s, .regime = LS_CACHE_ROTATE, .graph = graph, .n_rot = c->R, .warmup = 3,
        .min_samples = samples, .max_samples = samples, .hold = hold_on(),
    };
    double *t = (double *)malloc(sizeof(double) * (size_t)samples);
    int n = 0;
    ls_stats st;
    int rc = !t || ls_time_launches(&cfg, launch_cb, (void *)c, t, samples, &n) || ls_stats_compute(t, n, &st);
    if (!rc)
        *us = st.median;
    free(t);
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ main */

/* Whether op name `name` contains one of the comma-separated substrings of `filter` (NULL: all). */
static int op_selected(const char *name, const char *filter)
{
    if (!filter)
        return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *tok = buf, *end; tok; tok = end ? end + 1 : NULL) {
        end = strchr(tok, ',');
        if (end)
            *end = 0;
        if (*tok && strstr(name, tok))
            return 1;
    }
    return 0;
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1) {
            fprintf(stderr, "kernel_speed: bad list value '%s'\n", s);
            exit(2);
        }
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *csv_path = NULL, *op_filter = NULL, *tune = "";
    int batches[16] = {1, 64, 128, 512}, nb = 4, tokens[8] = {1, 4}, nt = 2, samples = 50;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--csv") && v)
            csv_path = v, i++;
        else if (!strcmp(a, "--op") && v)
            op_filter = v, i++;
        else if (!strcmp(a, "--batch") && v)
            nb = parse_list(v, batches, 16), i++;
        else if (!strcmp(a, "--tokens") && v)
            nt = parse_list(v, tokens, 8), i++;
        else if (!strcmp(a, "--samples") && v && atoi(v) >= 1)
            samples = atoi(v), i++;
        else if (!strcmp(a, "--tune") && v)
            tune = v, i++;
        else {
            fprintf(stderr, "kernel_speed: unknown or incomplete argument '%s'\n"
                            "usage: kernel_speed [--csv PATH] [--op SUBSTR[,SUBSTR]] [--batch 1,64] [--tokens 1,4] [--samples N]"
                            " [--tune KNOB=VALUE,...]\n", a);
            return 2;
        }
    }
    be = gt_init();
    gt_set_tuning(tune); /* exits naming the knob or value when the impl does not have it */
    ls_device_info info;
    be->device_info(0, &info);
    g_rnd_f32 = (float *)malloc(sizeof(float) * RND_N);
    g_rnd_bf16 = (uint16_t *)malloc(sizeof(uint16_t) * RND_N);
    uint64_t seed = 0x5beedull;
    gt_fill_f32(&seed, g_rnd_f32, RND_N, -1.0, 1.0);
    gt_fill_bf16(&seed, g_rnd_bf16, RND_N, -1.0, 1.0);
    ls_stream s;
    if (be->stream_create(&s)) {
        fprintf(stderr, "kernel_speed: stream: %s\n", ls_last_error());
        return 1;
    }
    double peak = 0;
    if (ls_measure_copy_peak(be, (size_t)1 << 30, &peak)) {
        fprintf(stderr, "kernel_speed: copy peak: %s\n", ls_last_error());
        return 1;
    }
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        fprintf(stderr, "kernel_speed: cannot write %s\n", csv_path);
        return 2;
    }
    if (csv)
        fprintf(csv, "op,model,tp,batch,tokens,rotations,bytes,stream_us,graph_us,best_us,gbps,pct_of_copy,copy_gbps,"
                     "device,variant,status\n");
    /* the tuning of this run (every knob, in declaration order) and the hold */
    char tuning[256], variant[320];
    if (ls_tuning_string(gt_impl(), gt_tuning(), tuning, sizeof tuning) < 0)
        snprintf(tuning, sizeof tuning, "?");
    snprintf(variant, sizeof variant, "%s hold=%s", tuning, hold_on() ? "on" : "off");
    printf("\ndevice %s, %d SMs, L2 %lld MB; D2D copy (1 GiB, read+write): %.1f GB/s; %d samples; variants %s\n\n",
           info.name, info.sm_count, (long long)(info.l2_bytes >> 20), peak, samples, variant);
    printf("| op | model | B | T | R | bytes | stream us | graph us | GB/s | %% of copy |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    int failures = 0;
    for (size_t ci = 0; ci < sizeof k_cases / sizeof k_cases[0]; ci++) {
        const op_def *od = &k_cases[ci];
        if (!op_selected(od->op, op_filter))
            continue;
        ls_shape sh;
        if (ls_shape_from_model(ls_model_find(od->model), 2, &sh)) {
            fprintf(stderr, "kernel_speed: %s: %s\n", od->model, ls_last_error());
            return 1;
        }
        for (int bi = 0; bi < (od->pad_only ? 1 : nb); bi++)
            for (int ti = 0; ti < (od->multi_t ? nt : 1); ti++) {
                int B = od->pad_only ? 1 : batches[bi], T = od->multi_t ? tokens[ti] : 1;
                prepared *c = (prepared *)calloc(1, sizeof *c);
                c->k = od->k;
                switch (od->k) {
                case K_CONV: prep_conv(c, &sh, B, T, od->pad_only, &seed); break;
                case K_GDN: prep_delta(c, &sh, B, T, 0, &seed); break;
                case K_KDA: prep_delta(c, &sh, B, T, 1, &seed); break;
                case K_SSU: prep_ssu(c, &sh, B, T, &seed); break;
                default: prep_pool(c, &sh, B, &seed); break;
                }
                double ts = NAN, tg = NAN;
                char status[300] = "ok";
                if (c->a.failed)
                    snprintf(status, sizeof status, "n/a: %s", c->a.err);
                else if (be->sync(NULL) || time_case(c, s, 0, samples, &ts) ||
                         (be->graph_begin && time_case(c, s, 1, samples, &tg))) {
                    snprintf(status, sizeof status, "n/a: %s", ls_last_error());
                    be->sync(NULL);
                }
                double best = ts < tg || isnan(tg) ? ts : tg;
                double gbps = c->bytes / (best * 1e3), pct = 100.0 * gbps / peak;
                if (strcmp(status, "ok")) {
                    failures++;
                    printf("| %s | %s | %d | %d | %d | %.0f | n/a | n/a | n/a | n/a |\n", od->op, od->model, B, T, c->R,
                           c->bytes);
                    fprintf(stderr, "  %s B=%d T=%d: %s\n", od->op, B, T, status);
                } else {
                    printf("| %s | %s | %d | %d | %d | %.0f | %.2f | %.2f | %.0f | %.1f |\n", od->op, od->model, B, T,
                           c->R, c->bytes, ts, tg, gbps, pct);
                }
                fflush(stdout);
                if (csv) {
                    for (char *q = status; *q; q++)
                        if (*q == ',' || *q == '"' || *q == '\n')
                            *q = ';';
                    fprintf(csv, "%s,%s,2,%d,%d,%d,%.0f,%.3f,%.3f,%.3f,%.1f,%.2f,%.1f,\"%s\",\"%s\",\"%s\"\n", od->op,
                            od->model, B, T, c->R, c->bytes, ts, tg, best, gbps, pct, peak, info.name, variant, status);
                    fflush(csv);
                }
                arena_free(&c->a);
                if (c->pool)
                    ls_pool_destroy(c->pool);
                free(c);
            }
    }
    if (csv)
        fclose(csv);
    be->stream_destroy(s);
    printf("\n%d case(s) n/a\n", failures);
    return 0;
}
