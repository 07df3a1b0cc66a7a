/* sg_pool.c — marshalling linstate's pool-wide state ops (ls_state_params) into the kernels
 * SGLang 0.5.23's pool runs for them, written from reading MambaPool.copy_from / clear_slots
 * (srt/mem_cache/memory_pool.py, mamba_slot_fused.py) and update_mamba_state_after_mtp_verify
 * (srt/layers/attention/hybrid_linear_attn_backend.py, kernels/ops/mamba/
 * mamba_state_scatter_triton.py). peers/sglang/README.md, "Pool state ops", gives the rule. */
#include "sg_pool.h"

#include <stdio.h>
#include <string.h>

#define I32_MAX 2147483647LL

int sg_pool_check(const ls_state_params *p, int op, char *err, size_t cap)
{
    static const char *names[] = {"state_copy", "state_accept", "state_zero"};
    const char *name = names[op];
    if (p->n_buffers > LS_MAX_BUFFERS || p->layers < 1 || p->slots < 1 || p->count < 0 ||
        (p->count > 0 && (!p->dst || (op == SG_POOL_COPY && !p->src) || (op == SG_POOL_ACCEPT && !p->step)))) {
        snprintf(err, cap, "sglang: %s: bad params: %d buffers, %d layers, %d slots, count %d, index lists "
                 "src %s dst %s step %s", name, p->n_buffers, p->layers, p->slots, p->count, p->src ? "set" : "NULL",
                 p->dst ? "set" : "NULL", p->step ? "set" : "NULL");
        return -1;
    }
    if (p->n_buffers < 2) {
        snprintf(err, cap, "sglang: %s: SGLang's pool ops take the whole pool (its conv tensors and the "
                 "temporal state, every layer) in one call; this call has %d buffer(s)", name, p->n_buffers);
        return 1;
    }
    for (int b = 0; b < p->n_buffers; b++) {
        int conv = b < p->n_buffers - 1;
        int64_t item = p->buf[b].item_bytes, esz = conv ? 2 : 4;
        if (!p->buf[b].main || item <= 0) {
            snprintf(err, cap, "sglang: %s: bad params: buffer %d: main %s, item_bytes %lld", name, b,
                     p->buf[b].main ? "set" : "NULL", (long long)item);
            return -1;
        }
        if (item % esz) {
            snprintf(err, cap, "sglang: %s: buffer %d: item_bytes %lld is not a whole number of %s "
                     "elements", name, b, (long long)item, conv ? "bf16 (conv)" : "4-byte (temporal)");
            return 1;
        }
    }
    if (op == SG_POOL_ACCEPT) {
        int with_spec = 0;
        for (int b = 0; b < p->n_buffers; b++)
            with_spec |= p->buf[b].spec != NULL;
        if (p->spec_tokens < 1 || !with_spec) {
            snprintf(err, cap, "sglang: state_accept: the pool has no speculative buffers");
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------ accept */

int sg_accept_plan(const ls_state_params *p, int b, sg_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    int conv = b < p->n_buffers - 1;
    int64_t elem = p->buf[b].item_bytes / (conv ? 2 : 4);
    int64_t src_layer = (int64_t)p->slots * p->spec_tokens * elem, dst_layer = (int64_t)p->slots * elem;
    if (elem % 16 || (conv && elem % SG_POOL_KM1)) {
        snprintf(err, cap, "sglang: state_accept: buffer %d: %lld elements per slot, compiled for multiples "
                 "of 16%s (the preset shapes)", b, (long long)elem, conv ? " and of W-1 = 3" : "");
        return -1;
    }
    /* the JIT's int typing: i32 below 2^31, i64 above (only the layer strides get there) */
    int width = src_layer > I32_MAX ? (dst_layer > I32_MAX ? 2 : 1) : 0;
    out->kernel = conv ? SG_CONV_SCATTER_KERNEL : SG_SCATTER_KERNEL;
    if (conv)
        snprintf(out->key, sizeof out->key, "E%lld_KM1%d_W%d", (long long)elem, SG_POOL_KM1, width);
    else
        snprintf(out->key, sizeof out->key, "E%lld_fp32_W%d", (long long)elem, width);
    out->grid[0] = (unsigned)p->count; /* (total_requests, num_layers, cdiv(elem_per_entry, BLOCK_SIZE)) */
    out->grid[1] = (unsigned)p->layers;
    out->grid[2] = (unsigned)((elem + SG_POOL_BLOCK - 1) / SG_POOL_BLOCK);
    return 0;
}

void sg_accept_args(const ls_state_params *p, int b, const sg_plan *pl, const tk_variant *v, tk_call *c)
{
    int conv = b < p->n_buffers - 1;
    int64_t elem = p->buf[b].item_bytes / (conv ? 2 : 4), T = p->spec_tokens;
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    /* src = intermediate states / windows [layers, slots, T, item], dst = the pool [layers, slots, item] */
    tk_ptr(c, "src_ptr", p->buf[b].spec);
    tk_ptr(c, "dst_ptr", p->buf[b].main);
    tk_ptr(c, "dst_indices_raw_ptr", p->dst);
    tk_ptr(c, "step_indices_raw_ptr", p->step);
    /* our spec buffers are indexed by pool slot: the source row of request i is its slot */
    tk_ptr(c, "src_indices_raw_ptr", p->dst);
    tk_int(c, "src_layer_stride", (int64_t)p->slots * T * elem);
    tk_int(c, "src_req_stride", T * elem);
    tk_int(c, "src_step_stride", elem);
    if (conv) {
        /* dense windows in the state's orientation: (e // KM1) * KM1 + e % KM1 = e */
        tk_int(c, "src_dim_stride", SG_POOL_KM1);
        tk_int(c, "src_win_stride", 1);
    }
    tk_int(c, "dst_layer_stride", (int64_t)p->slots * elem);
    tk_int(c, "dst_req_stride", elem);
    tk_int(c, "src_req_size", p->slots);
    tk_int(c, "src_step_size", T);
    tk_int(c, "dst_req_size", p->slots);
}

/* --------------------------------------------------------------------- fused slot copy / clear */

int sg_slot_table(const ls_state_params *p, int64_t table[SG_SLOT_TABLE_LEN])
{
    int n = p->n_buffers - 1;
    memset(table, 0, sizeof(int64_t) * SG_SLOT_TABLE_LEN);
    for (int b = 0; b < n; b++) {
        int64_t feat = p->buf[b].item_bytes / 2;
        table[b] = (int64_t)(uintptr_t)p->buf[b].main;
        table[LS_MAX_BUFFERS + b] = feat;
        table[2 * LS_MAX_BUFFERS + b] = (int64_t)p->slots * feat;
        table[3 * LS_MAX_BUFFERS + b] = feat;
    }
    return n;
}

int sg_slot_plan(const ls_state_params *p, int clear, sg_plan *out, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    memset(out, 0, sizeof *out);
    int64_t max_feat = 0;
    for (int b = 0; b < p->n_buffers - 1; b++)
        if (p->buf[b].item_bytes / 2 > max_feat)
            max_feat = p->buf[b].item_bytes / 2;
    out->kernel = clear ? SG_SLOT_CLEAR_KERNEL : SG_SLOT_COPY_KERNEL;
    snprintf(out->key, sizeof out->key, "FB%lld", (long long)((max_feat + SG_POOL_BLOCK - 1) / SG_POOL_BLOCK));
    out->grid[0] = (unsigned)p->count; /* (indices, conv tensors, layers) */
    out->grid[1] = (unsigned)(p->n_buffers - 1);
    out->grid[2] = (unsigned)p->layers;
    return 0;
}

void sg_slot_args(const ls_state_params *p, int clear, const sg_plan *pl, const tk_variant *v,
                  const int64_t *dev_table, tk_call *c)
{
    tk_call_init(c, v, pl->grid[0], pl->grid[1], pl->grid[2]);
    tk_ptr(c, "ptr_arr", dev_table);
    tk_ptr(c, "feat_arr", dev_table + LS_MAX_BUFFERS);
    tk_ptr(c, "layer_stride_arr", dev_table + 2 * LS_MAX_BUFFERS);
    tk_ptr(c, "slot_stride_arr", dev_table + 3 * LS_MAX_BUFFERS);
    if (clear) {
        tk_ptr(c, "index_arr", p->dst);
    } else {
        tk_ptr(c, "src_arr", p->src);
        tk_ptr(c, "dst_arr", p->dst);
    }
}

/* ------------------------------------------------------------ torch's index kernels (ours) */

int sg_index_plan(const ls_state_params *p, sg_index_shape *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    int t = p->n_buffers - 1;
    out->layers = p->layers;
    out->rows = p->count;
    out->elem = p->buf[t].item_bytes / 4;
    out->layer_stride = (int64_t)p->slots * out->elem;
    out->n = out->layers * out->rows * out->elem;
    int64_t per_block = SG_TORCH_THREADS * SG_TORCH_PER_THREAD;
    int64_t blocks = (out->n + per_block - 1) / per_block;
    if (blocks > I32_MAX) {
        snprintf(err, cap, "sglang: temporal index copy of %lld elements needs more than 2^31-1 blocks",
                 (long long)out->n);
        return -1;
    }
    out->blocks = (unsigned)blocks;
    out->scratch_bytes = out->n * 4;
    return 0;
}
