/*
 * test_presets.c — the presets (docs/presets.md) and their per-rank shapes at tp 1, 2, 4, 8
 * (docs/presets.md shape columns), group replication (docs/presets.md) and errors naming a bad tp.
 * k_want is the list of presets: a preset added to or removed from pool/presets.c without its row
 * here fails test_table (docs/contributing.md, "A new preset").
 */
#include "pool_test_util.h"

typedef struct want_shape {
    const char *name;
    ls_mechanism mech;
    int layers;
    int conv_full;      /* conv channels at tp 1 (one tensor; KDA: each) */
    int heads_full;     /* temporal heads at tp 1 */
    int d1, d2;         /* temporal inner dims */
    int qk_full;        /* GDN/KDA key heads, Mamba2 groups at tp 1 */
} want_shape;

static const want_shape k_want[] = {
    {"qwen3-next-80b-a3b", LS_MECH_GDN, 36, 8192, 32, 128, 128, 16},
    {"kimi-linear-48b-a3b", LS_MECH_KDA, 20, 4096, 32, 128, 128, 32},
    {"nemotron-h-8b", LS_MECH_MAMBA2, 24, 10240, 128, 64, 128, 8},
    {"nemotron-nano-9b-v2", LS_MECH_MAMBA2, 27, 12288, 128, 80, 128, 8},
    {"falcon-h1-7b", LS_MECH_MAMBA2, 44, 3584, 24, 128, 256, 1},
};
#define N_WANT ((int)(sizeof k_want / sizeof k_want[0]))
static const int k_tps[] = {1, 2, 4, 8}; /* every preset divides at these (the pool tests use tp 8) */

/* A single Mamba2 group is replicated, one per rank: conv per rank = intermediate/tp + 2*dstate
 * (Falcon-H1: 3072/tp + 2*256, docs/presets.md). */
static int want_conv(const want_shape *w, int tp)
{
    if (w->mech == LS_MECH_MAMBA2 && w->qk_full == 1)
        return (w->conv_full - 2 * w->d2) / tp + 2 * w->d2;
    return w->conv_full / tp;
}

static void test_table(void)
{
    LS_CHECK_EQ_INT(ls_model_count(), N_WANT);
    LS_CHECK(ls_model_at(-1) == NULL);
    LS_CHECK(ls_model_at(ls_model_count()) == NULL);
    LS_CHECK(ls_model_find("no-such-model") == NULL);
    LS_CHECK(ls_model_find(NULL) == NULL);
    LS_CHECK(strcmp(ls_mechanism_name(LS_MECH_MAMBA2), "mamba2") == 0);
    LS_CHECK(strcmp(ls_mechanism_name(LS_MECH_GDN), "gdn") == 0);
    LS_CHECK(strcmp(ls_mechanism_name(LS_MECH_KDA), "kda") == 0);
    for (int i = 0; i < N_WANT; i++) {
        const ls_model *m = ls_model_find(k_want[i].name);
        LS_REQUIRE(m != NULL);
        LS_CHECK(m == ls_model_at(i));
        LS_CHECK_EQ_INT(m->mechanism, k_want[i].mech);
        LS_CHECK_EQ_INT(m->layers, k_want[i].layers);
        LS_CHECK_EQ_INT(m->conv_width, 4);
        LS_CHECK_EQ_INT(m->conv_bias, m->mechanism == LS_MECH_MAMBA2);
        LS_CHECK_EQ_INT(m->conv_weight_dtype, m->mechanism == LS_MECH_KDA ? LS_F32 : LS_BF16);
    }
    /* every preset, listed in k_want or not, divides at tp 1, 2, 4, 8 */
    for (int i = 0; i < ls_model_count(); i++)
        for (int t = 0; t < 4; t++) {
            ls_shape s;
            const int rc = ls_shape_from_model(ls_model_at(i), k_tps[t], &s);
            if (rc != 0)
                fprintf(stderr, "preset %s: %s\n", ls_model_at(i)->name, ls_last_error());
            LS_CHECK(rc == 0);
        }
}

static void test_shapes(void)
{
    for (int i = 0; i < N_WANT; i++) {
        const want_shape *w = &k_want[i];
        for (int t = 0; t < 4; t++) {
            const int tp = k_tps[t];
            ls_shape s;
            LS_REQUIRE(ls_shape_from_model(ls_model_at(i), tp, &s) == 0);
            LS_CHECK(s.model == ls_model_at(i));
            LS_CHECK_EQ_INT(s.tp, tp);
            LS_CHECK_EQ_INT(s.mechanism, w->mech);
            LS_CHECK_EQ_INT(s.layers, w->layers);
            LS_CHECK_EQ_INT(s.conv_width, 4);
            LS_CHECK_EQ_INT(s.conv_channels, want_conv(w, tp));
            if (w->mech == LS_MECH_MAMBA2) {
                LS_CHECK_EQ_INT(s.nheads, w->heads_full / tp);
                LS_CHECK_EQ_INT(s.head_dim, w->d1);
                LS_CHECK_EQ_INT(s.dstate, w->d2);
                /* groups 8/tp; Falcon's single group is replicated: one per rank */
                LS_CHECK_EQ_INT(s.ngroups, w->qk_full == 1 ? 1 : w->qk_full / tp);
            } else {
                LS_CHECK_EQ_INT(s.heads_v, w->heads_full / tp);
                LS_CHECK_EQ_INT(s.heads_qk, w->qk_full / tp);
                LS_CHECK_EQ_INT(s.dk, w->d1);
                LS_CHECK_EQ_INT(s.dv, w->d2);
            }
            /* the descriptor carries the same numbers */
            ls_state_desc d;
            LS_REQUIRE(ls_state_desc_from_shape(&s, LS_F32, 0, &d) == 0);
            LS_CHECK_EQ_INT(d.layers, w->layers);
            LS_CHECK_EQ_INT(d.n_conv, w->mech == LS_MECH_KDA ? 3 : 1);
            for (int c = 0; c < d.n_conv; c++) {
                LS_CHECK_EQ_INT(d.conv[c].channels, want_conv(w, tp));
                LS_CHECK_EQ_INT(d.conv[c].window, 3);
                LS_CHECK_EQ_INT(d.conv[c].orient, w->mech == LS_MECH_KDA ? LS_CONV_WINDOW_MAJOR
                                                                        : LS_CONV_CHANNEL_MAJOR);
            }
            LS_CHECK_EQ_INT(d.temporal[0], w->heads_full / tp);
            LS_CHECK_EQ_INT(d.temporal[1], w->d1);
            LS_CHECK_EQ_INT(d.temporal[2], w->d2);
        }
    }
    /* Qwen3-Next keeps 2 value heads per key head at every tp */
    ls_shape s;
    LS_REQUIRE(ls_shape_from_model(ls_model_find("qwen3-next-80b-a3b"), 8, &s) == 0);
    LS_CHECK_EQ_INT(s.heads_v / s.heads_qk, 2);
}

/* A bad tp fails, names tp and the value it does not divide, and leaves `out` untouched. */
static void expect_tp_error(const char *model, int tp, const char *field)
{
    ls_shape s;
    memset(&s, 0x5A, sizeof s);
    ls_shape before = s;
    ls_clear_error();
    LS_CHECK_EQ_INT(ls_shape_from_model(ls_model_find(model), tp, &s), -1);
    char tp_text[32];
    snprintf(tp_text, sizeof tp_text, "tp %d", tp);
    LS_CHECK(pt_error_has(tp_text));
    if (field)
        LS_CHECK(pt_error_has(field));
    LS_CHECK(memcmp(&s, &before, sizeof s) == 0);
}

static void test_bad_tp(void)
{
    expect_tp_error("qwen3-next-80b-a3b", 0, NULL);
    expect_tp_error("qwen3-next-80b-a3b", -2, NULL);
    expect_tp_error("qwen3-next-80b-a3b", 3, "heads_qk 16");
    expect_tp_error("qwen3-next-80b-a3b", 64, "heads_qk 16");
    expect_tp_error("kimi-linear-48b-a3b", 3, "heads_qk 32");
    expect_tp_error("kimi-linear-48b-a3b", 64, "heads_qk 32");
    expect_tp_error("nemotron-h-8b", 16, "ngroups 8");   /* 8 groups, not replicable */
    expect_tp_error("nemotron-nano-9b-v2", 3, "ngroups 8");
    expect_tp_error("falcon-h1-7b", 16, "nheads 24");    /* group replicated, heads not */
    ls_shape s;
    LS_CHECK_EQ_INT(ls_shape_from_model(NULL, 1, &s), -1);
    LS_CHECK_EQ_INT(ls_shape_from_model(ls_model_at(0), 1, NULL), -1);
}

/* User-built models: replication for a single GDN key head, bad fields named. */
static void test_user_models(void)
{
    ls_model g = {.name = "tiny-gdn", .mechanism = LS_MECH_GDN, .layers = 2, .conv_width = 4,
                  .conv_weight_dtype = LS_BF16, .heads_qk = 1, .heads_v = 4, .dk = 16, .dv = 8};
    ls_shape s;
    LS_REQUIRE(ls_shape_from_model(&g, 2, &s) == 0);
    LS_CHECK_EQ_INT(s.heads_qk, 1);            /* 1 key head replicated to 2, one per rank */
    LS_CHECK_EQ_INT(s.heads_v, 2);
    LS_CHECK_EQ_INT(s.conv_channels, (2 * 2 * 16 + 4 * 8) / 2);

    ls_model bad = g;
    bad.dk = 0;
    LS_CHECK_EQ_INT(ls_shape_from_model(&bad, 1, &s), -1);
    LS_CHECK(pt_error_has("dk 0"));
    bad = g;
    bad.layers = -1;
    LS_CHECK_EQ_INT(ls_shape_from_model(&bad, 1, &s), -1);
    LS_CHECK(pt_error_has("layers -1"));
    bad = g;
    bad.conv_width = 1;
    LS_CHECK_EQ_INT(ls_shape_from_model(&bad, 1, &s), -1);
    LS_CHECK(pt_error_has("conv_width 1"));
    bad = g;
    bad.mechanism = (ls_mechanism)9;
    LS_CHECK_EQ_INT(ls_shape_from_model(&bad, 1, &s), -1);
    LS_CHECK(pt_error_has("mechanism 9"));
    bad = g;
    bad.heads_qk = 3; /* 3 key heads, 4 value heads: not a multiple */
    LS_CHECK_EQ_INT(ls_shape_from_model(&bad, 1, &s), -1);
    LS_CHECK(pt_error_has("heads_v 4"));

    ls_model m = {.name = "tiny-m2", .mechanism = LS_MECH_MAMBA2, .layers = 1, .conv_width = 2,
                  .conv_bias = 1, .intermediate = 64, .nheads = 4, .head_dim = 16, .dstate = 8,
                  .ngroups = 2};
    LS_REQUIRE(ls_shape_from_model(&m, 2, &s) == 0);
    LS_CHECK_EQ_INT(s.ngroups, 1);
    LS_CHECK_EQ_INT(s.conv_channels, (64 + 2 * 2 * 8) / 2);
    LS_CHECK_EQ_INT(ls_shape_from_model(&m, 4, &s), -1); /* 2 groups at tp 4: not replicable */
    LS_CHECK(pt_error_has("tp 4"));
    m.nheads = 3; /* 3 heads, 2 groups */
    LS_CHECK_EQ_INT(ls_shape_from_model(&m, 1, &s), -1);
    LS_CHECK(pt_error_has("nheads 3"));
}

int main(void)
{
    test_table();
    test_shapes();
    test_bad_tp();
    test_user_models();
    return ls_test_exit();
}
