/*
 * bench.h — private header of linstate-bench's driver: the registry rows (families x ops), the plan
 * (registry x axes -> cases with stable keys), CLI options, the case context the runner hands to a
 * family, report, runner, worker, fleet, resume and guard zones. The families themselves (setup,
 * verify, bytes of each op) live in bench/families/ behind families/family.h.
 *
 * Flow (docs/timing.md): argv -> bench_cli_parse -> bench_plan_build -> for each case, via the
 * GB shim: setup (pool + inputs on the backend) -> verify gate -> warm-up + timed region ->
 * statistics -> one CSV row -> teardown.
 */
#ifndef LS_BENCH_H
#define LS_BENCH_H

#include <stdint.h>

#include "ls_harness.h"
#include "ls_kernels.h"
#include "ls_pool.h"

/* ------------------------------------------------------------------ registry */

/* Axes an entry varies over (model and tp always apply). */
#define BENCH_AXIS_BATCH 1u
#define BENCH_AXIS_DRAFT 2u
#define BENCH_AXIS_DTYPE 4u /* SSM state dtype; entries without it run once at their own dtype */
#define BENCH_AXIS_GRAPH 8u /* can be timed as CUDA-graph replays (kernels, pool copy/accept); such
                            * a run callback never waits for the device, so its samples can also
                            * be queued behind a stream hold (the others sync: never held) */

#define BENCH_AXIS_POOL 16u /* pool capacity from --pool-slots (the kernels): B random slots of
                             * N per call, a different set per rotated layer */

#define BENCH_MECH_BIT(m) (1u << (unsigned)(m))
#define BENCH_MECH_ALL (BENCH_MECH_BIT(LS_MECH_MAMBA2) | BENCH_MECH_BIT(LS_MECH_GDN) | BENCH_MECH_BIT(LS_MECH_KDA))

/* Which draft-token counts T an entry takes from the --draft list. */
typedef enum bench_draft_rule {
    BENCH_DRAFT_DECODE = 0, /* T = 1 only (planned when 1 is in the list) */
    BENCH_DRAFT_VERIFY = 1, /* every T >= 2 of the list */
    BENCH_DRAFT_NONE = 2    /* axis not applicable: planned once, T = 1 */
} bench_draft_rule;

struct bench_ctx;

/*
 * One benchmark: a (family, op) pair, one implementation variant of it, and its callbacks.
 * Declared once in registry.c. Several rows may share (family, op) — the `variant` axis: the same
 * case key measured with alternative implementations (e.g. pool copy "fused" vs "per-tensor").
 * For every mechanism, exactly one row of a (family, op) that applies to it is its default
 * (planned without --variant); rows of one (family, op) share axes and draft rule.
 */
typedef struct bench_entry {
    const char *family;      /* --family name and first case-key component */
    const char *op;          /* second case-key component: decode, verify, alloc, ... */
    const char *variant;     /* CSV `variant` column; --variant name */
    int is_default;          /* 1: the (family, op)'s default variant for its mechanisms */
    unsigned mechanisms;     /* BENCH_MECH_BIT set of mechanisms it applies to */
    unsigned axes;           /* BENCH_AXIS_* */
    bench_draft_rule draft;
    /* setup: pool, inputs and launch params on the backend; 0, BENCH_OOM, or -1 (error set). */
    int (*setup)(struct bench_ctx *x);
    /* run: one call of the op under test on rotation slot rot (ls_launch_fn; ctx = bench_ctx). */
    int (*run)(void *x, int rot, ls_stream s);
    /* reset: untimed restore before each sample and warm-up round (pool paths that consume
     * slots); NULL if none. The harness timer calls it (ls_timing_config.reset; ctx = bench_ctx). */
    int (*reset)(void *x);
    /* verify: correctness gate before timing; 0 and *max_rel_err, or -1 (error set). */
    int (*verify)(struct bench_ctx *x, double *max_rel_err);
    /* teardown: family-private cleanup; NULL when the context arena frees everything. */
    void (*teardown)(struct bench_ctx *x);
    /* bytes: minimum bytes of one call (docs/bytes.md; after setup: may depend on the pool). */
    int64_t (*bytes)(const struct bench_ctx *x);
    /* ops: BENCH_OP bits of the impl ops its run and setup call; an impl lacking one gives
     * `skipped:unsupported`. */
    unsigned ops;
    /* launch: the params of the first launch of rotation slot 0 (after setup) and their op, for
     * the impl's explain (the `kernel` column); NULL when the entry has no single kernel launch. */
    const void *(*launch)(const struct bench_ctx *x, ls_op *op);
} bench_entry;

/* A family's descriptor: its registry rows in plan order. Each file of bench/families/ exports one
 * (families/family.h); registry.c lists them. The rows' callbacks are private to the family. */
typedef struct bench_family {
    const bench_entry *rows;
    int n;
} bench_family;

#define BENCH_OP(op) (1u << (unsigned)(op))
/* The ops that keep a delta-rule state (their cases have a state layout). */
#define BENCH_DELTA_OPS (BENCH_OP(LS_OP_GDN) | BENCH_OP(LS_OP_KDA) | BENCH_OP(LS_OP_CONV_DELTA))

#define BENCH_OOM 2 /* setup return: the case does not fit in memory -> skipped:oom */

int bench_registry_count(void);
const bench_entry *bench_registry_at(int i);
/* 1 if name is a family ("gdn") or a "family/op" pair ("pool/alloc") of the registry. */
int bench_registry_has_family(const char *name);
/* The family names of the registry in plan order, ", "-separated (--help, --family's message). */
void bench_registry_families(char *buf, size_t cap);
/* 1 if entry e is selected by the name ("gdn" selects every gdn op; "pool/alloc" one op). */
int bench_entry_matches(const bench_entry *e, const char *name);
/* 1 if some registry row has this variant name. */
int bench_registry_has_variant(const char *name);
/* 1 if rows a and b are variants of one (family, op). */
int bench_entry_same_op(const bench_entry *a, const bench_entry *b);

/* impls.c: the Python-impl columns of a row of impl im for an entry calling `ops` (BENCH_OP
 * bits): impl_source, impl_source_git, impl_source_hash, impl_layout ("" for C impls). */
void bench_impl_row(const ls_impl *im, unsigned ops, ls_row *row);

/* ------------------------------------------------------------------ CLI options */

#define BENCH_MAX_LIST 32
#define BENCH_MAX_SAMPLES 10000 /* samples per measurement at most (--max-samples) */

typedef enum bench_graph_mode { BENCH_GRAPH_OFF = 0, BENCH_GRAPH_ON = 1, BENCH_GRAPH_BOTH = 2 } bench_graph_mode;

/* Bits of bench_opts.given: which options the user set explicitly. */
#define BENCH_GIVEN_MODEL 1u
#define BENCH_GIVEN_TP 2u
#define BENCH_GIVEN_BATCH 4u
#define BENCH_GIVEN_DRAFT 8u
#define BENCH_GIVEN_DTYPE 16u
#define BENCH_GIVEN_FAMILY 32u
#define BENCH_GIVEN_GRAPH 64u

/* Fleet mode (--fleet): one linstate-bench process per GPU, launched by Slurm, a Kubernetes
 * Indexed Job or by hand with --rank/--world (bench/fleet.c, README "On a cluster"). */
typedef enum bench_fleet_mode {
    BENCH_FLEET_NONE = 0,      /* not a fleet: rank/world/job_id/node columns stay empty */
    BENCH_FLEET_SHARD = 1,     /* the plan is split across ranks: each case on one rank */
    BENCH_FLEET_REPLICATE = 2  /* every rank runs the whole plan (spread across GPUs) */
} bench_fleet_mode;

typedef struct bench_fleet {
    bench_fleet_mode mode;
    int rank, world;           /* resolved; -1 when not a fleet */
    int local_id;              /* SLURM_LOCALID (task index on its node); -1 when unknown */
    char job_id[32];           /* launcher's job id ("" when none) */
    char node[64];             /* launcher's node name ("" when none) */
    const char *source;        /* where rank and world came from: "flags", "slurm", "slurm-array",
                                * "kubernetes" (NULL when not a fleet) */
} bench_fleet;

/* One point of the impl x tuning axes: an impl and its effective tuning. */
#define BENCH_TUNE_MAX 256
typedef struct bench_impl_point {
    const ls_impl *impl;
    ls_tuning tuning;
    char tune[BENCH_TUNE_MAX];   /* ls_tuning_string: the CSV `tuning` column */
    int default_impl;            /* the runtime's default impl (no "/impl:" in the GB name) */
    int default_tune;            /* every knob at its default (no "/tune:" in the GB name) */
} bench_impl_point;

#define BENCH_MAX_POINTS 64

/* --ceiling: when a row's copy-peak ceiling is measured (docs/timing.md "Copy-peak ceiling"). */
typedef enum bench_ceiling {
    BENCH_CEILING_AUTO = 0,  /* case on backends with device memory, start on the host */
    BENCH_CEILING_START = 1, /* once per device at start-up */
    BENCH_CEILING_CASE = 2   /* again before each case's setup, on fresh buffers */
} bench_ceiling;

/* --bind: where the measuring thread runs (docs/timing.md "Host placement"; CSV cpuset). */
typedef enum bench_bind {
    BENCH_BIND_GPU = 0, /* the GPU's local CPUs (host backend: the core it starts on) */
    BENCH_BIND_CORE,    /* the first core of those: no migration between cores */
    BENCH_BIND_NONE     /* unbound (--no-bind) */
} bench_bind;

#define BENCH_MAX_POOL_SLOTS (1 << 20)
/* The serving pool the kernel cases default to (docs/presets.md "Serving pool"): SGLang's running
 * requests without the radix cache, 512, or 48 with speculative decoding (T > 1); on the host
 * backend (a smoke run) 16 for decode. Never under the batch. */
#define BENCH_SERVING_SLOTS 512
#define BENCH_SERVING_SLOTS_SPEC 48
#define BENCH_SERVING_SLOTS_HOST 16

typedef struct bench_opts {
    const char *models[BENCH_MAX_LIST];
    int n_models;
    int tp[BENCH_MAX_LIST], n_tp;
    int batch[BENCH_MAX_LIST], n_batch;
    int pool_slots[BENCH_MAX_LIST], n_pool_slots; /* --pool-slots; none: the serving default */
    int draft[BENCH_MAX_LIST], n_draft;
    ls_dtype dtypes[2];
    int n_dtypes;
    ls_cache_regime cache;
    bench_graph_mode graph;
    const char *families[BENCH_MAX_LIST];
    int n_families;
    const char *backend;     /* "cuda" | "host" | NULL = auto */
    int devices_all;         /* --devices all */
    int devices[BENCH_MAX_LIST], n_devices;
    int verify;
    const char *out;         /* NULL = results/<slug>/<timestamp>.csv */
    int profile, no_hold, list, help;
    bench_bind bind;         /* --bind, --no-bind */
    bench_ceiling ceiling;   /* --ceiling */
    int repetitions;         /* 0 = Google Benchmark's default / --benchmark_repetitions */
    double min_time_s, max_time_s;
    double case_timeout_s;   /* --case-timeout: wall-clock limit of one measurement in the worker; 0: none */
    int worker;              /* this process is the worker (supervise.c): the parent says the plan's notes */
    int min_samples, max_samples;
    /* the text given for --min-time, --max-time, --min-samples, --max-samples (NULL: the default),
     * for the message when a minimum exceeds its maximum */
    const char *min_time_arg, *max_time_arg, *min_samples_arg, *max_samples_arg;
    double noise_target_pct; /* --noise-target: stop once the median's noise is this small (0: off) */
    const char *samples_out; /* --samples-out FILE: raw samples sidecar (NULL: none) */
    const char *filter;      /* --benchmark_filter value, also applied by the plan */
    unsigned given;          /* BENCH_GIVEN_* */
    const char *variants[BENCH_MAX_LIST]; /* --variant names; none: each row's default */
    int n_variants;
    int variants_all;        /* --variant all */
    const char *impls[BENCH_MAX_LIST];      /* --impl names; none: the runtime's default impl */
    int n_impls;
    const char *impl_paths[BENCH_MAX_LIST]; /* --impl-path plugins, loaded before --impl resolves */
    int n_impl_paths;
    const char *tunes[BENCH_MAX_LIST];      /* --tune specs, each one point of the tuning axis */
    int n_tunes;
    int explain;             /* --explain: print what each case launches (--list: per case) */
    ls_state_layout layouts[2]; /* --state-layout kv,vk; n_layouts 0 = native: each impl's own */
    int n_layouts;
    bench_impl_point points[BENCH_MAX_POINTS]; /* resolved by bench_impl_points_resolve */
    int n_points;
    /* --quick: the preset of results/h200/kernels.md's summary table (bench_cli_parse sets the
     * axes not given; docs/presets.md). Two rules of the table that are not axes, each dropped
     * when the user gives the axis it would fight with: */
    int quick;
    int quick_ops;           /* only the table's ops (no --family given) ... */
    int quick_pairs;         /* ... each on the table's model for it (nor --model given) */
    int quick_graph_b1;      /* graph replays at B = 1 only (no --graph given) */
    const char *out_dir;     /* --out-dir: per-rank file names (bench_fleet_out_path) in this folder */
    bench_fleet_mode fleet_mode; /* --fleet shard|replicate */
    int rank_flag, world_flag;   /* --rank / --world; -1 when not given (they win over the launcher) */
    bench_fleet fleet;       /* resolved by bench_fleet_resolve */
    int gb_repetitions;      /* --benchmark_repetitions (0: not given; --repetitions wins) */
    const char *resume;      /* --resume FILE: keep its rows of this sweep, run the rest (resume.c) */
} bench_opts;

/* Defaults before parsing (GPU defaults; host defaults are applied by bench_cli_apply_backend). */
void bench_opts_init(bench_opts *o);
/*
 * Parses our flags (GB's --benchmark_* flags must already be removed, except that
 * --benchmark_filter may be seen first by bench_cli_peek_filter). Returns 0, or 2 after printing
 * ONE line naming the bad flag or value on stderr.
 */
int bench_cli_parse(int argc, char **argv, bench_opts *o);
/* Host backend: axes the user did not give default to --tp 8 --batch 1,4 --draft 1,4 (not
 * with --quick: its preset stands on every backend). */
void bench_cli_apply_backend(bench_opts *o, const char *backend_name);
/*
 * Loads --impl-path plugins, resolves --impl (default: the runtime's default impl) and crosses
 * each impl with the --tune points into o->points. A --tune item "knob=value" applies to every
 * selected impl that declares the knob, "impl:knob=value" to that impl only; an item no selected
 * impl takes, an unknown value, an impl on another runtime or a duplicate point is an error.
 * Returns 0, or 2 after printing one line naming the bad value.
 */
int bench_impl_points_resolve(bench_opts *o, const ls_runtime *rt);
/*
 * Checks Google Benchmark's flags in argv before GB parses them (gbflags.c): a bad value of a flag
 * GB knows is one line and 2; --benchmark_min_time is removed from argv once checked (no effect
 * here), --benchmark_min_warmup_time refused. *repetitions: --benchmark_repetitions (0: not given);
 * *list_tests: 1 when --benchmark_list_tests is true (main.c lists the plan like --list: GB never
 * runs, no file is opened).
 */
int bench_gb_flags_check(int *argc, char **argv, int *repetitions, int *list_tests);
/* Before anything reads argv: an argument with an ASCII control character (newline, tab, ...)
 * is one line naming its position and 2 (messages echo values; no flag takes one). */
int bench_cli_check_argv(int argc, char **argv);
/* Copies the value of --benchmark_filter=... if present (GB consumes it later). */
const char *bench_cli_peek_filter(int argc, char **argv);
void bench_cli_usage(FILE *f);

/* ------------------------------------------------------------------ plan */

typedef struct bench_case {
    const bench_entry *e;
    const ls_model *model;
    ls_shape shape;
    int tp, batch, tokens;
    ls_dtype state_dtype;    /* dtype in the key: SSM dtype, or the conv dtype for conv cases */
    ls_state_layout layout;  /* delta-rule state layout (gdn, kda; kv elsewhere) */
    int has_layout;          /* 1 for gdn/kda cases: the `state_layout` column is filled */
    int graph;
    int32_t pool_slots;      /* BENCH_AXIS_POOL entries: --pool-slots N (key suffix /S:N); 0 =
                              * the serving default (bench_case_capacity) */
    int device;
    int index;               /* 0-based position in the plan */
    const bench_impl_point *pt; /* impl and tuning (points into the opts) */
    char key[192];           /* stable CSV key, never renamed (results/README.md) */
    char name[704];          /* Google Benchmark name: key, plus "/dev:<i>" with several devices,
                              * plus "/impl:<name>" and "/tune:<tuning>" off the default point,
                              * plus "/variant:<name>" for a non-default variant */
} bench_case;

typedef struct bench_plan {
    bench_case *cases;
    int n;
} bench_plan;

/*
 * Registry x axes, filtered by --family, mechanism applicability and --benchmark_filter.
 * devices: the device indices to run on. Returns 0, or 2 after printing one line naming the bad
 * value (unknown preset, tp not dividing heads, bad filter regex).
 */
int bench_plan_build(const bench_opts *o, const int *devices, int n_devices, bench_plan *out);
void bench_plan_free(bench_plan *p);
/* --quick: 1 if the table's rules keep (entry e, model m, batch, graph) — see bench_opts.quick. */
int bench_quick_selects(const bench_opts *o, const bench_entry *e, const ls_model *m, int batch, int graph);
/* Position of e's (family, op) in the kernels.md table (its row order); past the end if absent. */
int bench_quick_rank(const bench_entry *e);
/* Writes the stable case key into buf (grammar in results/README.md). */
void bench_case_key(const bench_entry *e, const char *model, int tp, int batch, int tokens,
                    ls_dtype dt, int graph, char *buf, size_t cap);
/* The name GB matches its filter against: name + "/iterations:1[/repeats:N]/manual_time". */
void bench_gb_full_name(const bench_case *c, int repetitions, char *buf, size_t cap);
/* 1 if name passes a Google-Benchmark-style filter (extended regex, leading '-' negates);
 * -1 on a bad regex. NULL/"" / "all" pass everything. */
int bench_filter_match(const char *filter, const char *name);

/* ------------------------------------------------------------------ case context (families/context.c) */

#define BENCH_MAX_ALLOCS 64

/* Device-independent run settings the runner hands to every case. */
typedef struct bench_env {
    const ls_runtime *be;
    ls_device_info dev;
    int64_t budget_bytes;    /* memory a case may use on the backend */
    ls_cache_regime cache;
    int max_rot;             /* cap on rotated layers (host backend: small) */
} bench_env;

typedef struct bench_ctx {
    const bench_case *c;
    const bench_env *env;
    const ls_runtime *be;
    uint64_t rng;            /* per-case PRNG state (seeded from the case key) */
    ls_pool *pool;
    int n_rot;               /* layers in the pool that launches rotate over */
    int rotated;             /* `rotated` column: n_rot for kernels, 1 for pool paths */
    int32_t *slots;          /* host: the batch's slot per request row (random, distinct) */
    int32_t *slots_dev;      /* backend copy of slots */
    int layer_slots;         /* > 0: slots_dev holds n_rot lists of B, one per rotated layer, this
                              * many entries apart (a multiple of 32: each list 128-byte aligned) */
    int null_slot;           /* 1: the pool has one slot more, slot 0 held (LS_IMPL_NULL_SLOT0) */
    void *allocs[BENCH_MAX_ALLOCS]; /* backend allocations freed at teardown */
    int n_allocs;
    void *host_allocs[BENCH_MAX_ALLOCS]; /* host allocations freed at teardown */
    int n_host_allocs;
    void *priv;              /* family state (host memory from bench_host_alloc) */
    const ls_impl *im;       /* the case's impl and tuning: every op goes through these */
    const ls_tuning *tune;
    int unsupported;         /* an op returned LS_OP_UNSUPPORTED (-> skipped:unsupported) */
} bench_ctx;

/* Random numbers (splitmix64). */
uint64_t bench_rand_u64(uint64_t *s);
double bench_rand_uniform(uint64_t *s, double lo, double hi);
uint64_t bench_hash(const char *s);
/* Frees everything the context owns (pool, arena). */
void bench_ctx_release(bench_ctx *x);

/* Tolerance of the normalised error max|dev - ref| / max|ref| for a case (dtype-dependent). */
double bench_verify_tolerance(const bench_case *c);

/* ------------------------------------------------------------------ report (report.c) */

/* One measured (or skipped) row, kept for the final tables. */
typedef struct bench_result {
    const bench_case *c;
    int repetition;
    double median_us, gbps, pct_of_copy_peak, max_rel_err;
    char status[64];
    char kernel[192];        /* the impl's explain of the case ("" when none) */
} bench_result;

/* What the report reads: the rows of a sweep and what it ran over. The runner fills it (report.c
 * knows nothing of the runner); tests can fill one by hand. */
typedef struct bench_results {
    const bench_opts *o;
    int plan_n;              /* cases planned */
    int started;             /* plan cases measured at least once */
    double t0;               /* wall clock (bench_wall_s) at the start of the sweep */
    bench_result *rows;
    int n, cap;
    int failures;            /* rows with fail_numerics, fail_bounds or error:* */
    int n_devs;              /* devices of the run and their copy peaks (table footer) */
    int dev_index[BENCH_MAX_LIST];
    double dev_copy_peak_gbps[BENCH_MAX_LIST];
} bench_results;

/* Monotonic wall clock, seconds. */
double bench_wall_s(void);
/* "[i/N] case ... elapsed, ETA" on stderr after row r of res. */
void bench_report_progress(const bench_results *res, const bench_result *r);
/* The final table (case, median us, GB/s, % of copy peak, status) on f. */
void bench_report_table(const bench_results *res, FILE *f);
/* --quick: the compact table of results/h200/kernels.md on f — one row per op (and model, T,
 * variant, impl point), a "% of copy peak" column per eager batch > 1 (largest first), then
 * the graph-replay time in us per graph batch (the B = 1 column); "-" where no row was run. */
void bench_report_quick(const bench_results *res, FILE *f);
/* --list: the planned cases, one key per line, on f. */
void bench_report_list(const bench_plan *p, FILE *f);
/* --list --explain: each selected impl (runtime, knobs with values and help, ops) and the points. */
void bench_report_impls(const bench_opts *o, FILE *f);

/* ------------------------------------------------------------------ runner (runner.c) */

/* One device of the run: its settings, provenance and copy peak, measured once at start-up. */
typedef struct bench_device {
    int index;
    bench_env env;
    ls_provenance prov;
    double copy_peak_gbps;   /* measured at start-up: the run's first ceiling */
    size_t copy_peak_bytes;  /* buffer size of each ceiling measurement */
    void *flush_buf;
    size_t flush_bytes;
    ls_clocks *clocks;       /* NVML clock guard; NULL on the host backend or without NVML */
} bench_device;

typedef struct bench_runner {
    const bench_opts *o;
    const ls_runtime *be;
    const bench_plan *plan;
    bench_device *devs;
    int n_devs;
    bench_device *cur_dev;   /* device selected and bound now */
    ls_csv *csv;
    int csv_failed;          /* a CSV write failed (reported once) */
    bench_ctx ctx;           /* the case set up now (setup is kept across its repetitions) */
    const bench_case *cur;
    char cur_status[64];     /* "ok" or why the set-up case cannot be timed */
    double cur_err;          /* its verification error (NaN when not verified) */
    int *reps;               /* repetitions measured, per plan case */
    char cur_kernel[192];    /* the impl's explain of the set-up case ("" when none) */
    unsigned cur_ops;        /* BENCH_OP bit of the op it launches (its entry's ops when unknown) */
    double cur_peak_gbps;    /* the set-up case's ceiling (start-up one under --ceiling start) */
    double *samples;
    int cap_samples;
    ls_stop_reason cur_stop; /* why the last measurement stopped */
    ls_csv *samples_csv;     /* --samples-out sidecar, or NULL */
    bench_results res;       /* every row so far, for the report (res.t0: set by the caller) */
    struct bench_sup *sup;   /* the worker process that measures (supervise.c); NULL: in process */
    int stopped;             /* the sweep stopped (a failed write, no worker): cases left are not run */
    int *left;               /* --resume: repetitions still to run per plan case (0: none, -1: all,
                              * registered as usual); NULL without --resume */
    unsigned char *kept;     /* --resume: bit (case index x kept_reps + repetition) of the kept rows */
    int kept_reps;
} bench_runner;

/* Per device: select, bind (--bind), provenance, copy peak, flush buffer, budget.
 * 0, or -1 after printing the error. */
int bench_runner_init(bench_runner *R, const bench_opts *o, const ls_runtime *be, const bench_plan *plan,
                      const int *devices, int n_devices);
/* The parent's runner (no device touched here): devices, provenance and copy peaks come from
 * a worker process started now with argv (supervise.c). 0, or -1 after printing the error. */
int bench_runner_init_supervised(bench_runner *R, const bench_opts *o, const ls_runtime *be, const bench_plan *plan,
                                 const int *devices, int n_devices, int argc, char **argv);
/* Measures repetition rep of case c in this process (row, samples in R->samples); the sample
 * count. */
int bench_runner_measure(bench_runner *R, const bench_case *c, int rep, ls_row *row);
/* The row of case c that ended without a measurement (status error:*, message the cause). */
void bench_runner_error_row(bench_runner *R, const bench_case *c, int rep, const char *status, const char *message,
                            ls_row *row);
bench_device *bench_runner_device(bench_runner *R, int index);
/* Registers every plan case with the Google Benchmark shim (GB runs them; rows come from us),
 * except those --resume kept whole; returns how many it registered. */
int bench_runner_register(bench_runner *R);
/* Records a row measured earlier (--resume) for the report, without a progress line. */
void bench_runner_keep_row(bench_runner *R, const bench_case *c, const ls_row *row);
/* Tears down the last case and frees the runner (not the CSV). */
void bench_runner_free(bench_runner *R);

/* ------------------------------------------------------------------ worker (supervise.c) */

typedef struct bench_sup bench_sup;
/* Worker mode: removes the worker flag from argv and returns its socket (stdout then goes to
 * stderr), or -1 when this is not a worker. */
int bench_worker_take_fd(int *argc, char **argv);
/* The worker's life: devices, HELLO, then one row per request until the parent closes. */
int bench_worker_main(const bench_opts *o, const ls_runtime *be, const bench_plan *plan, const int *devs,
                      int n_devs, int fd);
/* A deep copy of argv (NULL-terminated; parsing splits values in place), and its release. */
char **bench_argv_copy(int argc, char **argv);
void bench_argv_free(char **v);
/* Starts the first worker (R->sup) with argv (a bench_argv_copy). 0 or -1. */
int bench_sup_start(bench_runner *R, int argc, char **argv, double timeout_s);
/* One repetition in the worker: the sample count, 0 with an error:crash|exit|timeout row when
 * the worker died or hung (a new one takes the next case), -1 when no worker could start. */
int bench_sup_measure(bench_runner *R, const bench_case *c, int rep, ls_row *row);
/* Ends the worker after the sweep: 0, or -1 after saying it exited badly (a sanitizer report). */
int bench_sup_close(bench_sup *S);
void bench_sup_free(bench_sup *S); /* an error path: the worker is killed */

/* ------------------------------------------------------------------ fleet (fleet.c) */

/* Environment lookup (getenv, or a table in tests). */
typedef const char *(*bench_env_fn)(const char *name);

/*
 * Fills o->fleet from --fleet/--rank/--world and the launcher's environment; flags win, value by
 * value. Sources, first found: flags; Slurm (SLURM_PROCID / SLURM_NTASKS; an array job whose
 * elements are single tasks makes each element a rank: SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN
 * of SLURM_ARRAY_TASK_COUNT); a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, the world from
 * --world). job_id: SLURM_JOB_ID (SLURM_ARRAY_JOB_ID for an array of ranks, "<array job>_<task>"
 * for an array of multi-task fleets), else JOB_NAME (Kubernetes downward API); node:
 * SLURMD_NODENAME, else NODE_NAME. Without --fleet nothing is read and --rank/--world are an
 * error. Returns 0, or 2 after one line naming the bad flag or variable and its value.
 */
int bench_fleet_resolve(bench_opts *o, bench_env_fn env);
/* The device a fleet rank measures: --devices when given (exactly one), else SLURM_LOCALID when
 * the launcher left several GPUs visible to every task, else 0 (CUDA_VISIBLE_DEVICES as the
 * launcher set it). 0 or 2 (message printed). */
int bench_fleet_device(const bench_opts *o, int device_count, int *device);
/* Shard mode: keeps the cases of this rank. Cases are dealt round-robin by key group (consecutive
 * cases with one key: its variants, impls, tunings and layouts stay on one rank, next to each
 * other); indices are renumbered. No-op in other modes. */
void bench_fleet_shard(const bench_fleet *f, bench_plan *p);
/* DIR/<host>_<gpu uuid | backend>[_job<job id>][_rank<r>of<n>].csv (job and rank in fleet mode,
 * the job when there is one), every character outside [A-Za-z0-9.-] as '_'. */
void bench_fleet_out_path(const char *dir, const char *host, const char *gpu_uuid, const char *backend,
                          const bench_fleet *f, char *buf, size_t cap);
/* Copies rank, world, job_id and node into a device's provenance (nothing when not a fleet). */
void bench_fleet_provenance(const bench_fleet *f, ls_provenance *p);
/* A fleet rank the shard left without a case: closes csv (opened, header only) so the rank's
 * file exists for scripts/fleet/merge.py, and samples (the --samples-out file, opened; NULL when
 * none was asked) header only. Says what it wrote on stderr; returns 0, or 1 when a file could not be written. */
int bench_fleet_finish_idle(ls_csv *csv, const char *out, ls_csv *samples);

/* ------------------------------------------------------------------ resume (resume.c) */

typedef struct bench_resume_row {
    const char *line;        /* the row as written (in bench_resume.data), without its newline */
    size_t len;
    char *buf;               /* its decoded cells */
    char **f;                /* n_cols pointers into buf */
} bench_resume_row;

typedef struct bench_resume {
    const char *path;        /* --resume FILE as given */
    char *data;              /* the file */
    bench_resume_row *rows;
    int n, n_cols;
    int torn;                /* a last line without its newline was dropped */
    int col[32];             /* positions of the join columns (resume.c) */
    int other;               /* rows of no planned case and repetition of this run (not kept) */
    int total;               /* repetitions per case of this run */
    int *slot;               /* per row: the plan case it is kept for, -1 other, -2 run again */
    int *left;               /* per plan case: kept rows, then (apply) repetitions left or -1 */
    unsigned char *kept;     /* bit (case x total + repetition) of the kept rows */
} bench_resume;

/* Reads --resume FILE: a result CSV of this build's header, or a killed run's FILE.tmp.XXXXXX
 * (not one a live run still holds locked); a torn last line is dropped. 0, or 2 after one line
 * naming the file and the problem (missing, not a linstate CSV, another version's, damaged). */
int bench_resume_load(bench_resume *r, const char *path);
/* Before the output is opened: which planned case and repetition each row is (joined on this
 * run's provenance, ls_provenance_fill per device of be) and which are kept. 0, or 2 after one
 * line: `out` is the resumed file itself and some of its rows are of another sweep (writing it in
 * place would lose them). */
int bench_resume_match(bench_resume *r, const bench_opts *o, const bench_plan *plan, const ls_runtime *be,
                       const char *out);
/* After bench_runner_init, with R->csv open: copies the kept rows into the CSV as they are,
 * records them for the report, hands R->left / R->kept to the runner; one summary line. 0. */
int bench_resume_apply(bench_resume *r, bench_runner *R);
/* 1 when repetition rep of plan case case_index was kept from the resumed file. */
int bench_resume_kept(const bench_runner *R, int case_index, int rep);
/* The output a resumed run writes without --out: FILE, or FILE for FILE.tmp.XXXXXX. */
void bench_resume_out_path(const char *path, char *buf, size_t cap);
/* After the output `out` is in place: removes a resumed temporary whose final name is `out`. */
void bench_resume_finish(bench_resume *r, const char *out);
void bench_resume_free(bench_resume *r);

/* ------------------------------------------------------------------ guard zones (guard.c) */

/* Bytes of the canary zone before and after every buffer a case allocates (docs/timing.md "Guard
 * zones"); a multiple of every runtime's allocation alignment, so buffers keep theirs. */
#define BENCH_GUARD_BYTES 4096
/* The case runtime: a copy of inner whose mem_alloc / mem_free add and drop guard zones while
 * armed (one inner runtime per process). */
const ls_runtime *bench_guard_runtime(const ls_runtime *inner);
/* Arms (1) or disarms (0) the zones of new allocations: armed for a case's setup and
 * verification, disarmed while it is timed (an allocation there is passed through). */
void bench_guard_arm(int on);
/* Guarded buffers not yet freed. */
int bench_guard_live(void);
/* Reads every live zone back (after a sync). 0: intact; 1: a zone changed, msg names the buffer
 * (via x: pool buffers, slot lists, case buffers) and the offsets; -1: the read-back failed
 * (ls_last_error). */
int bench_guard_check(const bench_ctx *x, char *msg, size_t cap);

#endif /* LS_BENCH_H */
