/*
 * test_sg_pool.c — the sglang peer's pool state-op adapters (no GPU): what a pool-wide copy,
 * accept or zero maps to (kernel, key, grid), the arguments in the kernels' signature order with
 * their values (strides of the slot-indexed spec buffers, the slot as the source row), the fused
 * slot kernels' descriptor rows, the shape of our torch index-kernel rendering, the JIT's i32/i64
 * typing of the layer strides, and the refusals (LS_OP_UNSUPPORTED: one buffer of one layer, odd
 * item sizes) and errors (NULL index lists). The variants are written by hand with the argument
 * lists aot.py produces for SGLang 0.5.23 (test_peer_aot_sglang_pool checks them against a real
 * compile, test_peer_sg_keys the keys against the generated table).
 */
#include <stdint.h>
#include <string.h>

#include "ls_test.h"
#include "sg_pool.h"
#include "tk.h"

#define P(x) ((void *)(uintptr_t)(x))

static const tk_arg scatter_args[] = {
    {"src_ptr", TK_PTR, 1, 0}, {"dst_ptr", TK_PTR, 1, 0}, {"dst_indices_raw_ptr", TK_PTR, 0, 0},
    {"step_indices_raw_ptr", TK_PTR, 0, 0}, {"src_indices_raw_ptr", TK_PTR, 0, 0},
    {"src_layer_stride", TK_I32, 1, 0}, {"src_req_stride", TK_I32, 1, 0}, {"src_step_stride", TK_I32, 1, 0},
    {"dst_layer_stride", TK_I32, 1, 0}, {"dst_req_stride", TK_I32, 1, 0}, {"src_req_size", TK_I32, 0, 0},
    {"src_step_size", TK_I32, 0, 0}, {"dst_req_size", TK_I32, 0, 0},
};
static const tk_variant scatter_v = {SG_SCATTER_KERNEL, "E262144_fp32_W0", "e", NULL, NULL, 4, 1, 0, 0,
                                     0, 1, 0, 1, 13, scatter_args};
static const tk_arg conv_args[] = {
    {"src_ptr", TK_PTR, 1, 0}, {"dst_ptr", TK_PTR, 1, 0}, {"dst_indices_raw_ptr", TK_PTR, 0, 0},
    {"step_indices_raw_ptr", TK_PTR, 0, 0}, {"src_indices_raw_ptr", TK_PTR, 0, 0},
    {"src_layer_stride", TK_I64, 1, 0}, {"src_req_stride", TK_I32, 1, 0}, {"src_step_stride", TK_I32, 1, 0},
    {"src_dim_stride", TK_I32, 0, 0}, {"src_win_stride", TK_CONST, 0, 1}, {"dst_layer_stride", TK_I32, 1, 0},
    {"dst_req_stride", TK_I32, 1, 0}, {"src_req_size", TK_I32, 0, 0}, {"src_step_size", TK_I32, 0, 0},
    {"dst_req_size", TK_I32, 0, 0},
};
static const tk_variant conv_v = {SG_CONV_SCATTER_KERNEL, "E12288_KM13_W1", "e", NULL, NULL, 4, 1, 0, 0,
                                  0, 1, 0, 1, 15, conv_args};
static const tk_arg copy_args[] = {
    {"ptr_arr", TK_PTR, 1, 0}, {"feat_arr", TK_PTR, 1, 0}, {"layer_stride_arr", TK_PTR, 1, 0},
    {"slot_stride_arr", TK_PTR, 1, 0}, {"src_arr", TK_PTR, 0, 0}, {"dst_arr", TK_PTR, 0, 0},
};
static const tk_variant copy_v = {SG_SLOT_COPY_KERNEL, "FB12", "e", NULL, NULL, 4, 1, 0, 0, 0, 1, 0, 1, 6, copy_args};
static const tk_arg clear_args[] = {
    {"ptr_arr", TK_PTR, 1, 0}, {"feat_arr", TK_PTR, 1, 0}, {"layer_stride_arr", TK_PTR, 1, 0},
    {"slot_stride_arr", TK_PTR, 1, 0}, {"index_arr", TK_PTR, 0, 0},
};
static const tk_variant clear_v = {SG_SLOT_CLEAR_KERNEL, "FB12", "e", NULL, NULL, 4, 1, 0, 0, 0, 1, 0, 1, 5,
                                   clear_args};

/* kimi-linear tp2 as a pool: three window-major conv buffers of 2048 x 3 bf16, temporal 16 x 128 x
 * 128 fp32; `layers` layers, `slots` slots, T draft tokens (0: no spec). */
static ls_state_params kimi_pool(int layers, int slots, int T)
{
    ls_state_params p;
    memset(&p, 0, sizeof p);
    p.n_buffers = 4, p.layers = layers, p.slots = slots, p.spec_tokens = T;
    for (int b = 0; b < 4; b++) {
        p.buf[b].item_bytes = b < 3 ? 2048 * 3 * 2 : 16 * 128 * 128 * 4;
        p.buf[b].main = P(0x10000000ull * (uint64_t)(b + 1));
        p.buf[b].spec = T ? P(0x100000000ull * (uint64_t)(b + 1)) : NULL;
    }
    p.count = 5;
    p.src = P(0x1004), p.dst = P(0x2008), p.step = P(0x3004); /* slices: 4-byte aligned only */
    return p;
}

static long long ival(const tk_call *c, const char *name)
{
    const tk_val *x = tk_get(c, name);
    LS_REQUIRE(x != NULL && x->kind == TK_I64);
    return x->u.i;
}

static const void *pval(const tk_call *c, const char *name)
{
    const tk_val *x = tk_get(c, name);
    LS_REQUIRE(x != NULL && x->kind == TK_PTR);
    return x->u.p;
}

static void test_accept(void)
{
    char err[512];
    sg_plan pl;
    tk_call c;
    tk_packed pk;
    ls_state_params p = kimi_pool(20, 9, 4);
    LS_CHECK(sg_pool_check(&p, SG_POOL_ACCEPT, err, sizeof err) == 0);

    /* temporal: the state scatter, grid (requests, layers, cdiv(262144, 1024)) */
    LS_CHECK(sg_accept_plan(&p, 3, &pl, err, sizeof err) == 0);
    LS_CHECK(strcmp(pl.kernel, SG_SCATTER_KERNEL) == 0 && strcmp(pl.key, "E262144_fp32_W0") == 0);
    LS_CHECK(pl.grid[0] == 5 && pl.grid[1] == 20 && pl.grid[2] == 256);
    sg_accept_args(&p, 3, &pl, &scatter_v, &c);
    LS_CHECK(pval(&c, "src_ptr") == p.buf[3].spec && pval(&c, "dst_ptr") == p.buf[3].main);
    LS_CHECK(pval(&c, "src_indices_raw_ptr") == p.dst); /* spec rows are pool slots */
    LS_CHECK(pval(&c, "step_indices_raw_ptr") == p.step);
    LS_CHECK(ival(&c, "src_layer_stride") == 9LL * 4 * 262144 && ival(&c, "src_req_stride") == 4LL * 262144);
    LS_CHECK(ival(&c, "src_step_stride") == 262144 && ival(&c, "dst_layer_stride") == 9LL * 262144);
    LS_CHECK(ival(&c, "dst_req_stride") == 262144 && ival(&c, "src_req_size") == 9);
    LS_CHECK(ival(&c, "src_step_size") == 4 && ival(&c, "dst_req_size") == 9);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) == 0);
    LS_CHECK(pk.n == 13 && pk.store[5].i32 == 9 * 4 * 262144);

    /* conv buffer: the window scatter, KM1 = 3, (dim, win) strides (3, 1) */
    LS_CHECK(sg_accept_plan(&p, 1, &pl, err, sizeof err) == 0);
    LS_CHECK(strcmp(pl.kernel, SG_CONV_SCATTER_KERNEL) == 0 && strcmp(pl.key, "E6144_KM13_W0") == 0);
    LS_CHECK(pl.grid[0] == 5 && pl.grid[1] == 20 && pl.grid[2] == 6);
    sg_accept_args(&p, 1, &pl, &conv_v, &c);
    LS_CHECK(ival(&c, "src_dim_stride") == 3 && ival(&c, "src_win_stride") == 1);
    LS_CHECK(ival(&c, "src_step_stride") == 6144 && ival(&c, "dst_req_stride") == 6144);

    /* the JIT types a layer stride past 2^31 as i64: W1 (spec only), W2 (both) */
    p = kimi_pool(20, 1100, 8); /* spec layer 1100*8*262144 > 2^31, main 1100*262144 < 2^31 */
    LS_CHECK(sg_accept_plan(&p, 3, &pl, err, sizeof err) == 0 && strcmp(pl.key, "E262144_fp32_W1") == 0);
    p = kimi_pool(20, 9000, 2);
    LS_CHECK(sg_accept_plan(&p, 3, &pl, err, sizeof err) == 0 && strcmp(pl.key, "E262144_fp32_W2") == 0);
    LS_CHECK(sg_accept_plan(&p, 0, &pl, err, sizeof err) == 0 && strcmp(pl.key, "E6144_KM13_W0") == 0);
    /* a variant compiled with i32 strides refuses a value past i32 */
    p = kimi_pool(20, 1100, 8);
    sg_accept_args(&p, 3, &pl, &scatter_v, &c);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) != 0 && strstr(err, "src_layer_stride") != NULL);

    /* refusals */
    p = kimi_pool(20, 9, 4);
    p.buf[3].item_bytes = 4 * 1000; /* 1000 elements: not a multiple of 16 */
    LS_CHECK(sg_accept_plan(&p, 3, &pl, err, sizeof err) != 0 && strstr(err, "1000") != NULL);
    p = kimi_pool(20, 9, 0);
    LS_CHECK(sg_pool_check(&p, SG_POOL_ACCEPT, err, sizeof err) < 0 && strstr(err, "speculative") != NULL);
}

static void test_slot_ops(void)
{
    char err[512];
    sg_plan pl;
    tk_call c;
    tk_packed pk;
    int64_t t[SG_SLOT_TABLE_LEN];
    ls_state_params p = kimi_pool(20, 11, 0);
    LS_CHECK(sg_pool_check(&p, SG_POOL_COPY, err, sizeof err) == 0);
    LS_CHECK(sg_slot_table(&p, t) == 3);
    LS_CHECK(t[0] == 0x10000000 && t[2] == 0x30000000 && t[3] == 0); /* conv buffers only */
    LS_CHECK(t[LS_MAX_BUFFERS] == 6144 && t[2 * LS_MAX_BUFFERS] == 11 * 6144 && t[3 * LS_MAX_BUFFERS] == 6144);

    LS_CHECK(sg_slot_plan(&p, 0, &pl, err, sizeof err) == 0);
    LS_CHECK(strcmp(pl.kernel, SG_SLOT_COPY_KERNEL) == 0 && strcmp(pl.key, "FB6") == 0);
    LS_CHECK(pl.grid[0] == 5 && pl.grid[1] == 3 && pl.grid[2] == 20); /* (indices, tensors, layers) */
    const int64_t *dev = (const int64_t *)P(0x7000);
    sg_slot_args(&p, 0, &pl, &copy_v, dev, &c);
    LS_CHECK(pval(&c, "feat_arr") == dev + LS_MAX_BUFFERS && pval(&c, "slot_stride_arr") == dev + 3 * LS_MAX_BUFFERS);
    LS_CHECK(pval(&c, "src_arr") == p.src && pval(&c, "dst_arr") == p.dst);
    LS_CHECK(tk_marshal(&c, &pk, err, sizeof err) == 0 && pk.n == 6);

    LS_CHECK(sg_slot_plan(&p, 1, &pl, err, sizeof err) == 0 && strcmp(pl.kernel, SG_SLOT_CLEAR_KERNEL) == 0);
    sg_slot_args(&p, 1, &pl, &clear_v, dev, &c);
    LS_CHECK(pval(&c, "index_arr") == p.dst && tk_marshal(&c, &pk, err, sizeof err) == 0 && pk.n == 5);

    /* the largest conv item sets MAX_FEAT_BLOCKS (qwen3-next tp1: 8192 x 3 -> 24) */
    p.buf[1].item_bytes = 8192 * 3 * 2;
    LS_CHECK(sg_slot_plan(&p, 0, &pl, err, sizeof err) == 0 && strcmp(pl.key, "FB24") == 0);

    /* our torch index rendering on the temporal buffer: [layers, rows, elem] 4-byte elements */
    p = kimi_pool(20, 11, 0);
    sg_index_shape ix;
    LS_CHECK(sg_index_plan(&p, &ix, err, sizeof err) == 0);
    LS_CHECK(ix.layers == 20 && ix.rows == 5 && ix.elem == 262144 && ix.layer_stride == 11LL * 262144);
    LS_CHECK(ix.n == 20LL * 5 * 262144 && ix.blocks == (unsigned)(ix.n / 512) && ix.scratch_bytes == ix.n * 4);
    p.count = 1;
    p.buf[3].item_bytes = 4 * 100;
    LS_CHECK(sg_index_plan(&p, &ix, err, sizeof err) == 0 && ix.n == 2000 && ix.blocks == 4);
}

static void test_refusals(void)
{
    char err[512];
    ls_state_params p = kimi_pool(20, 11, 0);
    /* one buffer of one layer (the bench's per-tensor variant): SGLang has no such call */
    ls_state_params one = p;
    one.n_buffers = 1, one.layers = 1;
    LS_CHECK(sg_pool_check(&one, SG_POOL_COPY, err, sizeof err) == 1 && strstr(err, "whole pool") != NULL);
    /* odd conv item: not bf16 elements */
    ls_state_params odd = p;
    odd.buf[0].item_bytes = 6145;
    LS_CHECK(sg_pool_check(&odd, SG_POOL_ZERO, err, sizeof err) == 1 && strstr(err, "6145") != NULL);
    /* bad params are errors, not refusals */
    ls_state_params bad = p;
    bad.src = NULL;
    LS_CHECK(sg_pool_check(&bad, SG_POOL_COPY, err, sizeof err) == -1 && strstr(err, "src NULL") != NULL);
    LS_CHECK(sg_pool_check(&bad, SG_POOL_ZERO, err, sizeof err) == 0); /* zero takes no src */
    bad = p;
    bad.count = -1;
    LS_CHECK(sg_pool_check(&bad, SG_POOL_ZERO, err, sizeof err) == -1 && strstr(err, "count -1") != NULL);
    bad = p;
    bad.dst = NULL;
    bad.count = 0; /* nothing to do: no list needed */
    LS_CHECK(sg_pool_check(&bad, SG_POOL_ZERO, err, sizeof err) == 0);
}

int main(void)
{
    test_accept();
    test_slot_ops();
    test_refusals();
    return ls_test_exit();
}
