/*
 * test_bench_plan.c — the plan (registry x axes) and the CLI parser, in-process: case counts of
 * the default sweep, the stable key grammar, mechanism applicability, draft rules, graph and
 * dtype axes, --family, the GB-style filter, host defaults, and CLI parsing/validation.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ls_test.h"

static int count_prefix(const bench_plan *p, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < p->n; i++)
        n += strncmp(p->cases[i].key, prefix, strlen(prefix)) == 0;
    return n;
}

static int has_key(const bench_plan *p, const char *key)
{
    return count_prefix(p, key) > 0;
}

static int plan_count(const bench_opts *o)
{
    int dev = 0;
    bench_plan p;
    LS_REQUIRE(bench_plan_build(o, &dev, 1, &p) == 0);
    int n = p.n;
    bench_plan_free(&p);
    return n;
}

static void default_plan(void)
{
    bench_opts o;
    bench_opts_init(&o);
    int dev = 0;
    bench_plan p;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
    /* Per preset: conv 10 decode + 40 verify, mechanism kernel 10 + 40, pool alloc/free/copy/fork
     * 4 x 10, accept 40 (T >= 2 only) = 180; three presets; + conv_delta 10 decode + 40 verify on
     * the GDN and KDA presets. */
    LS_CHECK_EQ_INT(p.n, 640);
    LS_CHECK(has_key(&p, "conv_delta/verify/kimi-linear-48b-a3b/tp2/B:8/T:4/fp32"));
    LS_CHECK_EQ_INT(count_prefix(&p, "conv_delta/verify/nemotron"), 0);
    LS_CHECK(has_key(&p, "gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32"));
    LS_CHECK(has_key(&p, "conv1d_update/decode/kimi-linear-48b-a3b/tp2/B:1/T:1/bf16"));
    LS_CHECK(has_key(&p, "mamba2_ssu/decode/nemotron-h-8b/tp2/B:512/T:1/fp32"));
    LS_CHECK(has_key(&p, "pool/accept/nemotron-h-8b/tp2/B:8/T:8/fp32"));
    LS_CHECK(has_key(&p, "pool/alloc/kimi-linear-48b-a3b/tp2/B:32/T:1/fp32"));
    /* Families only where they apply. */
    LS_CHECK_EQ_INT(count_prefix(&p, "kda/") + count_prefix(&p, "gdn/") + count_prefix(&p, "mamba2_ssu/"), 150);
    LS_CHECK_EQ_INT(count_prefix(&p, "kda/decode/qwen3"), 0);
    LS_CHECK_EQ_INT(count_prefix(&p, "gdn/decode/kimi"), 0);
    LS_CHECK_EQ_INT(count_prefix(&p, "mamba2_ssu/decode/qwen3"), 0);
    LS_CHECK_EQ_INT(count_prefix(&p, "conv1d_update/"), 150);
    /* Decode only at T = 1, verify only at T >= 2, pool paths without the draft axis at T = 1. */
    LS_CHECK_EQ_INT(count_prefix(&p, "gdn/decode/qwen3-next-80b-a3b/tp2/B:1/T:1/"), 1);
    LS_CHECK(!has_key(&p, "gdn/verify/qwen3-next-80b-a3b/tp2/B:1/T:1/"));
    LS_CHECK(!has_key(&p, "pool/copy/qwen3-next-80b-a3b/tp2/B:1/T:4/"));
    LS_CHECK(!has_key(&p, "pool/accept/qwen3-next-80b-a3b/tp2/B:1/T:1/"));
    /* Every key is unique and follows the grammar. */
    regex_t re;
    LS_REQUIRE(regcomp(&re, "^[a-z0-9_]+/[a-z]+/[a-z0-9.-]+/tp[0-9]+/B:[0-9]+/T:[0-9]+/(fp32|bf16)(/graph)?$",
                       REG_EXTENDED | REG_NOSUB) == 0);
    int bad = 0, dup = 0;
    for (int i = 0; i < p.n; i++) {
        bad += regexec(&re, p.cases[i].key, 0, NULL, 0) != 0;
        for (int k = i + 1; k < p.n; k++)
            dup += strcmp(p.cases[i].key, p.cases[k].key) == 0;
        LS_CHECK_EQ_INT(p.cases[i].index, i);
    }
    regfree(&re);
    LS_CHECK_EQ_INT(bad, 0);
    LS_CHECK_EQ_INT(dup, 0);
    bench_plan_free(&p);
}

static void axes(void)
{
    bench_opts o;
    bench_opts_init(&o);
    /* kernels and the device-only pool paths (copy 10, accept 40) twice (eager + /graph); alloc,
     * free and fork (host bookkeeping) once */
    o.graph = BENCH_GRAPH_BOTH;
    LS_CHECK_EQ_INT(plan_count(&o), 640 + 3 * 150 + 100);
    o.graph = BENCH_GRAPH_ON;
    LS_CHECK_EQ_INT(plan_count(&o), 3 * 150 + 100);
    bench_opts_init(&o);
    o.dtypes[1] = LS_BF16; /* conv has no SSM dtype: not doubled */
    o.n_dtypes = 2;
    LS_CHECK_EQ_INT(plan_count(&o), 3 * (50 + 100 + 160) + 2 * 100);
    bench_opts_init(&o);
    o.families[0] = "pool/alloc";
    o.families[1] = "gdn";
    o.n_families = 2;
    LS_CHECK_EQ_INT(plan_count(&o), 30 + 50);
    bench_opts_init(&o);
    o.filter = "-pool|conv1d";
    LS_CHECK_EQ_INT(plan_count(&o), 150 + 100); /* + conv_delta */
    o.filter = "B:512/T:8";
    LS_CHECK_EQ_INT(plan_count(&o), 3 * 3 + 2); /* conv verify, kernel verify, accept; conv_delta verify */
    /* Decode only when 1 is in --draft; verify for each T >= 2 of it. */
    bench_opts_init(&o);
    o.draft[0] = 4;
    o.n_draft = 1;
    /* per preset: conv verify, kernel verify, alloc/free/copy/fork, accept; conv_delta verify (GDN, KDA) */
    LS_CHECK_EQ_INT(plan_count(&o), 3 * (10 + 10 + 4 * 10 + 10) + 2 * 10);
    bench_opts_init(&o);
    bench_cli_apply_backend(&o, "host"); /* smoke defaults: tp 8, B 1,4, T 1,4 */
    LS_CHECK_EQ_INT(o.tp[0], 8);
    LS_CHECK_EQ_INT(plan_count(&o), 62);
    bench_opts_init(&o);
    o.given = BENCH_GIVEN_BATCH;
    o.n_batch = 1;
    bench_cli_apply_backend(&o, "host"); /* a given axis stays */
    LS_CHECK_EQ_INT(o.n_batch, 1);
    LS_CHECK_EQ_INT(o.batch[0], 1);
    LS_CHECK_EQ_INT(o.n_draft, 2);
    /* Several devices: same keys, GB names tagged. */
    bench_opts_init(&o);
    o.families[0] = "gdn/decode";
    o.n_families = 1;
    int devs[2] = {0, 1};
    bench_plan p;
    LS_REQUIRE(bench_plan_build(&o, devs, 2, &p) == 0);
    LS_CHECK_EQ_INT(p.n, 20);
    LS_CHECK(strcmp(p.cases[10].key, "gdn/decode/qwen3-next-80b-a3b/tp2/B:1/T:1/fp32") == 0);
    LS_CHECK(strcmp(p.cases[10].name, "gdn/decode/qwen3-next-80b-a3b/tp2/B:1/T:1/fp32/dev:1") == 0);
    LS_CHECK_EQ_INT(p.cases[10].device, 1);
    bench_plan_free(&p);
}

/* Each registry (family, op) has exactly one default row per mechanism it applies to, and its
 * variant rows share axes and draft rule (the plan takes them from the group's first row). */
static void registry_variants(void)
{
    for (int i = 0; i < bench_registry_count(); i++) {
        const bench_entry *e = bench_registry_at(i);
        for (int m = 0; m < 3; m++) {
            if (!(e->mechanisms & BENCH_MECH_BIT(m)))
                continue;
            int defaults = 0;
            for (int j = 0; j < bench_registry_count(); j++) {
                const bench_entry *f = bench_registry_at(j);
                if (!bench_entry_same_op(e, f) || !(f->mechanisms & BENCH_MECH_BIT(m)))
                    continue;
                defaults += f->is_default;
                LS_CHECK(f->axes == e->axes && f->draft == e->draft);
                LS_CHECK(f == e || strcmp(f->variant, e->variant) != 0);
            }
            if (defaults != 1)
                fprintf(stderr, "%s/%s mechanism %d: %d default rows\n", e->family, e->op, m, defaults);
            LS_CHECK_EQ_INT(defaults, 1);
        }
    }
    LS_CHECK(bench_registry_has_variant("per-tensor") && bench_registry_has_variant("clone"));
    LS_CHECK(!bench_registry_has_variant("bogus"));
}

/* --variant: default plan unchanged; all / named variants add rows with the same keys, unique
 * GB names ending in /variant:<name>, planned next to their default. */
static void variants(void)
{
    bench_opts o;
    bench_opts_init(&o);
    o.variants_all = 1;
    /* + concat (kimi conv decode 10, verify 40), clone (qwen conv verify 40), per-tensor copy
     * (10 per preset) and accept (40 per preset), conv_delta back-to-back (50 per GDN/KDA preset) */
    LS_CHECK_EQ_INT(plan_count(&o), 640 + 50 + 40 + 3 * 50 + 100);
    int dev = 0;
    bench_plan p;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
    int dup_names = 0, pairs = 0;
    for (int i = 0; i < p.n; i++) {
        const bench_case *c = &p.cases[i];
        for (int k = i + 1; k < p.n; k++)
            dup_names += strcmp(c->name, p.cases[k].name) == 0;
        if (c->e->is_default) {
            LS_CHECK(strcmp(c->name, c->key) == 0);
            continue;
        }
        char want[320];
        snprintf(want, sizeof want, "%s/variant:%s", c->key, c->e->variant);
        LS_CHECK(strcmp(c->name, want) == 0);
        /* the default variant of the same key comes right before it */
        LS_CHECK(i > 0 && strcmp(p.cases[i - 1].key, c->key) == 0 && p.cases[i - 1].e->is_default);
        pairs++;
    }
    LS_CHECK_EQ_INT(dup_names, 0);
    LS_CHECK_EQ_INT(pairs, 50 + 40 + 3 * 50 + 100);
    bench_plan_free(&p);
    /* named variants only: rows of those variants, wherever they apply */
    bench_opts_init(&o);
    o.variants[0] = "clone";
    o.variants[1] = "fused";
    o.n_variants = 2;
    LS_CHECK_EQ_INT(plan_count(&o), 40 + 3 * 50);
    o.filter = "variant:clone";
    LS_CHECK_EQ_INT(plan_count(&o), 40);
    o.filter = "-variant:";
    LS_CHECK_EQ_INT(plan_count(&o), 3 * 50);
    /* variant names in the CSV column: KDA conv 3-buffer, GDN conv verify in-place, pool fused */
    bench_opts_init(&o);
    o.models[0] = "kimi-linear-48b-a3b";
    o.models[1] = "qwen3-next-80b-a3b";
    o.n_models = 2;
    o.families[0] = "conv1d_update";
    o.families[1] = "pool/copy";
    o.n_families = 2;
    o.batch[0] = 1;
    o.n_batch = 1;
    o.draft[0] = 1;
    o.draft[1] = 4;
    o.n_draft = 2;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
    LS_REQUIRE(p.n == 6);
    static const char *const want_var[] = {"3-buffer", "3-buffer", "fused", "causal_silu", "in-place", "fused"};
    for (int i = 0; i < p.n; i++)
        LS_CHECK(strcmp(p.cases[i].e->variant, want_var[i]) == 0);
    bench_plan_free(&p);
}

static void filters(void)
{
    LS_CHECK_EQ_INT(bench_filter_match(NULL, "x"), 1);
    LS_CHECK_EQ_INT(bench_filter_match("all", "x"), 1);
    LS_CHECK_EQ_INT(bench_filter_match("gdn/", "gdn/decode/a"), 1);
    LS_CHECK_EQ_INT(bench_filter_match("gdn/", "kda/decode/a"), 0);
    LS_CHECK_EQ_INT(bench_filter_match("-gdn/", "gdn/decode/a"), 0);
    LS_CHECK_EQ_INT(bench_filter_match("-gdn/", "kda/decode/a"), 1);
    LS_CHECK_EQ_INT(bench_filter_match("(", "x"), -1);
    LS_CHECK(bench_entry_matches(bench_registry_at(0), "conv1d_update"));
    LS_CHECK(bench_registry_has_family("pool/accept"));
    LS_CHECK(!bench_registry_has_family("pool/acc"));
    LS_CHECK(!bench_registry_has_family("poo"));
}

/* Silences stderr around calls that are expected to print an error line (nests). */
static int quiet_depth = 0, saved_stderr = -1;
static void quiet(int on)
{
    fflush(stderr);
    if (on && quiet_depth++ == 0) {
        int null = open("/dev/null", O_WRONLY);
        saved_stderr = dup(2);
        dup2(null, 2);
        close(null);
    } else if (!on && --quiet_depth == 0) {
        dup2(saved_stderr, 2);
        close(saved_stderr);
    }
}

/* Command-line copies: options point into them, so they live until the end of the test. */
static char *copies[64];
static int n_copies;

/* Parses a command line given as one string (split on spaces); returns the parser's code. */
static int parse(const char *line, bench_opts *o)
{
    char *copy = strdup(line), *argv[32];
    int argc = 0;
    LS_REQUIRE(copy && n_copies < 64);
    copies[n_copies++] = copy;
    argv[argc++] = "linstate-bench";
    for (char *t = strtok(copy, " "); t && argc < 31; t = strtok(NULL, " "))
        argv[argc++] = t;
    bench_opts_init(o);
    quiet(1);
    int rc = bench_cli_parse(argc, argv, o);
    quiet(0);
    return rc;
}

static void cli(void)
{
    bench_opts o;
    LS_CHECK_EQ_INT(parse("--model qwen3-next-80b-a3b,nemotron-h-8b --tp=1,8 --batch 3 --draft 1,8", &o), 0);
    LS_CHECK_EQ_INT(o.n_models, 2);
    LS_CHECK(strcmp(o.models[1], "nemotron-h-8b") == 0);
    LS_CHECK_EQ_INT(o.n_tp, 2);
    LS_CHECK_EQ_INT(o.tp[1], 8);
    LS_CHECK_EQ_INT(o.batch[0], 3);
    LS_CHECK_EQ_INT(o.n_draft, 2);
    LS_CHECK_EQ_INT(o.given, BENCH_GIVEN_MODEL | BENCH_GIVEN_TP | BENCH_GIVEN_BATCH | BENCH_GIVEN_DRAFT);
    LS_CHECK_EQ_INT(parse("--state-dtype bf16,fp32 --cache flush --graph both --no-verify --no-bind --profile", &o), 0);
    LS_CHECK_EQ_INT(o.n_dtypes, 2);
    LS_CHECK_EQ_INT(o.dtypes[0], LS_BF16);
    LS_CHECK_EQ_INT(o.cache, LS_CACHE_FLUSH);
    LS_CHECK_EQ_INT(o.graph, BENCH_GRAPH_BOTH);
    LS_CHECK_EQ_INT(o.verify, 0);
    LS_CHECK(o.bind == BENCH_BIND_NONE && o.profile && !o.no_hold);
    LS_CHECK_EQ_INT(parse("--no-hold --bind core", &o), 0);
    LS_CHECK_EQ_INT(o.bind, BENCH_BIND_CORE);
    LS_CHECK_EQ_INT(parse("--bind gpu", &o), 0);
    LS_CHECK_EQ_INT(o.bind, BENCH_BIND_GPU);
    LS_CHECK_EQ_INT(parse("--bind socket", &o), 2);
    LS_CHECK_EQ_INT(parse("--no-hold", &o), 0);
    LS_CHECK(o.no_hold);
    LS_CHECK_EQ_INT(parse("--devices all --backend host --out x.csv --repetitions 3 --min-time 0.5 --max-time 2", &o), 0);
    LS_CHECK(o.devices_all);
    LS_CHECK(strcmp(o.backend, "host") == 0 && strcmp(o.out, "x.csv") == 0);
    LS_CHECK_EQ_INT(o.repetitions, 3);
    LS_CHECK_NEAR(o.max_time_s, 2.0, 0, 0);
    LS_CHECK_EQ_INT(parse("--variant per-tensor,clone", &o), 0);
    LS_CHECK_EQ_INT(o.n_variants, 2);
    LS_CHECK(strcmp(o.variants[1], "clone") == 0 && !o.variants_all);
    LS_CHECK_EQ_INT(parse("--variant=all", &o), 0);
    LS_CHECK(o.variants_all);
    LS_CHECK_EQ_INT(parse("--devices 0,1 --family pool/copy,gdn --list", &o), 0);
    LS_CHECK_EQ_INT(o.n_devices, 2);
    LS_CHECK_EQ_INT(o.n_families, 2);
    LS_CHECK(o.list);
    /* Defaults untouched by an empty command line. */
    LS_CHECK_EQ_INT(parse("", &o), 0);
    LS_CHECK_EQ_INT(o.n_models, 3);
    LS_CHECK_EQ_INT(o.n_batch, 10);
    LS_CHECK_EQ_INT(o.batch[9], 512);
    LS_CHECK_EQ_INT(o.n_draft, 5);
    LS_CHECK_EQ_INT(o.verify, 1);
    LS_CHECK_EQ_INT(o.cache, LS_CACHE_ROTATE);
    /* Bad values: exit code 2. */
    static const char *const bad[] = {"--batch 0",        "--draft x",          "--state-dtype fp64", "--bogus",
                                      "--cache warm",     "--graph yes",        "--family nope",      "--tp 0",
                                      "--batch 1,,2",     "--repetitions 0",    "--min-time 0",       "--backend tpu",
                                      "--min-time 3 --max-time 1", "--list=1", "stray", "--out",
                                      "--variant bogus", "--variant fused,,clone", "--variant", "--no-hold=0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i], &o);
        if (rc != 2)
            fprintf(stderr, "'%s' -> %d, expected 2\n", bad[i], rc);
        LS_CHECK_EQ_INT(rc, 2);
    }
    /* A tp that does not divide a selected model's heads fails at plan time, code 2. */
    LS_CHECK_EQ_INT(parse("--tp 3", &o), 0);
    int dev = 0;
    bench_plan p;
    quiet(1);
    int rc_tp = bench_plan_build(&o, &dev, 1, &p);
    LS_CHECK_EQ_INT(parse("--model nope", &o), 0);
    int rc_model = bench_plan_build(&o, &dev, 1, &p);
    quiet(0);
    LS_CHECK_EQ_INT(rc_tp, 2);
    LS_CHECK_EQ_INT(rc_model, 2);
}

/* An impl that keeps only the vk layout gets vk cases by default for every delta-rule op, the
 * fused conv + recurrent one included (it was planned as kv, then skipped as unsupported). */
static void native_layout(void)
{
    ls_impl vk_only = *ls_impl_get("host");
    vk_only.caps = (vk_only.caps & ~(unsigned)LS_IMPL_KV) | LS_IMPL_VK;
    bench_opts o;
    bench_opts_init(&o);
    o.families[0] = "gdn";
    o.families[1] = "conv_delta";
    o.n_families = 2;
    o.points[0].impl = &vk_only;
    o.n_points = 1;
    int dev = 0;
    bench_plan p;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
    int vk = 0, fused = 0;
    for (int i = 0; i < p.n; i++) {
        LS_CHECK(p.cases[i].has_layout);
        vk += p.cases[i].layout == LS_STATE_VK;
        fused += strncmp(p.cases[i].key, "conv_delta/", 11) == 0;
    }
    LS_CHECK(fused > 0);
    LS_CHECK_EQ_INT(vk, p.n);
    bench_plan_free(&p);
}

int main(void)
{
    default_plan();
    native_layout();
    axes();
    registry_variants();
    variants();
    filters();
    cli();
    for (int i = 0; i < n_copies; i++)
        free(copies[i]);
    return ls_test_exit();
}
