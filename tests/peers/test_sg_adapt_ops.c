/*
 * test_sg_adapt_ops.c — the sglang peer's conv_update and ssu adapters (no GPU): kernel, key and
 * grid chosen per call, the arguments in the kernel's signature order with their values, the
 * stride checks per conv orientation (every conv stride is a constexpr of SGLang's kernel), and
 * the refusals the impl turns into LS_OP_UNSUPPORTED. The variants are written by hand with the
 * argument lists aot.py produces for SGLang 0.5.23 (test_peer_aot_sglang_ops checks them against a
 * real compile).
 */
#include <stdint.h>
#include <string.h>

#include "ls_test.h"
#include "sg_adapt.h"
#include "tk.h"

#define P(x) ((void *)(uintptr_t)(x))

/* ---------------------------------------------------------------- conv variants */

static const tk_arg conv_dec_args[] = {
    {"x_ptr", TK_PTR, 1, 0}, {"w_ptr", TK_PTR, 1, 0}, {"conv_state_ptr", TK_PTR, 1, 0},
    {"conv_state_indices_ptr", TK_PTR, 1, 0}, {"intermediate_conv_window_ptr", TK_PTR, 1, 0},
    {"o_ptr", TK_PTR, 1, 0}, {"batch", TK_I32, 0, 0},
};
static const tk_variant conv_dec_v = {SG_CONV_KERNEL, "C4096_T1_W4_CM_wbf16_B0", "e", NULL, NULL,
                                      4, 1, 2048, 1, 0, 1, 0, 1, 7, conv_dec_args, 90};
static const tk_arg conv_ver_args[] = {
    {"x_ptr", TK_PTR, 1, 0}, {"w_ptr", TK_PTR, 1, 0}, {"conv_state_ptr", TK_PTR, 1, 0},
    {"conv_state_indices_ptr", TK_PTR, 1, 0}, {"intermediate_conv_window_ptr", TK_PTR, 1, 0},
    {"intermediate_state_indices_ptr", TK_PTR, 1, 0}, {"o_ptr", TK_PTR, 1, 0}, {"batch", TK_I32, 0, 0},
};
static const tk_variant conv_ver_v = {SG_CONV_KERNEL, "C4096_T4_W4_WM_wfp32_B0", "e", NULL, NULL,
                                      4, 1, 0, 1, 0, 1, 0, 1, 8, conv_ver_args, 90};
static const tk_arg conv_bias_args[] = {
    {"x_ptr", TK_PTR, 1, 0}, {"w_ptr", TK_PTR, 1, 0}, {"bias_ptr", TK_PTR, 1, 0},
    {"conv_state_ptr", TK_PTR, 1, 0}, {"conv_state_indices_ptr", TK_PTR, 1, 0},
    {"intermediate_conv_window_ptr", TK_PTR, 1, 0}, {"o_ptr", TK_PTR, 1, 0}, {"batch", TK_I32, 0, 0},
};
static const tk_variant conv_bias_v = {SG_CONV_KERNEL, "C5120_T1_W4_CM_wbf16_B1", "e", NULL, NULL,
                                       4, 1, 2048, 1, 0, 1, 0, 1, 8, conv_bias_args, 90};

/* channel-major (wm = 0) or window-major (wm = 1) conv call, B rows, T tokens, C channels */
static ls_conv_params conv_base(int B, int T, int C, int wm)
{
    ls_conv_params p = {.batch = B, .tokens = T, .channels = C, .width = 4, .silu = 1,
                        .weight_dtype = LS_BF16, .state_dtype = LS_BF16};
    p.x = P(0x100000), p.y = P(0x200000), p.weight = P(0x300000), p.state = P(0x10000000);
    p.slot_idx = P(0x400000);
    p.x_stride_b = p.y_stride_b = (int64_t)T * C;
    p.x_stride_t = p.y_stride_t = C;
    p.x_stride_c = p.y_stride_c = 1;
    p.state_stride_slot = (int64_t)C * 3;
    p.state_stride_c = wm ? 1 : 3;
    p.state_stride_w = wm ? C : 1;
    if (T > 1) {
        p.inter = P(0x20000000);
        p.inter_stride_slot = (int64_t)T * C * 3;
        p.inter_stride_t = (int64_t)C * 3;
        p.inter_stride_c = p.state_stride_c;
        p.inter_stride_w = p.state_stride_w;
    }
    return p;
}

static const void *ptr_at(const tk_packed *pk, int i) { return (const void *)(uintptr_t)pk->store[i].p; }

static void test_conv_decode(void)
{
    ls_conv_params p = conv_base(3, 1, 4096, 0);
    p.x_stride_t = p.y_stride_t = 12345; /* T = 1: the token stride is never used */
    sg_plan pl;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_conv_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.kernel, SG_CONV_KERNEL) == 0);
    LS_CHECK(strcmp(pl.key, "C4096_T1_W4_CM_wbf16_B0") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 3);  /* batch */
    LS_CHECK_EQ_INT(pl.grid[1], 16); /* cdiv(4096, 256) */
    LS_CHECK_EQ_INT(pl.grid[2], 1);
    tk_call c;
    tk_packed pk;
    LS_CHECK_EQ_INT(sg_conv_args(&p, &pl, &conv_dec_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK(ptr_at(&pk, 0) == p.x && ptr_at(&pk, 1) == p.weight && ptr_at(&pk, 2) == p.state);
    LS_CHECK(ptr_at(&pk, 3) == p.slot_idx);
    LS_CHECK(ptr_at(&pk, 4) == p.x); /* no window buffer: the wrapper passes x */
    LS_CHECK(ptr_at(&pk, 5) == p.y);
    LS_CHECK_EQ_INT(pk.store[6].i32, 3);
    LS_CHECK(pk.params[7] == &pk.scratch[0] && pk.params[8] == &pk.scratch[1]);

    /* odd C: the last block is partial */
    p = conv_base(1, 1, 1000, 0);
    LS_CHECK_EQ_INT(sg_conv_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK_EQ_INT(pl.grid[1], 4);

    /* bias (Mamba2): its own variant, bias_ptr after w_ptr */
    p = conv_base(2, 1, 5120, 0);
    p.bias = P(0x500000);
    LS_CHECK_EQ_INT(sg_conv_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "C5120_T1_W4_CM_wbf16_B1") == 0);
    LS_CHECK_EQ_INT(sg_conv_args(&p, &pl, &conv_bias_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK(ptr_at(&pk, 2) == p.bias && ptr_at(&pk, 3) == p.state);
    /* a bias given to a variant compiled without one is refused */
    LS_CHECK_EQ_INT(sg_conv_args(&p, &pl, &conv_dec_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "bias_ptr") != NULL);
}

static void test_conv_verify(void)
{
    ls_conv_params p = conv_base(5, 4, 4096, 1); /* Kimi: window-major, fp32 weights */
    p.weight_dtype = LS_F32;
    sg_plan pl;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_conv_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "C4096_T4_W4_WM_wfp32_B0") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 5);
    LS_CHECK_EQ_INT(pl.grid[1], 16);
    tk_call c;
    tk_packed pk;
    LS_CHECK_EQ_INT(sg_conv_args(&p, &pl, &conv_ver_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK(ptr_at(&pk, 4) == p.inter);
    LS_CHECK(ptr_at(&pk, 5) == p.slot_idx); /* windows indexed by the pool slot */
    LS_CHECK(ptr_at(&pk, 6) == p.y);
    LS_CHECK_EQ_INT(pk.store[7].i32, 5);

    /* the same call channel-major picks the CM variant */
    p = conv_base(5, 8, 2048, 0);
    LS_CHECK_EQ_INT(sg_conv_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "C2048_T8_W4_CM_wbf16_B0") == 0);
}

static void expect_conv_refusal(ls_conv_params p, const char *needle)
{
    sg_plan pl;
    char err[256] = "";
    int rc = sg_conv_plan(&p, &pl, err, sizeof err);
    LS_CHECK(rc != 0);
    if (rc != 0 && !strstr(err, needle)) {
        fprintf(stderr, "  refusal message without \"%s\": %s\n", needle, err);
        LS_CHECK(0);
    }
}

static void test_conv_refusals(void)
{
    ls_conv_params p = conv_base(3, 4, 4096, 0);
    p.disable_state_update = 1;
    expect_conv_refusal(p, "disable_state_update");
    p = conv_base(3, 1, 4096, 0);
    p.width = 3;
    expect_conv_refusal(p, "width 4");
    p = conv_base(3, 1, 4096, 0);
    p.silu = 0;
    expect_conv_refusal(p, "SiLU");
    p = conv_base(3, 1, 4096, 0);
    p.state_dtype = LS_F32;
    expect_conv_refusal(p, "bf16 conv state");
    p = conv_base(3, 9, 4096, 0);
    expect_conv_refusal(p, "T=9");
    p = conv_base(3, 4, 4096, 0);
    p.inter = NULL;
    expect_conv_refusal(p, "inter none");
    p = conv_base(3, 1, 4096, 0);
    p.inter = P(0x20000000);
    expect_conv_refusal(p, "inter given");
    p = conv_base(3, 4, 4096, 0); /* x as [B, C, T] */
    p.x_stride_t = 1, p.x_stride_c = 4;
    expect_conv_refusal(p, "x/o strides");
    p = conv_base(3, 4, 4096, 0);
    p.y_stride_b = 4 * 4096 + 64;
    expect_conv_refusal(p, "x/o strides");
    p = conv_base(3, 1, 4096, 0);
    p.state_stride_c = 1, p.state_stride_w = 8192; /* neither orientation */
    expect_conv_refusal(p, "neither channel-major");
    p = conv_base(3, 1, 4096, 1);
    p.state_stride_slot = 4096 * 4;
    expect_conv_refusal(p, "state_stride_slot");
    p = conv_base(3, 4, 4096, 1); /* mixed orientation: windows channel-major, state window-major */
    p.inter_stride_c = 3, p.inter_stride_w = 1;
    expect_conv_refusal(p, "inter strides");
    p = conv_base(3, 4, 4096, 0);
    p.inter_stride_slot = 5LL * 4096 * 3; /* a pitch of 5 steps for T = 4 */
    expect_conv_refusal(p, "inter strides");
}

/* ---------------------------------------------------------------- ssu variants */

#define SSU_STRIDES                                                                                     \
    {"batch", TK_I32, 0, 0}, {"T", TK_I32, 0, 0}, {"nheads", TK_I32, 1, 0}, {"dim", TK_I32, 1, 0},      \
        {"dstate", TK_I32, 1, 0}, {"nheads_ngroups_ratio", TK_I32, 1, 0},                              \
        {"stride_state_batch", TK_I32, 1, 0}, {"stride_state_head", TK_I32, 1, 0},                     \
        {"stride_state_dim", TK_I32, 1, 0}, {"stride_state_dstate", TK_CONST, 0, 1},                   \
        {"stride_x_batch", TK_I32, 1, 0}, {"stride_x_T", TK_I32, 1, 0}, {"stride_x_head", TK_I32, 1, 0}, \
        {"stride_x_dim", TK_CONST, 0, 1}, {"stride_dt_batch", TK_I32, 1, 0},                           \
        {"stride_dt_T", TK_I32, 1, 0}, {"stride_dt_head", TK_CONST, 0, 1},                             \
        {"stride_dt_dim", TK_I32, 1, 0}, {"stride_dt_bias_head", TK_CONST, 0, 1},                      \
        {"stride_dt_bias_dim", TK_I32, 1, 0}, {"stride_A_head", TK_CONST, 0, 1},                       \
        {"stride_A_dim", TK_I32, 1, 0}, {"stride_A_dstate", TK_I32, 1, 0},                             \
        {"stride_B_batch", TK_I32, 1, 0}, {"stride_B_T", TK_I32, 1, 0}, {"stride_B_group", TK_I32, 1, 0}, \
        {"stride_B_dstate", TK_CONST, 0, 1}, {"stride_C_batch", TK_I32, 1, 0},                         \
        {"stride_C_T", TK_I32, 1, 0}, {"stride_C_group", TK_I32, 1, 0},                                \
        {"stride_C_dstate", TK_CONST, 0, 1}, {"stride_D_head", TK_CONST, 0, 1},                        \
        {"stride_D_dim", TK_I32, 1, 0}, {"stride_z_batch", TK_I32, 1, 0}, {"stride_z_T", TK_I32, 1, 0}, \
        {"stride_z_head", TK_I32, 1, 0}, {"stride_z_dim", TK_I32, 1, 0},                               \
        {"stride_out_batch", TK_I32, 1, 0}, {"stride_out_T", TK_I32, 1, 0},                            \
        {"stride_out_head", TK_I32, 1, 0}, {"stride_out_dim", TK_CONST, 0, 1},                         \
        {"stride_retrieve_parent_token_batch", TK_I32, 1, 0}, {"stride_retrieve_parent_token_T", TK_I32, 1, 0}

/* nemotron-h-8b tp2 decode: NH64 HD64 DS128 NG4, fp32 state, no z (as aot.py lists it) */
static const tk_arg ssu_dec_args[] = {
    {"state_ptr", TK_PTR, 1, 0}, {"x_ptr", TK_PTR, 1, 0}, {"dt_ptr", TK_PTR, 1, 0},
    {"dt_bias_ptr", TK_PTR, 1, 0}, {"A_ptr", TK_PTR, 1, 0}, {"B_ptr", TK_PTR, 1, 0},
    {"C_ptr", TK_PTR, 1, 0}, {"D_ptr", TK_PTR, 1, 0}, {"out_ptr", TK_PTR, 1, 0},
    {"state_batch_indices_ptr", TK_PTR, 1, 0}, {"pad_slot_id", TK_I32, 0, 0},
    {"cache_steps", TK_I32, 1, 0}, SSU_STRIDES,
};
static const tk_variant ssu_dec_v = {SG_SSU_KERNEL, "NH64_HD64_DS128_NG4_Sf32_dec_Z0", "e", NULL, NULL,
                                     1, 1, 16, 1, 0, 1, 0, 1,
                                     (int)(sizeof ssu_dec_args / sizeof ssu_dec_args[0]), ssu_dec_args, 90};
/* the verify variant with z: z_ptr, the intermediate buffer and its indices; stride_z_dim is 1 */
static const tk_arg ssu_ver_args[] = {
    {"state_ptr", TK_PTR, 1, 0}, {"x_ptr", TK_PTR, 1, 0}, {"dt_ptr", TK_PTR, 1, 0},
    {"dt_bias_ptr", TK_PTR, 1, 0}, {"A_ptr", TK_PTR, 1, 0}, {"B_ptr", TK_PTR, 1, 0},
    {"C_ptr", TK_PTR, 1, 0}, {"D_ptr", TK_PTR, 1, 0}, {"z_ptr", TK_PTR, 1, 0}, {"out_ptr", TK_PTR, 1, 0},
    {"state_batch_indices_ptr", TK_PTR, 1, 0}, {"pad_slot_id", TK_I32, 0, 0},
    {"intermediate_states_buffer", TK_PTR, 1, 0}, {"cache_steps", TK_I32, 0, 0},
    {"intermediate_state_indices_ptr", TK_PTR, 1, 0}, SSU_STRIDES,
};

static ls_ssu_params ssu_base(int B, int T)
{
    ls_ssu_params p = {.batch = B, .tokens = T, .nheads = 64, .head_dim = 64, .dstate = 128, .ngroups = 4,
                       .state_dtype = LS_F32};
    p.x = P(0x100000), p.dt = P(0x200000), p.Bm = P(0x300000), p.Cm = P(0x400000), p.A = P(0x500000);
    p.dt_bias = P(0x600000), p.D = P(0x700000), p.y = P(0x800000), p.state = P(0x10000000);
    p.slot_idx = P(0x900000), p.state_stride_slot = 64 * 64 * 128;
    return p;
}

static int arg_index(const tk_variant *v, const char *name)
{
    for (int i = 0; i < v->n_args; i++)
        if (strcmp(v->args[i].name, name) == 0)
            return i;
    return -1;
}

/* The packed value of a runtime int argument: constexprs (TK_CONST) are checked, not passed, so the
 * packed slot is the argument's index among the non-constexpr arguments. */
static long long int_arg(const tk_variant *v, const tk_packed *pk, const char *name)
{
    int i = arg_index(v, name), slot = 0;
    LS_CHECK(i >= 0 && v->args[i].kind != TK_CONST);
    if (i < 0)
        return -999;
    for (int j = 0; j < i; j++)
        slot += v->args[j].kind != TK_CONST;
    return (long long)pk->store[slot].i32;
}

static void test_ssu_decode(void)
{
    ls_ssu_params p = ssu_base(3, 1);
    sg_plan pl;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_ssu_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.kernel, SG_SSU_KERNEL) == 0);
    LS_CHECK(strcmp(pl.key, "NH64_HD64_DS128_NG4_Sf32_dec_Z0") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 8); /* cdiv(64, BLOCK_SIZE_M 8) */
    LS_CHECK_EQ_INT(pl.grid[1], 3);
    LS_CHECK_EQ_INT(pl.grid[2], 64);
    tk_call c;
    tk_packed pk;
    LS_CHECK_EQ_INT(sg_ssu_args(&p, &pl, &ssu_dec_v, &c, err, sizeof err), 0);
    int rc = tk_marshal(&c, &pk, err, sizeof err);
    if (rc)
        fprintf(stderr, "  %s\n", err);
    LS_CHECK_EQ_INT(rc, 0);
    LS_CHECK(ptr_at(&pk, 0) == p.state && ptr_at(&pk, 1) == p.x && ptr_at(&pk, 2) == p.dt);
    LS_CHECK(ptr_at(&pk, 3) == p.dt_bias && ptr_at(&pk, 4) == p.A && ptr_at(&pk, 5) == p.Bm);
    LS_CHECK(ptr_at(&pk, 6) == p.Cm && ptr_at(&pk, 7) == p.D && ptr_at(&pk, 8) == p.y);
    LS_CHECK(ptr_at(&pk, 9) == p.slot_idx);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "pad_slot_id"), -1);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "cache_steps"), 0);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "T"), 1);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "nheads_ngroups_ratio"), 16);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_state_batch"), 64 * 64 * 128);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_state_head"), 64 * 128);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_x_batch"), 64 * 64);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_dt_batch"), 64);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_dt_dim"), 0);  /* tied: dt expanded over hd */
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_A_dstate"), 0);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_B_batch"), 4 * 128);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_B_group"), 128);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_z_batch"), 0);
    int n = 0;
    for (int j = 0; j < ssu_dec_v.n_args; j++)
        n += ssu_dec_v.args[j].kind != TK_CONST;
    LS_CHECK_EQ_INT(pk.n, n); /* the 9 constexpr-1 strides are not passed */
    LS_CHECK_EQ_INT(n, ssu_dec_v.n_args - 9);
    LS_CHECK(pk.params[n] == &pk.scratch[0] && pk.params[n + 1] == &pk.scratch[1]);

    /* a padded slot pool pitch (larger than one item) is a runtime stride: taken */
    p.state_stride_slot = 64 * 64 * 128 + 16;
    LS_CHECK_EQ_INT(sg_ssu_args(&p, &pl, &ssu_dec_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    /* ... but one that breaks the /16 assumption is refused by the marshalling */
    p.state_stride_slot = 64 * 64 * 128 + 8;
    LS_CHECK_EQ_INT(sg_ssu_args(&p, &pl, &ssu_dec_v, &c, err, sizeof err), 0);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "stride_state_batch") != NULL);

    /* T > 1 with the state committed and no inter: the decode variant (T is a runtime int) */
    p = ssu_base(2, 3);
    LS_CHECK_EQ_INT(sg_ssu_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "NH64_HD64_DS128_NG4_Sf32_dec_Z0") == 0);
    LS_CHECK_EQ_INT(sg_ssu_args(&p, &pl, &ssu_dec_v, &c, err, sizeof err), 0);
    LS_CHECK_EQ_INT(tk_marshal(&c, &pk, err, sizeof err), 0);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_x_batch"), 3 * 64 * 64);
    LS_CHECK_EQ_INT(int_arg(&ssu_dec_v, &pk, "stride_dt_batch"), 3 * 64);
}

static void test_ssu_verify(void)
{
    ls_ssu_params p = ssu_base(5, 4);
    p.state_dtype = LS_BF16;
    p.z = P(0xa00000);
    p.disable_state_update = 1;
    p.inter = P(0x20000000);
    p.inter_stride_slot = 6LL * 64 * 64 * 128; /* a pitch of 6 steps */
    sg_plan pl;
    char err[256] = "";
    LS_CHECK_EQ_INT(sg_ssu_plan(&p, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "NH64_HD64_DS128_NG4_Sbf16_ver_Z1") == 0);
    static const tk_variant v = {SG_SSU_KERNEL, "NH64_HD64_DS128_NG4_Sbf16_ver_Z1", "e", NULL, NULL, 1, 1, 16,
                                 1, 0, 1, 0, 1, (int)(sizeof ssu_ver_args / sizeof ssu_ver_args[0]), ssu_ver_args, 90};
    /* the z variant compiles stride_z_dim as constexpr 1 */
    tk_arg args[sizeof ssu_ver_args / sizeof ssu_ver_args[0]];
    memcpy(args, ssu_ver_args, sizeof args);
    args[arg_index(&v, "stride_z_dim")] = (tk_arg){"stride_z_dim", TK_CONST, 0, 1};
    tk_variant vz = v;
    vz.args = args;
    tk_call c;
    tk_packed pk;
    LS_CHECK_EQ_INT(sg_ssu_args(&p, &pl, &vz, &c, err, sizeof err), 0);
    int rc = tk_marshal(&c, &pk, err, sizeof err);
    if (rc)
        fprintf(stderr, "  %s\n", err);
    LS_CHECK_EQ_INT(rc, 0);
    LS_CHECK(ptr_at(&pk, 8) == p.z && ptr_at(&pk, 9) == p.y);
    LS_CHECK(ptr_at(&pk, 12) == p.inter && ptr_at(&pk, 14) == p.slot_idx);
    LS_CHECK_EQ_INT(int_arg(&vz, &pk, "cache_steps"), 6);
    LS_CHECK_EQ_INT(int_arg(&vz, &pk, "T"), 4);
    LS_CHECK_EQ_INT(int_arg(&vz, &pk, "stride_z_batch"), 4 * 64 * 64);
    LS_CHECK_EQ_INT(int_arg(&vz, &pk, "stride_out_T"), 64 * 64);

    /* falcon-h1 tp8: 3 heads, dstate 256 -> BLOCK_SIZE_M 4, 8 warps */
    ls_ssu_params f = ssu_base(2, 1);
    f.nheads = 3, f.head_dim = 128, f.dstate = 256, f.ngroups = 1;
    LS_CHECK_EQ_INT(sg_ssu_plan(&f, &pl, err, sizeof err), 0);
    LS_CHECK(strcmp(pl.key, "NH3_HD128_DS256_NG1_Sf32_dec_Z0") == 0);
    LS_CHECK_EQ_INT(pl.grid[0], 32);
    LS_CHECK_EQ_INT(pl.grid[2], 3);
    int nw = 0;
    LS_CHECK_EQ_INT(sg_ssu_block_m(256, &nw), 4);
    LS_CHECK_EQ_INT(nw, 8);
    LS_CHECK_EQ_INT(sg_ssu_block_m(128, &nw), 8);
    LS_CHECK_EQ_INT(nw, 1);
}

static void test_ssu_refusals(void)
{
    sg_plan pl;
    char err[256] = "";
    ls_ssu_params p = ssu_base(3, 4);
    p.disable_state_update = 1; /* no inter: not a mode SGLang calls */
    LS_CHECK(sg_ssu_plan(&p, &pl, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "disable_state_update 1, inter none") != NULL);
    p = ssu_base(3, 4);
    p.inter = P(0x20000000), p.inter_stride_slot = 4LL * 64 * 64 * 128; /* inter but the state committed */
    LS_CHECK(sg_ssu_plan(&p, &pl, err, sizeof err) != 0);
    p.disable_state_update = 1;
    p.inter_stride_slot = 3LL * 64 * 64 * 128; /* pitch < T */
    LS_CHECK(sg_ssu_plan(&p, &pl, err, sizeof err) != 0);
    LS_CHECK(strstr(err, "inter_stride_slot") != NULL);
    p.inter_stride_slot = 4LL * 64 * 64 * 128 + 8; /* not whole steps */
    LS_CHECK(sg_ssu_plan(&p, &pl, err, sizeof err) != 0);
    p = ssu_base(3, 1);
    p.ngroups = 3; /* 64 % 3 */
    LS_CHECK(sg_ssu_plan(&p, &pl, err, sizeof err) != 0);
    p = ssu_base(3, 1);
    p.state_dtype = (ls_dtype)99;
    LS_CHECK(sg_ssu_plan(&p, &pl, err, sizeof err) != 0);
}

int main(void)
{
    test_conv_decode();
    test_conv_verify();
    test_conv_refusals();
    test_ssu_decode();
    test_ssu_verify();
    test_ssu_refusals();
    return ls_test_exit();
}
