/*
 * harness_internal.h — helpers shared by the harness sources; not part of the public API.
 */
#ifndef LS_HARNESS_INTERNAL_H
#define LS_HARNESS_INTERNAL_H

/* Like ls_fail, but appends ": <the current ls_last_error()>" (the cause reported by a backend
 * or callback), copying it first so the message never aliases the error buffer. Returns -1. */
int lsh_fail_cause(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Monotonic wall clock, seconds. */
double lsh_wall_s(void);

#endif /* LS_HARNESS_INTERNAL_H */
