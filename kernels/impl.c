/*
 * impl.c — the impl registry: the built-in impls ("host", and "linstate" with CUDA), plugins
 * loaded with dlopen (ls_impl_load), and the tuning helpers (defaults, "knob=value" parsing,
 * the stable tuning string). The ABI itself is documented in ls_kernels.h and docs/plugin-abi.md.
 *
 * The registry is process-wide and filled from the main thread before any sweep starts (CLI
 * parsing); lookups afterwards only read it.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl_internal.h"

#define LS_MAX_IMPLS 32

static const ls_impl *loaded[LS_MAX_IMPLS];
static char *loaded_path[LS_MAX_IMPLS];
static int n_loaded;

#ifndef LS_HAVE_CUDA
const ls_impl *ls_impl_linstate_table(void) { return NULL; }
#endif

/* Built-ins first (in this order), then plugins in load order. */
static int builtins(const ls_impl **out)
{
    int n = 0;
    out[n++] = ls_impl_host_table();
    const ls_impl *l = ls_impl_linstate_table();
    if (l)
        out[n++] = l;
    return n;
}

int ls_impl_count(void)
{
    const ls_impl *b[2];
    return builtins(b) + n_loaded;
}

const ls_impl *ls_impl_at(int i)
{
    const ls_impl *b[2];
    int nb = builtins(b);
    if (i < 0 || i >= nb + n_loaded)
        return NULL;
    return i < nb ? b[i] : loaded[i - nb];
}

/* "host, linstate, ..." into buf: the names ls_impl_get knows, for error messages. */
static const char *known_names(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < ls_impl_count() && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", ls_impl_at(i)->name);
    return buf;
}

static int name_ok(const char *s, const char *extra);

/* Peer impls (sglang, fla, ...) are plugins the build puts in its peers/ folder as
 * libls_impl_<name>.so: looked up there (the build's folder, then ../peers beside the running
 * executable) when a name is not registered yet. 1 when one was loaded. */
static int load_peer(const char *name)
{
    if (!name_ok(name, "_-") || strlen(name) > 40)
        return 0;
    char dirs[2][4096 + 16];
    int n_dirs = 0;
#ifdef LS_PEER_DIR
    snprintf(dirs[n_dirs++], sizeof dirs[0], "%s", LS_PEER_DIR);
#endif
    if (ls_exe_sibling("peers", dirs[n_dirs], sizeof dirs[0]) == 0)
        n_dirs++;
    for (int d = 0; d < n_dirs; d++) {
        char path[4096 + 64];
        snprintf(path, sizeof path, "%.4000s/libls_impl_%.40s.so", dirs[d], name);
        if (access(path, R_OK) != 0)
            continue;
        const ls_impl *im = ls_impl_load(path);
        if (!im)
            return -1; /* the loader's error names the path and the problem */
        if (strcmp(im->name, name) != 0) {
            ls_fail("impl: %s holds impl '%s', not '%s'", path, im->name, name);
            return -1;
        }
        return 1;
    }
    return 0;
}

const ls_impl *ls_impl_get(const char *name)
{
    if (!name || !*name) {
        ls_fail("impl: no name given");
        return NULL;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ls_impl_count(); i++)
            if (strcmp(ls_impl_at(i)->name, name) == 0)
                return ls_impl_at(i);
        if (pass == 0) {
            int rc = load_peer(name);
            if (rc < 0)
                return NULL;
            if (rc == 0)
                break;
        }
    }
    char names[256];
    if (strcmp(name, "linstate") == 0)
        ls_fail("impl: linstate: built without CUDA (nvcc not found or LINSTATE_CUDA=OFF)");
    else
        ls_fail("impl: unknown impl '%s' (known: %s; peers are built into the build's peers/ folder, "
                "see README; a plugin is loaded with --impl-path)", name, known_names(names, sizeof names));
    return NULL;
}

const ls_impl *ls_impl_default(const ls_runtime *rt)
{
    if (!rt) {
        ls_fail("impl: default: runtime is NULL");
        return NULL;
    }
    return ls_impl_get((rt->caps & LS_RT_DEVICE_MEMORY) ? "linstate" : "host");
}

static int name_ok(const char *s, const char *extra)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || strchr(extra, *s)))
            return 0;
    return 1;
}

int ls_impl_label_ok(const char *s, size_t n)
{
    if (n == 0 || n > 40)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._+-", s[i]))
            return 0;
    return 1;
}

int ls_exe_sibling(const char *dir, char *buf, size_t cap)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = len > 0 ? (exe[len] = 0, strrchr(exe, '/')) : NULL;
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(buf, cap, "%.4000s/../%s", exe, dir);
    return 0;
}

/* An impl name: [a-z0-9_-]+, and for an instance of a Python impl on a source "@LABEL" after it
 * (ls_impl_label_ok). */
static int impl_name_ok(const char *s)
{
    if (!s)
        return 0;
    const char *at = strchr(s, '@');
    char base[64];
    size_t n = at ? (size_t)(at - s) : strlen(s);
    if (n >= sizeof base)
        return 0;
    memcpy(base, s, n);
    base[n] = 0;
    if (!name_ok(base, "_-"))
        return 0;
    return !at || ls_impl_label_ok(at + 1, strlen(at + 1));
}

/* Everything the harness relies on in a table it did not build. */
static int impl_check(const ls_impl *im, const char *where)
{
    if (im->abi_version != LS_IMPL_ABI)
        return ls_fail("impl: %s: impl ABI %d, this linstate speaks %d (rebuild the plugin against this "
                       "ls_kernels.h)", where, im->abi_version, LS_IMPL_ABI);
    if (!impl_name_ok(im->name))
        return ls_fail("impl: %s: name '%s' is not [a-z0-9_-]+ (a Python impl instance: +@[A-Za-z0-9._+-]+)",
                       where, im->name ? im->name : "(null)");
    if (!im->runtime || (strcmp(im->runtime, "cuda") && strcmp(im->runtime, "host")))
        return ls_fail("impl: %s: runtime '%s' is not cuda or host", where, im->runtime ? im->runtime : "(null)");
    if ((im->gdn || im->kda || im->conv_delta) && !(im->caps & (LS_IMPL_KV | LS_IMPL_VK)))
        return ls_fail("impl: %s: has gdn/kda/conv_delta but declares no state layout (caps LS_IMPL_KV and/or LS_IMPL_VK)", where);
    if (im->n_knobs < 0 || im->n_knobs > LS_MAX_KNOBS || (im->n_knobs && !im->knobs))
        return ls_fail("impl: %s: %d knobs (at most %d, with a table)", where, im->n_knobs, LS_MAX_KNOBS);
    for (int i = 0; i < im->n_knobs; i++) {
        const ls_knob_def *k = &im->knobs[i];
        if (!name_ok(k->name, "_."))
            return ls_fail("impl: %s: knob %d: name '%s' is not [a-z0-9_.]+", where, i, k->name ? k->name : "(null)");
        if (!k->values || !*k->values || strstr(k->values, "||") || k->values[strlen(k->values) - 1] == '|' ||
            strpbrk(k->values, ",= "))
            return ls_fail("impl: %s: knob %s: values '%s' must be 'a|b|...' (no empty value, ',', '=' or ' ')",
                           where, k->name, k->values ? k->values : "(null)");
        for (int j = 0; j < i; j++)
            if (strcmp(im->knobs[j].name, k->name) == 0)
                return ls_fail("impl: %s: knob %s declared twice", where, k->name);
    }
    return 0;
}

const ls_impl *ls_impl_load(const char *path)
{
    if (!path || !*path) {
        ls_fail("impl: --impl-path: empty path");
        return NULL;
    }
    for (int i = 0; i < n_loaded; i++)
        if (strcmp(loaded_path[i], path) == 0)
            return loaded[i];
    if (n_loaded == LS_MAX_IMPLS) {
        ls_fail("impl: %s: at most %d plugins", path, LS_MAX_IMPLS);
        return NULL;
    }
    /* A bare file name is the file in the current directory, as for a Python impl (dlopen would
     * search the library path for it); one that is not there still goes to the search path. */
    char here[PATH_MAX];
    const char *open_as = path;
    if (!strchr(path, '/') && snprintf(here, sizeof here, "./%s", path) < (int)sizeof here && access(here, F_OK) == 0)
        open_as = here;
    /* RTLD_LOCAL: two plugins may use the same symbol names; RTLD_NOW: a missing symbol is an
     * error here, not a crash in the middle of a sweep. */
    void *h = dlopen(open_as, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        ls_fail("impl: cannot load %s: %s%s", path, e ? e : "dlopen failed",
                open_as == path && !strchr(path, '/') ? " (no such file in the current directory either)" : "");
        return NULL;
    }
    void *sym = dlsym(h, LS_IMPL_ENTRY_SYMBOL);
    if (!sym) {
        ls_fail("impl: %s exports no %s (not a linstate plugin, or built for another ABI)", path,
                LS_IMPL_ENTRY_SYMBOL);
        dlclose(h);
        return NULL;
    }
    ls_impl_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object -> function pointer, as POSIX dlsym allows */
    const ls_impl *im = entry(LS_IMPL_ABI);
    if (!im) {
        ls_fail("impl: %s: %s(%d) returned NULL (the plugin does not speak impl ABI %d)", path,
                LS_IMPL_ENTRY_SYMBOL, LS_IMPL_ABI, LS_IMPL_ABI);
        dlclose(h);
        return NULL;
    }
    if (ls_impl_register(im, path) != 0) {
        dlclose(h);
        return NULL;
    }
    return im; /* the handle stays open for the process */
}

int ls_impl_register(const ls_impl *im, const char *where)
{
    if (n_loaded == LS_MAX_IMPLS)
        return ls_fail("impl: %s: at most %d plugins", where, LS_MAX_IMPLS);
    if (impl_check(im, where) != 0)
        return -1;
    for (int i = 0; i < ls_impl_count(); i++)
        if (strcmp(ls_impl_at(i)->name, im->name) == 0)
            return ls_fail("impl: %s: name '%s' is already taken", where, im->name);
    loaded_path[n_loaded] = strdup(where);
    if (!loaded_path[n_loaded])
        return ls_fail("impl: %s: out of memory", where);
    loaded[n_loaded++] = im;
    return 0;
}

const char *ls_op_name(ls_op op)
{
    static const char *const names[LS_OP_COUNT] = {"conv_update", "gdn", "kda", "ssu",
                                                   "state_copy", "state_accept", "state_zero",
                                                   "conv_delta"};
    return (unsigned)op < LS_OP_COUNT ? names[op] : "?";
}

const void *ls_impl_op(const ls_impl *im, ls_op op)
{
    if (!im)
        return NULL;
    switch (op) {
    case LS_OP_CONV_UPDATE: return (const void *)im->conv_update;
    case LS_OP_GDN: return (const void *)im->gdn;
    case LS_OP_KDA: return (const void *)im->kda;
    case LS_OP_SSU: return (const void *)im->ssu;
    case LS_OP_STATE_COPY: return (const void *)im->state_copy;
    case LS_OP_STATE_ACCEPT: return (const void *)im->state_accept;
    case LS_OP_STATE_ZERO: return (const void *)im->state_zero;
    case LS_OP_CONV_DELTA: return (const void *)im->conv_delta;
    default: return NULL;
    }
}

const char *ls_impl_error(const ls_impl *im)
{
    const char *e = im && im->last_error ? im->last_error() : NULL;
    if (e && *e)
        return e;
    e = ls_last_error();
    return *e ? e : "failed (the impl gave no reason)";
}

/* ------------------------------------------------------------------ tuning */

void ls_tuning_default(const ls_impl *im, ls_tuning *out)
{
    memset(out, 0, sizeof *out);
    out->n = im ? im->n_knobs : 0;
}

int ls_knob_index(const ls_impl *im, const char *name)
{
    for (int i = 0; im && i < im->n_knobs; i++)
        if (strcmp(im->knobs[i].name, name) == 0)
            return i;
    return -1;
}

/* Index of value [v, v+len) in the '|' list `values`, or -1. */
static int value_index(const char *values, const char *v, size_t len)
{
    int idx = 0;
    for (const char *p = values;; idx++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, v, len) == 0)
            return idx;
        if (!bar)
            return -1;
        p = bar + 1;
    }
}

const char *ls_knob_value(const ls_impl *im, const ls_tuning *t, int i, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!im || i < 0 || i >= im->n_knobs || cap == 0)
        return buf;
    const char *p = im->knobs[i].values;
    for (int k = 0; k < t->v[i]; k++) {
        p = strchr(p, '|');
        if (!p)
            return buf;
        p++;
    }
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
    return buf;
}

int ls_tuning_parse(const ls_impl *im, const char *spec, ls_tuning *t)
{
    if (!im || !spec || !t)
        return ls_fail("tuning: NULL argument");
    if (t->n != im->n_knobs)
        return ls_fail("tuning: %s: tuning has %d knobs, impl declares %d", im->name, t->n, im->n_knobs);
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || eq == p || eq == p + len - 1)
            return ls_fail("tuning: '%.*s' is not knob=value", (int)len, p);
        char name[64];
        size_t nlen = (size_t)(eq - p);
        if (nlen >= sizeof name)
            return ls_fail("tuning: knob name '%.*s' too long", (int)nlen, p);
        memcpy(name, p, nlen);
        name[nlen] = 0;
        int k = ls_knob_index(im, name);
        if (k < 0) {
            char known[512];
            size_t kl = 0;
            known[0] = 0;
            for (int i = 0; i < im->n_knobs && kl < sizeof known; i++)
                kl += (size_t)snprintf(known + kl, sizeof known - kl, "%s%s", i ? ", " : "", im->knobs[i].name);
            return ls_fail("tuning: impl %s has no knob '%s' (knobs: %s)", im->name, name,
                           im->n_knobs ? known : "none");
        }
        const char *val = eq + 1;
        size_t vlen = len - nlen - 1;
        int v = value_index(im->knobs[k].values, val, vlen);
        if (v < 0)
            return ls_fail("tuning: %s: '%.*s' is not a value of %s (%s)", im->name, (int)vlen, val, name,
                           im->knobs[k].values);
        t->v[k] = v;
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            return ls_fail("tuning: '%s' ends with ','", spec);
    }
    return 0;
}

int ls_tuning_string(const ls_impl *im, const ls_tuning *t, char *buf, size_t cap)
{
    if (!cap)
        return -1;
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; im && i < im->n_knobs; i++) {
        char v[64];
        int n = snprintf(buf + len, cap - len, "%s%s=%s", i ? "," : "", im->knobs[i].name,
                         ls_knob_value(im, t, i, v, sizeof v));
        if (n < 0 || (size_t)n >= cap - len) {
            buf[0] = 0;
            return -1;
        }
        len += (size_t)n;
    }
    return (int)len;
}
