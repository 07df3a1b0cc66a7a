/*
 * gbflags.c — Google Benchmark's flags, checked like ours before GB sees them.
 *
 * GB's own parsing prints its usage text and exits 0 on a bad value of some flags (an unknown
 * --benchmark_format), takes nonsense for others (a repetition count <= 0, any word as a
 * boolean) and, for the rest, prints a line and leaves the flag in argv for our parser to call
 * unknown (two lines). Here every flag GB knows is checked first: a bad value is ONE line naming
 * it and exit 2. --benchmark_min_time has no effect on our fixed one-iteration runs and is taken
 * out of argv once checked (its syntax differs between GB 1.7 and 1.8); --benchmark_min_warmup_time
 * is refused: GB would call each case again to warm up, which writes extra rows.
 * --benchmark_list_tests is reported to main.c, which lists the plan itself (GB would list it only
 * after the output files were opened, replacing an old --out with a header).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"

typedef enum gb_kind {
    GB_BOOL,      /* --flag, or --flag=true|false|yes|no|on|off|1|0 */
    GB_STRING,    /* any value (a regex is checked by the plan) */
    GB_FORMAT,    /* console|json|csv */
    GB_COLOR,     /* auto or a boolean */
    GB_TIME_UNIT, /* ns|us|ms|s */
    GB_REPS,      /* 1..100000, as --repetitions */
    GB_VERBOSITY, /* 0..1000 */
    GB_CONTEXT,   /* key=value[,key=value] */
    GB_COUNTERS,  /* 1..GB_MAX_COUNTERS names, comma-separated (GB 1.7 aborts on more) */
    GB_MIN_TIME,  /* N, Ns (N >= 0) or Nx (N >= 1): checked, then dropped */
    GB_REFUSED    /* breaks the one-row-per-repetition rule */
} gb_kind;

static const struct {
    const char *name;
    gb_kind kind;
} gb_flags[] = {
    {"benchmark_list_tests", GB_BOOL},
    {"benchmark_filter", GB_STRING},
    {"benchmark_min_time", GB_MIN_TIME},
    {"benchmark_min_warmup_time", GB_REFUSED},
    {"benchmark_repetitions", GB_REPS},
    {"benchmark_enable_random_interleaving", GB_BOOL},
    {"benchmark_report_aggregates_only", GB_BOOL},
    {"benchmark_display_aggregates_only", GB_BOOL},
    {"benchmark_format", GB_FORMAT},
    {"benchmark_out_format", GB_FORMAT},
    {"benchmark_out", GB_STRING},
    {"benchmark_color", GB_COLOR},
    {"benchmark_counters_tabular", GB_BOOL},
    {"benchmark_perf_counters", GB_COUNTERS},
    {"benchmark_context", GB_CONTEXT},
    {"benchmark_time_unit", GB_TIME_UNIT},
    {"v", GB_VERBOSITY},
};

/* v is one of names (NULL-terminated); GB compares enum values exactly, booleans in any case. */
static int one_of(const char *v, const char *const *names, int any_case)
{
    for (; *names; names++)
        if ((any_case ? strcasecmp(v, *names) : strcmp(v, *names)) == 0)
            return 1;
    return 0;
}

static int is_bool(const char *v)
{
    static const char *const names[] = {"true", "false", "yes", "no", "on", "off", "1", "0", NULL};
    return one_of(v, names, 1);
}

static int int_in(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi)
        return 0;
    *out = n;
    return 1;
}

/* N, Ns (seconds, N >= 0, finite) or Nx (iterations, an integer >= 1). */
static int min_time_ok(const char *v)
{
    size_t n = strlen(v);
    long it;
    if (n > 1 && v[n - 1] == 'x') {
        char buf[32];
        if (n >= sizeof buf)
            return 0;
        snprintf(buf, sizeof buf, "%.*s", (int)(n - 1), v);
        return int_in(buf, 1, 1000000000L, &it);
    }
    char buf[64];
    double s;
    if (n > 1 && v[n - 1] == 's') {
        if (n >= sizeof buf)
            return 0;
        snprintf(buf, sizeof buf, "%.*s", (int)(n - 1), v);
        v = buf;
    }
    return ls_parse_decimal(v, &s) == 0 && s >= 0; /* decimal only, as our own flags */
}

#define GB_MAX_COUNTERS 3 /* GB 1.7's PerfCounterValues::kMaxCounters */

static int counters_ok(const char *v)
{
    int n = 1;
    for (const char *p = v; *p; p++) {
        if (*p == ',' && (p == v || p[1] == ',' || p[1] == '\0'))
            return 0;
        n += *p == ',';
    }
    return *v && n <= GB_MAX_COUNTERS;
}

static int context_ok(const char *v)
{
    if (!*v)
        return 0;
    for (const char *item = v;;) {
        size_t len = strcspn(item, ",");
        const char *eq = memchr(item, '=', len);
        if (!eq || eq == item)
            return 0;
        if (!item[len])
            return 1;
        item += len + 1;
    }
}

/* The value of flag `name` of kind k; 0, or 2 after the error line. */
static int check_value(const char *name, gb_kind k, const char *v, int *reps)
{
    static const char *const formats[] = {"console", "json", "csv", NULL};
    static const char *const units[] = {"ns", "us", "ms", "s", NULL};
    const char *want = NULL;
    long n = 0;
    switch (k) {
    case GB_BOOL:
        want = v && !is_bool(v) ? "true or false (also yes/no, on/off, 1/0)" : NULL;
        break;
    case GB_STRING:
        break;
    case GB_FORMAT:
        want = !one_of(v, formats, 0) ? "console, json or csv" : NULL;
        break;
    case GB_COLOR:
        want = strcasecmp(v, "auto") != 0 && !is_bool(v) ? "auto, true or false" : NULL;
        break;
    case GB_TIME_UNIT:
        want = !one_of(v, units, 0) ? "ns, us, ms or s" : NULL;
        break;
    case GB_REPS:
        if (int_in(v, 1, 100000, &n))
            *reps = (int)n;
        else
            want = "an integer from 1 to 100000";
        break;
    case GB_VERBOSITY:
        want = !int_in(v, 0, 1000, &n) ? "an integer from 0 to 1000" : NULL;
        break;
    case GB_CONTEXT:
        want = !context_ok(v) ? "key=value[,key=value...]" : NULL;
        break;
    case GB_COUNTERS:
        want = !counters_ok(v) ? "1 to 3 counter names, comma-separated" : NULL;
        break;
    case GB_MIN_TIME:
        want = !min_time_ok(v) ? "seconds >= 0 (N or Ns) or an iteration count (Nx); it has no effect here" : NULL;
        break;
    case GB_REFUSED:
        fprintf(stderr, "linstate-bench: --%s: not supported (GB would run each case again to warm up, "
                        "writing extra rows; every measurement warms up itself, see --min-time)\n", name);
        return 2;
    }
    if (want) {
        fprintf(stderr, "linstate-bench: --%s: bad value '%s' (%s)\n", name, v ? v : "", want);
        return 2;
    }
    return 0;
}

/* GB's reading of a boolean flag's value: bare, true, yes, on or 1 (any case). */
static int is_true(const char *v)
{
    static const char *const names[] = {"true", "yes", "on", "1", NULL};
    return !v || one_of(v, names, 1);
}

int bench_gb_flags_check(int *argc, char **argv, int *repetitions, int *list_tests)
{
    int out = 1;
    *repetitions = 0;
    *list_tests = 0;
    for (int i = 1; i < *argc; i++) {
        const char *arg = argv[i];
        int drop = 0;
        if (strncmp(arg, "--help=", 7) == 0) { /* GB would print its usage and exit 0 */
            fprintf(stderr, "linstate-bench: --help takes no value: '%s'\n", arg);
            return 2;
        }
        if (strncmp(arg, "--", 2) == 0) {
            const char *body = arg + 2, *eq = strchr(body, '=');
            size_t len = eq ? (size_t)(eq - body) : strlen(body);
            for (size_t f = 0; f < sizeof gb_flags / sizeof gb_flags[0]; f++) {
                if (strlen(gb_flags[f].name) != len || strncmp(body, gb_flags[f].name, len) != 0)
                    continue;
                gb_kind k = gb_flags[f].kind;
                if (!eq && k != GB_BOOL && k != GB_REFUSED) {
                    fprintf(stderr, "linstate-bench: --%s needs a value: --%s=VALUE\n", gb_flags[f].name,
                            gb_flags[f].name);
                    return 2;
                }
                int rc = check_value(gb_flags[f].name, k, eq ? eq + 1 : NULL, repetitions);
                if (rc)
                    return rc;
                if (strcmp(gb_flags[f].name, "benchmark_list_tests") == 0) /* GB takes the last one */
                    *list_tests = is_true(eq ? eq + 1 : NULL);
                drop = k == GB_MIN_TIME;
                break;
            }
        }
        if (!drop)
            argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}
