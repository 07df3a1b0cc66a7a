/*
 * test_desc.c — descriptor validation (every field named in the error), pool-config and backend
 * validation at create, and a user-defined descriptor (no preset behind it: two conv tensors of
 * different shapes and orientations, fp32 conv, bf16 temporal) running every pool operation.
 */
#include "pool_test_util.h"

static ls_state_desc good_user_desc(void)
{
    ls_state_desc d;
    memset(&d, 0, sizeof d);
    d.conv_dtype = LS_F32;
    d.temporal_dtype = LS_BF16;
    d.layers = 3;
    d.n_conv = 2;
    d.conv[0] = (ls_conv_shape){5, 2, LS_CONV_CHANNEL_MAJOR};
    d.conv[1] = (ls_conv_shape){7, 3, LS_CONV_WINDOW_MAJOR};
    d.temporal[0] = 3;
    d.temporal[1] = 5;
    d.temporal[2] = 7;
    d.spec_tokens = 3;
    return d;
}

/* Mutate one field of a valid descriptor; check and create must both fail naming it. */
#define EXPECT_BAD(mutation, needle)                                                          \
    do {                                                                                       \
        ls_state_desc d_ = good_user_desc();                                                   \
        mutation;                                                                              \
        LS_CHECK_EQ_INT(ls_state_desc_check(&d_), -1);                                         \
        LS_CHECK(pt_error_has(needle));                                                        \
        ls_pool_config c_ = {.capacity = 2};                                                   \
        ls_clear_error();                                                                      \
        LS_CHECK(ls_pool_create(&d_, &c_, pt_backend()) == NULL);                              \
        LS_CHECK(pt_error_has(needle));                                                        \
        LS_CHECK_EQ_INT(ls_bytes_per_req(&d_), -1);                                            \
    } while (0)

static void test_invalid_desc(void)
{
    ls_state_desc ok = good_user_desc();
    LS_CHECK_EQ_INT(ls_state_desc_check(&ok), 0);
    EXPECT_BAD(d_.conv_dtype = (ls_dtype)7, "conv_dtype 7");
    EXPECT_BAD(d_.temporal_dtype = (ls_dtype)-1, "temporal_dtype -1");
    EXPECT_BAD(d_.layers = 0, "layers 0");
    EXPECT_BAD(d_.layers = -4, "layers -4");
    EXPECT_BAD(d_.n_conv = 0, "n_conv 0");
    EXPECT_BAD(d_.n_conv = LS_MAX_CONV + 1, "n_conv 5");
    EXPECT_BAD(d_.conv[1].channels = 0, "conv[1].channels 0");
    EXPECT_BAD(d_.conv[0].window = -1, "conv[0].window -1");
    EXPECT_BAD(d_.conv[1].orient = (ls_conv_orient)2, "conv[1].orient 2");
    EXPECT_BAD(d_.temporal[2] = 0, "temporal[2] 0");
    EXPECT_BAD(d_.temporal[0] = -3, "temporal[0] -3");
    EXPECT_BAD(d_.spec_tokens = -1, "spec_tokens -1");
    EXPECT_BAD((d_.temporal[0] = 1 << 24, d_.temporal[1] = 1 << 24, d_.temporal[2] = 1 << 24),
               "temporal item");
    /* entries past n_conv are ignored */
    ok.conv[3].channels = -9;
    LS_CHECK_EQ_INT(ls_state_desc_check(&ok), 0);
    LS_CHECK_EQ_INT(ls_state_desc_check(NULL), -1);

    /* desc_from_shape: bad dtype / spec are named, out untouched */
    ls_shape s;
    LS_REQUIRE(ls_shape_from_model(ls_model_at(0), 8, &s) == 0);
    ls_state_desc out;
    memset(&out, 0x11, sizeof out);
    ls_state_desc before = out;
    LS_CHECK_EQ_INT(ls_state_desc_from_shape(&s, (ls_dtype)3, 0, &out), -1);
    LS_CHECK(pt_error_has("temporal dtype 3"));
    LS_CHECK_EQ_INT(ls_state_desc_from_shape(&s, LS_F32, -2, &out), -1);
    LS_CHECK(pt_error_has("spec_tokens -2"));
    LS_CHECK(memcmp(&out, &before, sizeof out) == 0);
    LS_CHECK_EQ_INT(ls_state_desc_from_shape(NULL, LS_F32, 0, &out), -1);
}

static void test_invalid_config(void)
{
    ls_state_desc d = good_user_desc();
    const ls_runtime *be = pt_backend();
    ls_pool_config c = {.capacity = 0};
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL);
    LS_CHECK(pt_error_has("capacity 0"));
    c = (ls_pool_config){.capacity = 4, .pad = (ls_pad_policy)5};
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL);
    LS_CHECK(pt_error_has("pad policy 5"));
    c = (ls_pool_config){.capacity = 4, .zero = (ls_zero_policy)9};
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL);
    LS_CHECK(pt_error_has("zero policy 9"));
    c = (ls_pool_config){.capacity = 4};
    LS_CHECK(ls_pool_create(&d, NULL, be) == NULL);
    LS_CHECK(ls_pool_create(&d, &c, NULL) == NULL);
    LS_CHECK(pt_error_has("backend is NULL"));
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL); /* the caller picks the impl: no default */
    LS_CHECK(pt_error_has("config has no impl"));
    c.impl = ls_impl_default(be);
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL); /* ... and its tuning */
    LS_CHECK(pt_error_has("config has no tuning for impl"));
    ls_tuning tune = {.n = c.impl->n_knobs + 1};
    c.tuning = &tune;
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL);
    LS_CHECK(pt_error_has("knob values"));
    ls_tuning_default(c.impl, &tune);
    ls_pool *ok = ls_pool_create(&d, &c, be);
    LS_CHECK(ok != NULL);
    ls_pool_destroy(ok);
    ls_impl no_zero = *ls_impl_default(be); /* the pool's impl must have all three state ops */
    no_zero.state_zero = NULL;
    c.impl = &no_zero;
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL);
    LS_CHECK(pt_error_has("lacks state_zero"));
    ls_impl other = *ls_impl_default(be); /* ... and run on the pool's runtime */
    other.runtime = strcmp(be->name, "cuda") == 0 ? "host" : "cuda";
    c.impl = &other;
    LS_CHECK(ls_pool_create(&d, &c, be) == NULL);
    LS_CHECK(pt_error_has("runs on runtime"));
    c.impl = NULL;
    ls_runtime partial = *be;
    partial.abi_version = LS_RUNTIME_ABI + 1;
    LS_CHECK(ls_pool_create(&d, &c, &partial) == NULL);
    LS_CHECK(pt_error_has("ABI"));
}

/* Every operation on a descriptor no preset produces. */
static void test_user_desc(void)
{
    ls_state_desc d = good_user_desc();
    const int64_t layer = 5 * 2 * 4 + 7 * 3 * 4 + 3 * 5 * 7 * 2;
    LS_CHECK_EQ_INT(ls_conv_item_bytes(&d, 0), 40);
    LS_CHECK_EQ_INT(ls_conv_item_bytes(&d, 1), 84);
    LS_CHECK_EQ_INT(ls_temporal_item_bytes(&d), 210);
    LS_CHECK_EQ_INT(ls_layer_bytes(&d), layer);
    LS_CHECK_EQ_INT(ls_bytes_per_req(&d), 3 * layer);
    LS_CHECK_EQ_INT(ls_spec_bytes_per_req(&d), 3 * 3 * layer);

    ls_pool *p = pt_pool(&d, 4, LS_PAD_FIRST, LS_ZERO_AT_FREE);
    LS_CHECK_EQ_INT(ls_pool_n_buffers(p), 3);
    LS_CHECK_EQ_INT(ls_pool_padding_slot(p), 0);
    int32_t s[4];
    LS_REQUIRE(ls_pool_alloc(p, 4, s) == 0);
    for (int i = 0; i < 4; i++) {
        LS_CHECK_EQ_INT(s[i], i + 1);
        pt_fill(p, s[i], -1, 10 + (uint64_t)s[i]);
        for (int t = 0; t < 3; t++)
            pt_fill(p, s[i], t, 100 + 10 * (uint64_t)s[i] + (uint64_t)t);
    }
    /* copy 1 -> 2 (overlapping 2 -> 3): gather semantics */
    int32_t src[2] = {1, 2}, dst[2] = {2, 3};
    LS_REQUIRE(ls_pool_copy(p, 2, src, dst) == 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 2, -1, 11), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 3, -1, 12), 0);
    /* accept: slot 4 <- step 2, slot 1 <- step 0 */
    int32_t as[2] = {4, 1}, st[2] = {2, 0};
    LS_REQUIRE(ls_pool_accept(p, 2, as, st) == 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 4, -1, 142), 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 1, -1, 110), 0);
    /* fork after a free; free zeroes */
    LS_REQUIRE(ls_pool_free(p, 1, &as[0]) == 0);
    LS_CHECK_EQ_INT(pt_mismatch(p, 4, -1, PT_ZERO), 0);
    int32_t f = -1;
    LS_REQUIRE(ls_pool_fork(p, 3, &f) == 0);
    LS_CHECK_EQ_INT(f, 4);
    LS_CHECK_EQ_INT(pt_mismatch(p, 4, -1, 12), 0);
    ls_pool_destroy(p);
}

int main(void)
{
    test_invalid_desc();
    test_invalid_config();
    test_user_desc();
    return ls_test_exit();
}
