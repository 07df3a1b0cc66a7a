/*
 * api/impl.h — the implementation ABI (ls_impl), which is also the whole plugin ABI
 * (docs/plugin-abi.md).
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_IMPL_H
#define LS_API_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "conv.h"
#include "delta.h"
#include "conv_delta.h"
#include "ssu.h"
#include "state_ops.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

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
#define LS_IMPL_NULL_SLOT0 16u /* slot 0 is the impl's null block (vLLM's): a kernel benchmark never
                                * hands it out (its pool has one slot more, slot 0 held) */

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

#ifdef __cplusplus
}
#endif
#endif /* LS_API_IMPL_H */
