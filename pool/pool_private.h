/*
 * pool_private.h — internals shared by pool.c (lifecycle, buffer views, buffer infos) and
 * slots.c (alloc/free/copy/fork/accept). Not part of the public API (ls_pool.h).
 *
 * Memory model: every buffer (main and spec) and the device copy of slot-index lists live in
 * backend memory (be->mem_alloc); the free list, the "allocated" bitmap and host scratch live on
 * the host. Nothing here knows which mechanism the descriptor came from: a pool is a list of
 * n_conv + 1 buffers, each [layers, slots, item] (spec: [layers, slots, T, item]).
 */
#ifndef LS_POOL_PRIVATE_H
#define LS_POOL_PRIVATE_H

#include "ls_pool.h"

struct ls_pool {
    ls_state_desc desc;
    ls_pool_config cfg;
    const ls_runtime *be;
    const ls_impl *impl;               /* state ops of the slot operations */
    ls_tuning tuning;
    int32_t slots;                     /* S + 1 */
    int32_t n_buf;                     /* n_conv + 1; temporal is buffer n_buf - 1 */
    void *main[LS_MAX_BUFFERS];        /* [layers, slots, item[b]] bytes */
    void *spec[LS_MAX_BUFFERS];        /* [layers, slots, T, item[b]] bytes, NULL without spec */
    int64_t item[LS_MAX_BUFFERS];      /* bytes of one slot of one layer */

    /* host bookkeeping: FIFO free list (ring of S entries) and per-slot allocated flags */
    int32_t *ring;
    int32_t ring_head, n_free;
    uint8_t *allocated;                /* [slots] */
    uint8_t *mark;                     /* [slots], all zero between operations */
    int32_t *host_idx;                 /* [3 * slots] host scratch for building index lists */
    int32_t *host_pack;                /* [3 * slots] the lists of one upload, packed */

    /* backend scratch for the index lists of one operation, packed as host_pack, followed by
     * dev_iota[i] = i for i < iota_len = max(slots, spec_tokens) (written once, at create) */
    int32_t *dev_idx;
    int32_t *dev_iota;
    int32_t iota_len;
};

/* Upload up to three host index lists (any may be NULL) of n entries each into the backend
 * scratch, in stream order on the default stream (one-row lists: nothing, they point into
 * dev_iota), and fill `sp` (buffer table + count + index pointers). 0 or -1 (backend error). */
int ls_pool_upload_rows(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst,
                        const int32_t *step, ls_state_params *sp);

#endif /* LS_POOL_PRIVATE_H */
