/*
 * test_stats.c — ls_stats_compute on samples whose statistics are known by hand, in any order.
 */
#include <math.h>
#include <string.h>

#include "ls_harness.h"
#include "ls_test.h"

int main(void)
{
    ls_stats s;

    /* 1..10 shuffled: median 5.5, p10 = 1 + 0.9*(2-1) = 1.9, p90 = 9.1, mean 5.5,
     * sample stddev sqrt(82.5/9). */
    const double ten[] = {7, 3, 10, 1, 9, 2, 8, 5, 6, 4};
    memset(&s, 0xff, sizeof s);
    LS_CHECK_EQ_INT(ls_stats_compute(ten, 10, &s), 0);
    LS_CHECK_EQ_INT(s.n, 10);
    LS_CHECK_NEAR(s.median, 5.5, 1e-12, 0);
    LS_CHECK_NEAR(s.p10, 1.9, 1e-12, 0);
    LS_CHECK_NEAR(s.p90, 9.1, 1e-12, 0);
    LS_CHECK_NEAR(s.mean, 5.5, 1e-12, 0);
    LS_CHECK_NEAR(s.stddev, sqrt(82.5 / 9.0), 1e-12, 0);
    LS_CHECK_NEAR(s.min, 1, 0, 0);
    LS_CHECK_NEAR(s.max, 10, 0, 0);
    LS_CHECK(ten[0] == 7 && ten[9] == 4); /* input untouched (a copy is sorted) */
    /* Noise of the median, n = 10: 1.96 sqrt(10) = 6.20, ranks floor(1.90) = 1 and
     * ceil(1 + 8.10) = 10, so the half-width (10 - 1) / 2 over the median 5.5. */
    LS_CHECK_NEAR(s.noise_pct, 100.0 * 4.5 / 5.5, 1e-9, 0);

    /* n = 20 of 1..20: ranks floor(5.62) = 5 and ceil(15.38) = 16: (16 - 5) / 2 / 10.5. */
    double twenty[20];
    for (int i = 0; i < 20; i++)
        twenty[i] = 20 - i;
    LS_CHECK_EQ_INT(ls_stats_compute(twenty, 20, &s), 0);
    LS_CHECK_NEAR(s.noise_pct, 100.0 * 5.5 / 10.5, 1e-9, 0);
    /* 400 samples, all 100 but 1 % spread evenly: the interval narrows to the middle ranks. */
    double many[400];
    for (int i = 0; i < 400; i++)
        many[i] = 99.5 + (double)i / 399.0;
    LS_CHECK_EQ_INT(ls_stats_compute(many, 400, &s), 0);
    LS_CHECK(s.noise_pct > 0.04 && s.noise_pct < 0.06); /* ranks 181..221: 40/399 / 2 % */
    /* Too few samples for the interval, or a median of 0: NaN. */
    const double five[] = {1, 2, 3, 4, 5};
    LS_CHECK(isnan(ls_median_noise_pct(five, 5)));
    const double zeros[] = {0, 0, 0, 0, 0, 0};
    LS_CHECK(isnan(ls_median_noise_pct(zeros, 6)));
    LS_CHECK(isnan(ls_median_noise_pct(NULL, 10)));

    /* Odd count, with an outlier: the median ignores it, the mean does not. */
    const double odd[] = {2.0, 100.0, 3.0, 1.0, 4.0};
    LS_CHECK_EQ_INT(ls_stats_compute(odd, 5, &s), 0);
    LS_CHECK_NEAR(s.median, 3.0, 1e-12, 0);
    LS_CHECK_NEAR(s.mean, 22.0, 1e-12, 0);
    LS_CHECK_NEAR(s.p10, 1.4, 1e-12, 0);  /* pos 0.4 between 1 and 2 */
    LS_CHECK_NEAR(s.p90, 61.6, 1e-12, 0); /* pos 3.6 between 4 and 100 */
    LS_CHECK_NEAR(s.max, 100.0, 0, 0);

    /* One sample: every location statistic is that sample, stddev 0. */
    const double one[] = {42.5};
    LS_CHECK_EQ_INT(ls_stats_compute(one, 1, &s), 0);
    LS_CHECK(s.median == 42.5 && s.p10 == 42.5 && s.p90 == 42.5 && s.min == 42.5 && s.max == 42.5);
    LS_CHECK_NEAR(s.stddev, 0.0, 0, 0);

    /* Constant samples: stddev exactly 0. */
    const double flat[] = {3.25, 3.25, 3.25, 3.25};
    LS_CHECK_EQ_INT(ls_stats_compute(flat, 4, &s), 0);
    LS_CHECK(s.stddev == 0.0 && s.median == 3.25);

    /* A NaN sample must not produce a clean-looking mean. */
    const double bad[] = {1.0, NAN, 2.0};
    LS_CHECK_EQ_INT(ls_stats_compute(bad, 3, &s), 0);
    LS_CHECK(isnan(s.mean));

    /* Errors name the problem. */
    LS_CHECK_EQ_INT(ls_stats_compute(ten, 0, &s), -1);
    LS_CHECK(strstr(ls_last_error(), "n = 0") != NULL);
    LS_CHECK_EQ_INT(ls_stats_compute(NULL, 3, &s), -1);
    LS_CHECK_EQ_INT(ls_stats_compute(ten, 3, NULL), -1);
    return ls_test_exit();
}
