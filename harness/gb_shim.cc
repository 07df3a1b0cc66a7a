/*
 * gb_shim.cc — the C API over Google Benchmark (the suite's only C++ file).
 *
 * An ls_gb_state* IS a benchmark::State* behind an opaque C type; a registered case is a lambda
 * that forwards to the C callback with its context. Every case uses manual time in
 * microseconds: the callback measures GPU time itself (events) and reports it with
 * ls_gb_set_iteration_time, so GB's iteration count follows GPU time, not host time.
 *
 * Compatibility: the same source builds against libbenchmark 1.7.1 (Debian 12) and 1.8.3
 * (Ubuntu 24.04). Only calls present in both are used, and strings are passed as const char*,
 * which converts to std::string where 1.8 takes one (SkipWithError, SetLabel, RegisterBenchmark).
 * SkipWithMessage (1.8 only) and ProfilerManager (newer) are deliberately not used.
 */
#include <benchmark/benchmark.h>

#include <string>

#include "ls_harness.h"

namespace {

benchmark::State &state_of(ls_gb_state *st)
{
    return *reinterpret_cast<benchmark::State *>(st);
}

const benchmark::State &state_of(const ls_gb_state *st)
{
    return *reinterpret_cast<const benchmark::State *>(st);
}

} // namespace

extern "C" {

void ls_gb_initialize(int *argc, char **argv)
{
    benchmark::Initialize(argc, argv);
}

int ls_gb_report_unrecognized(int argc, char **argv)
{
    return benchmark::ReportUnrecognizedArguments(argc, argv) ? 1 : 0;
}

/* Registers `name` (manual time, microseconds) with the options that are set (> 0). */
void ls_gb_register_opts(const char *name, ls_gb_fn fn, void *ctx, const ls_gb_options *opt)
{
    auto *b = benchmark::RegisterBenchmark(
        name, [fn, ctx](benchmark::State &st) { fn(reinterpret_cast<ls_gb_state *>(&st), ctx); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (opt && opt->repetitions > 0)
        b->Repetitions(opt->repetitions);
    if (opt && opt->iterations > 0)
        b->Iterations(static_cast<benchmark::IterationCount>(opt->iterations));
    else if (opt && opt->min_time_s > 0) /* GB forbids MinTime together with Iterations */
        b->MinTime(opt->min_time_s);
}

void ls_gb_register(const char *name, ls_gb_fn fn, void *ctx, int repetitions)
{
    ls_gb_options opt = {};
    opt.repetitions = repetitions;
    ls_gb_register_opts(name, fn, ctx, &opt);
}

int ls_gb_run(void)
{
    return static_cast<int>(benchmark::RunSpecifiedBenchmarks());
}

void ls_gb_shutdown(void)
{
    benchmark::Shutdown();
}

int ls_gb_keep_running(ls_gb_state *st)
{
    return state_of(st).KeepRunning() ? 1 : 0;
}

void ls_gb_set_iteration_time(ls_gb_state *st, double seconds)
{
    state_of(st).SetIterationTime(seconds);
}

void ls_gb_set_counter(ls_gb_state *st, const char *name, double value)
{
    state_of(st).counters[name] = benchmark::Counter(value);
}

void ls_gb_set_bytes_processed(ls_gb_state *st, int64_t bytes)
{
    state_of(st).SetBytesProcessed(bytes);
}

void ls_gb_set_items_processed(ls_gb_state *st, int64_t items)
{
    state_of(st).SetItemsProcessed(items);
}

void ls_gb_set_label(ls_gb_state *st, const char *label)
{
    state_of(st).SetLabel(label ? label : "");
}

void ls_gb_skip_with_error(ls_gb_state *st, const char *msg)
{
    state_of(st).SkipWithError(msg && *msg ? msg : "error");
}

int ls_gb_error_occurred(const ls_gb_state *st)
{
    return state_of(st).error_occurred() ? 1 : 0;
}

void ls_gb_add_context(const char *key, const char *value)
{
    benchmark::AddCustomContext(key ? key : "", value ? value : "");
}

int64_t ls_gb_iterations(const ls_gb_state *st)
{
    return static_cast<int64_t>(state_of(st).iterations());
}

} // extern "C"
