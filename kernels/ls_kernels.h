/*
 * ls_kernels.h — the op API of linstate: dtypes, one params struct per op, the runtime table
 * (memory, streams, events, graphs: how bytes move and time is kept) and the implementation
 * ABI (ls_impl: a named set of op functions with its tuning knobs; also the plugin ABI).
 *
 * Two runtimes: "host" (kernels/ref, runs anywhere) and "cuda" (kernels/cuda, built when nvcc
 * is found). Built-in impls: "host" (the float64-accumulating oracle) and "linstate" (the CUDA
 * kernels). Pool and bench code never call a kernel directly; they call an impl's op.
 *
 * Conventions shared by every op (docs/ops.md):
 *  - all pointers in a params struct point into the backend's memory (device memory for cuda);
 *  - strides are in ELEMENTS unless the name says _bytes;
 *  - slot index arrays are int32, one entry per request row; -1 marks a padding row (docs/ops.md);
 *  - activations are bf16 (stored as uint16_t), state is fp32 or bf16, math is fp32 on the GPU
 *    and float64 in the host reference;
 *  - T (tokens) = 1 is decode; T > 1 is target verify: T intermediate states/windows are written
 *    to the speculative buffer `inter`, and the final state is written back only when
 *    disable_state_update == 0;
 *  - speculative buffers are indexed by pool slot (docs/pool.md, AFTER layout): inter[slot][t].
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

/* ------------------------------------------------------- causal conv1d update (docs/ops.md) */

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

/* ----------------------------------------------- gated delta rule: GDN and KDA (docs/ops.md) */

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
 * state_layout LS_STATE_VK stores each head's S transposed, [V, K] (K innermost), in state and
 * inter alike; the math is the same. An impl declares the layouts its gdn/kda take (LS_IMPL_KV,
 * LS_IMPL_VK); a kernel given the other layout would compute on transposed states.
 */
typedef enum ls_state_layout { LS_STATE_KV = 0, LS_STATE_VK = 1 } ls_state_layout;
static inline const char *ls_state_layout_name(ls_state_layout l) { return l == LS_STATE_VK ? "vk" : "kv"; }

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
    ls_state_layout state_layout; /* LS_STATE_KV (default, 0) or LS_STATE_VK */
    /* Elements between consecutive tokens (row r*T + t) of q, k and v; 0 = contiguous (H*K for
     * q and k, HV*V for v). Lets q, k and v be views into one packed [B*T, 2*H*K + HV*V] row per
     * token (SGLang's mixed_qkv) without a copy. An impl that reads contiguous rows only does not
     * declare LS_IMPL_QKV_STRIDES and refuses other values. */
    int64_t q_stride_tok, k_stride_tok, v_stride_tok;
} ls_delta_params;
#define LS_DELTA_HAS_QKV_STRIDES 1

/* ------------------------------------- fused conv update + delta rule: GDN and KDA (docs/ops.md) */

/*
 * The causal conv1d update of the packed q/k/v channels feeding the GDN or KDA recurrence, as
 * ONE op that must give exactly the results of the two ops run back to back:
 *   1. conv update (ls_conv_params contract) over C = 2*H*K + HV*V channels of one row per token,
 *      channel order q (H*K), k (H*K), v (HV*V) — SGLang's mixed_qkv; its output y is rounded to
 *      bf16 as the conv op stores it;
 *   2. gdn (kda == 0) or kda (kda == 1) (ls_delta_params contract) on q, k, v = that output.
 * The conv output is not stored: conv.y and delta.q/k/v must be NULL (their strides unused).
 * conv and delta share the request rows: same batch, tokens, slots and the same slot_idx pointer.
 * The two flags stay separate: conv.disable_state_update / conv.inter are the conv half's
 * (window state, windows per step), delta.disable_state_update / delta.inter the recurrence's.
 * Padding row (slot -1): nothing is read or written for it, o included (keeps its content).
 * ls_conv_delta_split gives the back-to-back form (the oracle ls_ref_conv_delta composes it).
 */
typedef struct ls_conv_delta_params {
    int32_t kda;                  /* 0: GDN gate, 1: KDA gate (the delta struct's a/dt_bias rules) */
    ls_conv_params conv;          /* x: [B, T, C] packed q|k|v before the conv; y NULL */
    ls_delta_params delta;        /* q, k, v NULL: the conv output feeds them */
} ls_conv_delta_params;

/* ----------------------------------------- Mamba2 selective state update (docs/ops.md) */

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

/* ----------------------------------------------- state ops over a whole pool (docs/pool.md) */

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
 *   accept: main[l][dst[i]] <- spec[l][dst[i]][step[i]]  (step < 0: row skipped; docs/pool.md)
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

/* ---------------------------------------------------------------- the runtime */

/*
 * A runtime moves bytes and keeps time: device selection, memory, copies, streams, events, CUDA
 * graphs, the stream hold. Two exist: "cuda" (kernels/cuda/backend_cuda.cu, built when nvcc is
 * found) and "host" (kernels/ref/host_backend.c: plain memory, wall-clock events). Kernels are
 * not part of it: they belong to implementations (ls_impl below), which run on a runtime.
 */
#define LS_RUNTIME_ABI 3

/* Runtime capability bits (ls_runtime.caps). */
#define LS_RT_DEVICE_MEMORY 1u /* memory is a device's, separate from the host's: a copy peak, the
                                * memory budget and the hwloc binding refer to that device */
#define LS_RT_GRAPHS 2u        /* graph_begin/end/launch/destroy are set */
#define LS_RT_HOLD 4u          /* hold_* are set (the stream hold) */
#define LS_RT_PCI 8u           /* device_info gives a PCI bus id (hwloc locality of the device) */

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
    char uuid[48];                /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's form);
                                   * "" for host. Last field: plugins built before it read the
                                   * same offsets (they only read this struct) */
} ls_device_info;

typedef struct ls_runtime {
    int abi_version;              /* LS_RUNTIME_ABI */
    const char *name;             /* "host" or "cuda" */
    unsigned caps;                /* LS_RT_* capability bits: callers test these, never the name */

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

} ls_runtime;

/* ------------------------------------------------------ implementations (docs/plugin-abi.md) */

/*
 * An implementation ("impl") is a named set of op functions on one runtime, the tuning knobs it
 * declares and its capability bits. Built in: "linstate" (the CUDA kernels, runtime cuda) and
 * "host" (the float64 reference, runtime host, the oracle every impl is verified against). A
 * plugin is a shared library exporting LS_IMPL_ENTRY_SYMBOL (see ls_impl_entry_fn); this block is
 * its whole ABI and is versioned by LS_IMPL_ABI.
 *
 * Ops: NULL = the impl does not have that op (a benchmark of it gives `skipped:unsupported`).
 * Each op takes the op's params (pointers in the runtime's memory), the effective tuning and
 * the stream, returns 0, LS_OP_UNSUPPORTED when the impl does not take these params by design
 * (a shape it was not built for, verify on a decode-only kernel: `skipped:unsupported`, nothing
 * written), or another non-zero value on failure (then last_error, when set, says why). An op
 * must not read the environment: everything that changes what it runs is a knob.
 */
#define LS_OP_UNSUPPORTED 2
#define LS_IMPL_ABI 2
#define LS_IMPL_ENTRY_SYMBOL "linstate_impl_v1"
#define LS_MAX_KNOBS 16

typedef enum ls_op {
    LS_OP_CONV_UPDATE = 0,
    LS_OP_GDN,
    LS_OP_KDA,
    LS_OP_SSU,
    LS_OP_STATE_COPY,
    LS_OP_STATE_ACCEPT,
    LS_OP_STATE_ZERO,
    LS_OP_CONV_DELTA, /* appended in impl ABI 2 */
    LS_OP_COUNT
} ls_op;

/* One tuning knob. name: [a-z0-9_.]+ ("conv.variant"); values: the allowed values separated by
 * '|', the first being the default ("auto|vec8|vec2|scalar"); help: one line. */
typedef struct ls_knob_def {
    const char *name;
    const char *values;
    const char *help;
} ls_knob_def;

/* The effective tuning of a call: v[i] is the index of knob i's value in its values list (0 =
 * default), for i < n = the impl's n_knobs. Built and validated by the harness (ls_tuning_parse). */
typedef struct ls_tuning {
    int32_t n;
    int32_t v[LS_MAX_KNOBS];
} ls_tuning;

/* Impl capability bits (ls_impl.caps). */
#define LS_IMPL_GRAPH 1u   /* ops may be captured in a CUDA graph and queued behind a stream hold:
                            * they never synchronise, allocate or read back while launching */
#define LS_IMPL_KV 2u      /* gdn/kda take ls_delta_params.state_layout LS_STATE_KV */
#define LS_IMPL_VK 4u      /* gdn/kda take LS_STATE_VK; an impl with gdn or kda sets one or both */
#define LS_IMPL_QKV_STRIDES 8u /* gdn/kda take q/k/v token strides (ls_delta_params.*_stride_tok) */

typedef struct ls_impl {
    int abi_version;              /* LS_IMPL_ABI */
    const char *name;             /* [a-z0-9_-]+; the CSV `impl` column */
    const char *version;          /* free text recorded in every row's provenance ("" if none) */
    const char *runtime;          /* "cuda" or "host": the runtime whose memory and streams it takes */
    unsigned caps;                /* LS_IMPL_* */
    const ls_knob_def *knobs;     /* n_knobs entries (<= LS_MAX_KNOBS); NULL when none */
    int32_t n_knobs;

    int (*conv_update)(const ls_conv_params *p, const ls_tuning *t, ls_stream s);
    int (*gdn)(const ls_delta_params *p, const ls_tuning *t, ls_stream s);
    int (*kda)(const ls_delta_params *p, const ls_tuning *t, ls_stream s);
    int (*ssu)(const ls_ssu_params *p, const ls_tuning *t, ls_stream s);
    int (*state_copy)(const ls_state_params *p, const ls_tuning *t, ls_stream s);
    int (*state_accept)(const ls_state_params *p, const ls_tuning *t, ls_stream s);
    int (*state_zero)(const ls_state_params *p, const ls_tuning *t, ls_stream s);

    /* Optional: the reason of this thread's last failed op ("" or NULL when unknown). */
    const char *(*last_error)(void);
    /* Optional: what op `op` would launch for these params and tuning on device `dev` (kernel
     * name, grid, flags) as one line into buf; pointers in params may be NULL. 0 or non-zero. */
    int (*explain)(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev,
                   char *buf, size_t cap);

    /* Since impl ABI 2 (appended): the fused conv update + GDN/KDA recurrence (docs/ops.md).
     * An impl that fuses only one gate returns LS_OP_UNSUPPORTED for the other. */
    int (*conv_delta)(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s);
} ls_impl;

/* The plugin entry point: returns the impl for the caller's ABI version, or NULL when the plugin
 * does not speak it. Exported as `const ls_impl *linstate_impl_v1(int abi_version)`. */
typedef const ls_impl *(*ls_impl_entry_fn)(int abi_version);

/* ------------------------------------------------------ impl registry (kernels/impl.c) */

/* Built-in impls and loaded plugins, by name; NULL with the error set when unknown. */
const ls_impl *ls_impl_get(const char *name);
/* The default impl of a runtime: "linstate" on cuda, "host" on host. */
const ls_impl *ls_impl_default(const ls_runtime *rt);
/* Loads a plugin with dlopen and registers it; NULL with a one-line error (missing file, missing
 * entry symbol, ABI or name mismatch, name already taken). Loading the same path twice returns
 * the impl registered the first time. */
const ls_impl *ls_impl_load(const char *path);
int ls_impl_count(void);
const ls_impl *ls_impl_at(int i);
/* The impl's function for op (NULL when it lacks it); the op's name ("conv_update", "gdn", ...). */
const void *ls_impl_op(const ls_impl *im, ls_op op);
const char *ls_op_name(ls_op op);
/* After a failed op: the impl's own reason if it gives one, else ls_last_error(). */
const char *ls_impl_error(const ls_impl *im);

/* The default tuning (every knob at its first value). */
void ls_tuning_default(const ls_impl *im, ls_tuning *out);
/* Applies "knob=value[,knob=value...]" on top of *t. Unknown knob or value: -1 with a one-line
 * error naming it and the allowed names/values. "" changes nothing. */
int ls_tuning_parse(const ls_impl *im, const char *spec, ls_tuning *t);
/* The stable string of a tuning: every knob, in declaration order, "name=value" joined by ','
 * ("" for an impl without knobs). Returns the length, or -1 when cap is too small. */
int ls_tuning_string(const ls_impl *im, const ls_tuning *t, char *buf, size_t cap);
/* The index of knob `name` in im->knobs, or -1. */
int ls_knob_index(const ls_impl *im, const char *name);
/* The value (string) of knob i in t, written into buf (cap bytes); buf. */
const char *ls_knob_value(const ls_impl *im, const ls_tuning *t, int i, char *buf, size_t cap);

/* "host" always exists; "cuda" only when built with CUDA (returns NULL otherwise, error set). */
const ls_runtime *ls_runtime_get(const char *name);
const ls_runtime *ls_runtime_host(void);
const ls_runtime *ls_runtime_cuda(void); /* NULL when not built with CUDA */

/* Host reference kernels (kernels/ref): the same contract, host pointers, float64 accumulation. */
int ls_ref_conv_update(const ls_conv_params *p);
int ls_ref_gdn(const ls_delta_params *p);
int ls_ref_kda(const ls_delta_params *p);
int ls_ref_ssu(const ls_ssu_params *p);
int ls_ref_state_copy(const ls_state_params *p);
int ls_ref_state_accept(const ls_state_params *p);
int ls_ref_state_zero(const ls_state_params *p);
/* conv_delta's oracle: ls_ref_conv_update then ls_ref_gdn / ls_ref_kda, as split below. */
int ls_ref_conv_delta(const ls_conv_delta_params *p);

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_conv_params_check(const ls_conv_params *p);
/* The contract of a given slot count (slots > 0): every index below it; host indices only.
 * Returns 0 or ls_fail naming the first row that breaks it. */
int ls_slots_check(const char *op, const int32_t *slot_idx, int32_t batch, int32_t slots);
int ls_delta_params_check(const ls_delta_params *p, int per_channel_gate);
int ls_ssu_params_check(const ls_ssu_params *p);
int ls_state_params_check(const ls_state_params *p, int need_src, int need_spec);
int ls_conv_delta_params_check(const ls_conv_delta_params *p);

/*
 * The back-to-back form of a conv_delta call (pointer arithmetic only: p's pointers may be
 * device pointers). qkv: scratch of B*T*C bf16 in the same memory, the conv output. packed = 1:
 * one conv writing qkv as [B, T, C] rows and delta reading q/k/v through token strides (for an
 * impl with LS_IMPL_QKV_STRIDES); packed = 0: three convs over the q, k and v channel ranges
 * writing contiguous q [B,T,H*K], k, v [B,T,HV*V] one after the other in qkv. Fills conv[0..n)
 * (*n_conv = 1 or 3) and *delta (o, state, ... as in p). 0, or ls_fail naming a bad field.
 */
int ls_conv_delta_split(const ls_conv_delta_params *p, uint16_t *qkv, int packed, ls_conv_params conv[3],
                        int *n_conv, ls_delta_params *delta);

#ifdef __cplusplus
}
#endif
#endif /* LS_KERNELS_H */
