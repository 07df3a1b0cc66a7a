/*
 * ls_pyimpl.h — Python impls (docs/plugin-abi.md, "Python impls"): the entry of the optional
 * bridge library (python/pybridge.c, libls_pybridge.so, which embeds CPython) and linstate's
 * loader of it (kernels/pyimpl.c). linstate-bench never links libpython: the bridge is dlopen'ed
 * when a Python impl is first asked for, and CPython starts then (in the process that runs the
 * cases).
 *
 * Each instance of a Python impl module is an ordinary ls_impl (same ops, knobs, caps and
 * verification); the extras here are what its CSV rows record besides: the source it was loaded
 * from, the per-op layout note and the host-side wall time of its Python calls.
 */
#ifndef LS_PYIMPL_H
#define LS_PYIMPL_H

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LS_PYIMPL_ABI 2
#define LS_PYIMPL_ENTRY_SYMBOL "linstate_pyimpl_v1"
#define LS_PYIMPL_MAX 16 /* instances per process (the bridge has this many trampoline sets) */

/* What to load: module file (X.py or a package folder), its source and the run's runtime. */
typedef struct ls_pyimpl_spec {
    int abi_version;          /* LS_PYIMPL_ABI */
    int impl_abi;             /* LS_IMPL_ABI: the ls_impl table the bridge must fill */
    const char *module;       /* absolute path of the module file or package folder */
    const char *source;       /* absolute folder passed to linstate_impl(source, ...), or NULL */
    int source_git;           /* 1: record `git describe --always --dirty` of source (a user's tree) */
    const char *runtime;      /* "cuda" or "host" */
    const char *name;         /* the instance's CSV impl name ("py_sglang@0.5.23"), or NULL for the
                               * module's own; its part before '@' must be the module's name */
} ls_pyimpl_spec;

typedef struct ls_pyimpl {
    const ls_impl *impl;
    const char *module_name;  /* the module's own name (the part before '@') */
    const char *source_git;   /* "" when not a git checkout */
    const char *source_hash;  /* sha256 of the loaded files' contents, 16 hex digits */
    const char *layout[LS_OP_COUNT]; /* per op: the module's note of the tensor layout it used ("") */
    /* Wall time of the impl's Python calls (op function with the stream made current), as the C
     * side sees it: reset, then the median (us) of the calls since (NaN when none). */
    void (*calls_reset)(const struct ls_pyimpl *py);
    double (*calls_median_us)(const struct ls_pyimpl *py);
    /* A new case starts (before its setup): the module's optional "case_begin" is called, so an
     * impl that keeps copies of linstate's inputs (py_sglang's packed layouts) drops them — a
     * later case may hand it the same addresses with other values. 0, or -1 with the error set. */
    int (*case_begin)(const struct ls_pyimpl *py);
} ls_pyimpl;

/* The bridge's entry: NULL with a one-line reason in err when the module cannot be loaded. */
typedef const ls_pyimpl *(*ls_pyimpl_entry_fn)(const ls_pyimpl_spec *spec, char *err, size_t cap);

/* ------------------------------------------------------------ the loader (kernels/pyimpl.c) */

/*
 * Resolves a Python impl spec and registers the instance (ls_impl_get finds it by its name
 * afterwards). Forms:
 *   NAME            a shipped Python impl (py_sglang: its pinned source) or one loaded before
 *   NAME@VERSION    a shipped impl on .peers/src/<package>-<VERSION>/ (scripts/peers.sh fetch)
 *   NAME@PATH       on a source folder (a path: contains '/', or an existing folder)
 *   NAME@LABEL=PATH the same, the instance named NAME@LABEL
 * The instance's CSV name is NAME, NAME@VERSION, NAME@LABEL, or NAME@<the folder's name> for a
 * path. NULL with a one-line error naming the bad part. Loading one spec twice returns the same.
 */
const ls_impl *ls_pyimpl_get(const char *spec, const char *runtime);
/* --impl-path FILE.py (or a package folder): the module with no source, under its own name. */
const ls_impl *ls_pyimpl_load_file(const char *path, const char *runtime);
/* 1 when spec names a Python impl (has '@', or is a shipped or loaded Python impl's name). */
int ls_pyimpl_is_spec(const char *spec);
/* 1 when path is a Python module (ends in .py, or a folder with __init__.py). */
int ls_pyimpl_is_module_path(const char *path);
/* The extras of a Python impl instance; NULL for C impls. */
const ls_pyimpl *ls_pyimpl_of(const ls_impl *im);
/* The source an instance records (impl_source): its version or path; "" for C impls. */
const char *ls_pyimpl_source(const ls_impl *im);

#ifdef __cplusplus
}
#endif
#endif /* LS_PYIMPL_H */
