/*
 * registry.c — every benchmark of linstate-bench, declared once (libuv benchmark-list style).
 *
 * A row is one (family, op): the stable first two components of the case key, the mechanisms it
 * applies to, the axes it varies over, and its callbacks. The plan (plan.c) crosses these rows
 * with the CLI axes; the runner (runner.c) calls the callbacks. To add a benchmark, add a row
 * and the callbacks in the family's file. Never rename a family or op: they are part of the
 * case key that before/after comparisons join on.
 *
 * Variants: rows sharing (family, op) are alternative implementations of the same case key (the
 * CSV `variant` column tells them apart; compare.py --variants OLD:NEW compares two of them).
 * Per mechanism, one row of each (family, op) is the default (--variant not given); the others
 * run with --variant NAME or --variant all. Variant names are part of the join key as well:
 * rename one only with a note in results/README.md.
 */
#include <string.h>

#include "families/family.h"

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

/* clang-format off */
static const bench_entry registry[] = {
    /* family, op, variant, default?, mechanisms, axes, draft rule,
     *   setup, run, reset, verify, teardown, bytes, impl ops, launch params */
    {"conv1d_update", "decode", "causal_silu", 1, MAMBA2 | GDN, B_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* KDA: q, k, v as three window-major tensors, three launches (AFTER) ... */
    {"conv1d_update", "decode", "3-buffer", 1, KDA, B_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* ... or one window-major tensor of 3C channels, one launch (LATE, docs/csv.md) */
    {"conv1d_update", "decode", "concat", 0, KDA, B_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_conv_concat_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"conv1d_update", "verify", "causal_silu", 1, MAMBA2, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* GDN: on the real state (after #13603) ... */
    {"conv1d_update", "verify", "in-place", 1, GDN, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    /* ... or on a clone of the whole layer buffer (AFTER, docs/csv.md) */
    {"conv1d_update", "verify", "clone", 0, GDN, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_clone_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"conv1d_update", "verify", "3-buffer", 1, KDA, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"conv1d_update", "verify", "concat", 0, KDA, B_ | T_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_conv_concat_setup, bench_conv_run, NULL, bench_conv_verify, NULL, bench_conv_bytes, CONV_OPS, bench_conv_launch},
    {"gdn", "decode", "fused_gating", 1, GDN, B_ | D_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_gdn_setup, bench_gdn_run, NULL, bench_gdn_verify, NULL, bench_gdn_bytes, BENCH_OP(LS_OP_GDN), bench_delta_launch},
    {"gdn", "verify", "fused_gating", 1, GDN, B_ | T_ | D_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_gdn_setup, bench_gdn_run, NULL, bench_gdn_verify, NULL, bench_gdn_bytes, BENCH_OP(LS_OP_GDN), bench_delta_launch},
    {"kda", "decode", "fused_inplace", 1, KDA, B_ | D_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_kda_setup, bench_kda_run, NULL, bench_kda_verify, NULL, bench_kda_bytes, BENCH_OP(LS_OP_KDA), bench_delta_launch},
    {"kda", "verify", "fused_inplace", 1, KDA, B_ | T_ | D_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_kda_setup, bench_kda_run, NULL, bench_kda_verify, NULL, bench_kda_bytes, BENCH_OP(LS_OP_KDA), bench_delta_launch},
    /* conv update of the packed q|k|v channels + the recurrence: one fused op ... */
    {"conv_delta", "decode", "one-kernel", 1, GDN | KDA, B_ | D_ | G_, BENCH_DRAFT_DECODE,
     bench_conv_delta_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     BENCH_OP(LS_OP_CONV_DELTA), bench_conv_delta_launch},
    {"conv_delta", "verify", "one-kernel", 1, GDN | KDA, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_conv_delta_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     BENCH_OP(LS_OP_CONV_DELTA), bench_conv_delta_launch},
    /* ... or the impl's conv_update then gdn / kda, timed as one call (same key, same bytes) */
    {"conv_delta", "decode", "back-to-back", 0, GDN, B_ | D_ | G_, BENCH_DRAFT_DECODE,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_GDN), bench_conv_delta_launch},
    {"conv_delta", "decode", "back-to-back", 0, KDA, B_ | D_ | G_, BENCH_DRAFT_DECODE,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_KDA), bench_conv_delta_launch},
    {"conv_delta", "verify", "back-to-back", 0, GDN, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_GDN), bench_conv_delta_launch},
    {"conv_delta", "verify", "back-to-back", 0, KDA, B_ | T_ | D_ | G_, BENCH_DRAFT_VERIFY,
     bench_conv_delta_b2b_setup, bench_conv_delta_run, NULL, bench_conv_delta_verify, NULL, bench_conv_delta_bytes,
     CONV_OPS | BENCH_OP(LS_OP_KDA), bench_conv_delta_launch},
    {"mamba2_ssu", "decode", "tied", 1, MAMBA2, B_ | D_ | G_ | P_, BENCH_DRAFT_DECODE,
     bench_ssu_setup, bench_ssu_run, NULL, bench_ssu_verify, NULL, bench_ssu_bytes, BENCH_OP(LS_OP_SSU), bench_ssu_launch},
    {"mamba2_ssu", "verify", "tied", 1, MAMBA2, B_ | T_ | D_ | G_ | P_, BENCH_DRAFT_VERIFY,
     bench_ssu_setup, bench_ssu_run, NULL, bench_ssu_verify, NULL, bench_ssu_bytes, BENCH_OP(LS_OP_SSU), bench_ssu_launch},
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

int bench_registry_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const bench_entry *bench_registry_at(int i)
{
    return (i >= 0 && i < bench_registry_count()) ? &registry[i] : NULL;
}

/* "gdn" selects every gdn op; "pool/alloc" exactly one (family, op) row. */
int bench_entry_matches(const bench_entry *e, const char *name)
{
    size_t fl = strlen(e->family);
    if (strcmp(name, e->family) == 0)
        return 1;
    return strncmp(name, e->family, fl) == 0 && name[fl] == '/' && strcmp(name + fl + 1, e->op) == 0;
}

int bench_entry_same_op(const bench_entry *a, const bench_entry *b)
{
    return strcmp(a->family, b->family) == 0 && strcmp(a->op, b->op) == 0;
}

int bench_registry_has_variant(const char *name)
{
    for (int i = 0; i < bench_registry_count(); i++)
        if (strcmp(registry[i].variant, name) == 0)
            return 1;
    return 0;
}

int bench_registry_has_family(const char *name)
{
    for (int i = 0; i < bench_registry_count(); i++)
        if (bench_entry_matches(&registry[i], name))
            return 1;
    return 0;
}
