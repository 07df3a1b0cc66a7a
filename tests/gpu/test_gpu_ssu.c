/*
 * test_gpu_ssu.c — the CUDA Mamba2 selective state update (kernels/cuda/mamba2_ssu.cu) against
 * the host reference ls_ref_ssu, label gpu; exits 77 without a device.
 *
 * Per case: random inputs (x, B, C ~ U(-1,1), dt ~ U(-3,1), dt_bias, D ~ U(-1,1),
 * A = -exp(U(-1,1)), z ~ U(-2,2) when gated); a pool of more slots than rows, rows on random
 * distinct slots, ~1/4 padding (-1) when B >= 3; y, state and inter poisoned whole on both
 * sides, then random initial state in the slots of the real rows only. Every element of y,
 * state and inter is compared: written ones within tolerance, the rest bit-identical to the
 * poison. Tolerances: fp32 state 1e-5 * max|ref| of its head; bf16 state + 2 bf16 ulps; y
 * (bf16) 2 ulps + 1e-4 * max|y| over the token's heads (a per-head scale fails when a head's
 * y is tiny by cancellation: seen on a padding row with d*(B.C) + D = 2.6e-7).
 *
 * Matrix: every Mamba2 preset at tp 2 with B in {1, 3, 64} (B = 64 with T in {1, 2}), T in
 * {1, 2, 4, 8}, fp32 and bf16 state, z gate on every other case; tp 1 and tp 8 with B = 3,
 * T in {1, 4}; B = 257 for the first preset (fp32, T = 1); odd shapes (hd = 20, ds = 48 /
 * 136) for the generic kernel. T = 1 decode; T = 2 inter + final; T >= 4 verify (no final write).
 * LS_GPU_TEST_QUICK=1 keeps B <= 3 and T <= 2.
 *
 * The default tuning (auto: ssu_rows8 up to B = 128, the tiles above) and the tiles forced
 * (ssu.variant=tiles) run everything above. Every case gives the pool's slot count (p.slots), so
 * the fast kernels of small grids guess the slot before the PDL wait; the tiles' quick matrices
 * then run again with that guess off, forced on at every batch, and always wrong
 * (ssu.speculate=off, on, miss: the reload path), and the large-batch cases with PDL off
 * (gt_set_tuning). The ssu_rows kernel (ssu.variant=rows) runs the full matrix and the large
 * batches, then the quick ones with its slot guess forced on and always wrong; ssu_rows8
 * (ssu.variant=rows8) the same; then each forced CTA size (ssu.block=32, 128) of both rows kernels
 * on the quick matrices (grids whose last CTA is partly past the batch). The first half (auto and
 * the tiles) and the second (the rows kernels) are two binaries (LS_SSU_TEST_PART). Besides the presets (ds = 128: hd 64 and 80; ds =
 * 256: hd 128), hd = 22 / 18 with ds = 128 / 256 put a partial row block on the vector path
 * (for every kernel: 4, 8 and 16 rows per warp).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_pool.h"
#include "ls_test.h"

typedef struct scase {
    const char *name;
    int tp;
    int nh, hd, ds, ng;
    int B, T;
    ls_dtype sdt;
    int disable, use_inter, gate;
    int gap; /* extra whole heads of poison between slots */
} scase;

static double g_worst_state_ratio, g_worst_y_ratio;

static void run_case(const ls_runtime *be, const scase *c, uint64_t seed)
{
    const int B = c->B, T = c->T, nh = c->nh, hd = c->hd, ds = c->ds, ng = c->ng;
    const int slots = B + 3 + B / 8;
    const size_t es = ls_dtype_size(c->sdt);
    const size_t head = (size_t)hd * ds;
    const size_t sstride = (size_t)(nh + c->gap) * head;
    const size_t istride = (size_t)T * nh * head + c->gap * head;
    const size_t nx = (size_t)B * T * nh * hd, ndt = (size_t)B * T * nh, nbc = (size_t)B * T * ng * ds;

    printf("ssu %s tp%d nh=%d hd=%d ds=%d ng=%d B=%d T=%d state=%s%s%s%s gap=%d\n", c->name, c->tp, nh,
           hd, ds, ng, B, T, ls_dtype_name(c->sdt), c->use_inter ? " inter" : "",
           c->disable ? " no-final-write" : "", c->gate ? " z" : "", c->gap);

    gt_buf x = gt_buf_new(nx * 2), z = gt_buf_new(c->gate ? nx * 2 : 1), y = gt_buf_new(nx * 2);
    gt_buf dt = gt_buf_new(ndt * 2), Bm = gt_buf_new(nbc * 2), Cm = gt_buf_new(nbc * 2);
    gt_buf A = gt_buf_new((size_t)nh * 4), dtb = gt_buf_new((size_t)nh * 2), D = gt_buf_new((size_t)nh * 2);
    gt_buf st = gt_buf_new((size_t)slots * sstride * es);
    gt_buf in = gt_buf_new(c->use_inter ? (size_t)slots * istride * es : 1);
    gt_buf idx = gt_buf_new((size_t)B * 4);

    gt_fill_bf16(&seed, x.h, nx, -1, 1);
    if (c->gate)
        gt_fill_bf16(&seed, z.h, nx, -2, 2);
    gt_fill_bf16(&seed, dt.h, ndt, -3, 1);
    gt_fill_bf16(&seed, Bm.h, nbc, -1, 1);
    gt_fill_bf16(&seed, Cm.h, nbc, -1, 1);
    float *Ah = (float *)A.h;
    for (int h = 0; h < nh; h++)
        Ah[h] = (float)-exp(ls_test_uniform(&seed, -1, 1));
    gt_fill_bf16(&seed, dtb.h, nh, -1, 1);
    gt_fill_bf16(&seed, D.h, nh, -1, 1);
    gt_random_slots(&seed, idx.h, B, slots, 0.25);
    const gt_buf *inputs[] = {&x, &z, &dt, &Bm, &Cm, &A, &dtb, &D, &idx};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        gt_upload(inputs[i]);

    gt_poison(&y);
    gt_poison(&st);
    if (c->use_inter)
        gt_poison(&in);
    const int32_t *slot = (const int32_t *)idx.h;
    for (int r = 0; r < B; r++)
        if (slot[r] >= 0) {
            size_t off = (size_t)slot[r] * sstride * es;
            gt_fill(&seed, (char *)st.h + off, c->sdt, nh * head, -1, 1);
            gt_upload_range(&st, off, nh * head * es);
        }

    ls_ssu_params p = {
        .batch = B, .tokens = T, .nheads = nh, .head_dim = hd, .dstate = ds, .ngroups = ng,
        .disable_state_update = c->disable, .state_dtype = c->sdt,
        .state_stride_slot = (int64_t)sstride, .inter_stride_slot = c->use_inter ? (int64_t)istride : 0,
        .slots = slots, /* lets the kernel guess the slot before the PDL wait */
    };
    ls_ssu_params ph = p, pd = p;
    ph.x = x.h, ph.dt = dt.h, ph.Bm = Bm.h, ph.Cm = Cm.h, ph.z = c->gate ? z.h : NULL;
    ph.A = A.h, ph.dt_bias = dtb.h, ph.D = D.h, ph.y = y.h, ph.state = st.h, ph.slot_idx = idx.h;
    ph.inter = c->use_inter ? in.h : NULL;
    pd.x = x.d, pd.dt = dt.d, pd.Bm = Bm.d, pd.Cm = Cm.d, pd.z = c->gate ? z.d : NULL;
    pd.A = A.d, pd.dt_bias = dtb.d, pd.D = D.d, pd.y = y.d, pd.state = st.d, pd.slot_idx = idx.d;
    pd.inter = c->use_inter ? in.d : NULL;

    int rc_ref = ls_ref_ssu(&ph);
    if (rc_ref)
        fprintf(stderr, "reference failed: %s\n", ls_last_error());
    LS_CHECK_EQ_INT(rc_ref, 0);
    int rc = gt_impl()->ssu(&pd, gt_tuning(), NULL);
    if (rc)
        fprintf(stderr, "cuda op failed: %s\n", ls_last_error());
    LS_CHECK_EQ_INT(rc, 0);

    gt_download(&y);
    gt_download(&st);
    if (c->use_inter)
        gt_download(&in);
    const gt_tol ty = {.atol = 0, .rtol = 1e-4, .group = (size_t)nh * hd, .ulps = 2};
    const gt_tol ts = {.atol = 0, .rtol = 1e-5, .group = head, .ulps = c->sdt == LS_BF16 ? 2 : 0};
    LS_CHECK(gt_compare_buf("y", LS_BF16, &y, nx, ty, &g_worst_y_ratio) == 0);
    LS_CHECK(gt_compare_buf("state", c->sdt, &st, (size_t)slots * sstride, ts, &g_worst_state_ratio) == 0);
    if (c->use_inter)
        LS_CHECK(gt_compare_buf("inter", c->sdt, &in, (size_t)slots * istride, ts, &g_worst_state_ratio) == 0);

    gt_buf *all[] = {&x, &z, &y, &dt, &Bm, &Cm, &A, &dtb, &D, &st, &in, &idx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        gt_buf_free(all[i]);
}

static void preset_case(const ls_runtime *be, const ls_model *m, int tp, int B, int T, ls_dtype sdt,
                        int variant, uint64_t *seed)
{
    ls_shape s;
    LS_REQUIRE(ls_shape_from_model(m, tp, &s) == 0);
    scase c = {.name = m->name, .tp = tp, .nh = s.nheads, .hd = s.head_dim, .ds = s.dstate,
               .ng = s.ngroups, .B = B, .T = T, .sdt = sdt, .disable = T > 2, .use_inter = T > 1,
               .gate = variant % 2, .gap = (variant / 2) % 2};
    run_case(be, &c, ls_test_rand_u64(seed));
}

/* Bad input reaches the caller as an error naming the value. */
static void check_bad_input(const ls_runtime *be)
{
    uint16_t d16[8];
    float df[8];
    int32_t slot = 0;
    ls_ssu_params p = {.batch = 1, .tokens = 1, .nheads = 4, .head_dim = 4, .dstate = 300, .ngroups = 1,
                       .state_dtype = LS_F32, .state_stride_slot = 4 * 4 * 300};
    p.x = p.dt = p.Bm = p.Cm = d16, p.y = d16, p.A = df, p.dt_bias = p.D = d16;
    p.state = df, p.slot_idx = &slot;
    LS_CHECK(gt_impl()->ssu(&p, gt_tuning(), NULL) != 0);
    LS_CHECK(strstr(ls_last_error(), "dstate=300") != NULL);
    p.dstate = 16, p.ngroups = 3;
    LS_CHECK(gt_impl()->ssu(&p, gt_tuning(), NULL) != 0);
    LS_CHECK(strstr(ls_last_error(), "ngroups=3") != NULL);
}

/* The full matrix (see the file comment): the default tuning. */
static void run_full(const ls_runtime *be, int quick, uint64_t seed)
{
    static const int Bs[] = {1, 3, 64}, Ts[] = {1, 2, 4, 8};
    static const ls_dtype dts[] = {LS_F32, LS_BF16};
    int first = 1, variant = 0;
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        if (m->mechanism != LS_MECH_MAMBA2)
            continue;
        for (int di = 0; di < 2; di++)
            for (int bi = 0; bi < 3; bi++)
                for (int ti = 0; ti < 4; ti++) {
                    if (quick && (Bs[bi] > 3 || Ts[ti] > 2))
                        continue;
                    if (Bs[bi] == 64 && Ts[ti] > 2)
                        continue; /* host time: the reference and the compare are O(B*T*state) */
                    preset_case(be, m, 2, Bs[bi], Ts[ti], dts[di], variant++, &seed);
                }
        for (int di = 0; di < 2; di++)
            for (int ti = 0; ti < 2; ti++) {
                if (quick && ti)
                    continue;
                preset_case(be, m, 1, 3, ti ? 4 : 1, dts[di], variant++, &seed);
                preset_case(be, m, 8, 3, ti ? 4 : 1, dts[di], variant++, &seed);
            }
        if (first && !quick)
            preset_case(be, m, 2, 257, 1, LS_F32, 3, &seed);
        first = 0;
    }
    /* head_dim not a multiple of any kernel's rows per warp (4, 8, 16) on the vector path
     * (ds = 128, 256): the last row block is partly past hd */
    for (int di = 0; di < 2; di++) {
        scase c = {.name = "custom", .nh = 4, .hd = 22, .ds = 128, .ng = 2, .B = 5, .T = 3, .sdt = dts[di],
                   .disable = 0, .use_inter = 1, .gate = 1, .gap = 1};
        run_case(be, &c, ls_test_rand_u64(&seed));
        scase d = {.name = "custom", .nh = 2, .hd = 18, .ds = 256, .ng = 1, .B = 3, .T = 1, .sdt = dts[di],
                   .disable = 0, .use_inter = 0, .gate = 0, .gap = 0};
        run_case(be, &d, ls_test_rand_u64(&seed));
    }
    /* odd shapes: the generic (predicated, scalar) kernel */
    for (int di = 0; di < 2; di++) {
        scase c = {.name = "custom", .nh = 6, .hd = 20, .ds = 48, .ng = 3, .B = 5, .T = 3, .sdt = dts[di],
                   .disable = 0, .use_inter = 1, .gate = 1, .gap = 1};
        run_case(be, &c, ls_test_rand_u64(&seed));
        scase d = {.name = "custom", .nh = 2, .hd = 20, .ds = 136, .ng = 1, .B = 4, .T = 1, .sdt = dts[di],
                   .disable = 0, .use_inter = 0, .gate = 0, .gap = 0};
        run_case(be, &d, ls_test_rand_u64(&seed));
    }
}

/*
 * The large batches (wide tiles, several waves): every Mamba2 preset at tp 2, B = 64 with T = 1 in
 * both state dtypes, T = 2 (inter + final write) fp32, T = 4 (verify) bf16, gate on every other
 * case; B = 257, T = 1, fp32, for the first preset. LS_GPU_TEST_QUICK=1: B = 64, T = 1 only.
 */
static void run_large(const ls_runtime *be, int quick, uint64_t seed)
{
    int first = 1, variant = 0;
    for (int mi = 0; mi < ls_model_count(); mi++) {
        const ls_model *m = ls_model_at(mi);
        if (m->mechanism != LS_MECH_MAMBA2)
            continue;
        preset_case(be, m, 2, 64, 1, LS_F32, variant++, &seed);
        preset_case(be, m, 2, 64, 1, LS_BF16, variant++, &seed);
        if (quick)
            continue;
        preset_case(be, m, 2, 64, 2, LS_F32, variant++, &seed);
        preset_case(be, m, 2, 64, 4, LS_BF16, variant++, &seed);
        if (first)
            preset_case(be, m, 2, 257, 1, LS_F32, 2, &seed);
        first = 0;
    }
}

/* The two halves of the run, two binaries of this file (CMake: test_gpu_ssu = part 1,
 * test_gpu_ssu_rows = part 2), so that ctest -j runs them side by side within its timeout; a build
 * without LS_SSU_TEST_PART runs both. */
#ifndef LS_SSU_TEST_PART
#define LS_SSU_TEST_PART 0
#endif

/* Part 1: auto (ssu_rows8 up to B = 128, the tiles above), then the tiles forced over the whole
 * matrix, with their slot guess off, on and always wrong, and PDL off. */
static void part_auto_tiles(const ls_runtime *be, int quick, uint64_t seed)
{
    gt_set_tuning("");
    if (be == ls_runtime_cuda()) /* the cuda launcher's limits (the host reference has others) */
        check_bad_input(be);
    run_full(be, quick, seed);
    gt_set_tuning("ssu.variant=tiles");
    run_full(be, quick, seed + 7);
    /* the slot guess (by default only for grids that take at most half of the GPU, B <= 3 here)
     * off, forced on, then always wrong (the reload path), over the small-batch matrix (narrow
     * tiles) and B = 64 (wide tiles, several waves); then PDL off */
    static const char *const tunings[] = {"ssu.variant=tiles,ssu.speculate=off", "ssu.variant=tiles,ssu.speculate=on",
                                          "ssu.variant=tiles,ssu.speculate=miss"};
    for (int i = 0; i < 3; i++) {
        gt_set_tuning(tunings[i]);
        run_full(be, 1, seed + 17 + (uint64_t)i);
        run_large(be, 1, seed + 29 + (uint64_t)i);
    }
    gt_set_tuning("pdl=off");
    run_large(be, quick, seed + 41);
    gt_set_tuning("ssu.variant=tiles,pdl=off");
    run_large(be, 1, seed + 43);
}

/* Part 2: ssu_rows and ssu_rows8 forced over the whole matrix and the large batches with the
 * slot guess by its default rule, then forced on and always wrong, then each forced CTA size
 * (quick matrices). */
static void part_rows(const ls_runtime *be, int quick, uint64_t seed)
{
    static const char *const variant[] = {"ssu.variant=rows", "ssu.variant=rows8"};
    static const char *const spec[][2] = {{"ssu.variant=rows,ssu.speculate=on", "ssu.variant=rows,ssu.speculate=miss"},
                                          {"ssu.variant=rows8,ssu.speculate=on", "ssu.variant=rows8,ssu.speculate=miss"}};
    for (int k = 0; k < 2; k++) {
        const uint64_t s = seed + 53 + 18 * (uint64_t)k;
        gt_set_tuning(variant[k]);
        run_full(be, quick, s);
        run_large(be, quick, s + 6);
        for (int i = 0; i < 2; i++) {
            gt_set_tuning(spec[k][i]);
            run_full(be, 1, s + 8 + (uint64_t)i);
            run_large(be, 1, s + 14 + (uint64_t)i);
        }
    }
    static const char *const blocks[] = {"ssu.variant=rows,ssu.block=32", "ssu.variant=rows,ssu.block=128",
                                         "ssu.variant=rows8,ssu.block=32", "ssu.variant=rows8,ssu.block=128"};
    for (int i = 0; i < 4; i++) {
        gt_set_tuning(blocks[i]);
        run_full(be, 1, seed + 89 + (uint64_t)i);
        run_large(be, 1, seed + 97 + (uint64_t)i);
    }
}

int main(void)
{
    const ls_runtime *be = gt_init();
    const int quick = gt_quick();
    const uint64_t seed = 0x55a0000c0ffeeull;
    if (LS_SSU_TEST_PART != 2)
        part_auto_tiles(be, quick, seed);
    if (LS_SSU_TEST_PART != 1)
        part_rows(be, quick, seed);
    printf("worst error / tolerance: state %.3g, y %.3g\n", g_worst_state_ratio, g_worst_y_ratio);
    return ls_test_exit();
}
