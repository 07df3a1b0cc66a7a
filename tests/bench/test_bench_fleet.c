/*
 * test_bench_fleet.c — bench/fleet.c in-process: rank and world from a fake environment (Slurm,
 * Slurm arrays, Kubernetes, flags winning), the device a rank picks (SLURM_LOCALID only when
 * every task sees several GPUs), the shard split keeping a key's variants on one rank, the
 * per-rank file name, and the provenance columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ls_test.h"

static const char *const *fake_env; /* NAME, VALUE, ..., NULL */

static const char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

/* Resolves mode with env and the flags (-1: not given); returns bench_fleet_resolve's status. */
static int resolve(bench_opts *o, bench_fleet_mode mode, int rank, int world, const char *const *env)
{
    bench_opts_init(o);
    o->fleet_mode = mode;
    o->rank_flag = rank;
    o->world_flag = world;
    fake_env = env;
    return bench_fleet_resolve(o, fake_getenv);
}

static void sources(void)
{
    bench_opts o;
    const char *const none[] = {NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_NONE, -1, -1, none), 0);
    LS_CHECK_EQ_INT(o.fleet.rank, -1);
    const char *const slurm[] = {"SLURM_PROCID", "3", "SLURM_NTASKS", "4", "SLURM_JOB_ID", "900",
                                 "SLURMD_NODENAME", "gpu17", "SLURM_LOCALID", "1", NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_NONE, -1, -1, slurm), 0); /* no --fleet: env unread */
    LS_CHECK_EQ_INT(o.fleet.world, -1);
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, -1, slurm), 0);
    LS_CHECK(o.fleet.rank == 3 && o.fleet.world == 4 && o.fleet.local_id == 1);
    LS_CHECK(strcmp(o.fleet.job_id, "900") == 0 && strcmp(o.fleet.node, "gpu17") == 0);
    LS_CHECK(strcmp(o.fleet.source, "slurm") == 0);
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, 1, -1, slurm), 0); /* flags win, value by value */
    LS_CHECK(o.fleet.rank == 1 && o.fleet.world == 4 && strcmp(o.fleet.source, "flags") == 0);
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, 2, slurm), 2); /* rank 3 of a world of 2 */

    /* An array of single tasks: the elements are the ranks, the array job the fleet. */
    const char *const arr[] = {"SLURM_ARRAY_TASK_ID", "12", "SLURM_ARRAY_TASK_MIN", "10",
                               "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_JOB_ID", "500",
                               "SLURM_JOB_ID", "503", "SLURM_PROCID", "0", "SLURM_NTASKS", "1", NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_REPLICATE, -1, -1, arr), 0);
    LS_CHECK(o.fleet.rank == 2 && o.fleet.world == 4 && strcmp(o.fleet.job_id, "500") == 0);
    LS_CHECK(strcmp(o.fleet.source, "slurm-array") == 0);
    /* An array of multi-task fleets (one per partition): each element is its own fleet. */
    const char *const arr_fleets[] = {"SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "2",
                                      "SLURM_ARRAY_JOB_ID", "500", "SLURM_JOB_ID", "502",
                                      "SLURM_PROCID", "5", "SLURM_NTASKS", "8", NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_REPLICATE, -1, -1, arr_fleets), 0);
    LS_CHECK(o.fleet.rank == 5 && o.fleet.world == 8 && strcmp(o.fleet.job_id, "500_1") == 0);

    const char *const k8s[] = {"JOB_COMPLETION_INDEX", "2", "JOB_NAME", "lsjob", "NODE_NAME", "k1", NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, -1, k8s), 2); /* the world only from --world */
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, 3, k8s), 0);
    LS_CHECK(o.fleet.rank == 2 && o.fleet.world == 3 && strcmp(o.fleet.source, "kubernetes") == 0);
    LS_CHECK(strcmp(o.fleet.job_id, "lsjob") == 0 && strcmp(o.fleet.node, "k1") == 0);

    const char *const bad[] = {"SLURM_PROCID", "2x", NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, -1, bad), 2);
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, -1, none), 2);
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_NONE, 0, 1, none), 2); /* --rank without --fleet */
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, 0, 1, none), 0);
}

static void device_choice(void)
{
    bench_opts o;
    const char *const slurm[] = {"SLURM_PROCID", "3", "SLURM_NTASKS", "4", "SLURM_LOCALID", "3", NULL};
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_SHARD, -1, -1, slurm), 0);
    int dev = -1;
    LS_CHECK_EQ_INT(bench_fleet_device(&o, 1, &dev), 0); /* the launcher's one GPU */
    LS_CHECK_EQ_INT(dev, 0);
    LS_CHECK_EQ_INT(bench_fleet_device(&o, 4, &dev), 0); /* every GPU visible: the local id's */
    LS_CHECK_EQ_INT(dev, 3);
    o.devices[0] = 1;
    o.n_devices = 1;
    LS_CHECK_EQ_INT(bench_fleet_device(&o, 4, &dev), 0); /* --devices wins */
    LS_CHECK_EQ_INT(dev, 1);
    o.n_devices = 2;
    LS_CHECK_EQ_INT(bench_fleet_device(&o, 4, &dev), 2); /* one GPU per rank */
    o.n_devices = 0;
    o.devices_all = 1;
    LS_CHECK_EQ_INT(bench_fleet_device(&o, 4, &dev), 2);
}

static void shard_split(void)
{
    bench_opts o;
    LS_CHECK_EQ_INT(resolve(&o, BENCH_FLEET_NONE, -1, -1, (const char *const[]){NULL}), 0);
    o.variants_all = 1; /* several rows per key: they must stay together */
    o.models[0] = "qwen3-next-80b-a3b";
    o.n_models = 1;
    int dev = 0, total = 0;
    bench_plan full;
    LS_REQUIRE(bench_plan_build(&o, &dev, 1, &full) == 0);
    int same_key_pairs = 0;
    for (int i = 1; i < full.n; i++)
        same_key_pairs += strcmp(full.cases[i].key, full.cases[i - 1].key) == 0;
    LS_CHECK(same_key_pairs > 0);
    int *owner = calloc((size_t)full.n, sizeof *owner);
    for (int r = 0; r < 3; r++) {
        bench_plan p;
        LS_REQUIRE(bench_plan_build(&o, &dev, 1, &p) == 0);
        bench_fleet f = {.mode = BENCH_FLEET_SHARD, .rank = r, .world = 3};
        bench_fleet_shard(&f, &p);
        total += p.n;
        for (int i = 0, j = 0; i < p.n; i++) {
            LS_CHECK_EQ_INT(p.cases[i].index, i);
            while (j < full.n && strcmp(full.cases[j].name, p.cases[i].name) != 0)
                j++; /* plan order kept */
            LS_REQUIRE(j < full.n);
            owner[j] = r + 1;
        }
        bench_plan_free(&p);
    }
    LS_CHECK_EQ_INT(total, full.n);
    for (int i = 0; i < full.n; i++) {
        LS_CHECK(owner[i] != 0);
        if (i > 0 && strcmp(full.cases[i].key, full.cases[i - 1].key) == 0)
            LS_CHECK_EQ_INT(owner[i], owner[i - 1]); /* a key's rows on one rank */
    }
    free(owner);
    bench_plan_free(&full);
}

static void names_and_provenance(void)
{
    char buf[512];
    bench_fleet f = {.mode = BENCH_FLEET_REPLICATE, .rank = 1, .world = 8, .job_id = "77_3"};
    bench_fleet_out_path("out/", "node a", "GPU-12ab", "cuda", &f, buf, sizeof buf);
    LS_CHECK(strcmp(buf, "out/node_a_GPU-12ab_job77_3_rank1of8.csv") == 0);
    bench_fleet none = {.mode = BENCH_FLEET_NONE, .rank = -1, .world = -1};
    bench_fleet_out_path("dir", "h", "", "host", &none, buf, sizeof buf);
    LS_CHECK(strcmp(buf, "dir/h_host.csv") == 0);

    ls_provenance p;
    memset(&p, 0, sizeof p);
    p.rank = p.world_size = -1;
    bench_fleet_provenance(&none, &p);
    LS_CHECK(p.rank == -1 && p.world_size == -1 && p.job_id[0] == '\0');
    snprintf(f.node, sizeof f.node, "gpu17");
    bench_fleet_provenance(&f, &p);
    LS_CHECK(p.rank == 1 && p.world_size == 8 && strcmp(p.job_id, "77_3") == 0 && strcmp(p.node, "gpu17") == 0);
}

int main(void)
{
    sources();
    device_choice();
    shard_split();
    names_and_provenance();
    return ls_test_exit();
}
