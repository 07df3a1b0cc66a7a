/*
 * wrong_impl.c — test plugin "wrong": the example impl (examples/plugin/example_impl.c, compiled
 * into this file unchanged) with a conv_update that biases every output by +4 bf16 ulps (about
 * 1.6 to 3.1 % of each value: over the 1e-2 conv tolerance, while a 1-ulp bias would pass).
 * The state ops are the example's, correct. A sweep must give fail_numerics for conv1d_update
 * rows, ok for pool rows, skipped:unsupported for gdn rows, and exit 1.
 */
#define linstate_impl_v1 example_entry_unused /* the example's entry, renamed out of the way */
#include "example_impl.c"
#undef linstate_impl_v1

static int wrong_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    if (ex_conv_update(p, t, s) != 0)
        return -1;
    for (int64_t r = 0; r < p->batch; r++) {
        if (p->slot_idx[r] < 0)
            continue;
        for (int64_t tk = 0; tk < p->tokens; tk++)
            for (int64_t c = 0; c < p->channels; c++) {
                uint16_t *y = &p->y[r * p->y_stride_b + tk * p->y_stride_t + c * p->y_stride_c];
                if ((*y & 0x7f80u) != 0x7f80u) /* finite: 4 ulps away from zero */
                    *y = (uint16_t)(*y + 4u);
            }
    }
    return 0;
}

static const ls_impl wrong_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "wrong",
    .version = "wrong 0.1 (test: conv output +4 ulp)",
    .runtime = "host",
    .knobs = ex_knobs,
    .n_knobs = N_KNOBS,
    .conv_update = wrong_conv_update,
    .state_copy = ex_state_copy,
    .state_accept = ex_state_accept,
    .state_zero = ex_state_zero,
    .last_error = ex_last_error,
    .explain = ex_explain,
};

EX_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &wrong_impl : NULL;
}
