/*
 * main.c — linstate-bench: argv -> options -> backend and devices -> plan -> Google Benchmark
 * runs the cases (runner.c writes the CSV rows) -> final table on stdout.
 *
 * stdout carries only the final table (and --list output): while GB runs, its console report is
 * sent to stderr next to our progress lines, unless --benchmark_format was given: then stdout is
 * GB's report alone (valid JSON with =json) and our final table goes to stderr.
 *
 * Output files (the CSV, --samples-out, GB's --benchmark_out) are checked, each a file of its own,
 * and their private temporaries created before the worker starts, and moved to their names only
 * when complete (harness outfile.c, docs/csv.md "Files"). --list and --benchmark_list_tests open
 * none; a run in which GB selects no case writes none.
 *
 * The cases are measured in a worker process (supervise.c): this same program started again with
 * a worker flag, which builds the same plan and then only measures; this process (the parent)
 * writes the rows, so a crash or hang in an impl costs only its case. --resume (resume.c) is the
 * parent's too: its kept rows go into the CSV before the first case, and the parent asks the
 * worker only for the repetitions not kept (runner.c measure).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* The backend: --backend, else cuda when built and a device is visible, else host. 0 or 2. */
static int pick_backend(const bench_opts *o, const ls_runtime **out)
{
    const ls_runtime *be;
    if (o->backend) {
        be = ls_runtime_get(o->backend);
        if (!be) {
            fprintf(stderr, "linstate-bench: --backend %s: not available (%s)\n", o->backend, ls_last_error());
            return 2;
        }
        if (be->device_count() < 1) {
            fprintf(stderr, "linstate-bench: --backend %s: no device visible\n", o->backend);
            return 2;
        }
    } else {
        be = ls_runtime_cuda();
        if (!be || be->device_count() < 1)
            be = ls_runtime_host();
        ls_clear_error();
    }
    *out = be;
    return 0;
}

/* --devices: all visible, or the listed indices (each must exist). 0 or 2. */
static int pick_devices(const bench_opts *o, const ls_runtime *be, int *devs, int *n)
{
    int count = be->device_count();
    *n = 0;
    if (o->devices_all) {
        for (int i = 0; i < count && i < BENCH_MAX_LIST; i++)
            devs[(*n)++] = i;
        return 0;
    }
    if (o->n_devices == 0) {
        devs[(*n)++] = 0;
        return 0;
    }
    for (int i = 0; i < o->n_devices; i++) {
        if (o->devices[i] >= count) {
            fprintf(stderr, "linstate-bench: --devices: no device %d (%d visible on backend %s)\n", o->devices[i],
                    count, be->name);
            return 2;
        }
        for (int k = 0; k < *n; k++)
            if (devs[k] == o->devices[i]) {
                fprintf(stderr, "linstate-bench: --devices: device %d listed twice\n", o->devices[i]);
                return 2;
            }
        devs[(*n)++] = o->devices[i];
    }
    return 0;
}

/* mkdir -p of the directory part of path. 0 or -1 (message printed). */
static int make_parent_dirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "linstate-bench: cannot create directory '%s': %s\n", buf, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    return 0;
}

/* results/<gpu-name-slug | host>/<UTC time to the millisecond>-<pid>.csv, e.g.
 * results/h200/20251129T135600.123Z-4242.csv (the device name lower-cased, non-alphanumerics as
 * '-', a leading "nvidia-" dropped): two runs never pick the same name, even in the same second. */
static void default_out(const ls_runtime *be, int device, char *buf, size_t cap)
{
    char slug[96] = "host";
    ls_device_info info;
    if ((be->caps & LS_RT_DEVICE_MEMORY) && be->device_info(device, &info) == 0) {
        size_t k = 0;
        for (const char *s = info.name; *s && k + 1 < sizeof slug; s++) {
            unsigned char ch = (unsigned char)*s;
            if (isalnum(ch))
                slug[k++] = (char)tolower(ch);
            else if (k > 0 && slug[k - 1] != '-')
                slug[k++] = '-';
        }
        while (k > 0 && slug[k - 1] == '-')
            k--;
        slug[k] = '\0';
        if (strncmp(slug, "nvidia-", 7) == 0)
            memmove(slug, slug + 7, strlen(slug + 7) + 1);
        if (slug[0] == '\0')
            snprintf(slug, sizeof slug, "%s", be->name);
    }
    char stamp[32];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
    snprintf(buf, cap, "results/%s/%s.%03ldZ-%ld.csv", slug, stamp, now.tv_nsec / 1000000L, (long)getpid());
}

static const char *process_env(const char *name)
{
    return getenv(name);
}

static int has_arg(int argc, char **argv, const char *arg)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], arg) == 0)
            return 1;
    return 0;
}

static int has_flag_prefix(int argc, char **argv, const char *prefix)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], prefix, strlen(prefix)) == 0)
            return 1;
    return 0;
}

/* Runs every registered case with GB's console output on stderr (see the file comment); returns
 * how many GB selected. */
static int run_gb(int gb_owns_stdout)
{
    int saved = -1;
    fflush(stdout);
    if (!gb_owns_stdout) {
        saved = dup(1);
        if (saved >= 0)
            dup2(2, 1);
    }
    int ran = ls_gb_run();
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, 1);
        close(saved);
    }
    return ran;
}

/* GB's --benchmark_out: GB writes the file itself, so it is pointed at a private temporary made
 * here (before GB parses argv) and the result is moved into place after the run. A temporary
 * not committed or kept by then (an early exit) is removed at exit. */
static ls_outfile gb_out;
static int gb_out_json = 1;     /* --benchmark_out_format is json (GB's default) */
static char *gb_out_flag;

static void gb_out_discard(void)
{
    ls_outfile_discard(&gb_out);
    free(gb_out_flag);
}

/* 0, or 2 after the error line. */
static int gb_out_redirect(int argc, char **argv)
{
    static const char flag[] = "--benchmark_out=";
    int at = -1;
    gb_out.done = 1;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], flag, strlen(flag)) == 0)
            at = i; /* GB takes the last one */
        else if (strncmp(argv[i], "--benchmark_out_format=", 23) == 0)
            gb_out_json = strcmp(argv[i] + 23, "json") == 0;
    }
    if (at < 0)
        return 0;
    if (make_parent_dirs(argv[at] + strlen(flag)) != 0)
        return 2;
    if (ls_outfile_open(&gb_out, argv[at] + strlen(flag)) != 0) {
        fprintf(stderr, "linstate-bench: --benchmark_out: %s\n", ls_last_error());
        return 2;
    }
    atexit(gb_out_discard);
    size_t n = strlen(flag) + strlen(gb_out.tmp) + 1;
    if (!(gb_out_flag = malloc(n))) {
        fprintf(stderr, "linstate-bench: out of host memory\n");
        return 2;
    }
    snprintf(gb_out_flag, n, "%s%s", flag, gb_out.tmp);
    argv[at] = gb_out_flag;
    return 0;
}

/* After the run: GB reports no write error, so a complete file is checked for (not empty; JSON
 * ends as GB closes it, "]" then "}" on a line of its own: a file cut just after an inner "}"
 * must not pass), then moved into place. 0, or 1 after the error line (the temporary is kept). */
static int gb_out_finish(void)
{
    if (gb_out.done)
        return 0;
    char tail[64] = "";
    ssize_t got = 0;
    off_t end = lseek(gb_out.fd, 0, SEEK_END);
    if (end > 0) {
        off_t from = end > (off_t)sizeof tail - 1 ? end - (off_t)(sizeof tail - 1) : 0;
        got = pread(gb_out.fd, tail, (size_t)(end - from), from);
    }
    int k = (int)(got > 0 ? got : 0);
    tail[k] = '\0';
    while (k > 0 && isspace((unsigned char)tail[k - 1]))
        k--;
    int closed = k >= 2 && tail[k - 1] == '}' && tail[k - 2] == '\n'; /* the top level's "}" */
    int j = k - 2;
    while (closed && j > 0 && isspace((unsigned char)tail[j - 1]))
        j--;
    closed = closed && j > 0 && tail[j - 1] == ']'; /* after the "benchmarks" array */
    if (end <= 0 || got <= 0 || (gb_out_json && !closed)) {
        fprintf(stderr, "linstate-bench: --benchmark_out: '%s' is incomplete (disk full?); kept as '%s', not "
                        "moved to '%s'\n", gb_out.tmp, gb_out.tmp, gb_out.path);
        ls_outfile_keep(&gb_out);
        return 1;
    }
    if (ls_outfile_commit(&gb_out) != 0) {
        fprintf(stderr, "linstate-bench: --benchmark_out: %s\n", ls_last_error());
        return 1;
    }
    fprintf(stderr, "linstate-bench: wrote %s\n", gb_out.path);
    return 0;
}

/* Every file the run writes (or reads: --resume) must be its own: two flags naming one file
 * would otherwise find each other's locked temporary, or replace the file resumed from. --resume
 * and the CSV may be one file (a resume in place). 0, or 2 after one line naming both flags. */
static int check_distinct_outputs(const bench_opts *o, const char *out)
{
    const struct {
        const char *flag, *path;
    } f[] = {
        {o->out ? "--out" : o->out_dir ? "--out-dir's CSV" : "the CSV", out},
        {"--samples-out", o->samples_out},
        {"--benchmark_out", gb_out.done ? NULL : gb_out.path},
        {"--resume", o->resume},
    };
    int n = (int)(sizeof f / sizeof f[0]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (!f[i].path || !f[j].path || (i == 0 && j == n - 1) || !ls_outfile_same_path(f[i].path, f[j].path))
                continue;
            fprintf(stderr, "linstate-bench: %s %s and %s %s name the same file; give each its own\n", f[i].flag,
                    f[i].path, f[j].flag, f[j].path);
            return 2;
        }
    return 0;
}

static char **worker_argv;

static void worker_argv_free(void)
{
    bench_argv_free(worker_argv);
}

int main(int argc, char **argv)
{
    if (bench_cli_check_argv(argc, argv))
        return 2;
    (void)ls_steady_host_allocator(); /* before anything is allocated; the worker too */
    int worker_fd = bench_worker_take_fd(&argc, argv); /* >= 0: this is a worker (supervise.c) */
    int argc0 = argc;
    char **argv0 = worker_argv = bench_argv_copy(argc, argv); /* a worker's command line (parsing edits argv) */
    if (!argv0)
        return 1;
    atexit(worker_argv_free);
    for (int i = 1; i < argc; i++) /* before GB sees argv: GB's Initialize handles --help itself */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            bench_cli_usage(stdout);
            return 0;
        }
    int gb_reps = 0, gb_list = 0, rc;
    if ((rc = bench_gb_flags_check(&argc, argv, &gb_reps, &gb_list)))
        return rc;
    /* --list or --benchmark_list_tests: nothing runs, so no output file is opened (not even a
     * temporary); a "--list" that is a flag's value is refused by bench_cli_parse anyway */
    int listing = gb_list || has_arg(argc, argv, "--list");
    /* a pointer into argv's strings: GB takes the flag out of argv but leaves its text in place */
    const char *filter = bench_cli_peek_filter(argc, argv);
    int gb_owns_stdout = has_flag_prefix(argc, argv, "--benchmark_format");
    FILE *table = gb_owns_stdout ? stderr : stdout; /* our final table */
    if (worker_fd < 0 && !listing && gb_out_redirect(argc, argv) != 0)
        return 2;

    ls_gb_initialize(&argc, argv);
    bench_opts o;
    bench_opts_init(&o);
    o.gb_repetitions = gb_reps;
    if ((rc = bench_cli_parse(argc, argv, &o)))
        return rc;
    o.filter = filter;
    o.worker = worker_fd >= 0;
    int gb_names = gb_list && !o.list; /* list as GB would: its full names (--list: ours) */
    o.list |= gb_list;

    if ((rc = bench_fleet_resolve(&o, process_env)))
        return rc;
    const ls_runtime *be;
    int devs[BENCH_MAX_LIST], n_devs;
    if ((rc = pick_backend(&o, &be)))
        return rc;
    if (o.fleet.mode != BENCH_FLEET_NONE) {
        o.n_devices = 1;
        o.devices_all = 0;
        if ((rc = bench_fleet_device(&o, be->device_count(), &o.devices[0])))
            return rc;
    }
    if ((rc = pick_devices(&o, be, devs, &n_devs)))
        return rc;
    bench_cli_apply_backend(&o, be->name);
    if ((rc = bench_impl_points_resolve(&o, be)))
        return rc;

    bench_plan plan;
    if ((rc = bench_plan_build(&o, devs, n_devs, &plan)))
        return rc;
    if (worker_fd >= 0) {
        if (o.fleet.mode != BENCH_FLEET_NONE)
            bench_fleet_shard(&o.fleet, &plan);
        rc = bench_worker_main(&o, be, &plan, devs, n_devs, worker_fd);
        bench_plan_free(&plan);
        return rc;
    }
    int fleet_idle = 0; /* a fleet rank the shard left without a case: a header-only file, exit 0 */
    if (o.fleet.mode != BENCH_FLEET_NONE) {
        int planned = plan.n;
        bench_fleet_shard(&o.fleet, &plan);
        fleet_idle = planned > 0 && plan.n == 0;
        fprintf(stderr, "linstate-bench: fleet %s rank %d of %d (%s%s%s%s%s): %d of %d planned cases\n",
                o.fleet.mode == BENCH_FLEET_SHARD ? "shard" : "replicate", o.fleet.rank, o.fleet.world,
                o.fleet.source, *o.fleet.job_id ? ", job " : "", o.fleet.job_id, *o.fleet.node ? ", node " : "",
                o.fleet.node, plan.n, planned);
    }
    /* --list too: a typo; but a fleet rank the shard left idle writes its header-only file */
    if (plan.n == 0 && !fleet_idle && !(o.list && o.fleet.mode != BENCH_FLEET_NONE)) {
        fprintf(stderr, "linstate-bench: no case matches the selection (--family/--model/--draft/--variant/filter)\n");
        bench_plan_free(&plan);
        return 2;
    }
    bench_resume rs;
    memset(&rs, 0, sizeof rs);
    if (o.resume && (rc = bench_resume_load(&rs, o.resume))) { /* checked under --list too */
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return rc;
    }
    if (o.list) {
        bench_resume_free(&rs);
        if (o.explain)
            bench_report_impls(&o, stdout);
        if (gb_names)
            for (int i = 0; i < plan.n; i++) {
                char full[1024];
                bench_gb_full_name(&plan.cases[i], o.repetitions, full, sizeof full);
                printf("%s\n", full);
            }
        else
            bench_report_list(&plan, stdout);
        fprintf(stderr, "linstate-bench: %d cases on backend %s (nothing run)\n", plan.n, be->name);
        bench_plan_free(&plan);
        return 0;
    }

    char out_buf[4096];
    const char *out = o.out;
    if (!out && (o.out_dir || o.fleet.mode != BENCH_FLEET_NONE)) {
        char dir[1024], host[64] = "unknown";
        ls_device_info info;
        memset(&info, 0, sizeof info);
        if (be->device_info(devs[0], &info) != 0)
            ls_clear_error();
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        if (o.out_dir)
            snprintf(dir, sizeof dir, "%s", o.out_dir);
        else
            snprintf(dir, sizeof dir, "results/fleet/%s", *o.fleet.job_id ? o.fleet.job_id : "nojob");
        bench_fleet_out_path(dir, host, info.uuid, be->name, &o.fleet, out_buf, sizeof out_buf);
        out = out_buf;
    } else if (!out && o.resume) {
        bench_resume_out_path(o.resume, out_buf, sizeof out_buf);
        out = out_buf;
    } else if (!out) {
        default_out(be, devs[0], out_buf, sizeof out_buf);
        out = out_buf;
    }
    if (o.resume && (rc = bench_resume_match(&rs, &o, &plan, be, out))) {
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return rc;
    }
    if ((rc = check_distinct_outputs(&o, out)) != 0) {
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return rc;
    }
    /* the CSV and the sidecar are checked and opened here, before the worker starts and anything
     * is measured (docs/csv.md "Files": the same rules, one line and exit 2) */
    ls_csv *csv = NULL, *samples = NULL;
    ls_clear_error();
    if (make_parent_dirs(out) != 0 || !(csv = ls_csv_open(out))) {
        if (!csv && ls_last_error()[0]) /* make_parent_dirs prints its own error */
            fprintf(stderr, "linstate-bench: --out: %s\n", ls_last_error());
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return 2;
    }
    ls_clear_error();
    if (o.samples_out && (make_parent_dirs(o.samples_out) != 0 || !(samples = ls_samples_open(o.samples_out)))) {
        if (ls_last_error()[0])
            fprintf(stderr, "linstate-bench: --samples-out: %s\n", ls_last_error());
        ls_csv_discard(csv);
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return 2;
    }
    fprintf(stderr, "linstate-bench: %d cases on backend %s, %d device(s); CSV %s\n", plan.n, be->name, n_devs, out);
    if (fleet_idle) {
        rc = bench_fleet_finish_idle(csv, out, samples);
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return rc;
    }

    ls_csv_install_signal_handlers(csv);
    ls_csv_install_signal_handlers(samples);
    if (!gb_out.done)
        ls_csv_signal_discard(gb_out.tmp);
    bench_runner R;
    if (bench_runner_init_supervised(&R, &o, be, &plan, devs, n_devs, argc0, argv0) != 0) {
        bench_runner_free(&R);
        ls_csv_discard(csv); /* nothing was measured */
        if (samples)
            ls_csv_discard(samples);
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return 1;
    }
    R.csv = csv;
    R.samples_csv = samples;
    if (o.resume) /* here, in the parent: the kept rows go into the CSV before any case runs */
        bench_resume_apply(&rs, &R);

    const ls_provenance *p0 = &R.devs[0].prov;
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%g", o.case_timeout_s);
    ls_gb_add_context("linstate_case_timeout_s", timeout);
    ls_gb_add_context("linstate_backend", be->name);
    ls_gb_add_context("linstate_gpu", p0->dev.name);
    ls_gb_add_context("linstate_git_commit", p0->git_commit);
    ls_gb_add_context("linstate_csv", out);
    int registered = bench_runner_register(&R); /* 0: --resume kept every case */
    R.res.t0 = bench_wall_s();
    int ran = registered ? run_gb(gb_owns_stdout) : 0;
    ls_gb_shutdown();
    int worker_rc = bench_sup_close(R.sup); /* the worker ends; its rows are all here */
    R.sup = NULL;
    if (!registered && !gb_out.done) { /* GB never ran: it wrote no JSON */
        fprintf(stderr, "linstate-bench: --benchmark_out: nothing was run, '%s' not written\n", gb_out.path);
        ls_outfile_discard(&gb_out);
    }
    if (registered && ran == 0 && !R.stopped) {
        /* GB selected none of the cases the plan holds (a filter GB reads otherwise than the
         * plan): nothing was measured, so no file is replaced by a header-only one */
        fprintf(stderr, "linstate-bench: Google Benchmark ran none of the %d planned cases (--benchmark_filter "
                        "read differently?); nothing measured, %s not written\n", registered, out);
        ls_csv_discard(csv);
        if (R.samples_csv)
            ls_csv_discard(R.samples_csv);
        R.csv = R.samples_csv = NULL;
        bench_runner_free(&R);
        bench_resume_free(&rs);
        bench_plan_free(&plan);
        return 1;
    }
    if (ran < registered && !R.stopped) {
        fprintf(stderr, "linstate-bench: Google Benchmark ran %d of the %d planned cases (--benchmark_filter read "
                        "differently?); the others are not in %s\n", ran, registered, out);
        R.res.failures++;
    }
    long written = ls_csv_rows(csv);

    int csv_said = ls_csv_failed(csv) == 1; /* a failed write was said when it failed (runner.c) */
    int close_rc = ls_csv_close(csv);
    R.csv = NULL;
    bench_report_table(&R.res, table);
    if (o.quick)
        bench_report_quick(&R.res, table);
    if (R.stopped)
        fprintf(stderr, "linstate-bench: the sweep stopped early: %ld rows written, %d of %d cases not run\n",
                written, R.res.plan_n - R.res.started, R.res.plan_n); /* plan_n: cases to run (--resume) */
    if (close_rc && !csv_said)
        fprintf(stderr, "linstate-bench: %s\n", ls_last_error());
    else if (!close_rc)
        fprintf(stderr, "linstate-bench: wrote %s\n", out);
    if (o.resume && !close_rc)
        bench_resume_finish(&rs, out);
    bench_resume_free(&rs);
    if (R.samples_csv) {
        int samples_said = ls_csv_failed(R.samples_csv) == 1;
        int src = ls_csv_close(R.samples_csv);
        R.samples_csv = NULL;
        if (src && !samples_said)
            fprintf(stderr, "linstate-bench: --samples-out: %s\n", ls_last_error());
        else if (!src)
            fprintf(stderr, "linstate-bench: wrote samples %s\n", o.samples_out);
        close_rc |= src;
    }
    int json_rc = gb_out_finish();
    int status = R.res.failures || R.stopped || worker_rc || close_rc || json_rc ? 1 : 0;
    bench_runner_free(&R);
    bench_plan_free(&plan);
    return status;
}
