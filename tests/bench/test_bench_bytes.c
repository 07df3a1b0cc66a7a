/*
 * test_bench_bytes.c — bench/families/bytes.c against the worked numbers of docs/bytes.md (per layer, MiB,
 * fp32 SSM) and the per-case bytes callbacks of the registry against the same formulas.
 * A docs/bytes.md figure printed with d decimals must match to half a unit of its last digit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "families/family.h"
#include "ls_test.h"

#define MIB 1048576.0

/* |bytes/MiB - spec| <= half a unit in the last printed decimal of spec_text. */
static void check_mib(const char *what, int64_t bytes, const char *spec_text)
{
    const char *dot = strchr(spec_text, '.');
    int decimals = dot ? (int)strlen(dot + 1) : 0;
    double spec = atof(spec_text), got = (double)bytes / MIB;
    double tol = 0.5 * pow(10.0, -decimals) + 1e-9;
    ls_test_checks++;
    if (!(fabs(got - spec) <= tol)) {
        fprintf(stderr, "%s: %.6f MiB, docs/bytes.md says %s\n", what, got, spec_text);
        ls_test_failures++;
    }
}

static const int64_t Bs[4] = {1, 16, 64, 256};

static void worked_numbers(void)
{
    static const char *conv_dec[4] = {"0.094", "1.031", "4.031", "16.03"};
    static const char *gdn_dec[4] = {"2.012", "32.19", "128.75", "515.0"};
    static const char *conv_ver[4] = {"0.234", "3.281", "13.03", "52.03"};
    static const char *gdn_ver[4] = {"5.047", "80.76", "323.0", "1292.1"};
    static const char *accept[4] = {"2.047", "32.75", "131.0", "524.0"};
    static const char *gdn_tp1[4] = {"4.024", "64.38", "257.5", "1030.0"};
    static const char *kimi_conv[4] = {"0.188", "1.594", "6.094", "24.10"};
    static const char *kda[4] = {"2.027", "32.32", "129.3", "517.0"};
    static const char *nano_conv[4] = {"0.305", "3.117", "12.12", "48.12"};
    static const char *nano_ssu[4] = {"10.04", "160.7", "642.8", "2571.1"};
    static const char *nano_ssu_v[4] = {"25.17", "402.8", "1611.1", "6444.3"};
    for (int i = 0; i < 4; i++) {
        int64_t B = Bs[i];
        check_mib("qwen tp2 conv decode", ls_bytes_conv_update(B, 1, 4096, 4, 2, 2, 2, 0, 0), conv_dec[i]);
        check_mib("qwen tp2 gdn decode", ls_bytes_gdn_decode(B, 1, 8, 16, 128, 128, 2, 4), gdn_dec[i]);
        check_mib("qwen tp2 conv verify T4", ls_bytes_conv_update(B, 4, 4096, 4, 2, 2, 2, 0, 1), conv_ver[i]);
        check_mib("qwen tp2 gdn verify T4", ls_bytes_gdn_verify_recurrence(B, 4, 8, 16, 128, 128, 2, 4), gdn_ver[i]);
        check_mib("qwen tp2 accept 1 layer", ls_bytes_accept(B, 1, 16, 128, 128, 4, 4096, 4, 2), accept[i]);
        check_mib("qwen tp1 gdn decode", ls_bytes_gdn_decode(B, 1, 16, 32, 128, 128, 2, 4), gdn_tp1[i]);
        check_mib("kimi tp2 3x conv", 3 * ls_bytes_conv_update(B, 1, 2048, 4, 2, 2, 4, 0, 0), kimi_conv[i]);
        check_mib("kimi tp2 kda decode", ls_bytes_kda(B, 1, 16, 16, 128, 128, 2, 4, 0), kda[i]);
        check_mib("nano tp1 conv decode", ls_bytes_conv_update(B, 1, 12288, 4, 2, 2, 2, 1, 0), nano_conv[i]);
        check_mib("nano tp1 ssu decode", ls_bytes_ssu(B, 1, 128, 80, 8, 128, 2, 4, 0), nano_ssu[i]);
        check_mib("nano tp1 ssu verify T4", ls_bytes_ssu(B, 4, 128, 80, 8, 128, 2, 4, 1), nano_ssu_v[i]);
    }
    check_mib("gdn verify conv clone S=48", ls_bytes_gdn_conv_clone(48, 4096, 4, 2), "2.30");
    check_mib("gdn verify conv clone S=512", ls_bytes_gdn_conv_clone(512, 4096, 4, 2), "24.0");
}

static void derived_rows(void)
{
    /* Fused GDN verify: g,β fp32 traffic replaced by a,b bf16, plus A_log/dt_bias once. */
    int64_t B = 64, T = 4, HV = 16;
    LS_CHECK_EQ_INT(ls_bytes_gdn_verify_fused(B, T, 8, HV, 128, 128, 2, 4),
                    ls_bytes_gdn_verify_recurrence(B, T, 8, HV, 128, 128, 2, 4) - 2 * B * T * HV * 4 +
                        2 * B * T * HV * 2 + HV * 6);
    /* Decode with T = 1 equals the docs/bytes.md decode row; KDA verify reads the state once. */
    LS_CHECK_EQ_INT(ls_bytes_kda(B, 4, 16, 16, 128, 128, 2, 4, 1) - ls_bytes_kda(B, 4, 16, 16, 128, 128, 2, 4, 0),
                    B * 16 * 128 * 128 * 4 * (4 - 1));
    LS_CHECK_EQ_INT(ls_bytes_pool_zero(7, 1000), 7000);
    LS_CHECK_EQ_INT(ls_bytes_pool_copy(7, 1000), 14000);
    LS_CHECK_EQ_INT(ls_bytes_pd_transfer(1000, 4, 1), 5000);
    LS_CHECK_EQ_INT(ls_bytes_pd_transfer(1000, 4, 0), 1000);
    LS_CHECK_EQ_INT(ls_bytes_kda_after_extra(1, 16, 128, 128, 4), 4 * 16 * 128 * 128 * 4 + 2 * 16 * 128 * 4 + 2 * 16 * 4);
}

/* The registry's bytes callbacks on real plan cases (no pool yet: they derive from the shape). */
static const bench_case *find(const bench_plan *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->cases[i].key, key) == 0)
            return &p->cases[i];
    return NULL;
}

static int64_t case_bytes(const bench_case *c)
{
    bench_ctx x;
    memset(&x, 0, sizeof x);
    x.c = c;
    return c->e->bytes(&x);
}

/* The fused conv + recurrence row, counted by hand on a tiny GDN shape (B 1, H = HV = 1, K = V = 2,
 * C = 6, W = 4, fp32 state): decode = x 12 + conv state R+W 72 + weights 48 + a,b 4 + o 4 + state
 * R+W 32 + A_log, dt_bias 6 + indices 12; verify T = 2 = x 24 + conv state read 36 + weights 48 +
 * windows 72 + a,b 8 + o 8 + state read 16 + 2 steps 32 + 6 + 12. KDA adds the per-row gate and
 * fp32 dt_bias instead of GDN's scalar ones. */
static void conv_delta_row(void)
{
    LS_CHECK_EQ_INT(ls_bytes_conv_delta(1, 1, 1, 1, 2, 2, 4, 2, 2, 4, 2, 0, 0), 190);
    LS_CHECK_EQ_INT(ls_bytes_conv_delta(1, 2, 1, 1, 2, 2, 4, 2, 2, 4, 2, 0, 0), 262);
    /* KDA decode: a [1,1,1,2] 4 instead of 2, dt_bias fp32 [2] 8 instead of bf16 2 -> +8; bias +12 */
    LS_CHECK_EQ_INT(ls_bytes_conv_delta(1, 1, 1, 1, 2, 2, 4, 2, 2, 4, 2, 1, 1), 190 + 8 + 12);
}

static void case_callbacks(void)
{
    bench_opts o;
    bench_opts_init(&o);
    o.n_models = 4;
    o.models[3] = "nemotron-nano-9b-v2";
    int dev = 0;
    bench_plan p;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
    const bench_case *c = find(&p, "gdn/decode/qwen3-next-80b-a3b/tp2/B:64/T:1/fp32");
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), ls_bytes_gdn_decode(64, 1, 8, 16, 128, 128, 2, 4));
    c = find(&p, "gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32");
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), ls_bytes_gdn_verify_fused(64, 4, 8, 16, 128, 128, 2, 4));
    c = find(&p, "conv1d_update/decode/kimi-linear-48b-a3b/tp2/B:16/T:1/bf16");
    LS_REQUIRE(c);
    check_mib("kimi case 3x conv B16", case_bytes(c), "1.594");
    c = find(&p, "kda/decode/kimi-linear-48b-a3b/tp2/B:256/T:1/fp32");
    LS_REQUIRE(c);
    check_mib("kimi case kda B256", case_bytes(c), "517.0");
    c = find(&p, "conv1d_update/verify/qwen3-next-80b-a3b/tp2/B:256/T:4/bf16");
    LS_REQUIRE(c);
    check_mib("qwen case conv verify B256", case_bytes(c), "52.03");
    c = find(&p, "conv1d_update/decode/nemotron-h-8b/tp2/B:1/T:1/bf16"); /* bias, C = 5120 */
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), ls_bytes_conv_update(1, 1, 5120, 4, 2, 2, 2, 1, 0));
    c = find(&p, "conv_delta/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32"); /* bf16 weights, no bias */
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), ls_bytes_conv_delta(64, 4, 8, 16, 128, 128, 4, 2, 2, 4, 2, 0, 0));
    c = find(&p, "mamba2_ssu/verify/nemotron-h-8b/tp2/B:8/T:3/fp32");
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), ls_bytes_ssu(8, 3, 64, 64, 4, 128, 2, 4, 1));
    /* Pool paths without a pool: per_req over all model layers (docs/presets.md Qwen tp2 fp32). */
    c = find(&p, "pool/alloc/qwen3-next-80b-a3b/tp2/B:2/T:1/fp32");
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), 2 * 38633472LL);
    c = find(&p, "pool/copy/kimi-linear-48b-a3b/tp2/B:1/T:1/fp32");
    LS_REQUIRE(c);
    LS_CHECK_EQ_INT(case_bytes(c), 2 * 21708800LL);
    bench_plan_free(&p);
}

int main(void)
{
    worked_numbers();
    derived_rows();
    conv_delta_row();
    case_callbacks();
    return ls_test_exit();
}
