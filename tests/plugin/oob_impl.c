/*
 * oob_impl.c — test plugin "oob": the example impl (examples/plugin/example_impl.c, compiled into
 * this file unchanged) with a conv_update that, after a correct update, writes 256 state
 * elements outside the state view it was given: past its last slot (knob oob.where=after, the
 * default) or before its first (before). Its outputs are right, so verification passes; only the
 * guard zones (docs/timing.md "Guard zones") can see the write. A conv1d_update row must be
 * fail_bounds, never ok, and the bench must exit 1.
 */
#define linstate_impl_v1 example_entry_unused /* the example's entry, renamed out of the way */
#include "example_impl.c"
#undef linstate_impl_v1

enum { KNOB_OOB_WHERE = N_KNOBS, N_OOB_KNOBS };
#define OOB_ELEMENTS 256

static const ls_knob_def oob_knobs[N_OOB_KNOBS] = {
    {"copy.chunk", "row|bytes", "as the example's"},
    {"conv.loop", "row|channel", "as the example's"},
    {"oob.where", "after|before", "write 256 state elements past the view's last slot or before its first"},
};

static int oob_conv_update(const ls_conv_params *p, const ls_tuning *t, ls_stream s)
{
    if (ex_conv_update(p, t, s) != 0)
        return -1;
    if (p->slots <= 0)
        return 0; /* the view's extent is unknown */
    int64_t start = knob(t, KNOB_OOB_WHERE) ? -OOB_ELEMENTS : (int64_t)p->slots * p->state_stride_slot;
    for (int64_t i = 0; i < OOB_ELEMENTS; i++)
        store(p->state, p->state_dtype, start + i, 1.0f);
    return 0;
}

static const ls_impl oob_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "oob",
    .version = "oob 0.1 (test: writes outside the conv state)",
    .runtime = "host",
    .knobs = oob_knobs,
    .n_knobs = N_OOB_KNOBS,
    .conv_update = oob_conv_update,
    .state_copy = ex_state_copy,
    .state_accept = ex_state_accept,
    .state_zero = ex_state_zero,
    .last_error = ex_last_error,
    .explain = ex_explain,
};

EX_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &oob_impl : NULL;
}
