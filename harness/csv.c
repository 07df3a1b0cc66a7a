/*
 * csv.c — the versioned result file (schema LS_CSV_SCHEMA_VERSION, docs/csv.md). One row per case
 * and repetition.
 *
 * Format rules (also for readers such as scripts/compare.py):
 *  - the header is fixed up front (never decided by the first row) and comes from the same
 *    column table as the rows, so the two cannot drift apart; the 42 schema-v1 columns come
 *    first, in the schema's order (docs/csv.md), then the extras repetition, rotated,
 *    time_us_min, time_us_max, held; new columns are only ever appended;
 *  - strings are always double-quoted, an embedded '"' doubled (RFC 4180); control characters
 *    (newlines, tabs) become spaces so one row is always one line;
 *  - integers are plain decimals; reals use %.10g; a NaN or infinite real is an EMPTY cell, as are
 *    git_dirty and numa_node when unknown (-1): pandas reads all of those as NaN;
 *  - the file is written to a private temporary PATH.tmp.XXXXXX (outfile.c), each row formatted
 *    in memory and written with one write(), and moved to PATH on close unless a write failed
 *    (then a torn tail is cut back to the last whole row and the temporary is kept); on SIGINT,
 *    SIGTERM, SIGHUP or SIGPIPE (after ls_csv_install_signal_handlers) the rows already written
 *    are moved into place and the process exits 128 + the signal (130, 143, 129, 141).
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

struct ls_csv {
    ls_outfile out; /* the private temporary and the final name */
    off_t whole;    /* bytes of the header and the whole rows on disk */
    long rows;      /* whole data lines written */
    off_t prev_whole; /* whole and rows before the last write (ls_csv_undo_last) */
    long prev_rows;
    int slot;       /* 1 + its signal slot, 0 when a signal does not handle it */
    int failed;     /* 1 a write failed, 2 abandoned: nothing more is written, nothing is moved */
    char failure[2 * LS_OUTFILE_PATH_MAX + 512]; /* its message, repeated by ls_csv_close */
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
    X(message, STR, r->message)                           \
    X(impl_source, STR, r->impl_source)                   \
    X(impl_source_git, STR, r->impl_source_git)           \
    X(impl_source_hash, STR, r->impl_source_hash)         \
    X(impl_layout, STR, r->impl_layout)                   \
    X(host_call_us, DBL, r->host_call_us)                 \
    X(resumed_from, STR, p->resumed_from)

#define HEADER_NAME(name, kind, expr) "," #name
static const char header_with_lead_comma[] = LS_CSV_COLUMNS(HEADER_NAME);

const char *ls_csv_header(void)
{
    return header_with_lead_comma + 1;
}

/* What a row read back must hold (docs/csv.md "Resume": a damaged line stops the run): the
 * header's cell count; INT/I64 cells a decimal integer, OPT ones that or empty, DBL ones a finite
 * real or empty (the writer puts NaN and inf as an empty cell); schema_version this build's. */
enum { CK_STR, CK_INT, CK_I64, CK_OPT, CK_DBL };
#define COLUMN_KIND(name, kind, expr) CK_##kind,
#define COLUMN_NAME(name, kind, expr) #name,
static const unsigned char column_kind[] = {LS_CSV_COLUMNS(COLUMN_KIND)};
static const char *const column_name[] = {LS_CSV_COLUMNS(COLUMN_NAME)};
#define N_COLUMNS ((int)(sizeof column_kind / sizeof column_kind[0]))

static int is_integer(const char *s)
{
    s += *s == '-';
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* A finite real in decimal notation: digits with an optional '.' and decimal exponent, nothing
 * else (strtod alone also takes hex "0x10", "inf", "nan", leading blanks and signs). 0 or -1. */
int ls_parse_decimal(const char *val, double *out)
{
    const char *p = val;
    int digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (!digits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p += p[1] == '+' || p[1] == '-' ? 2 : 1;
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return -1;
    errno = 0;
    double v = strtod(val, NULL);
    if (errno == ERANGE && v != 0) /* overflow; an underflow to 0 is taken as 0 */
        return -1;
    *out = v;
    return 0;
}

/* A cell of a real column: ls_parse_decimal's notation, negative too (as put_dbl writes it). */
static int is_real(const char *s)
{
    double v;
    return ls_parse_decimal(s + (*s == '-'), &v) == 0;
}

void ls_csv_cell_quote(const char *s, char *buf, size_t cap)
{
    size_t n = strlen(s);
    snprintf(buf, cap, "'%.*s%s'", 40, s, n > 40 ? "..." : "");
    for (char *q = buf; *q; q++) /* the message stays one line */
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = '?';
}

int ls_csv_check_cells(char *const *cells, int n, char *why, size_t cap)
{
    if (n != N_COLUMNS) {
        snprintf(why, cap, "%d cells, the header has %d", n, N_COLUMNS);
        return -1;
    }
    /* a row of another schema under this header is no row this build wrote (docs/csv.md
     * "Schema versions"): refused, never copied into a file of this schema */
    char v[64];
    snprintf(v, sizeof v, "%d", LS_CSV_SCHEMA_VERSION);
    if (is_integer(cells[0]) && strcmp(cells[0], v) != 0) {
        snprintf(why, cap, "schema_version %.20s, this build writes %s", cells[0], v);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *c = cells[i];
        int k = column_kind[i];
        int good = k == CK_STR || ((k == CK_INT || k == CK_I64) ? is_integer(c)
                                   : k == CK_OPT                ? !*c || is_integer(c)
                                                                : !*c || is_real(c));
        if (!good) {
            ls_csv_cell_quote(c, v, sizeof v);
            snprintf(why, cap, "%s %s is not %s", column_name[i], v,
                     k == CK_DBL ? "a number" : k == CK_OPT ? "an integer or empty" : "an integer");
            return -1;
        }
    }
    return 0;
}

/* A string cell's character as written: control characters become spaces (one row, one line). */
static char cell_char(char ch)
{
    unsigned char c = (unsigned char)ch;
    return c < 0x20 || c == 0x7f ? ' ' : ch;
}

/* String cell: always quoted, '"' doubled, control characters as spaces, at most cap bytes
 * read (a char array filled without a terminator still cannot overrun). */
static void put_str(FILE *f, const char *s, size_t cap)
{
    fputc('"', f);
    for (size_t i = 0; i < cap && s[i]; i++) {
        if (s[i] == '"')
            fputs("\"\"", f);
        else
            fputc(cell_char(s[i]), f);
    }
    fputc('"', f);
}

void ls_csv_cell_text(const char *s, size_t cap, char *buf, size_t bufcap)
{
    size_t k = 0;
    for (size_t i = 0; i < cap && s[i] && k + 1 < bufcap; i++)
        buf[k++] = cell_char(s[i]);
    if (bufcap)
        buf[k] = '\0';
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
 * One slot per file whose rows a signal must keep (the CSV and the --samples-out sidecar);
 * state: 0 disarmed, 1 move the rows into place, 2 a write failed (keep the temporary). */
#define SIG_SLOTS 2
static struct sig_file {
    char tmp[LS_OUTFILE_PATH_MAX + 16], path[LS_OUTFILE_PATH_MAX];
    int existed;
    volatile sig_atomic_t state;
    volatile sig_atomic_t rows; /* whole rows on disk (data lines for the sidecar) */
} sig_files[SIG_SLOTS];
static char sig_discard[LS_OUTFILE_PATH_MAX + 16]; /* a temporary to remove (GB's JSON) */
static const int sig_list[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define SIG_N ((int)(sizeof sig_list / sizeof sig_list[0]))
static struct sigaction sig_old[SIG_N];
static int sig_installed;

static void say(const char *s)
{
    ssize_t w = write(2, s, strlen(s));
    (void)w;
}

static void say_num(long v)
{
    char b[24];
    int k = (int)sizeof b;
    b[--k] = '\0';
    do
        b[--k] = (char)('0' + v % 10);
    while ((v /= 10) > 0 && k > 0);
    say(b + k);
}

static const char *sig_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGPIPE";
}

/* Rows already written are complete on disk (each row is one write() of a whole formatted row),
 * so the handler only moves each file into place (by the no-clobber rule of outfile.c), says so
 * and exits 128 + sig; a row not yet written was not finished and is dropped. */
static void on_signal(int sig)
{
    say("linstate: interrupted by ");
    say(sig_name(sig));
    for (int i = 0; i < SIG_SLOTS; i++) {
        struct sig_file *s = &sig_files[i];
        if (!s->state)
            continue;
        int moved = 0;
        if (s->state == 1 && s->existed)
            moved = rename(s->tmp, s->path) == 0;
        else if (s->state == 1 && link(s->tmp, s->path) == 0) {
            unlink(s->tmp);
            moved = 1;
        }
        s->state = 0;
        say(i ? "; " : ": ");
        say_num(s->rows);
        say(moved ? " rows kept in " : " rows left in ");
        say(moved ? s->path : s->tmp);
        if (!moved) {
            say(" (not moved to ");
            say(s->path);
            say(")");
        }
    }
    say("\n");
    if (sig_discard[0])
        unlink(sig_discard);
    _exit(128 + sig);
}

static int sig_slot_of(const ls_csv *c)
{
    for (int i = 0; i < SIG_SLOTS; i++)
        if (sig_files[i].state && strcmp(sig_files[i].tmp, c->out.tmp) == 0)
            return i;
    return -1;
}

void ls_csv_install_signal_handlers(ls_csv *c)
{
    if (!c)
        return;
    int at = sig_slot_of(c);
    for (int i = 0; i < SIG_SLOTS && at < 0; i++)
        if (!sig_files[i].state)
            at = i;
    if (at < 0)
        return;
    struct sig_file *s = &sig_files[at];
    snprintf(s->tmp, sizeof s->tmp, "%s", c->out.tmp);
    snprintf(s->path, sizeof s->path, "%s", c->out.path);
    s->existed = c->out.existed;
    s->rows = (sig_atomic_t)c->rows;
    s->state = c->failed ? 2 : 1;
    c->slot = at + 1;
    if (sig_installed)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < SIG_N; i++)
        sigaddset(&sa.sa_mask, sig_list[i]);
    for (int i = 0; i < SIG_N; i++)
        sigaction(sig_list[i], &sa, &sig_old[i]);
    sig_installed = 1;
}

/* Nesting depth of ls_csv_signals_hold and the mask to restore at depth 0. */
static int sig_hold_depth;
static sigset_t sig_hold_old;

void ls_csv_signals_hold(void)
{
    if (sig_hold_depth++ > 0)
        return;
    sigset_t block;
    sigemptyset(&block);
    for (int i = 0; i < SIG_N; i++)
        sigaddset(&block, sig_list[i]);
    sigprocmask(SIG_BLOCK, &block, &sig_hold_old);
}

void ls_csv_signals_release(void)
{
    if (sig_hold_depth <= 0 || --sig_hold_depth > 0)
        return;
    sigprocmask(SIG_SETMASK, &sig_hold_old, NULL); /* a signal that came meanwhile is taken here */
}

void ls_csv_signal_discard(const char *tmp)
{
    snprintf(sig_discard, sizeof sig_discard, "%s", tmp ? tmp : "");
}

/* c is finished: its slot is disarmed, and the old handlers return with the last slot. */
static void sig_release(ls_csv *c)
{
    if (!c->slot)
        return;
    sig_files[c->slot - 1].state = 0;
    c->slot = 0;
    for (int i = 0; i < SIG_SLOTS; i++)
        if (sig_files[i].state)
            return;
    if (sig_installed)
        for (int i = 0; i < SIG_N; i++)
            sigaction(sig_list[i], &sig_old[i], NULL);
    sig_installed = 0;
    sig_discard[0] = '\0';
}

/* ------------------------------------------------------------------ file life cycle */

/* A failed write (disk full, quota, I/O error) poisons the file: the torn tail is cut back to
 * the last whole row, no later row is written and ls_csv_close keeps the temporary instead of
 * moving it. */
static int write_failed(ls_csv *c, int err)
{
    if (!c->failed && c->slot && sig_files[c->slot - 1].state)
        sig_files[c->slot - 1].state = 2; /* a signal now leaves the rows in the temporary */
    c->failed = 1;
    if (ftruncate(c->out.fd, c->whole) != 0 || lseek(c->out.fd, c->whole, SEEK_SET) < 0)
        err = err ? err : errno;
    ls_fail("CSV: write to '%s' failed: %s; the %ld whole rows written before are kept there, not moved to '%s'",
            c->out.tmp, strerror(err ? err : EIO), c->rows, c->out.path);
    snprintf(c->failure, sizeof c->failure, "%s", ls_last_error());
    return -1;
}

/* Writes what the row stream m holds (closing it) with as few write() calls as the kernel
 * allows (one for any row that fits), then counts lines whole rows. 0, or -1 (write_failed). */
static int put_rows(ls_csv *c, FILE *m, char **mem, size_t *len, long lines)
{
    if (fclose(m) != 0 || !*mem) {
        free(*mem);
        return write_failed(c, ENOMEM);
    }
    size_t done = 0;
    int err = 0;
    while (done < *len) {
        ssize_t w = write(c->out.fd, *mem + done, *len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            err = w < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)w;
    }
    free(*mem);
    if (done < *len)
        return write_failed(c, err);
    c->prev_whole = c->whole;
    c->prev_rows = c->rows;
    c->whole += (off_t)*len;
    c->rows += lines;
    if (c->slot)
        sig_files[c->slot - 1].rows = (sig_atomic_t)c->rows;
    return 0;
}

/* The one file writer: a private temporary (outfile.c) with the given header line, moved on close
 * (main CSV and the --samples-out sidecar alike). */
static ls_csv *open_with_header(const char *path, const char *header)
{
    ls_csv *c = calloc(1, sizeof *c);
    if (!c)
        return ls_fail("CSV: out of host memory"), NULL;
    if (ls_outfile_open(&c->out, path) != 0) {
        lsh_fail_cause("CSV");
        free(c);
        return NULL;
    }
    char *mem = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&mem, &len);
    if (!m) {
        ls_fail("CSV: out of host memory");
        goto fail;
    }
    fprintf(m, "%s\n", header);
    if (put_rows(c, m, &mem, &len, 0) != 0) {
        ls_fail("CSV: cannot write '%s': %s", c->out.tmp, strerror(errno ? errno : EIO));
        goto fail;
    }
    return c;
fail:
    ls_outfile_discard(&c->out);
    free(c);
    return NULL;
}

int ls_csv_undo_last(ls_csv *c)
{
    if (!c || c->failed)
        return ls_fail("CSV: nothing to take back");
    if (ftruncate(c->out.fd, c->prev_whole) != 0 || lseek(c->out.fd, c->prev_whole, SEEK_SET) < 0)
        return ls_fail("CSV: cannot take the last row back out of '%s': %s", c->out.tmp, strerror(errno));
    c->whole = c->prev_whole;
    c->rows = c->prev_rows;
    if (c->slot)
        sig_files[c->slot - 1].rows = (sig_atomic_t)c->rows;
    return 0;
}

void ls_csv_abandon(ls_csv *c, const char *why)
{
    if (!c || c->failed)
        return;
    if (c->slot && sig_files[c->slot - 1].state)
        sig_files[c->slot - 1].state = 2; /* a signal now leaves the rows in the temporary */
    c->failed = 2;
    snprintf(c->failure, sizeof c->failure, "'%s' not moved to '%s' (%s); its %ld whole rows are kept there",
             c->out.tmp, c->out.path, why ? why : "another file failed", c->rows);
}

int ls_csv_failed(const ls_csv *c)
{
    return c ? c->failed : 0;
}

const char *ls_csv_tmp_path(const ls_csv *c)
{
    return c ? c->out.tmp : "";
}

ls_csv *ls_csv_open(const char *path)
{
    return open_with_header(path, ls_csv_header());
}

long ls_csv_rows(const ls_csv *c)
{
    return c ? c->rows : 0;
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

/* A stream that collects one write's worth of formatted text (put_rows writes it). */
static FILE *row_stream(ls_csv *c, char **mem, size_t *len)
{
    *mem = NULL;
    *len = 0;
    FILE *m = open_memstream(mem, len);
    if (!m)
        write_failed(c, ENOMEM);
    return m;
}

int ls_samples_write(ls_csv *c, const ls_row *r, const double *us, int n)
{
    if (!c || !r || !r->prov || (n > 0 && !us))
        return ls_fail("ls_samples_write: NULL %s", !c ? "file" : !r || !r->prov ? "row" : "samples");
    if (c->failed)
        return ls_fail("CSV: not written after an earlier write failure (samples kept in '%s')", c->out.tmp);
    char *mem;
    size_t len;
    FILE *f = row_stream(c, &mem, &len);
    if (!f)
        return -1;
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
    return put_rows(c, f, &mem, &len, n);
}

int ls_csv_write(ls_csv *c, const ls_row *r)
{
    if (!c || !r || !r->prov)
        return ls_fail("ls_csv_write: NULL %s", !c ? "file" : !r ? "row" : "row provenance");
    if (c->failed)
        return ls_fail("CSV: not written after an earlier write failure (rows kept in '%s')", c->out.tmp);
    const ls_provenance *p = r->prov;
    char *mem;
    size_t len;
    FILE *f = row_stream(c, &mem, &len);
    if (!f)
        return -1;
    int first = 1;
    LS_CSV_COLUMNS(ROW_CELL)
    fputc('\n', f);
    return put_rows(c, f, &mem, &len, 1);
}

int ls_csv_write_raw(ls_csv *c, const char *line, size_t len)
{
    if (!c || !line)
        return ls_fail("ls_csv_write_raw: NULL %s", !c ? "file" : "line");
    if (c->failed)
        return ls_fail("CSV: not written after an earlier write failure (rows kept in '%s')", c->out.tmp);
    char *mem;
    size_t n;
    FILE *f = row_stream(c, &mem, &n);
    if (!f)
        return -1;
    fwrite(line, 1, len, f);
    fputc('\n', f);
    return put_rows(c, f, &mem, &n, 1);
}

int ls_csv_close(ls_csv *c)
{
    if (!c)
        return 0;
    int rc = 0;
    sig_release(c);
    if (c->failed) {
        ls_outfile_keep(&c->out);
        rc = ls_fail("%s", c->failure); /* the first failure, which names the temporary */
    } else if (ls_outfile_commit(&c->out) != 0) {
        rc = lsh_fail_cause("CSV");
    }
    free(c);
    return rc;
}

void ls_csv_discard(ls_csv *c)
{
    if (!c)
        return;
    sig_release(c);
    ls_outfile_discard(&c->out);
    free(c);
}

/* ------------------------------------------------------------------ row helpers */

void ls_row_init(ls_row *r, const ls_provenance *prov)
{
    memset(r, 0, sizeof *r);
    r->prov = prov;
    r->gbps = r->copy_peak_gbps = r->pct_of_copy_peak = NAN;
    r->max_rel_err = NAN;
    r->noise_pct = r->copy_peak_drift_pct = r->host_call_us = NAN;
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
