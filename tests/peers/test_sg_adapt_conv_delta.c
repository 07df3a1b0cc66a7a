/*
 * test_sg_adapt_conv_delta.c — the sglang peer's conv_delta adapter (no GPU): SGLang 0.5.23's
 * fused KDA conv + recurrence chain-verify kernel chosen per call (key, grid (V/BV, B*HV)), the
 * arguments in the kernel's signature order with their values, and every call it refuses (the
 * impl's LS_OP_UNSUPPORTED, with the reason). The variant's argument list is the one aot.py
 * produces (test_peer_aot_sglang_conv_delta checks it against a real compile).
 */
#include <stdint.h>
#include <string.h>

#include "ls_test.h"
#include "sg_adapt.h"
#include "tk.h"

#define P(x) ((void *)(uintptr_t)(x))

static const tk_arg args[] = {
    {"x", TK_PTR, 1, 0}, {"w", TK_PTR, 1, 0}, {"conv_bias", TK_PTR, 1, 0}, {"conv_state", TK_PTR, 1, 0},
    {"conv_state_indices", TK_PTR, 1, 0}, {"inter_conv_window", TK_PTR, 1, 0},
    {"inter_state_indices", TK_PTR, 1, 0}, {"a", TK_PTR, 1, 0}, {"b_gate", TK_PTR, 1, 0},
    {"A_log", TK_PTR, 1, 0}, {"dt_bias", TK_PTR, 1, 0}, {"softplus_beta", TK_F32, 0, 0},
    {"softplus_threshold", TK_F32, 0, 0}, {"h0_source", TK_PTR, 1, 0}, {"h0_indices", TK_PTR, 1, 0},
    {"inter_states", TK_PTR, 1, 0}, {"o", TK_PTR, 1, 0}, {"scale", TK_F32, 0, 0}, {"cache_steps", TK_I32, 0, 0},
    {"stride_x_tok", TK_I32, 1, 0}, {"stride_w_dim", TK_I32, 0, 0}, {"stride_cs_line", TK_I32, 1, 0},
    {"stride_cs_tok", TK_I32, 1, 0}, {"stride_iw_line", TK_I32, 1, 0}, {"stride_iw_step", TK_I32, 1, 0},
    {"stride_iw_dim", TK_CONST, 0, 1}, {"stride_iw_win", TK_I32, 1, 0}, {"stride_a_tok", TK_I32, 1, 0},
    {"stride_b_tok", TK_I32, 1, 0},
};
static const tk_variant var = {SG_KDA_CONV_VERIFY_KERNEL, "H16_HV16_K128_V128_Sf32_T4", "e", NULL, NULL,
                               4, 1, 512, 1, 0, 1, 0, 1, (int)(sizeof args / sizeof args[0]), args, 90};

enum { H = 16, HV = 16, K = 128, V = 128, C = 2 * H * K + HV * V, T = 4, B = 5 };

/* Kimi tp2 verify as the conv_delta bench builds it (window-major conv pool, vk state). */
static ls_conv_delta_params base(void)
{
    ls_conv_delta_params p = {.kda = 1};
    ls_conv_params *c = &p.conv;
    ls_delta_params *d = &p.delta;
    c->batch = d->batch = B;
    c->tokens = d->tokens = T;
    c->channels = C;
    c->width = 4;
    c->silu = 1;
    c->disable_state_update = d->disable_state_update = 1;
    c->weight_dtype = LS_F32;
    c->state_dtype = LS_BF16;
    c->x = P(0x100000);
    c->x_stride_b = (int64_t)T * C, c->x_stride_t = C, c->x_stride_c = 1;
    c->weight = P(0x200000);
    c->state = P(0x10000000);
    c->state_stride_slot = (int64_t)C * 3, c->state_stride_c = 1, c->state_stride_w = C;
    c->inter = P(0x20000000);
    c->inter_stride_slot = (int64_t)T * C * 3, c->inter_stride_t = (int64_t)C * 3;
    c->inter_stride_c = 1, c->inter_stride_w = C;
    c->slot_idx = d->slot_idx = P(0x300000);
    d->heads_qk = H, d->heads_v = HV, d->dk = K, d->dv = V;
    d->scale = 0.125f;
    d->state_dtype = LS_F32;
    d->state_layout = LS_STATE_VK;
    d->a = P(0x400000), d->b = P(0x500000), d->A_log = P(0x600000), d->dt_bias = P(0x700000);
    d->o = P(0x800000);
    d->state = P(0x30000000);
    d->state_stride_slot = (int64_t)HV * K * V;
    d->inter = P(0x40000000);
    d->inter_stride_slot = (int64_t)HV * K * V * 6; /* a pitch of 6 steps > T */
    return p;
}

static const void *ptr_at(const tk_packed *pk, int i) { return (const void *)(uintptr_t)pk->store[i].p; }

static void test_call(void)
{
    ls_conv_delta_params p = base();
    sg_plan pl;
    char err[512] = "";
    LS_REQUIRE(ls_conv_delta_params_check(&p) == 0);
    LS_CHECK_EQ_INT(sg_conv_delta_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.kernel, SG_KDA_CONV_VERIFY_KERNEL) == 0);
    LS_CHECK(strcmp(pl.key, "H16_HV16_K128_V128_Sf32_T4") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], V / SG_KDA_CONV_VERIFY_BV);
    LS_CHECK_EQ_INT(pl.grid[1], B * HV);
    LS_CHECK_EQ_INT(pl.grid[2], 1);
    tk_call c;
    tk_packed pk;
    LS_CHECK_EQ_INT(sg_conv_delta_args(&p, &pl, &var, &c, err, sizeof err), 0);
    int rc = tk_marshal(&c, &pk, err, sizeof err);
    if (rc)
        fprintf(stderr, "marshal: %s\n", err);
    LS_CHECK_EQ_INT(rc, 0);
    LS_CHECK(ptr_at(&pk, 0) == p.conv.x && ptr_at(&pk, 1) == p.conv.weight);
    LS_CHECK(ptr_at(&pk, 2) == p.conv.weight); /* no bias: the weight stands in, never read */
    LS_CHECK(ptr_at(&pk, 3) == p.conv.state && ptr_at(&pk, 4) == p.conv.slot_idx);
    LS_CHECK(ptr_at(&pk, 5) == p.conv.inter && ptr_at(&pk, 6) == p.conv.slot_idx);
    LS_CHECK(ptr_at(&pk, 7) == p.delta.a && ptr_at(&pk, 8) == p.delta.b && ptr_at(&pk, 9) == p.delta.A_log);
    LS_CHECK(ptr_at(&pk, 10) == p.delta.dt_bias);
    LS_CHECK(pk.store[11].f == 1.0f && pk.store[12].f == 20.0f);
    LS_CHECK(ptr_at(&pk, 13) == p.delta.state && ptr_at(&pk, 14) == p.delta.slot_idx);
    LS_CHECK(ptr_at(&pk, 15) == p.delta.inter && ptr_at(&pk, 16) == p.delta.o);
    LS_CHECK(pk.store[17].f == 0.125f);
    LS_CHECK_EQ_INT(pk.store[18].i32, 6); /* cache_steps: the slot pitch in steps */
    LS_CHECK_EQ_INT(pk.store[19].i32, C);
    LS_CHECK_EQ_INT(pk.store[20].i32, 4);
    LS_CHECK_EQ_INT(pk.store[21].i32, C * 3);
    LS_CHECK_EQ_INT(pk.store[22].i32, C);
    LS_CHECK_EQ_INT(pk.store[23].i32, T * C * 3);
    LS_CHECK_EQ_INT(pk.store[24].i32, C * 3);
    LS_CHECK_EQ_INT(pk.store[25].i32, C); /* stride_iw_dim (constexpr 1) is not passed */
    LS_CHECK_EQ_INT(pk.store[26].i32, HV * K);
    LS_CHECK_EQ_INT(pk.store[27].i32, HV);
    LS_CHECK_EQ_INT(pk.n, 28);

    /* bf16 state, T = 8: the key follows */
    p.delta.state_dtype = LS_BF16;
    p.conv.tokens = p.delta.tokens = 8;
    p.conv.x_stride_b = 8 * C;
    p.conv.inter_stride_slot = 8 * C * 3;
    p.delta.inter_stride_slot = (int64_t)HV * K * V * 8;
    LS_CHECK_EQ_INT(sg_conv_delta_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "H16_HV16_K128_V128_Sbf16_T8") == 0);
}

/* Each refusal names what the kernel cannot do. */
static void refuse(ls_conv_delta_params p, const char *needle)
{
    sg_plan pl;
    char err[512] = "";
    LS_CHECK(sg_conv_delta_plan(&p, &pl, err, sizeof err) != 0);
    if (!strstr(err, needle)) {
        fprintf(stderr, "error '%s' does not say '%s'\n", err, needle);
        LS_CHECK(0);
    }
}

static void test_refusals(void)
{
    ls_conv_delta_params p = base();
    p.kda = 0;
    refuse(p, "KDA verify only");
    p = base(), p.delta.state_layout = LS_STATE_KV;
    refuse(p, "state_layout vk");
    p = base(), p.conv.tokens = p.delta.tokens = 1;
    refuse(p, "T=1");
    p = base(), p.conv.tokens = p.delta.tokens = 2;
    refuse(p, "T >= W - 1");
    p = base(), p.conv.tokens = p.delta.tokens = 9;
    refuse(p, "T <= 8");
    p = base(), p.conv.weight_dtype = LS_BF16;
    refuse(p, "bf16 weights");
    p = base(), p.conv.bias = P(0x900000);
    refuse(p, "bias given");
    p = base(), p.conv.disable_state_update = 0;
    refuse(p, "disable_state_update");
    p = base(), p.delta.inter = NULL;
    refuse(p, "inter");
    p = base(), p.conv.state_stride_c = 3, p.conv.state_stride_w = 1; /* channel-major */
    refuse(p, "window-major");
    p = base(), p.conv.x_stride_c = 2;
    refuse(p, "channel stride 1");
    p = base(), p.delta.state_stride_slot += 16;
    refuse(p, "slot pitch");
    p = base(), p.delta.inter_stride_slot = (int64_t)HV * K * V * 3; /* 3 steps < T */
    refuse(p, "whole number (>= T)");
}

int main(void)
{
    test_call();
    test_refusals();
    return ls_test_exit();
}
