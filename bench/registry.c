/*
 * registry.c — every benchmark of linstate-bench: the families' descriptors, in plan order.
 *
 * A row (bench_entry, in its family's file under bench/families/) is one (family, op): the stable
 * first two components of the case key, the mechanisms it applies to, the axes it varies over,
 * and its callbacks. The plan (plan.c) crosses these rows with the CLI axes; the runner
 * (runner.c) calls the callbacks. To add a benchmark, add a row to its family's descriptor and
 * the callbacks beside it (a new family: its file and one line below). Never rename a family or
 * op: they are part of the case key that before/after comparisons join on.
 *
 * Variants: rows sharing (family, op) are alternative implementations of the same case key (the
 * CSV `variant` column tells them apart; compare.py --variants OLD:NEW compares two of them).
 * Per mechanism, one row of each (family, op) is the default (--variant not given); the others
 * run with --variant NAME or --variant all. Variant names are part of the join key as well:
 * rename one only with a note in results/README.md.
 */
#include <string.h>

#include "families/family.h"

/* The families' descriptors in plan order (the order of the CSV rows). */
static const bench_family *const families[] = {
    &bench_family_conv, &bench_family_delta, &bench_family_conv_delta, &bench_family_ssu, &bench_family_pool,
};
#define N_FAMILIES (int)(sizeof families / sizeof families[0])

int bench_registry_count(void)
{
    int n = 0;
    for (int f = 0; f < N_FAMILIES; f++)
        n += families[f]->n;
    return n;
}

const bench_entry *bench_registry_at(int i)
{
    for (int f = 0; f < N_FAMILIES && i >= 0; i -= families[f]->n, f++)
        if (i < families[f]->n)
            return &families[f]->rows[i];
    return NULL;
}

/* "gdn" selects every gdn op; "pool/alloc" exactly one (family, op) row. */
int bench_entry_matches(const bench_entry *e, const char *name)
{
    size_t fl = strlen(e->family);
    if (strcmp(name, e->family) == 0)
        return 1;
    return strncmp(name, e->family, fl) == 0 && name[fl] == '/' && strcmp(name + fl + 1, e->op) == 0;
}

int bench_entry_same_op(const bench_entry *a, const bench_entry *b)
{
    return strcmp(a->family, b->family) == 0 && strcmp(a->op, b->op) == 0;
}

int bench_registry_has_variant(const char *name)
{
    for (int i = 0; i < bench_registry_count(); i++)
        if (strcmp(bench_registry_at(i)->variant, name) == 0)
            return 1;
    return 0;
}

void bench_registry_families(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < bench_registry_count(); i++) {
        const char *fam = bench_registry_at(i)->family;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(bench_registry_at(j)->family, fam) == 0;
        if (!seen && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", fam);
    }
}

int bench_registry_has_family(const char *name)
{
    for (int i = 0; i < bench_registry_count(); i++)
        if (bench_entry_matches(bench_registry_at(i), name))
            return 1;
    return 0;
}
