/*
 * impl_internal.h — private header of kernels/: the built-in impl tables the registry
 * (impl.c) starts with. Not part of the public API (ls_kernels.h).
 */
#ifndef LS_IMPL_INTERNAL_H
#define LS_IMPL_INTERNAL_H

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "host": the float64 reference kernels on the host runtime (ref/host_backend.c). */
const ls_impl *ls_impl_host_table(void);
/* "linstate": the CUDA kernels (cuda/impl_linstate.cu); NULL in builds without CUDA. */
const ls_impl *ls_impl_linstate_table(void);

/* Checks a table (ABI, name, runtime, caps, knobs) and adds it to the registry under its name;
 * `where` names its origin in errors (a plugin path, a Python module). 0 or -1 (error set). */
int ls_impl_register(const ls_impl *im, const char *where);

#ifdef __cplusplus
}
#endif
#endif /* LS_IMPL_INTERNAL_H */
