/*
 * test_gpu_state_ops.c — the linstate impl's pool state ops (copy, accept, zero; docs/pool.md) against
 * ls_ref_state_* on twin pools built with ls_pool: one on the host backend (the reference works
 * on its buffers), one on the cuda backend.
 *
 * Every preset at tp 2 (fp32 temporal), qwen3-next at tp 1 and tp 8 and kimi at tp 8 with bf16
 * temporal; full layer counts. Per op: every main buffer poisoned (0xFF) on both sides, random
 * bytes written into the items the op reads (and into the destination items, so a skipped or
 * missed row shows), the same bytes uploaded to the device pool; random distinct slots (copy:
 * src and dst disjoint; accept: some rows with step -1). Then every byte of every main buffer is
 * compared: written items equal the reference, all others still poison. One large case puts the
 * speculative buffer past 2^31 bytes (64-bit offsets). LS_GPU_TEST_QUICK=1: tp 8, 2 layers.
 * Before the matrix, the pool's slot operations queued back to back without a sync
 * (slot_ops_queued) against the same calls on the host pool.
 * Built with LS_STATE_OPS_IMPL="name" it runs the same matrix on that impl (a peer plugin found by
 * name: tests/peers test_gpu_peer_sglang_pool), exit 77 when it was not built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

static const ls_runtime *be;
static const ls_impl *im; /* the impl under test: the runtime's default, or LS_STATE_OPS_IMPL */
static ls_tuning tune;

/* The twin pools and their buffer tables. */
typedef struct twin {
    ls_pool *ph, *pd;
    ls_state_params h, d;
    const char *name;
} twin;

/* A pool on runtime rt whose own slot operations use that runtime's default impl. */
static ls_pool *pool_on(const ls_state_desc *desc, int capacity, const ls_runtime *rt)
{
    const ls_impl *own = ls_impl_default(rt);
    ls_tuning own_tune;
    ls_tuning_default(own, &own_tune);
    ls_pool_config cfg = {.capacity = capacity, .pad = LS_PAD_LAST, .zero = LS_ZERO_AT_FREE,
                          .impl = own, .tuning = &own_tune};
    return ls_pool_create(desc, &cfg, rt);
}

static int twin_open(twin *t, const ls_state_desc *desc, int capacity, const char *name)
{
    t->name = name;
    t->ph = pool_on(desc, capacity, ls_runtime_host());
    t->pd = pool_on(desc, capacity, be);
    if (!t->ph || !t->pd) {
        fprintf(stderr, "pool create failed (%s): %s\n", name, ls_last_error());
        return -1;
    }
    ls_pool_state_params(t->ph, &t->h);
    ls_pool_state_params(t->pd, &t->d);
    return 0;
}

static void twin_close(twin *t)
{
    ls_pool_destroy(t->ph);
    ls_pool_destroy(t->pd);
}

static size_t main_bytes(const ls_state_params *p, int b)
{
    return (size_t)p->layers * (size_t)p->slots * (size_t)p->buf[b].item_bytes;
}

static size_t spec_bytes(const ls_state_params *p, int b)
{
    return p->buf[b].spec ? main_bytes(p, b) * (size_t)p->spec_tokens : 0;
}

/* Byte offset of main[l][s] (step < 0) or spec[l][s][step] in buffer b. */
static size_t item_off(const ls_state_params *p, int b, int l, int s, int step)
{
    size_t item = (size_t)p->buf[b].item_bytes, row = (size_t)l * (size_t)p->slots + (size_t)s;
    return step < 0 ? row * item : (row * (size_t)p->spec_tokens + (size_t)step) * item;
}

/* Poison every main (and spec) buffer on both sides. */
static void twin_poison(const twin *t)
{
    for (int b = 0; b < t->h.n_buffers; b++) {
        memset(t->h.buf[b].main, GT_POISON, main_bytes(&t->h, b));
        LS_REQUIRE(be->mem_set(t->d.buf[b].main, GT_POISON, main_bytes(&t->d, b), NULL) == 0);
        if (t->h.buf[b].spec) {
            memset(t->h.buf[b].spec, GT_POISON, spec_bytes(&t->h, b));
            LS_REQUIRE(be->mem_set(t->d.buf[b].spec, GT_POISON, spec_bytes(&t->d, b), NULL) == 0);
        }
    }
    LS_REQUIRE(be->sync(NULL) == 0);
}

/* Random bytes into main[l][s] (step < 0) or spec[l][s][step] of every buffer and layer, on
 * the host, then the same bytes to the device. */
static void twin_fill_slot(const twin *t, uint64_t *seed, int s, int step)
{
    for (int b = 0; b < t->h.n_buffers; b++) {
        if (step >= 0 && !t->h.buf[b].spec)
            continue;
        size_t item = (size_t)t->h.buf[b].item_bytes;
        for (int l = 0; l < t->h.layers; l++) {
            size_t off = item_off(&t->h, b, l, s, step);
            char *hp = (char *)(step < 0 ? t->h.buf[b].main : t->h.buf[b].spec) + off;
            char *dp = (char *)(step < 0 ? t->d.buf[b].main : t->d.buf[b].spec) + off;
            gt_fill_bytes(seed, hp, item);
            LS_REQUIRE(be->copy_h2d(dp, hp, item) == 0);
        }
    }
}

/* Download every main buffer and compare all of its bytes with the reference pool. */
static void twin_compare_main(const twin *t, const char *op)
{
    LS_REQUIRE(be->sync(NULL) == 0);
    for (int b = 0; b < t->h.n_buffers; b++) {
        size_t n = main_bytes(&t->h, b);
        void *got = malloc(n);
        LS_REQUIRE(got != NULL);
        LS_REQUIRE(be->copy_d2h(got, t->d.buf[b].main, n) == 0);
        char what[64];
        snprintf(what, sizeof what, "%s main[%d]", op, b);
        LS_CHECK(gt_compare_bytes(what, got, t->h.buf[b].main, n) == 0);
        free(got);
    }
}

/* Device copies of the index arrays (freed by the caller). */
static int32_t *dev_idx(const int32_t *h, int n)
{
    int32_t *d = (int32_t *)be->mem_alloc((size_t)(n ? n : 1) * sizeof(int32_t));
    LS_REQUIRE(d != NULL);
    if (n)
        LS_REQUIRE(be->copy_h2d(d, h, (size_t)n * sizeof(int32_t)) == 0);
    return d;
}

static void report_rc(const char *op, int rc)
{
    if (rc != 0)
        fprintf(stderr, "  %s failed (%d): %s\n", op, rc, ls_impl_error(im));
    LS_CHECK(rc == 0);
}

/* copy: src/dst disjoint random slots; zero: random dst slots plus random bystander slots. */
static void copy_and_zero(const twin *t, int count, uint64_t *seed)
{
    const int slots = t->h.slots;
    int32_t *perm = (int32_t *)malloc(sizeof(int32_t) * (size_t)slots);
    gt_random_slots(seed, perm, 2 * count, slots, 0.0);
    const int32_t *src = perm, *dst = perm + count;

    twin_poison(t);
    for (int i = 0; i < count; i++) {
        twin_fill_slot(t, seed, src[i], -1);
        if (i % 2) /* half the destinations hold old data, half are poison */
            twin_fill_slot(t, seed, dst[i], -1);
    }
    int32_t *dsrc = dev_idx(src, count), *ddst = dev_idx(dst, count);
    ls_state_params h = t->h, d = t->d;
    h.count = d.count = count;
    h.src = src, h.dst = dst, d.src = dsrc, d.dst = ddst;
    printf("%s: copy %d rows (slot %d -> %d, ...)\n", t->name, count, src[0], dst[0]);
    LS_REQUIRE(ls_ref_state_copy(&h) == 0);
    report_rc("state_copy", im->state_copy(&d, &tune, NULL));
    twin_compare_main(t, "copy");

    /* zero: the copy destinations (now holding data) plus the sources stay as bystanders */
    printf("%s: zero %d rows\n", t->name, count);
    LS_REQUIRE(ls_ref_state_zero(&h) == 0);
    report_rc("state_zero", im->state_zero(&d, &tune, NULL));
    twin_compare_main(t, "zero");

    be->mem_free(dsrc);
    be->mem_free(ddst);
    free(perm);
}

/* accept: dst rows with random steps in 0..T-1, about a fifth of them -1 (skipped). */
static void accept(const twin *t, int count, uint64_t *seed)
{
    const int slots = t->h.slots, T = t->h.spec_tokens;
    int32_t *dst = (int32_t *)malloc(sizeof(int32_t) * (size_t)count);
    int32_t *step = (int32_t *)malloc(sizeof(int32_t) * (size_t)count);
    gt_random_slots(seed, dst, count, slots, 0.0);
    twin_poison(t);
    for (int i = 0; i < count; i++) {
        step[i] = gt_rand_int(seed, 0, T - 1);
        if (count >= 3 && i % 5 == 1)
            step[i] = -1;
        twin_fill_slot(t, seed, dst[i], -1); /* old main content: must change unless skipped */
        for (int j = 0; j < T; j++)          /* every step, so a wrong step is visible */
            if (j == step[i] || j == (step[i] + 1) % T)
                twin_fill_slot(t, seed, dst[i], j);
    }
    int32_t *ddst = dev_idx(dst, count), *dstep = dev_idx(step, count);
    ls_state_params h = t->h, d = t->d;
    h.count = d.count = count;
    h.dst = dst, h.step = step, d.dst = ddst, d.step = dstep;
    printf("%s: accept %d rows (slot %d step %d, ...)\n", t->name, count, dst[0], step[0]);
    LS_REQUIRE(ls_ref_state_accept(&h) == 0);
    report_rc("state_accept", im->state_accept(&d, &tune, NULL));
    twin_compare_main(t, "accept");
    be->mem_free(ddst);
    be->mem_free(dstep);
    free(dst);
    free(step);
}

/* One preset configuration: a pool without spec (copy/zero of `count` rows, then of 1 row) and
 * one with T = 4 (accept of acc_count rows). */
static void preset(const char *model, int tp, ls_dtype tdt, int layers, int count, int acc_count, uint64_t *seed)
{
    ls_shape sh;
    ls_state_desc desc;
    LS_REQUIRE(ls_shape_from_model(ls_model_find(model), tp, &sh) == 0);
    LS_REQUIRE(ls_state_desc_from_shape(&sh, tdt, 0, &desc) == 0);
    if (layers > 0)
        desc.layers = layers;
    char name[128];
    snprintf(name, sizeof name, "%s/tp%d/%s/L%d", model, tp, ls_dtype_name(tdt), desc.layers);
    twin t;
    LS_REQUIRE(twin_open(&t, &desc, 2 * count + 1, name) == 0);
    copy_and_zero(&t, count, seed);
    copy_and_zero(&t, 1, seed);
    twin_close(&t);

    desc.spec_tokens = 4;
    LS_REQUIRE(twin_open(&t, &desc, acc_count + 1, name) == 0);
    accept(&t, acc_count, seed);
    twin_close(&t);
}

/* qwen3-next tp2 fp32, full layers, T = 4, 16 slots: the temporal spec buffer is
 * 36*16*4*1 MiB = 2.25 GiB, so items past 2^31 bytes are read. */
static void large_offsets(uint64_t *seed)
{
    ls_shape sh;
    ls_state_desc desc;
    LS_REQUIRE(ls_shape_from_model(ls_model_find("qwen3-next-80b-a3b"), 2, &sh) == 0);
    LS_REQUIRE(ls_state_desc_from_shape(&sh, LS_F32, 4, &desc) == 0);
    twin t;
    LS_REQUIRE(twin_open(&t, &desc, 15, "qwen3-next-80b-a3b/tp2/fp32/spec>2GiB") == 0);
    LS_CHECK(spec_bytes(&t.h, t.h.n_buffers - 1) > ((size_t)1 << 31));
    accept(&t, 9, seed);
    twin_close(&t);
}

/* The same slot operation on both pools; both must succeed. */
#define BOTH(t, call_h, call_d)                                                                   \
    do {                                                                                      \
        LS_REQUIRE((call_h) == 0);                                                            \
        int rc_ = (call_d);                                                                   \
        if (rc_ != 0)                                                                         \
            fprintf(stderr, "  %s: %s\n", #call_d, ls_last_error());                          \
        LS_REQUIRE(rc_ == 0);                                                                 \
    } while (0)

/*
 * The pool's slot operations return once queued (docs/pool.md): forks, a copy whose index list
 * is too long for upload (so it goes through copy_h2d), more forks and a zeroing free, all back
 * to back with no sync on the device pool, must leave what the host pool holds after the same
 * calls. A fork's index upload racing the previous fork's copy would show as a wrong slot.
 */
static void slot_ops_queued(uint64_t *seed)
{
    enum { CAP = 1140, A = 1050, FORKS = 40, BIG = LS_UPLOAD_MAX_BYTES / 8 + 10 };
    ls_shape sh;
    ls_state_desc desc;
    LS_REQUIRE(ls_shape_from_model(ls_model_find("qwen3-next-80b-a3b"), 8, &sh) == 0);
    LS_REQUIRE(ls_state_desc_from_shape(&sh, LS_BF16, 0, &desc) == 0);
    desc.layers = 2;
    twin t;
    LS_REQUIRE(twin_open(&t, &desc, CAP, "qwen3-next-80b-a3b/tp8/bf16/L2 queued slot ops") == 0);
    static int32_t a[A], ad[A], f[2 * FORKS], fd[2 * FORKS];
    BOTH(t, ls_pool_alloc(t.ph, A, a), ls_pool_alloc(t.pd, A, ad));
    LS_REQUIRE(memcmp(a, ad, sizeof a) == 0); /* one FIFO order on both */
    twin_poison(&t);
    for (int i = 0; i < BIG; i++)
        twin_fill_slot(&t, seed, a[i], -1);
    printf("%s: %d forks, copy of %d rows, %d forks, free of %d, no sync between\n", t.name,
           FORKS, BIG, FORKS, 2 * FORKS);
    for (int i = 0; i < FORKS; i++)
        BOTH(t, ls_pool_fork(t.ph, a[i], &f[i]), ls_pool_fork(t.pd, a[i], &fd[i]));
    BOTH(t, ls_pool_copy(t.ph, BIG, a, a + A - BIG), ls_pool_copy(t.pd, BIG, a, a + A - BIG));
    for (int i = FORKS; i < 2 * FORKS; i++) /* from the copy's destinations */
        BOTH(t, ls_pool_fork(t.ph, a[A - BIG + i], &f[i]), ls_pool_fork(t.pd, a[A - BIG + i], &fd[i]));
    LS_CHECK(memcmp(f, fd, sizeof f) == 0);
    BOTH(t, ls_pool_free(t.ph, FORKS, f), ls_pool_free(t.pd, FORKS, fd)); /* zero at free */
    LS_CHECK_EQ_INT(ls_pool_sync(t.pd), 0);
    twin_compare_main(&t, "queued slot ops");
    twin_close(&t);
}

/* The preset checks again under the grid and chunk knobs (the persistent grid instead of one
 * CTA per chunk; 4, 8, 16 and 32 KB chunks), where the impl under test has them; quick: 2 layers. */
static void grid_knobs(int quick, uint64_t *seed)
{
#ifndef LS_STATE_OPS_IMPL
    static const char *specs[] = {"state.grid=persist", "state.unroll=1", "state.grid=persist,state.unroll=2",
                                  "state.unroll=4", "state.unroll=8"};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        ls_tuning probe;
        ls_tuning_default(im, &probe);
        if (im->n_knobs == 0 || ls_tuning_parse(im, specs[k], &probe) != 0) {
            printf("%s: not knobs of %s, not run\n", specs[k], im->name);
            break; /* back to the default tuning below */
        }
        printf("tuning %s\n", specs[k]);
        gt_set_tuning(specs[k]);
        tune = *gt_tuning();
        preset("qwen3-next-80b-a3b", 8, LS_F32, quick ? 2 : 0, 5, 3, seed);
        preset("kimi-linear-48b-a3b", 8, LS_BF16, quick ? 2 : 0, 4, 4, seed);
        preset("nemotron-h-8b", 2, LS_F32, quick ? 2 : 0, 3, 3, seed);
    }
    gt_set_tuning("");
    tune = *gt_tuning();
#else
    (void)quick, (void)seed;
#endif
}

int main(void)
{
    be = gt_init();
    gt_set_tuning("");
#ifdef LS_STATE_OPS_IMPL
    im = ls_impl_get(LS_STATE_OPS_IMPL);
    if (!im) {
        printf("SKIP: impl %s not built: %s\n", LS_STATE_OPS_IMPL, ls_last_error());
        return 77;
    }
    if (strcmp(im->runtime, be->name) != 0) {
        printf("SKIP: impl %s runs on %s, the test runtime is %s\n", im->name, im->runtime, be->name);
        return 77;
    }
    ls_tuning_default(im, &tune);
    printf("impl %s (%s)\n", im->name, im->version);
#else
    im = gt_impl();
    tune = *gt_tuning();
#endif
    const int quick = gt_quick();
    uint64_t seed = 0x57a7e0b5ull;
    slot_ops_queued(&seed);
    if (quick) {
        preset("qwen3-next-80b-a3b", 8, LS_F32, 2, 3, 3, &seed);
        preset("kimi-linear-48b-a3b", 8, LS_BF16, 2, 3, 3, &seed);
        preset("nemotron-h-8b", 8, LS_F32, 2, 3, 3, &seed);
        grid_knobs(1, &seed);
        return ls_test_exit();
    }
    for (int i = 0; i < ls_model_count(); i++)
        preset(ls_model_at(i)->name, 2, LS_F32, 0, 5, 3, &seed);
    preset("qwen3-next-80b-a3b", 1, LS_BF16, 0, 3, 3, &seed);
    preset("qwen3-next-80b-a3b", 8, LS_BF16, 0, 7, 7, &seed);
    preset("kimi-linear-48b-a3b", 8, LS_BF16, 0, 4, 4, &seed);
    large_offsets(&seed);
    grid_knobs(0, &seed);

    /* bad input: a NULL dst is rejected with a message naming it */
    ls_state_params bad;
    memset(&bad, 0, sizeof bad);
    bad.n_buffers = 1, bad.layers = 1, bad.slots = 2, bad.count = 1;
    bad.buf[0].main = (void *)16, bad.buf[0].item_bytes = 16;
    LS_CHECK(im->state_zero(&bad, &tune, NULL) != 0);
    printf("bad params rejected: %s\n", ls_impl_error(im));
    return ls_test_exit();
}
