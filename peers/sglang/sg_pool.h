/* sg_pool.h — the sglang peer's pool state ops, host half: which SGLang 0.5.23 kernels a
 * pool-wide ls_state_params call maps to (kernel, key, grid, arguments by name), the descriptor
 * rows of its fused slot kernels and the shape of our rendering of torch's index kernels.
 * Host code only (unit-tested without a GPU); peers/sglang/README.md gives the rule. */
#ifndef LS_SG_POOL_H
#define LS_SG_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "ls_kernels.h"
#include "sg_adapt.h"
#include "tk.h"

#define SG_SCATTER_KERNEL "_fused_mamba_state_scatter_with_mask_kernel"
#define SG_CONV_SCATTER_KERNEL "_fused_conv_window_scatter_with_mask_kernel"
#define SG_SLOT_COPY_KERNEL "_fused_slot_copy_kernel"
#define SG_SLOT_CLEAR_KERNEL "_fused_slot_clear_kernel"
#define SG_POOL_BLOCK 1024 /* BLOCK_SIZE of the scatter wrappers, _BLOCK of mamba_slot_fused.py */
#define SG_POOL_KM1 3      /* conv window W-1 (W = 4 for every preset) */
/* torch's index / index_put_ / index_fill_ launch shape: 128 threads, 4 elements each */
#define SG_TORCH_THREADS 128
#define SG_TORCH_PER_THREAD 4

enum { SG_POOL_COPY = 0, SG_POOL_ACCEPT = 1, SG_POOL_ZERO = 2 };

/* A pool-wide call: conv buffers 0..n_buffers-2 (bf16), the temporal buffer last (moved as 4-byte
 * elements); every layer; indices present for the op. 0; 1 with err: a call SGLang's pool ops have
 * no counterpart for (one buffer of one layer, odd item sizes), answered LS_OP_UNSUPPORTED; -1
 * with err: bad params (NULL index list, count < 0, no spec buffers for accept). */
int sg_pool_check(const ls_state_params *p, int op, char *err, size_t cap);

/* accept, buffer b: the conv-window scatter (conv) or the state scatter (temporal), grid
 * (count, layers, cdiv(elem, 1024)); key by element count and the widths of the layer strides. */
int sg_accept_plan(const ls_state_params *p, int b, sg_plan *out, char *err, size_t cap);
void sg_accept_args(const ls_state_params *p, int b, const sg_plan *pl, const tk_variant *v, tk_call *c);

/* The descriptor of the fused slot kernels (build_conv_slot_descriptor): one int64 row per conv
 * tensor, stored as four columns of LS_MAX_BUFFERS entries (ptr, feat, layer_stride, slot_stride;
 * strides and feat in bf16 elements). */
#define SG_SLOT_TABLE_LEN (4 * LS_MAX_BUFFERS)
int sg_slot_table(const ls_state_params *p, int64_t table[SG_SLOT_TABLE_LEN]);
/* copy (clear = 0) or zero (clear = 1) of the conv tensors: grid (count, n_conv, layers), key
 * FB<cdiv(largest conv item, 1024)>. */
int sg_slot_plan(const ls_state_params *p, int clear, sg_plan *out, char *err, size_t cap);
/* dev_table: the device copy of sg_slot_table (SG_SLOT_TABLE_LEN int64). */
void sg_slot_args(const ls_state_params *p, int clear, const sg_plan *pl, const tk_variant *v,
                  const int64_t *dev_table, tk_call *c);

/* Our rendering of torch's advanced-index kernels on the temporal buffer [layers, slots, elem]
 * (4-byte elements): gather temporal[:, idx] into a [layers, count, elem] scratch, scatter it to
 * temporal[:, idx], or fill temporal[:, idx] with 0. One launch each, grid `blocks` of 128. */
typedef struct sg_index_shape {
    int64_t layers, rows, elem;   /* elem: 4-byte elements of one slot of one layer */
    int64_t layer_stride;         /* slots * elem */
    int64_t n;                    /* layers * rows * elem: elements visited */
    unsigned blocks;              /* cdiv(n, 128 * 4) */
    int64_t scratch_bytes;        /* n * 4: the gather's output (torch's temporary) */
} sg_index_shape;
int sg_index_plan(const ls_state_params *p, sg_index_shape *out, char *err, size_t cap);

#endif
