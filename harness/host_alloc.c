/*
 * host_alloc.c — a steady host allocator for the measuring process (docs/timing.md, "Host
 * allocator").
 *
 * glibc's malloc serves a request of at least its mmap threshold (128 KiB at start) with fresh
 * mmap'd pages and moves that threshold up as such chunks are freed, so whether a timed call's
 * temporaries (a numpy gather of B rows, a torch CPU tensor) fault in new zeroed pages on every
 * call or reuse heap memory depends on what earlier cases allocated (tests/python/test_pyimpl.py
 * t_sources: a Python impl's pool/copy moved 5-8x with the cases run before it). A fixed
 * threshold (glibc's largest, 32 MiB) turns the adjustment off: smaller requests come from the
 * heap and are reused; pools and other large buffers are still mmap'd. The heap top is returned
 * to the system only when 64 MiB are free there, so a freed temporary's pages stay mapped for the
 * next call. Other C libraries, or a malloc that replaces glibc's: nothing changes.
 */
#include "ls_harness.h"

#if defined(__GLIBC__)
#include <malloc.h>

/* glibc's largest mmap threshold on 64-bit (4 MiB x sizeof(long)): a larger value is refused. */
#define LS_HOST_MMAP_THRESHOLD (32 * 1024 * 1024)
#endif

int ls_steady_host_allocator(void)
{
#if defined(__GLIBC__)
    /* A replaced malloc (ASan's, jemalloc preloaded) may refuse: it then keeps its own policy. */
    return mallopt(M_MMAP_THRESHOLD, LS_HOST_MMAP_THRESHOLD) == 1 &&
           mallopt(M_TRIM_THRESHOLD, 2 * LS_HOST_MMAP_THRESHOLD) == 1;
#else
    return 0;
#endif
}
