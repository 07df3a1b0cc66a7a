/*
 * fleet.c — one linstate-bench process per GPU: rank and world size from the launcher (Slurm,
 * a Kubernetes Indexed Job) or from --rank/--world, the shard of the plan a rank runs, its output
 * file name and its provenance columns. No scheduling happens here: the launcher starts the
 * ranks, scripts/fleet/merge.py joins their files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define FLEET_MAX_WORLD 65536

static void copy_text(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static const char *env_value(bench_env_fn env, const char *name)
{
    const char *v = env(name);
    return v && *v ? v : NULL;
}

/* Integer environment variable: 1 set and valid, 0 unset, -1 invalid (message printed). */
static int env_int(bench_env_fn env, const char *name, long lo, long hi, int *out)
{
    const char *v = env_value(env, name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "linstate-bench: --fleet: %s: bad value '%s' (an integer %ld..%ld)\n", name, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 1;
}

/* Rank and world from Slurm. 1 found, 0 not under Slurm, -1 bad value (message printed). */
static int from_slurm(bench_fleet *f, bench_env_fn env, int *rank, int *world)
{
    int procid = -1, ntasks = -1, task_id = -1, task_min = 0, task_count = -1, r;
    if ((r = env_int(env, "SLURM_PROCID", 0, FLEET_MAX_WORLD - 1, &procid)) < 0 ||
        env_int(env, "SLURM_NTASKS", 1, FLEET_MAX_WORLD, &ntasks) < 0 ||
        env_int(env, "SLURM_ARRAY_TASK_ID", 0, 1 << 30, &task_id) < 0 ||
        env_int(env, "SLURM_ARRAY_TASK_MIN", 0, 1 << 30, &task_min) < 0 ||
        env_int(env, "SLURM_ARRAY_TASK_COUNT", 1, FLEET_MAX_WORLD, &task_count) < 0 ||
        env_int(env, "SLURM_LOCALID", 0, FLEET_MAX_WORLD - 1, &f->local_id) < 0)
        return -1;
    int array = task_id >= 0;
    if (procid < 0 && !array)
        return 0;
    const char *job = env_value(env, "SLURM_JOB_ID");
    const char *array_job = env_value(env, "SLURM_ARRAY_JOB_ID");
    if (array && ntasks <= 1) { /* an array of single tasks: each element is one rank */
        if (task_count < 0) {
            fprintf(stderr, "linstate-bench: --fleet: SLURM_ARRAY_TASK_ID=%d without SLURM_ARRAY_TASK_COUNT\n",
                    task_id);
            return -1;
        }
        *rank = task_id - task_min;
        *world = task_count;
        f->source = "slurm-array";
        copy_text(f->job_id, sizeof f->job_id, array_job ? array_job : job);
    } else {
        *rank = procid < 0 ? 0 : procid;
        *world = ntasks < 0 ? 1 : ntasks;
        f->source = "slurm";
        if (array && array_job) /* each array element is a fleet of its own (e.g. one per partition) */
            snprintf(f->job_id, sizeof f->job_id, "%s_%d", array_job, task_id);
        else
            copy_text(f->job_id, sizeof f->job_id, job);
    }
    copy_text(f->node, sizeof f->node, env_value(env, "SLURMD_NODENAME"));
    return 1;
}

int bench_fleet_resolve(bench_opts *o, bench_env_fn env)
{
    bench_fleet *f = &o->fleet;
    memset(f, 0, sizeof *f);
    f->rank = f->world = f->local_id = -1;
    if (o->fleet_mode == BENCH_FLEET_NONE) {
        if (o->rank_flag >= 0 || o->world_flag >= 0) {
            fprintf(stderr, "linstate-bench: --%s %d: needs --fleet shard|replicate\n",
                    o->rank_flag >= 0 ? "rank" : "world", o->rank_flag >= 0 ? o->rank_flag : o->world_flag);
            return 2;
        }
        return 0;
    }
    f->mode = o->fleet_mode;
    int rank = -1, world = -1, index = -1;
    int slurm = from_slurm(f, env, &rank, &world);
    if (slurm < 0)
        return 2;
    if (!slurm) {
        int k = env_int(env, "JOB_COMPLETION_INDEX", 0, FLEET_MAX_WORLD - 1, &index);
        if (k < 0)
            return 2;
        if (k > 0) {
            rank = index;
            f->source = "kubernetes";
            copy_text(f->job_id, sizeof f->job_id, env_value(env, "JOB_NAME"));
            copy_text(f->node, sizeof f->node, env_value(env, "NODE_NAME"));
        }
    }
    if (o->rank_flag >= 0 || !f->source) /* the rank's source names the fleet's */
        f->source = "flags";
    if (o->rank_flag >= 0)
        rank = o->rank_flag;
    if (o->world_flag >= 0)
        world = o->world_flag;
    if (rank < 0) {
        fprintf(stderr, "linstate-bench: --fleet %s: no rank: pass --rank and --world, or launch under Slurm "
                        "(SLURM_PROCID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)\n",
                o->fleet_mode == BENCH_FLEET_SHARD ? "shard" : "replicate");
        return 2;
    }
    if (world < 0) {
        fprintf(stderr, "linstate-bench: --fleet: rank %d has no world size: pass --world N (a Kubernetes "
                        "Indexed Job: its completions)\n", rank);
        return 2;
    }
    if (rank >= world) {
        fprintf(stderr, "linstate-bench: --rank: bad value '%d' (0..%d for world size %d)\n", rank, world - 1, world);
        return 2;
    }
    f->rank = rank;
    f->world = world;
    return 0;
}

int bench_fleet_device(const bench_opts *o, int device_count, int *device)
{
    if (o->devices_all ? device_count > 1 : o->n_devices > 1) {
        fprintf(stderr, "linstate-bench: --devices: a fleet rank measures one GPU (launch one rank per GPU)\n");
        return 2;
    }
    if (o->n_devices == 1)
        *device = o->devices[0];
    else if (!o->devices_all && o->fleet.local_id > 0 && device_count > 1)
        *device = o->fleet.local_id % device_count;
    else
        *device = 0;
    return 0;
}

void bench_fleet_shard(const bench_fleet *f, bench_plan *p)
{
    if (f->mode != BENCH_FLEET_SHARD || f->world <= 1)
        return;
    int kept = 0, group = -1;
    for (int i = 0; i < p->n; i++) {
        if (i == 0 || strcmp(p->cases[i].key, p->cases[i - 1].key) != 0)
            group++;
        if (group % f->world != f->rank)
            continue;
        p->cases[kept] = p->cases[i];
        p->cases[kept].index = kept;
        kept++;
    }
    p->n = kept;
}

/* Appends src to buf with every character outside [A-Za-z0-9.-] as '_'. */
static void append_safe(char *buf, size_t cap, const char *src)
{
    size_t n = strlen(buf);
    for (; *src && n + 1 < cap; src++) {
        char ch = *src;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                 ch == '-';
        buf[n++] = ok ? ch : '_';
    }
    buf[n] = '\0';
}

void bench_fleet_out_path(const char *dir, const char *host, const char *gpu_uuid, const char *backend,
                          const bench_fleet *f, char *buf, size_t cap)
{
    char name[256] = "";
    append_safe(name, sizeof name, host && *host ? host : "unknown");
    append_safe(name, sizeof name, "_");
    append_safe(name, sizeof name, gpu_uuid && *gpu_uuid ? gpu_uuid : backend);
    if (f->mode != BENCH_FLEET_NONE) {
        if (f->job_id[0]) { /* two jobs on one GPU (or host) write one folder without clashing */
            append_safe(name, sizeof name, "_job");
            append_safe(name, sizeof name, f->job_id);
        }
        char r[48];
        snprintf(r, sizeof r, "_rank%dof%d", f->rank, f->world);
        append_safe(name, sizeof name, r);
    }
    size_t len = strlen(dir);
    snprintf(buf, cap, "%s%s%s.csv", dir, len && dir[len - 1] == '/' ? "" : "/", name);
}

void bench_fleet_provenance(const bench_fleet *f, ls_provenance *p)
{
    if (f->mode == BENCH_FLEET_NONE)
        return;
    p->rank = f->rank;
    p->world_size = f->world;
    copy_text(p->job_id, sizeof p->job_id, f->job_id);
    copy_text(p->node, sizeof p->node, f->node);
}

int bench_fleet_finish_idle(ls_csv *csv, const char *out, ls_csv *samples)
{
    int rc = 0;
    if (ls_csv_close(csv) != 0) {
        fprintf(stderr, "linstate-bench: %s\n", ls_last_error());
        rc = 1;
    } else {
        fprintf(stderr, "linstate-bench: no case for this rank: wrote %s (header only)\n", out);
    }
    if (samples && ls_csv_close(samples) != 0) {
        fprintf(stderr, "linstate-bench: --samples-out: %s\n", ls_last_error());
        rc = 1;
    }
    return rc;
}
