/*
 * ls_kernels.h — the op API of linstate: dtypes, one params struct per kernel family, and the
 * backend op table through which pool and bench code reach memory, timing and every kernel.
 *
 * Two backends implement the table: "host" (kernels/ref, float64-accumulating oracle, runs
 * anywhere) and "cuda" (kernels/cuda, built when nvcc is found). Pool and bench code never call
 * a kernel directly; they call ls_backend_get(name)->op(...).
 *
 * Conventions shared by every op (SPEC §2):
 *  - all pointers in a params struct point into the backend's memory (device memory for cuda);
 *  - strides are in ELEMENTS unless the name says _bytes;
 *  - slot index arrays are int32, one entry per request row; -1 marks a padding row (SPEC §2.7);
 *  - activations are bf16 (stored as uint16_t), state is fp32 or bf16, math is fp32 on the GPU
 *    and float64 in the host reference;
 *  - T (tokens) = 1 is decode; T > 1 is target verify: T intermediate states/windows are written
 *    to the speculative buffer `inter`, and the final state is written back only when
 *    disable_state_update == 0;
 *  - speculative buffers are indexed by pool slot (SPEC §1.3, AFTER layout): inter[slot][t].
 *  - every op returns 0 on success, non-zero on failure with ls_last_error() describing it.
 */
#ifndef LS_KERNELS_H
#define LS_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- dtypes */

typedef enum ls_dtype { LS_F32 = 0, LS_BF16 = 1 } ls_dtype;

static inline size_t ls_dtype_size(ls_dtype t) { return t == LS_F32 ? 4u : 2u; }
static inline const char *ls_dtype_name(ls_dtype t) { return t == LS_F32 ? "fp32" : "bf16"; }

/* bf16 <-> fp32 on the host; round to nearest even, NaN stays NaN. */
static inline float ls_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t ls_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) /* NaN: keep it quiet NaN */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ---------------------------------------------------------------- errors */

/* Last error of this thread ("file:line: call: reason"); "" when none. */
const char *ls_last_error(void);
/* Sets the error message (printf-style) and returns -1, so `return ls_fail(...)` reads well. */
int ls_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void ls_clear_error(void);

/* ------------------------------------------------------- causal conv1d update (SPEC §2.1) */

/*
 * Depthwise causal convolution over one conv state tensor of one layer, per request row r with
 * slot s = slot_idx[r]:  u = [state[s, c, 0..W-2], x[r, c, 0..T-1]] (oldest first),
 *   y[r, t, c] = act(bias[c] + sum_j w[c, j] * u[t + j])
 *   state[s, c, :] <- u[T .. T+W-2]            (unless disable_state_update)
 *   inter[s, t, c, :] <- u[t+1 .. t+W-1]       (if inter != NULL; window after token t)
 * Padding row (slot -1): nothing is read or written for that row — y keeps its old content.
 * The state view is [slots, C, W-1] with explicit strides, so both pool orientations work:
 *   channel-major (Mamba2/GDN) state_stride_c = W-1, state_stride_w = 1;
 *   window-major  (KDA)        state_stride_c = 1,   state_stride_w = C.
 * The intermediate window view has the same orientation freedom.
 */
typedef struct ls_conv_params {
    int32_t batch;                /* B request rows, >= 1 */
    int32_t tokens;               /* T >= 1 */
    int32_t channels;             /* C */
    int32_t width;                /* W in 2..4; the state keeps W-1 columns */
    int32_t silu;                 /* 1: SiLU activation, 0: identity */
    int32_t disable_state_update; /* 1: leave state untouched (verify on the real pool) */
    ls_dtype weight_dtype;        /* weight and bias: LS_BF16 or LS_F32 (Kimi) */
    ls_dtype state_dtype;         /* conv state and windows: LS_BF16 (LS_F32 allowed) */
    const uint16_t *x;            /* bf16, element (r, t, c) at r*x_stride_b + t*x_stride_t + c*x_stride_c */
    int64_t x_stride_b, x_stride_t, x_stride_c;
    uint16_t *y;                  /* bf16 output, same indexing with y_* strides */
    int64_t y_stride_b, y_stride_t, y_stride_c;
    const void *weight;           /* [C, W] contiguous */
    const void *bias;             /* [C] or NULL */
    void *state;                  /* one layer: element (s, c, w) at s*slot + c*c + w*w strides */
    int64_t state_stride_slot, state_stride_c, state_stride_w;
    const int32_t *slot_idx;      /* [B] */
    void *inter;                  /* optional: element (s, t, c, w) */
    int64_t inter_stride_slot, inter_stride_t, inter_stride_c, inter_stride_w;
    int32_t slots;                /* optional: slots of the state view (0 = not given). When
                                   * given, every index must be < slots, and a backend may
                                   * prefetch or read the state at the index it sees before the
                                   * previous kernel of the stream has finished (a read is
                                   * re-checked against the index afterwards) */
} ls_conv_params;

/* ---------------------------------------- gated delta rule: GDN (§2.2, §2.3) and KDA (§2.5) */

/*
 * One layer of the delta-rule recurrence over T tokens per request row r, slot s = slot_idx[r],
 * value head hv, key head h = hv / (HV / H). State S in R^{K x V} (V innermost in memory).
 *   S <- state[s, hv] if s >= 0 else 0
 *   for t in 0..T-1:
 *     GDN: g = -exp(A_log[hv]) * softplus(a[r,t,hv] + dt_bias[hv])           (scalar)
 *          S <- exp(g) * S
 *     KDA: g_k = -exp(A_log[hv]) * softplus(a[r,t,hv,k] + dt_bias[hv*K + k])  (per key row k)
 *          S[k, :] <- exp(g_k) * S[k, :]
 *     beta = sigmoid(b[r,t,hv]);  softplus(x) = log1p(exp(x)) if x <= 20 else x
 *     qn = q[r,t,h] / sqrt(sum q^2 + 1e-6) * scale;  kn = k[r,t,h] / sqrt(sum k^2 + 1e-6)
 *     u = beta * (v[r,t,hv] - S^T kn);  S <- S + kn u^T;  o[r,t,hv] = S^T qn
 *     if inter && s >= 0: inter[s, t, hv] <- S
 *   if !disable_state_update && s >= 0: state[s, hv] <- S
 * Padding rows (s < 0) start from zero, store no state, but their output IS written.
 * Layouts (contiguous, bf16 unless noted): q,k [B,T,H,K]; v,o [B,T,HV,V]; b [B,T,HV];
 *   GDN a [B,T,HV], dt_bias bf16 [HV];  KDA a [B,T,HV,K] (raw gate), dt_bias fp32 [HV*K];
 *   A_log fp32 [HV]; state [slots, HV, K, V]; inter [slots, T, HV, K, V] (slot stride given).
 */
typedef struct ls_delta_params {
    int32_t batch, tokens;
    int32_t heads_qk;             /* H */
    int32_t heads_v;              /* HV, a multiple of H */
    int32_t dk, dv;               /* K, V */
    int32_t disable_state_update;
    float scale;                  /* usually 1/sqrt(K) */
    ls_dtype state_dtype;         /* LS_F32 or LS_BF16 */
    const uint16_t *q, *k, *v, *a, *b;
    const float *A_log;
    const void *dt_bias;
    uint16_t *o;
    void *state;
    int64_t state_stride_slot;    /* elements between slots (>= HV*K*V) */
    const int32_t *slot_idx;
    void *inter;                  /* optional */
    int64_t inter_stride_slot;    /* elements between slots; step stride is HV*K*V */
    int32_t slots;                /* optional: slots of the state view (0 = not given); the
                                   * contract of ls_conv_params.slots */
} ls_delta_params;

/* ----------------------------------------- Mamba2 selective state update (SPEC §2.6) */

/*
 * Tied path: one dt and one decay per head. Per row r, slot s, head h, group g = h / (nh/ng):
 *   S <- state[s, h] if s >= 0 else 0            (S in R^{hd x ds}, ds innermost)
 *   for t: d = softplus(dt[r,t,h] + dt_bias[h]); a = exp(A[h] * d)
 *          S <- a*S + d * x[r,t,h] (outer) B[r,t,g]
 *          y[r,t,h,p] = sum_n S[p,n] C[r,t,g,n] + D[h] x[r,t,h,p];  if z: y *= z*sigmoid(z)
 *          if inter && s >= 0: inter[s, t, h] <- S
 *   if !disable_state_update && s >= 0: state[s, h] <- S
 * Padding rows: state masked (zero in, no store), output written.
 * Layouts (bf16 unless noted): x,z,y [B,T,nh,hd]; dt [B,T,nh]; Bm,Cm [B,T,ng,ds];
 *   A fp32 [nh]; dt_bias, D bf16 [nh]; state [slots, nh, hd, ds]; inter [slots, T, nh, hd, ds].
 */
typedef struct ls_ssu_params {
    int32_t batch, tokens;
    int32_t nheads, head_dim, dstate, ngroups;
    int32_t disable_state_update;
    ls_dtype state_dtype;
    const uint16_t *x, *dt, *Bm, *Cm;
    const uint16_t *z;            /* optional gate, NULL = none */
    const float *A;
    const uint16_t *dt_bias, *D;
    uint16_t *y;
    void *state;
    int64_t state_stride_slot;
    const int32_t *slot_idx;
    void *inter;
    int64_t inter_stride_slot;
    int32_t slots;                /* optional: slots of the state view (0 = not given); the
                                   * contract of ls_conv_params.slots */
} ls_ssu_params;

/* ----------------------------------------------- state ops over a whole pool (SPEC §1.5, §2.4) */

#define LS_MAX_BUFFERS 8

/*
 * One pool buffer: main is [layers, slots, item] bytes (layer-major, slot-minor);
 * spec (optional) is [layers, slots, spec_tokens, item] bytes.
 */
typedef struct ls_buffer_view {
    void *main;
    void *spec;
    int64_t item_bytes;           /* bytes of one slot of one layer (one step for spec) */
} ls_buffer_view;

/*
 * The three state ops act on every buffer and every layer in ONE launch:
 *   copy:   main[l][dst[i]] <- main[l][src[i]]           (dst slots distinct; src/dst disjoint —
 *                                                         the pool stages overlapping lists)
 *   accept: main[l][dst[i]] <- spec[l][dst[i]][step[i]]  (step < 0: row skipped; SPEC §2.4)
 *   zero:   main[l][dst[i]] <- 0
 * Index arrays live in backend memory. Buffers without spec are skipped by accept.
 */
typedef struct ls_state_params {
    int32_t n_buffers;
    int32_t layers;
    int32_t slots;                /* S+1, padding slot included */
    int32_t spec_tokens;          /* T of the spec buffers, 0 if none */
    ls_buffer_view buf[LS_MAX_BUFFERS];
    int32_t count;                /* rows in src/dst/step */
    const int32_t *src;           /* copy only */
    const int32_t *dst;
    const int32_t *step;          /* accept only */
} ls_state_params;

/* ---------------------------------------------------------------- backend op table */

#define LS_BACKEND_ABI 2

typedef void *ls_stream;          /* NULL = the backend's default stream */
typedef struct ls_event ls_event; /* opaque timestamp */
typedef struct ls_graph ls_graph; /* opaque captured launch sequence */
typedef struct ls_hold ls_hold;   /* opaque stream hold (see hold_create) */

typedef struct ls_device_info {
    char name[128];
    int index;
    int sm_count;
    int sm_clock_mhz;             /* current/default SM clock; 0 if unknown */
    int mem_clock_mhz;
    int driver_version;           /* e.g. 13000; 0 for host */
    int runtime_version;
    int64_t l2_bytes;
    int64_t total_bytes, free_bytes;
    char pci_bus_id[32];          /* "" for host */
} ls_device_info;

typedef struct ls_backend {
    int abi_version;              /* LS_BACKEND_ABI */
    const char *name;             /* "host" or "cuda" */

    /* device selection and description */
    int (*device_count)(void);
    int (*set_device)(int index);
    int (*device_info)(int index, ls_device_info *out);

    /* memory: alloc returns NULL (and sets the error) when out of memory */
    void *(*mem_alloc)(size_t bytes);
    void (*mem_free)(void *p);
    int (*mem_set)(void *dst, int byte, size_t bytes, ls_stream s);
    int (*copy_h2d)(void *dst, const void *src, size_t bytes);
    int (*copy_d2h)(void *dst, const void *src, size_t bytes);
    int (*copy_d2d)(void *dst, const void *src, size_t bytes, ls_stream s);

    /* streams, events, graphs (host: events are wall-clock stamps; graphs unsupported -> NULL fns) */
    int (*stream_create)(ls_stream *out);
    int (*stream_destroy)(ls_stream s);
    int (*sync)(ls_stream s);
    int (*event_create)(ls_event **out);
    int (*event_destroy)(ls_event *e);
    int (*event_record)(ls_event *e, ls_stream s);
    int (*event_elapsed_us)(ls_event *start, ls_event *stop, double *us);
    int (*graph_begin)(ls_stream s);                 /* start capture on s */
    int (*graph_end)(ls_stream s, ls_graph **out);   /* end capture, instantiate */
    int (*graph_launch)(ls_graph *g, ls_stream s);
    int (*graph_destroy)(ls_graph *g);
    int (*profiler_start)(void);                     /* cudaProfilerStart; host: no-op */
    int (*profiler_stop)(void);

    /* Stream hold (nvbench's "blocking kernel"; host: NULL fns). hold_enqueue queues a kernel
     * that spins until hold_release, so work queued behind it starts back to back when released
     * and a start event queued right after it does not absorb the launch latency of that work.
     * The spin gives up after timeout_ms (a stream whose launch queue fills while held would
     * otherwise block the launching thread for good); hold_result, called after the stream has
     * synced, returns 0 when the last hold was released in time, 1 when it timed out. One hold
     * in flight per ls_hold (sync before enqueuing it again). Never hold a stream under a tool
     * that serialises launches (ncu): every hold would time out. */
    int (*hold_create)(ls_hold **out, int timeout_ms);
    int (*hold_destroy)(ls_hold *h);
    int (*hold_enqueue)(ls_hold *h, ls_stream s);
    int (*hold_release)(ls_hold *h);
    int (*hold_result)(const ls_hold *h);

    /* kernels */
    int (*conv_update)(const ls_conv_params *p, ls_stream s);
    int (*gdn)(const ls_delta_params *p, ls_stream s);
    int (*kda)(const ls_delta_params *p, ls_stream s);
    int (*ssu)(const ls_ssu_params *p, ls_stream s);
    int (*state_copy)(const ls_state_params *p, ls_stream s);
    int (*state_accept)(const ls_state_params *p, ls_stream s);
    int (*state_zero)(const ls_state_params *p, ls_stream s);
} ls_backend;

/* "host" always exists; "cuda" only when built with CUDA (returns NULL otherwise, error set). */
const ls_backend *ls_backend_get(const char *name);
const ls_backend *ls_backend_host(void);
const ls_backend *ls_backend_cuda(void); /* NULL when not built with CUDA */

/* Host reference kernels (kernels/ref): the same contract, host pointers, float64 accumulation. */
int ls_ref_conv_update(const ls_conv_params *p);
int ls_ref_gdn(const ls_delta_params *p);
int ls_ref_kda(const ls_delta_params *p);
int ls_ref_ssu(const ls_ssu_params *p);
int ls_ref_state_copy(const ls_state_params *p);
int ls_ref_state_accept(const ls_state_params *p);
int ls_ref_state_zero(const ls_state_params *p);

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_conv_params_check(const ls_conv_params *p);
/* The contract of a given slot count (slots > 0): every index below it; host indices only.
 * Returns 0 or ls_fail naming the first row that breaks it. */
int ls_slots_check(const char *op, const int32_t *slot_idx, int32_t batch, int32_t slots);
int ls_delta_params_check(const ls_delta_params *p, int per_channel_gate);
int ls_ssu_params_check(const ls_ssu_params *p);
int ls_state_params_check(const ls_state_params *p, int need_src, int need_spec);

#ifdef __cplusplus
}
#endif
#endif /* LS_KERNELS_H */
