/*
 * peer_err.h — the one error helper the peers' host-side adapters share: format a reason into the
 * caller's buffer and return -1, so `return peer_fail(err, cap, "...", ...)` reads well. The
 * adapters do not link linstate's ls_fail (a plugin keeps its own last_error text).
 */
#ifndef LS_PEER_ERR_H
#define LS_PEER_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int peer_fail(char *err, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline int peer_fail(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif /* LS_PEER_ERR_H */
