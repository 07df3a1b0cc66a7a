/*
 * api/registry.h — the impl registry and tunings (kernels/impl.c): built-in impls, plugins, knob
 * parsing.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_REGISTRY_H
#define LS_API_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include "impl.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ impl registry (kernels/impl.c) */

/* Built-in impls and loaded plugins, by name; NULL with the error set when unknown. */
const ls_impl *ls_impl_get(const char *name);
/* The default impl of a runtime: "linstate" on cuda, "host" on host. */
const ls_impl *ls_impl_default(const ls_runtime *rt);
/* Loads a plugin with dlopen and registers it; NULL with a one-line error (missing file, missing
 * entry symbol, ABI or name mismatch, name already taken). Loading the same path twice returns
 * the impl registered the first time. */
const ls_impl *ls_impl_load(const char *path);
int ls_impl_count(void);
const ls_impl *ls_impl_at(int i);
/* The impl's function for op (NULL when it lacks it); the op's name ("conv_update", "gdn", ...). */
const void *ls_impl_op(const ls_impl *im, ls_op op);
const char *ls_op_name(ls_op op);
/* After a failed op: the impl's own reason if it gives one, else ls_last_error(). */
const char *ls_impl_error(const ls_impl *im);

/* The default tuning (every knob at its first value). */
void ls_tuning_default(const ls_impl *im, ls_tuning *out);
/* Applies "knob=value[,knob=value...]" on top of *t. Unknown knob or value: -1 with a one-line
 * error naming it and the allowed names/values. "" changes nothing. */
int ls_tuning_parse(const ls_impl *im, const char *spec, ls_tuning *t);
/* The stable string of a tuning: every knob, in declaration order, "name=value" joined by ','
 * ("" for an impl without knobs). Returns the length, or -1 when cap is too small. */
int ls_tuning_string(const ls_impl *im, const ls_tuning *t, char *buf, size_t cap);
/* The index of knob `name` in im->knobs, or -1. */
int ls_knob_index(const ls_impl *im, const char *name);
/* The value (string) of knob i in t, written into buf (cap bytes); buf. */
const char *ls_knob_value(const ls_impl *im, const ls_tuning *t, int i, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_REGISTRY_H */
