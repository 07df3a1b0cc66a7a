/*
 * plan.c — registry x axes -> the ordered list of cases, each with its stable key.
 *
 * Order: device, model, tp, (family, op), state dtype, draft tokens T, batch B, graph, variant,
 * impl point (impl x tuning). Variants and impl points of one case are planned next to each
 * other (innermost), so a comparison of two of them in one run sees the same machine state, not
 * the two ends of a sweep. A row is
 * planned for a model only when it applies to the model's mechanism (conv and pool paths apply
 * to all; gdn to GDN presets; kda to KDA; mamba2_ssu to Mamba2), and only when --variant selects
 * it (default: the (family, op)'s default row for that mechanism). Axes a row does not vary over
 * take one neutral value: T = 1 (BENCH_DRAFT_NONE) and, without the dtype axis, the conv dtype.
 * --family and --benchmark_filter (Google Benchmark syntax, applied to the case's GB name) prune
 * the list, so --list shows exactly the cases a run would measure. Rows without the graph axis
 * (pool alloc, free, fork: host bookkeeping cannot be captured) are planned only for eager timing.
 * --quick keeps only the cases of the kernels.md table (bench_quick_selects).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/*
 * Key grammar (results/README.md), never renamed:
 *   <family>/<op>/<model>/tp<tp>/B:<batch>/T:<tokens>/<dtype>[/graph]
 * e.g. gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32. The "/graph" suffix marks CUDA-graph
 * replay timing, which measures something else than plain launches.
 */
void bench_case_key(const bench_entry *e, const char *model, int tp, int batch, int tokens,
                    ls_dtype dt, int graph, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s/%s/tp%d/B:%d/T:%d/%s%s", e->family, e->op, model, tp, batch, tokens,
             ls_dtype_name(dt), graph ? "/graph" : "");
}

/* GB's filter: a regex searched in the name; "-regex" keeps names that do NOT match. */
int bench_filter_match(const char *filter, const char *name)
{
    if (!filter || !*filter || strcmp(filter, "all") == 0)
        return 1;
    int negate = filter[0] == '-';
    const char *re_text = negate ? filter + 1 : filter;
    regex_t re;
    if (regcomp(&re, re_text, REG_EXTENDED | REG_NOSUB) != 0)
        return -1;
    int hit = regexec(&re, name, 0, NULL, 0) == 0;
    regfree(&re);
    return negate ? !hit : hit;
}

/*
 * The name Google Benchmark matches --benchmark_filter against: the registered name plus the
 * suffixes GB derives from the run options (runner.c registers 1 iteration, manual time, and
 * --repetitions when given), e.g. ".../fp32/iterations:1/manual_time". Filtering the plan with
 * the same string keeps --list, the [i/N] progress and GB's own selection identical.
 */
void bench_gb_full_name(const bench_case *c, int repetitions, char *buf, size_t cap)
{
    char reps[32] = "";
    if (repetitions > 0)
        snprintf(reps, sizeof reps, "/repeats:%d", repetitions);
    snprintf(buf, cap, "%s/iterations:1%s/manual_time", c->name, reps);
}

/*
 * The rows of results/h200/kernels.md's summary table, as (family/op, model): what --quick runs
 * (with --draft 1,4: decode at T = 1, verify and accept at T = 4). Conv and pool apply to every
 * mechanism but the table has them on qwen3-next only; KDA has no verify row.
 */
static const struct {
    const char *op, *model;
} quick_table[] = {
    {"gdn/decode", "qwen3-next-80b-a3b"},       {"gdn/verify", "qwen3-next-80b-a3b"},
    {"kda/decode", "kimi-linear-48b-a3b"},      {"mamba2_ssu/decode", "nemotron-h-8b"},
    {"mamba2_ssu/verify", "nemotron-h-8b"},     {"conv1d_update/decode", "qwen3-next-80b-a3b"},
    {"conv1d_update/verify", "qwen3-next-80b-a3b"}, {"pool/copy", "qwen3-next-80b-a3b"},
    {"pool/accept", "qwen3-next-80b-a3b"},
};

int bench_quick_rank(const bench_entry *e)
{
    int n = (int)(sizeof quick_table / sizeof quick_table[0]);
    for (int i = 0; i < n; i++)
        if (bench_entry_matches(e, quick_table[i].op))
            return i;
    return n;
}

int bench_quick_selects(const bench_opts *o, const bench_entry *e, const ls_model *m, int batch, int graph)
{
    if (!o->quick)
        return 1;
    if (o->quick_graph_b1 && graph && batch != 1)
        return 0;
    if (!o->quick_ops)
        return 1;
    for (size_t i = 0; i < sizeof quick_table / sizeof quick_table[0]; i++)
        if (bench_entry_matches(e, quick_table[i].op) && (!o->quick_pairs || strcmp(m->name, quick_table[i].model) == 0))
            return 1;
    return 0;
}

/* --variant: every row (all), the named variants, or (not given) each (family, op)'s default. */
static int selected_variant(const bench_opts *o, const bench_entry *e)
{
    if (o->variants_all)
        return 1;
    if (o->n_variants == 0)
        return e->is_default;
    for (int i = 0; i < o->n_variants; i++)
        if (strcmp(o->variants[i], e->variant) == 0)
            return 1;
    return 0;
}

static int applies(const bench_entry *e, const ls_model *m)
{
    return (e->mechanisms & BENCH_MECH_BIT(m->mechanism)) != 0;
}

static int selected_by_family(const bench_opts *o, const bench_entry *e)
{
    if (o->n_families == 0)
        return 1;
    for (int i = 0; i < o->n_families; i++)
        if (bench_entry_matches(e, o->families[i]))
            return 1;
    return 0;
}

/* Draft-token values row e takes from the --draft list; returns the count written to out. */
static int tokens_for(const bench_opts *o, const bench_entry *e, int *out)
{
    int n = 0;
    if (e->draft == BENCH_DRAFT_NONE) {
        out[0] = 1;
        return 1;
    }
    /* decode rows (no draft axis) still follow the rule: planned when 1 is in the list */
    for (int i = 0; i < o->n_draft; i++) {
        int t = o->draft[i];
        if ((e->draft == BENCH_DRAFT_DECODE && t == 1) || (e->draft == BENCH_DRAFT_VERIFY && t >= 2))
            out[n++] = t;
    }
    return n;
}

/* Appends one case; grows the array geometrically. 0 or -1 (out of host memory). */
static int push_case(bench_plan *p, int *cap, const bench_case *c)
{
    if (p->n == *cap) {
        int ncap = *cap ? *cap * 2 : 256;
        bench_case *nc = realloc(p->cases, (size_t)ncap * sizeof *nc);
        if (!nc)
            return -1;
        p->cases = nc;
        *cap = ncap;
    }
    p->cases[p->n] = *c;
    p->cases[p->n].index = p->n;
    p->n++;
    return 0;
}

/*
 * The variant rows of the (family, op) group that registry row `first` leads for model m, in
 * registry order, filtered by --family and --variant. Returns the count (0: `first` is not the
 * group's first row applying to m, or nothing of the group is selected).
 */
static int group_rows(const bench_opts *o, const ls_model *m, int first, const bench_entry **out)
{
    const bench_entry *lead = bench_registry_at(first);
    if (!applies(lead, m) || !selected_by_family(o, lead))
        return 0;
    for (int j = 0; j < first; j++)
        if (bench_entry_same_op(bench_registry_at(j), lead) && applies(bench_registry_at(j), m))
            return 0; /* planned with an earlier row of the group */
    int n = 0;
    for (int j = first; j < bench_registry_count() && n < BENCH_MAX_LIST; j++) {
        const bench_entry *e = bench_registry_at(j);
        if (bench_entry_same_op(e, lead) && applies(e, m) && selected_variant(o, e))
            out[n++] = e;
    }
    return n;
}

/* Fills the case's GB name: key [+ "/dev:<i>" with several devices] [+ "/variant:<v>"]
 * [+ "/impl:<name>" off the runtime's default impl] [+ "/tune:<knobs>" off the default tuning]. */
static void case_name(bench_case *c, int n_devices)
{
    char dev[24] = "", var[96] = "", impl[80] = "", tune[BENCH_TUNE_MAX + 8] = "";
    if (n_devices > 1)
        snprintf(dev, sizeof dev, "/dev:%d", c->device);
    if (!c->e->is_default)
        snprintf(var, sizeof var, "/variant:%s", c->e->variant);
    if (c->pt && !c->pt->default_impl)
        snprintf(impl, sizeof impl, "/impl:%s", c->pt->impl->name);
    if (c->pt && !c->pt->default_tune)
        snprintf(tune, sizeof tune, "/tune:%s", c->pt->tune);
    if (c->has_layout && c->layout != LS_STATE_KV) /* kv, the original layout, keeps the old names */
        snprintf(tune + strlen(tune), sizeof tune - strlen(tune), "/layout:%s", ls_state_layout_name(c->layout));
    snprintf(c->name, sizeof c->name, "%s%s%s%s%s", c->key, dev, var, impl, tune);
}

/*
 * The delta-rule state layouts a case of entry e is planned with for impl point pi: --state-layout's
 * list, or (native, the default) the impl's own layout, kv when it takes kv. Entries without a
 * delta-rule op: one (kv). Writes them into out (when non-NULL) and returns the count.
 */
static int layouts_for(const bench_opts *o, const bench_entry *e, int pi, ls_state_layout *out)
{
    ls_state_layout tmp[2];
    if (!out)
        out = tmp;
    if (!(e->ops & BENCH_DELTA_OPS)) {
        out[0] = LS_STATE_KV;
        return 1;
    }
    if (o->n_layouts > 0) {
        for (int i = 0; i < o->n_layouts; i++)
            out[i] = o->layouts[i];
        return o->n_layouts;
    }
    const ls_impl *im = o->n_points ? o->points[pi].impl : NULL;
    out[0] = (!im || (im->caps & LS_IMPL_KV) || !(im->caps & LS_IMPL_VK)) ? LS_STATE_KV : LS_STATE_VK;
    return 1;
}

/* Validates every (model, tp) up front so a bad value fails before anything runs. */
static int check_models(const bench_opts *o)
{
    for (int i = 0; i < o->n_models; i++) {
        const ls_model *m = ls_model_find(o->models[i]);
        if (!m) {
            fprintf(stderr, "linstate-bench: unknown preset '%s' (--model; known:", o->models[i]);
            for (int k = 0; k < ls_model_count(); k++)
                fprintf(stderr, "%s %s", k ? "," : "", ls_model_at(k)->name);
            fprintf(stderr, ")\n");
            return 2;
        }
        for (int t = 0; t < o->n_tp; t++) {
            ls_shape sh;
            ls_clear_error();
            if (ls_shape_from_model(m, o->tp[t], &sh) != 0) {
                fprintf(stderr, "linstate-bench: --tp %d does not fit %s: %s\n", o->tp[t], m->name,
                        ls_last_error());
                return 2;
            }
        }
    }
    return 0;
}

int bench_plan_build(const bench_opts *o, const int *devices, int n_devices, bench_plan *out)
{
    int cap = 0, rc = check_models(o), too_small = 0, first_b = 0, first_s = 0;
    out->cases = NULL;
    out->n = 0;
    if (rc)
        return rc;
    if (bench_filter_match(o->filter, "") < 0) {
        fprintf(stderr, "linstate-bench: bad --benchmark_filter regex '%s'\n", o->filter);
        return 2;
    }
    int n_points = o->n_points ? o->n_points : 1; /* 0: tests that plan without impls */
    int graphs[2], n_graphs = 0;
    if (o->graph != BENCH_GRAPH_ON)
        graphs[n_graphs++] = 0;
    if (o->graph != BENCH_GRAPH_OFF)
        graphs[n_graphs++] = 1;

    for (int d = 0; d < n_devices; d++)
        for (int mi = 0; mi < o->n_models; mi++) {
            const ls_model *m = ls_model_find(o->models[mi]);
            for (int ti = 0; ti < o->n_tp; ti++)
                for (int ei = 0; ei < bench_registry_count(); ei++) {
                    const bench_entry *vars[BENCH_MAX_LIST];
                    int n_var = group_rows(o, m, ei, vars);
                    if (n_var == 0)
                        continue;
                    const bench_entry *e = vars[0]; /* the group's rows share axes and draft rule */
                    int toks[BENCH_MAX_LIST], n_tok = tokens_for(o, e, toks);
                    int n_dt = (e->axes & BENCH_AXIS_DTYPE) ? o->n_dtypes : 1;
                    int n_b = (e->axes & BENCH_AXIS_BATCH) ? o->n_batch : 1;
                    /* Without the graph axis (pool alloc, free, fork) only eager timing exists. */
                    int n_g = (e->axes & BENCH_AXIS_GRAPH) ? n_graphs : (graphs[0] == 0);
                    int n_s = (e->axes & BENCH_AXIS_POOL) && o->n_pool_slots ? o->n_pool_slots : 1;
                    for (int si = 0; si < n_s; si++)
                    for (int di = 0; di < n_dt; di++)
                        for (int k = 0; k < n_tok; k++)
                            for (int bi = 0; bi < n_b; bi++)
                                for (int g = 0; g < n_g; g++)
                                    for (int v = 0; v < n_var; v++)
                                    for (int pi = 0; pi < n_points; pi++)
                                    for (int li = 0; li < layouts_for(o, e, pi, NULL); li++) {
                                        bench_case c;
                                        memset(&c, 0, sizeof c);
                                        c.e = vars[v];
                                        c.model = m;
                                        c.tp = o->tp[ti];
                                        ls_shape_from_model(m, c.tp, &c.shape);
                                        c.batch = (e->axes & BENCH_AXIS_BATCH) ? o->batch[bi] : 1;
                                        c.tokens = toks[k];
                                        c.state_dtype = (e->axes & BENCH_AXIS_DTYPE) ? o->dtypes[di] : LS_BF16;
                                        c.graph = graphs[g];
                                        c.device = devices[d];
                                        c.pt = o->n_points ? &o->points[pi] : NULL;
                                        ls_state_layout lays[2];
                                        layouts_for(o, e, pi, lays);
                                        c.layout = lays[li];
                                        c.has_layout = (e->ops & BENCH_DELTA_OPS) != 0;
                                        c.pool_slots = (e->axes & BENCH_AXIS_POOL) && o->n_pool_slots
                                                           ? o->pool_slots[si] : 0;
                                        if (!bench_quick_selects(o, c.e, m, c.batch, c.graph))
                                            continue;
                                        if (c.pool_slots && c.pool_slots < c.batch) {
                                            if (!too_small++) /* a batch needs B distinct slots */
                                                first_b = c.batch, first_s = c.pool_slots;
                                            continue;
                                        }
                                        bench_case_key(e, m->name, c.tp, c.batch, c.tokens, c.state_dtype,
                                                       c.graph, c.key, sizeof c.key);
                                        if (c.pool_slots) /* explicit capacity: part of the key */
                                            snprintf(c.key + strlen(c.key), sizeof c.key - strlen(c.key),
                                                     "/S:%d", (int)c.pool_slots);
                                        case_name(&c, n_devices);
                                        char full[sizeof c.name + 64];
                                        bench_gb_full_name(&c, o->repetitions, full, sizeof full);
                                        if (bench_filter_match(o->filter, full) != 1)
                                            continue;
                                        if (push_case(out, &cap, &c) != 0) {
                                            fprintf(stderr, "linstate-bench: out of host memory planning cases\n");
                                            bench_plan_free(out);
                                            return 1;
                                        }
                                    }
                }
        }
    if (too_small && !o->worker) /* said once for the run (by the parent), not per case */
        fprintf(stderr, "linstate-bench: --pool-slots: %d case(s) not planned, their batch over the pool's slots "
                        "(a batch takes B distinct slots; e.g. B:%d with S:%d)\n", too_small, first_b, first_s);
    return 0;
}

void bench_plan_free(bench_plan *p)
{
    free(p->cases);
    p->cases = NULL;
    p->n = 0;
}
