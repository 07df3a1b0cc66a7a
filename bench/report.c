/*
 * report.c — what a person reads: one progress line per row on stderr while the sweep runs
 * ("[i/N] case  median  GB/s  %peak  status  elapsed, ETA"), and the final table on stdout.
 * The CSV (harness csv.c) is the machine-readable record; nothing here is parsed by tools.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

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

void bench_report_progress(const bench_runner *R, const bench_result *r)
{
    double elapsed = bench_wall_s() - R->t0;
    int done = R->started, total = R->plan->n;
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
    if (R->o->explain && r->repetition == 0)
        fprintf(stderr, "        kernel: %s\n", R->cur_kernel[0] ? R->cur_kernel : "(the impl does not say)");
}

void bench_report_table(const bench_runner *R, FILE *f)
{
    int w = (int)strlen("case");
    for (int i = 0; i < R->n_results; i++) {
        int l = (int)strlen(R->results[i].c->name);
        if (l > w)
            w = l;
    }
    int reps = 0;
    for (int i = 0; i < R->n_results; i++)
        reps |= R->results[i].repetition > 0;
    fprintf(f, "%-*s %s%12s %10s %8s  %s\n", w, "case", reps ? "  rep" : "", "median_us", "GB/s", "%peak",
            "status");
    for (int i = 0; i < R->n_results; i++) {
        const bench_result *r = &R->results[i];
        char us[24], gbps[24], pct[24], rep[16] = "";
        fmt_num(r->median_us, "%.3f", us, sizeof us);
        fmt_num(r->gbps, "%.1f", gbps, sizeof gbps);
        fmt_num(r->pct_of_copy_peak, "%.1f", pct, sizeof pct);
        if (reps)
            snprintf(rep, sizeof rep, "%5d", r->repetition);
        fprintf(f, "%-*s %s%12s %10s %8s  %s\n", w, r->c->name, rep, us, gbps, pct, r->status);
    }
    int ok = 0, skipped = 0;
    for (int i = 0; i < R->n_results; i++) {
        ok += strcmp(R->results[i].status, "ok") == 0;
        skipped += strncmp(R->results[i].status, "skipped", 7) == 0;
    }
    fprintf(f, "%d rows: %d ok, %d skipped, %d failed", R->n_results, ok, skipped, R->failures);
    for (int i = 0; i < R->n_devs; i++)
        fprintf(f, "; device %d copy peak %.1f GB/s", R->devs[i].index, R->devs[i].copy_peak_gbps);
    fprintf(f, "\n");
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
    }
    for (int i = 0; i < o->n_points; i++)
        fprintf(f, "point %d: impl %s, tuning \"%s\"\n", i, o->points[i].impl->name, o->points[i].tune);
}
