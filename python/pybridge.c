/*
 * pybridge.c — the Python-impl bridge (libls_pybridge.so; docs/plugin-abi.md, "Python impls"):
 * embeds CPython and presents each instance of a Python impl module as an ordinary ls_impl.
 *
 * - CPython starts on the first linstate_pyimpl_v1 call (never at dlopen): in the process that
 *   runs the cases. Its config names the interpreter CMake found (LS_PY_EXECUTABLE), so a venv's
 *   pyvenv.cfg is read and its site-packages are seen; the environment (PYTHONPATH, ...) is
 *   ignored and Python installs no signal handlers (linstate's own finish the CSV on Ctrl-C).
 * - The ABI's op functions carry no impl pointer, so each instance slot has its own set of
 *   trampolines (LS_PYIMPL_MAX of them, generated below).
 * - A call hands the op the `p` object of its params struct. Building one (tensors aliasing
 *   linstate's memory, python/linstate_bridge.py) costs far more than a launch, so each
 *   instance keeps the objects of the last PCACHE distinct structs, found by their bytes: a
 *   timed call costs the cache lookup and the Python call only.
 * - The Python call (the op with linstate's stream made current) is timed on the host clock;
 *   the samples give the row's host_call_us.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ls_pyimpl.h"

#define EXPORT __attribute__((visibility("default")))
#define PCACHE 64        /* params objects kept per instance */
#define MAX_CALLS 65536  /* call-time samples kept per instance (a ring beyond) */

typedef union any_params {
    ls_conv_params conv;
    ls_delta_params delta;
    ls_ssu_params ssu;
    ls_state_params state;
    ls_conv_delta_params cd;
} any_params;

typedef struct pentry {
    int op;
    uint64_t hash;
    any_params bytes;
    PyObject *p;
} pentry;

typedef struct inst {
    ls_pyimpl pub;
    ls_impl impl;
    PyObject *obj;             /* the linstate_bridge.Instance */
    PyObject *call, *params, *explain; /* its bound methods */
    ls_knob_def knobs[LS_MAX_KNOBS];
    pentry cache[PCACHE];
    int n_cache, next_evict;
    ls_tuning last_t;
    PyObject *last_tdict;
    double *calls;
    int n_calls, ring;
} inst;

static inst g_inst[LS_PYIMPL_MAX];
static int g_n_inst;
static PyObject *g_bridge;     /* the linstate_bridge module */
static _Thread_local char g_err[512];

/* ------------------------------------------------------------------ errors */

static int set_err(const char *fmt, const char *a, const char *b)
{
    snprintf(g_err, sizeof g_err, fmt, a, b);
    return -1;
}

/* The pending Python exception as one line ("Type: message") into g_err, prefixed. */
static int py_err(const char *prefix)
{
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    const char *msg = NULL;
    PyObject *line = g_bridge && v ? PyObject_CallMethod(g_bridge, "error_line", "(O)", v) : NULL;
    if (line)
        msg = PyUnicode_AsUTF8(line);
    if (!msg) {
        PyErr_Clear();
        msg = "an exception the bridge could not format";
    }
    snprintf(g_err, sizeof g_err, "%s%s", prefix, msg);
    Py_XDECREF(line);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    return -1;
}

static const char *last_error(void) { return g_err; }

/* ------------------------------------------------------------------ interpreter */

#ifndef LS_PY_EXECUTABLE
#error "LS_PY_EXECUTABLE: the interpreter whose site-packages the bridge sees (set by CMake)"
#endif
#ifndef LS_PY_BRIDGE_DIR
#error "LS_PY_BRIDGE_DIR: the folder of linstate_bridge.py (set by CMake)"
#endif

static int py_start(void)
{
    if (g_bridge)
        return 0;
    /* Extension modules (numpy, torch) resolve CPython's symbols globally; linstate loaded this
     * library (and libpython with it) RTLD_LOCAL, so make libpython global first. */
    Dl_info di;
    if (dladdr((void *)&Py_InitializeFromConfig, &di) && di.dli_fname)
        dlopen(di.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (!Py_IsInitialized()) {
        PyConfig c;
        PyConfig_InitPythonConfig(&c);
        c.use_environment = 0;        /* no environment variable changes what runs */
        c.install_signal_handlers = 0;
        c.parse_argv = 0;
        c.user_site_directory = 0;
        PyStatus st = PyConfig_SetBytesString(&c, &c.program_name, LS_PY_EXECUTABLE);
        if (!PyStatus_Exception(st))
            st = PyConfig_SetBytesString(&c, &c.executable, LS_PY_EXECUTABLE);
        if (!PyStatus_Exception(st))
            st = Py_InitializeFromConfig(&c);
        PyConfig_Clear(&c);
        if (PyStatus_Exception(st))
            return set_err("python: cannot start %s: %s", LS_PY_EXECUTABLE, st.err_msg ? st.err_msg : "?");
    } else {
        PyGILState_Ensure(); /* an embedding host started it: keep its interpreter */
    }
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    PyObject *dir = PyUnicode_FromString(LS_PY_BRIDGE_DIR);
    if (!path || !dir || PyList_Insert(path, 0, dir) != 0) {
        Py_XDECREF(dir);
        return py_err("python: sys.path: ");
    }
    Py_DECREF(dir);
    g_bridge = PyImport_ImportModule("linstate_bridge");
    if (!g_bridge)
        return py_err("python: import linstate_bridge (" LS_PY_BRIDGE_DIR "): ");
    PyEval_SaveThread(); /* every later call takes the GIL with PyGILState_Ensure */
    return 0;
}

/* ------------------------------------------------------------------ params -> dict */

typedef enum { K_I32, K_I64, K_F32, K_DTYPE, K_LAYOUT, K_PTR } kind;
typedef struct field {
    const char *name;
    size_t off;
    kind k;
} field;

#define F(S, n, k) {#n, offsetof(S, n), k}
static const field conv_fields[] = {
    F(ls_conv_params, batch, K_I32), F(ls_conv_params, tokens, K_I32), F(ls_conv_params, channels, K_I32),
    F(ls_conv_params, width, K_I32), F(ls_conv_params, silu, K_I32), F(ls_conv_params, disable_state_update, K_I32),
    F(ls_conv_params, weight_dtype, K_DTYPE), F(ls_conv_params, state_dtype, K_DTYPE), F(ls_conv_params, x, K_PTR),
    F(ls_conv_params, x_stride_b, K_I64), F(ls_conv_params, x_stride_t, K_I64), F(ls_conv_params, x_stride_c, K_I64),
    F(ls_conv_params, y, K_PTR), F(ls_conv_params, y_stride_b, K_I64), F(ls_conv_params, y_stride_t, K_I64),
    F(ls_conv_params, y_stride_c, K_I64), F(ls_conv_params, weight, K_PTR), F(ls_conv_params, bias, K_PTR),
    F(ls_conv_params, state, K_PTR), F(ls_conv_params, state_stride_slot, K_I64),
    F(ls_conv_params, state_stride_c, K_I64), F(ls_conv_params, state_stride_w, K_I64),
    F(ls_conv_params, slot_idx, K_PTR), F(ls_conv_params, inter, K_PTR), F(ls_conv_params, inter_stride_slot, K_I64),
    F(ls_conv_params, inter_stride_t, K_I64), F(ls_conv_params, inter_stride_c, K_I64),
    F(ls_conv_params, inter_stride_w, K_I64), F(ls_conv_params, slots, K_I32),
};
static const field delta_fields[] = {
    F(ls_delta_params, batch, K_I32), F(ls_delta_params, tokens, K_I32), F(ls_delta_params, heads_qk, K_I32),
    F(ls_delta_params, heads_v, K_I32), F(ls_delta_params, dk, K_I32), F(ls_delta_params, dv, K_I32),
    F(ls_delta_params, disable_state_update, K_I32), F(ls_delta_params, scale, K_F32),
    F(ls_delta_params, state_dtype, K_DTYPE), F(ls_delta_params, q, K_PTR), F(ls_delta_params, k, K_PTR),
    F(ls_delta_params, v, K_PTR), F(ls_delta_params, a, K_PTR), F(ls_delta_params, b, K_PTR),
    F(ls_delta_params, A_log, K_PTR), F(ls_delta_params, dt_bias, K_PTR), F(ls_delta_params, o, K_PTR),
    F(ls_delta_params, state, K_PTR), F(ls_delta_params, state_stride_slot, K_I64),
    F(ls_delta_params, slot_idx, K_PTR), F(ls_delta_params, inter, K_PTR),
    F(ls_delta_params, inter_stride_slot, K_I64), F(ls_delta_params, slots, K_I32),
    F(ls_delta_params, state_layout, K_LAYOUT), F(ls_delta_params, q_stride_tok, K_I64),
    F(ls_delta_params, k_stride_tok, K_I64), F(ls_delta_params, v_stride_tok, K_I64),
};
static const field ssu_fields[] = {
    F(ls_ssu_params, batch, K_I32), F(ls_ssu_params, tokens, K_I32), F(ls_ssu_params, nheads, K_I32),
    F(ls_ssu_params, head_dim, K_I32), F(ls_ssu_params, dstate, K_I32), F(ls_ssu_params, ngroups, K_I32),
    F(ls_ssu_params, disable_state_update, K_I32), F(ls_ssu_params, state_dtype, K_DTYPE),
    F(ls_ssu_params, x, K_PTR), F(ls_ssu_params, dt, K_PTR), F(ls_ssu_params, Bm, K_PTR), F(ls_ssu_params, Cm, K_PTR),
    F(ls_ssu_params, z, K_PTR), F(ls_ssu_params, A, K_PTR), F(ls_ssu_params, dt_bias, K_PTR),
    F(ls_ssu_params, D, K_PTR), F(ls_ssu_params, y, K_PTR), F(ls_ssu_params, state, K_PTR),
    F(ls_ssu_params, state_stride_slot, K_I64), F(ls_ssu_params, slot_idx, K_PTR), F(ls_ssu_params, inter, K_PTR),
    F(ls_ssu_params, inter_stride_slot, K_I64), F(ls_ssu_params, slots, K_I32),
};
static const field state_fields[] = {
    F(ls_state_params, n_buffers, K_I32), F(ls_state_params, layers, K_I32), F(ls_state_params, slots, K_I32),
    F(ls_state_params, spec_tokens, K_I32), F(ls_state_params, count, K_I32), F(ls_state_params, src, K_PTR),
    F(ls_state_params, dst, K_PTR), F(ls_state_params, step, K_PTR),
};
#undef F
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static PyObject *field_value(const void *s, const field *f)
{
    const char *at = (const char *)s + f->off;
    int32_t i32;
    int64_t i64;
    float f32;
    void *ptr;
    switch (f->k) {
    case K_I32: memcpy(&i32, at, sizeof i32); return PyLong_FromLong(i32);
    case K_I64: memcpy(&i64, at, sizeof i64); return PyLong_FromLongLong(i64);
    case K_F32: memcpy(&f32, at, sizeof f32); return PyFloat_FromDouble(f32);
    case K_DTYPE: { ls_dtype d; memcpy(&d, at, sizeof d); return PyUnicode_FromString(ls_dtype_name(d)); }
    case K_LAYOUT: { ls_state_layout l; memcpy(&l, at, sizeof l); return PyUnicode_FromString(ls_state_layout_name(l)); }
    case K_PTR: memcpy(&ptr, at, sizeof ptr); return PyLong_FromVoidPtr(ptr);
    }
    return NULL;
}

static PyObject *fields_dict(const void *s, const field *fs, size_t n)
{
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        PyObject *v = field_value(s, &fs[i]);
        if (!v || PyDict_SetItemString(d, fs[i].name, v) != 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

/* Adds key -> v to d and drops the reference to v; -1 when v is NULL or the insert fails. */
static int put(PyObject *d, const char *key, PyObject *v)
{
    int rc = v ? PyDict_SetItemString(d, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

/* The fields of op's params struct as a dict (conv_delta: "conv" and "delta" sub-dicts; state
 * ops: "buf", a list of (main, spec, item_bytes)). New reference, NULL with an exception set. */
static PyObject *params_dict(ls_op op, const void *s)
{
    switch (op) {
    case LS_OP_CONV_UPDATE: return fields_dict(s, conv_fields, N_OF(conv_fields));
    case LS_OP_GDN:
    case LS_OP_KDA: return fields_dict(s, delta_fields, N_OF(delta_fields));
    case LS_OP_SSU: return fields_dict(s, ssu_fields, N_OF(ssu_fields));
    case LS_OP_CONV_DELTA: {
        const ls_conv_delta_params *p = s;
        PyObject *d = PyDict_New();
        if (d && (put(d, "kda", PyLong_FromLong(p->kda)) ||
                  put(d, "conv", fields_dict(&p->conv, conv_fields, N_OF(conv_fields))) ||
                  put(d, "delta", fields_dict(&p->delta, delta_fields, N_OF(delta_fields))))) {
            Py_DECREF(d);
            return NULL;
        }
        return d;
    }
    default: {
        const ls_state_params *p = s;
        PyObject *d = fields_dict(s, state_fields, N_OF(state_fields));
        int n = p->n_buffers < 0 ? 0 : p->n_buffers > LS_MAX_BUFFERS ? LS_MAX_BUFFERS : p->n_buffers;
        PyObject *bufs = d ? PyList_New(n) : NULL;
        for (int i = 0; bufs && i < n; i++) {
            PyObject *b = Py_BuildValue("(NNL)", PyLong_FromVoidPtr(p->buf[i].main), PyLong_FromVoidPtr(p->buf[i].spec),
                                        (long long)p->buf[i].item_bytes);
            if (!b) {
                Py_CLEAR(bufs);
                break;
            }
            PyList_SET_ITEM(bufs, i, b);
        }
        if (d && put(d, "buf", bufs)) {
            Py_DECREF(d);
            return NULL;
        }
        return d;
    }
    }
}

static size_t params_size(ls_op op)
{
    switch (op) {
    case LS_OP_CONV_UPDATE: return sizeof(ls_conv_params);
    case LS_OP_GDN:
    case LS_OP_KDA: return sizeof(ls_delta_params);
    case LS_OP_SSU: return sizeof(ls_ssu_params);
    case LS_OP_CONV_DELTA: return sizeof(ls_conv_delta_params);
    default: return sizeof(ls_state_params);
    }
}

static const char *op_name(ls_op op)
{
    static const char *const names[LS_OP_COUNT] = {"conv_update", "gdn", "kda", "ssu", "state_copy",
                                                   "state_accept", "state_zero", "conv_delta"};
    return (unsigned)op < LS_OP_COUNT ? names[op] : "?";
}

static uint64_t fnv1a(const void *b, size_t n)
{
    const unsigned char *c = b;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* The `p` object of a params struct (borrowed from the instance's cache); NULL, exception set. */
static PyObject *params_obj(inst *in, ls_op op, const void *s)
{
    size_t n = params_size(op);
    uint64_t h = fnv1a(s, n);
    for (int i = 0; i < in->n_cache; i++) {
        pentry *e = &in->cache[i];
        if (e->op == (int)op && e->hash == h && memcmp(&e->bytes, s, n) == 0)
            return e->p;
    }
    PyObject *d = params_dict(op, s);
    PyObject *p = d ? PyObject_CallFunction(in->params, "iO", (int)op, d) : NULL;
    Py_XDECREF(d);
    if (!p)
        return NULL;
    pentry *e;
    if (in->n_cache < PCACHE) {
        e = &in->cache[in->n_cache++];
    } else {
        e = &in->cache[in->next_evict];
        in->next_evict = (in->next_evict + 1) % PCACHE;
        Py_DECREF(e->p);
    }
    e->op = (int)op;
    e->hash = h;
    memcpy(&e->bytes, s, n);
    e->p = p;
    return p;
}

/* The knob dict of a tuning (borrowed; the instance keeps the last one). */
static PyObject *tuning_obj(inst *in, const ls_tuning *t)
{
    ls_tuning z;
    if (!t) {
        memset(&z, 0, sizeof z);
        z.n = in->impl.n_knobs;
        t = &z;
    }
    if (in->last_tdict && memcmp(&in->last_t, t, sizeof *t) == 0)
        return in->last_tdict;
    PyObject *idx = PyTuple_New(in->impl.n_knobs);
    for (int i = 0; idx && i < in->impl.n_knobs; i++)
        PyTuple_SET_ITEM(idx, i, PyLong_FromLong(i < t->n ? t->v[i] : 0));
    PyObject *d = idx ? PyObject_CallMethod(in->obj, "tuning", "(O)", idx) : NULL;
    Py_XDECREF(idx);
    if (!d)
        return NULL;
    Py_XDECREF(in->last_tdict);
    in->last_tdict = d;
    in->last_t = *t;
    return d;
}

/* ------------------------------------------------------------------ calls */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void note_call(inst *in, double us)
{
    if (!in->calls && !(in->calls = malloc(sizeof *in->calls * MAX_CALLS)))
        return;
    if (in->n_calls < MAX_CALLS)
        in->calls[in->n_calls++] = us;
    else
        in->calls[in->ring++ % MAX_CALLS] = us;
}

static int op_call(inst *in, ls_op op, const void *params, const ls_tuning *t, ls_stream s)
{
    g_err[0] = 0;
    PyGILState_STATE gs = PyGILState_Ensure();
    int rc = -1;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: ", op_name(op));
    PyObject *p = params_obj(in, op, params);
    PyObject *td = p ? tuning_obj(in, t) : NULL;
    if (!td) {
        py_err(prefix);
        goto out;
    }
    double t0 = now_us();
    PyObject *r = PyObject_CallFunction(in->call, "iOOK", (int)op, p, td, (unsigned long long)(uintptr_t)s);
    double us = now_us() - t0;
    if (!r) {
        py_err(prefix);
        goto out;
    }
    if (r == Py_None) {
        rc = 0;
    } else if (PyLong_Check(r)) {
        int over = 0;
        long v = PyLong_AsLongAndOverflow(r, &over);
        PyErr_Clear();
        rc = over ? -1 : v == 0 ? 0 : v == LS_OP_UNSUPPORTED ? LS_OP_UNSUPPORTED : -1;
        if (over)
            snprintf(g_err, sizeof g_err, "%sreturned an int %s the range of a C long (0/None = ok, 2 = unsupported)",
                     prefix, over > 0 ? "above" : "below");
        else if (rc < 0)
            snprintf(g_err, sizeof g_err, "%sreturned %ld (0/None = ok, 2 = unsupported)", prefix, v);
    } else {
        snprintf(g_err, sizeof g_err, "%sreturned a %s, not an int or None", prefix, Py_TYPE(r)->tp_name);
    }
    Py_DECREF(r);
    if (rc == 0)
        note_call(in, us);
out:
    PyGILState_Release(gs);
    return rc;
}

static int explain_call(inst *in, ls_op op, const void *params, const ls_tuning *t, char *buf, size_t cap)
{
    PyGILState_STATE gs = PyGILState_Ensure();
    int rc = -1;
    PyObject *p = params_obj(in, op, params);
    PyObject *td = p ? tuning_obj(in, t) : NULL;
    PyObject *r = td ? PyObject_CallFunction(in->explain, "iOO", (int)op, p, td) : NULL;
    const char *s = r ? PyUnicode_AsUTF8(r) : NULL;
    if (s) {
        snprintf(buf, cap, "%s", s);
        rc = 0;
    } else {
        PyErr_Clear(); /* an explain that fails leaves the kernel column empty */
    }
    Py_XDECREF(r);
    PyGILState_Release(gs);
    return rc;
}

/* ------------------------------------------------------------------ trampolines */

/* One set of op functions per instance slot I: the ABI's ops carry no impl pointer. */
#define SLOT(I)                                                                                              \
    static int conv_update_##I(const ls_conv_params *p, const ls_tuning *t, ls_stream s)                     \
    { return op_call(&g_inst[I], LS_OP_CONV_UPDATE, p, t, s); }                                               \
    static int gdn_##I(const ls_delta_params *p, const ls_tuning *t, ls_stream s)                            \
    { return op_call(&g_inst[I], LS_OP_GDN, p, t, s); }                                                       \
    static int kda_##I(const ls_delta_params *p, const ls_tuning *t, ls_stream s)                            \
    { return op_call(&g_inst[I], LS_OP_KDA, p, t, s); }                                                       \
    static int ssu_##I(const ls_ssu_params *p, const ls_tuning *t, ls_stream s)                              \
    { return op_call(&g_inst[I], LS_OP_SSU, p, t, s); }                                                       \
    static int state_copy_##I(const ls_state_params *p, const ls_tuning *t, ls_stream s)                     \
    { return op_call(&g_inst[I], LS_OP_STATE_COPY, p, t, s); }                                                \
    static int state_accept_##I(const ls_state_params *p, const ls_tuning *t, ls_stream s)                   \
    { return op_call(&g_inst[I], LS_OP_STATE_ACCEPT, p, t, s); }                                              \
    static int state_zero_##I(const ls_state_params *p, const ls_tuning *t, ls_stream s)                     \
    { return op_call(&g_inst[I], LS_OP_STATE_ZERO, p, t, s); }                                                \
    static int conv_delta_##I(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s)                \
    { return op_call(&g_inst[I], LS_OP_CONV_DELTA, p, t, s); }                                                \
    static int explain_##I(ls_op op, const void *p, const ls_tuning *t, const ls_device_info *d, char *b,     \
                           size_t cap)                                                                        \
    { return explain_call(&g_inst[I], op, p, t, b, cap); }                                                    \
    static void fill_##I(ls_impl *im, const int *has, int explain)                                            \
    {                                                                                                         \
        im->conv_update = has[LS_OP_CONV_UPDATE] ? conv_update_##I : NULL;                                    \
        im->gdn = has[LS_OP_GDN] ? gdn_##I : NULL;                                                            \
        im->kda = has[LS_OP_KDA] ? kda_##I : NULL;                                                            \
        im->ssu = has[LS_OP_SSU] ? ssu_##I : NULL;                                                            \
        im->state_copy = has[LS_OP_STATE_COPY] ? state_copy_##I : NULL;                                       \
        im->state_accept = has[LS_OP_STATE_ACCEPT] ? state_accept_##I : NULL;                                 \
        im->state_zero = has[LS_OP_STATE_ZERO] ? state_zero_##I : NULL;                                       \
        im->conv_delta = has[LS_OP_CONV_DELTA] ? conv_delta_##I : NULL;                                       \
        im->explain = explain ? explain_##I : NULL;                                                           \
    }
SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)
SLOT(4)
SLOT(5)
SLOT(6)
SLOT(7)
SLOT(8)
SLOT(9)
SLOT(10)
SLOT(11)
SLOT(12)
SLOT(13)
SLOT(14)
SLOT(15)
static void (*const fill_slot[LS_PYIMPL_MAX])(ls_impl *, const int *, int) = {
    fill_0, fill_1, fill_2, fill_3, fill_4, fill_5, fill_6, fill_7,
    fill_8, fill_9, fill_10, fill_11, fill_12, fill_13, fill_14, fill_15};
#undef SLOT

/* ------------------------------------------------------------------ instances */

static void calls_reset(const ls_pyimpl *py)
{
    inst *in = (inst *)py; /* pub is the first member */
    in->n_calls = in->ring = 0;
}

static int case_begin(const ls_pyimpl *py)
{
    inst *in = (inst *)py;
    PyGILState_STATE gs = PyGILState_Ensure();
    PyObject *r = PyObject_CallMethod(in->obj, "case_begin", NULL);
    int rc = 0;
    if (!r) {
        py_err("case_begin: ");
        rc = ls_fail("%s", g_err);
    }
    Py_XDECREF(r);
    PyGILState_Release(gs);
    return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double calls_median_us(const ls_pyimpl *py)
{
    inst *in = (inst *)py;
    int n = in->n_calls;
    if (n == 0)
        return NAN;
    qsort(in->calls, (size_t)n, sizeof *in->calls, cmp_dbl); /* the order is not kept: a ring restarts */
    in->ring = 0;
    return n % 2 ? in->calls[n / 2] : 0.5 * (in->calls[n / 2 - 1] + in->calls[n / 2]);
}

/* A str attribute of o, strdup'ed ("" when None); NULL with an exception set. */
static char *attr_str(PyObject *o, const char *name)
{
    PyObject *v = PyObject_GetAttrString(o, name);
    const char *s = v == Py_None ? "" : v ? PyUnicode_AsUTF8(v) : NULL;
    char *r = s ? strdup(s) : NULL;
    Py_XDECREF(v);
    return r;
}

static long attr_long(PyObject *o, const char *name)
{
    PyObject *v = PyObject_GetAttrString(o, name);
    long r = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    return r;
}

/* Reads the Instance's name, version, caps, knobs, ops and extras into slot in. 0, or -1 with
 * g_err set. */
static int describe(inst *in, const ls_pyimpl_spec *spec)
{
    PyObject *o = in->obj;
    char *base = attr_str(o, "name"), *version = attr_str(o, "version");
    char *git = attr_str(o, "source_git"), *hash = attr_str(o, "source_hash");
    long caps = attr_long(o, "caps");
    if (!base || !version || !git || !hash || caps < 0)
        return py_err("python: ");
    if (spec->name) {
        size_t n = strcspn(spec->name, "@");
        if (strlen(base) != n || strncmp(base, spec->name, n) != 0)
            return set_err("python: the module's name is '%s', not '%s'", base, spec->name);
    }
    in->impl.abi_version = spec->impl_abi;
    in->impl.name = spec->name ? strdup(spec->name) : base;
    in->impl.version = version;
    in->impl.runtime = strcmp(spec->runtime, "cuda") == 0 ? "cuda" : "host";
    in->impl.caps = (unsigned)caps;
    in->impl.last_error = last_error;
    in->pub.module_name = base;
    in->pub.source_git = git;
    in->pub.source_hash = hash;
    PyObject *knobs = PyObject_GetAttrString(o, "knobs");
    Py_ssize_t nk = knobs ? PyList_Size(knobs) : -1;
    if (nk < 0 || nk > LS_MAX_KNOBS) {
        Py_XDECREF(knobs);
        if (nk < 0)
            return py_err("python: knobs: ");
        return set_err("python: %s: more than %s knobs", base, "16");
    }
    for (Py_ssize_t i = 0; i < nk; i++) {
        const char *nm, *vals, *help;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(knobs, i), "sss", &nm, &vals, &help)) {
            Py_DECREF(knobs);
            return py_err("python: knob: ");
        }
        in->knobs[i] = (ls_knob_def){strdup(nm), strdup(vals), strdup(help)};
    }
    Py_DECREF(knobs);
    in->impl.knobs = nk ? in->knobs : NULL;
    in->impl.n_knobs = (int32_t)nk;
    PyObject *fns = PyObject_GetAttrString(o, "fns");
    int has[LS_OP_COUNT] = {0};
    for (int i = 0; fns && i < LS_OP_COUNT; i++) {
        has[i] = PyList_GET_ITEM(fns, i) != Py_None;
        PyObject *l = PyObject_CallMethod(o, "layout", "s", op_name((ls_op)i));
        const char *ls = l ? PyUnicode_AsUTF8(l) : NULL;
        in->pub.layout[i] = ls ? strdup(ls) : "";
        Py_XDECREF(l);
        if (!ls) {
            Py_DECREF(fns);
            return py_err("python: layout: ");
        }
    }
    Py_XDECREF(fns);
    PyObject *ex = PyObject_GetAttrString(o, "explain_fn");
    int explain = ex && ex != Py_None;
    Py_XDECREF(ex);
    if (PyErr_Occurred())
        return py_err("python: ");
    fill_slot[in - g_inst](&in->impl, has, explain);
    in->pub.impl = &in->impl;
    in->pub.calls_reset = calls_reset;
    in->pub.calls_median_us = calls_median_us;
    in->pub.case_begin = case_begin;
    return 0;
}

EXPORT const ls_pyimpl *linstate_pyimpl_v1(const ls_pyimpl_spec *spec, char *err, size_t cap)
{
    const ls_pyimpl *r = NULL;
    g_err[0] = 0;
    if (!spec || spec->abi_version != LS_PYIMPL_ABI || spec->impl_abi != LS_IMPL_ABI) {
        snprintf(err, cap, "python: the bridge speaks pyimpl ABI %d / impl ABI %d (rebuild it with this linstate)",
                 LS_PYIMPL_ABI, LS_IMPL_ABI);
        return NULL;
    }
    if (g_n_inst == LS_PYIMPL_MAX) {
        snprintf(err, cap, "python: at most %d Python impl instances per run", LS_PYIMPL_MAX);
        return NULL;
    }
    if (py_start() != 0) {
        snprintf(err, cap, "%s", g_err);
        return NULL;
    }
    PyGILState_STATE gs = PyGILState_Ensure();
    inst *in = &g_inst[g_n_inst];
    memset(in, 0, sizeof *in);
    in->obj = PyObject_CallMethod(g_bridge, "load", "szsi", spec->module, spec->source, spec->runtime,
                                  spec->source_git);
    if (!in->obj) {
        char pre[1200];
        snprintf(pre, sizeof pre, "python: %s: ", spec->module);
        py_err(pre);
    } else if (!(in->call = PyObject_GetAttrString(in->obj, "call")) ||
               !(in->params = PyObject_GetAttrString(in->obj, "params")) ||
               !(in->explain = PyObject_GetAttrString(in->obj, "explain"))) {
        py_err("python: ");
    } else if (describe(in, spec) == 0) {
        g_n_inst++;
        r = &in->pub;
    }
    if (!r)
        snprintf(err, cap, "%s", g_err);
    PyGILState_Release(gs);
    return r;
}
