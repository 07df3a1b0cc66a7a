/*
 * fault_cuda.c — TEST ONLY (CUDA builds): "fault_cuda" forwards every op to the built-in impl
 * "linstate", except that a state_copy of 4 or more rows (B >= 4) is launched on a state buffer
 * whose base address is bogus, so linstate's own copy kernel writes to an illegal address: a
 * sticky CUDA error that poisons the process's context. Its B:4 rows must be error:* and every
 * later row, of linstate and of fault_cuda at B = 1, ok (the next case runs in a fresh worker
 * process; tests/plugin/test_plugin_faults.py cuda). No CUDA code here: the fault is linstate's
 * kernel fed a wild pointer. linstate-bench exports its symbols (ENABLE_EXPORTS), so the
 * wrapped impl is found with dlsym.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "ls_kernels.h"

#define FC_EXPORT __attribute__((visibility("default")))

static const ls_impl *inner;
static ls_impl fault;

static int fc_copy(const ls_state_params *p, const ls_tuning *t, ls_stream s)
{
    if (p->count < 4)
        return inner->state_copy(p, t, s);
    ls_state_params wild = *p;
    for (int b = 0; b < wild.n_buffers; b++)
        wild.buf[b].main = (void *)(uintptr_t)0x10000; /* never mapped on the device */
    return inner->state_copy(&wild, t, s);
}

FC_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    if (abi_version != LS_IMPL_ABI)
        return NULL;
    if (inner)
        return &fault;
    const ls_impl *(*get)(const char *) = (const ls_impl *(*)(const char *))dlsym(RTLD_DEFAULT, "ls_impl_get");
    if (!get || !(inner = get("linstate")) || !inner->state_copy) {
        fprintf(stderr, "fault_cuda: impl 'linstate' not found in this process (a CUDA build of linstate-bench?)\n");
        inner = NULL;
        return NULL;
    }
    fault = *inner;
    fault.name = "fault_cuda";
    fault.version = "fault_cuda (test: linstate's state_copy on a wild pointer at B >= 4)";
    fault.state_copy = fc_copy;
    return &fault;
}
