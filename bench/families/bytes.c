/*
 * bytes.c — minimum bytes moved per call, one function per row of docs/bytes.md ("Minimum bytes moved
 * per call"). Minimum = every input read once, every output written once, every touched state
 * slot read once and written once, weights/parameters once per call. Achieved bandwidth in the
 * CSV is these bytes divided by the median time.
 *
 * Symbols as in docs/bytes.md: B requests, T tokens per request, per-rank shapes; element sizes s_a
 * (activation, bf16 = 2), s_c (conv state), s_s (SSM state), s_w (conv weight); index arrays
 * and gates are 4 bytes.
 */
#include "family.h"

/*
 * Row "conv update, decode or verify (one conv tensor with C channels, width W)":
 *   2·B·T·C·s_a (x in, y out) + 2·B·C·(W−1)·s_c (state R+W) + C·W·s_w [+ C·s_w bias] + 4B;
 *   verify adds B·T·C·(W−1)·s_c (intermediate windows written).
 * KDA runs three of these (q, k, v) per layer; the caller multiplies.
 */
int64_t ls_bytes_conv_update(int64_t B, int64_t T, int64_t C, int64_t W, int64_t s_a, int64_t s_c,
                             int64_t s_w, int bias, int verify_windows)
{
    int64_t b = 2 * B * T * C * s_a + 2 * B * C * (W - 1) * s_c + C * W * s_w + 4 * B;
    if (bias)
        b += C * s_w;
    if (verify_windows)
        b += B * T * C * (W - 1) * s_c;
    return b;
}

/*
 * Row "AFTER GDN verify extra: conv‑state clone": + 2·(S+1)·C·(W−1)·s_c per layer per verify,
 * independent of B. Our verify does not clone (HEAD-fork behaviour); kept for reference tables.
 */
int64_t ls_bytes_gdn_conv_clone(int64_t S, int64_t C, int64_t W, int64_t s_c)
{
    return 2 * (S + 1) * C * (W - 1) * s_c;
}

/*
 * Row "GDN fused decode" (docs/bytes.md):
 *   B·T·(2·H·K + HV·V)·s_a (q,k,v) + 2·B·T·HV·s_a (a,b) + B·T·HV·V·s_a (o)
 *   + 2·B·HV·K·V·s_s (state R+W) + HV·(4 + s_a) (A_log, dt_bias) + 4·(2B+1) (indices, cu_seqlens).
 */
int64_t ls_bytes_gdn_decode(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V,
                            int64_t s_a, int64_t s_s)
{
    return B * T * (2 * H * K + HV * V) * s_a + 2 * B * T * HV * s_a + B * T * HV * V * s_a +
           2 * B * HV * K * V * s_s + HV * (4 + s_a) + 4 * (2 * B + 1);
}

/* Row "GDN fused_gdn_gating (verify)": 2·B·T·HV·s_a + 2·B·T·HV·4 + HV·(4+s_a). */
int64_t ls_bytes_gdn_gating(int64_t B, int64_t T, int64_t HV, int64_t s_a)
{
    return 2 * B * T * HV * s_a + 2 * B * T * HV * 4 + HV * (4 + s_a);
}

/*
 * Row "GDN verify recurrence" (docs/bytes.md) as SGLang runs it (g, β precomputed in fp32):
 *   B·T·(2HK + HV·V)·s_a + 2·B·T·HV·4 (g,β fp32) + B·T·HV·V·s_a (o) + B·HV·K·V·s_s (state read)
 *   + B·T·HV·K·V·s_s (intermediate writes) + 4·(2B+1).
 */
int64_t ls_bytes_gdn_verify_recurrence(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K,
                                       int64_t V, int64_t s_a, int64_t s_s)
{
    return B * T * (2 * H * K + HV * V) * s_a + 2 * B * T * HV * 4 + B * T * HV * V * s_a +
           B * HV * K * V * s_s + B * T * HV * K * V * s_s + 4 * (2 * B + 1);
}

/*
 * Our GDN verify kernel fuses the gating into the recurrence, so the minimum is the recurrence
 * row with the fp32 g,β traffic (2·B·T·HV·4) replaced by the raw bf16 a,b inputs (2·B·T·HV·s_a)
 * plus the gating parameters read once (HV·(4 + s_a): A_log fp32, dt_bias bf16) — i.e. the
 * recurrence row + the gating row minus the g,β write and re-read.
 */
int64_t ls_bytes_gdn_verify_fused(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V,
                                  int64_t s_a, int64_t s_s)
{
    return ls_bytes_gdn_verify_recurrence(B, T, H, HV, K, V, s_a, s_s) - 2 * B * T * HV * 4 +
           2 * B * T * HV * s_a + HV * (4 + s_a);
}

/*
 * Row "Acceptance write‑back (all L layers, N requests)": minimum 2·N·L·(HV·K·V·s_s + C·(W−1)·s_c)
 * (as implemented upstream ≈ 2× that). The pool benchmark generalises it to every conv buffer
 * (3 for KDA) as 2·N·per_req, which equals this row for GDN/Mamba2.
 */
int64_t ls_bytes_accept(int64_t N, int64_t L, int64_t HV, int64_t K, int64_t V, int64_t s_s,
                        int64_t C, int64_t W, int64_t s_c)
{
    return 2 * N * L * (HV * K * V * s_s + C * (W - 1) * s_c);
}

/*
 * Row "KDA decode, fused (HEAD‑fork design)", recurrence only (the 3 conv updates are the conv
 * family's cases):
 *   B·T·(2HK + HV·V)·s_a + B·T·HV·K·s_a (raw gate) + B·T·HV·s_a (b) + B·T·HV·V·s_a (o)
 *   + 2·B·HV·K·V·s_s + HV·K·4 (dt_bias fp32) + HV·4 (A_log) + 4(2B+1).
 * verify != 0: docs/bytes.md has no separate KDA verify row; we apply the rule of the Mamba2/GDN verify rows — the
 * state term becomes B·HV·K·V·s_s (read) + B·T·HV·K·V·s_s (intermediate writes).
 */
int64_t ls_bytes_kda(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V, int64_t s_a,
                     int64_t s_s, int verify)
{
    int64_t state = verify ? B * HV * K * V * s_s + B * T * HV * K * V * s_s : 2 * B * HV * K * V * s_s;
    return B * T * (2 * H * K + HV * V) * s_a + B * T * HV * K * s_a + B * T * HV * s_a +
           B * T * HV * V * s_a + state + HV * K * 4 + HV * 4 + 4 * (2 * B + 1);
}

/*
 * Row "KDA decode as at AFTER, extra over the above": gather + scatter 4·B·HV·K·V·s_s, gate
 * materialised 2·B·HV·K·4, β fp32 2·B·HV·4 (decode, T = 1).
 */
int64_t ls_bytes_kda_after_extra(int64_t B, int64_t HV, int64_t K, int64_t V, int64_t s_s)
{
    return 4 * B * HV * K * V * s_s + 2 * B * HV * K * 4 + 2 * B * HV * 4;
}

/*
 * Rows "Mamba2 selective_state_update, decode" and "Mamba2 verify (#13434)":
 *   B·T·nh·hd·s_a (x) + B·T·nh·s_a (dt, tied) + 2·B·T·ng·ds·s_a (B,C) + B·T·nh·hd·s_a (y)
 *   + 2·B·nh·hd·ds·s_s (state) + nh·(4 + 2·s_a) (A, dt_bias, D) + 4B;
 *   verify: the state term becomes B·nh·hd·ds·s_s (read) + B·T·nh·hd·ds·s_s (intermediate writes).
 */
int64_t ls_bytes_ssu(int64_t B, int64_t T, int64_t nh, int64_t hd, int64_t ng, int64_t ds,
                     int64_t s_a, int64_t s_s, int verify)
{
    int64_t state = verify ? B * nh * hd * ds * s_s + B * T * nh * hd * ds * s_s : 2 * B * nh * hd * ds * s_s;
    return B * T * nh * hd * s_a + B * T * nh * s_a + 2 * B * T * ng * ds * s_a + B * T * nh * hd * s_a +
           state + nh * (4 + 2 * s_a) + 4 * B;
}

/* Row "Pool free (AFTER) / alloc (later) zeroing of n slots": n · per_req written. */
int64_t ls_bytes_pool_zero(int64_t n, int64_t per_req)
{
    return n * per_req;
}

/* Row "Pool copy_from of n slots": minimum 2·n·per_req (as implemented upstream ≈ 4·n·per_req).
 * Also used for fork (alloc without zeroing + copy). */
int64_t ls_bytes_pool_copy(int64_t n, int64_t per_req)
{
    return 2 * n * per_req;
}

/* Row "PD transfer of one request": per_req (AFTER with spec: (1+T)·per_req, later per_req). */
int64_t ls_bytes_pd_transfer(int64_t per_req, int64_t T, int after_with_spec)
{
    return after_with_spec ? (1 + T) * per_req : per_req;
}

/*
 * Row "Fused conv update + GDN/KDA recurrence" (docs/bytes.md): the conv row of the packed
 * C = 2HK + HV·V channels plus the recurrence row (GDN decode, GDN verify fused, KDA), less what
 * fusing removes: the conv output y written and re-read as q, k, v (2·B·T·C·s_a) and the conv's
 * own read of the slot indices (4B; one index array serves both halves). In verify the conv
 * state is only read (disable_state_update: the windows carry the shift), so one
 * B·C·(W−1)·s_c of the conv row's state R+W goes too.
 */
int64_t ls_bytes_conv_delta(int64_t B, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V, int64_t W,
                            int64_t s_a, int64_t s_c, int64_t s_s, int64_t s_w, int bias, int kda)
{
    const int verify = T > 1;
    const int64_t C = 2 * H * K + HV * V;
    int64_t rec = kda ? ls_bytes_kda(B, T, H, HV, K, V, s_a, s_s, verify)
                      : verify ? ls_bytes_gdn_verify_fused(B, T, H, HV, K, V, s_a, s_s)
                               : ls_bytes_gdn_decode(B, T, H, HV, K, V, s_a, s_s);
    int64_t conv = ls_bytes_conv_update(B, T, C, W, s_a, s_c, s_w, bias, verify);
    return conv + rec - 2 * B * T * C * s_a - 4 * B - (verify ? B * C * (W - 1) * s_c : 0);
}
