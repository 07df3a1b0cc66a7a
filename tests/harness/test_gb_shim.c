/*
 * test_gb_shim.c — the Google Benchmark C API end to end. Two cases are registered through the C
 * shim and the binary is run (by CTest) with Google Benchmark's own flags:
 *   test_gb_shim filter --benchmark_filter=keep --benchmark_out=F --benchmark_out_format=json
 *     only "ls_gb_test/keep" runs (2 repetitions x 5 fixed iterations, manual time 42 us), and
 *     the JSON holds it with its counter, label, custom context and manual time;
 *   test_gb_shim skip --benchmark_filter=skip ...
 *     the case that calls ls_gb_skip_with_error is reported as an error in the JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "ls_harness.h"
#include "ls_test.h"

typedef struct counts {
    int runs;
    int64_t iters, last_iterations;
    int error_seen;
} counts;

static void keep_fn(ls_gb_state *st, void *ctx)
{
    counts *c = ctx;
    c->runs++;
    while (ls_gb_keep_running(st)) {
        c->iters++;
        ls_gb_set_iteration_time(st, 42e-6);
    }
    c->last_iterations = ls_gb_iterations(st);
    ls_gb_set_counter(st, "my_counter", 7.5);
    ls_gb_set_bytes_processed(st, ls_gb_iterations(st) * 1000);
    ls_gb_set_items_processed(st, ls_gb_iterations(st));
    ls_gb_set_label(st, "my label");
}

static void drop_fn(ls_gb_state *st, void *ctx)
{
    counts *c = ctx;
    c->runs++;
    while (ls_gb_keep_running(st))
        ls_gb_set_iteration_time(st, 1e-6);
}

static void skip_fn(ls_gb_state *st, void *ctx)
{
    counts *c = ctx;
    c->runs++;
    ls_gb_skip_with_error(st, "deliberate failure: B=3");
    c->error_seen = ls_gb_error_occurred(st);
    while (ls_gb_keep_running(st))
        c->iters++; /* GB skips the loop after an error */
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* Value of the first `"key": number` after `from` in the JSON text, or NaN. */
static double json_number_after(const char *from, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = from ? strstr(from, pat) : NULL;
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

int main(int argc, char **argv)
{
    LS_REQUIRE(argc >= 2);
    const char *mode = argv[1];
    const char *out = NULL;
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "--benchmark_out=", 16) == 0)
            out = argv[i] + 16;
    LS_REQUIRE(out != NULL);
    char out_path[1024];
    snprintf(out_path, sizeof out_path, "%s", out); /* Initialize rewrites argv */
    remove(out_path);

    /* drop the mode argument, hand the rest to Google Benchmark */
    argv[1] = argv[0];
    argc--;
    argv++;
    ls_gb_initialize(&argc, argv);
    LS_CHECK_EQ_INT(argc, 1); /* every --benchmark_* flag consumed */
    LS_CHECK_EQ_INT(ls_gb_report_unrecognized(argc, argv), 0);

    counts keep = {0}, drop = {0}, skip = {0};
    ls_gb_options opt = {.repetitions = 2, .iterations = 5};
    ls_gb_register_opts("ls_gb_test/keep", keep_fn, &keep, &opt);
    ls_gb_register("ls_gb_test/drop", drop_fn, &drop, 0);
    ls_gb_register("ls_gb_test/skip", skip_fn, &skip, 1);
    ls_gb_add_context("linstate_test_ctx", "hello, world");
    int ran = ls_gb_run();
    ls_gb_shutdown();

    char *json = slurp(out_path);
    LS_REQUIRE(json != NULL);
    LS_CHECK(strstr(json, "\"linstate_test_ctx\": \"hello, world\"") != NULL);
    LS_CHECK(strstr(json, "ls_gb_test/drop") == NULL);
    LS_CHECK_EQ_INT(drop.runs, 0);

    if (strcmp(mode, "filter") == 0) {
        LS_CHECK_EQ_INT(ran, 1);
        LS_CHECK_EQ_INT(keep.runs, 2);             /* once per repetition */
        LS_CHECK_EQ_INT(keep.iters, 10);           /* 5 fixed iterations each */
        LS_CHECK_EQ_INT(keep.last_iterations, 5);
        LS_CHECK_EQ_INT(skip.runs, 0);
        const char *entry = strstr(json, "\"name\": \"ls_gb_test/keep");
        LS_CHECK(entry != NULL);
        LS_CHECK(strstr(json, "ls_gb_test/skip") == NULL);
        /* manual time, in microseconds */
        LS_CHECK_NEAR(json_number_after(entry, "real_time"), 42.0, 1e-6, 1e-6);
        LS_CHECK(strstr(entry, "\"time_unit\": \"us\"") != NULL);
        LS_CHECK_NEAR(json_number_after(entry, "my_counter"), 7.5, 0, 1e-9);
        LS_CHECK(strstr(entry, "\"label\": \"my label\"") != NULL);
        LS_CHECK(strstr(entry, "manual_time") != NULL);
    } else if (strcmp(mode, "skip") == 0) {
        LS_CHECK_EQ_INT(ran, 1);
        LS_CHECK_EQ_INT(keep.runs, 0);
        LS_CHECK_EQ_INT(skip.runs, 1);
        LS_CHECK_EQ_INT(skip.error_seen, 1);
        LS_CHECK_EQ_INT(skip.iters, 0);
        LS_CHECK(strstr(json, "ls_gb_test/skip") != NULL);
        LS_CHECK(strstr(json, "\"error_occurred\": true") != NULL);
        LS_CHECK(strstr(json, "deliberate failure: B=3") != NULL);
    } else {
        fprintf(stderr, "unknown mode '%s' (expected filter or skip)\n", mode);
        return 2;
    }
    free(json);

    /* an unknown flag is reported */
    char prog[] = "prog", bogus[] = "--bogus_flag";
    char *bad_argv[] = {prog, bogus, NULL};
    LS_CHECK_EQ_INT(ls_gb_report_unrecognized(2, bad_argv), 1);
    return ls_test_exit();
}
