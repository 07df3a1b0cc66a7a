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

/* Family callbacks (one file per family), listed in the registry table of registry.c. */
/* conv.c: "causal_silu" / "3-buffer" / "in-place" (the pool's own conv tensors), "concat" (KDA:
 * q,k,v in one window-major tensor of 3C channels), "clone" (GDN verify on a clone of the layer). */
int bench_conv_setup(struct bench_ctx *x);
int bench_conv_concat_setup(struct bench_ctx *x);
int bench_conv_clone_setup(struct bench_ctx *x);
int bench_conv_run(void *x, int rot, ls_stream s);
const void *bench_conv_launch(const struct bench_ctx *x, ls_op *op);
int bench_conv_verify(struct bench_ctx *x, double *max_rel_err);
int64_t bench_conv_bytes(const struct bench_ctx *x);
/* Test hook: the set-up case's conv launch params of rotated layer `layer` (*out: n entries,
 * one per launch); returns n, or 0 before setup. */
int bench_conv_layer_params(const struct bench_ctx *x, int layer, const ls_conv_params **out);

/* The pool descriptor's conv list as ONE tensor of the summed channels (KDA's q, k, v in one
 * window-major tensor; same orientation and window required). 0 or -1 (error set). */
int bench_conv_concat_desc(ls_state_desc *d);

/* conv_delta.c: the fused conv update + GDN/KDA recurrence (the impl's conv_delta op, "fused")
 * and the same case as the impl's conv_update then gdn/kda ops ("back-to-back", one call). */
int bench_conv_delta_setup(struct bench_ctx *x);
int bench_conv_delta_b2b_setup(struct bench_ctx *x);
int bench_conv_delta_run(void *x, int rot, ls_stream s);
int bench_conv_delta_verify(struct bench_ctx *x, double *max_rel_err);
int64_t bench_conv_delta_bytes(const struct bench_ctx *x);
const void *bench_conv_delta_launch(const struct bench_ctx *x, ls_op *op);

int bench_gdn_setup(struct bench_ctx *x);
int bench_gdn_run(void *x, int rot, ls_stream s);
int bench_gdn_verify(struct bench_ctx *x, double *max_rel_err);
int64_t bench_gdn_bytes(const struct bench_ctx *x);

int bench_kda_setup(struct bench_ctx *x);
int bench_kda_run(void *x, int rot, ls_stream s);
int bench_kda_verify(struct bench_ctx *x, double *max_rel_err);
int64_t bench_kda_bytes(const struct bench_ctx *x);

/* delta.c: shared by gdn (kda = 0) and kda (kda = 1). */
int bench_delta_setup(struct bench_ctx *x, int kda);
int bench_delta_run(void *x, int rot, ls_stream s);
int bench_delta_verify(struct bench_ctx *x, double *max_rel_err);
const void *bench_delta_launch(const struct bench_ctx *x, ls_op *op);

int bench_ssu_setup(struct bench_ctx *x);
int bench_ssu_run(void *x, int rot, ls_stream s);
int bench_ssu_verify(struct bench_ctx *x, double *max_rel_err);
const void *bench_ssu_launch(const struct bench_ctx *x, ls_op *op);
int64_t bench_ssu_bytes(const struct bench_ctx *x);

int bench_pool_alloc_setup(struct bench_ctx *x);
int bench_pool_alloc_run(void *x, int rot, ls_stream s);
int bench_pool_alloc_reset(void *x);
int bench_pool_alloc_verify(struct bench_ctx *x, double *max_rel_err);
int bench_pool_free_setup(struct bench_ctx *x);
int bench_pool_free_run(void *x, int rot, ls_stream s);
int bench_pool_free_reset(void *x);
int bench_pool_free_verify(struct bench_ctx *x, double *max_rel_err);
int64_t bench_pool_zero_bytes(const struct bench_ctx *x);
int bench_pool_fork_setup(struct bench_ctx *x);
int bench_pool_fork_run(void *x, int rot, ls_stream s);
int bench_pool_fork_reset(void *x);
int bench_pool_fork_verify(struct bench_ctx *x, double *max_rel_err);
int64_t bench_pool_copy_bytes(const struct bench_ctx *x);
int64_t bench_pool_accept_bytes(const struct bench_ctx *x);
/* The pool family's pool (pool_ops.c): cap_mult·B slots, spec buffers for accept, layers from the
 * working-set rule (one call touches B·layer_bytes·touch bytes per layer). 0, BENCH_OOM or -1. */
int bench_pool_family_create(struct bench_ctx *x, int cap_mult, ls_zero_policy zero, int touch);
/* pool_state.c: copy and accept timed as device launches only, "fused" (one backend state op
 * over every buffer and layer) or "per-tensor" (one launch per (buffer, layer)). */
int bench_pool_copy_setup(struct bench_ctx *x);
int bench_pool_copy_per_tensor_setup(struct bench_ctx *x);
int bench_pool_accept_setup(struct bench_ctx *x);
int bench_pool_accept_per_tensor_setup(struct bench_ctx *x);
int bench_pool_state_run(void *x, int rot, ls_stream s);
/* The fused params (per-tensor: the first launch's) and their op, for the `kernel` column. */
const void *bench_pool_state_launch(const struct bench_ctx *x, ls_op *op);
int bench_pool_state_verify(struct bench_ctx *x, double *max_rel_err);


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
/* Downloads n elements of a backend output and compares them with the host reference. */
int bench_output_check(bench_ctx *x, const void *dev, const void *ref, size_t n, ls_dtype dt, double *worst);
/* The sampled rows' pool slots (host array returned, backend copy in *dev_out) and the compact
 * slot ids 0..n-1 the reference uses in *compact_out. NULL on failure. */
int32_t *bench_sub_slots(bench_ctx *x, const int *rows, int n, int32_t **dev_out, int32_t **compact_out);

#endif /* LS_BENCH_FAMILY_H */
