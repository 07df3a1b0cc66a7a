/*
 * test_peer_adapters.c — the host halves of the CUDA peers' adapters (docs/peers.md), no GPU:
 *   flashinfer  ls_fi_ssu_map / ls_fi_ssu_explain: linstate's ssu params -> FlashInfer's params
 *               fields (strides, cache_steps, indices), the algorithm and grid FlashInfer's sm_90
 *               dispatch picks, and every refused case with its error text;
 *   sglang CUDA ls_sg_conv_map / ls_sg_kda_map: conv strides in both state orientations, the
 *               launch grid, the packed q|k|v row, SGLang's own KDA rule (B >= 8), refusals.
 * Pointers are dummies: nothing is dereferenced.
 */
#include <stdio.h>
#include <string.h>

#include "ls_fi_ssu.h"
#include "ls_sglang_cuda.h"
#include "ls_test.h"

static uint16_t d16[16];
static float df[16];
static int32_t didx[16];

#define HAS(s, sub) (strstr((s), (sub)) != NULL)

static ls_ssu_params ssu_base(int B, int T, int nh, int hd, int ds, int ng, ls_dtype sdt)
{
    ls_ssu_params p = {.batch = B, .tokens = T, .nheads = nh, .head_dim = hd, .dstate = ds, .ngroups = ng,
                       .state_dtype = sdt, .state_stride_slot = (int64_t)nh * hd * ds, .slots = B + 4};
    p.x = p.dt = p.Bm = p.Cm = d16;
    p.y = d16;
    p.A = df;
    p.dt_bias = p.D = d16;
    p.state = df;
    p.slot_idx = didx;
    return p;
}

static const ls_fi_ssu_inst insts[] = {{64, 128, 1}, {80, 128, 1}, {64, 128, 2}, {64, 128, 4}};
#define NI ((int)(sizeof insts / sizeof insts[0]))

static void test_fi_map(void)
{
    char err[512], buf[256];
    ls_fi_ssu_plan pl;
    /* decode, nemotron-h-8b tp8: nh 16, hd 64, ds 128, ng 1 */
    ls_ssu_params p = ssu_base(5, 1, 16, 64, 128, 1, LS_F32);
    p.state_stride_slot = 16 * 64 * 128 + 4096; /* a gap between slots is fine */
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_AUTO, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK_EQ_INT(pl.mtp, 0);
    LS_CHECK_EQ_INT(pl.update_state, 1);
    LS_CHECK_EQ_INT(pl.state_bf16, 0);
    LS_CHECK(pl.x_stride_batch == 16 * 64 && pl.out_stride_batch == 16 * 64);
    LS_CHECK(pl.dt_stride_batch == 16 && pl.B_stride_batch == 128 && pl.C_stride_batch == 128);
    LS_CHECK(pl.state_stride_batch == 16 * 64 * 128 + 4096);
    LS_CHECK(pl.state_cache_size == 9);
    LS_CHECK(pl.state_batch_indices == didx && pl.intermediate_states == NULL && pl.z == NULL);
    /* auto on 132 SMs: 5*16 = 80 blocks < 264 -> simple, tiled over dim/4 */
    LS_CHECK_EQ_INT(ls_fi_ssu_auto_algorithm(&pl, 132), LS_FI_ALGO_SIMPLE);
    ls_fi_ssu_explain(&pl, 132, buf, sizeof buf);
    LS_CHECK(HAS(buf, "stp simple-tiled grid=(5,16,16)"));
    /* B = 64: 1024 blocks >= 264 -> vertical */
    p.batch = 64;
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_AUTO, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK_EQ_INT(ls_fi_ssu_auto_algorithm(&pl, 132), LS_FI_ALGO_VERTICAL);
    ls_fi_ssu_explain(&pl, 132, buf, sizeof buf);
    LS_CHECK(HAS(buf, "vertical") && HAS(buf, "grid=(64,16)"));
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_HORIZONTAL, insts, NI, &pl, err, sizeof err), 0);
    ls_fi_ssu_explain(&pl, 132, buf, sizeof buf);
    LS_CHECK(HAS(buf, "horizontal") && HAS(buf, "block=(32,5)"));
    /* z gate, bf16 state */
    p = ssu_base(3, 1, 16, 64, 128, 1, LS_BF16);
    p.z = d16;
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_AUTO, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK(pl.z == d16 && pl.z_stride_batch == 16 * 64 && pl.state_bf16 == 1);

    /* verify T = 4: inter at a pitch of 4 steps (and of 6: cache_steps follows the pitch) */
    p = ssu_base(3, 4, 16, 64, 128, 1, LS_F32);
    p.inter = df;
    p.disable_state_update = 1;
    p.inter_stride_slot = 4LL * 16 * 64 * 128;
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_AUTO, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK(pl.mtp == 1 && pl.cache_steps == 4 && pl.update_state == 0);
    LS_CHECK(pl.intermediate_state_indices == didx && pl.intermediate_states == df);
    LS_CHECK(pl.x_stride_batch == 4 * 16 * 64 && pl.x_stride_mtp == 16 * 64);
    LS_CHECK(pl.dt_stride_batch == 4 * 16 && pl.dt_stride_mtp == 16);
    LS_CHECK(pl.B_stride_batch == 4 * 128 && pl.B_stride_mtp == 128);
    ls_fi_ssu_explain(&pl, 132, buf, sizeof buf);
    LS_CHECK(HAS(buf, "mtp simple T=4 grid=(3,16,4)")); /* 1320/48 = 27 -> clamp to 64/16 = 4 */
    p.inter_stride_slot = 6LL * 16 * 64 * 128;
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_AUTO, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK(pl.cache_steps == 6);
    p.batch = 64; /* 1024 tiles: ctas 1 */
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_AUTO, insts, NI, &pl, err, sizeof err), 0);
    ls_fi_ssu_explain(&pl, 132, buf, sizeof buf);
    LS_CHECK(HAS(buf, "grid=(64,16,1)"));
    /* T = 2 commit without inter: the final state is written */
    p = ssu_base(3, 2, 16, 64, 128, 1, LS_F32);
    LS_CHECK_EQ_INT(ls_fi_ssu_map(&p, LS_FI_ALGO_SIMPLE, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK(pl.mtp == 1 && pl.update_state == 1 && pl.intermediate_states == NULL);
    /* explain without pointers */
    ls_ssu_params q = {.batch = 2, .tokens = 1, .nheads = 16, .head_dim = 64, .dstate = 128, .ngroups = 1,
                       .state_dtype = LS_F32, .state_stride_slot = 16 * 64 * 128};
    LS_CHECK_EQ_INT(ls_fi_ssu_map_shape(&q, 0, insts, NI, &pl, err, sizeof err), 0);
    LS_CHECK(ls_fi_ssu_map(&q, 0, insts, NI, &pl, err, sizeof err) != 0 && HAS(err, "required"));
}

static void test_fi_refusals(void)
{
    char err[512];
    ls_fi_ssu_plan pl;
    /* falcon-h1 tp2: 12 heads on 1 group */
    ls_ssu_params p = ssu_base(3, 1, 12, 128, 256, 1, LS_F32);
    LS_CHECK(ls_fi_ssu_map(&p, 0, NULL, 0, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "12 heads per group") && HAS(err, "1, 2, 4, 8, 16, 32, 64"));
    /* not compiled: head_dim 80 with T = 2 */
    p = ssu_base(3, 2, 16, 80, 128, 1, LS_F32);
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "head_dim 80, dstate 128, T 2 was not compiled") && HAS(err, "64x128/T4"));
    /* verify with inter and a final write */
    p = ssu_base(3, 4, 16, 64, 128, 1, LS_F32);
    p.inter = df;
    p.inter_stride_slot = 4LL * 16 * 64 * 128;
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "not both"));
    /* inter pitch not a multiple of one step */
    p.disable_state_update = 1;
    p.inter_stride_slot = 4LL * 16 * 64 * 128 + 64;
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "inter_stride_slot"));
    p.inter_stride_slot = 3LL * 16 * 64 * 128; /* fewer steps than T */
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, ">= T = 4"));
    /* decode with inter */
    p = ssu_base(3, 1, 16, 64, 128, 1, LS_F32);
    p.inter = df;
    p.inter_stride_slot = 16LL * 64 * 128;
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "single-token kernel has no intermediate"));
    /* vertical / horizontal for T > 1 */
    p = ssu_base(3, 2, 16, 64, 128, 1, LS_F32);
    LS_CHECK(ls_fi_ssu_map(&p, LS_FI_ALGO_VERTICAL, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "SM100+"));
    LS_CHECK(ls_fi_ssu_map(&p, LS_FI_ALGO_HORIZONTAL, insts, NI, &pl, err, sizeof err) != 0);
    LS_CHECK(HAS(err, "horizontal"));
    /* basic field errors */
    p = ssu_base(3, 1, 16, 64, 128, 3, LS_F32);
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0 && HAS(err, "ngroups 3"));
    p = ssu_base(3, 1, 16, 64, 128, 1, LS_F32);
    p.state_stride_slot = 100;
    LS_CHECK(ls_fi_ssu_map(&p, 0, insts, NI, &pl, err, sizeof err) != 0 && HAS(err, "state_stride_slot"));
    p = ssu_base(3, 1, 16, 64, 128, 1, LS_F32);
    LS_CHECK(ls_fi_ssu_map(&p, 7, insts, NI, &pl, err, sizeof err) != 0 && HAS(err, "algorithm 7"));
}

static ls_conv_params conv_base(int B, int T, int C, int W, int window_major)
{
    ls_conv_params p = {.batch = B, .tokens = T, .channels = C, .width = W, .silu = 1,
                        .weight_dtype = LS_BF16, .state_dtype = LS_BF16, .slots = B + 4};
    p.x = d16;
    p.x_stride_b = (int64_t)T * C, p.x_stride_t = C, p.x_stride_c = 1;
    p.y = d16;
    p.y_stride_b = (int64_t)T * C, p.y_stride_t = C, p.y_stride_c = 1;
    p.weight = d16;
    p.state = d16;
    p.state_stride_slot = (int64_t)C * (W - 1);
    p.state_stride_c = window_major ? 1 : W - 1;
    p.state_stride_w = window_major ? C : 1;
    p.slot_idx = didx;
    return p;
}

static void test_sg_conv(void)
{
    char err[512];
    ls_sg_conv_plan pl;
    ls_conv_params p = conv_base(7, 1, 1280, 4, 0); /* nemotron-h-8b tp8, channel-major */
    p.bias = d16;
    LS_CHECK_EQ_INT(ls_sg_conv_map(&p, &pl, 1, err, sizeof err), 0);
    LS_CHECK(pl.grid_x == 7 && pl.grid_y == 20 && pl.threads == 64);
    LS_CHECK(pl.x_batch_stride == 1280 && pl.x_c_stride == 1 && pl.x_l_stride == 1280);
    LS_CHECK(pl.conv_state_len == 3 && pl.conv_state_batch_stride == 3840);
    LS_CHECK(pl.conv_state_c_stride == 3 && pl.conv_state_l_stride == 1);
    LS_CHECK(pl.weight_c_stride == 4 && pl.weight_width_stride == 1 && pl.silu == 1);
    LS_CHECK(pl.bias == d16 && pl.conv_state_indices == didx && pl.seqlen == 1);
    /* window-major (KDA's pool) with T = 3, W = 2, a strided y */
    p = conv_base(3, 3, 1000, 2, 1);
    p.y_stride_b = 5000, p.y_stride_t = 1024;
    LS_CHECK_EQ_INT(ls_sg_conv_map(&p, &pl, 1, err, sizeof err), 0);
    LS_CHECK(pl.conv_state_c_stride == 1 && pl.conv_state_l_stride == 1000 && pl.conv_state_len == 1);
    LS_CHECK(pl.out_batch_stride == 5000 && pl.out_l_stride == 1024 && pl.grid_y == 16 && pl.seqlen == 3);
    /* refusals */
    p = conv_base(3, 1, 512, 4, 1);
    p.weight_dtype = LS_F32;
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "fp32 weights"));
    p = conv_base(3, 1, 512, 4, 0);
    p.state_dtype = LS_F32;
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "fp32 conv state"));
    p = conv_base(3, 4, 512, 4, 0);
    p.inter = d16;
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "Triton conv"));
    p = conv_base(3, 4, 512, 4, 0);
    p.disable_state_update = 1;
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "always advances"));
    p = conv_base(3, 1, 512, 5, 0);
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "width 5"));
    p = conv_base(3, 1, 1 << 20, 4, 0);
    p.slots = 2000; /* 2000 * 3 Mi elements > 2^32 */
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "uint32"));
    p = conv_base(3, 1, 512, 4, 0);
    p.state = NULL;
    LS_CHECK(ls_sg_conv_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "required"));
    LS_CHECK_EQ_INT(ls_sg_conv_map(&p, &pl, 0, err, sizeof err), 0);
}

static ls_delta_params kda_base(int B, int H, int HV)
{
    ls_delta_params p = {.batch = B, .tokens = 1, .heads_qk = H, .heads_v = HV, .dk = 128, .dv = 128,
                         .scale = 0.088f, .state_dtype = LS_F32, .state_layout = LS_STATE_VK,
                         .state_stride_slot = (int64_t)HV * 128 * 128, .slots = B + 4};
    p.q = p.k = p.v = p.a = p.b = d16;
    p.o = d16;
    p.A_log = df;
    p.dt_bias = df;
    p.state = df;
    p.slot_idx = didx;
    return p;
}

static void test_sg_kda(void)
{
    char err[512];
    ls_sg_kda_plan pl;
    ls_delta_params p = kda_base(3, 4, 4); /* kimi-linear tp8 */
    LS_CHECK_EQ_INT(ls_sg_kda_map(&p, &pl, 1, err, sizeof err), 0);
    LS_CHECK(pl.qkv_row == 2 * 4 * 128 + 4 * 128 && pl.scratch_bytes == 3LL * 1536 * 2);
    LS_CHECK(pl.blocks == 12 && pl.threads == 256 && pl.stride_a == 512 && pl.stride_b == 4);
    LS_CHECK(pl.stride_state == 4 * 128 * 128 && pl.H == 4 && pl.HV == 4);
    LS_CHECK_EQ_INT(ls_sg_kda_sglang_covered(&p), 0); /* B = 3 < 8: SGLang runs Triton */
    p.batch = 8;
    LS_CHECK_EQ_INT(ls_sg_kda_sglang_covered(&p), 1);
    LS_CHECK_EQ_INT(ls_sglang_cuda_kda_covered(&p), 1);
    p = kda_base(3, 2, 8); /* grouped value heads */
    LS_CHECK_EQ_INT(ls_sg_kda_map(&p, &pl, 1, err, sizeof err), 0);
    LS_CHECK(pl.qkv_row == 2 * 2 * 128 + 8 * 128 && pl.blocks == 24);
    /* refusals */
    p = kda_base(3, 4, 4);
    p.state_layout = LS_STATE_KV;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "[slot, HV, V, K] (vk)"));
    p = kda_base(3, 4, 4);
    p.tokens = 2;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "T = 1 only"));
    p = kda_base(3, 4, 4);
    p.state_dtype = LS_BF16;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "fp32 state only"));
    p = kda_base(3, 4, 4);
    p.dk = 64;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "K = V = 128"));
    p = kda_base(3, 4, 4);
    p.disable_state_update = 1;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "disable_state_update"));
    p = kda_base(3, 4, 4);
    p.inter = df;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "inter"));
    p = kda_base(3, 4, 6);
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "multiple"));
    p = kda_base(3, 4, 4);
    p.state_stride_slot += 2;
    LS_CHECK(ls_sg_kda_map(&p, &pl, 1, err, sizeof err) != 0 && HAS(err, "float4"));
}

int main(void)
{
    test_fi_map();
    test_fi_refusals();
    test_sg_conv();
    test_sg_kda();
    return ls_test_exit();
}
