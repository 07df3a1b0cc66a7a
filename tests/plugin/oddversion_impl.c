/*
 * oddversion_impl.c — test plugin "oddversion": the example impl (examples/plugin/example_impl.c,
 * compiled into this file unchanged) under a version text the CSV cannot hold as it is: a newline,
 * a tab, a '"', and longer than the row's impl_version field. The CSV writes it cleaned (control
 * characters as spaces, cut to the field); --resume must compare that same cleaned text, so that
 * its rows are kept (tests/bench/test_bench_resume.py "version").
 */
#define linstate_impl_v1 example_entry_unused /* the example's entry, renamed out of the way */
#include "example_impl.c"
#undef linstate_impl_v1

static const ls_impl odd_impl = {
    .abi_version = LS_IMPL_ABI,
    .name = "oddversion",
    .version = "odd 1.0\n(built\tfrom \"a\" tree) and a tail long enough to be cut by the CSV's impl_version field",
    .runtime = "host",
    .knobs = ex_knobs,
    .n_knobs = N_KNOBS,
    .conv_update = ex_conv_update,
    .state_copy = ex_state_copy,
    .state_accept = ex_state_accept,
    .state_zero = ex_state_zero,
    .last_error = ex_last_error,
    .explain = ex_explain,
};

EX_EXPORT const ls_impl *linstate_impl_v1(int abi_version)
{
    return abi_version == LS_IMPL_ABI ? &odd_impl : NULL;
}
