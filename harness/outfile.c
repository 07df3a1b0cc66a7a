/*
 * outfile.c — result files that are never corrupt or lost (docs/csv.md, "Files").
 *
 * A result is written to a private temporary file in the target's folder (PATH.tmp.XXXXXX, made
 * by mkstemp, so two processes never share one) and moved to PATH only when it is complete.
 * While a run writes, it holds an flock on its temporary file: a second run aimed at the same PATH
 * sees a locked PATH.tmp.* and refuses to start. A run creates and locks its own temporary first
 * and only then looks for another's, so of two runs started together at least one sees the other
 * and never both run; the claim (create, lock, look) is also done under a short flock of the
 * folder, so that two claims do not see each other at once and exactly one of the two runs.
 * A crashed run leaves an unlocked temporary, which is ignored (the kernel drops the lock with
 * the process).
 *
 * The final name is never clobbered by surprise: if PATH did not exist at open, the move is
 * link() + unlink(), which fails when another run created PATH meanwhile; if PATH existed at open
 * (the user named an old result), it is replaced only if it is still that same file (device,
 * inode, size, mtime). Otherwise the rows stay in the temporary file and the error names it.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ls_harness.h"

static void remember(ls_outfile *o, const struct stat *st)
{
    o->dev = (unsigned long long)st->st_dev;
    o->ino = (unsigned long long)st->st_ino;
    o->size = (long long)st->st_size;
    o->mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static int same_file(const ls_outfile *o, const struct stat *st)
{
    ls_outfile now;
    remember(&now, st);
    return now.dev == o->dev && now.ino == o->ino && now.size == o->size && now.mtime_ns == o->mtime_ns;
}

/* 1 when another live process holds the lock of one of PATH's temporaries (own, this run's, is
 * not looked at). */
static int live_writer(const char *path, const char *own, char *which, size_t cap)
{
    char pat[LS_OUTFILE_PATH_MAX + 16];
    size_t n = 0;
    for (const char *s = path; *s && n + 16 < sizeof pat; s++) { /* escape glob metacharacters */
        if (strchr("*?[\\", *s))
            pat[n++] = '\\';
        pat[n++] = *s;
    }
    snprintf(pat + n, sizeof pat - n, ".tmp.??????");
    glob_t g;
    int busy = 0;
    if (glob(pat, GLOB_NOSORT, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc && !busy; i++) {
        if (strcmp(g.gl_pathv[i], own) == 0)
            continue;
        int fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            busy = 1;
            snprintf(which, cap, "%s", g.gl_pathv[i]);
        }
        close(fd); /* also drops the lock if we took it: a stale temporary stays untouched */
    }
    globfree(&g);
    return busy;
}

/* PATH's folder into dir ("." for a bare name, "/" for "/name"); returns PATH's last part. */
static const char *folder_of(const char *path, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
        return path;
    }
    const char *base = path + (slash - dir) + 1;
    slash[slash == dir] = '\0'; /* "/name" -> "/" */
    return base;
}

/* The canonical name of a path: the realpath of its longest existing folder, then the rest as
 * given. */
static void canonical_path(const char *path, char *buf, size_t cap)
{
    char dir[LS_OUTFILE_PATH_MAX], real[PATH_MAX];
    const char *base = folder_of(path, dir, sizeof dir);
    if (realpath(dir, real))
        snprintf(buf, cap, "%s/%s", strcmp(real, "/") ? real : "", base);
    else if (strcmp(dir, ".") == 0 || strcmp(dir, "/") == 0 || strcmp(dir, path) == 0)
        snprintf(buf, cap, "%s", path);
    else {
        char up[LS_OUTFILE_PATH_MAX];
        canonical_path(dir, up, sizeof up);
        snprintf(buf, cap, "%s/%s", up, base);
    }
}

int ls_outfile_same_path(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[2 * LS_OUTFILE_PATH_MAX], cb[2 * LS_OUTFILE_PATH_MAX];
    canonical_path(a, ca, sizeof ca);
    canonical_path(b, cb, sizeof cb);
    return strcmp(ca, cb) == 0;
}

/* Locks PATH's folder for the short claim in ls_outfile_open (an flock, waited for up to 10 s).
 * Best effort: -1 where the folder cannot be locked (e.g. NFS), and the claim goes on without. */
static int lock_folder(const char *path)
{
    char dir[LS_OUTFILE_PATH_MAX];
    folder_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    for (int i = 0; i < 10000; i++) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK)
            break;
        usleep(1000);
    }
    close(fd);
    return -1;
}

static void unlock_folder(int fd)
{
    if (fd >= 0)
        close(fd); /* drops the flock */
}

/* PATH, if it exists, must be a regular file. 0, or -1 after ls_fail. */
static int check_target(ls_outfile *o, const char *path)
{
    struct stat st;
    o->existed = 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return ls_fail("output '%s' is a directory; give a file name", path);
        if (!S_ISREG(st.st_mode))
            return ls_fail("output '%s' exists and is not a regular file", path);
        o->existed = 1;
        remember(o, &st);
    } else if (errno != ENOENT) {
        return ls_fail("output '%s': %s", path, strerror(errno));
    }
    return 0;
}

int ls_outfile_open(ls_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!path || !*path)
        return ls_fail("output: empty file name");
    if (strlen(path) + 16 > LS_OUTFILE_PATH_MAX)
        return ls_fail("output: file name too long (%zu bytes)", strlen(path));
    if (check_target(o, path) != 0)
        return -1;
    int dirfd = lock_folder(path);
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        unlock_folder(dirfd);
        return ls_fail("output '%s': cannot create a file in its folder: %s", path, strerror(errno));
    }
    /* not inherited by a program this one starts (the bench's worker process): it would hold the
     * lock past this run's death, so a --resume of the temporary is refused as a live run's */
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        unlock_folder(dirfd);
        return ls_fail("output '%s': cannot lock '%s': %s", path, o->tmp, strerror(e));
    }
    /* own temporary locked first, then another run's looked for: two runs that start together
     * cannot both miss each other (at worst both refuse, where the folder lock is not had) */
    char busy[LS_OUTFILE_PATH_MAX + 16];
    int rc = 0;
    if (live_writer(path, o->tmp, busy, sizeof busy))
        rc = ls_fail("output '%s' is being written by another run (its temporary '%s' is locked)", path, busy);
    else
        rc = check_target(o, path); /* again, now that no other run can make it unseen */
    unlock_folder(dirfd);
    if (rc != 0) {
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
    mode_t mask = umask(0); /* mkstemp makes 0600; give the mode a plain create would */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->fd = fd;
    return 0;
}

int ls_outfile_commit(ls_outfile *o)
{
    int rc = 0;
    if (o->fd >= 0 && fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS)
        rc = ls_fail("output: writing '%s' failed: %s; what was written is kept in '%s'", o->path,
                     strerror(errno), o->tmp);
    struct stat st;
    if (rc == 0 && o->existed) {
        if (stat(o->path, &st) != 0 || !same_file(o, &st))
            rc = ls_fail("output '%s' was replaced by another run during this one; not overwritten, "
                         "this run's result is in '%s'", o->path, o->tmp);
        else if (rename(o->tmp, o->path) != 0)
            rc = ls_fail("output: rename '%s' -> '%s' failed: %s", o->tmp, o->path, strerror(errno));
    } else if (rc == 0) {
        if (link(o->tmp, o->path) == 0) {
            unlink(o->tmp);
        } else if (errno == EEXIST) {
            rc = ls_fail("output '%s' was created by another run during this one; not overwritten, "
                         "this run's result is in '%s'", o->path, o->tmp);
        } else if (stat(o->path, &st) == 0) { /* no hard links here: a checked rename */
            rc = ls_fail("output '%s' was created by another run during this one; not overwritten, "
                         "this run's result is in '%s'", o->path, o->tmp);
        } else if (rename(o->tmp, o->path) != 0) {
            rc = ls_fail("output: rename '%s' -> '%s' failed: %s", o->tmp, o->path, strerror(errno));
        }
    }
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    o->done = 1;
    return rc;
}

void ls_outfile_keep(ls_outfile *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    o->done = 1;
}

void ls_outfile_discard(ls_outfile *o)
{
    if (o->done || !o->tmp[0])
        return;
    if (o->fd >= 0)
        close(o->fd);
    unlink(o->tmp);
    o->fd = -1;
    o->done = 1;
}
