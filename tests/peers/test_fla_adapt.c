/*
 * test_fla_adapt.c — the fla peer's host adapter (no GPU): the KDA decode plan (key per layout
 * and state dtype, grid NV*N*HV), the arguments in the signature order aot.py produces for
 * fla-core 0.6.0's fused_recurrent_kda_fwd_kernel (test_peer_aot_fla checks that order against a
 * real compile), N/T as i64, and every refusal (verify, inter, disable_state_update, scale, slot
 * stride, K) with its message.
 */
#include <stdint.h>
#include <string.h>

#include "fla_adapt.h"
#include "ls_test.h"
#include "tk.h"

static const tk_arg kda_args[] = {
    {"q", TK_PTR, 1, 0}, {"k", TK_PTR, 1, 0}, {"v", TK_PTR, 1, 0}, {"g", TK_PTR, 1, 0},
    {"beta", TK_PTR, 1, 0}, {"A_log", TK_PTR, 1, 0}, {"dt_bias", TK_PTR, 1, 0}, {"o", TK_PTR, 1, 0},
    {"h0", TK_PTR, 1, 0}, {"ht", TK_PTR, 1, 0}, {"ssm_state_indices", TK_PTR, 1, 0},
    {"N", TK_I64, 0, 0}, {"T", TK_I64, 0, 0},
};
static const tk_variant kda_v = {FLA_KDA_KERNEL, "H8_HV8_K128_V128_Sf32_vk", "e", NULL, NULL,
                                 4, 1, 788, 0, 0, 1, 0, 1, 13, kda_args, 90};

#define P(x) ((void *)(uintptr_t)(x))

/* kimi-linear tp4: H = HV = 8, K = V = 128 */
static ls_delta_params base(int B, int T)
{
    ls_delta_params p = {.batch = B, .tokens = T, .heads_qk = 8, .heads_v = 8, .dk = 128, .dv = 128,
                         .scale = 0.08838834764831845f, .state_dtype = LS_F32, .state_layout = LS_STATE_VK};
    p.q = P(0x100000), p.k = P(0x200000), p.v = P(0x300000), p.a = P(0x400000), p.b = P(0x500000);
    p.A_log = P(0x600000), p.dt_bias = P(0x700000), p.o = P(0x800000), p.state = P(0x900000);
    p.slot_idx = P(0xa00000);
    p.state_stride_slot = 8 * 128 * 128;
    return p;
}

static const void *ptr_at(const tk_packed *pk, int i) { return (const void *)(uintptr_t)pk->store[i].p; }

static void refused(ls_delta_params p, const char *needle)
{
    fla_plan pl;
    char err[640] = "";
    int rc = fla_kda_plan(&p, &pl, err, sizeof err);
    /* a shape the kernel was not built for is LS_OP_UNSUPPORTED (skipped); a bad shape fails */
    LS_CHECK_EQ_INT(rc, strcmp(needle, "bad shape") ? LS_OP_UNSUPPORTED : -1);
    LS_CHECK(strstr(err, needle) != NULL);
    if (!strstr(err, needle))
        fprintf(stderr, "message: %s (wanted '%s')\n", err, needle);
}

int main(void)
{
    fla_plan pl;
    char err[640] = "";
    ls_delta_params p = base(3, 1);
    LS_CHECK_EQ_INT(fla_kda_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.kernel, FLA_KDA_KERNEL) == 0);
    LS_CHECK(strcmp(pl.key, "H8_HV8_K128_V128_Sf32_vk") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 4 * 3 * 8); /* NV (V/32) * N * HV */
    LS_CHECK_EQ_INT(pl.grid[1], 1);
    LS_CHECK_EQ_INT(pl.grid[2], 1);
    ls_delta_params pk_kv = p;
    pk_kv.state_layout = LS_STATE_KV;
    pk_kv.state_dtype = LS_BF16;
    fla_plan pl2;
    LS_CHECK_EQ_INT(fla_kda_plan(&pk_kv, &pl2, err, sizeof err), 0);
    LS_CHECK(strcmp(pl2.key, "H8_HV8_K128_V128_Sbf16_kv") == 0);

    tk_call c;
    tk_packed pk;
    LS_CHECK_EQ_INT(fla_kda_args(&p, &pl, &kda_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK_EQ_INT(pk.n, 13);
    LS_CHECK(ptr_at(&pk, 0) == p.q && ptr_at(&pk, 1) == p.k && ptr_at(&pk, 2) == p.v);
    LS_CHECK(ptr_at(&pk, 3) == p.a);  /* g = raw gate */
    LS_CHECK(ptr_at(&pk, 4) == p.b);  /* beta = raw logits */
    LS_CHECK(ptr_at(&pk, 5) == p.A_log && ptr_at(&pk, 6) == p.dt_bias && ptr_at(&pk, 7) == p.o);
    LS_CHECK(ptr_at(&pk, 8) == p.state && ptr_at(&pk, 9) == p.state); /* in place */
    LS_CHECK(ptr_at(&pk, 10) == p.slot_idx);
    LS_CHECK(pk.store[11].i64 == 3 && pk.store[12].i64 == 1);
    LS_CHECK_EQ_INT(c.grid[0], 96);

    /* a misaligned slot index pointer breaks the /16 assumption: refused by the marshaller */
    ls_delta_params mis = p;
    mis.slot_idx = P(0xa00004);
    LS_CHECK_EQ_INT(fla_kda_args(&mis, &pl, &kda_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), -1);

    ls_delta_params r = base(3, 4);
    refused(r, "verify (T=4) refused");
    r = base(3, 1);
    r.inter = P(0xb00000);
    refused(r, "intermediate states refused");
    r = base(3, 1);
    r.disable_state_update = 1;
    refused(r, "disable_state_update refused");
    r = base(3, 1);
    r.scale = 0.5f;
    refused(r, "constexpr");
    r = base(3, 1);
    r.state_stride_slot += 128;
    refused(r, "state_stride_slot");
    r = base(3, 1);
    r.dk = 96;
    refused(r, "K=96");
    r = base(3, 1);
    r.heads_v = 12;
    refused(r, "bad shape");
    LS_CHECK(strstr(fla_gdn_refusal(), "no slot indices") != NULL);
    return ls_test_exit();
}
