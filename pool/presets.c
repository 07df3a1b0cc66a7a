/*
 * presets.c — the model presets of docs/presets.md and the per-TP-rank shape derivation of docs/presets.md
 *
 * The table holds full-model hyper-parameters exactly as the HF configs state them; everything
 * per-rank (heads / tp, conv channels / tp, group replication) is derived in ls_shape_from_model
 * so one rule serves every preset and every user-built ls_model.
 */
#include <string.h>

#include "ls_pool.h"

static const ls_model k_models[] = {
    {.name = "qwen3-next-80b-a3b", .mechanism = LS_MECH_GDN, .layers = 36, .conv_width = 4,
     .conv_bias = 0, .conv_weight_dtype = LS_BF16,
     .heads_qk = 16, .heads_v = 32, .dk = 128, .dv = 128},
    {.name = "kimi-linear-48b-a3b", .mechanism = LS_MECH_KDA, .layers = 20, .conv_width = 4,
     .conv_bias = 0, .conv_weight_dtype = LS_F32,
     .heads_qk = 32, .heads_v = 32, .dk = 128, .dv = 128},
    {.name = "nemotron-h-8b", .mechanism = LS_MECH_MAMBA2, .layers = 24, .conv_width = 4,
     .conv_bias = 1, .conv_weight_dtype = LS_BF16,
     .intermediate = 8192, .nheads = 128, .head_dim = 64, .dstate = 128, .ngroups = 8},
    {.name = "nemotron-nano-9b-v2", .mechanism = LS_MECH_MAMBA2, .layers = 27, .conv_width = 4,
     .conv_bias = 1, .conv_weight_dtype = LS_BF16,
     .intermediate = 10240, .nheads = 128, .head_dim = 80, .dstate = 128, .ngroups = 8},
    {.name = "falcon-h1-7b", .mechanism = LS_MECH_MAMBA2, .layers = 44, .conv_width = 4,
     .conv_bias = 1, .conv_weight_dtype = LS_BF16,
     .intermediate = 3072, .nheads = 24, .head_dim = 128, .dstate = 256, .ngroups = 1},
};

#define N_MODELS ((int)(sizeof k_models / sizeof k_models[0]))

const char *ls_mechanism_name(ls_mechanism m)
{
    switch (m) {
    case LS_MECH_MAMBA2: return "mamba2";
    case LS_MECH_GDN: return "gdn";
    case LS_MECH_KDA: return "kda";
    }
    return "unknown";
}

int ls_model_count(void) { return N_MODELS; }

const ls_model *ls_model_at(int i) { return (i >= 0 && i < N_MODELS) ? &k_models[i] : NULL; }

const ls_model *ls_model_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < N_MODELS; i++)
        if (strcmp(k_models[i].name, name) == 0)
            return &k_models[i];
    return NULL;
}

/* ls_fail naming the field unless v >= 1. */
static int need_positive(const ls_model *m, const char *field, int32_t v)
{
    if (v >= 1)
        return 0;
    return ls_fail("shape: %s %d of model '%s' must be >= 1", field, v, m->name ? m->name : "?");
}

/* ls_fail unless tp divides v. */
static int need_divides(const ls_model *m, int tp, const char *field, int64_t v)
{
    if (v % tp == 0)
        return 0;
    return ls_fail("shape: tp %d does not divide %s %lld of model '%s'", tp, field, (long long)v,
                   m->name ? m->name : "?");
}

/*
 * docs/presets.md group replication: a group count that tp does not divide is only supported when it
 * is 1, and then every rank holds one replicated group (groups become tp). Returns the full
 * (replicated) group count, or -1 with the error naming tp.
 */
static int32_t replicate_groups(const ls_model *m, int tp, const char *field, int32_t groups)
{
    if (groups % tp == 0)
        return groups;
    if (groups == 1)
        return tp;
    ls_fail("shape: tp %d does not divide %s %d of model '%s' (only 1 group is replicated)", tp,
            field, groups, m->name ? m->name : "?");
    return -1;
}

/* GDN / KDA: one key head count H, one value head count HV (a multiple of H per rank).
 * GDN goes through SGLang's Mamba2StateShape (n_groups = H, so H = 1 is replicated); KDA's
 * KimiLinearStateShape splits heads plainly. Conv channels: GDN all of q,k,v; KDA one k-sized
 * tensor (the three tensors are sized by ls_state_desc_from_shape). */
static int shape_delta(const ls_model *m, int tp, int replicate_h, ls_shape *s)
{
    if (need_positive(m, "heads_qk", m->heads_qk) || need_positive(m, "heads_v", m->heads_v) ||
        need_positive(m, "dk", m->dk) || need_positive(m, "dv", m->dv))
        return -1;
    int32_t h = m->heads_qk;
    if (replicate_h) {
        h = replicate_groups(m, tp, "heads_qk", h);
        if (h < 0)
            return -1;
    } else if (need_divides(m, tp, "heads_qk", h)) {
        return -1;
    }
    if (need_divides(m, tp, "heads_v", m->heads_v))
        return -1;
    s->heads_qk = h / tp;
    s->heads_v = m->heads_v / tp;
    s->dk = m->dk;
    s->dv = m->dv;
    if (s->heads_v % s->heads_qk != 0)
        return ls_fail("shape: per-rank heads_v %d is not a multiple of heads_qk %d at tp %d "
                       "(model '%s')", s->heads_v, s->heads_qk, tp, m->name ? m->name : "?");
    if (replicate_h) {
        int64_t conv_dim = 2ll * h * m->dk + (int64_t)m->heads_v * m->dv;
        if (need_divides(m, tp, "conv_dim", conv_dim))
            return -1;
        s->conv_channels = (int32_t)(conv_dim / tp);
    } else {
        s->conv_channels = s->heads_qk * s->dk;
    }
    return 0;
}

/* Mamba2: conv over x, B, C with conv_dim = intermediate + 2 * groups * dstate (docs/presets.md). */
static int shape_mamba2(const ls_model *m, int tp, ls_shape *s)
{
    if (need_positive(m, "intermediate", m->intermediate) ||
        need_positive(m, "nheads", m->nheads) || need_positive(m, "head_dim", m->head_dim) ||
        need_positive(m, "dstate", m->dstate) || need_positive(m, "ngroups", m->ngroups))
        return -1;
    int32_t g = replicate_groups(m, tp, "ngroups", m->ngroups);
    if (g < 0 || need_divides(m, tp, "nheads", m->nheads) ||
        need_divides(m, tp, "intermediate", m->intermediate))
        return -1;
    int64_t conv_dim = (int64_t)m->intermediate + 2ll * g * m->dstate;
    if (need_divides(m, tp, "conv_dim", conv_dim))
        return -1;
    s->nheads = m->nheads / tp;
    s->head_dim = m->head_dim;
    s->dstate = m->dstate;
    s->ngroups = g / tp;
    if (s->nheads % s->ngroups != 0)
        return ls_fail("shape: per-rank nheads %d is not a multiple of ngroups %d at tp %d "
                       "(model '%s')", s->nheads, s->ngroups, tp, m->name ? m->name : "?");
    s->conv_channels = (int32_t)(conv_dim / tp);
    return 0;
}

/*
 * Per-rank shape of model m at tensor-parallel degree tp. On error `out` is left untouched and
 * the message names the offending value (tp that does not divide a head/group count, a
 * non-positive hyper-parameter, an unknown mechanism).
 */
int ls_shape_from_model(const ls_model *m, int tp, ls_shape *out)
{
    if (!m || !out)
        return ls_fail("shape: %s is NULL", !m ? "model" : "out");
    if (tp < 1)
        return ls_fail("shape: tp %d must be >= 1", tp);
    if (need_positive(m, "layers", m->layers))
        return -1;
    if (m->conv_width < 2)
        return ls_fail("shape: conv_width %d of model '%s' must be >= 2", m->conv_width,
                       m->name ? m->name : "?");
    ls_shape s;
    memset(&s, 0, sizeof s);
    s.model = m;
    s.tp = tp;
    s.mechanism = m->mechanism;
    s.layers = m->layers;
    s.conv_width = m->conv_width;
    int rc;
    switch (m->mechanism) {
    case LS_MECH_GDN: rc = shape_delta(m, tp, 1, &s); break;
    case LS_MECH_KDA: rc = shape_delta(m, tp, 0, &s); break;
    case LS_MECH_MAMBA2: rc = shape_mamba2(m, tp, &s); break;
    default:
        return ls_fail("shape: mechanism %d of model '%s' is unknown", (int)m->mechanism,
                       m->name ? m->name : "?");
    }
    if (rc)
        return -1;
    *out = s;
    return 0;
}
