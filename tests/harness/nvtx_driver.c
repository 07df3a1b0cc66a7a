/*
 * nvtx_driver.c — drives the ls_nvtx_* layer the way a benchmark does, for the NVTX capture test
 * (test_nvtx_capture runs it under the injection library). Three cases, keyed like bench keys
 * (mechanism first, B:<batch>, T:<draft>), each with the phases setup, verify, warmup, measure:
 *   1. gdn/decode/.../B:1/T:1      warm-up and measure pushed by ls_time_launches (host backend);
 *   2. gdn/verify/.../B:64/T:4     the ls_timer path with explicit phases and two free ranges
 *                                   ("graph_replay") inside measure, as graph mode nests them;
 *   3. mamba2/decode/.../B:8/T:1   on a second thread (per-thread nesting, category reuse).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ls_harness.h"

static int count;

static int launch(void *ctx, int rot, ls_stream s)
{
    count++;
    return 0;
}

static ls_timing_config config(void)
{
    ls_timing_config c;
    memset(&c, 0, sizeof c);
    c.be = ls_runtime_host();
    c.regime = LS_CACHE_ROTATE;
    c.n_rot = 2;
    c.warmup = 1;
    c.min_samples = 3;
    c.max_samples = 3;
    c.max_time_s = 5;
    return c;
}

static void setup_and_verify(void)
{
    ls_nvtx_phase_push(LS_PHASE_SETUP);
    ls_nvtx_phase_pop();
    ls_nvtx_phase_push(LS_PHASE_VERIFY);
    ls_nvtx_phase_pop();
}

static int timed_case(const char *key, const char *mech, int batch, int draft)
{
    double us[8];
    int n = 0;
    ls_timing_config c = config();
    ls_nvtx_case_push(key, mech, batch, draft);
    setup_and_verify();
    int rc = ls_time_launches(&c, launch, NULL, us, 8, &n);
    ls_nvtx_case_pop();
    if (rc || n != 3) {
        fprintf(stderr, "nvtx_driver: timing failed (n=%d): %s\n", n, ls_last_error());
        return 1;
    }
    return 0;
}

static void *thread_main(void *arg)
{
    int *rc = arg;
    *rc = timed_case("mamba2/decode/nemotron-h-8b/tp1/B:8/T:1/fp32", "mamba2", 8, 1);
    return NULL;
}

int main(void)
{
    int rc = timed_case("gdn/decode/qwen3-next-80b-a3b/tp8/B:1/T:1/fp32", "gdn", 1, 1);

    /* Explicit phases around the per-sample timer, with free ranges inside measure. */
    ls_timing_config c = config();
    ls_nvtx_case_push("gdn/verify/qwen3-next-80b-a3b/tp8/B:64/T:4/fp32", "gdn", 64, 4);
    setup_and_verify();
    ls_timer *t = ls_timer_create(&c, launch, NULL); /* pushes warmup */
    ls_nvtx_phase_push(LS_PHASE_MEASURE);
    for (int i = 0; t && i < 2; i++) {
        double us;
        ls_nvtx_range_push("graph_replay");
        rc |= ls_timer_sample(t, &us);
        ls_nvtx_range_pop();
    }
    ls_nvtx_phase_pop();
    ls_timer_destroy(t);
    ls_nvtx_case_pop();
    rc |= t == NULL;

    pthread_t th;
    int trc = 1;
    if (pthread_create(&th, NULL, thread_main, &trc) != 0)
        return 1;
    pthread_join(th, NULL);
    rc |= trc;
    printf("nvtx_driver: %d launches, rc %d\n", count, rc);
    return rc ? 1 : 0;
}
