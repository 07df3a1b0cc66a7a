/*
 * pool.c — the pool family's descriptor: its rows (callbacks in pool_ops.c and pool_state.c).
 */
#include "pool.h"

/* clang-format off */
static const bench_entry rows[] = { /* bench_entry (bench.h) */
    {"pool", "alloc", "zero_at_alloc", 1, ALL, B_ | D_, BENCH_DRAFT_NONE,
     bench_pool_alloc_setup, bench_pool_alloc_run, bench_pool_alloc_reset, bench_pool_alloc_verify, NULL,
     bench_pool_zero_bytes, POOL_OPS, NULL},
    {"pool", "free", "zero_at_free", 1, ALL, B_ | D_, BENCH_DRAFT_NONE,
     bench_pool_free_setup, bench_pool_free_run, bench_pool_free_reset, bench_pool_free_verify, NULL,
     bench_pool_zero_bytes, POOL_OPS, NULL},
    /* copy and accept: device launches only; one state op over every buffer and layer ... */
    {"pool", "copy", "fused", 1, ALL, B_ | D_ | G_, BENCH_DRAFT_NONE,
     bench_pool_copy_setup, bench_pool_state_run, NULL, bench_pool_state_verify, NULL, bench_pool_copy_bytes, POOL_OPS, bench_pool_state_launch},
    /* ... or one launch per (buffer, layer), as a per-tensor implementation does */
    {"pool", "copy", "per-tensor", 0, ALL, B_ | D_ | G_, BENCH_DRAFT_NONE,
     bench_pool_copy_per_tensor_setup, bench_pool_state_run, NULL, bench_pool_state_verify, NULL,
     bench_pool_copy_bytes, POOL_OPS, bench_pool_state_launch},
    {"pool", "fork", "fork_from", 1, ALL, B_ | D_, BENCH_DRAFT_NONE,
     bench_pool_fork_setup, bench_pool_fork_run, bench_pool_fork_reset, bench_pool_fork_verify, NULL,
     bench_pool_copy_bytes, POOL_OPS, NULL},
    {"pool", "accept", "fused", 1, ALL, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_pool_accept_setup, bench_pool_state_run, NULL, bench_pool_state_verify, NULL,
     bench_pool_accept_bytes, POOL_OPS, bench_pool_state_launch},
    {"pool", "accept", "per-tensor", 0, ALL, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_pool_accept_per_tensor_setup, bench_pool_state_run, NULL, bench_pool_state_verify, NULL,
     bench_pool_accept_bytes, POOL_OPS, bench_pool_state_launch},
};
/* clang-format on */

const bench_family bench_family_pool = {rows, (int)(sizeof rows / sizeof rows[0])};
