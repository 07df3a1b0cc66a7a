/*
 * ls_pool.h — the unified linear-attention state pool (docs/pool.md) and the model presets that
 * describe it (docs/presets.md).
 *
 * One descriptor serves Mamba2, GDN and KDA: a LIST of conv buffers (each with its own shape and
 * orientation), one temporal (SSM) shape, optional speculative buffers for T draft tokens. Every
 * pool operation is one loop over that buffer list; no operation branches on the mechanism.
 * Memory comes only from the backend op table (ls_kernels.h), so the same pool runs on the host
 * backend (tests, CI) and on the GPU.
 */
#ifndef LS_POOL_H
#define LS_POOL_H

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LS_MAX_CONV 4

typedef enum ls_mechanism { LS_MECH_MAMBA2 = 0, LS_MECH_GDN = 1, LS_MECH_KDA = 2 } ls_mechanism;
const char *ls_mechanism_name(ls_mechanism m); /* "mamba2" | "gdn" | "kda" */

/* --------------------------------------------------------------- model presets (docs/presets.md) */

/* Full-model hyper-parameters, as in the HF configs (not divided by tp). */
typedef struct ls_model {
    const char *name;            /* stable preset key, e.g. "qwen3-next-80b-a3b" */
    ls_mechanism mechanism;
    int32_t layers;              /* linear-attention layers carrying state */
    int32_t conv_width;          /* W (4 for every preset) */
    int32_t conv_bias;           /* conv has a bias (Mamba2 presets) */
    ls_dtype conv_weight_dtype;  /* bf16; fp32 for Kimi */
    /* GDN / KDA */
    int32_t heads_qk, heads_v, dk, dv;
    /* Mamba2 */
    int32_t intermediate, nheads, head_dim, dstate, ngroups;
} ls_model;

/* Per-TP-rank kernel shape derived from a model (docs/presets.md, group replication included). */
typedef struct ls_shape {
    const ls_model *model;
    int32_t tp;
    ls_mechanism mechanism;
    int32_t layers, conv_width;
    int32_t heads_qk, heads_v, dk, dv;                 /* GDN/KDA per rank */
    int32_t nheads, head_dim, dstate, ngroups;         /* Mamba2 per rank */
    int32_t conv_channels;       /* channels of ONE conv tensor (GDN/Mamba2: all; KDA: each of 3) */
} ls_shape;

int ls_model_count(void);
const ls_model *ls_model_at(int i);
const ls_model *ls_model_find(const char *name);   /* NULL if unknown */
/* 0 on success; ls_fail naming the bad value (tp not dividing heads, ...). */
int ls_shape_from_model(const ls_model *m, int tp, ls_shape *out);

/* --------------------------------------------------------------- the state descriptor */

typedef enum ls_conv_orient {
    LS_CONV_CHANNEL_MAJOR = 0,   /* [C, W-1], window innermost (Mamba2, GDN) */
    LS_CONV_WINDOW_MAJOR = 1     /* [W-1, C], channel innermost (KDA) */
} ls_conv_orient;

typedef struct ls_conv_shape {
    int32_t channels;            /* C */
    int32_t window;              /* W-1 */
    ls_conv_orient orient;
} ls_conv_shape;

typedef struct ls_state_desc {
    ls_dtype conv_dtype;         /* bf16 */
    ls_dtype temporal_dtype;     /* fp32 (default) or bf16 */
    int32_t layers;              /* L */
    int32_t n_conv;              /* 1 (Mamba2/GDN) or 3 (KDA) */
    ls_conv_shape conv[LS_MAX_CONV];
    int32_t temporal[3];         /* [heads, d1, d2]; innermost last */
    int32_t spec_tokens;         /* T draft tokens; 0 = no speculative buffers */
} ls_state_desc;

/* Descriptor of a model at a tp and state dtype, with spec buffers for spec_tokens (0 = none). */
int ls_state_desc_from_shape(const ls_shape *s, ls_dtype temporal_dtype, int spec_tokens,
                             ls_state_desc *out);
/* Validate a (possibly user-built) descriptor; 0 or ls_fail naming the bad field. */
int ls_state_desc_check(const ls_state_desc *d);

int64_t ls_conv_item_bytes(const ls_state_desc *d, int i);   /* one conv tensor, one slot, one layer */
int64_t ls_temporal_item_bytes(const ls_state_desc *d);      /* temporal, one slot, one layer */
int64_t ls_layer_bytes(const ls_state_desc *d);              /* all tensors, one slot, one layer */
int64_t ls_bytes_per_req(const ls_state_desc *d);            /* mamba_cache_per_req = L * layer */
int64_t ls_spec_bytes_per_req(const ls_state_desc *d);       /* T * bytes_per_req (0 if no spec) */

/*
 * Pool capacity S from a memory budget, as docs/pool.md (AFTER): with radix cache
 * S = floor(budget * r/(1+r) / per_req / (1+T)); budget_bytes is `rest` in bytes. 0 if it does
 * not fit one slot. ratio r = 0.9 in SGLang.
 */
int64_t ls_capacity_from_budget(const ls_state_desc *d, int64_t budget_bytes, double ratio);

/* --------------------------------------------------------------- the pool */

typedef enum ls_pad_policy {
    LS_PAD_LAST = 0,             /* slots 0..S-1 allocatable, slot S is padding (AFTER) */
    LS_PAD_FIRST = 1             /* slot 0 is padding, slots 1..S allocatable (#17404) */
} ls_pad_policy;

typedef enum ls_zero_policy {
    LS_ZERO_AT_FREE = 0,         /* AFTER: free zeroes the slots */
    LS_ZERO_AT_ALLOC = 1         /* #14792: alloc zeroes the slots */
} ls_zero_policy;

typedef struct ls_pool_config {
    int32_t capacity;            /* S allocatable slots (the pool holds S+1) */
    ls_pad_policy pad;
    ls_zero_policy zero;
    const ls_impl *impl;         /* whose state_copy / accept / zero the slot operations use
                                  * (required; the caller picks, e.g. ls_impl_default(runtime)) */
    const ls_tuning *tuning;     /* its tuning (required; e.g. ls_tuning_default); copied */
} ls_pool_config;

typedef struct ls_pool ls_pool;

/* NULL on failure (bad descriptor, out of memory: ls_last_error says which). Buffers start zeroed. */
ls_pool *ls_pool_create(const ls_state_desc *d, const ls_pool_config *cfg, const ls_runtime *be);
void ls_pool_destroy(ls_pool *p);

const ls_state_desc *ls_pool_desc(const ls_pool *p);
const ls_runtime *ls_pool_runtime(const ls_pool *p);
const ls_impl *ls_pool_impl(const ls_pool *p);
int32_t ls_pool_capacity(const ls_pool *p);       /* S */
int32_t ls_pool_slots(const ls_pool *p);          /* S + 1 */
int32_t ls_pool_padding_slot(const ls_pool *p);   /* S or 0 */
int32_t ls_pool_free_count(const ls_pool *p);
int ls_pool_is_allocated(const ls_pool *p, int32_t slot);

/*
 * Slot operations. Slot lists are HOST arrays; the pool moves them to backend memory itself.
 * Each returns 0, or -1 with ls_last_error() set and the pool unchanged. The memory work is
 * queued on the runtime's default stream and the call returns without waiting for it (the
 * device's own errors surface at a later sync); ls_pool_sync waits for it.
 */
int ls_pool_alloc(ls_pool *p, int32_t n, int32_t *slots_out);   /* exhausted: error, nothing taken */
int ls_pool_free(ls_pool *p, int32_t n, const int32_t *slots);  /* double/unknown slot: error */
int ls_pool_copy(ls_pool *p, int32_t n, const int32_t *src, const int32_t *dst); /* overlap-safe */
int ls_pool_fork(ls_pool *p, int32_t src, int32_t *dst_out);
/* For each request i: main state of slots[i] <- draft step steps[i] (steps[i] < 0: skipped). */
int ls_pool_accept(ls_pool *p, int32_t n, const int32_t *slots, const int32_t *steps);
/* Waits until every operation queued so far is done (before reading the pool from the host or
 * from a stream other than the default one). 0, or -1 with the device's error. */
int ls_pool_sync(ls_pool *p);

/* Buffer addresses (backend memory). Per-layer views start at the layer's slot 0. */
int32_t ls_pool_n_buffers(const ls_pool *p);      /* n_conv + 1 (temporal is last) */
void *ls_pool_conv(const ls_pool *p, int i, int layer);
void *ls_pool_temporal(const ls_pool *p, int layer);
void *ls_pool_spec_conv(const ls_pool *p, int i, int layer);  /* NULL without spec buffers */
void *ls_pool_spec_temporal(const ls_pool *p, int layer);
/* Fill the buffer table of the state ops (ls_state_params) without index arrays. */
void ls_pool_state_params(const ls_pool *p, ls_state_params *out);

/* Contiguous buffer infos for PD transfer (docs/pool.md): one entry per (tensor, layer). */
typedef struct ls_buf_info {
    void *data_ptr;              /* &X[l][0] */
    int64_t data_len;            /* bytes of X[l] = slots * item_len */
    int64_t item_len;            /* bytes of one slot */
} ls_buf_info;
/* Number of entries written (<= max); include_spec follows AFTER (1) or #16708 (0). */
int ls_pool_buf_infos(const ls_pool *p, int include_spec, ls_buf_info *out, int max);

#ifdef __cplusplus
}
#endif
#endif /* LS_POOL_H */
