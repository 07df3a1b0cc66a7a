/*
 * report.c — what a person reads: one progress line per row on stderr while the sweep runs
 * ("[i/N] case  median  GB/s  %peak  status  elapsed, ETA"), the final table on stdout and, with
 * --quick, the compact per-op table of results/h200/kernels.md after it. Everything here reads a
 * bench_results (rows + what the sweep ran over) that the runner fills; nothing here knows the
 * runner. The CSV (harness csv.c) is the machine-readable record; nothing here is parsed by tools.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ls_pyimpl.h"

/* "12.3s", "4m05s", "1h02m". */
static void fmt_duration(double s, char *buf, size_t cap)
{
    if (!(s >= 0) || !isfinite(s))
        snprintf(buf, cap, "?");
    else if (s < 60)
        snprintf(buf, cap, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

/* A number or "-" when it is NaN (skipped rows, no copy peak). */
static void fmt_num(double v, const char *fmt, char *buf, size_t cap)
{
    if (isfinite(v))
        snprintf(buf, cap, fmt, v);
    else
        snprintf(buf, cap, "-");
}

void bench_report_progress(const bench_results *res, const bench_result *r)
{
    double elapsed = bench_wall_s() - res->t0;
    int done = res->started, total = res->plan_n;
    /* ETA from the mean time per case so far; repetitions of a case count once. */
    double eta = done > 0 ? elapsed / done * (total - done) : NAN;
    char e1[16], e2[16], us[24], gbps[24], pct[24];
    fmt_duration(elapsed, e1, sizeof e1);
    fmt_duration(eta, e2, sizeof e2);
    fmt_num(r->median_us, "%.2f us", us, sizeof us);
    fmt_num(r->gbps, "%.1f GB/s", gbps, sizeof gbps);
    fmt_num(r->pct_of_copy_peak, "%.1f%%", pct, sizeof pct);
    char rep[24] = "";
    if (r->repetition > 0)
        snprintf(rep, sizeof rep, " rep %d", r->repetition);
    /* The GB name: the key, plus /variant:<v> for a non-default variant (same as --list). */
    fprintf(stderr, "[%d/%d] %s%s  %s  %s  %s  %s  (elapsed %s, ETA %s)\n", done, total, r->c->name, rep, us, gbps,
            pct, r->status, e1, e2);
    if (res->o && res->o->explain && r->repetition == 0)
        fprintf(stderr, "        kernel: %s\n", r->kernel[0] ? r->kernel : "(the impl does not say)");
}

void bench_report_table(const bench_results *res, FILE *f)
{
    int w = (int)strlen("case");
    for (int i = 0; i < res->n; i++) {
        int l = (int)strlen(res->rows[i].c->name);
        if (l > w)
            w = l;
    }
    int reps = 0;
    for (int i = 0; i < res->n; i++)
        reps |= res->rows[i].repetition > 0;
    fprintf(f, "%-*s %s%12s %10s %8s  %s\n", w, "case", reps ? "  rep" : "", "median_us", "GB/s", "%peak",
            "status");
    for (int i = 0; i < res->n; i++) {
        const bench_result *r = &res->rows[i];
        char us[24], gbps[24], pct[24], rep[16] = "";
        fmt_num(r->median_us, "%.3f", us, sizeof us);
        fmt_num(r->gbps, "%.1f", gbps, sizeof gbps);
        fmt_num(r->pct_of_copy_peak, "%.1f", pct, sizeof pct);
        if (reps)
            snprintf(rep, sizeof rep, "%5d", r->repetition);
        fprintf(f, "%-*s %s%12s %10s %8s  %s\n", w, r->c->name, rep, us, gbps, pct, r->status);
    }
    int ok = 0, skipped = 0, unsaved = 0;
    for (int i = 0; i < res->n; i++) {
        ok += strcmp(res->rows[i].status, "ok") == 0;
        skipped += strncmp(res->rows[i].status, "skipped", 7) == 0;
        unsaved += strcmp(res->rows[i].status, "not_saved") == 0;
    }
    fprintf(f, "%d rows: %d ok, %d skipped, %d failed", res->n, ok, skipped, res->failures);
    if (unsaved) /* measured, but its write failed (runner.c): not in the file */
        fprintf(f, " (%d not saved: %d rows in the file)", unsaved, res->n - unsaved);
    for (int i = 0; i < res->n_devs; i++)
        fprintf(f, "; device %d copy peak %.1f GB/s", res->dev_index[i], res->dev_copy_peak_gbps[i]);
    fprintf(f, "\n");
}

/* ------------------------------------------------------------------ --quick table */

/* Cases of one table row: the same benchmark row (family, op, variant), model, tp, T, dtype,
 * impl point and device; they differ only in batch and graph. */
static int same_quick_row(const bench_case *a, const bench_case *b)
{
    return a->e == b->e && a->model == b->model && a->tp == b->tp && a->tokens == b->tokens &&
           a->state_dtype == b->state_dtype && a->pt == b->pt && a->device == b->device;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * One cell: the median over the ok repetitions of the row's (batch, graph) case of the value
 * (pct: % of copy peak, else median us); "-" when no such case ran, the status after its colon
 * ("oom", "no_graph", ...) when none of its repetitions is ok.
 */
static void quick_cell(const bench_results *res, const bench_case *row, int batch, int graph, int pct, char *buf,
                       size_t cap)
{
    double v[64];
    int n = 0;
    const char *status = NULL;
    for (int i = 0; i < res->n; i++) {
        const bench_result *r = &res->rows[i];
        if (!same_quick_row(r->c, row) || r->c->batch != batch || r->c->graph != graph)
            continue;
        if (strcmp(r->status, "ok") != 0) {
            status = r->status;
            continue;
        }
        if (n < (int)(sizeof v / sizeof v[0]))
            v[n++] = pct ? r->pct_of_copy_peak : r->median_us;
    }
    if (n == 0) {
        const char *colon = status ? strchr(status, ':') : NULL;
        snprintf(buf, cap, "%s", !status ? "-" : colon ? colon + 1 : status);
        return;
    }
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    fmt_num(med, pct ? "%.1f %%" : "%.2f us", buf, cap);
}

/* Adds b to the set (no duplicates); returns the new count. */
static int add_batch(int *set, int n, int b)
{
    for (int i = 0; i < n; i++)
        if (set[i] == b)
            return n;
    if (n < BENCH_MAX_LIST)
        set[n++] = b;
    return n;
}

static int cmp_int_desc(const void *a, const void *b)
{
    return *(const int *)b - *(const int *)a;
}

void bench_report_quick(const bench_results *res, FILE *f)
{
    /* Columns: % of copy peak per eager batch > 1, largest first (B = 512 / 128 / 64); then us
     * per call per graph batch, smallest first (B = 1, the CUDA-graph column); with no graph
     * rows at all, eager B = 1 in us instead. */
    int pct_b[BENCH_MAX_LIST], n_pct = 0, us_b[BENCH_MAX_LIST], n_us = 0, eager1 = 0;
    for (int i = 0; i < res->n; i++) {
        const bench_case *c = res->rows[i].c;
        if (c->graph)
            n_us = add_batch(us_b, n_us, c->batch);
        else if (c->batch > 1)
            n_pct = add_batch(pct_b, n_pct, c->batch);
        else
            eager1 = 1;
    }
    int us_graph = n_us > 0;
    if (!us_graph && eager1)
        us_b[n_us++] = 1;
    qsort(pct_b, (size_t)n_pct, sizeof pct_b[0], cmp_int_desc);
    qsort(us_b, (size_t)n_us, sizeof us_b[0], cmp_int_desc);
    for (int i = 0; i < n_us / 2; i++) { /* ascending */
        int t = us_b[i];
        us_b[i] = us_b[n_us - 1 - i];
        us_b[n_us - 1 - i] = t;
    }
    fprintf(f, "\n| op | model |");
    for (int j = 0; j < n_pct; j++)
        fprintf(f, " B = %d |", pct_b[j]);
    for (int j = 0; j < n_us; j++)
        fprintf(f, " B = %d%s |", us_b[j], us_graph ? " (graph)" : "");
    fprintf(f, "\n|---|---|");
    for (int j = 0; j < n_pct + n_us; j++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    /* Rows: the first result of each table row, in the kernels.md order of ops, then by first
     * appearance (plan order). */
    int *lead = malloc(sizeof *lead * (size_t)(res->n ? res->n : 1)), n_lead = 0;
    if (!lead)
        return;
    for (int i = 0; i < res->n; i++) {
        int first = 1;
        for (int k = 0; k < n_lead && first; k++)
            first = !same_quick_row(res->rows[lead[k]].c, res->rows[i].c);
        if (!first)
            continue;
        int at = n_lead++, rank = bench_quick_rank(res->rows[i].c->e);
        while (at > 0 && bench_quick_rank(res->rows[lead[at - 1]].c->e) > rank) {
            lead[at] = lead[at - 1];
            at--;
        }
        lead[at] = i;
    }
    for (int li = 0; li < n_lead; li++) {
        const bench_case *c = res->rows[lead[li]].c;
        char label[256] = "", extra[160] = "", cell[48];
        if (c->tokens > 1)
            snprintf(extra, sizeof extra, " T = %d", c->tokens);
        /* the GB name's suffixes (device, variant, impl, tuning) tell rows of one op apart */
        const char *suffix = c->name + strlen(c->key);
        snprintf(label, sizeof label, "%s %s%s%s%s", c->e->family, c->e->op, extra, *suffix ? " " : "", suffix);
        fprintf(f, "| %s | %s tp%d %s |", label, c->model->name, c->tp, ls_dtype_name(c->state_dtype));
        for (int j = 0; j < n_pct; j++) {
            quick_cell(res, c, pct_b[j], 0, 1, cell, sizeof cell);
            fprintf(f, " %s |", cell);
        }
        for (int j = 0; j < n_us; j++) {
            quick_cell(res, c, us_b[j], us_graph, 0, cell, sizeof cell);
            fprintf(f, " %s |", cell);
        }
        fprintf(f, "\n");
    }
    free(lead);
    fprintf(f, "%% of the run's D2D copy peak (");
    for (int i = 0; i < res->n_devs; i++)
        fprintf(f, "%sdevice %d: %.1f GB/s", i ? ", " : "", res->dev_index[i], res->dev_copy_peak_gbps[i]);
    fprintf(f, "); %s: median time per call%s\n", n_us ? "us columns" : "no us column",
            us_graph ? ", CUDA-graph replays" : "");
}

void bench_report_list(const bench_plan *p, FILE *f)
{
    for (int i = 0; i < p->n; i++)
        fprintf(f, "%s\n", p->cases[i].name);
}

void bench_report_impls(const bench_opts *o, FILE *f)
{
    const ls_impl *seen[BENCH_MAX_POINTS];
    int n_seen = 0;
    for (int i = 0; i < o->n_points; i++) {
        const ls_impl *im = o->points[i].impl;
        int dup = 0;
        for (int j = 0; j < n_seen; j++)
            dup |= seen[j] == im;
        if (dup)
            continue;
        seen[n_seen++] = im;
        fprintf(f, "impl %s (runtime %s%s%s)%s\n", im->name, im->runtime, im->version && *im->version ? ", " : "",
                im->version ? im->version : "", im->n_knobs ? ", knobs (first value = default):" : ", no knobs");
        for (int k = 0; k < im->n_knobs; k++)
            fprintf(f, "  %-16s %-40s %s\n", im->knobs[k].name, im->knobs[k].values,
                    im->knobs[k].help ? im->knobs[k].help : "");
        fprintf(f, "  ops:");
        for (int op = 0; op < LS_OP_COUNT; op++)
            if (ls_impl_op(im, (ls_op)op))
                fprintf(f, " %s", ls_op_name((ls_op)op));
        fprintf(f, "\n");
        const ls_pyimpl *py = ls_pyimpl_of(im);
        if (py) /* a Python impl: the columns impl_source, impl_source_git, impl_source_hash */
            fprintf(f, "  python, source: %s%s%s, files sha256 %s\n", *ls_pyimpl_source(im) ? ls_pyimpl_source(im) : "(none)",
                    *py->source_git ? ", git " : "", py->source_git, py->source_hash);
    }
    for (int i = 0; i < o->n_points; i++)
        fprintf(f, "point %d: impl %s, tuning \"%s\"\n", i, o->points[i].impl->name, o->points[i].tune);
}
