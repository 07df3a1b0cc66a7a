/*
 * plan.c — registry x axes -> the ordered list of cases, each with its stable key.
 *
 * Order: device, model, tp, (family, op), then the axes table below: pool slots, state dtype, draft
 * tokens T, batch B, graph, variant, impl point (impl x tuning), state layout. Variants and impl points of one case are planned next to each
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

/* What the axes of one (family, op) group are planned over: its rows, the draft tokens it takes,
 * the graph modes of the run, and the sweep's output and counters. */
typedef struct plan_group {
    const bench_opts *o;
    const bench_entry *e;    /* the group's lead row: its rows share axes and draft rule */
    const bench_entry *vars[BENCH_MAX_LIST];
    int n_var;
    int toks[BENCH_MAX_LIST], n_tok;
    int graphs[2], n_graphs;
    int n_points;
    int n_devices;
    bench_plan *out;
    int cap, too_small, first_b, first_s;
} plan_group;

/*
 * The axes of a group's cases, outermost first: their order is the order of the cases (and of the
 * CSV rows). Per axis: how many values it takes for the group (at: the indices of the axes outside
 * it) and what value at[k] sets in the case. Adding an axis: one row here (and its enum value),
 * the option it reads, the case field it sets and, if the value is not always the same, a key
 * part in plan_emit.
 */
enum { AX_SLOTS, AX_DTYPE, AX_TOKENS, AX_BATCH, AX_GRAPH, AX_VARIANT, AX_POINT, AX_LAYOUT, N_AXES };

static int pool_slots_axis(const plan_group *g)
{
    return (g->e->axes & BENCH_AXIS_POOL) && g->o->n_pool_slots;
}
static int n_slots(const plan_group *g, const int *at)
{
    (void)at;
    return pool_slots_axis(g) ? g->o->n_pool_slots : 1;
}
static void set_slots(const plan_group *g, const int *at, bench_case *c)
{
    c->pool_slots = pool_slots_axis(g) ? g->o->pool_slots[at[AX_SLOTS]] : 0; /* 0: the serving default */
}
static int n_dtype(const plan_group *g, const int *at)
{
    (void)at;
    return (g->e->axes & BENCH_AXIS_DTYPE) ? g->o->n_dtypes : 1;
}
static void set_dtype(const plan_group *g, const int *at, bench_case *c)
{
    c->state_dtype = (g->e->axes & BENCH_AXIS_DTYPE) ? g->o->dtypes[at[AX_DTYPE]] : LS_BF16;
}
static int n_tokens(const plan_group *g, const int *at)
{
    (void)at;
    return g->n_tok;
}
static void set_tokens(const plan_group *g, const int *at, bench_case *c)
{
    c->tokens = g->toks[at[AX_TOKENS]];
}
static int n_batch(const plan_group *g, const int *at)
{
    (void)at;
    return (g->e->axes & BENCH_AXIS_BATCH) ? g->o->n_batch : 1;
}
static void set_batch(const plan_group *g, const int *at, bench_case *c)
{
    c->batch = (g->e->axes & BENCH_AXIS_BATCH) ? g->o->batch[at[AX_BATCH]] : 1;
}
/* Without the graph axis (pool alloc, free, fork) only eager timing exists. */
static int n_graph(const plan_group *g, const int *at)
{
    (void)at;
    return (g->e->axes & BENCH_AXIS_GRAPH) ? g->n_graphs : (g->graphs[0] == 0);
}
static void set_graph(const plan_group *g, const int *at, bench_case *c)
{
    c->graph = g->graphs[at[AX_GRAPH]];
}
static int n_variant(const plan_group *g, const int *at)
{
    (void)at;
    return g->n_var;
}
static void set_variant(const plan_group *g, const int *at, bench_case *c)
{
    c->e = g->vars[at[AX_VARIANT]];
}
static int n_point(const plan_group *g, const int *at)
{
    (void)at;
    return g->n_points;
}
static void set_point(const plan_group *g, const int *at, bench_case *c)
{
    c->pt = g->o->n_points ? &g->o->points[at[AX_POINT]] : NULL;
}
static int n_layout(const plan_group *g, const int *at)
{
    return layouts_for(g->o, g->e, at[AX_POINT], NULL);
}
static void set_layout(const plan_group *g, const int *at, bench_case *c)
{
    ls_state_layout lays[2];
    layouts_for(g->o, g->e, at[AX_POINT], lays);
    c->layout = lays[at[AX_LAYOUT]];
    c->has_layout = (g->e->ops & BENCH_DELTA_OPS) != 0;
}

static const struct {
    int (*count)(const plan_group *g, const int *at);
    void (*set)(const plan_group *g, const int *at, bench_case *c);
} axes[N_AXES] = {
    [AX_SLOTS] = {n_slots, set_slots},       [AX_DTYPE] = {n_dtype, set_dtype},
    [AX_TOKENS] = {n_tokens, set_tokens},    [AX_BATCH] = {n_batch, set_batch},
    [AX_GRAPH] = {n_graph, set_graph},       [AX_VARIANT] = {n_variant, set_variant},
    [AX_POINT] = {n_point, set_point},       [AX_LAYOUT] = {n_layout, set_layout},
};

/* One point of the axes: the case's key and name, unless --quick, the pool's size or the filter
 * drop it. 0, or 1 when out of host memory (said). */
static int plan_emit(plan_group *g, const bench_case *tmpl)
{
    bench_case c = *tmpl;
    if (!bench_quick_selects(g->o, c.e, c.model, c.batch, c.graph))
        return 0;
    if (c.pool_slots && c.pool_slots < c.batch) {
        if (!g->too_small++) /* a batch needs B distinct slots */
            g->first_b = c.batch, g->first_s = c.pool_slots;
        return 0;
    }
    bench_case_key(g->e, c.model->name, c.tp, c.batch, c.tokens, c.state_dtype, c.graph, c.key, sizeof c.key);
    if (c.pool_slots) /* explicit capacity: part of the key */
        snprintf(c.key + strlen(c.key), sizeof c.key - strlen(c.key), "/S:%d", (int)c.pool_slots);
    case_name(&c, g->n_devices);
    char full[sizeof c.name + 64];
    bench_gb_full_name(&c, g->o->repetitions, full, sizeof full);
    if (bench_filter_match(g->o->filter, full) != 1)
        return 0;
    if (push_case(g->out, &g->cap, &c) != 0) {
        fprintf(stderr, "linstate-bench: out of host memory planning cases\n");
        return 1;
    }
    return 0;
}

/* The product of axes k.. (outer indices in at, their values already set in c). */
static int plan_axes(plan_group *g, int k, int *at, bench_case *c)
{
    if (k == N_AXES)
        return plan_emit(g, c);
    int n = axes[k].count(g, at);
    for (at[k] = 0; at[k] < n; at[k]++) {
        axes[k].set(g, at, c);
        if (plan_axes(g, k + 1, at, c) != 0)
            return 1;
    }
    return 0;
}

/*
 * The character after a backslash that POSIX leaves undefined in an extended regex (outside a
 * bracket expression only ^$\.*+?()[]{}| may be escaped), or 0. glibc reads "\w" as a word
 * character, GB's std::regex (built strict) refuses it and runs nothing: such a filter is refused
 * here, before anything runs (main.c still checks that GB ran what the plan holds).
 */
static char odd_escape(const char *re)
{
    int in_bracket = 0;
    for (const char *p = re; p && *p; p++) {
        if (in_bracket) {
            if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) { /* [:alpha:] and kin */
                const char *end = strstr(p + 2, (char[]){p[1], ']', '\0'});
                if (end)
                    p = end + 1;
            } else if (*p == ']') {
                in_bracket = 0;
            }
        } else if (*p == '[') {
            in_bracket = 1;
            if (p[1] == '^')
                p++;
            if (p[1] == ']') /* a leading ']' is a member */
                p++;
        } else if (*p == '\\') {
            if (!p[1] || !strchr("^$\\.*+?()[]{}|", p[1]))
                return p[1] ? p[1] : '\\';
            p++;
        }
    }
    return 0;
}

int bench_plan_build(const bench_opts *o, const int *devices, int n_devices, bench_plan *out)
{
    int rc = check_models(o);
    out->cases = NULL;
    out->n = 0;
    if (rc)
        return rc;
    char esc = 0;
    if (bench_filter_match(o->filter, "") < 0 || (esc = odd_escape(o->filter)) != 0) {
        if (esc)
            fprintf(stderr, "linstate-bench: bad --benchmark_filter regex '%s' ('\\%c': POSIX extended regexes "
                            "escape only ^$\\.*+?()[]{}|)\n", o->filter, esc);
        else
            fprintf(stderr, "linstate-bench: bad --benchmark_filter regex '%s'\n", o->filter);
        return 2;
    }
    plan_group g = {.o = o, .out = out, .n_devices = n_devices};
    g.n_points = o->n_points ? o->n_points : 1; /* 0: tests that plan without impls */
    if (o->graph != BENCH_GRAPH_ON)
        g.graphs[g.n_graphs++] = 0;
    if (o->graph != BENCH_GRAPH_OFF)
        g.graphs[g.n_graphs++] = 1;

    for (int d = 0; d < n_devices; d++)
        for (int mi = 0; mi < o->n_models; mi++) {
            const ls_model *m = ls_model_find(o->models[mi]);
            for (int ti = 0; ti < o->n_tp; ti++)
                for (int ei = 0; ei < bench_registry_count(); ei++) {
                    if ((g.n_var = group_rows(o, m, ei, g.vars)) == 0)
                        continue;
                    g.e = g.vars[0];
                    g.n_tok = tokens_for(o, g.e, g.toks);
                    bench_case c;
                    memset(&c, 0, sizeof c);
                    c.model = m;
                    c.tp = o->tp[ti];
                    ls_shape_from_model(m, c.tp, &c.shape);
                    c.device = devices[d];
                    int at[N_AXES];
                    if (plan_axes(&g, 0, at, &c) != 0) {
                        bench_plan_free(out);
                        return 1;
                    }
                }
        }
    if (g.too_small && !o->worker) /* said once for the run (by the parent), not per case */
        fprintf(stderr, "linstate-bench: --pool-slots: %d case(s) not planned, their batch over the pool's slots "
                        "(a batch takes B distinct slots; e.g. B:%d with S:%d)\n", g.too_small, g.first_b, g.first_s);
    return 0;
}

void bench_plan_free(bench_plan *p)
{
    free(p->cases);
    p->cases = NULL;
    p->n = 0;
}
