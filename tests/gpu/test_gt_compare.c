/*
 * test_gt_compare.c — the GPU tests' compare (gpu_test.c gt_compare, gt_ulp_bf16) against a plain
 * element-by-element oracle, on the host (no device needed). gt_compare takes shortcuts for speed
 * (a run whose bytes match the reference is only counted, typed element access, the bf16 ulp from
 * the exponent bits); every field of its result must equal the oracle's on random buffers with
 * poison (scattered and in whole groups), perturbations inside and beyond tolerance, overwritten
 * poison, identical runs, and NaN / infinity in touched elements (identical on both sides too:
 * those must still fail).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "ls_test.h"

/* The bf16 ulp by frexp / ldexp (gpu_test.c's definition before its exponent-bit version). */
static double oracle_ulp(double x)
{
    x = fabs(x);
    if (!(x >= ldexp(1.0, -126)))
        return ldexp(1.0, -133);
    int e;
    frexp(x, &e);
    return ldexp(1.0, e - 1 - 7);
}

static double value(ls_dtype dt, const void *p, size_t i)
{
    if (dt == LS_F32)
        return (double)((const float *)p)[i];
    return (double)ls_bf16_to_f32(((const uint16_t *)p)[i]);
}

static int is_poison(ls_dtype dt, const void *p, size_t i)
{
    const size_t sz = ls_dtype_size(dt);
    const unsigned char *c = (const unsigned char *)p + i * sz;
    for (size_t k = 0; k < sz; k++)
        if (c[k] != GT_POISON)
            return 0;
    return 1;
}

/* gt_compare's contract (gpu_test.h), one element at a time, without printing. */
static gt_cmp oracle(ls_dtype dt, const void *got, const void *ref, size_t n, gt_tol tol)
{
    gt_cmp r;
    memset(&r, 0, sizeof r);
    r.first_bad = SIZE_MAX;
    const size_t sz = ls_dtype_size(dt), g = tol.group ? tol.group : 1;
    for (size_t g0 = 0; g0 < n; g0 += g) {
        const size_t g1 = g0 + g < n ? g0 + g : n;
        double gmax = 0.0;
        for (size_t i = g0; tol.group && i < g1; i++)
            if (!is_poison(dt, ref, i) && fabs(value(dt, ref, i)) > gmax)
                gmax = fabs(value(dt, ref, i));
        for (size_t i = g0; i < g1; i++) {
            if (is_poison(dt, ref, i)) {
                r.untouched++;
                if (memcmp((const char *)got + i * sz, (const char *)ref + i * sz, sz) != 0) {
                    r.poison_bad++;
                    if (r.first_bad == SIZE_MAX)
                        r.first_bad = i;
                }
                continue;
            }
            r.touched++;
            const double rv = value(dt, ref, i);
            double err = fabs(value(dt, got, i) - rv);
            const double t = tol.atol + tol.rtol * (tol.group ? gmax : fabs(rv)) + tol.ulps * oracle_ulp(rv);
            const int ok = err <= t;
            double ratio = t > 0.0 ? err / t : (err == 0.0 ? 0.0 : INFINITY);
            if (!(err == err))
                err = ratio = INFINITY;
            if (err > r.worst_err)
                r.worst_err = err;
            if (ratio > r.worst_ratio) {
                r.worst_ratio = ratio;
                r.worst_idx = i;
            }
            if (!ok) {
                r.bad++;
                if (r.first_bad == SIZE_MAX)
                    r.first_bad = i;
            }
        }
    }
    return r;
}

static void put(ls_dtype dt, void *p, size_t i, double v)
{
    if (dt == LS_F32)
        ((float *)p)[i] = (float)v;
    else
        ((uint16_t *)p)[i] = ls_f32_to_bf16((float)v);
}

static void put_bits(ls_dtype dt, void *p, size_t i, uint32_t bits)
{
    if (dt == LS_F32)
        memcpy((char *)p + 4 * i, &bits, 4);
    else
        ((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
}

/* One random case: returns 1 when gt_compare and the oracle agree on every field. */
static int random_case(uint64_t *seed, int k)
{
    const ls_dtype dt = k % 2 ? LS_BF16 : LS_F32;
    const size_t sz = ls_dtype_size(dt), n = 1 + (size_t)gt_rand_int(seed, 0, 20000);
    static const size_t groups[] = {0, 1, 7, 64, 1000, 5000, 30000};
    const gt_tol tol = {.atol = k % 5 == 0 ? 1e-6 : 0, .rtol = (k / 2) % 3 == 0 ? 0 : (k / 2) % 3 == 1 ? 1e-5 : 1e-3,
                        .group = groups[k % 7], .ulps = (k / 3) % 2 ? 2 : 0};
    unsigned char *ref = malloc(n * sz), *got = malloc(n * sz);
    LS_REQUIRE(ref && got);
    /* the reference: values of mixed magnitude, poison in runs and scattered, rare NaN / inf */
    for (size_t i = 0; i < n; i++) {
        const double u = ls_test_uniform(seed, 0, 1);
        put(dt, ref, i, ls_test_uniform(seed, -1, 1) * ldexp(1.0, gt_rand_int(seed, -140, 20)));
        if (u < 0.002)
            put_bits(dt, ref, i, 0x7fc00000u); /* NaN, not the poison's bits */
        else if (u < 0.003)
            put_bits(dt, ref, i, 0x7f800000u); /* +inf */
        else if (u < 0.1)
            memset(ref + i * sz, GT_POISON, sz);
    }
    const size_t run = (size_t)gt_rand_int(seed, 0, (int)n - 1), len = (size_t)gt_rand_int(seed, 0, 3000);
    memset(ref + run * sz, GT_POISON, (run + len < n ? len : n - run) * sz);
    memcpy(got, ref, n * sz);
    /* the device copy: a quarter of the cases identical; else some elements off by a little or a
     * lot, some poison overwritten, one region left identical */
    if (k % 4) {
        const size_t keep0 = (size_t)gt_rand_int(seed, 0, (int)n - 1);
        const size_t keep1 = keep0 + (size_t)gt_rand_int(seed, 0, 4000);
        for (size_t i = 0; i < n; i++) {
            if (i >= keep0 && i < keep1)
                continue;
            const double u = ls_test_uniform(seed, 0, 1);
            if (is_poison(dt, ref, i)) {
                if (u < 0.001)
                    put(dt, got, i, 0.5);
                continue;
            }
            const double rv = value(dt, ref, i);
            if (u < 0.3)
                put(dt, got, i, rv * (1 + ls_test_uniform(seed, -1e-5, 1e-5)));
            else if (u < 0.31)
                put(dt, got, i, rv * (1 + ls_test_uniform(seed, -0.1, 0.1)) + 1e-7);
            else if (u < 0.311)
                put_bits(dt, got, i, 0x7fc00000u);
        }
    }
    gt_cmp want = oracle(dt, got, ref, n, tol), have;
    gt_compare("random", dt, got, ref, n, tol, &have);
    int same = want.touched == have.touched && want.untouched == have.untouched && want.bad == have.bad &&
               want.poison_bad == have.poison_bad && want.first_bad == have.first_bad &&
               want.worst_idx == have.worst_idx && (want.worst_ratio == have.worst_ratio) &&
               (want.worst_err == have.worst_err);
    if (!same)
        fprintf(stderr, "case %d (%s, n %zu, group %zu): touched %zu/%zu untouched %zu/%zu bad %zu/%zu poison_bad %zu/%zu "
                "first_bad %zu/%zu worst_idx %zu/%zu ratio %.17g/%.17g err %.17g/%.17g (oracle/gt_compare)\n",
                k, dt == LS_F32 ? "fp32" : "bf16", n, tol.group, want.touched, have.touched, want.untouched,
                have.untouched, want.bad, have.bad, want.poison_bad, have.poison_bad, want.first_bad, have.first_bad,
                want.worst_idx, have.worst_idx, want.worst_ratio, have.worst_ratio, want.worst_err, have.worst_err);
    free(ref);
    free(got);
    return same;
}

int main(void)
{
    uint64_t seed = 0x6c7c0a11ull;
    /* the bf16 ulp: every binade edge and random doubles of either sign, zero, subnormals, NaN */
    for (int e = -1100; e < 1024; e++) {
        const double x = ldexp(1.0, e);
        LS_CHECK(gt_ulp_bf16(x) == oracle_ulp(x));
        LS_CHECK(gt_ulp_bf16(-nextafter(x, 0)) == oracle_ulp(-nextafter(x, 0)));
    }
    int ulp_bad = 0;
    for (int i = 0; i < 200000; i++) {
        const double x = ls_test_uniform(&seed, -1, 1) * ldexp(1.0, gt_rand_int(&seed, -1074, 1023));
        ulp_bad += gt_ulp_bf16(x) != oracle_ulp(x);
    }
    LS_CHECK_EQ_INT(ulp_bad, 0);
    LS_CHECK(gt_ulp_bf16(0.0) == oracle_ulp(0.0) && gt_ulp_bf16(NAN) == oracle_ulp(NAN));
    /* identical NaN in a touched element fails, as an identical finite run passes */
    float ref[4] = {1.0f, NAN, 2.0f, 3.0f}, got[4];
    memcpy(got, ref, sizeof ref);
    gt_cmp r;
    const gt_tol exact = {0};
    LS_CHECK_EQ_INT(gt_compare("nan", LS_F32, got, ref, 4, exact, &r), 1);
    LS_CHECK_EQ_INT(r.bad, 1);
    LS_CHECK_EQ_INT(r.first_bad, 1);
    LS_CHECK_EQ_INT(gt_compare("finite", LS_F32, got, ref, 1, exact, &r), 0);
    int disagree = 0;
    for (int k = 0; k < 400; k++)
        disagree += !random_case(&seed, k);
    LS_CHECK_EQ_INT(disagree, 0);
    return ls_test_exit();
}
