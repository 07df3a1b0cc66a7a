/*
 * slots.c — slot operations of the pool (docs/pool.md): alloc, free, copy, fork, accept.
 *
 * Contract shared by every operation: slot lists are host arrays; everything is validated before
 * anything changes, so a failing call returns -1 with ls_last_error() set and the pool unchanged
 * (free list, allocated flags and — for validation failures — memory). Data moves only through
 * the backend table (state_zero / state_copy / state_accept, copy_d2d for staging). Work is
 * issued on the backend's default stream (NULL) and an operation returns once it is queued, as
 * SGLang's pool ops do on the current stream: nothing waits for the device (an overlapping copy
 * excepted, which waits before it frees its staging buffer), so B forks are B pairs of launches,
 * not B host-device round trips. The index scratch is reused in stream order. A caller that
 * reads the pool from other streams, or the host, calls ls_pool_sync first. No operation
 * looks at the mechanism: each is one state op over the buffer list.
 */
#include <stdlib.h>

#include "pool_private.h"

/* A slot a caller may name: in range, not the padding slot, allocated. `what` prefixes "slot". */
static int check_slot(const ls_pool *p, const char *op, const char *what, int32_t slot)
{
    if (slot < 0 || slot >= p->slots)
        return ls_fail("pool: %s: %sslot %d is out of range 0..%d", op, what, slot, p->slots - 1);
    if (slot == ls_pool_padding_slot(p))
        return ls_fail("pool: %s: %sslot %d is the padding slot", op, what, slot);
    if (!p->allocated[slot])
        return ls_fail("pool: %s: %sslot %d is not allocated", op, what, slot);
    return 0;
}

/* Error if a slot appears twice in list[0..n) (all entries already in range). Leaves mark clear. */
static int check_distinct(ls_pool *p, const char *op, const char *what, int32_t n,
                          const int32_t *list)
{
    int32_t dup = -1;
    for (int32_t i = 0; i < n && dup < 0; i++) {
        if (p->mark[list[i]])
            dup = list[i];
        p->mark[list[i]] = 1;
    }
    for (int32_t i = 0; i < n; i++)
        p->mark[list[i]] = 0;
    if (dup >= 0)
        return ls_fail("pool: %s: %sslot %d appears twice in the list", op, what, dup);
    return 0;
}

/* Common argument checks: n >= 0 and the lists present when n > 0. */
static int check_count(const char *op, int32_t n, const void *a, const void *b)
{
    if (n < 0)
        return ls_fail("pool: %s: count %d must be >= 0", op, n);
    if (n > 0 && (!a || !b))
        return ls_fail("pool: %s: slot list is NULL for count %d", op, n);
    return 0;
}

/* main[l][dst[i]] <- 0 for every buffer and layer (queued). */
static int zero_rows(ls_pool *p, int32_t n, const int32_t *dst)
{
    ls_state_params sp;
    return ls_pool_upload_rows(p, n, NULL, dst, NULL, &sp) || p->impl->state_zero(&sp, &p->tuning, NULL)
               ? -1
               : 0;
}

/*
 * Allocates n slots from the head of the FIFO free list (AFTER: 0, 1, 2, ... at first; PAD_FIRST
 * starts at 1). Exhaustion is an error and takes nothing. LS_ZERO_AT_ALLOC zeroes the slots'
 * main buffers (all layers) before they are handed out; LS_ZERO_AT_FREE relies on free/create.
 */
int ls_pool_alloc(ls_pool *p, int32_t n, int32_t *slots_out)
{
    if (check_count("alloc", n, slots_out, slots_out))
        return -1;
    if (n > p->n_free)
        return ls_fail("pool: alloc: %d slots requested, only %d of %d free", n, p->n_free,
                       p->cfg.capacity);
    if (n == 0)
        return 0;
    const int32_t S = p->cfg.capacity;
    int32_t *picked = p->host_idx;
    for (int32_t i = 0; i < n; i++)
        picked[i] = p->ring[(p->ring_head + i) % S];
    if (p->cfg.zero == LS_ZERO_AT_ALLOC && zero_rows(p, n, picked))
        return -1;
    for (int32_t i = 0; i < n; i++) {
        p->allocated[picked[i]] = 1;
        slots_out[i] = picked[i];
    }
    p->ring_head = (p->ring_head + n) % S;
    p->n_free -= n;
    return 0;
}

/*
 * Returns n allocated slots to the tail of the free list. Out-of-range, padding, unallocated
 * (double free) and repeated slots are errors that change nothing. LS_ZERO_AT_FREE zeroes the
 * slots' main buffers (all layers) first; speculative buffers are never zeroed (as upstream).
 */
int ls_pool_free(ls_pool *p, int32_t n, const int32_t *slots)
{
    if (check_count("free", n, slots, slots))
        return -1;
    for (int32_t i = 0; i < n; i++)
        if (check_slot(p, "free", "", slots[i]))
            return -1;
    if (check_distinct(p, "free", "", n, slots))
        return -1;
    if (n == 0)
        return 0;
    if (p->cfg.zero == LS_ZERO_AT_FREE && zero_rows(p, n, slots))
        return -1;
    const int32_t S = p->cfg.capacity;
    for (int32_t i = 0; i < n; i++) {
        p->ring[(p->ring_head + p->n_free) % S] = slots[i];
        p->n_free++;
        p->allocated[slots[i]] = 0;
    }
    return 0;
}

/*
 * Copies main[l][src[i]] into main[l][dst[i]] for every buffer and layer, with gather semantics:
 * every source is read before any destination is written. Inputs are validated (dst distinct).
 *
 * The backend's state_copy requires disjoint src/dst sets, so rows are split:
 *  - src == dst: nothing to do;
 *  - "staged" rows, whose source is also some row's destination: their source rows are first
 *    gathered into a temporary backend buffer (copy_d2d per buffer, layer and row) and
 *    scattered back after the others — PyTorch's gather-then-index-put, for just these rows;
 *  - the rest: one state_copy (their sources are never written, their destinations may be
 *    staged sources, which is why the gather comes first).
 * Partial failure of the backend may leave memory partially copied; bookkeeping never changes.
 */
static int copy_rows(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst)
{
    const ls_runtime *be = p->be;
    int32_t *plain_src = p->host_idx, *plain_dst = p->host_idx + p->slots;
    int32_t *staged = p->host_idx + 2 * (size_t)p->slots; /* row indices */
    int32_t n_plain = 0, n_staged = 0;
    for (int32_t i = 0; i < n; i++)
        p->mark[dst[i]] = 1;
    for (int32_t i = 0; i < n; i++) {
        if (src[i] == dst[i])
            continue;
        if (p->mark[src[i]]) {
            staged[n_staged++] = i;
        } else {
            plain_src[n_plain] = src[i];
            plain_dst[n_plain++] = dst[i];
        }
    }
    for (int32_t i = 0; i < n; i++)
        p->mark[dst[i]] = 0;

    char *tmp = NULL;
    if (n_staged > 0) {
        tmp = be->mem_alloc((size_t)n_staged * (size_t)ls_bytes_per_req(&p->desc));
        if (!tmp)
            return -1;
    }
    int rc = 0;
    /* gather (dir 0) before the plain copy, scatter (dir 1) after it */
    for (int dir = 0; dir < 2 && rc == 0; dir++) {
        if (dir == 1 && n_plain > 0) {
            ls_state_params sp;
            rc = ls_pool_upload_rows(p, n_plain, plain_src, plain_dst, NULL, &sp) ||
                 p->impl->state_copy(&sp, &p->tuning, NULL);
        }
        char *t = tmp;
        for (int32_t j = 0; j < n_staged && rc == 0; j++) {
            const int32_t slot = dir == 0 ? src[staged[j]] : dst[staged[j]];
            for (int b = 0; b < p->n_buf && rc == 0; b++) {
                for (int l = 0; l < p->desc.layers && rc == 0; l++, t += p->item[b]) {
                    char *row = (char *)p->main[b] + ((int64_t)l * p->slots + slot) * p->item[b];
                    rc = dir == 0 ? be->copy_d2d(t, row, (size_t)p->item[b], NULL)
                                  : be->copy_d2d(row, t, (size_t)p->item[b], NULL);
                }
            }
        }
    }
    if (tmp) { /* the staged rows' copies must be done before their buffer goes */
        if (be->sync(NULL))
            rc = -1;
        be->mem_free(tmp);
    }
    return rc ? -1 : 0;
}

/*
 * Copies n allocated slots onto n allocated, distinct slots (main buffers, all layers; spec
 * buffers are not copied, as upstream). Lists may overlap: the result is as if every source
 * were read before any destination is written.
 */
int ls_pool_copy(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst)
{
    if (check_count("copy", n, src, dst))
        return -1;
    for (int32_t i = 0; i < n; i++)
        if (check_slot(p, "copy", "src ", src[i]) || check_slot(p, "copy", "dst ", dst[i]))
            return -1;
    if (check_distinct(p, "copy", "dst ", n, dst))
        return -1;
    return n == 0 ? 0 : copy_rows(p, n, src, dst);
}

/*
 * Allocates one slot and copies src into it (SGLang fork_from). An exhausted pool is an error.
 * The copy overwrites every main buffer of the new slot, so LS_ZERO_AT_ALLOC's zeroing is
 * skipped; the slot is only taken once the copy succeeded.
 */
int ls_pool_fork(ls_pool *p, int32_t src, int32_t *dst_out)
{
    if (!dst_out)
        return ls_fail("pool: fork: dst_out is NULL");
    if (check_slot(p, "fork", "src ", src))
        return -1;
    if (p->n_free == 0)
        return ls_fail("pool: fork: no free slot (all %d allocated)", p->cfg.capacity);
    const int32_t dst = p->ring[p->ring_head];
    if (copy_rows(p, 1, &src, &dst))
        return -1;
    p->allocated[dst] = 1;
    p->ring_head = (p->ring_head + 1) % p->cfg.capacity;
    p->n_free--;
    *dst_out = dst;
    return 0;
}

/*
 * Speculative acceptance (docs/pool.md): for each row i with steps[i] >= 0,
 *   main[l][slots[i]] <- spec[l][slots[i]][steps[i]]   for every buffer and layer.
 * Rows with steps[i] < 0 are skipped entirely (their slot is not even looked at). The pool must
 * have spec buffers; steps must be < spec_tokens; accepted slots must be allocated and distinct.
 */
int ls_pool_accept(ls_pool *p, int32_t n, const int32_t *slots, const int32_t *steps)
{
    const int32_t T = p->desc.spec_tokens;
    if (T == 0)
        return ls_fail("pool: accept: the pool has no speculative buffers (spec_tokens 0)");
    if (check_count("accept", n, slots, steps))
        return -1;
    int32_t *dst = p->host_idx + p->slots, *step = p->host_idx + 2 * (size_t)p->slots;
    int32_t k = 0;
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        if (steps[i] < 0)
            continue;
        if (steps[i] >= T)
            rc = ls_fail("pool: accept: step %d of row %d must be < spec_tokens %d", steps[i], i,
                         T);
        else if (check_slot(p, "accept", "", slots[i]))
            rc = -1;
        else if (p->mark[slots[i]]) /* distinct as we go: k never exceeds the slot count */
            rc = ls_fail("pool: accept: slot %d appears twice in the list", slots[i]);
        else {
            p->mark[slots[i]] = 1;
            dst[k] = slots[i];
            step[k++] = steps[i];
        }
    }
    for (int32_t j = 0; j < k; j++)
        p->mark[dst[j]] = 0;
    if (rc || k == 0)
        return rc;
    ls_state_params sp;
    return ls_pool_upload_rows(p, k, NULL, dst, step, &sp) || p->impl->state_accept(&sp, &p->tuning, NULL)
               ? -1
               : 0;
}

int ls_pool_sync(ls_pool *p)
{
    if (!p)
        return ls_fail("pool: sync: pool is NULL");
    return p->be->sync(NULL);
}
