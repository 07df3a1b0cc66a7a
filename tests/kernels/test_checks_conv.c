/* ls_conv_params_check: a valid problem passes; each bad field is rejected with a one-line
 * message naming the field and its value; the ref kernel refuses before touching anything. */
#include "ref_fixtures.h"

#include <string.h>

static fx_conv F;

static int run_conv(void *p) { return ls_ref_conv_update((const ls_conv_params *)p); }

/* Mutate a fresh copy of the valid params, expect -1 and `want` in the message. */
#define EXPECT_BAD(stmt, want)                                                                     \
    do {                                                                                           \
        ls_conv_params p = F.p;                                                                    \
        stmt;                                                                                      \
        ls_clear_error();                                                                          \
        LS_CHECK_EQ_INT(ls_conv_params_check(&p), -1);                                             \
        if (!strstr(ls_last_error(), want))                                                        \
            fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", ls_last_error(), want);             \
        LS_CHECK(strstr(ls_last_error(), want) != NULL);                                           \
        LS_CHECK(strchr(ls_last_error(), '\n') == NULL);                                           \
    } while (0)

int main(void)
{
    uint64_t sd = 11;
    fx_conv_make(&F, &sd, 3, 2, 8, 4, 6, 0, LS_BF16, LS_BF16, FX_BIAS | FX_INTER);
    LS_CHECK_EQ_INT(ls_conv_params_check(&F.p), 0);
    LS_CHECK_EQ_INT(ls_conv_params_check(NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "conv") != NULL);

    EXPECT_BAD(p.batch = 0, "batch=0");
    EXPECT_BAD(p.tokens = -2, "tokens=-2");
    EXPECT_BAD(p.channels = 0, "channels=0");
    EXPECT_BAD(p.width = 5, "width=5 not in 2..4");
    EXPECT_BAD(p.width = 1, "width=1");
    EXPECT_BAD(p.silu = 2, "silu=2");
    EXPECT_BAD(p.disable_state_update = -1, "disable_state_update=-1");
    EXPECT_BAD(p.weight_dtype = (ls_dtype)7, "weight_dtype=7");
    EXPECT_BAD(p.state_dtype = (ls_dtype)-1, "state_dtype=-1");
    EXPECT_BAD(p.x = NULL, "x is NULL");
    EXPECT_BAD(p.y = NULL, "y is NULL");
    EXPECT_BAD(p.weight = NULL, "weight is NULL");
    EXPECT_BAD(p.state = NULL, "state is NULL");
    EXPECT_BAD(p.slot_idx = NULL, "slot_idx is NULL");
    EXPECT_BAD(p.x_stride_t = -8, "x_stride_t=-8");
    EXPECT_BAD(p.y_stride_c = 0, "y_stride_c=0");
    EXPECT_BAD(p.y_stride_t = 4, "y_stride_t=4"); /* rows of 8 channels overlap */
    EXPECT_BAD(p.state_stride_w = 0, "state_stride_w=0");
    EXPECT_BAD(p.state_stride_c = 2, "state_stride_c=2"); /* W-1 = 3 columns per channel */
    EXPECT_BAD(p.state_stride_slot = 23, "state_stride_slot=23");
    EXPECT_BAD(p.inter_stride_slot = 10, "inter_stride_slot=10");
    EXPECT_BAD(p.inter_stride_w = -1, "inter_stride_w=-1");
    EXPECT_BAD(p.inter_stride_t = 2, "inter_stride_t=2");
    EXPECT_BAD(p.slots = -3, "slots=-3");

    /* Valid variants: no bias, no inter, window-major strides, transposed x, T=1 with any
     * t stride (extent 1 dims are free), fp32 weights and state. */
    ls_conv_params p = F.p;
    p.bias = NULL, p.inter = NULL, p.inter_stride_slot = 0;
    LS_CHECK_EQ_INT(ls_conv_params_check(&p), 0);
    p.state_stride_c = 1, p.state_stride_w = 8;
    LS_CHECK_EQ_INT(ls_conv_params_check(&p), 0);
    p.x_stride_b = 16, p.x_stride_t = 1, p.x_stride_c = 2;
    LS_CHECK_EQ_INT(ls_conv_params_check(&p), 0);
    p.tokens = 1, p.y_stride_t = 0;
    LS_CHECK_EQ_INT(ls_conv_params_check(&p), 0);
    p.weight_dtype = LS_F32, p.state_dtype = LS_F32;
    LS_CHECK_EQ_INT(ls_conv_params_check(&p), 0);

    /* The kernel refuses and leaves state and y untouched. */
    void *state0 = fx_dup(F.state, F.state_n * 2);
    ls_conv_params bad = F.p;
    bad.width = 6;
    LS_CHECK_EQ_INT(ls_ref_conv_update(&bad), -1);
    LS_CHECK(strstr(ls_last_error(), "width=6") != NULL);
    LS_CHECK(memcmp(state0, F.state, F.state_n * 2) == 0);
    size_t nan_y = 0;
    for (size_t i = 0; i < F.xy_n; i++)
        nan_y += F.y[i] == 0xFFFF;
    LS_CHECK_EQ_INT(nan_y, F.xy_n);
    /* A given slot count is a contract on the indices: the ref names the row that breaks it. */
    bad = F.p;
    fx_slots_contract(run_conv, &bad, &bad.slots, bad.slot_idx, bad.batch, F.state, F.state_n * 2);
    free(state0);
    fx_conv_free(&F);
    return ls_test_exit();
}
