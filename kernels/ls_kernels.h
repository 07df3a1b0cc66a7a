/*
 * ls_kernels.h — the op API of linstate: dtypes, one params struct per op, the runtime table
 * (memory, streams, events, graphs: how bytes move and time is kept) and the implementation
 * ABI (ls_impl: a named set of op functions with its tuning knobs; also the plugin ABI).
 * The one header to include (plugins too); each part is its own file under api/:
 *   api/dtypes.h      fp32 / bf16 and host conversions
 *   api/errors.h      ls_last_error / ls_fail
 *   api/conv.h        causal conv1d update        api/delta.h       GDN and KDA recurrence
 *   api/conv_delta.h  the fused conv + recurrence api/ssu.h         Mamba2 selective state update
 *   api/state_ops.h   copy / accept / zero over a pool (each op: params, check, host oracle)
 *   api/runtime.h     the runtime table (ls_runtime) and the runtimes by name
 *   api/impl.h        the impl ABI (ls_impl, knobs, tunings): the plugin ABI, LS_IMPL_ABI
 *   api/registry.h    impls by name, plugin loading, tuning parse / print (kernels/impl.c)
 *
 * Two runtimes: "host" (kernels/ref, runs anywhere) and "cuda" (kernels/cuda, built when nvcc
 * is found). Built-in impls: "host" (the float64-accumulating oracle) and "linstate" (the CUDA
 * kernels). Pool and bench code never call a kernel directly; they call an impl's op.
 *
 * Conventions shared by every op (docs/ops.md):
 *  - all pointers in a params struct point into the backend's memory (device memory for cuda);
 *  - strides are in ELEMENTS unless the name says _bytes;
 *  - slot index arrays are int32, one entry per request row; -1 marks a padding row (docs/ops.md);
 *  - activations are bf16 (stored as uint16_t), state is fp32 or bf16, math is fp32 on the GPU
 *    and float64 in the host reference;
 *  - T (tokens) = 1 is decode; T > 1 is target verify: T intermediate states/windows are written
 *    to the speculative buffer `inter`, and the final state is written back only when
 *    disable_state_update == 0;
 *  - speculative buffers are indexed by pool slot (docs/pool.md, AFTER layout): inter[slot][t].
 *  - every op returns 0 on success, non-zero on failure with ls_last_error() describing it.
 */
#ifndef LS_KERNELS_H
#define LS_KERNELS_H

#include "api/dtypes.h"
#include "api/errors.h"
#include "api/conv.h"
#include "api/delta.h"
#include "api/conv_delta.h"
#include "api/ssu.h"
#include "api/state_ops.h"
#include "api/runtime.h"
#include "api/impl.h"
#include "api/registry.h"

#endif /* LS_KERNELS_H */
