/*
 * test_bytes.c — every number of the docs/presets.md byte tables, every preset x tp 1, 2, 4, 8, through
 * the descriptor byte functions: conv bytes per layer, SSM bytes per layer (fp32), per-layer
 * total, all-L fp32 (mamba_cache_per_req) with its MiB figure, all-L with bf16 SSM, and the
 * Qwen3-Next spec extra for T = 4.
 */
#include "pool_test_util.h"

typedef struct row {
    const char *model;
    int tp;
    int64_t conv_layer;      /* 0 where the table has no column (Mamba2 tables) */
    int64_t ssm_layer;       /* idem */
    int64_t layer_fp32;
    int64_t all_fp32;
    double all_fp32_mib;
    int64_t all_bf16;
    double all_bf16_mib;
    double spec4_mib;        /* Qwen3-Next only, 0 elsewhere */
} row;

static const row k_rows[] = {
    {"qwen3-next-80b-a3b", 1, 49152, 2097152, 2146304, 77266944, 73.69, 39518208, 37.69, 294.75},
    {"qwen3-next-80b-a3b", 2, 24576, 1048576, 1073152, 38633472, 36.84, 19759104, 18.84, 147.38},
    {"qwen3-next-80b-a3b", 4, 12288, 524288, 536576, 19316736, 18.42, 9879552, 9.42, 73.69},
    {"qwen3-next-80b-a3b", 8, 6144, 262144, 268288, 9658368, 9.21, 4939776, 4.71, 36.84},
    {"kimi-linear-48b-a3b", 1, 73728, 2097152, 2170880, 43417600, 41.41, 22446080, 21.41, 0},
    {"kimi-linear-48b-a3b", 2, 36864, 1048576, 1085440, 21708800, 20.70, 11223040, 10.70, 0},
    {"kimi-linear-48b-a3b", 4, 18432, 524288, 542720, 10854400, 10.35, 5611520, 5.35, 0},
    {"kimi-linear-48b-a3b", 8, 9216, 262144, 271360, 5427200, 5.18, 2805760, 2.68, 0},
    {"nemotron-h-8b", 1, 0, 0, 4255744, 102137856, 97.41, 51806208, 49.41, 0},
    {"nemotron-h-8b", 2, 0, 0, 2127872, 51068928, 48.70, 25903104, 24.70, 0},
    {"nemotron-h-8b", 4, 0, 0, 1063936, 25534464, 24.35, 12951552, 12.35, 0},
    {"nemotron-h-8b", 8, 0, 0, 531968, 12767232, 12.18, 6475776, 6.18, 0},
    {"nemotron-nano-9b-v2", 1, 0, 0, 5316608, 143548416, 136.90, 72769536, 69.40, 0},
    {"nemotron-nano-9b-v2", 2, 0, 0, 2658304, 71774208, 68.45, 36384768, 34.70, 0},
    {"nemotron-nano-9b-v2", 4, 0, 0, 1329152, 35887104, 34.22, 18192384, 17.35, 0},
    {"nemotron-nano-9b-v2", 8, 0, 0, 664576, 17943552, 17.11, 9096192, 8.67, 0},
    {"falcon-h1-7b", 1, 0, 0, 3167232, 139358208, 132.90, 70152192, 66.90, 0},
    {"falcon-h1-7b", 2, 0, 0, 1585152, 69746688, 66.52, 35143680, 33.52, 0},
    {"falcon-h1-7b", 4, 0, 0, 794112, 34940928, 33.32, 17639424, 16.82, 0},
    {"falcon-h1-7b", 8, 0, 0, 398592, 17538048, 16.73, 8887296, 8.48, 0},
};

#define MIB (1024.0 * 1024.0)
#define MIB_TOL 0.0051 /* the tables round to two decimals */

static ls_state_desc desc_of(const char *model, int tp, ls_dtype tdt, int spec)
{
    for (int i = 0; i < ls_model_count(); i++)
        if (strcmp(ls_model_at(i)->name, model) == 0)
            return pt_desc(i, tp, tdt, spec);
    fprintf(stderr, "unknown model %s\n", model);
    exit(1);
}

static int64_t conv_bytes(const ls_state_desc *d)
{
    int64_t sum = 0;
    for (int i = 0; i < d->n_conv; i++)
        sum += ls_conv_item_bytes(d, i);
    return sum;
}

int main(void)
{
    const int n = (int)(sizeof k_rows / sizeof k_rows[0]);
    enum { MAX_PRESETS = 64 };
    int seen[MAX_PRESETS] = {0};
    LS_REQUIRE(ls_model_count() <= MAX_PRESETS);
    for (int r = 0; r < n; r++) {
        const row *w = &k_rows[r];
        ls_state_desc f = desc_of(w->model, w->tp, LS_F32, 0);
        ls_state_desc h = desc_of(w->model, w->tp, LS_BF16, 0);
        const int failures_before = ls_test_failures;
        if (w->conv_layer) {
            LS_CHECK_EQ_INT(conv_bytes(&f), w->conv_layer);
            LS_CHECK_EQ_INT(ls_temporal_item_bytes(&f), w->ssm_layer);
        }
        /* conv + SSM = per layer, whatever the table shows */
        LS_CHECK_EQ_INT(conv_bytes(&f) + ls_temporal_item_bytes(&f), w->layer_fp32);
        LS_CHECK_EQ_INT(ls_layer_bytes(&f), w->layer_fp32);
        LS_CHECK_EQ_INT(ls_bytes_per_req(&f), w->all_fp32);
        LS_CHECK_NEAR(ls_bytes_per_req(&f) / MIB, w->all_fp32_mib, MIB_TOL, 0);
        LS_CHECK_EQ_INT(ls_bytes_per_req(&h), w->all_bf16);
        LS_CHECK_NEAR(ls_bytes_per_req(&h) / MIB, w->all_bf16_mib, MIB_TOL, 0);
        /* bf16 halves the SSM and leaves the conv (always bf16) alone */
        LS_CHECK_EQ_INT(ls_temporal_item_bytes(&h) * 2, ls_temporal_item_bytes(&f));
        LS_CHECK_EQ_INT(conv_bytes(&h), conv_bytes(&f));
        LS_CHECK_EQ_INT(ls_spec_bytes_per_req(&f), 0);
        if (w->spec4_mib > 0) {
            ls_state_desc s = desc_of(w->model, w->tp, LS_F32, 4);
            LS_CHECK_EQ_INT(ls_spec_bytes_per_req(&s), 4 * w->all_fp32);
            LS_CHECK_NEAR(ls_spec_bytes_per_req(&s) / MIB, w->spec4_mib, MIB_TOL, 0);
            LS_CHECK_EQ_INT(ls_bytes_per_req(&s), w->all_fp32); /* spec does not change per_req */
        }
        if (ls_test_failures > failures_before)
            fprintf(stderr, "  ^ in row %s tp %d\n", w->model, w->tp);
        for (int i = 0; i < ls_model_count(); i++)
            seen[i] += strcmp(ls_model_at(i)->name, w->model) == 0;
    }
    for (int i = 0; i < ls_model_count(); i++) {
        if (seen[i] != 4)
            fprintf(stderr, "preset %s: %d rows in k_rows, want tp 1, 2, 4, 8\n", ls_model_at(i)->name, seen[i]);
        LS_CHECK_EQ_INT(seen[i], 4);
    }

    /* the bad conv index is named, not silently counted */
    ls_state_desc d = desc_of("kimi-linear-48b-a3b", 1, LS_F32, 0);
    LS_CHECK_EQ_INT(ls_conv_item_bytes(&d, 3), -1);
    LS_CHECK(pt_error_has("conv index 3"));
    LS_CHECK_EQ_INT(ls_conv_item_bytes(&d, -1), -1);
    return ls_test_exit();
}
