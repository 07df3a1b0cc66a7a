/*
 * impl_linstate.cu — the "linstate" impl: the CUDA kernels of kernels/cuda on the cuda runtime,
 * their tuning knobs and capability bits. The knob indices are LS_KNOB_* in ls_cuda.h, in the
 * order of the table below.
 */
#include "ls_cuda.h"
#include "../impl_internal.h"

static const ls_knob_def linstate_knobs[] = {
    {"pdl", "on|off", "programmatic dependent launch: each kernel overlaps its start with the previous kernel of the stream"},
    {"conv.variant", "auto|vec8|vec2|scalar|tile1|tile2|pipe|pipe_deep", "conv update kernel (auto: the per-shape choice)"},
    {"conv.prefetch", "on|off", "conv tile kernel: prefetch the rows' state into L2 before the PDL wait"},
    {"conv.speculate", "auto|off|on|miss", "conv small-batch kernels: guess each row's slot before the PDL wait (miss: every guess wrong, tests)"},
    {"delta.variant", "auto|regs|bulk", "GDN/KDA kernel at large batch (auto: the per-shape choice)"},
    {"ssu.variant", "auto|narrow|cs", "Mamba2 SSU tiles at large batch (auto: the per-shape choice)"},
    {"ssu.speculate", "auto|off|on|miss", "SSU: guess the slot and prefetch the state before the PDL wait (miss: every guess wrong, tests)"},
};

static const ls_impl linstate_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "linstate",
    .version = "",
    .runtime = "cuda",
    .caps = LS_IMPL_GRAPH,
    .knobs = linstate_knobs,
    .n_knobs = (int32_t)(sizeof linstate_knobs / sizeof linstate_knobs[0]),
    .conv_update = ls_cuda_conv_update,
    .gdn = ls_cuda_gdn,
    .kda = ls_cuda_kda,
    .ssu = ls_cuda_ssu,
    .state_copy = ls_cuda_state_copy,
    .state_accept = ls_cuda_state_accept,
    .state_zero = ls_cuda_state_zero,
    .last_error = NULL, /* the launchers set ls_last_error() */
    .explain = NULL,
};

extern "C" const ls_impl *ls_impl_linstate_table(void) { return &linstate_impl; }
