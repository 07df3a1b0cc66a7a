/*
 * ls_harness.h — what every benchmark case needs besides its kernel: GPU timing with an explicit
 * cache regime, statistics, the versioned CSV writer, run provenance, NVTX ranges, hwloc CPU
 * binding, and the C API over Google Benchmark (the runner).
 *
 * The harness never knows mechanisms or kernels: a case hands it a launch callback and a byte
 * count; the harness times it and writes one row. bench/ owns cases; kernels/ owns kernels.
 */
#ifndef LS_HARNESS_H
#define LS_HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ statistics */

typedef struct ls_stats {
    int n;
    double median, p10, p90, mean, stddev, min, max;
    double noise_pct;        /* ls_median_noise_pct of the samples; NaN below LS_NOISE_MIN_N */
} ls_stats;

/* Sorts a copy; percentiles by linear interpolation. 0, or -1 when n < 1. */
int ls_stats_compute(const double *samples, int n, ls_stats *out);

/* Relative noise of the median of sorted v[0..n-1], in %: the half-width of the distribution-free
 * 95 % confidence interval of the median (order statistics of ranks floor((n - 1.96 sqrt n) / 2)
 * and ceil(1 + (n + 1.96 sqrt n) / 2), 1-based) over the median (docs/timing.md). NaN when
 * n < LS_NOISE_MIN_N (the interval needs rank >= 1) or the median is not positive. */
double ls_median_noise_pct(const double *sorted, int n);
#define LS_NOISE_MIN_N 6

/* ------------------------------------------------------------------ timing */

typedef enum ls_cache_regime {
    LS_CACHE_ROTATE = 0, /* consecutive launches touch different layers' buffers (default) */
    LS_CACHE_FLUSH = 1,  /* L2-sized memset before each sample */
    LS_CACHE_HOT = 2     /* same buffers every launch */
} ls_cache_regime;
const char *ls_cache_regime_name(ls_cache_regime r);            /* "rotate" | "flush" | "hot" */
int ls_cache_regime_parse(const char *s, ls_cache_regime *out); /* 0 or -1 */

/* Enqueue ONE call of the op under test on stream s, using rotation slot `rot` (0..n_rot-1:
 * e.g. layer index). Must not synchronise or allocate. Returns 0 or non-zero on error. */
typedef int (*ls_launch_fn)(void *ctx, int rot, ls_stream s);

/* Optional untimed restore before every sample (ls_timing_config.reset), given the launch
 * callback's ctx: e.g. a pool path that consumes slots puts them back. May synchronise and
 * allocate (it runs outside the timed region). Returns 0 or non-zero on error. */
typedef int (*ls_reset_fn)(void *ctx);

typedef struct ls_clocks ls_clocks; /* NVML clock guard (below) */

typedef struct ls_timing_config {
    const ls_runtime *be;
    ls_stream stream;
    ls_cache_regime regime;
    int graph;               /* 1: capture n_rot launches in a graph, time replays */
    int n_rot;               /* rotation count (layers rotated); 1 for flush/hot */
    int warmup;              /* warm-up launches (rounds of n_rot) before sampling */
    int min_samples, max_samples;
    double min_time_s;       /* keep sampling until this much measured time ... */
    double max_time_s;       /* ... but stop at this wall-clock budget */
    int profile;             /* fixed small iteration count inside cudaProfilerStart/Stop */
    void *flush_buf;         /* backend memory for LS_CACHE_FLUSH */
    size_t flush_bytes;
    int hold;                /* 1: queue each sample behind a stream hold (ls_timing_holds) */
    double noise_target_pct; /* > 0: once the minimums are met, stop as soon as the median's
                              * noise (ls_median_noise_pct) is <= this; 0: stop at the minimums */
    ls_reset_fn reset;       /* NULL, or called (with the launch ctx) before every warm-up round,
                              * the eager round before a graph capture, and every sample: before
                              * the flush, the hold and the start event, so never timed */
    ls_clocks *clocks;       /* NULL, or the clock guard read around every sample (not in
                              * profile mode): a sample it flags as throttled is dropped and
                              * counted there; it still counts toward max_samples (so a
                              * throttled GPU cannot keep the loop going), never toward
                              * min_samples or min_time_s */
} ls_timing_config;

/* Whether samples under cfg are held: cfg->hold set, the backend has a stream hold, and not in
 * profile mode. A held sample is queued whole behind a spin kernel (nvbench's blocking kernel)
 * and released at once, so the start event does not absorb the host's launch latency: the
 * launches run back to back as in a real decode step. A hold that times out (the stream's
 * launch queue filled before the release: LS_HOLD_TIMEOUT_MS) fails the sample with an error. */
int ls_timing_holds(const ls_timing_config *cfg);
#define LS_HOLD_TIMEOUT_MS 1000

/* Times the launch callback. Each sample is the time of n_rot back-to-back launches (or one graph
 * replay of them) divided by n_rot, in microseconds. Writes up to cap samples; *n_out = count. */
int ls_time_launches(const ls_timing_config *cfg, ls_launch_fn fn, void *ctx, double *samples_us,
                     int cap, int *n_out);
/* ls_time_launches pushes the NVTX "warmup" and "measure" phases itself (the caller pushes the
 * case range and the setup/verify phases). Sampling stops at max_samples or cap, or once both
 * min_samples and min_time_s (sum of measured time) are reached and (noise_target_pct > 0) the
 * median's noise is at most the target, or when the wall-clock budget max_time_s (<= 0: none)
 * is spent with at least one sample taken. Graph mode needs a backend
 * with graphs (host has none: error); with cfg->stream NULL it times on a stream it creates
 * (the default stream cannot be captured) and passes that stream to the callback, which must
 * launch on the stream it is given. Profile mode: warm-up, then be->profiler_start, exactly
 * LS_PROFILE_SAMPLES samples (capped by cap), be->profiler_stop. With cfg->reset, the reset
 * runs before every warm-up round and every sample, outside the timed region (its failure
 * stops timing with an error); the same stopping rules apply. */

/* Why sampling stopped (CSV column stop_reason). */
typedef enum ls_stop_reason {
    LS_STOP_NONE = 0,     /* not timed: "" */
    LS_STOP_NOISE,        /* minimums met and the median's noise reached the target */
    LS_STOP_MIN_TIME,     /* minimums met, no noise target (noise_target_pct 0) */
    LS_STOP_TIME_LIMIT,   /* the wall-clock budget max_time_s ran out first */
    LS_STOP_MAX_SAMPLES,  /* max_samples (or the buffer cap) reached first */
    LS_STOP_PROFILE       /* profile mode: a fixed count */
} ls_stop_reason;
const char *ls_stop_reason_name(ls_stop_reason r); /* "", "noise", "min_time", "time_limit", ... */
/* ls_time_launches that also says why it stopped (why may be NULL). */
int ls_time_launches_why(const ls_timing_config *cfg, ls_launch_fn fn, void *ctx, double *samples_us,
                         int cap, int *n_out, ls_stop_reason *why);

/* Samples taken in profile mode (cfg->profile): a fixed, small count, so the number of NVTX ranges
 * and kernels inside the profiler window is predictable. Warm-up still runs before it. */
#define LS_PROFILE_SAMPLES 3

/* Per-sample timer, for runners that own the loop (the Google Benchmark iteration loop).
 * ls_timer_create checks cfg, creates the events, captures the graph (cfg->graph) and runs the
 * warm-up inside the NVTX "warmup" phase (no range when cfg->warmup is 0, so a caller doing its
 * own warm-up pushes the phase itself); NULL on error (ls_last_error). ls_timer_sample takes
 * ONE sample exactly as ls_time_launches does (cfg->reset first, then the L2 flush in the
 * flush regime) and returns microseconds per launch. The caller pushes the "measure" phase around its own loop and, for a
 * profile run, calls be->profiler_start/stop itself. ls_time_launches is built on these three. */
typedef struct ls_timer ls_timer;
ls_timer *ls_timer_create(const ls_timing_config *cfg, ls_launch_fn fn, void *ctx);
int ls_timer_sample(ls_timer *t, double *us);
void ls_timer_destroy(ls_timer *t);

/* Device-to-device copy bandwidth (read + write bytes / time), GB/s, over >= bytes. */
int ls_measure_copy_peak(const ls_runtime *be, size_t bytes, double *gbps);
/* The same after settling: copies in rounds of 3 until a round's median reaches settle_gbps (e.g.
 * 99 % of the run's first ceiling) or settle_max_s is spent, then the timed copies. A GPU that
 * has just freed tens of GB copies every buffer ~11 % slower for tens of milliseconds
 * (docs/timing.md, "Copy-peak ceiling"); settle_gbps <= 0: no settling (ls_measure_copy_peak). */
int ls_measure_copy_peak_settled(const ls_runtime *be, size_t bytes, double settle_gbps,
                                 double settle_max_s, double *gbps);
/* Median of several timed copies after a warm-up one. The host backend caps the buffer at
 * LS_COPY_PEAK_HOST_BYTES and says so on stderr; on a device that cannot hold 2 x bytes the
 * size is halved (with a note) down to the same floor. */
#define LS_COPY_PEAK_HOST_BYTES ((size_t)64 << 20)
/* A ceiling against the run's first, %: 100 (gbps / first - 1); NaN unless both are positive. */
double ls_copy_peak_drift_pct(double gbps, double first_gbps);

/* ------------------------------------------------------------------ clocks (NVML) */

/*
 * The clock guard (clocks.c, docs/timing.md "Clocks"): NVML loaded at run time with dlopen, only
 * queried, never used to set anything. Around each sample the timing loop calls
 * ls_clocks_before (throttle reasons) and ls_clocks_after (reasons and the SM clock). A sample
 * is discarded when a reason of LS_CLOCKS_DISCARD_REASONS is set before or after it, or when the
 * SM clock after it is below LS_CLOCK_FLOOR x the reference clock (the applications SM clock the
 * board is set to, else its default, else the maximum SM clock; no floor check when none is
 * known, nor while LS_CLOCKS_USER_SETTING is set: a clock a user holds down is what was asked
 * for). Idle, applications clock setting, sync boost and display clock reasons never discard.
 */
#define LS_NVML_LIB "libnvidia-ml.so.1"
/* SwPowerCap 0x4 | HwSlowdown 0x8 | SwThermalSlowdown 0x20 | HwThermalSlowdown 0x40 |
 * HwPowerBrakeSlowdown 0x80 (NVML's nvmlClocksEventReason / nvmlClocksThrottleReason bits). */
#define LS_CLOCKS_DISCARD_REASONS 0xecull
#define LS_CLOCKS_USER_SETTING 0x2ull /* ApplicationsClocksSetting (also user-locked clocks) */
#define LS_CLOCK_FLOOR 0.90

/* Opens NVML from lib (NULL: LS_NVML_LIB) for the device at pci_bus_id. NULL with the reason in
 * ls_last_error() when the library, a needed symbol or the device is missing. */
ls_clocks *ls_clocks_open(const char *lib, const char *pci_bus_id);
void ls_clocks_close(ls_clocks *c);
int ls_clocks_reference_mhz(const ls_clocks *c);   /* 0 when unknown */
/* Per case: begin clears the counts; before/after bracket one sample (after returns 1 to keep
 * it, 0 when it is discarded); end gives the SM clock min and median over the kept samples
 * (-1 when none was read) and the discard count. All are no-ops (end: -1s) on NULL. */
void ls_clocks_case_begin(ls_clocks *c);
void ls_clocks_before(ls_clocks *c);
int ls_clocks_after(ls_clocks *c);
void ls_clocks_case_end(ls_clocks *c, int *min_mhz, int *median_mhz, int *discarded);

/* ------------------------------------------------------------------ provenance */

typedef struct ls_provenance {
    char suite_version[32];
    char git_commit[48];
    int git_dirty;
    char timestamp[32];      /* ISO 8601 UTC */
    char host[64];
    char backend[16];
    int device_index;
    ls_device_info dev;
    char cpuset[128];
    int numa_node;           /* -1 if unknown */
    char gpu_uuid[48];       /* "GPU-..." ; "" for host or unknown */
    int rank, world_size;    /* fleet rank and size; -1 (empty) when not launched as a fleet */
    char job_id[32];         /* launcher's job id ("" when none) */
    char node[64];           /* launcher's node name ("" when none) */
    char resumed_from[256];  /* --resume FILE of the run that measured the row ("" when none) */
} ls_provenance;

int ls_provenance_fill(ls_provenance *p, const ls_runtime *be, int device_index);
/* git_commit/git_dirty: env LS_GIT_COMMIT / LS_GIT_DIRTY when set (for trees copied without
 * .git), else `git rev-parse HEAD` / `git status --porcelain` run now in the source tree, else
 * "unknown" and git_dirty = -1 (written as an empty CSV cell); -1 too for a LS_GIT_COMMIT that
 * is not the source tree's HEAD when LS_GIT_DIRTY is not set. cpuset "" and numa_node -1 until
 * ls_bind_to_device fills them. Fails only when be->device_info fails. */

/* ------------------------------------------------------------- CSV (schema v2, docs/csv.md) */

#define LS_CSV_SCHEMA_VERSION 2

/* One row = one case (and repetition). Column names/units: docs/csv.md. */
typedef struct ls_row {
    const ls_provenance *prov;
    char case_key[192];      /* stable key, never renamed: gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32 */
    char mechanism[16], op[32], variant[32], model[48];
    int tp, batch, draft_tokens, layers;
    char conv_dtype[8], state_dtype[8];
    int pool_slots;
    char cache_regime[8];
    int graph;
    int repetition;
    int rotated;             /* buffers rotated (n_rot) */
    int held;                /* 1: samples were queued behind a stream hold (ls_timing_holds) */
    ls_stats t;              /* time per call, us */
    int64_t bytes;           /* minimum bytes per call (docs/bytes.md) */
    double gbps, copy_peak_gbps, pct_of_copy_peak;
    double max_rel_err;      /* NaN when not verified */
    char status[64];         /* ok | skipped:<reason> | fail_numerics | error:<reason> */
    char impl[32];           /* the impl that ran the op (ls_impl.name) */
    char impl_version[64];   /* its version text (ls_impl.version) */
    char tuning[256];        /* its effective tuning, every knob: "conv.variant=auto,pdl=on" */
    char kernel[192];        /* what the impl says it launched (ls_impl.explain), "" if unknown */
    char state_layout[4];    /* gdn/kda: "kv" ([K, V] per head) or "vk"; "" for other ops */
    double noise_pct;        /* relative noise of the median reached, %; NaN when not measured */
    char stop_reason[16];    /* why sampling stopped ("" when not timed) */
    int sm_clock_min_mhz;    /* SM clock over the kept samples; -1 (empty) when not sampled */
    int sm_clock_median_mhz;
    int samples_discarded;   /* samples dropped as throttled; -1 (empty) when clocks not sampled */
    double copy_peak_drift_pct; /* this row's ceiling against the run's first, %; NaN if unknown */
    char message[160];       /* what went wrong for an error:crash|timeout|exit row ("" otherwise) */
    /* Python impls (docs/plugin-abi.md "Python impls"); "" / NaN for C impls: */
    char impl_source[512];   /* the source it was loaded from: a pinned version or a folder */
    char impl_source_git[64]; /* `git describe --always --dirty` of that folder ("" if none) */
    char impl_source_hash[24]; /* sha256 (16 hex) of the contents of the files it loaded */
    char impl_layout[256];   /* the impl's note of the tensor layout its op(s) used */
    double host_call_us;     /* median wall time of its Python op calls while timing the row */
} ls_row;

/* ------------------------------------------------------------------ result files */

/* A result file written safely (outfile.c, docs/csv.md "Files"): ls_outfile_open checks PATH (not a
 * directory, no other live run writing it, its folder writable) and creates a private, locked
 * temporary PATH.tmp.XXXXXX (fd, tmp); ls_outfile_commit moves it to PATH without clobbering a file
 * another run made meanwhile (on failure the temporary is kept and the message names it);
 * ls_outfile_keep leaves the temporary in place (a failed write); ls_outfile_discard removes it
 * (nothing was run). Each returns 0 or -1 with ls_last_error set. */
#define LS_OUTFILE_PATH_MAX 4096
typedef struct ls_outfile {
    char path[LS_OUTFILE_PATH_MAX];
    char tmp[LS_OUTFILE_PATH_MAX + 16];
    int fd;                  /* on tmp, holding its flock; -1 when closed */
    int existed;             /* PATH existed at open: it may be replaced only if unchanged */
    int done;                /* committed, kept or discarded */
    unsigned long long dev, ino;
    long long size, mtime_ns;
} ls_outfile;
int ls_outfile_open(ls_outfile *o, const char *path);
/* 1 when paths a and b name one file: the same inode when both exist, else the same name once
 * their existing folders are resolved (realpath). */
int ls_outfile_same_path(const char *a, const char *b);
int ls_outfile_commit(ls_outfile *o);
void ls_outfile_keep(ls_outfile *o);
void ls_outfile_discard(ls_outfile *o);

typedef struct ls_csv ls_csv;
/* Opens a private temporary for PATH (ls_outfile_open: errors before anything is measured) and
 * writes the header. Rows are flushed as written; ls_csv_close moves the file to PATH
 * (ls_outfile_commit) unless a write failed: then the rows stay in the temporary, named in the
 * error, and ls_csv_close returns -1. ls_csv_tmp_path names the temporary; ls_csv_rows counts
 * the whole rows on disk. ls_csv_install_signal_handlers (for the CSV and the sidecar, up to two
 * files) makes SIGINT/SIGTERM/SIGHUP/SIGPIPE move the files into place, say how many rows each
 * kept, remove the temporary named by ls_csv_signal_discard (if any) and exit 128 + signal. */
ls_csv *ls_csv_open(const char *path);
int ls_csv_write(ls_csv *c, const ls_row *r);
/* Writes one line of this header's columns as it is (len bytes, no newline; a row kept from an
 * earlier file by --resume), with ls_csv_write's flush and failure rules. */
int ls_csv_write_raw(ls_csv *c, const char *line, size_t len);
int ls_csv_close(ls_csv *c);
void ls_csv_install_signal_handlers(ls_csv *c);
void ls_csv_signal_discard(const char *tmp);
/* Holds SIGINT/SIGTERM/SIGHUP/SIGPIPE while writes that belong together are made (a row and its
 * samples in the sidecar), so that a signal keeps both or neither; release (nestable) takes a
 * signal that came meanwhile, after the last write. */
void ls_csv_signals_hold(void);
void ls_csv_signals_release(void);
long ls_csv_rows(const ls_csv *c);
/* Files written together (the CSV and its sidecar) hold the same rows or neither moves:
 * ls_csv_undo_last cuts c back to before its last write (a row whose samples could not be
 * saved); ls_csv_abandon stops c because the other file failed (no more writes; ls_csv_close
 * keeps the temporary and fails with a line naming it, its rows and why). ls_csv_failed: 0, 1 its
 * own write failed (the message was given then), 2 abandoned. */
int ls_csv_undo_last(ls_csv *c);
void ls_csv_abandon(ls_csv *c, const char *why);
int ls_csv_failed(const ls_csv *c);
const char *ls_csv_tmp_path(const ls_csv *c);
void ls_csv_discard(ls_csv *c); /* closes and removes the temporary: nothing was measured */
const char *ls_csv_header(void);  /* the exact header line, no newline */
/* 0 when the n decoded cells of a row read back are what the writer writes: the header's count,
 * numbers in the number columns, this schema_version; else -1 and why (one line, no line number;
 * docs/csv.md "Resume"). */
int ls_csv_check_cells(char *const *cells, int n, char *why, size_t cap);
/* A finite real in decimal notation only (digits, optional '.', decimal exponent: no hex, inf,
 * nan, blanks or sign); 0 or -1. The bench's real flag values and the CSV's real cells. */
int ls_parse_decimal(const char *val, double *out);
/* 'cell' for a message: at most 40 bytes, control characters as '?'. */
void ls_csv_cell_quote(const char *s, char *buf, size_t cap);
/* The text a string cell holds when read back (put_str's, unquoted): at most cap bytes of s (the
 * row field's size), control characters as spaces; into buf (bufcap bytes, NUL-terminated).
 * --resume compares the cells it reads with this, never with the raw strings. */
void ls_csv_cell_text(const char *s, size_t cap, char *buf, size_t bufcap);

/* The raw-samples sidecar (--samples-out; docs/csv.md): same file rules as the main CSV
 * (private temporary, flushed, moved by ls_csv_close), one line per sample of a row: the row's join
 * key (case, variant, impl, tuning, state_layout, cache_regime, graph, device_index), its
 * repetition, the sample index and the sample in microseconds per call. */
ls_csv *ls_samples_open(const char *path);
int ls_samples_write(ls_csv *c, const ls_row *r, const double *us, int n);
const char *ls_samples_header(void);

/* Zeroes r, points it at prov, sets max_rel_err and the throughput fields to NaN, status "ok". */
void ls_row_init(ls_row *r, const ls_provenance *prov);
/* The one place throughput is derived: r->t = *t, r->bytes = bytes, r->gbps = bytes / median
 * time, r->copy_peak_gbps = copy_peak_gbps, r->pct_of_copy_peak = 100 * gbps / copy peak
 * (NaN when the median or the copy peak is not positive). */
void ls_row_set_result(ls_row *r, const ls_stats *t, int64_t bytes, double copy_peak_gbps);

/* ------------------------------------------------------------------ NVTX (macro layer) */

/* Phases nested inside a case range. */
typedef enum ls_phase { LS_PHASE_SETUP, LS_PHASE_VERIFY, LS_PHASE_WARMUP, LS_PHASE_MEASURE } ls_phase;

/* All compile to no-ops when built without NVTX (LINSTATE_NVTX=OFF or no headers). Domain
 * "linstate"; names are registered strings; category per mechanism; payload = batch*1000+draft
 * ... (exact encoding documented in nvtx.c). The measure phase's registered name "measure" is
 * the nsys capture trigger: --capture-range=nvtx --nvtx-capture=measure@linstate */
void ls_nvtx_case_push(const char *case_key, const char *mechanism, int batch, int draft_tokens);
void ls_nvtx_case_pop(void);
void ls_nvtx_phase_push(ls_phase ph);
void ls_nvtx_phase_pop(void);

const char *ls_phase_name(ls_phase ph);           /* "setup" | "verify" | "warmup" | "measure" */
/* A free-standing range in the "linstate" domain whose name is registered on first use (e.g.
 * "graph_replay", "profile"); it carries the enclosing case's category and payload. */
void ls_nvtx_range_push(const char *name);
void ls_nvtx_range_pop(void);

/* ------------------------------------------------------------------ host allocator */

/* Fix glibc malloc's mmap (32 MiB) and trim (64 MiB) thresholds (host_alloc.c) so that a timed
 * call's host temporaries reuse heap memory whatever earlier cases allocated. Call once, first
 * thing in the process. 1 when set; 0 without glibc or when the malloc in use refuses (a
 * sanitizer's). */
int ls_steady_host_allocator(void);

/* ------------------------------------------------------------------ hwloc binding */

/* Bind this thread and its host allocations to the CPUs local to device `index` of backend be
 * (host backend: the core it runs on), or with one_core to the first core of them (the thread
 * cannot move between cores). Fills cpuset/numa in prov when non-NULL. 0 ok; -1 error (message). */
int ls_bind_to_device(const ls_runtime *be, int index, int one_core, ls_provenance *prov);
/* Failures are warnings, never fatal: -1 means the thread could not be bound (the caller prints
 * ls_last_error() as a warning and goes on); a failed memory binding only warns on stderr. Either
 * way prov->cpuset / numa_node describe where the thread may actually run afterwards. */

/* ------------------------------------------------------------------ Google Benchmark C API */

typedef struct ls_gb_state ls_gb_state;
typedef void (*ls_gb_fn)(ls_gb_state *st, void *ctx);

void ls_gb_initialize(int *argc, char **argv);    /* consumes --benchmark_* flags */
int ls_gb_report_unrecognized(int argc, char **argv);
void ls_gb_register(const char *name, ls_gb_fn fn, void *ctx, int repetitions);
int ls_gb_run(void);                              /* RunSpecifiedBenchmarks; returns count run */
void ls_gb_shutdown(void);
int ls_gb_keep_running(ls_gb_state *st);
void ls_gb_set_iteration_time(ls_gb_state *st, double seconds);
void ls_gb_set_counter(ls_gb_state *st, const char *name, double value);
void ls_gb_set_bytes_processed(ls_gb_state *st, int64_t bytes);
void ls_gb_set_label(ls_gb_state *st, const char *label);
void ls_gb_skip_with_error(ls_gb_state *st, const char *msg);
void ls_gb_add_context(const char *key, const char *value);
int64_t ls_gb_iterations(const ls_gb_state *st);

/* Registration with run options; fields left 0 keep the library default / command-line flag. */
typedef struct ls_gb_options {
    int repetitions;      /* > 0: Benchmark::Repetitions */
    int64_t iterations;   /* > 0: fixed iteration count (e.g. LS_PROFILE_SAMPLES in profile mode) */
    double min_time_s;    /* > 0: Benchmark::MinTime, seconds of manual time */
} ls_gb_options;
void ls_gb_register_opts(const char *name, ls_gb_fn fn, void *ctx, const ls_gb_options *opt);
void ls_gb_set_items_processed(ls_gb_state *st, int64_t items);
int ls_gb_error_occurred(const ls_gb_state *st);  /* 1 after ls_gb_skip_with_error */

#ifdef __cplusplus
}
#endif
#endif /* LS_HARNESS_H */
