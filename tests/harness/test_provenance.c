/*
 * test_provenance.c — run provenance on the host backend (version, commit from git or the env
 * override, UTC timestamp, host, device) and hwloc binding to one core with cpuset recorded.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ls_harness.h"
#include "ls_test.h"

#ifndef LS_EXPECT_VERSION
#error "LS_EXPECT_VERSION (the project version) must be defined by CMake"
#endif

static int is_hex40(const char *s)
{
    if (strlen(s) != 40)
        return 0;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* YYYY-MM-DDTHH:MM:SSZ */
static int is_iso_utc(const char *s)
{
    const char *pat = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != strlen(pat))
        return 0;
    for (size_t i = 0; pat[i]; i++)
        if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
            return 0;
    return 1;
}

int main(void)
{
    const ls_runtime *be = ls_runtime_host();
    ls_provenance p;
    memset(&p, 0x7f, sizeof p); /* poison: every field must be written */

    unsetenv("LS_GIT_COMMIT");
    unsetenv("LS_GIT_DIRTY");
    LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 0), 0);
    LS_CHECK(strcmp(p.suite_version, LS_EXPECT_VERSION) == 0);
    char head[sizeof p.git_commit];
    snprintf(head, sizeof head, "%s", p.git_commit);
    /* a checkout has a 40-hex commit and a 0/1 flag; a copied tree says unknown / -1 */
    LS_CHECK((is_hex40(p.git_commit) && (p.git_dirty == 0 || p.git_dirty == 1)) ||
             (strcmp(p.git_commit, "unknown") == 0 && p.git_dirty == -1));
    LS_CHECK(is_iso_utc(p.timestamp));
    LS_CHECK(strlen(p.host) > 0 && strlen(p.host) < sizeof p.host);
    LS_CHECK(strcmp(p.backend, "host") == 0);
    LS_CHECK_EQ_INT(p.device_index, 0);
    LS_CHECK(strlen(p.dev.name) > 0 && p.dev.sm_count >= 1);
    LS_CHECK(p.cpuset[0] == '\0' && p.numa_node == -1);

    setenv("LS_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567\n", 1);
    setenv("LS_GIT_DIRTY", "1", 1);
    LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 0), 0);
    LS_CHECK(strcmp(p.git_commit, "0123456789abcdef0123456789abcdef01234567") == 0);
    LS_CHECK_EQ_INT(p.git_dirty, 1);
    /* a named commit that is not the checkout's HEAD: its status says nothing (unknown), with
     * or without a checkout; the checkout's own HEAD, named: its status (0/1) */
    unsetenv("LS_GIT_DIRTY");
    LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 0), 0);
    LS_CHECK_EQ_INT(p.git_dirty, -1);
    if (is_hex40(head)) {
        setenv("LS_GIT_COMMIT", head, 1);
        LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 0), 0);
        LS_CHECK(p.git_dirty == 0 || p.git_dirty == 1);
        head[7] = '\0'; /* abbreviated */
        setenv("LS_GIT_COMMIT", head, 1);
        LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 0), 0);
        LS_CHECK(p.git_dirty == 0 || p.git_dirty == 1);
    }
    unsetenv("LS_GIT_COMMIT");

    LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 3), -1); /* host has device 0 only */
    LS_CHECK(strstr(ls_last_error(), "device_info(3)") != NULL);

    /* Binding: host backend = one core. Failure is allowed (restricted container) but must say
     * why; the cpuset is recorded either way. */
    LS_CHECK_EQ_INT(ls_provenance_fill(&p, be, 0), 0);
    int rc = ls_bind_to_device(be, 0, 0, &p);
    if (rc != 0)
        fprintf(stderr, "note: binding failed (allowed): %s\n", ls_last_error());
    LS_CHECK(rc == 0 || strlen(ls_last_error()) > 0);
    LS_CHECK(strlen(p.cpuset) > 0 && isdigit((unsigned char)p.cpuset[0]));
    LS_CHECK(p.numa_node >= -1);
    if (rc == 0)
        printf("bound to CPUs %s, NUMA node %d\n", p.cpuset, p.numa_node);
    LS_CHECK_EQ_INT(ls_bind_to_device(NULL, 0, 0, &p), -1);
    /* one_core: one core's CPUs, whatever the set was */
    if (ls_bind_to_device(be, 0, 1, &p) == 0)
        LS_CHECK(strchr(p.cpuset, ',') == NULL);
    return ls_test_exit();
}
