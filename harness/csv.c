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
 *  - the file is written to a private temporary PATH.tmp.XXXXXX (outfile.c), flushed after every
 *    row, and moved to PATH on close unless a write failed; on SIGINT/SIGTERM (after
 *    ls_csv_install_signal_handlers) the rows already written are moved into place and the
 *    process exits 130/143.
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

#include "harness_internal.h"
#include "ls_harness.h"

#define CSV_BUF_BYTES (64 * 1024) /* > any row: a flushed row reaches the file in one write() */

struct ls_csv {
    FILE *f;
    ls_outfile out; /* the private temporary and the final name */
    char *buf;
    int handlers;   /* this file owns the installed signal handlers */
    int failed;     /* a write failed: nothing more is written, nothing is moved */
    char failure[1024]; /* its message, repeated by ls_csv_close */
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
    X(node, STR, p->node)                                 \
    X(resumed_from, STR, p->resumed_from)

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

/* The handler may only touch these (async-signal-safe: link, rename, unlink, write, _exit).
 * sig_state: 0 disarmed, 1 move the rows into place, 2 a write failed (keep the temporary). */
static char sig_tmp[LS_OUTFILE_PATH_MAX + 16], sig_path[LS_OUTFILE_PATH_MAX];
static char sig_msg[2 * LS_OUTFILE_PATH_MAX + 96], sig_keep[2 * LS_OUTFILE_PATH_MAX + 96];
static size_t sig_msg_len, sig_keep_len;
static int sig_existed;
static volatile sig_atomic_t sig_state = 0;
static struct sigaction old_int, old_term;

/* Rows already written are complete on disk (flushed per row, each in one write()), so the
 * handler only moves the file into place (by the no-clobber rule of outfile.c) and exits; a row
 * still in the stdio buffer was not finished and is dropped. */
static void on_signal(int sig)
{
    if (sig_state) {
        int moved = 0;
        if (sig_state == 1 && sig_existed)
            moved = rename(sig_tmp, sig_path) == 0;
        else if (sig_state == 1 && link(sig_tmp, sig_path) == 0) {
            unlink(sig_tmp);
            moved = 1;
        }
        sig_state = 0;
        ssize_t w = moved ? write(2, sig_msg, sig_msg_len) : write(2, sig_keep, sig_keep_len);
        (void)w;
    }
    _exit(128 + sig);
}

void ls_csv_install_signal_handlers(ls_csv *c)
{
    if (!c)
        return;
    snprintf(sig_tmp, sizeof sig_tmp, "%s", c->out.tmp);
    snprintf(sig_path, sizeof sig_path, "%s", c->out.path);
    sig_existed = c->out.existed;
    snprintf(sig_msg, sizeof sig_msg, "linstate: interrupted; rows measured so far kept in %s\n", c->out.path);
    snprintf(sig_keep, sizeof sig_keep, "linstate: interrupted; rows measured so far left in %s (not moved to %s)\n",
             c->out.tmp, c->out.path);
    sig_msg_len = strlen(sig_msg);
    sig_keep_len = strlen(sig_keep);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sig_state = c->failed ? 2 : 1;
    sigaction(SIGINT, &sa, c->handlers ? NULL : &old_int);
    sigaction(SIGTERM, &sa, c->handlers ? NULL : &old_term);
    c->handlers = 1;
}

/* ------------------------------------------------------------------ file life cycle */

/* The one file writer: a private temporary (outfile.c) with the given header line, moved on close
 * (main CSV and the --samples-out sidecar alike). */
static ls_csv *open_with_header(const char *path, const char *header)
{
    ls_csv *c = calloc(1, sizeof *c);
    char *buf = malloc(CSV_BUF_BYTES);
    if (!c || !buf) {
        free(c);
        free(buf);
        return ls_fail("CSV: out of host memory"), NULL;
    }
    if (ls_outfile_open(&c->out, path) != 0) {
        lsh_fail_cause("CSV");
        free(buf);
        free(c);
        return NULL;
    }
    c->buf = buf;
    int fd = dup(c->out.fd); /* the FILE gets its own descriptor; out.fd keeps the lock */
    c->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!c->f) {
        ls_fail("CSV: cannot open '%s': %s", c->out.tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto fail;
    }
    setvbuf(c->f, c->buf, _IOFBF, CSV_BUF_BYTES);
    fprintf(c->f, "%s\n", header);
    if (fflush(c->f) != 0) {
        ls_fail("CSV: cannot write '%s': %s", c->out.tmp, strerror(errno));
        fclose(c->f);
        goto fail;
    }
    return c;
fail:
    ls_outfile_discard(&c->out);
    free(c->buf);
    free(c);
    return NULL;
}

const char *ls_csv_tmp_path(const ls_csv *c)
{
    return c ? c->out.tmp : "";
}

/* A failed write (disk full, quota, I/O error) poisons the file: no later row is written (it
 * would follow a torn one) and ls_csv_close keeps the temporary instead of moving it. */
static int write_failed(ls_csv *c, int err)
{
    if (!c->failed && c->handlers && sig_state)
        sig_state = 2; /* a signal now leaves the rows in the temporary */
    c->failed = 1;
    ls_fail("CSV: write to '%s' failed: %s; rows written so far are kept there, not moved to '%s'", c->out.tmp,
            strerror(err ? err : EIO), c->out.path);
    snprintf(c->failure, sizeof c->failure, "%s", ls_last_error());
    return -1;
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
    if (c->failed)
        return ls_fail("CSV: not written after an earlier write failure (samples kept in '%s')", c->out.tmp);
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
        return write_failed(c, errno);
    return 0;
}

int ls_csv_write(ls_csv *c, const ls_row *r)
{
    if (!c || !r || !r->prov)
        return ls_fail("ls_csv_write: NULL %s", !c ? "file" : !r ? "row" : "row provenance");
    if (c->failed)
        return ls_fail("CSV: not written after an earlier write failure (rows kept in '%s')", c->out.tmp);
    const ls_provenance *p = r->prov;
    FILE *f = c->f;
    int first = 1;
    LS_CSV_COLUMNS(ROW_CELL)
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        return write_failed(c, errno);
    return 0;
}

int ls_csv_write_raw(ls_csv *c, const char *line, size_t len)
{
    if (!c || !line)
        return ls_fail("ls_csv_write_raw: NULL %s", !c ? "file" : "line");
    if (c->failed)
        return ls_fail("CSV: not written after an earlier write failure (rows kept in '%s')", c->out.tmp);
    if (fwrite(line, 1, len, c->f) != len || fputc('\n', c->f) == EOF || fflush(c->f) != 0 || ferror(c->f))
        return write_failed(c, errno);
    return 0;
}

int ls_csv_close(ls_csv *c)
{
    if (!c)
        return 0;
    int rc = 0;
    if (c->handlers) {
        sig_state = 0;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    if (fclose(c->f) != 0 && !c->failed)
        rc = write_failed(c, errno);
    if (c->failed) {
        ls_outfile_keep(&c->out);
        rc = ls_fail("%s", c->failure); /* the first failure, which names the temporary */
    } else if (ls_outfile_commit(&c->out) != 0) {
        rc = lsh_fail_cause("CSV");
    }
    free(c->buf);
    free(c);
    return rc;
}

void ls_csv_discard(ls_csv *c)
{
    if (!c)
        return;
    if (c->handlers) {
        sig_state = 0;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    fclose(c->f);
    ls_outfile_discard(&c->out);
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
