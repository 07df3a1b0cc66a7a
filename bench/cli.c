/*
 * cli.c — linstate-bench's own flags. Google Benchmark's --benchmark_* flags are removed from argv
 * by ls_gb_initialize before bench_cli_parse runs; everything left must be ours. A bad flag or
 * value prints ONE line naming it on stderr and the caller exits 2.
 *
 * Both "--flag value" and "--flag=value" are accepted. Lists are comma-separated; list values are
 * split in place inside argv (argv strings are writable), so options point into argv.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *const default_models[] = {"qwen3-next-80b-a3b", "kimi-linear-48b-a3b", "nemotron-h-8b"};
static const int default_batch[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
static const int default_draft[] = {1, 2, 3, 4, 8};
/* the stopping rules' defaults (docs/timing.md "Stopping rules"); --max-samples: BENCH_MAX_SAMPLES */
#define DEFAULT_MIN_SAMPLES 20
#define DEFAULT_MIN_TIME_S 0.03
#define DEFAULT_MAX_TIME_S 0.2

void bench_opts_init(bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_models = (int)(sizeof default_models / sizeof default_models[0]);
    for (int i = 0; i < o->n_models; i++)
        o->models[i] = default_models[i];
    o->tp[0] = 2;
    o->n_tp = 1;
    o->n_batch = (int)(sizeof default_batch / sizeof default_batch[0]);
    memcpy(o->batch, default_batch, sizeof default_batch);
    o->n_draft = (int)(sizeof default_draft / sizeof default_draft[0]);
    memcpy(o->draft, default_draft, sizeof default_draft);
    o->dtypes[0] = LS_F32;
    o->n_dtypes = 1;
    o->cache = LS_CACHE_ROTATE;
    o->graph = BENCH_GRAPH_OFF;
    o->verify = 1;
    o->min_samples = DEFAULT_MIN_SAMPLES;
    o->max_samples = BENCH_MAX_SAMPLES;
    o->noise_target_pct = 0.5;
    o->min_time_s = DEFAULT_MIN_TIME_S;
    o->max_time_s = DEFAULT_MAX_TIME_S;
    o->case_timeout_s = 600;
    o->rank_flag = o->world_flag = -1;
}

/*
 * --quick: the axes of results/h200/kernels.md's summary table, for every axis the user did not
 * give: the three presets at tp 2, fp32 state, B 1,64,128,512, T 1,4, graph both (graph replays
 * at B = 1 only). Without --family only the table's ops run; without --family and --model each
 * on the table's model (plan.c quick_table). An explicit --graph drops the B = 1 rule.
 */
static void apply_quick(bench_opts *o)
{
    static const int batch[] = {1, 64, 128, 512};
    if (!(o->given & BENCH_GIVEN_MODEL)) {
        o->models[0] = "qwen3-next-80b-a3b";
        o->models[1] = "kimi-linear-48b-a3b";
        o->models[2] = "nemotron-h-8b";
        o->n_models = 3;
    }
    if (!(o->given & BENCH_GIVEN_TP)) {
        o->tp[0] = 2;
        o->n_tp = 1;
    }
    if (!(o->given & BENCH_GIVEN_BATCH)) {
        memcpy(o->batch, batch, sizeof batch);
        o->n_batch = (int)(sizeof batch / sizeof batch[0]);
    }
    if (!(o->given & BENCH_GIVEN_DRAFT)) {
        o->draft[0] = 1;
        o->draft[1] = 4;
        o->n_draft = 2;
    }
    if (!(o->given & BENCH_GIVEN_DTYPE)) {
        o->dtypes[0] = LS_F32;
        o->n_dtypes = 1;
    }
    if (!(o->given & BENCH_GIVEN_GRAPH)) {
        o->graph = BENCH_GRAPH_BOTH;
        o->quick_graph_b1 = 1;
    }
    o->quick_ops = !(o->given & BENCH_GIVEN_FAMILY);
    o->quick_pairs = !(o->given & (BENCH_GIVEN_FAMILY | BENCH_GIVEN_MODEL));
}

void bench_cli_apply_backend(bench_opts *o, const char *backend_name)
{
    if (strcmp(backend_name, "host") != 0 || o->quick)
        return;
    if (!(o->given & BENCH_GIVEN_TP)) {
        o->tp[0] = 8;
        o->n_tp = 1;
    }
    if (!(o->given & BENCH_GIVEN_BATCH)) {
        o->batch[0] = 1;
        o->batch[1] = 4;
        o->n_batch = 2;
    }
    if (!(o->given & BENCH_GIVEN_DRAFT)) {
        o->draft[0] = 1;
        o->draft[1] = 4;
        o->n_draft = 2;
    }
}

void bench_cli_usage(FILE *f)
{
    fputs(
        "usage: linstate-bench [options] [--benchmark_* flags]\n"
        "Times the state kernels and pool paths of hybrid linear-attention models and writes one CSV\n"
        "row per case (schema: docs/csv.md).\n"
        "\n"
        "  --help                 this text\n"
        "  --list                 print the cases that would run, run nothing\n"
        "  --quick                the summary table of results/h200/kernels.md: gdn decode and\n"
        "                         verify, kda decode, mamba2_ssu decode and verify, conv1d_update\n"
        "                         and pool copy/accept on qwen3-next; tp 2, fp32, --batch\n"
        "                         1,64,128,512, --draft 1,4, plus B = 1 as CUDA-graph replays; a\n"
        "                         compact per-op table follows the final table. Axes given\n"
        "                         explicitly override the preset (--family: its ops instead of the\n"
        "                         table's; --model or --family: every op on every given model;\n"
        "                         --graph: as given at every batch)\n"
        "  --model a,b            presets (default qwen3-next-80b-a3b,kimi-linear-48b-a3b,nemotron-h-8b)\n"
        "  --tp 1,2,4,8           tensor-parallel ranks (default 2)\n"
        "  --batch 1,...,512      requests per call (default 1,2,4,8,16,32,64,128,256,512)\n"
        "  --draft 1,2,3,4,8      tokens per request; 1 = decode, >1 = verify (default 1,2,3,4,8)\n"
        "  --state-dtype fp32,bf16  SSM state dtype (default fp32)\n"
        "  --pool-slots N,...     pool capacity of the kernel cases: each call touches B distinct\n"
        "                         random slots of N, a different set per rotated layer; N < B is\n"
        "                         not planned; keys get /S:N (default: the serving pool, max(B,\n"
        "                         512) for decode and max(B, 48) for verify; host max(B, 16) / 48)\n"
        "  --cache rotate|flush|hot  L2 regime (default rotate: launches rotate over layers)\n"
        "  --graph on|off|both    time CUDA-graph replays (default off)\n",
        f);
    char fams[256];
    bench_registry_families(fams, sizeof fams);
    fprintf(f, "  --family a,b           %s, or family/op\n", fams);
    fputs("                         (e.g. pool/alloc); default every family that applies\n"
        "  --variant a,b|all      implementation variants to run (default: each benchmark's\n"
        "                         default variant); e.g. fused,per-tensor (pool copy/accept),\n"
        "                         3-buffer,concat (KDA conv), in-place,clone (GDN conv verify).\n"
        "                         Non-default variants keep the case key; their GB name ends\n"
        "                         in /variant:<name>\n"
        "  --backend cuda|host    the runtime; default cuda when a GPU is visible, else host\n"
        "  --impl a,b             implementations to time (default: linstate on cuda, host on\n"
        "                         host); every row is verified against the float64 host reference\n"
        "  --impl-path LIB.so     load a plugin impl (repeatable; docs/plugin-abi.md), then name\n"
        "                         it in --impl (it is added to --impl when --impl is not given)\n"
        "  --tune k=v[,k=v]       one point of the tuning axis (repeatable): knobs of the impls,\n"
        "                         \"impl:k=v\" for one impl only; --list --explain shows knobs\n"
        "  --state-layout kv,vk   GDN/KDA state layout per head: kv = [K, V], vk = [V, K] (default:\n"
        "                         each impl's own; an impl without the asked layout: skipped:unsupported)\n"
        "  --explain              print the kernel each case launches (with --list: the knobs of\n"
        "                         every impl too)\n"
        "  --devices all|0,1      devices to run on (default 0)\n"
        "  --verify, --no-verify  correctness gate before timing (default on)\n"
        "  --out FILE.csv         default results/<gpu-name-or-host>/<UTC time ms>Z-<pid>.csv\n"
        "  --out-dir DIR          write DIR/<host>_<gpu-uuid|backend>[_job<id>_rank<r>of<n>].csv\n"
        "                         (one folder for every rank of a fleet; scripts/fleet/merge.py joins them)\n"
        "  --fleet shard|replicate  one process per GPU: shard splits the planned cases across\n"
        "                         ranks, replicate runs all of them on every rank; rank and world\n"
        "                         size from Slurm (SLURM_PROCID, SLURM_NTASKS, array jobs), a\n"
        "                         Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or the flags below;\n"
        "                         default output results/fleet/<job id or 'nojob'>/ (--out-dir)\n"
        "  --rank I, --world N    this process's fleet rank and the fleet's size (win over the\n"
        "                         launcher's values)\n"
        "  --ceiling case|start   copy-peak ceiling of each row: re-measured on fresh buffers\n"
        "                         before each case's setup (case), or once at start-up (start);\n"
        "                         default case on a GPU, start on the host backend\n"
        "  --profile              few iterations inside cudaProfilerStart/Stop (for nsys/ncu)\n"
        "  --bind gpu|core|none   the measuring thread on the GPU's local CPUs (gpu, default; host\n"
        "                         backend: its core), on their first core (core: it never migrates)\n"
        "                         or unbound (none); CSV cpuset\n"
        "  --no-bind              --bind none\n"
        "  --no-hold              start each sample as soon as it is launched (default: queue it\n"
        "                         whole behind a spin kernel, so the start event does not absorb\n"
        "                         the host's launch latency; CSV column held)\n"
        "  --repetitions N        measured repetitions per case, one CSV row each\n"
        "  --min-samples N        samples per measurement at least (default 20)\n"
        "  --min-time SECONDS     measured time per case at least (default 0.03)\n"
        "  --max-time SECONDS     wall-clock cap per measurement (default 0.2)\n"
        "  --max-samples N        samples per measurement at most (default and limit 10000)\n"
        "  --case-timeout SECONDS wall-clock limit of one measurement (setup, verify, timing) in\n"
        "                         the worker process; past it the case is error:timeout and a new\n"
        "                         worker takes the next case (default 600; 0: no limit)\n"
        "  --noise-target PCT     after the minimums, sample until the median's noise (95 % CI\n"
        "                         half-width / median, CSV noise_pct) is <= PCT (default 0.5;\n"
        "                         0: stop at the minimums); CSV stop_reason says which rule ended\n"
        "  --samples-out FILE.csv also write every raw sample (case key, repetition, index, us)\n"
        "  --resume FILE.csv      continue a sweep: keep FILE's ok/skipped rows of the planned cases\n"
        "                         measured by this build (same impl, tuning, device), run the rest;\n"
        "                         FILE may be the FILE.csv.tmp.XXXXXX of a killed run; output\n"
        "                         FILE.csv unless --out is given (README \"Resume a sweep\")\n"
        "\n"
        "Host backend: axes not given default to --tp 8 --batch 1,4 --draft 1,4 (a smoke sweep;\n"
        "the host reference is float64 and slow).\n"
        "Google Benchmark flags pass through, e.g. --benchmark_filter=<regex on case key>,\n"
        "--benchmark_repetitions=N, --benchmark_out=run.json --benchmark_out_format=json;\n"
        "--benchmark_list_tests is --list in GB's names (run nothing, write nothing).\n"
        "Each GB iteration is one full measurement (GB's --benchmark_min_time is checked and has no\n"
        "effect, use --min-time; --benchmark_min_warmup_time is refused). GB's flags are checked\n"
        "like ours. GB's console report goes to stderr unless --benchmark_format is given.\n"
        "Cases run in a worker process: an impl that crashes, exits or hangs costs only its case\n"
        "(status error:crash, error:exit or error:timeout) and the sweep goes on; so does a write\n"
        "outside a case's buffers (guard zones: fail_bounds).\n"
        "Exit status: 0 all rows ok or skipped, 1 a case failed (fail_numerics, fail_bounds,\n"
        "error:*) or a write failed, 2 bad command line, 128 + N on signal N (SIGINT 130, SIGTERM\n"
        "143, SIGHUP 129, SIGPIPE 141: the rows measured so far are kept in the final file, which\n"
        "--resume continues).\n",
        f);
}

#define BENCH_STR_(x) #x
#define BENCH_STR(x) BENCH_STR_(x)

static int bad(const char *flag, const char *val, const char *what)
{
    fprintf(stderr, "linstate-bench: %s: bad value '%s' (%s)\n", flag, val, what);
    return 2;
}

/* Splits a comma list in place; 0 or 2 (empty item / too many). */
static int split(const char *flag, char *val, char **items, int *n)
{
    *n = 0;
    if (!*val)
        return bad(flag, val, "empty list");
    for (char *tok = val;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (!*tok)
            return bad(flag, "", "empty item in list");
        if (*n == BENCH_MAX_LIST)
            return bad(flag, tok, "too many values");
        items[(*n)++] = tok;
        if (!comma)
            return 0;
        tok = comma + 1;
    }
}

/* split, and no item twice (a value twice would be planned twice under one key). 0 or 2. */
static int split_distinct(const char *flag, char *val, char **items, int *n)
{
    int rc = split(flag, val, items, n);
    for (int i = 0; rc == 0 && i < *n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(items[i], items[j]) == 0)
                return bad(flag, items[i], "listed twice");
    return rc;
}

/* A list of distinct names from names[0..count) into out[] as values[] (at most count items);
 * unknown: one line naming the item and `what`. 0 or 2. */
static int enum_list(const char *flag, char *val, const char *const *names, const int *values, int count,
                     const char *what, int *out, int *n)
{
    char *items[BENCH_MAX_LIST];
    int rc = split(flag, val, items, n);
    if (rc)
        return rc;
    if (*n > count) {
        char most[64] = "at most ";
        for (int k = 0; k < count; k++)
            snprintf(most + strlen(most), sizeof most - strlen(most), "%s%s", k ? "," : "", names[k]);
        return bad(flag, items[count], most);
    }
    for (int i = 0; i < *n; i++) {
        int k = 0;
        while (k < count && strcmp(items[i], names[k]) != 0)
            k++;
        if (k == count)
            return bad(flag, items[i], what);
        out[i] = values[k];
        for (int j = 0; j < i; j++)
            if (out[j] == out[i])
                return bad(flag, items[i], "listed twice");
    }
    return 0;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int int_list(const char *flag, char *val, long lo, long hi, int *out, int *n)
{
    char *items[BENCH_MAX_LIST];
    int rc = split(flag, val, items, n);
    if (rc)
        return rc;
    for (int i = 0; i < *n; i++) {
        if (parse_int(items[i], lo, hi, &out[i]) != 0) {
            char what[64];
            snprintf(what, sizeof what, "integers %ld..%ld, comma-separated", lo, hi);
            return bad(flag, items[i], what);
        }
        for (int j = 0; j < i; j++) /* a value twice would be measured twice under one key */
            if (out[j] == out[i])
                return bad(flag, items[i], "listed twice");
    }
    return 0;
}

/* A decimal real from 0 to hi into *out; 0 or -1. */
static int parse_real(const char *val, double hi, double *out)
{
    double v;
    if (ls_parse_decimal(val, &v) != 0 || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_seconds(const char *flag, const char *val, double *out)
{
    double v;
    if (ls_parse_decimal(val, &v) != 0 || !(v > 0) || v > 3600)
        return bad(flag, val, "seconds > 0, at most 3600");
    *out = v;
    return 0;
}

/*
 * --variant all | a,b,...: every name must be a variant of some registry row (a typo would
 * otherwise silently plan nothing). "all" anywhere in the list selects every variant.
 */
static int parse_variants(bench_opts *o, const char *flag, char *val)
{
    char *items[BENCH_MAX_LIST];
    int n, rc = split_distinct(flag, val, items, &n);
    if (rc)
        return rc;
    o->n_variants = 0;
    o->variants_all = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "all") == 0)
            o->variants_all = 1;
        else if (!bench_registry_has_variant(items[i]))
            return bad(flag, items[i],
                       "unknown variant; e.g. fused, per-tensor, 3-buffer, concat, in-place, clone or all");
        else
            o->variants[o->n_variants++] = items[i];
    }
    return 0;
}

/* Flags that take a value. */
static int takes_value(const char *name)
{
    static const char *const with_value[] = {"model", "tp", "batch", "draft", "state-dtype", "cache",
                                             "graph", "family", "variant", "backend", "devices", "out",
                                             "impl", "impl-path", "tune", "state-layout", "ceiling", "bind", "pool-slots",
                                             "repetitions", "min-samples", "min-time", "max-time", "case-timeout",
                                             "max-samples", "noise-target", "samples-out",
                                             "out-dir", "fleet", "rank", "world", "resume"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (strcmp(name, with_value[i]) == 0)
            return 1;
    return 0;
}

/* One flag with its value (NULL for booleans). 0 or 2. */
static int apply(bench_opts *o, const char *name, char *val, const char *flag)
{
    char *items[BENCH_MAX_LIST];
    int n, rc;
    if (strcmp(name, "help") == 0)
        o->help = 1;
    else if (strcmp(name, "list") == 0)
        o->list = 1;
    else if (strcmp(name, "verify") == 0)
        o->verify = 1;
    else if (strcmp(name, "no-verify") == 0)
        o->verify = 0;
    else if (strcmp(name, "profile") == 0)
        o->profile = 1;
    else if (strcmp(name, "no-bind") == 0)
        o->bind = BENCH_BIND_NONE;
    else if (strcmp(name, "no-hold") == 0)
        o->no_hold = 1;
    else if (strcmp(name, "explain") == 0)
        o->explain = 1;
    else if (strcmp(name, "quick") == 0)
        o->quick = 1;
    else if (strcmp(name, "impl") == 0) {
        if ((rc = split_distinct(flag, val, items, &n)))
            return rc;
        for (int i = 0; i < n; i++)
            o->impls[i] = items[i];
        o->n_impls = n;
    } else if (strcmp(name, "impl-path") == 0) {
        if (!*val)
            return bad(flag, val, "a shared library path");
        if (o->n_impl_paths == BENCH_MAX_LIST)
            return bad(flag, val, "too many plugins");
        o->impl_paths[o->n_impl_paths++] = val;
    } else if (strcmp(name, "state-layout") == 0) {
        static const char *const names[] = {"kv", "vk"};
        static const int values[] = {LS_STATE_KV, LS_STATE_VK};
        int v[2];
        if ((rc = enum_list(flag, val, names, values, 2, "kv or vk", v, &n)))
            return rc;
        for (int i = 0; i < n; i++)
            o->layouts[i] = (ls_state_layout)v[i];
        o->n_layouts = n;
    } else if (strcmp(name, "tune") == 0) {
        if (o->n_tunes == BENCH_MAX_LIST)
            return bad(flag, val, "too many --tune points");
        o->tunes[o->n_tunes++] = val;
    } else if (strcmp(name, "model") == 0) {
        if ((rc = split_distinct(flag, val, items, &n)))
            return rc;
        for (int i = 0; i < n; i++)
            o->models[i] = items[i];
        o->n_models = n;
        o->given |= BENCH_GIVEN_MODEL;
    } else if (strcmp(name, "tp") == 0) {
        if ((rc = int_list(flag, val, 1, 64, o->tp, &o->n_tp)))
            return rc;
        o->given |= BENCH_GIVEN_TP;
    } else if (strcmp(name, "batch") == 0) {
        if ((rc = int_list(flag, val, 1, 65536, o->batch, &o->n_batch)))
            return rc;
        o->given |= BENCH_GIVEN_BATCH;
    } else if (strcmp(name, "pool-slots") == 0) {
        if ((rc = int_list(flag, val, 1, BENCH_MAX_POOL_SLOTS, o->pool_slots, &o->n_pool_slots)))
            return rc;
    } else if (strcmp(name, "draft") == 0) {
        if ((rc = int_list(flag, val, 1, 64, o->draft, &o->n_draft)))
            return rc;
        o->given |= BENCH_GIVEN_DRAFT;
    } else if (strcmp(name, "state-dtype") == 0) {
        static const char *const names[] = {"fp32", "bf16"};
        static const int values[] = {LS_F32, LS_BF16};
        int v[2];
        if ((rc = enum_list(flag, val, names, values, 2, "unknown dtype; fp32 or bf16", v, &n)))
            return rc;
        for (int i = 0; i < n; i++)
            o->dtypes[i] = (ls_dtype)v[i];
        o->n_dtypes = n;
        o->given |= BENCH_GIVEN_DTYPE;
    } else if (strcmp(name, "bind") == 0) {
        if (strcmp(val, "gpu") == 0)
            o->bind = BENCH_BIND_GPU;
        else if (strcmp(val, "core") == 0)
            o->bind = BENCH_BIND_CORE;
        else if (strcmp(val, "none") == 0)
            o->bind = BENCH_BIND_NONE;
        else
            return bad(flag, val, "gpu, core or none");
    } else if (strcmp(name, "ceiling") == 0) {
        if (strcmp(val, "case") == 0)
            o->ceiling = BENCH_CEILING_CASE;
        else if (strcmp(val, "start") == 0)
            o->ceiling = BENCH_CEILING_START;
        else
            return bad(flag, val, "case or start");
    } else if (strcmp(name, "cache") == 0) {
        if (ls_cache_regime_parse(val, &o->cache) != 0)
            return bad(flag, val, "rotate, flush or hot");
    } else if (strcmp(name, "graph") == 0) {
        if (strcmp(val, "on") == 0)
            o->graph = BENCH_GRAPH_ON;
        else if (strcmp(val, "off") == 0)
            o->graph = BENCH_GRAPH_OFF;
        else if (strcmp(val, "both") == 0)
            o->graph = BENCH_GRAPH_BOTH;
        else
            return bad(flag, val, "on, off or both");
        o->given |= BENCH_GIVEN_GRAPH;
    } else if (strcmp(name, "family") == 0) {
        if ((rc = split_distinct(flag, val, items, &n)))
            return rc;
        for (int i = 0; i < n; i++) {
            if (!bench_registry_has_family(items[i])) {
                char fams[256], what[300];
                bench_registry_families(fams, sizeof fams);
                snprintf(what, sizeof what, "unknown family; %s or family/op", fams);
                return bad(flag, items[i], what);
            }
            o->families[i] = items[i];
        }
        o->n_families = n;
        o->given |= BENCH_GIVEN_FAMILY;
    } else if (strcmp(name, "variant") == 0) {
        return parse_variants(o, flag, val);
    } else if (strcmp(name, "backend") == 0) {
        if (strcmp(val, "cuda") != 0 && strcmp(val, "host") != 0)
            return bad(flag, val, "cuda or host");
        o->backend = val;
    } else if (strcmp(name, "devices") == 0) {
        if (strcmp(val, "all") == 0) {
            o->devices_all = 1;
            o->n_devices = 0;
        } else {
            if ((rc = int_list(flag, val, 0, 1023, o->devices, &o->n_devices)))
                return rc;
            o->devices_all = 0;
        }
    } else if (strcmp(name, "out") == 0) {
        if (!*val)
            return bad(flag, val, "a file name");
        o->out = val;
    } else if (strcmp(name, "out-dir") == 0) {
        if (!*val)
            return bad(flag, val, "a folder name");
        o->out_dir = val;
    } else if (strcmp(name, "fleet") == 0) {
        if (strcmp(val, "shard") == 0)
            o->fleet_mode = BENCH_FLEET_SHARD;
        else if (strcmp(val, "replicate") == 0)
            o->fleet_mode = BENCH_FLEET_REPLICATE;
        else
            return bad(flag, val, "shard or replicate");
    } else if (strcmp(name, "rank") == 0) {
        if (parse_int(val, 0, 65535, &o->rank_flag) != 0)
            return bad(flag, val, "an integer from 0 to 65535");
    } else if (strcmp(name, "world") == 0) {
        if (parse_int(val, 1, 65536, &o->world_flag) != 0)
            return bad(flag, val, "an integer from 1 to 65536");
    } else if (strcmp(name, "repetitions") == 0) {
        if (parse_int(val, 1, 100000, &o->repetitions) != 0)
            return bad(flag, val, "an integer from 1 to 100000");
    } else if (strcmp(name, "min-samples") == 0) {
        if (parse_int(val, 1, BENCH_MAX_SAMPLES, &o->min_samples) != 0)
            return bad(flag, val, "an integer from 1 to " BENCH_STR(BENCH_MAX_SAMPLES));
        o->min_samples_arg = val;
    } else if (strcmp(name, "min-time") == 0) {
        o->min_time_arg = val;
        return parse_seconds(flag, val, &o->min_time_s);
    } else if (strcmp(name, "max-time") == 0) {
        o->max_time_arg = val;
        return parse_seconds(flag, val, &o->max_time_s);
    } else if (strcmp(name, "case-timeout") == 0) {
        if (parse_real(val, 604800, &o->case_timeout_s) != 0)
            return bad(flag, val, "seconds from 0 (no limit) to 604800");
    } else if (strcmp(name, "max-samples") == 0) {
        if (parse_int(val, 1, BENCH_MAX_SAMPLES, &o->max_samples) != 0)
            return bad(flag, val, "an integer from 1 to " BENCH_STR(BENCH_MAX_SAMPLES));
        o->max_samples_arg = val;
    } else if (strcmp(name, "noise-target") == 0) {
        if (parse_real(val, 100, &o->noise_target_pct) != 0)
            return bad(flag, val, "a percentage from 0 (off) to 100");
    } else if (strcmp(name, "resume") == 0) {
        if (!*val)
            return bad(flag, val, "a result CSV of an earlier run, or its .tmp.XXXXXX");
        o->resume = val;
    } else if (strcmp(name, "samples-out") == 0) {
        if (!*val)
            return bad(flag, val, "a file name");
        o->samples_out = val;
    } else {
        fprintf(stderr, "linstate-bench: unknown flag '%s' (see --help)\n", flag);
        return 2;
    }
    return 0;
}

/* --min-X above --max-X: the message names a value the user gave (the defaults are fixed
 * numbers, docs/timing.md "Stopping rules": one given alone must fit the other's default). 2. */
static int min_over_max(const char *x, const char *min_arg, const char *max_arg, double min_default,
                        double max_default)
{
    char flag[32], what[128];
    if (max_arg) { /* both given, or --max-X below --min-X's default */
        snprintf(flag, sizeof flag, "--max-%s", x);
        if (min_arg)
            snprintf(what, sizeof what, "must be >= --min-%s %s", x, min_arg);
        else
            snprintf(what, sizeof what, "must be >= --min-%s, default %g", x, min_default);
        return bad(flag, max_arg, what);
    }
    snprintf(flag, sizeof flag, "--min-%s", x);
    snprintf(what, sizeof what, "must be <= --max-%s, default %g; give --max-%s too", x, max_default, x);
    return bad(flag, min_arg, what);
}

int bench_cli_parse(int argc, char **argv, bench_opts *o)
{
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (strcmp(arg, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "linstate-bench: unexpected argument '%s' (see --help)\n", arg);
            return 2;
        }
        char name[64];
        char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (len >= sizeof name) {
            fprintf(stderr, "linstate-bench: unknown flag '%s' (see --help)\n", arg);
            return 2;
        }
        memcpy(name, arg + 2, len);
        name[len] = '\0';
        char *val = NULL;
        if (takes_value(name)) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) == 0 && argv[i + 1][2]) {
                /* "--out-dir --list": a forgotten value, not a folder named --list */
                fprintf(stderr, "linstate-bench: --%s needs a value, got the flag '%s' (give a value starting "
                                "with -- as --%s=VALUE)\n", name, argv[i + 1], name);
                return 2;
            } else if (i + 1 < argc)
                val = argv[++i];
            else {
                fprintf(stderr, "linstate-bench: --%s needs a value (see --help)\n", name);
                return 2;
            }
        } else if (eq) {
            if (strcmp(name, "help") && strcmp(name, "list") && strcmp(name, "verify") &&
                strcmp(name, "no-verify") && strcmp(name, "profile") && strcmp(name, "no-bind") &&
                strcmp(name, "no-hold") && strcmp(name, "explain") && strcmp(name, "quick")) {
                fprintf(stderr, "linstate-bench: unknown flag '%s' (see --help)\n", arg);
                return 2;
            }
            fprintf(stderr, "linstate-bench: --%s takes no value: '%s'\n", name, arg);
            return 2;
        }
        char flag[70];
        snprintf(flag, sizeof flag, "--%s", name);
        int rc = apply(o, name, val, flag);
        if (rc)
            return rc;
    }
    if (o->quick)
        apply_quick(o);
    if (o->out && o->out_dir) {
        fprintf(stderr, "linstate-bench: --out-dir %s: give --out or --out-dir, not both\n", o->out_dir);
        return 2;
    }
    if (o->min_samples > o->max_samples)
        return min_over_max("samples", o->min_samples_arg, o->max_samples_arg, DEFAULT_MIN_SAMPLES,
                            BENCH_MAX_SAMPLES);
    if (o->min_time_s > o->max_time_s)
        return min_over_max("time", o->min_time_arg, o->max_time_arg, DEFAULT_MIN_TIME_S, DEFAULT_MAX_TIME_S);
    return 0;
}

const char *bench_cli_peek_filter(int argc, char **argv)
{
    const char *f = NULL;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--benchmark_filter=", 19) == 0)
            f = argv[i] + 19;
    return f;
}

int bench_cli_check_argv(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++)
            if (*p < 0x20 || *p == 0x7f) { /* echoed in a message, it would break the one line */
                fprintf(stderr, "linstate-bench: argument %d contains a control character (0x%02x); no flag or value "
                                "takes one\n", i, *p);
                return 2;
            }
    return 0;
}
