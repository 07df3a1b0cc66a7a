/*
 * pyimpl.c — linstate's side of Python impls (ls_pyimpl.h, docs/plugin-abi.md "Python impls"):
 * the table of shipped Python impl modules, the NAME@SRC forms, and the loader of the optional
 * bridge library (libls_pybridge.so, dlopen'ed on the first Python impl; linstate never links
 * libpython). Each instance is registered in the impl registry (impl.c) under its CSV name.
 */
#define _GNU_SOURCE /* realpath */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "impl_internal.h"
#include "ls_pyimpl.h"

#ifndef LS_SOURCE_DIR
#define LS_SOURCE_DIR "."
#endif

/* Shipped Python impls: name, module file (relative to the repository), the package of
 * peers/pins.txt whose extracted source (.peers/src/<package>-<version>/) NAME@VERSION and plain
 * NAME load (NULL: the module takes @PATH only). Adding one is one line. */
typedef struct ls_py_shipped {
    const char *name, *module, *package;
} ls_py_shipped;
static const ls_py_shipped LS_PY_SHIPPED[] = {
    {"py_sglang", "peers/sglang_py/py_sglang.py", "sglang"},
    {"py_vllm", "peers/vllm_py/py_vllm.py", "vllm"},
};
#define N_SHIPPED (int)(sizeof LS_PY_SHIPPED / sizeof LS_PY_SHIPPED[0])

typedef struct py_loaded {
    char *name;           /* CSV impl name */
    char *module;         /* absolute module path */
    char *source;         /* absolute source folder or NULL */
    char *record;         /* impl_source: the version or the path ("" when none) */
    const ls_pyimpl *py;
} py_loaded;
static py_loaded g_loaded[LS_PYIMPL_MAX];
static int g_n_loaded;

typedef struct py_module {  /* --impl-path modules, by their impl name */
    char *name, *path;
} py_module;
static py_module g_modules[LS_PYIMPL_MAX];
static int g_n_modules;

static ls_pyimpl_entry_fn g_entry;

static const ls_py_shipped *shipped(const char *name, size_t n)
{
    for (int i = 0; i < N_SHIPPED; i++)
        if (strlen(LS_PY_SHIPPED[i].name) == n && strncmp(LS_PY_SHIPPED[i].name, name, n) == 0)
            return &LS_PY_SHIPPED[i];
    return NULL;
}

static const py_module *user_module(const char *name, size_t n)
{
    for (int i = 0; i < g_n_modules; i++)
        if (strlen(g_modules[i].name) == n && strncmp(g_modules[i].name, name, n) == 0)
            return &g_modules[i];
    return NULL;
}

int ls_pyimpl_is_module_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    if (n > 3 && strcmp(path + n - 3, ".py") == 0)
        return 1;
    char init[PATH_MAX];
    struct stat st;
    snprintf(init, sizeof init, "%s/__init__.py", path ? path : "");
    return n && stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(init, R_OK) == 0;
}

int ls_pyimpl_is_spec(const char *spec)
{
    if (!spec)
        return 0;
    size_t n = strcspn(spec, "@");
    return spec[n] == '@' || shipped(spec, n) || user_module(spec, n);
}

const ls_pyimpl *ls_pyimpl_of(const ls_impl *im)
{
    for (int i = 0; im && i < g_n_loaded; i++)
        if (g_loaded[i].py->impl == im)
            return g_loaded[i].py;
    return NULL;
}

const char *ls_pyimpl_source(const ls_impl *im)
{
    for (int i = 0; im && i < g_n_loaded; i++)
        if (g_loaded[i].py->impl == im)
            return g_loaded[i].record;
    return "";
}

/* The bridge's entry, dlopen'ed once: the build's python/ folder, then ../python beside the
 * running executable. */
static ls_pyimpl_entry_fn bridge(void)
{
    if (g_entry)
        return g_entry;
    char paths[2][PATH_MAX];
    int n = 0;
#ifdef LS_PYBRIDGE_PATH
    snprintf(paths[n++], sizeof paths[0], "%s", LS_PYBRIDGE_PATH);
#endif
    if (ls_exe_sibling("python/libls_pybridge.so", paths[n], sizeof paths[0]) == 0)
        n++;
    for (int i = 0; i < n; i++) {
        if (access(paths[i], R_OK) != 0)
            continue;
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            ls_fail("python: cannot load the bridge %s: %s", paths[i], e ? e : "dlopen failed");
            return NULL;
        }
        void *sym = dlsym(h, LS_PYIMPL_ENTRY_SYMBOL);
        if (!sym) {
            ls_fail("python: %s exports no %s", paths[i], LS_PYIMPL_ENTRY_SYMBOL);
            return NULL;
        }
        memcpy(&g_entry, &sym, sizeof g_entry);
        return g_entry;
    }
    ls_fail("python: the Python bridge (libls_pybridge.so) was not built: CMake needs Python 3 with its "
            "embedding library (Development.Embed; docs/plugin-abi.md, \"Python impls\")");
    return NULL;
}

/* The version peers/pins.txt pins for package, into buf; 0 or -1 (error set). */
static int pinned(const char *package, char *buf, size_t cap)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/peers/pins.txt", LS_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    char line[256];
    size_t n = strlen(package);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, package, n) == 0 && strncmp(line + n, "==", 2) == 0) {
            line[strcspn(line, " \t\r\n#")] = 0;
            snprintf(buf, cap, "%s", line + n + 2);
            fclose(f);
            return 0;
        }
    if (f)
        fclose(f);
    return ls_fail("python: %s pins no version of %s", path, package);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A label from a source folder: its name, or its parent's when it is a generic one (python,
 * site-packages, src, lib), other characters as '_', at most 40. */
static void path_label(const char *abs, char *buf, size_t cap)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", abs);
    char *base = strrchr(tmp, '/');
    static const char *const generic[] = {"python", "site-packages", "src", "lib"};
    for (int i = 0; base && base != tmp && i < 4; i++)
        if (strcmp(base + 1, generic[i]) == 0) {
            *base = 0;
            base = strrchr(tmp, '/');
            break;
        }
    const char *s = base ? base + 1 : tmp;
    size_t n = 0;
    for (; s[n] && n + 1 < cap && n < 40; n++)
        buf[n] = ls_impl_label_ok(s + n, 1) ? s[n] : '_';
    buf[n] = 0;
    if (n == 0)
        snprintf(buf, cap, "src");
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Loads module on source as instance `name` (or returns the one loaded before). */
static const ls_impl *instance(const char *name, const char *module, const char *source, int git,
                               const char *record, const char *runtime, int derived_label)
{
    char uniq[128];
    snprintf(uniq, sizeof uniq, "%s", name);
    for (int k = 2;; k++) {
        int clash = 0;
        for (int i = 0; i < g_n_loaded; i++) {
            py_loaded *l = &g_loaded[i];
            if (strcmp(l->name, uniq) != 0)
                continue;
            if (strcmp(l->module, module) == 0 && !l->source == !source && (!source || strcmp(l->source, source) == 0))
                return l->py->impl;
            clash = 1;
        }
        if (!clash)
            break;
        if (!derived_label) {
            ls_fail("python: impl name '%s' is taken by another source", name);
            return NULL;
        }
        snprintf(uniq, sizeof uniq, "%.100s-%d", name, k);
    }
    if (g_n_loaded == LS_PYIMPL_MAX) {
        ls_fail("python: at most %d Python impl instances per run", LS_PYIMPL_MAX);
        return NULL;
    }
    ls_pyimpl_entry_fn entry = bridge();
    if (!entry)
        return NULL;
    ls_pyimpl_spec spec = {.abi_version = LS_PYIMPL_ABI, .impl_abi = LS_IMPL_ABI, .module = module,
                           .source = source, .source_git = git, .runtime = runtime,
                           .name = *uniq ? uniq : NULL};
    char err[1024] = "";
    const ls_pyimpl *py = entry(&spec, err, sizeof err);
    if (!py) {
        ls_fail("%s", err);
        return NULL;
    }
    if (ls_impl_register(py->impl, module) != 0)
        return NULL;
    py_loaded *l = &g_loaded[g_n_loaded++];
    l->name = strdup(py->impl->name);
    l->module = strdup(module);
    l->source = dup_or_null(source);
    l->record = strdup(record ? record : "");
    l->py = py;
    return py->impl;
}

const ls_impl *ls_pyimpl_load_file(const char *path, const char *runtime)
{
    char abs[PATH_MAX];
    if (!realpath(path, abs)) {
        ls_fail("python: --impl-path %s: no such file", path);
        return NULL;
    }
    for (int i = 0; i < g_n_modules; i++)
        if (strcmp(g_modules[i].path, abs) == 0)
            return ls_impl_get(g_modules[i].name);
    if (g_n_modules == LS_PYIMPL_MAX) {
        ls_fail("python: at most %d Python modules per run", LS_PYIMPL_MAX);
        return NULL;
    }
    const ls_impl *im = instance("", abs, NULL, 0, "", runtime, 0);
    if (!im)
        return NULL;
    g_modules[g_n_modules++] = (py_module){strdup(im->name), strdup(abs)};
    return im;
}

const ls_impl *ls_pyimpl_get(const char *spec, const char *runtime)
{
    size_t n = strcspn(spec, "@");
    const char *src = spec[n] == '@' ? spec + n + 1 : NULL;
    const ls_py_shipped *sh = shipped(spec, n);
    const py_module *um = sh ? NULL : user_module(spec, n);
    char module[PATH_MAX], name[128], version[64], dir[PATH_MAX], abs[PATH_MAX], label[64];
    if (!sh && !um) {
        char names[128] = "";
        for (int i = 0; i < N_SHIPPED; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", LS_PY_SHIPPED[i].name);
        ls_fail("impl '%s': '%.*s' is not a Python impl (only those take @SRC; shipped: %s; a module of "
                "your own: --impl-path FILE.py)", spec, (int)n, spec, names);
        return NULL;
    }
    if (n >= 64) {
        ls_fail("impl '%s': name too long", spec);
        return NULL;
    }
    if (sh)
        snprintf(module, sizeof module, "%s/%s", LS_SOURCE_DIR, sh->module);
    else
        snprintf(module, sizeof module, "%s", um->path);
    if (!src && !sh) /* a user module with no source: the instance --impl-path made */
        return ls_impl_get(um->name);
    if (src && !*src) {
        ls_fail("impl '%s': nothing after '@' (a version or a folder)", spec);
        return NULL;
    }
    const char *eq = src ? strchr(src, '=') : NULL;
    int is_path = src && (eq || strchr(src, '/') || is_dir(src));
    if (!is_path) { /* NAME (the pinned version) or NAME@VERSION */
        if (!sh || !sh->package) {
            ls_fail("impl '%s': %.*s has no pinned package: give a folder (%.*s@PATH)", spec, (int)n, spec, (int)n, spec);
            return NULL;
        }
        if (src)
            snprintf(version, sizeof version, "%s", src);
        else if (pinned(sh->package, version, sizeof version) != 0)
            return NULL;
        if (!ls_impl_label_ok(version, strlen(version))) {
            ls_fail("impl '%s': '%s' is neither a version nor a folder", spec, version);
            return NULL;
        }
        snprintf(dir, sizeof dir, "%s/.peers/src/%s-%s", LS_SOURCE_DIR, sh->package, version);
        if (!is_dir(dir)) {
            ls_fail("impl '%s': %s missing (a version pinned in peers/pins.txt, fetched by scripts/peers.sh "
                    "fetch; or give a folder)", spec, dir);
            return NULL;
        }
        snprintf(name, sizeof name, src ? "%.*s@%s" : "%.*s", (int)n, spec, version);
        return instance(name, module, dir, 0, version, runtime, 0);
    }
    const char *path = eq ? eq + 1 : src;
    if (eq && !ls_impl_label_ok(src, (size_t)(eq - src))) {
        ls_fail("impl '%s': label '%.*s' is not [A-Za-z0-9._+-]{1,40}", spec, (int)(eq - src), src);
        return NULL;
    }
    if (!realpath(path, abs) || !is_dir(abs)) {
        ls_fail("impl '%s': %s is not a folder", spec, path);
        return NULL;
    }
    if (eq)
        snprintf(label, sizeof label, "%.*s", (int)(eq - src), src);
    else
        path_label(abs, label, sizeof label);
    snprintf(name, sizeof name, "%.*s@%s", (int)n, spec, label);
    return instance(name, module, abs, 1, abs, runtime, !eq);
}
