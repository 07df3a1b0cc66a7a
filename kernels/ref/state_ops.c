/*
 * state_ops.c — host reference of the pool-wide state ops (docs/pool.md): copy, accept and
 * zero over every buffer and every layer, one memcpy/memset per (buffer, layer, row).
 *
 * Byte addressing (ls_state_params): main[l][s] at ((l*slots + s) * item_bytes);
 * spec[l][s][t] at (((l*slots + s) * spec_tokens + t) * item_bytes).
 *
 * Unlike the cuda backend, the reference can read the index arrays, so it enforces the
 * contract before touching memory: every slot in 0..slots-1, every step < spec_tokens, copy
 * destinations distinct and disjoint from the sources, accept destinations distinct. A
 * violation is an error naming the row and value, and nothing is written.
 */
#include "ls_ref.h"

#include <stdlib.h>

enum { MARK_DST = 1, MARK_SRC = 2 };

static int check_slot(const char *op, const char *name, int i, int32_t v, int32_t slots)
{
    if (v < 0 || v >= slots)
        return ls_fail("%s: %s[%d]=%d not in 0..%d", op, name, i, (int)v, (int)slots - 1);
    return 0;
}

/*
 * Validate index values. src/step: the arrays this op reads (NULL when it reads none, whatever
 * the struct holds). dst_unique: reject a slot appearing twice in dst; with src, also reject
 * any slot that is both a source and a destination (the pool stages such lists).
 */
static int check_indices(const char *op, const ls_state_params *p, const int32_t *src,
                         const int32_t *step, int dst_unique)
{
    unsigned char *mark = NULL;
    if (dst_unique && p->count > 0) {
        mark = calloc((size_t)p->slots, 1);
        if (!mark)
            return ls_fail("%s: out of memory (slot map of %d)", op, (int)p->slots);
    }
    int rc = 0;
    for (int i = 0; i < p->count && rc == 0; i++) {
        rc = check_slot(op, "dst", i, p->dst[i], p->slots);
        if (rc == 0 && src)
            rc = check_slot(op, "src", i, src[i], p->slots);
        if (rc == 0 && step && step[i] >= p->spec_tokens)
            rc = ls_fail("%s: step[%d]=%d not below spec_tokens=%d", op, i, (int)step[i],
                         (int)p->spec_tokens);
        if (rc == 0 && mark) {
            if (mark[p->dst[i]] & MARK_DST)
                rc =
                    ls_fail("%s: dst[%d]=%d repeats an earlier destination", op, i, (int)p->dst[i]);
            mark[p->dst[i]] |= MARK_DST;
        }
    }
    if (rc == 0 && mark && src) {
        for (int i = 0; i < p->count; i++)
            mark[src[i]] |= MARK_SRC;
        for (int i = 0; i < p->count && rc == 0; i++)
            if (mark[p->dst[i]] & MARK_SRC)
                rc = ls_fail("%s: dst[%d]=%d is also a source (src/dst must be disjoint)", op, i,
                             (int)p->dst[i]);
    }
    free(mark);
    return rc;
}

static char *main_at(const ls_state_params *p, int b, int l, int32_t s)
{
    size_t item = (size_t)p->buf[b].item_bytes;
    return (char *)p->buf[b].main + ((size_t)l * (size_t)p->slots + (size_t)s) * item;
}

int ls_ref_state_copy(const ls_state_params *p)
{
    if (ls_state_params_check(p, 1, 0) || check_indices("state_copy", p, p->src, NULL, 1))
        return -1;
    for (int b = 0; b < p->n_buffers; b++)
        for (int l = 0; l < p->layers; l++)
            for (int i = 0; i < p->count; i++)
                memcpy(main_at(p, b, l, p->dst[i]), main_at(p, b, l, p->src[i]),
                       (size_t)p->buf[b].item_bytes);
    return 0;
}

int ls_ref_state_accept(const ls_state_params *p)
{
    if (ls_state_params_check(p, 0, 1) || check_indices("state_accept", p, NULL, p->step, 1))
        return -1;
    for (int b = 0; b < p->n_buffers; b++) {
        if (!p->buf[b].spec)
            continue; /* buffers without speculative copies are skipped */
        size_t item = (size_t)p->buf[b].item_bytes;
        for (int l = 0; l < p->layers; l++)
            for (int i = 0; i < p->count; i++) {
                if (p->step[i] < 0)
                    continue; /* nothing accepted for this row */
                size_t row =
                    ((size_t)l * (size_t)p->slots + (size_t)p->dst[i]) * (size_t)p->spec_tokens +
                    (size_t)p->step[i];
                memcpy(main_at(p, b, l, p->dst[i]), (const char *)p->buf[b].spec + row * item,
                       item);
            }
    }
    return 0;
}

int ls_ref_state_zero(const ls_state_params *p)
{
    if (ls_state_params_check(p, 0, 0) || check_indices("state_zero", p, NULL, NULL, 0))
        return -1;
    for (int b = 0; b < p->n_buffers; b++)
        for (int l = 0; l < p->layers; l++)
            for (int i = 0; i < p->count; i++)
                memset(main_at(p, b, l, p->dst[i]), 0, (size_t)p->buf[b].item_bytes);
    return 0;
}
