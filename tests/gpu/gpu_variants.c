/*
 * gpu_variants.c — see gpu_variants.h. The child is marked by GT_VARIANT_CHILD=<value> in its
 * environment (set by the parent before exec), so a child never spawns children itself.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, fork, execv, waitpid */
#include "gpu_variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_ENV "GT_VARIANT_CHILD"

const char *gt_variant(void) { return getenv(CHILD_ENV); }

/* One child with knob=value (NULL: unset); returns its exit code, or -1 if it did not exit. */
static int run_child(const char *knob, const char *value, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("gt_variants_run: fork");
        return -1;
    }
    if (pid == 0) {
        if (value)
            setenv(knob, value, 1);
        else
            unsetenv(knob);
        setenv(CHILD_ENV, value ? value : "default", 1);
        execv("/proc/self/exe", argv);
        perror("gt_variants_run: execv /proc/self/exe");
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("gt_variants_run: waitpid");
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int gt_variants_run(const char *knob, const char *const *values, int n, char **argv)
{
    if (gt_variant())
        return -1;
    int passed = 0, skipped = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        const char *v = values[i] ? values[i] : "default";
        printf("=== %s=%s\n", knob, values[i] ? values[i] : "(unset)");
        int rc = run_child(knob, values[i], argv);
        if (rc == 0)
            passed++;
        else if (rc == 77)
            skipped++;
        else
            failed++;
        if (rc == 0 || rc == 77)
            printf("=== %s=%s: %s\n", knob, v, rc ? "skipped" : "passed");
        else
            printf("=== %s=%s: FAILED (exit %d)\n", knob, v, rc);
        fflush(stdout);
    }
    if (failed || (passed && skipped))
        return 1;
    return passed ? 0 : 77;
}
