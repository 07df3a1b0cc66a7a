"""compare_rule.py — compare.py's decision stage: per joined key, the change of the median of
repetition medians, the noise bound the case's own measurements set, and the verdict (SAME,
NOISY, SLOWER, FASTER, UNSURE). The rule and its reasons: docs/compare.md#the-decision-rule.
"""
import math
from dataclasses import dataclass

from lscsv import log_ratio, median

DECISIONS = ("SLOWER", "FASTER", "SAME", "UNSURE", "NOISY")
MIN_REPS_FOR_UTEST = 3
DEFAULT_THRESHOLD = 4.0
# The noise bound (see noise_bound and docs/compare.md):
SPREAD_FACTOR = 3.0     # x the widest in-run spread, (p90 - p10) / 2 / median, of either side
REP_FACTOR = 2.0        # x the widest half-range of the repetition medians of either side
SCATTER_FACTOR = 3.0    # x the run's scatter: 1.4826 MAD of the log ratios of every key
MIN_KEYS_FOR_SCATTER = 8
# Run-to-run floors per op, in %, that no in-run statistic shows (override: --noise-floor), and
# the latency regime's floor for a case whose median is under 12 us on either side (override:
# --latency-floor US=PCT; 0=0 removes it): per class, 1.25 x the largest change of a median
# between two processes of one build that 3 x its in-run spread does not explain, rounded up.
# From results/h200/check-d8fad17/aa_floors.txt (the 8 committed H200 A/A pairs of the default
# sweep): pool/free 6.4 %, pool/alloc 5.5 %; kernels under 12 us 8.2 % (gdn decode B = 1,
# 2.56 / 2.77 us at 1 % spread: at a few microseconds the memory a process happens to get
# decides a tenth of a microsecond). Kernels from 12 us moved at most 1.9 % beyond 3 x their
# spread (under the 4 % threshold), pool/accept and pool/copy never: no floor. pool/fork from
# results/h200/fork-7663d59/fork_floors.txt (21 pairs of the one-launch fork, two machines):
# 47.2 % (qwen3-next B = 512, 1422 / 2093 us at 5 % spread: a fork is one host-issued launch per
# request, and the launch rate differs between processes); that scan also gives alloc 6, free 9.
DEFAULT_NOISE_FLOORS = {"pool/fork": 60.0, "pool/free": 9.0, "pool/alloc": 7.0}
DEFAULT_LATENCY_FLOOR = (12.0, 11.0)
# z of the 95 % interval and the median's asymptotic standard error (1.2533 sigma / sqrt n);
# p90 - p10 of a normal sample is 2.5631 sigma. Used to derive noise_pct for older files.
Z95, MEDIAN_SE, P10_P90_SIGMAS = 1.96, 1.2533, 2.5631



@dataclass
class CaseResult:
    key: tuple
    n_before: int
    n_after: int
    before_us: float        # median of repetition medians
    after_us: float
    change_pct: float       # (after / before - 1) * 100
    method: str             # "utest" | "interval"
    p_value: float          # U test p-value; NaN for the interval rule
    decision: str           # one of DECISIONS
    bound_pct: float = 0.0  # the change the case's own noise can explain (noise_bound)
    bytes_differ: bool = False
    op: str = ""            # the op column of the key's rows


def utest_min_p(n1, n2):
    """Smallest two-sided p-value the exact Mann-Whitney U test can give for sizes n1, n2
    (complete separation, no ties): 2 / C(n1 + n2, n1). With 3 vs 3 it is 0.1, so the test
    can never reject at alpha 0.05; such cases fall back to the interval rule."""
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def mann_whitney_p(before, after):
    """Two-sided Mann-Whitney U p-value (scipy; exact when small and tie-free). NaN when the
    test is undefined (e.g. every value identical) is reported as 1.0: no evidence."""
    from scipy.stats import mannwhitneyu
    p = float(mannwhitneyu(before, after, alternative="two-sided").pvalue)
    return 1.0 if math.isnan(p) else p


def row_noise_pct(r):
    """The relative noise of a row's median, in %: its noise_pct column (the harness's 95 %
    order-statistics half-width, docs/timing.md) when present, else derived from p10/p90 and the
    sample count as Z95 * MEDIAN_SE * sigma / sqrt(n) with sigma = (p90 - p10) / P10_P90_SIGMAS
    (the normal approximation of the same interval)."""
    v = r.get("noise_pct", float("nan"))
    if isinstance(v, float) and math.isfinite(v):
        return v
    n = max(int(r["samples"]), 1)
    sigma = (r["time_us_p90"] - r["time_us_p10"]) / P10_P90_SIGMAS
    return 100.0 * Z95 * MEDIAN_SE * sigma / math.sqrt(n) / r["time_us_median"]


def row_spread_pct(r):
    """In-run spread of a row's samples, in %: (p90 - p10) / 2 / median."""
    return 100.0 * (r["time_us_p90"] - r["time_us_p10"]) / 2.0 / r["time_us_median"]


def side_noise(rows):
    """(median noise_pct, widest spread, half-range of repetition medians) of one side, in %."""
    meds = [r["time_us_median"] for r in rows]
    centre = median(meds)
    rep = 100.0 * (max(meds) - min(meds)) / 2.0 / centre if len(meds) > 1 else 0.0
    return (median([row_noise_pct(r) for r in rows]), max(row_spread_pct(r) for r in rows), rep)


def noise_bound(before_rows, after_rows, floor_pct=0.0, scatter_pct=0.0):
    """The largest change (in %) that the case's own measured noise can explain: the maximum of
      - the medians' combined 95 % interval, sqrt(noise_b^2 + noise_a^2);
      - SPREAD_FACTOR x the widest in-run spread (a run's median wanders within its samples'
        central mass from process to process, which one run's interval cannot show);
      - REP_FACTOR x the widest half-range of repetition medians (when there are repetitions);
      - the op's run-to-run floor and the run's scatter (see compare_runs)."""
    nb, sb, rb = side_noise(before_rows)
    na, sa, ra = side_noise(after_rows)
    return max(math.hypot(nb, na), SPREAD_FACTOR * max(sb, sa), REP_FACTOR * max(rb, ra),
               floor_pct, scatter_pct)


def latency_floor_pct(before_us, after_us, latency_floor=DEFAULT_LATENCY_FLOOR):
    """The latency regime's floor (in %) of a case whose centre is under latency_floor[0] us
    on either side, else 0."""
    below_us, pct = latency_floor
    return pct if min(before_us, after_us) < below_us else 0.0


def decide(key, before_rows, after_rows, threshold, alpha, floor_pct=0.0, scatter_pct=0.0,
           latency_floor=DEFAULT_LATENCY_FLOOR):
    """Decision for one key from its status=ok repetitions on both sides.

    SAME when |change| <= threshold (a significant but small change is SAME); NOISY when
    |change| <= noise_bound (the case's own noise explains it: never a failure). Beyond both:
      utest    (>= 3 reps per side and utest_min_p <= alpha): SLOWER/FASTER when p < alpha;
      interval (otherwise): SLOWER when after.p10 > before.p90, FASTER when
               after.p90 < before.p10, using per side [min p10, max p90] over repetitions;
    anything else is UNSURE (too little evidence for a change beyond the noise)."""
    b_meds = [r["time_us_median"] for r in before_rows]
    a_meds = [r["time_us_median"] for r in after_rows]
    b, a = median(b_meds), median(a_meds)
    change = (a / b - 1.0) * 100.0
    nb, na = len(b_meds), len(a_meds)
    use_utest = (nb >= MIN_REPS_FOR_UTEST and na >= MIN_REPS_FOR_UTEST
                 and utest_min_p(nb, na) <= alpha)
    p = mann_whitney_p(b_meds, a_meds) if use_utest else float("nan")
    floor_pct = max(floor_pct, latency_floor_pct(b, a, latency_floor))
    bound = noise_bound(before_rows, after_rows, floor_pct, scatter_pct)
    if abs(change) <= threshold:
        decision = "SAME"
    elif abs(change) <= bound:
        decision = "NOISY"
    elif use_utest:
        decision = ("SLOWER" if change > 0 else "FASTER") if p < alpha else "UNSURE"
    else:
        b_lo = min(r["time_us_p10"] for r in before_rows)
        b_hi = max(r["time_us_p90"] for r in before_rows)
        a_lo = min(r["time_us_p10"] for r in after_rows)
        a_hi = max(r["time_us_p90"] for r in after_rows)
        if change > 0 and a_lo > b_hi:
            decision = "SLOWER"
        elif change < 0 and a_hi < b_lo:
            decision = "FASTER"
        else:
            decision = "UNSURE"
    bytes_differ = len({r["bytes"] for r in before_rows + after_rows}) > 1
    return CaseResult(key, nb, na, b, a, change, "utest" if use_utest else "interval", p,
                      decision, bound, bytes_differ, before_rows[0]["op"])


def run_scatter_pct(pairs):
    """The run's scatter, in %: SCATTER_FACTOR x 1.4826 x the median absolute deviation of
    log(after / before) over every joined key (the pairs of centres), as a percentage; 0 below
    MIN_KEYS_FOR_SCATTER keys. The MAD is taken about the median ratio, so a change shared by
    most keys moves the centre, not the scatter; a machine whose load moved every case a
    different way (a busy shared host) scatters, and no single case stands out of it."""
    logs = [log_ratio(a, b) for b, a in pairs]
    if len(logs) < MIN_KEYS_FOR_SCATTER:
        return 0.0
    centre = median(logs)
    mad = median([abs(x - centre) for x in logs])
    return 100.0 * math.expm1(min(SCATTER_FACTOR * 1.4826 * mad, 700.0))
