/*
 * test_outfile.c — result files are never corrupt or lost (harness outfile.c, docs/csv.md
 * "Files"): a directory or a file another live run is writing is refused at open; the final
 * name is never clobbered when another run created or replaced it meanwhile (the result stays
 * in the temporary, named in the error); an old result the user named is replaced; a stale
 * temporary of a crashed run does not block; a CSV whose write failed (file size limit, as on a
 * full disk) is not moved into place and ls_csv_close names the temporary.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ls_harness.h"
#include "ls_test.h"

static char dir[64];

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    LS_REQUIRE(f != NULL);
    fputs(text, f);
    fclose(f);
}

static const char *slurp(const char *path)
{
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void write_fd(int fd, const char *text)
{
    LS_REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
}

static void test_refusals(void)
{
    ls_outfile a, b;
    LS_CHECK(ls_outfile_open(&a, dir) != 0); /* a directory */
    LS_CHECK(strstr(ls_last_error(), "is a directory") != NULL);

    char path[160];
    snprintf(path, sizeof path, "%s/busy.csv", dir);
    LS_REQUIRE(ls_outfile_open(&a, path) == 0);
    LS_CHECK(ls_outfile_open(&b, path) != 0); /* a live writer holds the lock */
    LS_CHECK(strstr(ls_last_error(), "being written by another run") != NULL);
    LS_CHECK(strstr(ls_last_error(), a.tmp) != NULL);
    ls_outfile_discard(&a);
    LS_CHECK(!exists(a.tmp) && !exists(path));

    /* a crashed run's temporary (unlocked) does not block, and is left alone */
    char stale[200];
    snprintf(stale, sizeof stale, "%s.tmp.AbCdEf", path);
    put(stale, "stale");
    LS_REQUIRE(ls_outfile_open(&a, path) == 0);
    write_fd(a.fd, "new\n");
    LS_CHECK_EQ_INT(ls_outfile_commit(&a), 0);
    LS_CHECK(strcmp(slurp(path), "new\n") == 0 && exists(stale) && !exists(a.tmp));
}

static void test_no_clobber(void)
{
    char path[160];
    ls_outfile a;
    /* created by another run during this one: kept in the temporary */
    snprintf(path, sizeof path, "%s/race.csv", dir);
    LS_REQUIRE(ls_outfile_open(&a, path) == 0);
    write_fd(a.fd, "mine\n");
    put(path, "theirs\n");
    LS_CHECK(ls_outfile_commit(&a) != 0);
    LS_CHECK(strstr(ls_last_error(), "created by another run") != NULL);
    LS_CHECK(strstr(ls_last_error(), a.tmp) != NULL);
    LS_CHECK(strcmp(slurp(path), "theirs\n") == 0 && strcmp(slurp(a.tmp), "mine\n") == 0);

    /* an old result the user named: replaced */
    snprintf(path, sizeof path, "%s/old.csv", dir);
    put(path, "old\n");
    LS_REQUIRE(ls_outfile_open(&a, path) == 0);
    LS_CHECK(a.existed);
    write_fd(a.fd, "new\n");
    LS_CHECK_EQ_INT(ls_outfile_commit(&a), 0);
    LS_CHECK(strcmp(slurp(path), "new\n") == 0 && !exists(a.tmp));

    /* ... unless another run replaced it meanwhile */
    LS_REQUIRE(ls_outfile_open(&a, path) == 0);
    write_fd(a.fd, "mine\n");
    char other[200];
    snprintf(other, sizeof other, "%s.other", path);
    put(other, "theirs, finished first\n");
    LS_REQUIRE(rename(other, path) == 0);
    LS_CHECK(ls_outfile_commit(&a) != 0);
    LS_CHECK(strstr(ls_last_error(), "replaced by another run") != NULL);
    LS_CHECK(strcmp(slurp(path), "theirs, finished first\n") == 0 && strcmp(slurp(a.tmp), "mine\n") == 0);
}

/* A child writes rows under a 4 KiB file size limit (EFBIG, as ENOSPC on a full disk): the write
 * fails, close fails naming the temporary, and the final name never appears. */
static void test_write_failure(void)
{
    char path[160];
    snprintf(path, sizeof path, "%s/full.csv", dir);
    fflush(NULL);
    pid_t pid = fork();
    LS_REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {4096, 4096};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(3);
        ls_csv *c = ls_csv_open(path);
        if (!c)
            _exit(4);
        ls_provenance prov;
        memset(&prov, 0, sizeof prov);
        ls_row r;
        ls_row_init(&r, &prov);
        snprintf(r.case_key, sizeof r.case_key, "pool/copy/x/tp1/B:1/T:1/fp32");
        int failed_at = -1;
        for (int i = 0; i < 100 && failed_at < 0; i++)
            if (ls_csv_write(c, &r) != 0)
                failed_at = i;
        if (failed_at < 1)
            _exit(5); /* the limit must be hit, after at least one good row */
        if (ls_csv_write(c, &r) == 0)
            _exit(6); /* nothing is written after a failure */
        if (ls_csv_close(c) == 0)
            _exit(7);
        if (!strstr(ls_last_error(), "full.csv.tmp.") || !strstr(ls_last_error(), "kept"))
            _exit(8);
        _exit(0);
    }
    int status = 0;
    LS_REQUIRE(waitpid(pid, &status, 0) == pid);
    LS_CHECK(WIFEXITED(status));
    LS_CHECK_EQ_INT(WEXITSTATUS(status), 0);
    LS_CHECK(!exists(path));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ls_test_outfile_XXXXXX");
    LS_REQUIRE(mkdtemp(dir) != NULL);
    test_refusals();
    test_no_clobber();
    test_write_failure();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    LS_CHECK_EQ_INT(system(cmd), 0);
    return ls_test_exit();
}
