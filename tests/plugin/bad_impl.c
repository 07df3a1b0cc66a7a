/*
 * bad_impl.c — test plugins that linstate must refuse, one per BAD_KIND (compile definition):
 *   BAD_NOENTRY  exports no linstate_impl_v1 (only a look-alike symbol)
 *   BAD_ABI      the entry returns a table with abi_version = LS_IMPL_ABI + 1
 *   BAD_NULL     the entry returns NULL (the plugin does not speak the caller's ABI)
 *   BAD_KNOB     a knob whose value list has an empty item ("row||bytes")
 *   BAD_CLASH    a valid table named "host" (the built-in impl's name)
 * Each must make `linstate-bench --impl-path X --list` print one line naming the problem and exit 2
 * (BAD_CLASH is checked by test_plugin_tuning through ls_impl_load).
 */
#include "ls_kernels.h"

#define BAD_NOENTRY 1
#define BAD_ABI 2
#define BAD_NULL 3
#define BAD_KNOB 4
#define BAD_CLASH 5

#ifndef BAD_KIND
#error "compile with -DBAD_KIND=BAD_..."
#endif

#define EXPORT __attribute__((visibility("default")))

static int zero_op(const ls_state_params *p, const ls_tuning *t, ls_stream s) { return 0; }

static const ls_knob_def knobs[] = {
#if BAD_KIND == BAD_KNOB
    {"copy.chunk", "row||bytes", "an empty value between the bars"},
#else
    {"copy.chunk", "row|bytes", "fine"},
#endif
};

static const ls_impl table = {
#if BAD_KIND == BAD_ABI
    .abi_version = LS_IMPL_ABI + 1,
#else
    .abi_version = LS_IMPL_ABI,
#endif
#if BAD_KIND == BAD_CLASH
    .name = "host",
#else
    .name = "bad",
#endif
    .version = "test",
    .runtime = "host",
    .knobs = knobs,
    .n_knobs = 1,
    .state_zero = zero_op,
};

#if BAD_KIND == BAD_NOENTRY
/* Close to the entry name, but not it (a v0 plugin, say). */
EXPORT const ls_impl *linstate_impl_v0(int abi_version) { return &table; }
#elif BAD_KIND == BAD_NULL
EXPORT const ls_impl *linstate_impl_v1(int abi_version) { return abi_version == 0 ? &table : 0; }
#else
EXPORT const ls_impl *linstate_impl_v1(int abi_version) { return &table; }
#endif
