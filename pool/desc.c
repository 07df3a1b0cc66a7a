/*
 * desc.c — the unified state descriptor: built from a per-rank shape (docs/presets.md, docs/pool.md), validated
 * field by field, and turned into byte counts (mamba_cache_per_req) and a pool capacity from a
 * memory budget (docs/pool.md).
 *
 * This file and presets.c are the only places that know the mechanisms: they turn a model into
 * data (a conv list with orientations + one temporal shape). Everything downstream loops over
 * that data.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ls_pool.h"

/* Sanity caps that keep every byte count well inside int64 (and size_t on 64-bit hosts). */
#define DESC_MAX_DIM (1 << 24)
#define DESC_MAX_LAYERS 65536
#define DESC_MAX_SPEC 4096
#define DESC_MAX_ITEM_BYTES (1ll << 40)

static int dtype_ok(ls_dtype t) { return t == LS_F32 || t == LS_BF16; }

/*
 * Descriptor of one TP rank: conv dtype bf16 (docs/pool.md), temporal dtype as asked.
 *   GDN    conv [C, W-1] channel-major, C = conv_dim/tp;  temporal [HV, K, V] (V innermost)
 *   KDA    conv 3 x [W-1, C] window-major: HV*V (q-sized), H*K, H*K;  temporal [HV, K, V]
 *   Mamba2 conv [C, W-1] channel-major;  temporal [nheads, head_dim, dstate]
 * spec_tokens T > 0 adds the speculative buffers (one state / one window per draft step).
 */
int ls_state_desc_from_shape(const ls_shape *s, ls_dtype temporal_dtype, int spec_tokens,
                             ls_state_desc *out)
{
    if (!s || !out)
        return ls_fail("desc: %s is NULL", !s ? "shape" : "out");
    if (!dtype_ok(temporal_dtype))
        return ls_fail("desc: temporal dtype %d is not fp32 or bf16", (int)temporal_dtype);
    ls_state_desc d;
    memset(&d, 0, sizeof d);
    d.conv_dtype = LS_BF16;
    d.temporal_dtype = temporal_dtype;
    d.layers = s->layers;
    d.spec_tokens = spec_tokens;
    const int32_t window = s->conv_width - 1;
    switch (s->mechanism) {
    case LS_MECH_GDN:
        d.n_conv = 1;
        d.conv[0] = (ls_conv_shape){s->conv_channels, window, LS_CONV_CHANNEL_MAJOR};
        d.temporal[0] = s->heads_v;
        d.temporal[1] = s->dk;
        d.temporal[2] = s->dv;
        break;
    case LS_MECH_KDA:
        d.n_conv = 3;
        d.conv[0] = (ls_conv_shape){s->heads_v * s->dv, window, LS_CONV_WINDOW_MAJOR};
        d.conv[1] = (ls_conv_shape){s->heads_qk * s->dk, window, LS_CONV_WINDOW_MAJOR};
        d.conv[2] = d.conv[1];
        d.temporal[0] = s->heads_v;
        d.temporal[1] = s->dk;
        d.temporal[2] = s->dv;
        break;
    case LS_MECH_MAMBA2:
        d.n_conv = 1;
        d.conv[0] = (ls_conv_shape){s->conv_channels, window, LS_CONV_CHANNEL_MAJOR};
        d.temporal[0] = s->nheads;
        d.temporal[1] = s->head_dim;
        d.temporal[2] = s->dstate;
        break;
    default:
        return ls_fail("desc: shape mechanism %d is unknown", (int)s->mechanism);
    }
    if (ls_state_desc_check(&d))
        return -1;
    *out = d;
    return 0;
}

/* ls_fail naming `field` unless 1 <= v <= max. */
static int check_range(const char *field, int64_t v, int64_t max)
{
    if (v >= 1 && v <= max)
        return 0;
    return ls_fail("desc: %s %lld must be in 1..%lld", field, (long long)v, (long long)max);
}

/*
 * Validates a descriptor built by ls_state_desc_from_shape or by hand. Every check names the
 * field and its value. Entries of conv[] past n_conv are ignored. The caps keep the byte counts
 * of the largest pool (all layers, all slots, spec included) representable; the pool checks the
 * slot-dependent totals itself.
 */
int ls_state_desc_check(const ls_state_desc *d)
{
    if (!d)
        return ls_fail("desc: descriptor is NULL");
    if (!dtype_ok(d->conv_dtype))
        return ls_fail("desc: conv_dtype %d is not fp32 or bf16", (int)d->conv_dtype);
    if (!dtype_ok(d->temporal_dtype))
        return ls_fail("desc: temporal_dtype %d is not fp32 or bf16", (int)d->temporal_dtype);
    if (check_range("layers", d->layers, DESC_MAX_LAYERS) ||
        check_range("n_conv", d->n_conv, LS_MAX_CONV))
        return -1;
    char field[32];
    for (int i = 0; i < d->n_conv; i++) {
        const ls_conv_shape *c = &d->conv[i];
        snprintf(field, sizeof field, "conv[%d].channels", i);
        if (check_range(field, c->channels, DESC_MAX_DIM))
            return -1;
        snprintf(field, sizeof field, "conv[%d].window", i);
        if (check_range(field, c->window, DESC_MAX_DIM))
            return -1;
        if (c->orient != LS_CONV_CHANNEL_MAJOR && c->orient != LS_CONV_WINDOW_MAJOR)
            return ls_fail("desc: conv[%d].orient %d is not channel-major (0) or window-major (1)",
                           i, (int)c->orient);
        if ((int64_t)c->channels * c->window * (int64_t)ls_dtype_size(d->conv_dtype) >
            DESC_MAX_ITEM_BYTES)
            return ls_fail("desc: conv[%d] item of %d x %d elements is too large", i, c->channels,
                           c->window);
    }
    int64_t t_items = 1;
    for (int k = 0; k < 3; k++) {
        snprintf(field, sizeof field, "temporal[%d]", k);
        if (check_range(field, d->temporal[k], DESC_MAX_DIM))
            return -1;
        t_items *= d->temporal[k];
        if (t_items * (int64_t)ls_dtype_size(d->temporal_dtype) > DESC_MAX_ITEM_BYTES)
            return ls_fail("desc: temporal item [%d, %d, %d] is too large", d->temporal[0],
                           d->temporal[1], d->temporal[2]);
    }
    if (d->spec_tokens < 0 || d->spec_tokens > DESC_MAX_SPEC)
        return ls_fail("desc: spec_tokens %d must be in 0..%d", d->spec_tokens, DESC_MAX_SPEC);
    return 0;
}

int64_t ls_conv_item_bytes(const ls_state_desc *d, int i)
{
    if (ls_state_desc_check(d))
        return -1;
    if (i < 0 || i >= d->n_conv)
        return ls_fail("desc: conv index %d is outside 0..%d", i, d->n_conv - 1);
    return (int64_t)d->conv[i].channels * d->conv[i].window *
           (int64_t)ls_dtype_size(d->conv_dtype);
}

int64_t ls_temporal_item_bytes(const ls_state_desc *d)
{
    if (ls_state_desc_check(d))
        return -1;
    return (int64_t)d->temporal[0] * d->temporal[1] * d->temporal[2] *
           (int64_t)ls_dtype_size(d->temporal_dtype);
}

/* Bytes of one slot of one layer over every tensor (conv list + temporal). -1 if invalid. */
int64_t ls_layer_bytes(const ls_state_desc *d)
{
    int64_t total = ls_temporal_item_bytes(d);
    if (total < 0)
        return -1;
    for (int i = 0; i < d->n_conv; i++)
        total += ls_conv_item_bytes(d, i);
    return total;
}

/* SGLang's mamba_cache_per_req: L x layer bytes (spec buffers not included). */
int64_t ls_bytes_per_req(const ls_state_desc *d)
{
    int64_t layer = ls_layer_bytes(d);
    return layer < 0 ? -1 : layer * d->layers;
}

/* Extra bytes per slot of the speculative buffers: one full state per draft step. */
int64_t ls_spec_bytes_per_req(const ls_state_desc *d)
{
    int64_t per_req = ls_bytes_per_req(d);
    return per_req < 0 ? -1 : per_req * d->spec_tokens;
}

/*
 * docs/pool.md with radix cache: M = floor(budget * r / (1 + r)) bytes go to the state pool and
 * S = floor(M / per_req / (1 + T)). The +1 padding slot is not budgeted (as upstream at AFTER).
 * Returns 0 when one slot does not fit, -1 (error set) for a bad descriptor, a negative budget
 * or a ratio that is not a positive finite number.
 */
int64_t ls_capacity_from_budget(const ls_state_desc *d, int64_t budget_bytes, double ratio)
{
    int64_t per_req = ls_bytes_per_req(d);
    if (per_req < 0)
        return -1;
    if (budget_bytes < 0)
        return ls_fail("desc: budget %lld bytes must be >= 0", (long long)budget_bytes);
    if (!(ratio > 0.0) || !isfinite(ratio))
        return ls_fail("desc: ratio %g must be a positive finite number", ratio);
    int64_t m = (int64_t)floor((double)budget_bytes * ratio / (1.0 + ratio));
    return m / per_req / (1 + d->spec_tokens);
}
