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

/* Whether s[0..n) is a LABEL of an instance name NAME@LABEL ([A-Za-z0-9._+-], 1..40 characters):
 * safe in CSV cells, case names, --impl lists and --tune prefixes. */
int ls_impl_label_ok(const char *s, size_t n);
/* "<folder of the running executable>/../<dir>" into buf (where an installed tree keeps peers/
 * and python/ beside bench/); 0, or -1 when the executable's path is unknown. */
int ls_exe_sibling(const char *dir, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* LS_IMPL_INTERNAL_H */
