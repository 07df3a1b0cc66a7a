/*
 * family.h — what the benchmark families (bench/families/) share and nothing outside them needs:
 * their callbacks (listed in the registry), the minimum-byte formulas (docs/bytes.md), the helpers
 * that build a case's context (pool, slots, inputs on the backend) and the verification helpers.
 * The driver (the .c files of bench/) sees a family only through its registry rows (bench.h: bench_entry) and
 * the case context (bench_ctx).
 */
#ifndef LS_BENCH_FAMILY_H
#define LS_BENCH_FAMILY_H

#include <stdint.h>

#include "bench.h"

/* ------------------------------------------------------------------ descriptors */

/* One per family file, listed in plan order by registry.c (gdn and kda share delta.c's; the pool
 * family's rows are in pool.c, its callbacks in pool_ops.c and pool_state.c). */
extern const bench_family bench_family_conv;       /* conv.c: conv1d_update */
extern const bench_family bench_family_delta;      /* delta.c: gdn, kda */
extern const bench_family bench_family_conv_delta; /* conv_delta.c: conv_delta */
extern const bench_family bench_family_ssu;        /* ssu.c: mamba2_ssu */
extern const bench_family bench_family_pool;       /* pool.c: pool */

/* Shorthands of the descriptors' row tables: mechanisms, axes, impl ops. */
#define ALL BENCH_MECH_ALL
#define GDN BENCH_MECH_BIT(LS_MECH_GDN)
#define KDA BENCH_MECH_BIT(LS_MECH_KDA)
#define MAMBA2 BENCH_MECH_BIT(LS_MECH_MAMBA2)
#define B_ BENCH_AXIS_BATCH
#define T_ BENCH_AXIS_DRAFT
#define D_ BENCH_AXIS_DTYPE
#define G_ BENCH_AXIS_GRAPH
#define P_ BENCH_AXIS_POOL
#define CONV_OPS BENCH_OP(LS_OP_CONV_UPDATE)
/* Every pool path: the pool's slot operations go through the impl's three state ops. */
#define POOL_OPS (BENCH_OP(LS_OP_STATE_COPY) | BENCH_OP(LS_OP_STATE_ACCEPT) | BENCH_OP(LS_OP_STATE_ZERO))

/* conv.c, shared with conv_delta.c: the pool descriptor's conv list as ONE tensor of the summed
 * channels (KDA's q, k, v in one window-major tensor; same orientation and window required).
 * 0 or -1 (error set). */
int bench_conv_concat_desc(ls_state_desc *d);
/* Test hook (conv.c): the set-up case's conv launch params of rotated layer `layer` (*out: n
 * entries, one per launch); returns n, or 0 before setup. */
int bench_conv_layer_params(const struct bench_ctx *x, int layer, const ls_conv_params **out);

/* ------------------------------------------------------------------ minimum bytes (docs/bytes.md) */

/* Element sizes used by the formulas: s_a activation, s_c conv state, s_s SSM state, s_w weight. */
int64_t ls_bytes_conv_update(int64_t B, int64_t T, int64_t C, int64_t W, int64_t s_a, int64_t s_c,
                             int64_t s_w, int bias, int verify_windows);
int64_t ls_bytes_gdn_conv_clone(int64_t S, int64_t C, int64_t W, int64_t s_c);
int64_t ls_bytes_gdn_decode(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V,
                            int64_t s_a, int64_t s_s);
int64_t ls_bytes_gdn_gating(int64_t B, int64_t T, int64_t HV, int64_t s_a);
int64_t ls_bytes_gdn_verify_recurrence(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K,
                                       int64_t V, int64_t s_a, int64_t s_s);
int64_t ls_bytes_gdn_verify_fused(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V,
                                  int64_t s_a, int64_t s_s);
int64_t ls_bytes_accept(int64_t N, int64_t L, int64_t HV, int64_t K, int64_t V, int64_t s_s,
                        int64_t C, int64_t W, int64_t s_c);
int64_t ls_bytes_kda(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V, int64_t s_a,
                     int64_t s_s, int verify);
int64_t ls_bytes_kda_after_extra(int64_t B, int64_t HV, int64_t K, int64_t V, int64_t s_s);
int64_t ls_bytes_ssu(int64_t B, int64_t T, int64_t nh, int64_t hd, int64_t ng, int64_t ds,
                     int64_t s_a, int64_t s_s, int verify);
int64_t ls_bytes_conv_delta(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V, int64_t W,
                            int64_t s_a, int64_t s_c, int64_t s_s, int64_t s_w, int bias, int kda);
int64_t ls_bytes_pool_zero(int64_t n, int64_t per_req);
int64_t ls_bytes_pool_copy(int64_t n, int64_t per_req);
int64_t ls_bytes_pd_transfer(int64_t per_req, int64_t T, int after_with_spec);


/* ------------------------------------------------------------------ per-case context (context.c) */

#define BENCH_VERIFY_ROWS 8   /* rows gathered into the verification sub-batch */

/* Host memory owned by the context (zeroed; freed at teardown). NULL + error on failure. */
void *bench_host_alloc(bench_ctx *x, size_t bytes);
/* Backend memory owned by the context; NULL + error on failure (out of memory). */
void *bench_dev_alloc(bench_ctx *x, size_t bytes);
/* n random bf16 values in [lo, hi), never 0 (host array kept in *host_out if non-NULL); uploaded. */
uint16_t *bench_dev_rand_bf16(bench_ctx *x, size_t n, double lo, double hi, uint16_t **host_out);
float *bench_dev_rand_f32(bench_ctx *x, size_t n, double lo, double hi, float **host_out);
/*
 * Inputs of every rotated layer (docs/timing.md "Setup"): `layers` arrays of n random values of
 * dtype dt in [lo, hi), never 0, in ONE backend allocation, layer l at element l*n. Layer 0 is
 * drawn from the case PRNG as bench_dev_rand_* draws (its host copy in *host0, for the
 * verification gate, which runs on layer 0); layers 1.. tile a random chunk of their own on the
 * device. NULL + error on failure.
 */
void *bench_dev_rand_layers(bench_ctx *x, int layers, size_t n, ls_dtype dt, double lo, double hi, void **host0);
/* As bench_dev_rand_layers with layer 0 given (host array h of n elements); layers 1.. random. */
void *bench_dev_layers_from(bench_ctx *x, int layers, const void *h, size_t n, ls_dtype dt, double lo, double hi);
/* Host buffer of n random values of dtype dt (bf16 stored as uint16_t, fp32 as float). */
void *bench_host_rand(bench_ctx *x, size_t n, ls_dtype dt, double lo, double hi);

/*
 * Layers to rotate over: enough that n_rot * call_bytes >= 8 x L2 (regime rotate; 1 otherwise),
 * at most the model's linear layers and env->max_rot, and n_rot * layer_pool_bytes within the
 * memory budget, where layer_pool_bytes is what ONE rotated layer holds: its pool share plus
 * its own inputs, outputs and weights. Returns n_rot >= 1, or 0 when one layer does not fit
 * (-> skipped:oom).
 */
int bench_rotation_layers(const bench_ctx *x, int64_t call_bytes, int64_t layer_pool_bytes);
/*
 * Layers of a pool path's pool (one call covers them all): bench_rotation_layers' count for
 * call_bytes = layer_bytes (what one call moves per layer) under every cache regime, so a pool
 * path times the same call whether L2 is rotated, flushed or hot.
 */
int bench_pool_layers(const bench_ctx *x, int64_t layer_bytes, int64_t layer_pool_bytes);
/*
 * Slot sets to rotate over, for pool paths whose one call already covers every layer: enough
 * that n_sets * call_bytes >= 8 x L2 (regime rotate; 1 otherwise), at most env->max_rot, and
 * base_bytes + n_sets * set_pool_bytes within the budget. Returns n_sets >= 1, or 0 when one set
 * does not fit (-> skipped:oom).
 */
int bench_rotation_sets(const bench_ctx *x, int64_t call_bytes, int64_t set_pool_bytes, int64_t base_bytes);
/*
 * Creates the case pool: descriptor of the case's shape with `layers` layers, SSM dtype dt and
 * spec buffers for spec_tokens, capacity S slots. Every buffer (main and spec, padding slot
 * included) is filled with random non-zero values of its dtype, so no case ever times zeros.
 * Returns 0, BENCH_OOM or -1.
 */
int bench_pool_create(bench_ctx *x, int layers, ls_dtype dt, int spec_tokens, int32_t capacity,
                      ls_zero_policy zero);
/* As bench_pool_create with a caller-built descriptor (layers and spec_tokens set). */
int bench_pool_create_desc(bench_ctx *x, const ls_state_desc *d, int32_t capacity, ls_zero_policy zero);
/* Allocates n slots from the pool into x->slots in random order and uploads them (slots_dev). */
int bench_take_slots(bench_ctx *x, int32_t n);
/* Pool capacity S of a kernel case: c->pool_slots, or the serving default for its batch and T
 * (BENCH_SERVING_SLOTS*, the host one when env's backend has no device memory). */
int32_t bench_case_capacity(const bench_case *c, const bench_env *env);
/* Kernel cases: takes every slot of the pool (a full serving pool) and draws, per rotated layer
 * (x->n_rot), B distinct random slots of them; x->slots / slots_dev are layer 0's (the
 * verification gate's), bench_layer_slots gives layer l's. 0 or -1. */
int bench_take_layer_slots(bench_ctx *x, int32_t B);
/* Backend slot list of rotated layer l (after bench_take_layer_slots; else slots_dev). */
const int32_t *bench_layer_slots(const bench_ctx *x, int l);
/*
 * The setup skeleton of a kernel case (conv, gdn, kda, mamba2_ssu, conv_delta): the pool of
 * descriptor d (d->layers set here) with `capacity` slots over as many rotated layers as fit
 * (bench_rotation_layers: the case's bytes per call; per layer its pool share, main and spec
 * buffers, plus `layer_inputs` bytes of its own tensors), then the batch's slots: B per rotated
 * layer (per_layer, bench_take_layer_slots) or one list of B (bench_take_slots), and the family's
 * state: x->priv, priv_bytes of zeroed host memory. Sets x->n_rot and x->rotated. Returns 0,
 * BENCH_OOM or -1.
 */
int bench_kernel_setup(bench_ctx *x, ls_state_desc *d, int32_t capacity, int64_t layer_inputs, int per_layer,
                       size_t priv_bytes);
/* Picks up to BENCH_VERIFY_ROWS distinct request rows of the batch (sorted). Returns the count. */
int bench_pick_rows(bench_ctx *x, int *rows);

/* rc of an impl op; on failure, the impl's own reason (ls_impl.last_error) becomes the error,
 * and LS_OP_UNSUPPORTED is remembered for the case's status. */
static inline int bench_impl_rc(bench_ctx *x, int rc)
{
    if (rc == LS_OP_UNSUPPORTED)
        x->unsupported = 1;
    const char *e = rc && x->im->last_error ? x->im->last_error() : NULL;
    if (e && *e)
        ls_fail("impl %s: %s", x->im->name, e);
    return rc;
}

/* ------------------------------------------------------------------ verification helpers */

/* Normalised error of n values of dtype dt; +inf when any value is NaN/inf or ref is all zero
 * while dev is not. Accumulates into *worst (max). */
double bench_compare(const void *dev, const void *ref, size_t n, ls_dtype dt, double *worst);
/* Fill n elements of dtype dt at backend pointer p with NaN (poison before an op). */
int bench_poison(bench_ctx *x, void *dev_ptr, size_t n, ls_dtype dt);
/* Copy `bytes` from backend memory at dev+offset into host memory. */
int bench_d2h(bench_ctx *x, void *host, const void *dev, size_t bytes);
/* Rows rows[0..n) (row_bytes each) of host array src gathered into a new host array; if dev_out,
 * also uploaded to new backend memory. NULL on failure. */
void *bench_gather(bench_ctx *x, const void *src, size_t row_bytes, const int *rows, int n, void **dev_out);
/* A poisoned (NaN) output of n elements on both sides: returns the host one, *dev_out the other. */
void *bench_output_pair(bench_ctx *x, size_t n, ls_dtype dt, void **dev_out);
/*
 * State tensors of the sampled slots. Element (slot s) starts at dev_base + s*slot_stride elements
 * and spans `item` elements. seed: random content uploaded into each slot, returned as the
 * reference's compact host copy [n][item]; poison: NaN into each slot, returns a NaN compact host
 * copy; check: downloads each slot and compares with the compact reference (into *worst).
 */
void *bench_state_seed(bench_ctx *x, void *dev_base, int64_t slot_stride, size_t item, ls_dtype dt,
                       const int32_t *slots, int n);
void *bench_state_poison(bench_ctx *x, void *dev_base, int64_t slot_stride, size_t item, ls_dtype dt,
                         const int32_t *slots, int n);
int bench_state_check(bench_ctx *x, const void *dev_base, int64_t slot_stride, size_t item, ls_dtype dt,
                      const int32_t *slots, int n, const void *ref, double *worst);
/*
 * One state tensor of a kernel's verification sub-batch: the pool state of the sampled slots
 * (item elements per slot, state_stride apart) and, for a verify (T > 1), its intermediate states
 * (T x item per slot, inter_stride apart; inter NULL: none). begin seeds the state
 * (bench_state_seed) and poisons the intermediates (bench_state_poison), keeping the reference's
 * compact copies in ref / inter_ref; check compares both after the op, into *worst.
 */
typedef struct bench_state_gate {
    void *state;
    int64_t state_stride;
    void *inter;
    int64_t inter_stride;
    size_t item;
    int T;
    ls_dtype dt;
    const int32_t *slots; /* the sampled rows' pool slots (bench_sub_slots) */
    int n;
    void *ref, *inter_ref; /* set by begin */
} bench_state_gate;
int bench_state_gate_begin(bench_ctx *x, bench_state_gate *g);
int bench_state_gate_check(bench_ctx *x, const bench_state_gate *g, double *worst);
/* The end of a kernel verification, after the op, the sync and the reference: *max_rel_err from
 * the bf16 output (n_out values at dev vs ref) and each of the n gates. 0 or -1. */
int bench_verify_kernel(bench_ctx *x, const void *dev, const void *ref, size_t n_out, const bench_state_gate *g,
                        int n, double *max_rel_err);
/* Downloads n elements of a backend output and compares them with the host reference. */
int bench_output_check(bench_ctx *x, const void *dev, const void *ref, size_t n, ls_dtype dt, double *worst);
/* The sampled rows' pool slots (host array returned, backend copy in *dev_out) and the compact
 * slot ids 0..n-1 the reference uses in *compact_out. NULL on failure. */
int32_t *bench_sub_slots(bench_ctx *x, const int *rows, int n, int32_t **dev_out, int32_t **compact_out);

#endif /* LS_BENCH_FAMILY_H */
