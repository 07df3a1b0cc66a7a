/*
 * impls.c — the impl and tuning axes: loads --impl-path plugins (a .py module or package: a Python
 * impl, kernels/pyimpl.c), resolves --impl names (NAME@SRC: an instance of a Python impl on a
 * source) on the run's runtime, and crosses them with the --tune points into bench_opts.points.
 *
 * A --tune point is a comma list of items "knob=value" or "impl:knob=value". An unprefixed item
 * applies to every selected impl that declares the knob; a prefixed one to that impl only. Each
 * item must be taken by at least one selected impl (a typo is an error, never a silent default),
 * and points that give one impl the same effective tuning are an error too (they would be
 * measured twice under one join key).
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "ls_pyimpl.h"

static int fail2(const char *what)
{
    fprintf(stderr, "linstate-bench: %s\n", what);
    return 2;
}

/* Applies the items of `spec` that concern impl im to *t; *taken[i] |= 1 for item i it took.
 * 0, or 2 after printing the error (a bad value for a knob im declares). */
static int apply_point(const ls_impl *im, const char *spec, ls_tuning *t, int *taken, int *n_items)
{
    char buf[1024];
    int given[LS_MAX_KNOBS] = {0}; /* knobs of im this point set: one value each */
    if (strlen(spec) >= sizeof buf)
        return fail2("--tune: value too long");
    snprintf(buf, sizeof buf, "%s", spec);
    int i = 0;
    if (strstr(spec, ",,") || spec[0] == ',' || (*spec && spec[strlen(spec) - 1] == ','))
        return fail2("--tune: empty item in the list");
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save), i++) {
        if (i == 64)
            return fail2("--tune: at most 64 items per point");
        char *colon = strchr(item, ':'), *eq = strchr(item, '=');
        const char *body = item;
        if (colon && (!eq || colon < eq)) {
            *colon = 0;
            if (!ls_impl_get(item)) {
                fprintf(stderr, "linstate-bench: --tune %s: %s\n", spec, ls_last_error());
                return 2;
            }
            if (strcmp(item, im->name) != 0)
                continue;
            body = colon + 1;
        } else if (eq) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - item), item);
            if (ls_knob_index(im, name) < 0)
                continue;
        }
        ls_clear_error();
        if (ls_tuning_parse(im, body, t) != 0) {
            fprintf(stderr, "linstate-bench: --tune %s: %s\n", spec, ls_last_error());
            return 2;
        }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(body, "="), body);
        int k = ls_knob_index(im, name);
        if (k >= 0 && k < LS_MAX_KNOBS && given[k]++) {
            fprintf(stderr, "linstate-bench: --tune %s: knob '%s' of impl %s given twice in one point\n", spec, name,
                    im->name);
            return 2;
        }
        taken[i] = 1;
    }
    *n_items = i;
    return 0;
}

int bench_impl_points_resolve(bench_opts *o, const ls_runtime *rt)
{
    char msg[512];
    const ls_impl *plugins[BENCH_MAX_LIST];
    for (int i = 0; i < o->n_impl_paths; i++) {
        ls_clear_error();
        plugins[i] = ls_pyimpl_is_module_path(o->impl_paths[i]) ? ls_pyimpl_load_file(o->impl_paths[i], rt->name)
                                                               : ls_impl_load(o->impl_paths[i]);
        if (!plugins[i]) {
            snprintf(msg, sizeof msg, "--impl-path: %s", ls_last_error());
            return fail2(msg);
        }
    }
    const ls_impl *impls[BENCH_MAX_LIST];
    int n_impls = 0;
    if (o->n_impls == 0) {
        ls_clear_error();
        const ls_impl *def = ls_impl_default(rt);
        if (!def) {
            snprintf(msg, sizeof msg, "runtime %s: %s", rt->name, ls_last_error());
            return fail2(msg);
        }
        impls[n_impls++] = def;
        for (int i = 0; i < o->n_impl_paths; i++) { /* plugins named only by --impl-path join */
            int dup = 0;
            for (int j = 0; j < n_impls; j++)
                dup |= impls[j] == plugins[i];
            if (!dup && n_impls < BENCH_MAX_LIST)
                impls[n_impls++] = plugins[i];
        }
    } else {
        for (int i = 0; i < o->n_impls; i++) {
            ls_clear_error();
            const ls_impl *im = ls_pyimpl_is_spec(o->impls[i]) ? ls_pyimpl_get(o->impls[i], rt->name)
                                                               : ls_impl_get(o->impls[i]);
            if (!im) {
                snprintf(msg, sizeof msg, "--impl %s: %s", o->impls[i], ls_last_error());
                return fail2(msg);
            }
            impls[n_impls++] = im;
        }
    }
    for (int i = 0; i < n_impls; i++)
        if (strcmp(impls[i]->runtime, rt->name) != 0) {
            snprintf(msg, sizeof msg,
                     "--impl %s: it runs on runtime %s, this run's runtime is %s (--backend %s)",
                     impls[i]->name, impls[i]->runtime, rt->name, impls[i]->runtime);
            return fail2(msg);
        }
    const ls_impl *def = ls_impl_default(rt);
    int taken[BENCH_MAX_LIST][64];
    memset(taken, 0, sizeof taken);
    int n_items[BENCH_MAX_LIST] = {0};
    o->n_points = 0;
    for (int i = 0; i < n_impls; i++) {
        int n_tunes = o->n_tunes ? o->n_tunes : 1;
        for (int k = 0; k < n_tunes; k++) {
            bench_impl_point pt;
            memset(&pt, 0, sizeof pt);
            pt.impl = impls[i];
            ls_tuning_default(pt.impl, &pt.tuning);
            if (o->n_tunes) {
                int rc = apply_point(pt.impl, o->tunes[k], &pt.tuning, taken[k], &n_items[k]);
                if (rc)
                    return rc;
            }
            if (ls_tuning_string(pt.impl, &pt.tuning, pt.tune, sizeof pt.tune) < 0)
                return fail2("--tune: tuning string too long");
            ls_tuning zero;
            ls_tuning_default(pt.impl, &zero);
            pt.default_impl = pt.impl == def;
            pt.default_tune = memcmp(zero.v, pt.tuning.v, sizeof zero.v) == 0;
            int dup = 0;
            for (int j = 0; j < o->n_points; j++)
                dup |= o->points[j].impl == pt.impl && strcmp(o->points[j].tune, pt.tune) == 0;
            if (dup) {
                /* Two points, one effective tuning: fine for an impl the point does not concern
                 * (e.g. host under --tune pdl=on --tune pdl=off), an error when every selected
                 * impl sees them equal (checked below). */
                continue;
            }
            if (o->n_points == BENCH_MAX_POINTS)
                return fail2("--impl x --tune: too many points");
            o->points[o->n_points++] = pt;
        }
    }
    for (int k = 0; k < o->n_tunes; k++) {
        if (n_items[k] == 0) {
            snprintf(msg, sizeof msg, "--tune '%s': no knob=value item", o->tunes[k]);
            return fail2(msg);
        }
        for (int it = 0; it < n_items[k]; it++) {
            if (taken[k][it])
                continue;
            const char *p = o->tunes[k];
            for (int s = 0; s < it; s++)
                p = strchr(p, ',') + 1;
            snprintf(msg, sizeof msg, "--tune %s: no selected impl has a knob for '%.*s' (--list --explain lists them)",
                     o->tunes[k], (int)strcspn(p, ","), p);
            return fail2(msg);
        }
    }
    /* Points that collapse to one tuning for every impl (e.g. "--tune pdl=on" given twice). */
    for (int a = 0; a < o->n_tunes; a++)
        for (int b = a + 1; b < o->n_tunes; b++)
            if (strcmp(o->tunes[a], o->tunes[b]) == 0) {
                snprintf(msg, sizeof msg, "--tune %s: given twice", o->tunes[a]);
                return fail2(msg);
            }
    return 0;
}

void bench_impl_row(const ls_impl *im, unsigned ops, ls_row *row)
{
    const ls_pyimpl *py = ls_pyimpl_of(im);
    if (!py)
        return;
    snprintf(row->impl_source, sizeof row->impl_source, "%s", ls_pyimpl_source(im));
    snprintf(row->impl_source_git, sizeof row->impl_source_git, "%s", py->source_git);
    snprintf(row->impl_source_hash, sizeof row->impl_source_hash, "%s", py->source_hash);
    /* One op: its note; several (conv_delta back to back): "op: note" joined by "; ". */
    size_t len = 0;
    int several = (ops & (ops - 1)) != 0;
    row->impl_layout[0] = 0;
    for (int op = 0; op < LS_OP_COUNT && len < sizeof row->impl_layout; op++)
        if ((ops & BENCH_OP(op)) && py->layout[op][0])
            len += (size_t)snprintf(row->impl_layout + len, sizeof row->impl_layout - len, several ? "%s%s: %s" : "%s%.0s%s",
                                    len ? "; " : "", ls_op_name((ls_op)op), py->layout[op]);
}
