/* tk.c — host side of the Triton-AOT launcher: building a call by name, ordering and checking
 * it against the compiled variant (tk.h). No CUDA here: unit-tested on any machine. */
#include "tk.h"

#include <stdio.h>
#include <string.h>

void tk_call_init(tk_call *c, const tk_variant *v, unsigned gx, unsigned gy, unsigned gz)
{
    memset(c, 0, sizeof *c);
    c->v = v;
    c->grid[0] = gx;
    c->grid[1] = gy;
    c->grid[2] = gz;
}

static tk_val *slot(tk_call *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->vals[i].name, name) == 0)
            return &c->vals[i];
    if (c->n >= TK_MAX_ARGS)
        return NULL;
    c->vals[c->n].name = name;
    return &c->vals[c->n++];
}

void tk_ptr(tk_call *c, const char *name, const void *p)
{
    tk_val *s = slot(c, name);
    if (s) {
        s->kind = TK_PTR;
        s->u.p = p;
    }
}

void tk_int(tk_call *c, const char *name, long long i)
{
    tk_val *s = slot(c, name);
    if (s) {
        s->kind = TK_I64;
        s->u.i = i;
    }
}

void tk_f32(tk_call *c, const char *name, float f)
{
    tk_val *s = slot(c, name);
    if (s) {
        s->kind = TK_F32;
        s->u.f = f;
    }
}

const tk_val *tk_get(const tk_call *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->vals[i].name, name) == 0)
            return &c->vals[i];
    return NULL;
}

const tk_variant *tk_find(const tk_variant *tab, int n, const char *kernel, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(tab[i].kernel, kernel) == 0 && strcmp(tab[i].key, key) == 0)
            return &tab[i];
    return NULL;
}

const tk_variant *tk_require(const tk_variant *tab, int n, const char *kernel, const char *key,
                             const char *peer, const char *built, char *err, size_t cap)
{
    const tk_variant *v = tk_find(tab, n, kernel, key);
    if (!v)
        snprintf(err, cap, "%s: %s[%s] was not compiled (%s)", peer, kernel, key, built);
    return v;
}

int tk_marshal(const tk_call *c, tk_packed *out, char *err, size_t cap)
{
    const tk_variant *v = c->v;
    memset(out, 0, sizeof *out);
    if (!v) {
        snprintf(err, cap, "tk: no compiled variant");
        return -1;
    }
    if (c->n >= TK_MAX_ARGS || v->n_args > TK_MAX_ARGS) {
        snprintf(err, cap, "%s[%s]: too many arguments", v->kernel, v->key);
        return -1;
    }
    /* values the variant does not take: only a NULL pointer (compiled as None) is fine */
    for (int i = 0; i < c->n; i++) {
        int found = 0;
        for (int j = 0; j < v->n_args && !found; j++)
            found = strcmp(v->args[j].name, c->vals[i].name) == 0;
        if (!found && !(c->vals[i].kind == TK_PTR && c->vals[i].u.p == NULL)) {
            snprintf(err, cap, "%s[%s]: argument %s was compiled as None/constexpr but the call "
                     "gives a value", v->kernel, v->key, c->vals[i].name);
            return -1;
        }
    }
    int n = 0;
    for (int j = 0; j < v->n_args; j++) {
        const tk_arg *a = &v->args[j];
        const tk_val *x = tk_get(c, a->name);
        if (!x) {
            snprintf(err, cap, "%s[%s]: no value for argument %s", v->kernel, v->key, a->name);
            return -1;
        }
        switch (a->kind) {
        case TK_PTR: {
            if (x->kind != TK_PTR) {
                snprintf(err, cap, "%s[%s]: %s is a pointer", v->kernel, v->key, a->name);
                return -1;
            }
            uint64_t p = (uint64_t)(uintptr_t)x->u.p;
            if (a->div16 && p % 16) {
                snprintf(err, cap, "%s[%s]: %s = %#llx is not 16-byte aligned; the kernel was "
                         "compiled assuming it is", v->kernel, v->key, a->name, (unsigned long long)p);
                return -1;
            }
            out->store[n].p = p;
            break;
        }
        case TK_I32:
        case TK_I64:
        case TK_CONST: {
            if (x->kind != TK_I64) {
                snprintf(err, cap, "%s[%s]: %s is an integer", v->kernel, v->key, a->name);
                return -1;
            }
            long long i = x->u.i;
            if (a->kind == TK_CONST) {
                if (i != a->value) {
                    snprintf(err, cap, "%s[%s]: %s = %lld, compiled as constexpr %lld", v->kernel,
                             v->key, a->name, i, a->value);
                    return -1;
                }
                continue; /* not passed */
            }
            if (a->kind == TK_I32 && (i < INT32_MIN || i > INT32_MAX)) {
                snprintf(err, cap, "%s[%s]: %s = %lld does not fit the i32 it was compiled as",
                         v->kernel, v->key, a->name, i);
                return -1;
            }
            if (a->div16 && i % 16) {
                snprintf(err, cap, "%s[%s]: %s = %lld is not a multiple of 16; the kernel was "
                         "compiled assuming it is", v->kernel, v->key, a->name, i);
                return -1;
            }
            if (a->kind == TK_I32)
                out->store[n].i32 = (int32_t)i;
            else
                out->store[n].i64 = i;
            break;
        }
        case TK_F32:
            if (x->kind != TK_F32) {
                snprintf(err, cap, "%s[%s]: %s is a float", v->kernel, v->key, a->name);
                return -1;
            }
            out->store[n].f = x->u.f;
            break;
        default:
            snprintf(err, cap, "%s[%s]: %s has an unknown kind", v->kernel, v->key, a->name);
            return -1;
        }
        out->params[n] = &out->store[n];
        n++;
    }
    out->n = n;
    out->params[n] = &out->scratch[0];
    out->params[n + 1] = &out->scratch[1];
    return 0;
}
