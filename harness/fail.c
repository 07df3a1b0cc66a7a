/*
 * fail.c — error messages that keep their cause (see harness_internal.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness_internal.h"
#include "ls_harness.h"

int lsh_fail_cause(const char *fmt, ...)
{
    char cause[512], msg[512];
    snprintf(cause, sizeof cause, "%s", ls_last_error());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cause[0] ? ls_fail("%s: %s", msg, cause) : ls_fail("%s", msg);
}
