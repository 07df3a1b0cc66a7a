/*
 * api/state_ops.h — the state ops over a whole pool, copy / accept / zero (docs/pool.md): params,
 * validation, host oracles.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_STATE_OPS_H
#define LS_API_STATE_OPS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_state_params_check(const ls_state_params *p, int need_src, int need_spec);
/* Host reference kernels (kernels/ref): the same contract, host pointers. */
int ls_ref_state_copy(const ls_state_params *p);
int ls_ref_state_accept(const ls_state_params *p);
int ls_ref_state_zero(const ls_state_params *p);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_STATE_OPS_H */
