/*
 * impl_linstate.cu — the "linstate" impl: the CUDA kernels of kernels/cuda on the cuda runtime,
 * their tuning knobs (ls_linstate_knobs, choose.c; indices LS_KNOB_* in choose.h) and capability
 * bits, and `explain`: the plan of a call (choose.h) as one line.
 */
#include "ls_cuda.h"
#include "impl_internal.h" /* kernels/ (the target's include directory) */

/* The plan the op's launcher would follow on a device with dev->sm_count SMs. The SSU's
 * automatic slot guess needs the resident CTA count of its kernel: queried on the current
 * device, as its launcher does. */
static int linstate_explain(ls_op op, const void *params, const ls_tuning *t, const ls_device_info *dev, char *buf,
                            size_t cap)
{
    if (!buf || !cap)
        return ls_fail("explain: no buffer");
    buf[0] = 0;
    if (op == LS_OP_CONV_DELTA) /* its plan (ls_choose_conv_delta) with cluster and shared bytes (conv_delta.cu) */
        return ls_cuda_conv_delta_describe((const ls_conv_delta_params *)params, t,
                                           dev && dev->sm_count > 0 ? dev->sm_count : 1, buf, cap);
    ls_choose_dev d;
    d.sm_count = dev && dev->sm_count > 0 ? dev->sm_count : 1;
    d.resident_per_sm = 0;
    ls_plan pl;
    if (ls_choose(op, params, t, &d, &pl))
        return -1;
    if (op == LS_OP_SSU && pl.kernel != LS_K_SSU_GENERIC) {
        d.resident_per_sm = ls_cuda_ssu_resident((const ls_ssu_params *)params, &pl);
        if (ls_choose(op, params, t, &d, &pl))
            return -1;
    }
    return ls_choose_describe(op, &pl, buf, cap) < 0 ? -1 : 0;
}

static const ls_impl linstate_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "linstate",
    .version = LS_CUDA_ARCHS_TEXT, /* the archs compiled in, e.g. "sm_90,sm_100+ptx" (CMake) */
    .runtime = "cuda",
    .caps = LS_IMPL_GRAPH | LS_IMPL_KV | LS_IMPL_VK,
    .knobs = ls_linstate_knobs,
    .n_knobs = LS_KNOB_COUNT,
    .conv_update = ls_cuda_conv_update,
    .gdn = ls_cuda_gdn,
    .kda = ls_cuda_kda,
    .ssu = ls_cuda_ssu,
    .state_copy = ls_cuda_state_copy,
    .state_accept = ls_cuda_state_accept,
    .state_zero = ls_cuda_state_zero,
    .last_error = NULL, /* the launchers set ls_last_error() */
    .explain = linstate_explain,
    .conv_delta = ls_cuda_conv_delta,
};

extern "C" const ls_impl *ls_impl_linstate_table(void) { return &linstate_impl; }
