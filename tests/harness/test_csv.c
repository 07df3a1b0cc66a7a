/*
 * test_csv.c — the schema-v1 CSV writer: exact header, quoting, empty cells for unknown values,
 * one flushed row at a time in a private PATH.tmp.XXXXXX, moved on close, and SIGINT/SIGTERM
 * keeping the rows already written (a forked child writes two rows, then signals itself). The
 * no-clobber and write-failure rules are in test_outfile.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ls_harness.h"
#include "ls_test.h"

static const char *expected_header =
    "schema_version,suite_version,git_commit,git_dirty,timestamp,host,backend,device_index,"
    "gpu_name,driver_version,cuda_runtime,sm_count,sm_clock_mhz,mem_clock_mhz,cpuset,numa_node,"
    "case,mechanism,op,variant,model,tp,batch,draft_tokens,layers,conv_dtype,state_dtype,"
    "pool_slots,cache_regime,graph,samples,time_us_median,time_us_p10,time_us_p90,time_us_mean,"
    "time_us_stddev,bytes,gbps,copy_peak_gbps,pct_of_copy_peak,max_rel_err,status,"
    "repetition,rotated,time_us_min,time_us_max,held,impl,impl_version,tuning,kernel,state_layout,"
    "noise_pct,stop_reason,sm_clock_min_mhz,sm_clock_median_mhz,samples_discarded,"
    "copy_peak_drift_pct,gpu_uuid,pci_bus_id,rank,world_size,job_id,node,message,"
    "impl_source,impl_source_git,impl_source_hash,impl_layout,host_call_us,resumed_from";

static char dir[64];

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Whole file into a static buffer ("" when missing). */
static const char *slurp(const char *path)
{
    static char buf[1 << 16];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Temporaries of path left behind (PATH.tmp*). */
static int temporaries(const char *path)
{
    char pat[256];
    snprintf(pat, sizeof pat, "%s.tmp*", path);
    glob_t g;
    int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    if (n)
        globfree(&g);
    return n;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Splits CSV line `line` (RFC 4180, no embedded newlines) into at most max fields, unquoting
 * into out[i] (each 256 bytes). Returns the field count. */
static int split_csv(const char *line, char out[][256], int max)
{
    int n = 0;
    const char *p = line;
    while (n < max) {
        size_t k = 0;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"')
                    p++; /* doubled quote */
                if (k < 255)
                    out[n][k++] = *p;
                p++;
            }
            if (*p == '"')
                p++;
        } else {
            while (*p && *p != ',' && *p != '\n')
                if (k < 255)
                    out[n][k++] = *p++;
                else
                    p++;
        }
        out[n++][k] = '\0';
        if (*p != ',')
            break;
        p++;
    }
    return n;
}

static int column(const char *name)
{
    char cols[96][256];
    int n = split_csv(ls_csv_header(), cols, 96);
    for (int i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return i;
    return -1;
}

static void fill_prov(ls_provenance *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->suite_version, sizeof p->suite_version, "0.1.0");
    snprintf(p->git_commit, sizeof p->git_commit, "unknown");
    p->git_dirty = -1;
    snprintf(p->timestamp, sizeof p->timestamp, "2025-01-02T03:04:05Z");
    snprintf(p->host, sizeof p->host, "node,1");
    snprintf(p->backend, sizeof p->backend, "host");
    snprintf(p->dev.name, sizeof p->dev.name, "NVIDIA H200 \"SXM\"");
    p->dev.sm_count = 132;
    snprintf(p->cpuset, sizeof p->cpuset, "0-15,32-47");
    p->numa_node = -1;
}

static void fill_row(ls_row *r, const ls_provenance *p, int batch)
{
    ls_row_init(r, p);
    snprintf(r->case_key, sizeof r->case_key, "gdn/verify/we,ird \"model\"/tp2/B:%d/T:4/fp32",
             batch);
    snprintf(r->mechanism, sizeof r->mechanism, "gdn");
    snprintf(r->op, sizeof r->op, "verify");
    snprintf(r->model, sizeof r->model, "we,ird \"model\"");
    r->tp = 2;
    r->batch = batch;
    r->draft_tokens = 4;
    r->layers = 48;
    r->held = 1;
    snprintf(r->cache_regime, sizeof r->cache_regime, "rotate");
    const double us[] = {2.0, 2.5, 1.5, 2.0};
    ls_stats st;
    ls_stats_compute(us, 4, &st);
    ls_row_set_result(r, &st, 1000000, 1000.0);
}

static void test_header_and_rows(void)
{
    LS_CHECK(strcmp(ls_csv_header(), expected_header) == 0);
    char path[128], tmp[LS_OUTFILE_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/out.csv", dir);

    ls_csv *c = ls_csv_open(path);
    LS_REQUIRE(c != NULL);
    snprintf(tmp, sizeof tmp, "%s", ls_csv_tmp_path(c));
    LS_CHECK(strncmp(tmp, path, strlen(path)) == 0 && strstr(tmp, ".csv.tmp.") != NULL);
    LS_CHECK(exists(tmp) && !exists(path));
    LS_CHECK_EQ_INT(count_lines(slurp(tmp)), 1); /* header on disk before any row */

    ls_provenance prov;
    fill_prov(&prov);
    ls_row r;
    fill_row(&r, &prov, 64);
    LS_CHECK_NEAR(r.gbps, 500.0, 1e-9, 0);           /* 1e6 bytes / 2 us */
    LS_CHECK_NEAR(r.pct_of_copy_peak, 50.0, 1e-9, 0);
    LS_CHECK(isnan(r.max_rel_err));
    LS_CHECK_EQ_INT(ls_csv_write(c, &r), 0);
    LS_CHECK_EQ_INT(count_lines(slurp(tmp)), 2);     /* flushed as written */

    snprintf(r.status, sizeof r.status, "skipped:oom\nsecond line");
    r.max_rel_err = 1.5e-3;
    r.batch = 128;
    LS_CHECK_EQ_INT(ls_csv_write(c, &r), 0);
    LS_CHECK_EQ_INT(count_lines(slurp(tmp)), 3);     /* control characters never split a row */
    LS_CHECK_EQ_INT(ls_csv_close(c), 0);
    LS_CHECK(!exists(tmp) && exists(path));

    const char *text = slurp(path);
    LS_CHECK_EQ_INT(count_lines(text), 3);
    const char *row1 = strchr(text, '\n') + 1;
    const char *row2 = strchr(row1, '\n') + 1;
    LS_CHECK(strstr(row1, "\"we,ird \"\"model\"\"\"") != NULL);

    static char f[96][256];
    int ncols = split_csv(ls_csv_header(), f, 96);
    LS_CHECK_EQ_INT(ncols, 71);
    LS_CHECK_EQ_INT(split_csv(row1, f, 96), ncols);
    LS_CHECK(strcmp(f[column("model")], "we,ird \"model\"") == 0);
    LS_CHECK(strcmp(f[column("host")], "node,1") == 0);
    LS_CHECK(strcmp(f[column("gpu_name")], "NVIDIA H200 \"SXM\"") == 0);
    LS_CHECK(strcmp(f[column("cpuset")], "0-15,32-47") == 0);
    LS_CHECK(strcmp(f[column("schema_version")], "2") == 0);
    LS_CHECK(strcmp(f[column("batch")], "64") == 0);
    LS_CHECK(strcmp(f[column("bytes")], "1000000") == 0);
    LS_CHECK(strcmp(f[column("samples")], "4") == 0);
    LS_CHECK(strcmp(f[column("held")], "1") == 0);
    LS_CHECK_NEAR(atof(f[column("time_us_median")]), 2.0, 1e-12, 0);
    LS_CHECK_NEAR(atof(f[column("time_us_min")]), 1.5, 1e-12, 0);
    LS_CHECK_NEAR(atof(f[column("gbps")]), 500.0, 1e-9, 0);
    LS_CHECK(strcmp(f[column("max_rel_err")], "") == 0); /* NaN -> empty */
    LS_CHECK(strcmp(f[column("git_dirty")], "") == 0);   /* unknown -> empty */
    LS_CHECK(strcmp(f[column("numa_node")], "") == 0);
    LS_CHECK(strcmp(f[column("status")], "ok") == 0);
    LS_CHECK(strcmp(f[column("host_call_us")], "") == 0); /* a C impl's row: NaN -> empty */
    LS_CHECK(strcmp(f[column("impl_source")], "") == 0);
    /* raw text: strings quoted, numbers not */
    LS_CHECK(strncmp(row1, "2,\"0.1.0\",\"unknown\",,\"2025-01-02T03:04:05Z\",", 44) == 0);

    LS_CHECK_EQ_INT(split_csv(row2, f, 96), ncols);
    LS_CHECK(strcmp(f[column("status")], "skipped:oom second line") == 0);
    LS_CHECK_NEAR(atof(f[column("max_rel_err")]), 1.5e-3, 1e-15, 0);
    LS_CHECK(strcmp(f[column("batch")], "128") == 0);
}

/* A child writes two rows, then raises sig: the final file must hold header + 2 rows. */
static void test_signal(int sig, int expect_status)
{
    char path[128];
    snprintf(path, sizeof path, "%s/sig%d.csv", dir, sig);
    fflush(NULL);
    pid_t pid = fork();
    LS_REQUIRE(pid >= 0);
    if (pid == 0) {
        ls_csv *c = ls_csv_open(path);
        if (!c)
            _exit(3);
        ls_csv_install_signal_handlers(c);
        ls_provenance prov;
        fill_prov(&prov);
        ls_row r;
        for (int b = 1; b <= 2; b++) {
            fill_row(&r, &prov, b);
            if (ls_csv_write(c, &r))
                _exit(4);
        }
        raise(sig);
        _exit(5); /* not reached: the handler exits */
    }
    int status = 0;
    LS_REQUIRE(waitpid(pid, &status, 0) == pid);
    LS_CHECK(WIFEXITED(status));
    LS_CHECK_EQ_INT(WEXITSTATUS(status), expect_status);
    LS_CHECK(exists(path) && temporaries(path) == 0);
    LS_CHECK_EQ_INT(count_lines(slurp(path)), 3);
    LS_CHECK(strstr(slurp(path), "/B:2/T:4/") != NULL);
}

/* A signal that comes between a row and its samples (the sidecar) while they are held: the
 * handler runs at the release, so both files keep row 2 and its samples, not the row alone. */
static void test_signal_held(void)
{
    char path[128], spath[128];
    snprintf(path, sizeof path, "%s/held.csv", dir);
    snprintf(spath, sizeof spath, "%s/held.samples.csv", dir);
    fflush(NULL);
    pid_t pid = fork();
    LS_REQUIRE(pid >= 0);
    if (pid == 0) {
        ls_csv *c = ls_csv_open(path), *sc = ls_samples_open(spath);
        if (!c || !sc)
            _exit(3);
        ls_csv_install_signal_handlers(c);
        ls_csv_install_signal_handlers(sc);
        ls_provenance prov;
        fill_prov(&prov);
        ls_row r;
        const double us[3] = {1.0, 2.0, 3.0};
        for (int b = 1; b <= 2; b++) {
            fill_row(&r, &prov, b);
            ls_csv_signals_hold();
            if (ls_csv_write(c, &r))
                _exit(4);
            if (b == 2)
                raise(SIGHUP); /* pending until the release */
            if (ls_samples_write(sc, &r, us, 3))
                _exit(5);
            ls_csv_signals_release();
        }
        _exit(6); /* not reached: the handler exits at the second release */
    }
    int status = 0;
    LS_REQUIRE(waitpid(pid, &status, 0) == pid);
    LS_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 129);
    LS_CHECK(exists(path) && exists(spath) && temporaries(path) == 0 && temporaries(spath) == 0);
    LS_CHECK_EQ_INT(count_lines(slurp(path)), 3);       /* header + 2 rows */
    LS_CHECK_EQ_INT(count_lines(slurp(spath)), 1 + 6); /* header + 3 samples of each */
}

/* A write that stops part-way (file size limit): the file is cut back to its last whole row,
 * later rows are refused, the temporary is kept and the error counts the whole rows. */
static void test_torn_write(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/torn.csv", dir);
    fflush(NULL);
    pid_t pid = fork();
    LS_REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        ls_csv *c = ls_csv_open(path);
        if (!c)
            _exit(3);
        ls_provenance prov;
        fill_prov(&prov);
        ls_row r;
        fill_row(&r, &prov, 1);
        if (ls_csv_write(c, &r) != 0)
            _exit(4);
        struct stat st;
        if (stat(ls_csv_tmp_path(c), &st) != 0)
            _exit(5);
        /* room for the header, one row and half of the next */
        struct rlimit lim = {(rlim_t)(st.st_size + (st.st_size - (off_t)strlen(ls_csv_header())) / 2),
                             RLIM_INFINITY};
        lim.rlim_max = lim.rlim_cur;
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(6);
        fill_row(&r, &prov, 2);
        if (ls_csv_write(c, &r) != -1 || !strstr(ls_last_error(), "the 1 whole rows"))
            _exit(7);
        if (ls_csv_write(c, &r) != -1 || ls_csv_rows(c) != 1)
            _exit(8);
        _exit(ls_csv_close(c) == -1 ? 0 : 9);
    }
    int status = 0;
    LS_REQUIRE(waitpid(pid, &status, 0) == pid);
    LS_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status))
        fprintf(stderr, "torn-write child exited %d\n", WEXITSTATUS(status));
    LS_CHECK(!exists(path));
    glob_t g;
    char pat[160];
    snprintf(pat, sizeof pat, "%s.tmp.*", path);
    LS_REQUIRE(glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1);
    const char *text = slurp(g.gl_pathv[0]);
    LS_CHECK_EQ_INT(count_lines(text), 2); /* header + the whole row */
    LS_CHECK(text[strlen(text) - 1] == '\n');
    LS_CHECK(strstr(text, "/B:1/") != NULL && strstr(text, "/B:2/") == NULL);
    unlink(g.gl_pathv[0]);
    globfree(&g);
}

static void test_errors(void)
{
    char path[160];
    snprintf(path, sizeof path, "%s/no/such/dir/x.csv", dir);
    LS_CHECK(ls_csv_open(path) == NULL);
    LS_CHECK(strstr(ls_last_error(), "no/such/dir/x.csv'") != NULL);
    LS_CHECK(ls_csv_open("") == NULL);
}

/* ls_csv_write_raw (--resume): a row copied as it is, after the header, one line. */
static void test_raw(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    ls_csv *c = ls_csv_open(path);
    LS_REQUIRE(c != NULL);
    static const char line[] = "2,\"0.1.0\",\"kept, as it was\"";
    LS_CHECK_EQ_INT(ls_csv_write_raw(c, line, strlen(line)), 0);
    LS_CHECK_EQ_INT(ls_csv_rows(c), 1); /* a kept row counts as a whole row (signal message, failures) */
    LS_CHECK_EQ_INT(ls_csv_close(c), 0);
    const char *text = slurp(path);
    LS_CHECK_EQ_INT(count_lines(text), 2);
    LS_CHECK(strcmp(strchr(text, '\n') + 1, "2,\"0.1.0\",\"kept, as it was\"\n") == 0);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ls_test_csv_XXXXXX");
    LS_REQUIRE(mkdtemp(dir) != NULL);
    test_header_and_rows();
    test_signal(SIGINT, 130);
    test_signal(SIGTERM, 143);
    test_signal(SIGHUP, 129);
    test_signal(SIGPIPE, 141);
    test_signal_held();
    test_torn_write();
    test_errors();
    test_raw();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    LS_CHECK_EQ_INT(system(cmd), 0);
    return ls_test_exit();
}
