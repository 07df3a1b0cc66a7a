/*
 * example_impl.c — a linstate implementation plugin ("example") to copy as a template.
 *
 * A plugin is one shared library that includes only kernels/ls_kernels.h and exports
 *     const ls_impl *linstate_impl_v1(int abi_version);
 * returning its table of ops (docs/plugin-abi.md). This one runs on the "host" runtime (plain
 * host memory, the stream is ignored) and implements four ops in plain C:
 *   state_copy, state_accept, state_zero   byte copies over every buffer and layer
 *   conv_update                            causal conv1d update, fp32 accumulation
 * gdn, kda and ssu are NULL: their benchmarks report `skipped:unsupported`.
 *
 * Knobs (they change how the code runs, never its results):
 *   copy.chunk = row|bytes      state ops: one memcpy/memset per slot row, or a byte loop
 *   conv.loop  = row|channel    conv_update: rows outside and channels inside, or the reverse
 *
 * Rules a plugin follows: it does not link linstate (so it never calls ls_fail or ls_ref_*); it
 * reports failures through its own thread-local text (last_error); it reads no environment
 * variable: everything that changes behaviour is a knob.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ls_kernels.h"

#if defined(__GNUC__)
#define EX_EXPORT __attribute__((visibility("default")))
#define EX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define EX_EXPORT
#define EX_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------- knobs and errors */

enum { KNOB_COPY_CHUNK = 0, KNOB_CONV_LOOP = 1, N_KNOBS = 2 };
enum { CHUNK_ROW = 0, CHUNK_BYTES = 1 };
enum { LOOP_ROW = 0, LOOP_CHANNEL = 1 };

static const ls_knob_def ex_knobs[N_KNOBS] = {
    {"copy.chunk", "row|bytes", "state ops: one memcpy/memset per slot row (row) or a byte loop (bytes)"},
    {"conv.loop", "row|channel", "conv_update loop order: rows outside (row) or channels outside (channel)"},
};

/* The value index of knob k in t; 0 (the default) when t is NULL or shorter. */
static int knob(const ls_tuning *t, int k) { return t && k < t->n ? t->v[k] : 0; }

static _Thread_local char ex_err[256];

static const char *ex_last_error(void) { return ex_err; }

static int EX_PRINTF(1, 2) ex_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ex_err, sizeof ex_err, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---------------------------------------------------------------- state ops */

/* Byte address of main[l][s] and spec[l][s][t] of buffer b (ls_state_params comment). */
static char *main_at(const ls_state_params *p, int b, int l, int32_t s)
{
    return (char *)p->buf[b].main + ((size_t)l * (size_t)p->slots + (size_t)s) * (size_t)p->buf[b].item_bytes;
}

static const char *spec_at(const ls_state_params *p, int b, int l, int32_t s, int32_t t)
{
    size_t row = ((size_t)l * (size_t)p->slots + (size_t)s) * (size_t)p->spec_tokens + (size_t)t;
    return (const char *)p->buf[b].spec + row * (size_t)p->buf[b].item_bytes;
}

/* One slot row: src == NULL zeroes it. */
static void move_row(char *dst, const char *src, size_t n, int chunk)
{
    if (chunk == CHUNK_ROW) {
        if (src)
            memcpy(dst, src, n);
        else
            memset(dst, 0, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = src ? src[i] : 0;
}

static int state_check(const char *op, const ls_state_params *p, int need_src, int need_step)
{
    ex_err[0] = 0;
    if (!p)
        return ex_fail("example: %s: params is NULL", op);
    if (p->n_buffers < 1 || p->n_buffers > LS_MAX_BUFFERS || p->layers < 1 || p->slots < 1 || p->count < 0)
        return ex_fail("example: %s: bad shape (n_buffers=%d layers=%d slots=%d count=%d)", op,
                       (int)p->n_buffers, (int)p->layers, (int)p->slots, (int)p->count);
    for (int b = 0; b < p->n_buffers; b++)
        if (!p->buf[b].main || p->buf[b].item_bytes <= 0)
            return ex_fail("example: %s: buf[%d] has no main buffer or item_bytes <= 0", op, b);
    if (p->count > 0 && (!p->dst || (need_src && !p->src) || (need_step && !p->step)))
        return ex_fail("example: %s: an index array is NULL (count=%d)", op, (int)p->count);
    for (int i = 0; i < p->count; i++) {
        if (p->dst[i] < 0 || p->dst[i] >= p->slots)
            return ex_fail("example: %s: dst[%d]=%d not in 0..%d", op, i, (int)p->dst[i], (int)p->slots - 1);
        if (need_src && (p->src[i] < 0 || p->src[i] >= p->slots))
            return ex_fail("example: %s: src[%d]=%d not in 0..%d", op, i, (int)p->src[i], (int)p->slots - 1);
        if (need_step && p->step[i] >= p->spec_tokens)
            return ex_fail("example: %s: step[%d]=%d not below spec_tokens=%d", op, i, (int)p->step[i],
                           (int)p->spec_tokens);
    }
    return 0;
}

static int ex_state_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    if (state_check("state_copy", p, 1, 0))
        return -1;
    int chunk = knob(t, KNOB_COPY_CHUNK);
    for (int b = 0; b < p->n_buffers; b++)
        for (int l = 0; l < p->layers; l++)
            for (int i = 0; i < p->count; i++)
                move_row(main_at(p, b, l, p->dst[i]), main_at(p, b, l, p->src[i]), (size_t)p->buf[b].item_bytes,
                         chunk);
    return 0;
}

static int ex_state_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    if (state_check("state_accept", p, 0, 1))
        return -1;
    int chunk = knob(t, KNOB_COPY_CHUNK);
    for (int b = 0; b < p->n_buffers; b++) {
        if (!p->buf[b].spec)
            continue; /* buffers without speculative copies are skipped */
        for (int l = 0; l < p->layers; l++)
            for (int i = 0; i < p->count; i++)
                if (p->step[i] >= 0) /* step < 0: nothing accepted for this row */
                    move_row(main_at(p, b, l, p->dst[i]), spec_at(p, b, l, p->dst[i], p->step[i]),
                             (size_t)p->buf[b].item_bytes, chunk);
    }
    return 0;
}

static int ex_state_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    if (state_check("state_zero", p, 0, 0))
        return -1;
    int chunk = knob(t, KNOB_COPY_CHUNK);
    for (int b = 0; b < p->n_buffers; b++)
        for (int l = 0; l < p->layers; l++)
            for (int i = 0; i < p->count; i++)
                move_row(main_at(p, b, l, p->dst[i]), NULL, (size_t)p->buf[b].item_bytes, chunk);
    return 0;
}

/* ---------------------------------------------------------------- conv_update */

static float load(const void *base, ls_dtype dt, int64_t i)
{
    return dt == LS_F32 ? ((const float *)base)[i] : ls_bf16_to_f32(((const uint16_t *)base)[i]);
}

static void store(void *base, ls_dtype dt, int64_t i, float v)
{
    if (dt == LS_F32)
        ((float *)base)[i] = v;
    else
        ((uint16_t *)base)[i] = ls_f32_to_bf16(v);
}

#define EX_MAX_T 64 /* tokens per call this example accepts (u lives on the stack) */

/* Row r (slot s >= 0), channel c: the whole input line u is loaded before anything is written. */
static void conv_line(const ls_conv_params *p, int64_t r, int32_t s, int64_t c)
{
    const int W = p->width, T = p->tokens;
    float u[EX_MAX_T + 3];
    const int64_t sbase = (int64_t)s * p->state_stride_slot + c * p->state_stride_c;
    for (int j = 0; j < W - 1; j++)
        u[j] = load(p->state, p->state_dtype, sbase + j * p->state_stride_w);
    for (int t = 0; t < T; t++)
        u[W - 1 + t] = ls_bf16_to_f32(p->x[r * p->x_stride_b + t * p->x_stride_t + c * p->x_stride_c]);

    for (int t = 0; t < T; t++) {
        float acc = p->bias ? load(p->bias, p->weight_dtype, c) : 0.0f;
        for (int j = 0; j < W; j++)
            acc += load(p->weight, p->weight_dtype, c * W + j) * u[t + j];
        if (p->silu)
            acc = acc / (1.0f + expf(-acc));
        p->y[r * p->y_stride_b + t * p->y_stride_t + c * p->y_stride_c] = ls_f32_to_bf16(acc);
    }
    if (p->inter)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < W - 1; j++)
                store(p->inter, p->state_dtype,
                      (int64_t)s * p->inter_stride_slot + t * p->inter_stride_t + c * p->inter_stride_c +
                          j * p->inter_stride_w,
                      u[t + 1 + j]);
    if (!p->disable_state_update)
        for (int j = 0; j < W - 1; j++)
            store(p->state, p->state_dtype, sbase + j * p->state_stride_w, u[T + j]);
}

static int ex_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    ex_err[0] = 0;
    if (!p)
        return ex_fail("example: conv_update: params is NULL");
    if (p->batch < 1 || p->tokens < 1 || p->tokens > EX_MAX_T || p->channels < 1 || p->width < 2 || p->width > 4)
        return ex_fail("example: conv_update: bad shape (batch=%d tokens=%d (<= %d) channels=%d width=%d (2..4))",
                       (int)p->batch, (int)p->tokens, EX_MAX_T, (int)p->channels, (int)p->width);
    if (!p->x || !p->y || !p->weight || !p->state || !p->slot_idx)
        return ex_fail("example: conv_update: x, y, weight, state or slot_idx is NULL");
    for (int32_t r = 0; r < p->batch; r++)
        if (p->slots > 0 && p->slot_idx[r] >= p->slots)
            return ex_fail("example: conv_update: slot_idx[%d]=%d not below slots=%d", (int)r, (int)p->slot_idx[r],
                           (int)p->slots);
    if (knob(t, KNOB_CONV_LOOP) == LOOP_ROW) {
        for (int64_t r = 0; r < p->batch; r++)
            if (p->slot_idx[r] >= 0) /* padding row (-1): nothing read or written */
                for (int64_t c = 0; c < p->channels; c++)
                    conv_line(p, r, p->slot_idx[r], c);
    } else {
        for (int64_t c = 0; c < p->channels; c++)
            for (int64_t r = 0; r < p->batch; r++)
                if (p->slot_idx[r] >= 0)
                    conv_line(p, r, p->slot_idx[r], c);
    }
    return 0;
}

/* ---------------------------------------------------------------- explain and the table */

static int ex_explain(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev, char *buf,
                      size_t cap)
{
    int n;
    if (op == LS_OP_CONV_UPDATE && params) {
        const ls_conv_params *p = params;
        n = snprintf(buf, cap, "example_conv_%s B=%d T=%d C=%d W=%d", knob(t, KNOB_CONV_LOOP) ? "channel" : "row",
                     (int)p->batch, (int)p->tokens, (int)p->channels, (int)p->width);
    } else if ((op == LS_OP_STATE_COPY || op == LS_OP_STATE_ACCEPT || op == LS_OP_STATE_ZERO) && params) {
        const ls_state_params *p = params;
        const char *name = op == LS_OP_STATE_COPY ? "copy" : op == LS_OP_STATE_ACCEPT ? "accept" : "zero";
        n = snprintf(buf, cap, "example_%s_%s rows=%d buffers=%d layers=%d", name,
                     knob(t, KNOB_COPY_CHUNK) ? "bytes" : "row", (int)p->count, (int)p->n_buffers, (int)p->layers);
    } else {
        return -1; /* an op this impl does not have */
    }
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static const ls_impl example_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "example",
    .version = "example 1.0",
    .runtime = "host",
    .caps = 0, /* host runtime: no graphs */
    .knobs = ex_knobs,
    .n_knobs = N_KNOBS,
    .conv_update = ex_conv_update,
    .gdn = NULL, /* not implemented: skipped:unsupported */
    .kda = NULL,
    .ssu = NULL,
    .state_copy = ex_state_copy,
    .state_accept = ex_state_accept,
    .state_zero = ex_state_zero,
    .last_error = ex_last_error,
    .explain = ex_explain,
};

EX_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &example_impl : NULL;
}
