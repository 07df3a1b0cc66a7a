/*
 * provenance.c — where a row came from: suite version, git commit and dirty flag of the source
 * tree (asked of git at RUN time, so a stale build still reports the tree it ran from), UTC
 * timestamp, host name and the device as the backend describes it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness_internal.h"
#include "ls_harness.h"

#ifndef LS_SUITE_VERSION
#define LS_SUITE_VERSION "unknown"
#endif
#ifndef LS_SOURCE_DIR
#define LS_SOURCE_DIR "."
#endif

/* Copies src into dst[cap] (always terminated), cutting at the first newline. */
static void copy_line(char *dst, size_t cap, const char *src)
{
    size_t n = strcspn(src, "\r\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/*
 * Runs `git -C LS_SOURCE_DIR <a1> [a2] [a3]` without a shell (the path needs no quoting), stderr
 * discarded, and reads up to cap-1 bytes of its stdout into out. Returns the byte count, or -1
 * when git cannot be run or exits non-zero (not a repository, git missing).
 */
static int run_git(char *out, size_t cap, const char *a1, const char *a2, const char *a3)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        if (!freopen("/dev/null", "w", stderr))
            _exit(127);
        execlp("git", "git", "-C", LS_SOURCE_DIR, a1, a2, a3, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    char sink[256];
    /* Keep reading past cap so git never blocks on a full pipe. */
    while ((r = read(fd[0], n + 1 < cap ? out + n : sink,
                     n + 1 < cap ? cap - 1 - n : sizeof sink)) > 0) {
        if (n + 1 < cap)
            n += (size_t)r;
    }
    close(fd[0]);
    out[n] = '\0';
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return (int)n;
}

/* Whether `commit` (full or abbreviated, at least 4 hex digits) is HEAD of the checkout git finds. */
static int is_head(const char *commit)
{
    char head[128];
    const size_t n = strlen(commit);
    return n >= 4 && run_git(head, sizeof head, "rev-parse", "HEAD", NULL) > 0 && strncmp(head, commit, n) == 0;
}

/* Commit and dirty flag: env override, else git, else "unknown" / -1 (see ls_harness.h).
 * Dirty means tracked files differ from HEAD; untracked files (e.g. fresh result CSVs) do not
 * count, or every benchmark run would mark the next one dirty. A commit named by LS_GIT_COMMIT
 * that is not the checkout's HEAD (a copied tree beside a stale .git) gets dirty -1: that
 * checkout's status says nothing about the named commit. */
static void fill_git(ls_provenance *p)
{
    const char *env_commit = getenv("LS_GIT_COMMIT");
    const char *env_dirty = getenv("LS_GIT_DIRTY");
    char buf[4096];
    if (env_commit && *env_commit)
        copy_line(p->git_commit, sizeof p->git_commit, env_commit);
    else if (run_git(buf, sizeof buf, "rev-parse", "HEAD", NULL) > 0)
        copy_line(p->git_commit, sizeof p->git_commit, buf);
    else
        copy_line(p->git_commit, sizeof p->git_commit, "unknown");

    if (env_dirty && *env_dirty)
        p->git_dirty = atoi(env_dirty) != 0;
    else if (strcmp(p->git_commit, "unknown") == 0 || (env_commit && *env_commit && !is_head(p->git_commit)))
        p->git_dirty = -1;
    else {
        int n = run_git(buf, sizeof buf, "status", "--porcelain", "--untracked-files=no");
        p->git_dirty = n < 0 ? -1 : n > 0;
    }
}

int ls_provenance_fill(ls_provenance *p, const ls_runtime *be, int device_index)
{
    if (!p || !be)
        return ls_fail("ls_provenance_fill: NULL %s", p ? "backend" : "provenance");
    memset(p, 0, sizeof *p);
    copy_line(p->suite_version, sizeof p->suite_version, LS_SUITE_VERSION);
    fill_git(p);

    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(p->timestamp, sizeof p->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        copy_line(p->timestamp, sizeof p->timestamp, "unknown");

    if (gethostname(p->host, sizeof p->host) != 0)
        copy_line(p->host, sizeof p->host, "unknown");
    p->host[sizeof p->host - 1] = '\0';

    copy_line(p->backend, sizeof p->backend, be->name ? be->name : "unknown");
    p->device_index = device_index;
    p->cpuset[0] = '\0';
    p->numa_node = -1;
    p->rank = p->world_size = -1;
    if (!be->device_info)
        return ls_fail("ls_provenance_fill: backend '%s' has no device_info", p->backend);
    if (be->device_info(device_index, &p->dev) != 0)
        return lsh_fail_cause("ls_provenance_fill: device_info(%d) on backend '%s'", device_index,
                              p->backend);
    copy_line(p->gpu_uuid, sizeof p->gpu_uuid, p->dev.uuid);
    return 0;
}
