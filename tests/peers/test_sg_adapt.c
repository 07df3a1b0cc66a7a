/*
 * test_sg_adapt.c — the sglang peer's host adapters and the Triton-AOT marshalling (no GPU):
 * kernel and key chosen for a call, grids, the arguments in the kernel's signature order with
 * their values (pointers, strides, cache_steps), the packed q/k/v offsets, and the refusals
 * (kv layout, a pointer or int that breaks the /16 assumption, a constexpr mismatch).
 * The variants here are written by hand with the argument lists aot.py produces for SGLang
 * 0.5.23 (test_peer_aot_sglang checks those against a real compile).
 */
#include <stdint.h>
#include <string.h>

#include "ls_test.h"
#include "sg_adapt.h"
#include "tk.h"

static const tk_arg packed_args[] = {
    {"mixed_qkv", TK_PTR, 1, 0}, {"a", TK_PTR, 1, 0}, {"b", TK_PTR, 1, 0},
    {"A_log", TK_PTR, 1, 0}, {"dt_bias", TK_PTR, 1, 0}, {"o", TK_PTR, 1, 0},
    {"h0", TK_PTR, 1, 0}, {"ht", TK_PTR, 1, 0}, {"ssm_state_indices", TK_PTR, 1, 0},
    {"scale", TK_F32, 0, 0},
};
static const tk_variant packed_v = {SG_PACKED_KERNEL, "H8_HV16_K128_V128_Sf32", "e", NULL, NULL,
                                    1, 1, 64, 0, 0, 1, 0, 1, 10, packed_args, 90};

static const tk_arg gating_args[] = {
    {"A_log", TK_PTR, 1, 0}, {"a", TK_PTR, 1, 0}, {"dt_bias", TK_PTR, 1, 0},
    {"softplus_beta", TK_F32, 0, 0}, {"softplus_threshold", TK_F32, 0, 0},
    {"lower_bound", TK_F32, 0, 0}, {"q", TK_PTR, 1, 0}, {"k", TK_PTR, 1, 0}, {"v", TK_PTR, 1, 0},
    {"b", TK_PTR, 1, 0}, {"o", TK_PTR, 1, 0}, {"h0_source", TK_PTR, 1, 0},
    {"h0_indices", TK_PTR, 1, 0}, {"stride_h0_source", TK_I32, 1, 0}, {"cu_seqlens", TK_PTR, 1, 0},
    {"intermediate_states_buffer", TK_PTR, 1, 0}, {"intermediate_state_indices", TK_PTR, 1, 0},
    {"cache_steps", TK_I32, 0, 0}, {"scale", TK_F32, 0, 0}, {"T", TK_I32, 0, 0},
    {"stride_a", TK_I32, 1, 0}, {"stride_q", TK_I32, 1, 0}, {"stride_k", TK_I32, 1, 0},
    {"stride_v", TK_I32, 1, 0}, {"stride_b", TK_I32, 1, 0},
};
static const tk_variant gating_v = {SG_GATING_KERNEL, "GDN_H8_HV16_K128_V128_Sf32_DSU1_I1_BV4", "e",
                                    NULL, NULL, 1, 1, 8, 1, 0, 1, 0, 1, 25, gating_args, 90};
/* the decode variant: no intermediate buffer (compiled as None), cache_steps 0 (/16) */
static const tk_arg gating_dec_args[] = {
    {"A_log", TK_PTR, 1, 0}, {"a", TK_PTR, 1, 0}, {"dt_bias", TK_PTR, 1, 0},
    {"softplus_beta", TK_F32, 0, 0}, {"softplus_threshold", TK_F32, 0, 0},
    {"lower_bound", TK_F32, 0, 0}, {"q", TK_PTR, 1, 0}, {"k", TK_PTR, 1, 0}, {"v", TK_PTR, 1, 0},
    {"b", TK_PTR, 1, 0}, {"o", TK_PTR, 1, 0}, {"h0_source", TK_PTR, 1, 0},
    {"h0_indices", TK_PTR, 1, 0}, {"stride_h0_source", TK_I32, 1, 0}, {"cu_seqlens", TK_PTR, 1, 0},
    {"cache_steps", TK_I32, 1, 0}, {"scale", TK_F32, 0, 0}, {"T", TK_I32, 0, 0},
    {"stride_a", TK_I32, 1, 0}, {"stride_q", TK_I32, 1, 0}, {"stride_k", TK_I32, 1, 0},
    {"stride_v", TK_I32, 1, 0}, {"stride_b", TK_I32, 1, 0},
};
static const tk_variant gating_dec_v = {SG_GATING_KERNEL, "GDN_H8_HV16_K128_V128_Sf32_DSU0_I0_BV32", "e",
                                        NULL, NULL, 1, 1, 64, 1, 0, 1, 0, 1, 23, gating_dec_args, 90};

#define P(x) ((void *)(uintptr_t)(x))
#define QSL P(0xA00000) /* a device query_start_loc (sg_query_start_loc on a GPU) */

/* qwen3-next tp2: H 8, HV 16, K = V = 128; fake device addresses, all /16 */
static ls_delta_params base(int B, int T)
{
    ls_delta_params p = {.batch = B, .tokens = T, .heads_qk = 8, .heads_v = 16, .dk = 128, .dv = 128,
                         .scale = 0.08838834764831845f, .state_dtype = LS_F32,
                         .state_layout = LS_STATE_VK};
    p.q = P(0x100000), p.k = P(0x200000), p.v = P(0x300000), p.a = P(0x400000), p.b = P(0x500000);
    p.A_log = P(0x600000), p.dt_bias = P(0x700000), p.o = P(0x800000), p.state = P(0x10000000);
    p.slot_idx = P(0x900000), p.state_stride_slot = 16 * 128 * 128;
    return p;
}

static const void *ptr_at(const tk_packed *pk, int i) { return (const void *)(uintptr_t)pk->store[i].p; }

static void test_gating_verify(void)
{
    ls_delta_params p = base(3, 4);
    p.inter = P(0x20000000);
    p.inter_stride_slot = 5LL * 16 * 128 * 128; /* pitch of 5 steps, T = 4 */
    p.disable_state_update = 1;
    sg_plan pl;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.kernel, SG_GATING_KERNEL) == 0);
    LS_CHECK(strcmp(pl.key, "GDN_H8_HV16_K128_V128_Sf32_DSU1_I1_BV4") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 32); /* V / BV 4 */
    LS_CHECK_EQ_INT(pl.grid[1], 3);
    LS_CHECK_EQ_INT(pl.grid[2], 16);
    tk_call c;
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_v, &c, err, sizeof err), 0);
    tk_packed pk;
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK_EQ_INT(pk.n, 25);
    LS_CHECK(ptr_at(&pk, 0) == p.A_log);
    LS_CHECK(ptr_at(&pk, 6) == p.q && ptr_at(&pk, 7) == p.k && ptr_at(&pk, 8) == p.v);
    LS_CHECK(ptr_at(&pk, 11) == p.state && ptr_at(&pk, 12) == p.slot_idx);
    LS_CHECK_EQ_INT(pk.store[13].i32, 16 * 128 * 128);
    LS_CHECK(ptr_at(&pk, 14) == QSL);        /* cu_seqlens: varlen as SGLang calls it */
    LS_CHECK(ptr_at(&pk, 15) == p.inter && ptr_at(&pk, 16) == p.slot_idx);
    LS_CHECK_EQ_INT(pk.store[17].i32, 5);   /* cache_steps = inter pitch in steps */
    LS_CHECK_EQ_INT(pk.store[19].i32, 12);  /* T = B*T tokens in all (q/k/v [1, B*T, ...]) */
    LS_CHECK_EQ_INT(pk.store[20].i32, 16);  /* stride_a = HV (GDN) */
    LS_CHECK_EQ_INT(pk.store[21].i32, 8 * 128);
    LS_CHECK_EQ_INT(pk.store[23].i32, 16 * 128);
    LS_CHECK(pk.store[3].f == 1.0f && pk.store[4].f == 20.0f && pk.store[5].f == 0.0f);
    LS_CHECK(pk.params[0] == &pk.store[0] && pk.params[25] == &pk.scratch[0] && pk.params[26] == &pk.scratch[1]);
    LS_CHECK(pk.scratch[0] == 0 && pk.scratch[1] == 0);

    /* B > 64: BV 32 */
    p.batch = 65;
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.key, "GDN_H8_HV16_K128_V128_Sf32_DSU1_I1_BV32") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 4);
    /* KDA verify keeps BV 32 and strides a by HV*K */
    p.batch = 3;
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 1, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.key, "KDA_H8_HV16_K128_V128_Sf32_DSU1_I1_BV32") == 0);
    LS_CHECK_EQ_INT(sg_delta_args(&p, 1, &pl, &gating_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_get(&c, "stride_a")->u.i == 16 * 128);

    /* the gating kernel without cu_seqlens is refused */
    pl.cu_seqlens = NULL;
    LS_CHECK(sg_delta_args(&p, 1, &pl, &gating_v, &c, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "cu_seqlens") != NULL);
    pl.cu_seqlens = QSL;

    /* an inter pitch that is not whole steps is refused */
    p.inter_stride_slot += 8;
    LS_CHECK(sg_delta_args(&p, 0, &pl, &gating_v, &c, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "inter_stride_slot") != NULL);
}

static void test_refusals(void)
{
    ls_delta_params p = base(3, 4);
    p.inter = P(0x20000000);
    p.inter_stride_slot = 4LL * 16 * 128 * 128;
    p.disable_state_update = 1;
    sg_plan pl;
    tk_call c;
    tk_packed pk;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, 0, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    /* misaligned pointer: JIT would have compiled without divisibility; refuse */
    p.q = P(0x100008);
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "q = ") != NULL && strstr(err, "16-byte aligned") != NULL);
    /* an int compiled /16 that is not */
    p.q = P(0x100000);
    p.state_stride_slot = 16 * 128 * 128 + 8;
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "stride_h0_source") != NULL);
    /* an int past i32 */
    p.state_stride_slot = 1LL << 33;
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "i32") != NULL);
    /* kv layout */
    p.state_layout = LS_STATE_KV;
    LS_CHECK(sg_delta_plan(&p, 0, 0, &pl, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "vk") != NULL);
    /* an inter buffer given to a variant compiled without one */
    p = base(3, 1);
    p.inter = P(0x20000000);
    p.inter_stride_slot = 16 * 128 * 128;
    pl.kernel = SG_GATING_KERNEL;
    pl.packed = 0;
    pl.cu_seqlens = QSL;
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_dec_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "intermediate_states_buffer") != NULL);
    /* a TK_CONST argument must carry its compiled value */
    static const tk_arg cargs[] = {{"x", TK_CONST, 0, 1}, {"y", TK_I32, 0, 0}};
    static const tk_variant cv = {"k", "c", "e", NULL, NULL, 1, 1, 0, 0, 0, 1, 0, 1, 2, cargs, 90};
    tk_call_init(&c, &cv, 1, 1, 1);
    tk_int(&c, "x", 2);
    tk_int(&c, "y", 3);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "constexpr 1") != NULL);
    tk_int(&c, "x", 1);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK_EQ_INT(pk.n, 1); /* the constexpr is not passed */
    LS_CHECK_EQ_INT(pk.store[0].i32, 3);
}

static void test_decode(void)
{
    ls_delta_params p = base(1, 1);
    sg_plan pl;
    tk_call c;
    tk_packed pk;
    char err[256] = "";
    /* separate contiguous q, k, v: SGLang's unpacked decode path (sigmoid-gating kernel) */
    LS_CHECK_EQ_INT(sg_is_packed(&p), 0);
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.key, "GDN_H8_HV16_K128_V128_Sf32_DSU0_I0_BV32") == 0);
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_dec_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK(ptr_at(&pk, 14) == QSL);
    LS_CHECK_EQ_INT(pk.store[15].i32, 0); /* cache_steps 0 */
    LS_CHECK_EQ_INT(pk.store[17].i32, 1); /* T = B*T */
#ifdef LS_DELTA_HAS_QKV_STRIDES
    /* one mixed_qkv row per request: q at 0, k at H*K, v at 2*H*K, row stride 2HK + HV*V */
    const long long row = 2 * 8 * 128 + 16 * 128;
    p.k = p.q + 8 * 128;
    p.v = p.q + 2 * 8 * 128;
    p.q_stride_tok = p.k_stride_tok = p.v_stride_tok = row;
    p.batch = 5;
    LS_CHECK_EQ_INT(sg_is_packed(&p), 1);
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.kernel, SG_PACKED_KERNEL) == 0);
    LS_CHECK(strcmp(pl.key, "H8_HV16_K128_V128_Sf32") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 4);
    LS_CHECK_EQ_INT(pl.grid[1], 5 * 16);
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &packed_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK(ptr_at(&pk, 0) == p.q && ptr_at(&pk, 6) == p.state && ptr_at(&pk, 7) == p.state);
    /* the knob forces the gating kernel, which takes the same row through its strides */
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, SG_DECODE_GATING, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.kernel, SG_GATING_KERNEL) == 0);
    LS_CHECK_EQ_INT(sg_delta_args(&p, 0, &pl, &gating_dec_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_get(&c, "stride_q")->u.i == row && tk_get(&c, "stride_v")->u.i == row);
    /* packed with a padded state pool is refused (its strides are constexprs) */
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 0, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    p.state_stride_slot += 16;
    LS_CHECK(sg_delta_args(&p, 0, &pl, &packed_v, &c, err, sizeof err) != 0);
#else
    LS_CHECK(packed_v.n_args == 10); /* the packed path needs q/k/v strides in ls_delta_params */
#endif
}

/* KDA decode: SGLang's packed kernel whenever q/k/v are one mixed_qkv row (the knob is GDN's),
 * grid (NV, B, HV); separate q/k/v take the sigmoid-gating kernel. */
static void test_kda_decode(void)
{
    ls_delta_params p = base(5, 1);
    p.heads_qk = p.heads_v = 16; /* kimi-linear tp2 */
    sg_plan pl;
    tk_call c;
    tk_packed pk;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 1, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.kernel, SG_GATING_KERNEL) == 0 && strcmp(pl.key, "KDA_H16_HV16_K128_V128_Sf32_DSU0_I0_BV32") == 0);
#ifdef LS_DELTA_HAS_QKV_STRIDES
    const long long row = 2 * 16 * 128 + 16 * 128;
    p.k = p.q + 16 * 128;
    p.v = p.q + 2 * 16 * 128;
    p.q_stride_tok = p.k_stride_tok = p.v_stride_tok = row;
    static const tk_variant kda_packed_v = {SG_KDA_PACKED_KERNEL, "H16_HV16_K128_V128_Sf32", "e", NULL, NULL,
                                            1, 1, 64, 0, 0, 1, 0, 1, 10, packed_args, 90};
    for (int knob = SG_DECODE_AUTO; knob <= SG_DECODE_GATING; knob++) {
        LS_CHECK_EQ_INT(sg_delta_plan(&p, 1, knob, &pl, err, sizeof err), 0);
        pl.cu_seqlens = QSL;
        LS_CHECK(strcmp(pl.kernel, SG_KDA_PACKED_KERNEL) == 0 && strcmp(pl.key, "H16_HV16_K128_V128_Sf32") == 0);
        LS_CHECK(pl.grid[0] == 4 && pl.grid[1] == 5 && pl.grid[2] == 16);
    }
    LS_CHECK_EQ_INT(sg_delta_args(&p, 1, &pl, &kda_packed_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK(ptr_at(&pk, 0) == p.q && ptr_at(&pk, 1) == p.a && ptr_at(&pk, 4) == p.dt_bias);
    LS_CHECK(ptr_at(&pk, 6) == p.state && ptr_at(&pk, 7) == p.state && ptr_at(&pk, 8) == p.slot_idx);
    /* verify (T > 1) stays on the gating kernel */
    p.tokens = 2;
    LS_CHECK_EQ_INT(sg_delta_plan(&p, 1, SG_DECODE_AUTO, &pl, err, sizeof err), 0);
    pl.cu_seqlens = QSL;
    LS_CHECK(strcmp(pl.kernel, SG_GATING_KERNEL) == 0);
#endif
}

int main(void)
{
    test_gating_verify();
    test_refusals();
    test_decode();
    test_kda_decode();
    return ls_test_exit();
}
