/*
 * errors.c — the per-thread "last error" of linstate (ls_kernels.h: ls_fail, ls_last_error,
 * ls_clear_error).
 *
 * Every failing call in the suite records one line here and returns -1 (or NULL). The buffer is
 * thread-local, so a benchmark thread and a pool test thread never see each other's messages.
 * Messages longer than the buffer are truncated (ending in "..."), never overflowed.
 */
#include "ls_kernels.h"

#include <stdarg.h>
#include <stdio.h>

#define LS_ERROR_MAX 1024

static _Thread_local char ls_error_buf[LS_ERROR_MAX];

const char *ls_last_error(void) { return ls_error_buf; }

void ls_clear_error(void) { ls_error_buf[0] = '\0'; }

/*
 * Format into a scratch buffer first and copy afterwards: callers may pass ls_last_error()
 * itself as an argument (ls_fail("pool: %s", ls_last_error())) to prefix context, and
 * vsnprintf into the buffer it is reading from would be undefined.
 */
int ls_fail(const char *fmt, ...)
{
    char tmp[LS_ERROR_MAX];
    if (!fmt) {
        snprintf(ls_error_buf, sizeof ls_error_buf, "ls_fail: NULL format");
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        snprintf(ls_error_buf, sizeof ls_error_buf, "ls_fail: bad format \"%.200s\"", fmt);
        return -1;
    }
    if ((size_t)n >= sizeof tmp) /* truncated: mark it */
        memcpy(tmp + sizeof tmp - 4, "...", 4);
    memcpy(ls_error_buf, tmp, strlen(tmp) + 1);
    return -1;
}
