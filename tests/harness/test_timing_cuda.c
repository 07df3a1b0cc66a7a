/*
 * test_timing_cuda.c — the harness on a real GPU (label gpu; exit 77 without one): event timing
 * of device copies in the rotate, hot and flush regimes, eager and graph mode (the timer's own
 * stream), profile mode, the >= 1 GiB copy peak, provenance of the device and hwloc binding to
 * the GPU's local CPUs.
 */
#include <string.h>

#include "ls_harness.h"
#include "ls_test.h"

#define N_ROT 8
#define BUF_BYTES ((size_t)16 << 20)

typedef struct bufs {
    const ls_backend *be;
    void *src[N_ROT], *dst[N_ROT];
    int launches;
} bufs;

/* One "op": a 16 MiB device copy in rotation slot rot, on the stream it is given. */
static int copy_launch(void *ctx, int rot, ls_stream s)
{
    bufs *b = ctx;
    b->launches++;
    return b->be->copy_d2d(b->dst[rot], b->src[rot], BUF_BYTES, s);
}

static int run(const ls_timing_config *c, bufs *b, ls_stats *st)
{
    double us[256];
    int n = 0;
    if (ls_time_launches(c, copy_launch, b, us, 256, &n) != 0) {
        fprintf(stderr, "timing failed: %s\n", ls_last_error());
        return -1;
    }
    return ls_stats_compute(us, n, st);
}

int main(void)
{
    const ls_backend *be = ls_backend_get("cuda");
    if (!be || be->device_count() < 1) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    LS_REQUIRE(be->set_device(0) == 0);

    ls_provenance prov;
    LS_CHECK_EQ_INT(ls_provenance_fill(&prov, be, 0), 0);
    LS_CHECK(strlen(prov.dev.name) > 0 && prov.dev.sm_count > 0 && prov.dev.driver_version > 0);
    LS_CHECK(strcmp(prov.backend, "cuda") == 0);
    int brc = ls_bind_to_device(be, 0, &prov);
    if (brc)
        fprintf(stderr, "note: binding failed (allowed): %s\n", ls_last_error());
    LS_CHECK(strlen(prov.cpuset) > 0);
    printf("%s, %d SMs, driver %d; thread on CPUs %s, NUMA %d\n", prov.dev.name, prov.dev.sm_count,
           prov.dev.driver_version, prov.cpuset, prov.numa_node);

    double peak = 0;
    LS_CHECK_EQ_INT(ls_measure_copy_peak(be, (size_t)1 << 30, &peak), 0);
    printf("copy peak %.1f GB/s\n", peak);
    LS_CHECK(peak > 100.0 && peak < 20000.0);

    bufs b = {.be = be};
    for (int i = 0; i < N_ROT; i++) {
        b.src[i] = be->mem_alloc(BUF_BYTES);
        b.dst[i] = be->mem_alloc(BUF_BYTES);
        LS_REQUIRE(b.src[i] && b.dst[i]);
        LS_REQUIRE(be->mem_set(b.src[i], i + 1, BUF_BYTES, NULL) == 0);
    }
    void *flush = be->mem_alloc((size_t)prov.dev.l2_bytes * 2 + 4096);
    LS_REQUIRE(flush != NULL);
    LS_REQUIRE(be->sync(NULL) == 0);

    ls_timing_config c;
    memset(&c, 0, sizeof c);
    c.be = be;
    c.regime = LS_CACHE_ROTATE;
    c.n_rot = N_ROT;
    c.warmup = 2;
    c.min_samples = 20;
    c.max_samples = 200;
    c.min_time_s = 0.01;
    c.max_time_s = 5;
    ls_stats rot, graph, hot, fl;
    LS_CHECK_EQ_INT(run(&c, &b, &rot), 0);
    c.graph = 1;
    LS_CHECK_EQ_INT(run(&c, &b, &graph), 0);
    c.graph = 0;
    c.regime = LS_CACHE_HOT;
    c.n_rot = 1;
    LS_CHECK_EQ_INT(run(&c, &b, &hot), 0);
    c.regime = LS_CACHE_FLUSH;
    c.flush_buf = flush;
    c.flush_bytes = (size_t)prov.dev.l2_bytes * 2;
    LS_CHECK_EQ_INT(run(&c, &b, &fl), 0);

    /* 16 MiB copy = 32 MiB moved: between 1 us and 10 ms on any GPU, close to the copy peak */
    const ls_stats *all[] = {&rot, &graph, &hot, &fl};
    const char *names[] = {"rotate", "rotate+graph", "hot", "flush"};
    for (int i = 0; i < 4; i++) {
        double gbps = 2.0 * BUF_BYTES / (all[i]->median * 1e3);
        printf("%-13s median %8.2f us  p10 %8.2f  p90 %8.2f  n %3d  %7.1f GB/s (%.0f%% of peak)\n",
               names[i], all[i]->median, all[i]->p10, all[i]->p90, all[i]->n, gbps,
               100 * gbps / peak);
        LS_CHECK(all[i]->n >= 20 && all[i]->median > 1.0 && all[i]->median < 1e4);
        LS_CHECK(gbps > 0.2 * peak && gbps < 1.5 * peak);
    }

    /* profile mode: exactly LS_PROFILE_SAMPLES samples */
    double us[16];
    int n = 0;
    c.regime = LS_CACHE_ROTATE;
    c.n_rot = N_ROT;
    c.profile = 1;
    c.graph = 1;
    LS_CHECK_EQ_INT(ls_time_launches(&c, copy_launch, &b, us, 16, &n), 0);
    LS_CHECK_EQ_INT(n, LS_PROFILE_SAMPLES);

    for (int i = 0; i < N_ROT; i++) {
        be->mem_free(b.src[i]);
        be->mem_free(b.dst[i]);
    }
    be->mem_free(flush);
    return ls_test_exit();
}
