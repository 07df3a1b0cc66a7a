/*
 * fault_impl.c — TEST ONLY: impls whose state_copy fails the whole process once a call copies
 * 4 or more rows (B >= 4), one plugin per FAULT_KIND (compile definition); below that they are
 * the example impl (examples/plugin/example_impl.c, compiled in unchanged), correct and ok:
 *   FAULT_SEGV   "fault_segv"   writes through a wild pointer (SIGSEGV)
 *   FAULT_ABORT  "fault_abort"  abort() (SIGABRT)
 *   FAULT_EXIT   "fault_exit"   exit(3)
 *   FAULT_HEAP   "fault_heap"   writes far past a heap block (SIGSEGV; under ASan its report and
 *                               exit code 1, so error:crash or error:exit)
 *   FAULT_HANG   "fault_hang"   sleeps forever (error:timeout under --case-timeout)
 *   FAULT_POISON "fault_poison" fails the call and every later call of any op in this process:
 *                               the host analog of a sticky CUDA error (an illegal address
 *                               poisons the context), so its B:4 row is error:* and the rows
 *                               after it are ok only if the next case runs in a fresh process
 * linstate-bench must give those cases an error row and go on (tests/bench/test_bench_faults.py).
 */
#define _POSIX_C_SOURCE 200809L
#define linstate_impl_v1 example_entry_unused /* the example's entry, renamed out of the way */
#include "example_impl.c"
#undef linstate_impl_v1

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAULT_SEGV 1
#define FAULT_ABORT 2
#define FAULT_EXIT 3
#define FAULT_HEAP 4
#define FAULT_HANG 5
#define FAULT_POISON 6

#ifndef FAULT_KIND
#error "compile with -DFAULT_KIND=FAULT_... and -DFAULT_NAME=\"fault_...\""
#endif

static volatile uintptr_t wild = 16; /* volatile: the compiler cannot prove the fault */
static char *volatile block;         /* ... nor drop the block and the write past it */
static int poisoned;                 /* FAULT_POISON: every op fails from now on */

static void fault(void)
{
#if FAULT_KIND == FAULT_SEGV
    *(volatile int *)wild = 1;
#elif FAULT_KIND == FAULT_ABORT
    abort();
#elif FAULT_KIND == FAULT_EXIT
    exit(3);
#elif FAULT_KIND == FAULT_HEAP
    block = malloc(64);
    memset(block, 0x5a, 128);             /* just past the block: what a sanitizer catches at once */
    memset(block, 0x5a, (size_t)1 << 40); /* far past it: the first unmapped page stops it */
    free(block);
#elif FAULT_KIND == FAULT_HANG
    for (;;)
        sleep(1000);
#elif FAULT_KIND == FAULT_POISON
    poisoned = 1;
#endif
}

static int fault_state_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    if (p->count >= 4)
        fault();
    if (poisoned)
        return ex_fail("fault_poison: the process is poisoned by an earlier call");
    return ex_state_copy(p, t, s);
}

static int fault_state_accept(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return poisoned ? ex_fail("fault_poison: poisoned") : ex_state_accept(p, t, s);
}

static int fault_state_zero(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    return poisoned ? ex_fail("fault_poison: poisoned") : ex_state_zero(p, t, s);
}

static const ls_impl fault_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = FAULT_NAME,
    .version = "fault 0.1 (test: state_copy fails the process at B >= 4)",
    .runtime = "host",
    .knobs = ex_knobs,
    .n_knobs = N_KNOBS,
    .state_copy = fault_state_copy,
    .state_accept = fault_state_accept,
    .state_zero = fault_state_zero,
    .last_error = ex_last_error,
    .explain = ex_explain,
};

EX_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &fault_impl : NULL;
}
