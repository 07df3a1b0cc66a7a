/*
 * csv.c — the versioned result file (schema v1). One row per case and repetition.
 *
 * Format rules (also for readers such as scripts/compare.py):
 *  - the header is fixed up front (never decided by the first row) and comes from the same
 *    column table as the rows, so the two cannot drift apart; the 42 schema-v1 columns come
 *    first, in the schema's order (results/README.md), then the extras repetition, rotated,
 *    time_us_min, time_us_max, held; new columns are only ever appended;
 *  - strings are always double-quoted, an embedded '"' doubled (RFC 4180); control characters
 *    (newlines, tabs) become spaces so one row is always one line;
 *  - integers are plain decimals; reals use %.10g; a NaN or infinite real is an EMPTY cell, as are
 *    git_dirty and numa_node when unknown (-1): pandas reads all of those as NaN;
 *  - the file is written as PATH.tmp, flushed after every row, and renamed to PATH on close; on
 *    SIGINT/SIGTERM (after ls_csv_install_signal_handlers) the rows already written are renamed
 *    into place and the process exits 130/143.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ls_harness.h"

#define CSV_PATH_MAX 4096
#define CSV_BUF_BYTES (64 * 1024) /* > any row: a flushed row reaches the file in one write() */

struct ls_csv {
    FILE *f;
    char path[CSV_PATH_MAX];
    char tmp[CSV_PATH_MAX];
    char *buf;
    int handlers; /* this file owns the installed signal handlers */
};

/* ------------------------------------------------------------------ column table */

/* X(name, kind, expression): kinds STR (char array), INT, I64, OPT (int, < 0 = empty), DBL.
 * In the expressions, p is the row's provenance and r the row. */
#define LS_CSV_COLUMNS(X)                                 \
    X(schema_version, INT, LS_CSV_SCHEMA_VERSION)         \
    X(suite_version, STR, p->suite_version)               \
    X(git_commit, STR, p->git_commit)                     \
    X(git_dirty, OPT, p->git_dirty)                       \
    X(timestamp, STR, p->timestamp)                       \
    X(host, STR, p->host)                                 \
    X(backend, STR, p->backend)                           \
    X(device_index, INT, p->device_index)                 \
    X(gpu_name, STR, p->dev.name)                         \
    X(driver_version, INT, p->dev.driver_version)         \
    X(cuda_runtime, INT, p->dev.runtime_version)          \
    X(sm_count, INT, p->dev.sm_count)                     \
    X(sm_clock_mhz, INT, p->dev.sm_clock_mhz)             \
    X(mem_clock_mhz, INT, p->dev.mem_clock_mhz)           \
    X(cpuset, STR, p->cpuset)                             \
    X(numa_node, OPT, p->numa_node)                       \
    X(case, STR, r->case_key)                             \
    X(mechanism, STR, r->mechanism)                       \
    X(op, STR, r->op)                                     \
    X(variant, STR, r->variant)                           \
    X(model, STR, r->model)                               \
    X(tp, INT, r->tp)                                     \
    X(batch, INT, r->batch)                               \
    X(draft_tokens, INT, r->draft_tokens)                 \
    X(layers, INT, r->layers)                             \
    X(conv_dtype, STR, r->conv_dtype)                     \
    X(state_dtype, STR, r->state_dtype)                   \
    X(pool_slots, INT, r->pool_slots)                     \
    X(cache_regime, STR, r->cache_regime)                 \
    X(graph, INT, r->graph)                               \
    X(samples, INT, r->t.n)                               \
    X(time_us_median, DBL, r->t.median)                   \
    X(time_us_p10, DBL, r->t.p10)                         \
    X(time_us_p90, DBL, r->t.p90)                         \
    X(time_us_mean, DBL, r->t.mean)                       \
    X(time_us_stddev, DBL, r->t.stddev)                   \
    X(bytes, I64, r->bytes)                               \
    X(gbps, DBL, r->gbps)                                 \
    X(copy_peak_gbps, DBL, r->copy_peak_gbps)             \
    X(pct_of_copy_peak, DBL, r->pct_of_copy_peak)         \
    X(max_rel_err, DBL, r->max_rel_err)                   \
    X(status, STR, r->status)                             \
    X(repetition, INT, r->repetition)                     \
    X(rotated, INT, r->rotated)                           \
    X(time_us_min, DBL, r->t.min)                         \
    X(time_us_max, DBL, r->t.max)                         \
    X(held, INT, r->held)                                 \
    X(impl, STR, r->impl)                                 \
    X(impl_version, STR, r->impl_version)                 \
    X(tuning, STR, r->tuning)                             \
    X(kernel, STR, r->kernel)                             \
    X(state_layout, STR, r->state_layout)                 \
    X(noise_pct, DBL, r->noise_pct)                       \
    X(stop_reason, STR, r->stop_reason)                   \
    X(sm_clock_min_mhz, OPT, r->sm_clock_min_mhz)         \
    X(sm_clock_median_mhz, OPT, r->sm_clock_median_mhz)   \
    X(samples_discarded, OPT, r->samples_discarded)       \
    X(copy_peak_drift_pct, DBL, r->copy_peak_drift_pct)   \
    X(gpu_uuid, STR, p->gpu_uuid)                         \
    X(pci_bus_id, STR, p->dev.pci_bus_id)                 \
    X(rank, OPT, p->rank)                                 \
    X(world_size, OPT, p->world_size)                     \
    X(job_id, STR, p->job_id)                             \
    X(node, STR, p->node)

#define HEADER_NAME(name, kind, expr) "," #name
static const char header_with_lead_comma[] = LS_CSV_COLUMNS(HEADER_NAME);

const char *ls_csv_header(void)
{
    return header_with_lead_comma + 1;
}

/* String cell: always quoted, '"' doubled, control characters as spaces, at most cap bytes
 * read (a char array filled without a terminator still cannot overrun). */
static void put_str(FILE *f, const char *s, size_t cap)
{
    fputc('"', f);
    for (size_t i = 0; i < cap && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"')
            fputs("\"\"", f);
        else
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('"', f);
}

static void put_dbl(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
}

#define CELL_STR(f, e) put_str(f, e, sizeof(e))
#define CELL_INT(f, e) fprintf(f, "%d", (int)(e))
#define CELL_I64(f, e) fprintf(f, "%" PRId64, (int64_t)(e))
#define CELL_OPT(f, e) ((e) < 0 ? (void)0 : (void)fprintf(f, "%d", (int)(e)))
#define CELL_DBL(f, e) put_dbl(f, e)
#define ROW_CELL(name, kind, expr) \
    if (!first)                    \
        fputc(',', f);             \
    first = 0;                     \
    CELL_##kind(f, expr);

/* ------------------------------------------------------------------ signal handling */

/* The handler may only touch these (async-signal-safe: rename, write, _exit). */
static char sig_tmp[CSV_PATH_MAX], sig_path[CSV_PATH_MAX], sig_msg[CSV_PATH_MAX + 64];
static size_t sig_msg_len;
static volatile sig_atomic_t sig_armed = 0;
static struct sigaction old_int, old_term;

/* Rows already written are complete on disk (flushed per row, each in one write()), so the
 * handler only renames the file into place and exits; a row still in the stdio buffer was not
 * finished and is dropped. */
static void on_signal(int sig)
{
    if (sig_armed) {
        sig_armed = 0;
        if (rename(sig_tmp, sig_path) == 0) {
            ssize_t w = write(2, sig_msg, sig_msg_len);
            (void)w;
        }
    }
    _exit(128 + sig);
}

void ls_csv_install_signal_handlers(ls_csv *c)
{
    if (!c)
        return;
    snprintf(sig_tmp, sizeof sig_tmp, "%s", c->tmp);
    snprintf(sig_path, sizeof sig_path, "%s", c->path);
    snprintf(sig_msg, sizeof sig_msg, "linstate: interrupted; rows measured so far kept in %s\n",
             c->path);
    sig_msg_len = strlen(sig_msg);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sig_armed = 1;
    sigaction(SIGINT, &sa, c->handlers ? NULL : &old_int);
    sigaction(SIGTERM, &sa, c->handlers ? NULL : &old_term);
    c->handlers = 1;
}

/* ------------------------------------------------------------------ file life cycle */

/* The one file writer: PATH.tmp with the given header line, renamed on close (main CSV and the
 * --samples-out sidecar alike). */
static ls_csv *open_with_header(const char *path, const char *header)
{
    if (!path || !*path)
        return ls_fail("CSV: empty output path"), NULL;
    if (strlen(path) + 5 > CSV_PATH_MAX)
        return ls_fail("CSV: output path too long (%zu bytes)", strlen(path)), NULL;
    ls_csv *c = calloc(1, sizeof *c);
    char *buf = malloc(CSV_BUF_BYTES);
    if (!c || !buf) {
        free(c);
        free(buf);
        return ls_fail("CSV: out of host memory"), NULL;
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->tmp, sizeof c->tmp, "%s.tmp", path);
    c->buf = buf;
    c->f = fopen(c->tmp, "w");
    if (!c->f) {
        ls_fail("CSV: cannot create '%s': %s", c->tmp, strerror(errno));
        free(c->buf);
        free(c);
        return NULL;
    }
    setvbuf(c->f, c->buf, _IOFBF, CSV_BUF_BYTES);
    fprintf(c->f, "%s\n", header);
    if (fflush(c->f) != 0) {
        ls_fail("CSV: cannot write '%s': %s", c->tmp, strerror(errno));
        fclose(c->f);
        remove(c->tmp);
        free(c->buf);
        free(c);
        return NULL;
    }
    return c;
}

ls_csv *ls_csv_open(const char *path)
{
    return open_with_header(path, ls_csv_header());
}

/* ------------------------------------------------------------------ raw samples sidecar */

static const char samples_header[] =
    "case,variant,impl,tuning,state_layout,cache_regime,graph,device_index,repetition,sample,us";

const char *ls_samples_header(void)
{
    return samples_header;
}

ls_csv *ls_samples_open(const char *path)
{
    return open_with_header(path, samples_header);
}

int ls_samples_write(ls_csv *c, const ls_row *r, const double *us, int n)
{
    if (!c || !r || !r->prov || (n > 0 && !us))
        return ls_fail("ls_samples_write: NULL %s", !c ? "file" : !r || !r->prov ? "row" : "samples");
    FILE *f = c->f;
    for (int i = 0; i < n; i++) {
        CELL_STR(f, r->case_key);
        fputc(',', f);
        CELL_STR(f, r->variant);
        fputc(',', f);
        CELL_STR(f, r->impl);
        fputc(',', f);
        CELL_STR(f, r->tuning);
        fputc(',', f);
        CELL_STR(f, r->state_layout);
        fputc(',', f);
        CELL_STR(f, r->cache_regime);
        fprintf(f, ",%d,%d,%d,%d,", r->graph, r->prov->device_index, r->repetition, i);
        put_dbl(f, us[i]);
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f))
        return ls_fail("CSV: write to '%s' failed: %s", c->tmp, strerror(errno));
    return 0;
}

int ls_csv_write(ls_csv *c, const ls_row *r)
{
    if (!c || !r || !r->prov)
        return ls_fail("ls_csv_write: NULL %s", !c ? "file" : !r ? "row" : "row provenance");
    const ls_provenance *p = r->prov;
    FILE *f = c->f;
    int first = 1;
    LS_CSV_COLUMNS(ROW_CELL)
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        return ls_fail("CSV: write to '%s' failed: %s", c->tmp, strerror(errno));
    return 0;
}

int ls_csv_close(ls_csv *c)
{
    if (!c)
        return 0;
    int rc = 0;
    if (fclose(c->f) != 0)
        rc = ls_fail("CSV: closing '%s' failed: %s", c->tmp, strerror(errno));
    if (c->handlers) {
        sig_armed = 0;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    if (rc == 0 && rename(c->tmp, c->path) != 0)
        rc = ls_fail("CSV: rename '%s' -> '%s' failed: %s", c->tmp, c->path, strerror(errno));
    free(c->buf);
    free(c);
    return rc;
}

void ls_csv_discard(ls_csv *c)
{
    if (!c)
        return;
    fclose(c->f);
    if (c->handlers) {
        sig_armed = 0;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    remove(c->tmp);
    free(c->buf);
    free(c);
}

/* ------------------------------------------------------------------ row helpers */

void ls_row_init(ls_row *r, const ls_provenance *prov)
{
    memset(r, 0, sizeof *r);
    r->prov = prov;
    r->gbps = r->copy_peak_gbps = r->pct_of_copy_peak = NAN;
    r->max_rel_err = NAN;
    r->noise_pct = r->copy_peak_drift_pct = NAN;
    r->sm_clock_min_mhz = r->sm_clock_median_mhz = r->samples_discarded = -1;
    r->t.median = r->t.p10 = r->t.p90 = r->t.mean = r->t.stddev = r->t.min = r->t.max = NAN;
    snprintf(r->status, sizeof r->status, "ok");
}

void ls_row_set_result(ls_row *r, const ls_stats *t, int64_t bytes, double copy_peak_gbps)
{
    r->t = *t;
    r->bytes = bytes;
    r->copy_peak_gbps = copy_peak_gbps;
    r->gbps = t->median > 0 ? (double)bytes / (t->median * 1e3) : NAN;
    r->pct_of_copy_peak = copy_peak_gbps > 0 && isfinite(r->gbps) ? 100.0 * r->gbps / copy_peak_gbps
                                                                  : NAN;
}
