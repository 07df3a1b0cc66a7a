/*
 * pool.h — the pool family's callbacks, shared by its two files and its descriptor (pool.c):
 * pool_ops.c times the pool's host-side paths (alloc, free, fork), pool_state.c the device-side
 * slot operations (copy, accept) as launches only.
 */
#ifndef LS_BENCH_POOL_H
#define LS_BENCH_POOL_H

#include "family.h"

/* pool_ops.c */
int bench_pool_alloc_setup(bench_ctx *x);
int bench_pool_alloc_run(void *x, int rot, ls_stream s);
int bench_pool_alloc_reset(void *x);
int bench_pool_alloc_verify(bench_ctx *x, double *max_rel_err);
int bench_pool_free_setup(bench_ctx *x);
int bench_pool_free_run(void *x, int rot, ls_stream s);
int bench_pool_free_reset(void *x);
int bench_pool_free_verify(bench_ctx *x, double *max_rel_err);
int64_t bench_pool_zero_bytes(const bench_ctx *x);
int bench_pool_fork_setup(bench_ctx *x);
int bench_pool_fork_run(void *x, int rot, ls_stream s);
int bench_pool_fork_reset(void *x);
int bench_pool_fork_verify(bench_ctx *x, double *max_rel_err);
int64_t bench_pool_copy_bytes(const bench_ctx *x);
int64_t bench_pool_accept_bytes(const bench_ctx *x);
/* The family's pool: cap_mult·B slots, spec buffers for accept, layers from the working-set rule
 * (one call touches B·layer_bytes·touch bytes per layer); rotate_sets 1: as many such sets of
 * slots as the rotation rule asks (x->n_rot, pool_ops.c). 0, BENCH_OOM or -1. */
int bench_pool_family_create(bench_ctx *x, int cap_mult, ls_zero_policy zero, int touch, int rotate_sets);

/* pool_state.c: copy and accept, "fused" (one backend state op over every buffer and layer) or
 * "per-tensor" (one launch per (buffer, layer)). */
int bench_pool_copy_setup(bench_ctx *x);
int bench_pool_copy_per_tensor_setup(bench_ctx *x);
int bench_pool_accept_setup(bench_ctx *x);
int bench_pool_accept_per_tensor_setup(bench_ctx *x);
int bench_pool_state_run(void *x, int rot, ls_stream s);
/* The fused params (per-tensor: the first launch's) and their op, for the `kernel` column. */
const void *bench_pool_state_launch(const bench_ctx *x, ls_op *op);
int bench_pool_state_verify(bench_ctx *x, double *max_rel_err);

#endif /* LS_BENCH_POOL_H */
