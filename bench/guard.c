/*
 * guard.c — canary zones around every buffer a case hands to an impl (docs/timing.md "Guard
 * zones").
 *
 * The case context (bench_ctx.be) is a copy of the run's runtime whose mem_alloc / mem_free are
 * wrapped: while armed (setup and verification of a case), an allocation of N bytes takes
 * N + 2 * BENCH_GUARD_BYTES from the real runtime, the buffer starts BENCH_GUARD_BYTES in, and the
 * zones before and after it are filled with a fixed pseudo-random pattern (copy_h2d, so device
 * memory works too). Everything a case allocates goes through it: its inputs, outputs, weights,
 * slot index lists (bench_dev_alloc) and the pool's buffers and index scratch (ls_pool_create is
 * given the same runtime). The kernels see the same alignment as before: BENCH_GUARD_BYTES is a
 * multiple of every runtime's allocation alignment (host 64, CUDA 256), and the layout inside a
 * buffer is unchanged.
 *
 * bench_guard_check reads the zones back (outside any timed region) and names the first buffer
 * whose zone changed, where and how far. Allocations made while disarmed (a pool path that
 * stages rows inside the timed region) go to the runtime unguarded, so timing never pays for a
 * zone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct guard_alloc {
    char *base;   /* what the real runtime returned; the buffer is base + BENCH_GUARD_BYTES */
    size_t bytes; /* the buffer's size as asked */
} guard_alloc;

static const ls_runtime *g_inner; /* the run's runtime */
static ls_runtime g_rt;           /* its copy with the wrapped allocator */
static guard_alloc *g_live;       /* guarded buffers not yet freed, in allocation order */
static int g_n, g_cap;
static int g_armed;
static unsigned char g_pattern[BENCH_GUARD_BYTES];

static char *user_ptr(const guard_alloc *a)
{
    return a->base + BENCH_GUARD_BYTES;
}

static void *guard_mem_alloc(size_t bytes)
{
    if (!g_armed)
        return g_inner->mem_alloc(bytes);
    const size_t G = BENCH_GUARD_BYTES;
    if (bytes > SIZE_MAX - 2 * G) {
        ls_fail("bench: mem_alloc: %zu bytes is too large", bytes);
        return NULL;
    }
    if (g_n == g_cap) {
        int ncap = g_cap ? 2 * g_cap : 64;
        guard_alloc *nl = realloc(g_live, sizeof *nl * (size_t)ncap);
        if (!nl) {
            ls_fail("bench: out of host memory (guard zone list)");
            return NULL;
        }
        g_live = nl;
        g_cap = ncap;
    }
    char *base = g_inner->mem_alloc(bytes + 2 * G);
    if (!base)
        return NULL; /* the runtime set the error */
    if (g_inner->copy_h2d(base, g_pattern, G) != 0 || g_inner->copy_h2d(base + G + bytes, g_pattern, G) != 0) {
        g_inner->mem_free(base);
        return NULL;
    }
    g_live[g_n++] = (guard_alloc){base, bytes};
    return base + G;
}

static void guard_mem_free(void *p)
{
    for (int i = g_n - 1; i >= 0; i--)
        if (user_ptr(&g_live[i]) == p) {
            g_inner->mem_free(g_live[i].base);
            memmove(&g_live[i], &g_live[i + 1], sizeof *g_live * (size_t)(g_n - i - 1));
            g_n--;
            return;
        }
    g_inner->mem_free(p); /* allocated while disarmed */
}

const ls_runtime *bench_guard_runtime(const ls_runtime *inner)
{
    if (g_inner != inner) {
        uint64_t s = 0x5eed6a5dull; /* a fixed pattern: no byte value is special */
        for (size_t i = 0; i < sizeof g_pattern; i++)
            g_pattern[i] = (unsigned char)(bench_rand_u64(&s) >> 56);
        g_inner = inner;
        g_rt = *inner;
        g_rt.mem_alloc = guard_mem_alloc;
        g_rt.mem_free = guard_mem_free;
    }
    return &g_rt;
}

void bench_guard_arm(int on)
{
    g_armed = on;
}

int bench_guard_live(void)
{
    return g_n;
}

/* What the buffer at p is, for the message: a pool buffer, the slot lists, or a case buffer. */
static void name_buffer(const bench_ctx *x, const char *p, size_t bytes, int index, char *buf, size_t cap)
{
    if (x && x->pool) {
        ls_state_params sp;
        ls_pool_state_params(x->pool, &sp);
        int n_conv = ls_pool_desc(x->pool)->n_conv;
        for (int b = 0; b < sp.n_buffers; b++)
            if (sp.buf[b].main == p || sp.buf[b].spec == p) {
                char what[32] = "temporal state";
                if (b < n_conv)
                    snprintf(what, sizeof what, "conv state %d", b);
                snprintf(buf, cap, "the pool's %s buffer (%s, %zu bytes)", what,
                         sp.buf[b].main == p ? "main" : "spec", bytes);
                return;
            }
    }
    if (x && x->slots_dev && (const char *)x->slots_dev == p) {
        snprintf(buf, cap, "the slot index lists (%zu bytes)", bytes);
        return;
    }
    for (int i = 0; x && i < x->n_allocs; i++)
        if (x->allocs[i] == p) {
            snprintf(buf, cap, "case buffer %d (%zu bytes)", i, bytes);
            return;
        }
    snprintf(buf, cap, "buffer %d of the case (%zu bytes, the pool's index scratch or a temporary)", index, bytes);
}

/* First and last changed byte of zone z against the pattern; 0 when intact. */
static int changed(const unsigned char *z, size_t *first, size_t *last)
{
    size_t n = BENCH_GUARD_BYTES, i = 0, j = n;
    while (i < n && z[i] == g_pattern[i])
        i++;
    if (i == n)
        return 0;
    while (j > i && z[j - 1] == g_pattern[j - 1])
        j--;
    *first = i;
    *last = j - 1;
    return 1;
}

int bench_guard_check(const bench_ctx *x, char *msg, size_t cap)
{
    const size_t G = BENCH_GUARD_BYTES;
    if (g_n == 0)
        return 0;
    unsigned char *z = malloc(2 * G);
    if (!z)
        return ls_fail("bench: out of host memory (guard zones)");
    int rc = g_inner->sync(NULL);
    for (int i = 0; rc == 0 && i < g_n; i++) {
        const guard_alloc *a = &g_live[i];
        if (g_inner->copy_d2h(z, a->base, G) != 0 || g_inner->copy_d2h(z + G, a->base + G + a->bytes, G) != 0) {
            rc = -1;
            break;
        }
        size_t first, last;
        char name[160];
        if (changed(z, &first, &last)) { /* before: byte i of the zone is G - i before the start */
            name_buffer(x, user_ptr(a), a->bytes, i, name, sizeof name);
            snprintf(msg, cap, "write outside %s: bytes at offsets -%zu..-%zu changed (before its start)", name,
                     G - first, G - last);
            rc = 1;
        } else if (changed(z + G, &first, &last)) {
            name_buffer(x, user_ptr(a), a->bytes, i, name, sizeof name);
            snprintf(msg, cap, "write outside %s: bytes at offsets %zu..%zu changed (past its end)", name,
                     a->bytes + first, a->bytes + last);
            rc = 1;
        }
    }
    free(z);
    return rc;
}
