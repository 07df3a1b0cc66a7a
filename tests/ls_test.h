/*
 * ls_test.h — minimal assertions for linstate's CTest binaries. A failed check prints the file,
 * line, the expression and both values, counts the failure and carries on; ls_test_exit() turns
 * the count into the process exit code (77 = skipped, the CTest SKIP_RETURN_CODE).
 */
#ifndef LS_TEST_H
#define LS_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int ls_test_failures = 0;
static int ls_test_checks = 0;

#define LS_CHECK(cond)                                                                       \
    do {                                                                                     \
        ls_test_checks++;                                                                    \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            ls_test_failures++;                                                              \
        }                                                                                    \
    } while (0)

#define LS_CHECK_EQ_INT(a, b)                                                                \
    do {                                                                                     \
        long long ls_a_ = (long long)(a), ls_b_ = (long long)(b);                            \
        ls_test_checks++;                                                                    \
        if (ls_a_ != ls_b_) {                                                                \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__, __LINE__, #a, \
                    #b, ls_a_, ls_b_);                                                       \
            ls_test_failures++;                                                              \
        }                                                                                    \
    } while (0)

/* |a - b| <= atol + rtol * |b|; NaN never passes. */
#define LS_CHECK_NEAR(a, b, atol, rtol)                                                      \
    do {                                                                                     \
        double ls_a_ = (double)(a), ls_b_ = (double)(b);                                     \
        ls_test_checks++;                                                                    \
        if (!(fabs(ls_a_ - ls_b_) <= (atol) + (rtol)*fabs(ls_b_))) {                         \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.9g vs %.9g\n", __FILE__, __LINE__, #a, \
                    #b, ls_a_, ls_b_);                                                       \
            ls_test_failures++;                                                              \
        }                                                                                    \
    } while (0)

/* Fatal variant: stop the test at once (e.g. when a setup step failed). */
#define LS_REQUIRE(cond)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #cond);             \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static inline int ls_test_exit(void)
{
    if (ls_test_failures) {
        fprintf(stderr, "%d of %d checks failed\n", ls_test_failures, ls_test_checks);
        return 1;
    }
    printf("%d checks passed\n", ls_test_checks);
    return 0;
}

/* Deterministic PRNG for test inputs (splitmix64); never all-zero data. */
static inline uint64_t ls_test_rand_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi). */
static inline double ls_test_uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(ls_test_rand_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* LS_TEST_H */
