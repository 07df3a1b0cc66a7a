/*
 * resume.c — --resume FILE: continue a sweep from the rows an earlier run wrote (README "Resume a
 * sweep", docs/csv.md "Resume").
 *
 * FILE is a result CSV of this build's header, or the temporary FILE.csv.tmp.XXXXXX a killed run
 * left (harness/outfile.c); a last line without its newline (a torn row) is dropped, any other
 * line that is not a row this build writes (cell count, numbers, schema_version, status; see
 * check_row) stops the run with its line number. A row is kept when it is the row this run would
 * write for a planned case and repetition: same case key, variant, impl, impl_version, tuning,
 * state_layout, cache_regime, graph and device_index, the same build (suite_version, git_commit,
 * git_dirty), backend, host and gpu_uuid, and status ok or
 * skipped:*; each repetition of a case is kept or run again on its own (GB is given the count
 * left, and the runner gives the new rows the repetition indices not kept). Kept rows are copied
 * into the new file byte for byte, before anything is measured; the source is never written.
 * Without --out the new file is FILE (FILE.csv for a temporary): written in place only when every
 * row of FILE is of this sweep (else the run stops: those rows would be lost), and a temporary
 * taken in is removed once the new file is in place unless it holds rows of another sweep.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/* Columns a row is joined on, with what this run would write there. */
enum { J_CASE, J_VARIANT, J_IMPL, J_IMPL_VERSION, J_TUNING, J_LAYOUT, J_CACHE, J_GRAPH, J_DEVICE, J_SUITE,
       J_COMMIT, J_DIRTY, J_BACKEND, J_HOST, J_UUID, J_STATUS, J_REPETITION, J_MEDIAN, J_GBPS, J_PCT, J_ERR,
       J_KERNEL, J_COUNT };
static const char *const join_names[J_COUNT] = {
    "case", "variant", "impl", "impl_version", "tuning", "state_layout", "cache_regime", "graph", "device_index",
    "suite_version", "git_commit", "git_dirty", "backend", "host", "gpu_uuid", "status", "repetition",
    "time_us_median", "gbps", "pct_of_copy_peak", "max_rel_err", "kernel"};

static int fail2(const char *path, const char *what)
{
    fprintf(stderr, "linstate-bench: --resume %s: %s\n", path, what);
    return 2;
}

/* Position of column name in the header line, or -1. */
static int column_of(const char *header, const char *name)
{
    size_t n = strlen(name);
    int i = 0;
    for (const char *p = header;; i++) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return i;
        if (!p[len])
            return -1;
        p += len + 1;
    }
}

/* Splits one CSV line (RFC 4180 quoting, as harness/csv.c writes it) into at most cap fields
 * (cap: the line's commas + 1 holds them all), decoded into out (as long as the line); returns
 * the field count, or -1 on a bad quote. */
static int split_line(const char *line, char *out, char **fields, int cap)
{
    int n = 0;
    const char *p = line;
    for (;;) {
        if (n == cap)
            return -1;
        fields[n++] = out;
        if (*p == '"') {
            for (p++;; p++) {
                if (!*p)
                    return -1;
                if (*p == '"' && p[1] == '"')
                    *out++ = *p++;
                else if (*p == '"')
                    break;
                else
                    *out++ = *p;
            }
            p++;
            if (*p && *p != ',')
                return -1;
        } else {
            while (*p && *p != ',') {
                if (*p == '"')
                    return -1;
                *out++ = *p++;
            }
        }
        *out++ = '\0';
        if (!*p)
            return n;
        p++;
    }
}

/* The statuses the bench writes (docs/csv.md "Statuses"; runner.c, supervise.c): a row with
 * another is damaged, not a failure to run again. Add a new status here too. */
static const char *const statuses[] = {
    "ok",          "skipped:oom",   "skipped:no_graph", "skipped:unsupported", "fail_numerics", "fail_bounds",
    "error:setup", "error:verify",  "error:timing",     "error:crash",         "error:exit",    "error:timeout"};

/* 0 when the n cells of a row are a row this build writes: the cells csv.c checks (count, number
 * columns, schema_version), a known status and a repetition >= 0; else -1 and why. Every row is
 * checked, whichever sweep it is of: docs/csv.md "Resume" stops on any damaged line. */
static int check_row(const bench_resume *r, char *const *f, int n, char *why, size_t cap)
{
    if (ls_csv_check_cells(f, n, why, cap) != 0)
        return -1;
    const char *st = f[r->col[J_STATUS]];
    size_t i = 0;
    while (i < sizeof statuses / sizeof statuses[0] && strcmp(st, statuses[i]) != 0)
        i++;
    char v[64];
    if (i == sizeof statuses / sizeof statuses[0]) {
        ls_csv_cell_quote(st, v, sizeof v);
        snprintf(why, cap, "unknown status %s (docs/csv.md \"Statuses\")", v);
        return -1;
    }
    const char *rep = f[r->col[J_REPETITION]];
    if (*rep == '-') { /* an integer (csv.c checked it) */
        snprintf(why, cap, "repetition %.20s is negative", rep);
        return -1;
    }
    return 0;
}

int bench_resume_load(bench_resume *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail2(path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail2(path, "not a regular file");
    }
    /* a run still writing it holds its lock (outfile.c): its rows are not final */
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        return fail2(path, "a running linstate-bench is writing it; resume once it has stopped");
    }
    r->data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (r->data && got < (size_t)st.st_size) {
        ssize_t k = read(fd, r->data + got, (size_t)st.st_size - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (!r->data)
        return fail2(path, "out of host memory");
    r->data[got] = '\0';
    const char *header = ls_csv_header();
    size_t hlen = strlen(header);
    if (got == 0 || strlen(r->data) != got)
        return fail2(path, got == 0 ? "empty file, not a linstate CSV" : "not a linstate CSV (binary data)");
    if (strncmp(r->data, header, hlen) == 0 && r->data[hlen] == '\r') /* this header, another tool's line ends */
        return fail2(path, "line 1 ends in CR LF: linstate writes LF line ends (a copy converted by another tool?)");
    if (strncmp(r->data, header, hlen) != 0 || (r->data[hlen] != '\n' && r->data[hlen] != '\0')) {
        char first[48];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(r->data, "\n"), r->data);
        for (char *q = first; *q; q++) /* the message stays one line */
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                *q = '?';
        char msg[160];
        snprintf(msg, sizeof msg, "%s (header '%s%s'): resume takes a result CSV of this build's columns",
                 strncmp(first, "schema_version,", 15) == 0 ? "another linstate version's CSV"
                                                           : "not a linstate CSV",
                 first, strlen(first) == sizeof first - 1 ? "..." : "");
        return fail2(path, msg);
    }
    r->n_cols = 1;
    for (const char *p = header; *p; p++)
        r->n_cols += *p == ',';
    for (int j = 0; j < J_COUNT; j++)
        r->col[j] = column_of(header, join_names[j]);
    /* rows: complete lines only; a last one without its newline is a torn row */
    char *p = r->data + hlen + (r->data[hlen] == '\n');
    int cap = 0;
    int line_no = 1;
    while (*p) {
        char *nl = strchr(p, '\n');
        line_no++;
        if (!nl) {
            r->torn = 1;
            break;
        }
        *nl = '\0';
        if (r->n == cap) {
            cap = cap ? 2 * cap : 256;
            bench_resume_row *nr = realloc(r->rows, sizeof *nr * (size_t)cap);
            if (!nr)
                return fail2(path, "out of host memory");
            r->rows = nr;
        }
        bench_resume_row *row = &r->rows[r->n];
        row->line = p;
        row->len = (size_t)(nl - p);
        int cap_f = 1; /* every cell, so a row of too many is told by its count (not as bad quoting) */
        for (const char *q = p; q < nl; q++)
            cap_f += *q == ',';
        row->buf = malloc(row->len + 1);
        row->f = malloc(sizeof *row->f * (size_t)cap_f);
        if (!row->buf || !row->f) {
            free(row->buf);
            free(row->f);
            return fail2(path, "out of host memory");
        }
        r->n++;
        int nf = split_line(p, row->buf, row->f, cap_f);
        char why[160];
        int bad = 1;
        if (row->len && p[row->len - 1] == '\r')
            snprintf(why, sizeof why, "ends in CR LF: linstate writes LF line ends");
        else if (nf < 0)
            snprintf(why, sizeof why, "bad quoting");
        else
            bad = check_row(r, row->f, nf, why, sizeof why) != 0;
        if (bad) {
            char msg[192];
            snprintf(msg, sizeof msg, "line %d: %s", line_no, why);
            return fail2(path, msg); /* a damaged line: exit 2 before anything runs (docs/csv.md "Resume") */
        }
        p = nl + 1;
    }
    return 0;
}

/* 1 when row f is one this run would write for case c on its device (provenance pv), whatever
 * its status: the join columns (not the status) hold what this run writes there. Each string is
 * first put in the row's field as runner.c fill_row does (its size cuts it) and then read as the
 * writer writes it (ls_csv_cell_text: control characters as spaces), so a version with a newline
 * or a long tuning matches the cell it was written as. */
static int row_matches(const bench_resume *r, char **f, const bench_case *c, const ls_provenance *pv,
                       const bench_opts *o)
{
    ls_row row; /* the string fields fill_row sets, sized as the writer reads them */
    snprintf(row.case_key, sizeof row.case_key, "%s", c->key);
    snprintf(row.variant, sizeof row.variant, "%s", c->e->variant);
    snprintf(row.impl, sizeof row.impl, "%s", c->pt->impl->name);
    snprintf(row.impl_version, sizeof row.impl_version, "%s", c->pt->impl->version ? c->pt->impl->version : "");
    snprintf(row.tuning, sizeof row.tuning, "%s", c->pt->tune);
    snprintf(row.state_layout, sizeof row.state_layout, "%s", c->has_layout ? ls_state_layout_name(c->layout) : "");
    snprintf(row.cache_regime, sizeof row.cache_regime, "%s", ls_cache_regime_name(o->cache));
    char graph[16], dev[16], dirty[16];
    snprintf(graph, sizeof graph, "%d", c->graph);
    snprintf(dev, sizeof dev, "%d", c->device);
    if (pv->git_dirty < 0)
        dirty[0] = '\0';
    else
        snprintf(dirty, sizeof dirty, "%d", pv->git_dirty);
#define FIELD(a) {a, sizeof(a)}
    const struct {
        const char *s;
        size_t cap;
    } want[J_STATUS] = {
        [J_CASE] = FIELD(row.case_key),
        [J_VARIANT] = FIELD(row.variant),
        [J_IMPL] = FIELD(row.impl),
        [J_IMPL_VERSION] = FIELD(row.impl_version),
        [J_TUNING] = FIELD(row.tuning),
        [J_LAYOUT] = FIELD(row.state_layout),
        [J_CACHE] = FIELD(row.cache_regime),
        [J_GRAPH] = FIELD(graph),
        [J_DEVICE] = FIELD(dev),
        [J_SUITE] = FIELD(pv->suite_version),
        [J_COMMIT] = FIELD(pv->git_commit),
        [J_DIRTY] = FIELD(dirty),
        [J_BACKEND] = FIELD(pv->backend),
        [J_HOST] = FIELD(pv->host),
        [J_UUID] = FIELD(pv->gpu_uuid),
    };
#undef FIELD
    for (int j = 0; j < J_STATUS; j++) {
        char cell[sizeof row.tuning];
        ls_csv_cell_text(want[j].s, want[j].cap, cell, sizeof cell);
        if (strcmp(f[r->col[j]], cell) != 0)
            return 0;
    }
    return 1;
}

static int kept_status(const char *st)
{
    return strcmp(st, "ok") == 0 || strncmp(st, "skipped:", 8) == 0;
}

static double cell_double(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return *s && !*end ? v : NAN;
}

/* The report's view of a kept row (report.c reads these fields only). */
static void kept_result(const bench_resume *r, char **f, const ls_provenance *pv, ls_row *row)
{
    ls_row_init(row, pv);
    row->repetition = atoi(f[r->col[J_REPETITION]]);
    row->t.median = cell_double(f[r->col[J_MEDIAN]]);
    row->gbps = cell_double(f[r->col[J_GBPS]]);
    row->pct_of_copy_peak = cell_double(f[r->col[J_PCT]]);
    row->max_rel_err = cell_double(f[r->col[J_ERR]]);
    snprintf(row->status, sizeof row->status, "%s", f[r->col[J_STATUS]]);
    snprintf(row->kernel, sizeof row->kernel, "%s", f[r->col[J_KERNEL]]);
}

/* Bit (case x total + repetition) of a kept-slot bitmap. */
static int bit_get(const unsigned char *bits, int total, int case_index, int rep)
{
    size_t b = (size_t)case_index * (size_t)total + (size_t)rep;
    return (bits[b / 8] >> (b % 8)) & 1;
}

int bench_resume_kept(const bench_runner *R, int case_index, int rep)
{
    return R->kept && rep >= 0 && rep < R->kept_reps && bit_get(R->kept, R->kept_reps, case_index, rep);
}

int bench_resume_match(bench_resume *r, const bench_opts *o, const bench_plan *plan, const ls_runtime *be,
                       const char *out)
{
    int total = o->repetitions > 0 ? o->repetitions : o->gb_repetitions > 0 ? o->gb_repetitions : 1;
    size_t bits = (size_t)(plan->n ? plan->n : 1) * (size_t)total;
    r->total = total;
    r->slot = malloc(sizeof *r->slot * (size_t)(r->n ? r->n : 1));
    r->left = calloc((size_t)(plan->n ? plan->n : 1), sizeof *r->left);
    r->kept = calloc(bits / 8 + 1, 1);
    ls_provenance *prov = calloc(BENCH_MAX_LIST, sizeof *prov); /* by device index, filled on first use */
    int have[BENCH_MAX_LIST] = {0};
    if (!r->slot || !r->left || !r->kept || !prov) {
        free(prov);
        return fail2(r->path, "out of host memory");
    }
    /* Which planned case and repetition each row is; the first ok/skipped row of a slot is kept. */
    for (int i = 0; i < r->n; i++) {
        char **f = r->rows[i].f, *end;
        long rep = strtol(f[r->col[J_REPETITION]], &end, 10);
        int rep_ok = !*end && end != f[r->col[J_REPETITION]] && rep >= 0 && rep < total;
        r->slot[i] = -1;
        for (int ci = 0; rep_ok && ci < plan->n && r->slot[i] == -1; ci++) {
            const bench_case *c = &plan->cases[ci];
            if (strcmp(f[r->col[J_CASE]], c->key) != 0 || c->device < 0 || c->device >= BENCH_MAX_LIST)
                continue;
            if (!have[c->device]) { /* the provenance this run's rows will carry (runner.c device_init) */
                if (ls_provenance_fill(&prov[c->device], be, c->device) != 0) {
                    free(prov);
                    return fail2(r->path, ls_last_error());
                }
                have[c->device] = 1;
            }
            if (!row_matches(r, f, c, &prov[c->device], o))
                continue;
            size_t b = (size_t)ci * (size_t)total + (size_t)rep;
            if (kept_status(f[r->col[J_STATUS]]) && !bit_get(r->kept, total, ci, (int)rep)) {
                r->kept[b / 8] |= (unsigned char)(1u << (b % 8));
                r->slot[i] = ci;
                r->left[ci]++;
            } else {
                r->slot[i] = -2; /* superseded: an error row, or a second row of a kept slot */
            }
        }
        r->other += r->slot[i] == -1;
    }
    free(prov);
    if (r->other && ls_outfile_same_path(r->path, out)) {
        char msg[256];
        snprintf(msg, sizeof msg, "%d of its rows are not of this sweep (other cases, build, impl, tuning or "
                                  "device) and would be lost by writing it in place; give --out NEW.csv", r->other);
        return fail2(r->path, msg);
    }
    return 0;
}

int bench_resume_apply(bench_resume *r, bench_runner *R)
{
    const bench_plan *plan = R->plan;
    for (int i = 0; i < R->n_devs; i++)
        snprintf(R->devs[i].prov.resumed_from, sizeof R->devs[i].prov.resumed_from, "%s", r->path);
    int kept = 0;
    for (int i = 0; i < r->n && !R->csv_failed; i++) {
        if (r->slot[i] < 0)
            continue;
        const bench_case *c = &plan->cases[r->slot[i]];
        const ls_provenance *pv = &R->devs[0].prov;
        for (int d = 0; d < R->n_devs; d++)
            if (R->devs[d].index == c->device)
                pv = &R->devs[d].prov;
        ls_row res;
        kept_result(r, r->rows[i].f, pv, &res);
        if (ls_csv_write_raw(R->csv, r->rows[i].line, r->rows[i].len) != 0) {
            fprintf(stderr, "linstate-bench: %s\n", ls_last_error());
            ls_csv_abandon(R->samples_csv, "the CSV write failed"); /* the two keep the same rows */
            R->csv_failed = 1;
            R->stopped = 1; /* nothing is measured: its rows could not be kept */
            R->res.failures++;
            break;
        }
        bench_runner_keep_row(R, c, &res);
        kept++;
    }
    int done = 0, to_run = 0;
    for (int ci = 0; ci < plan->n; ci++) {
        int k = r->left[ci];
        r->left[ci] = k == 0 ? -1 : r->total - k; /* -1: nothing kept, registered as usual */
        done += k == r->total;
        to_run += k < r->total;
    }
    R->left = r->left; /* the runner owns them now */
    R->kept = r->kept;
    R->kept_reps = r->total;
    r->left = NULL;
    r->kept = NULL;
    R->res.plan_n = to_run;
    char left[128 + LS_OUTFILE_PATH_MAX];
    if (to_run) /* nothing to run: main.c does not start GB (it would call a run of no case an error) */
        snprintf(left, sizeof left, "%d case(s) to run", to_run);
    else
        snprintf(left, sizeof left, "nothing to run: all %d cases are in %s", plan->n, r->path);
    fprintf(stderr, "linstate-bench: --resume %s: %d row(s) kept (%d of %d cases complete), %d run again, %d not of "
                    "this sweep%s; %s\n", r->path, kept, done, plan->n, r->n - kept - r->other, r->other,
            r->torn ? "; a torn last line dropped" : "", left);
    return 0;
}

void bench_resume_out_path(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", path);
    size_t n = strlen(buf);
    if (n > 11 && strncmp(buf + n - 11, ".tmp.", 5) == 0)
        buf[n - 11] = '\0'; /* FILE.tmp.XXXXXX (mkstemp's six characters) -> FILE */
}

void bench_resume_finish(bench_resume *r, const char *out)
{
    char final[LS_OUTFILE_PATH_MAX];
    bench_resume_out_path(r->path, final, sizeof final);
    if (strcmp(final, r->path) == 0 || strcmp(final, out) != 0)
        return;
    if (r->other) /* rows of another sweep: never thrown away */
        fprintf(stderr, "linstate-bench: kept %s: %d of its rows are not of this sweep\n", r->path, r->other);
    else if (unlink(r->path) == 0)
        fprintf(stderr, "linstate-bench: removed %s (its rows are in %s)\n", r->path, out);
}

void bench_resume_free(bench_resume *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->rows[i].buf);
        free(r->rows[i].f);
    }
    free(r->rows);
    free(r->data);
    free(r->slot);
    free(r->left);
    free(r->kept);
    memset(r, 0, sizeof *r);
}
