/*
 * api/errors.h — the thread-local last error every op, runtime and pool call sets.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_ERRORS_H
#define LS_API_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Last error of this thread ("file:line: call: reason"); "" when none. */
const char *ls_last_error(void);
/* Sets the error message (printf-style) and returns -1, so `return ls_fail(...)` reads well. */
int ls_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void ls_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_ERRORS_H */
