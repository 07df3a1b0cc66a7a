/*
 * test_clocks.c — the NVML clock guard (harness/clocks.c) against a fake NVML library
 * (fake_nvml.c, path in argv[1]) and the host backend: which samples are discarded (a power or
 * thermal reason before or after, an SM clock under LS_CLOCK_FLOOR of the default clock) and
 * counted, that discarded samples never count toward min_samples but do toward max_samples, the
 * clock min/median over the kept samples, and a missing library failing with its name.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <string.h>

#include "ls_harness.h"
#include "ls_test.h"

typedef void (*script_fn)(const unsigned long long *, int, const unsigned *, int, unsigned long long);
typedef void (*counts_fn)(int *, int *, int *, int *);
static script_fn script;
static counts_fn counts;

static int launches;
static int count_launch(void *ctx, int rot, ls_stream s)
{
    (void)ctx, (void)rot, (void)s;
    launches++;
    return 0;
}

static ls_timing_config config(ls_clocks *clk)
{
    ls_timing_config c;
    memset(&c, 0, sizeof c);
    c.be = ls_runtime_host();
    c.regime = LS_CACHE_ROTATE;
    c.n_rot = 2;
    c.warmup = 1;
    c.min_samples = 5;
    c.max_samples = 20;
    c.max_time_s = 10.0;
    c.clocks = clk;
    return c;
}

static void test_missing_library(void)
{
    ls_clocks *c = ls_clocks_open("/nonexistent/libnvidia-ml.so.1", "0000:19:00.0");
    LS_CHECK(c == NULL);
    LS_CHECK(strstr(ls_last_error(), "/nonexistent/libnvidia-ml.so.1") != NULL);
    int a, b, d;
    ls_clocks_case_end(NULL, &a, &b, &d);
    LS_CHECK(a == -1 && b == -1 && d == -1);
    LS_CHECK_EQ_INT(ls_clocks_after(NULL), 1);
}

static void test_unknown_device(const char *lib)
{
    LS_CHECK(ls_clocks_open(lib, "0000:aa:00.0") == NULL);
    LS_CHECK(strstr(ls_last_error(), "0000:aa:00.0") != NULL);
    LS_CHECK(ls_clocks_open(lib, "") == NULL);
}

/* Sample k reads reasons 2k (before) and 2k+1 (after) and clock k (after). */
static void test_discards(const char *lib)
{
    static const unsigned long long reasons[] = {
        0x4, 0,   /* sample 0: SwPowerCap before -> discarded */
        0, 0x40,  /* sample 1: HwThermalSlowdown after -> discarded */
        0, 0,     /* sample 2: clock 1500 < 0.9 x 1980 -> discarded */
        0x1, 0x2, /* sample 3: idle, applications clocks: kept */
        0x10, 0,  /* sample 4: sync boost: kept */
        0, 0x2,   /* sample 5: clock 1500 held by a user setting: kept */
    };
    static const unsigned clocks[] = {1980, 1980, 1500, 1980, 1800, 1500, 1980, 1980};
    int rc, cc, inits0, shuts0, inits, shuts;
    counts(&rc, &cc, &inits0, &shuts0);
    ls_clocks *clk = ls_clocks_open(lib, "0000:19:00.0");
    LS_REQUIRE(clk != NULL);
    LS_CHECK_EQ_INT(ls_clocks_reference_mhz(clk), 1980);
    script(reasons, (int)(sizeof reasons / sizeof reasons[0]), clocks, 8, 0);
    ls_clocks_case_begin(clk);
    ls_timing_config c = config(clk);
    double s[64];
    int n = -1;
    launches = 0;
    LS_CHECK_EQ_INT(ls_time_launches(&c, count_launch, NULL, s, 64, &n), 0);
    LS_CHECK_EQ_INT(n, 5);                       /* min_samples kept ... */
    LS_CHECK_EQ_INT(launches, (1 + 8) * c.n_rot); /* ... after 8 samples and one warm-up round */
    int mn, med, disc;
    ls_clocks_case_end(clk, &mn, &med, &disc);
    LS_CHECK_EQ_INT(disc, 3);
    LS_CHECK_EQ_INT(mn, 1500);  /* kept: 1980 1800 1500 1980 1980 */
    LS_CHECK_EQ_INT(med, 1980);
    counts(&rc, &cc, &inits, &shuts);
    LS_CHECK_EQ_INT(rc, 16);
    LS_CHECK_EQ_INT(cc, 8);

    /* A new case starts from zero. */
    script(NULL, 0, NULL, 0, 0);
    ls_clocks_case_begin(clk);
    LS_CHECK_EQ_INT(ls_time_launches(&c, count_launch, NULL, s, 64, &n), 0);
    ls_clocks_case_end(clk, &mn, &med, &disc);
    LS_CHECK_EQ_INT(n, 5);
    LS_CHECK_EQ_INT(disc, 0);
    LS_CHECK_EQ_INT(mn, 1980);

    /* Throttled throughout: max_samples attempts, none kept, every one counted. */
    script(NULL, 0, NULL, 0, 0x8);
    ls_clocks_case_begin(clk);
    LS_CHECK_EQ_INT(ls_time_launches(&c, count_launch, NULL, s, 64, &n), 0);
    ls_clocks_case_end(clk, &mn, &med, &disc);
    LS_CHECK_EQ_INT(n, 0);
    LS_CHECK_EQ_INT(disc, c.max_samples);
    LS_CHECK_EQ_INT(mn, -1);
    LS_CHECK_EQ_INT(med, -1);

    /* Profile mode never consults the guard. */
    c.profile = 1;
    ls_clocks_case_begin(clk);
    LS_CHECK_EQ_INT(ls_time_launches(&c, count_launch, NULL, s, 64, &n), 0);
    ls_clocks_case_end(clk, &mn, &med, &disc);
    LS_CHECK_EQ_INT(n, LS_PROFILE_SAMPLES);
    LS_CHECK_EQ_INT(disc, 0);

    ls_clocks_close(clk);
    counts(&rc, &cc, &inits, &shuts);
    LS_CHECK_EQ_INT(inits - inits0, 1); /* one init per open, one shutdown per close */
    LS_CHECK_EQ_INT(shuts - shuts0, 1);
}

int main(int argc, char **argv)
{
    LS_REQUIRE(argc == 2);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL); /* the same instance clocks.c loads */
    LS_REQUIRE(h != NULL);
    script = (script_fn)dlsym(h, "fake_nvml_script");
    counts = (counts_fn)dlsym(h, "fake_nvml_counts");
    LS_REQUIRE(script && counts);
    test_missing_library();
    test_unknown_device(argv[1]);
    test_discards(argv[1]);
    return ls_test_exit();
}
