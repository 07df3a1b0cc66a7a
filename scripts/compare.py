#!/usr/bin/env python3
"""compare.py — before/after comparison of linstate CSV runs (schema v1 and v2).

    scripts/compare.py BEFORE.csv [AFTER.csv] [--threshold 5] [--alpha 0.05]
                       [--format text|md] [--ignore-device] [--variants OLD:NEW]
                       [--impls OLD:NEW] [--tunings OLD:NEW]
                       [--tuning-old STR] [--tuning-new STR]

Rows are joined on the key (case, variant, impl, tuning, cache_regime, graph, GPU). The GPU is
its gpu_uuid when every row of both files has one (so per-rank files of a fleet join the same
physical GPU whatever device_index it had), else device_index (v1 files, host rows).
Schema v1 rows have no impl/tuning columns: their impl is inferred from backend ("linstate"
when backend == "cuda", "host" when backend == "host") and their tuning is "". Since a v1 file
cannot say which tuning it ran, tuning leaves the key when a v1 file is compared with a v2 file.

Selecting two sides (BEFORE and AFTER may be the same file; AFTER defaults to BEFORE):
  --ignore-device     drops the GPU (uuid or device_index) from the key;
  --variants OLD:NEW  variant OLD of BEFORE against variant NEW of AFTER (variant leaves the key);
  --impls OLD:NEW     impl OLD of BEFORE against impl NEW of AFTER (impl and tuning leave the
                      key: knobs are per impl);
  --tunings OLD:NEW   tuning OLD against tuning NEW of the same impl (tuning leaves the key);
                      shorthand for --tuning-old OLD --tuning-new NEW;
  --tuning-old/-new   keep only the rows of that side whose tuning matches STR.
A tuning STR matches a row when it equals the row's tuning string, or when every "knob=value"
item of STR (","-separated) is an item of the row's tuning ("pdl=off" matches
"pdl=off,conv.variant=auto"). The options compose (e.g. --impls with --variants). When tuning
is not in the key, each side must hold one tuning per key; otherwise the run is ambiguous (exit
2, naming the case): pick one with --tuning-old/--tuning-new.

Every status=ok row of a key is one repetition. Per key: change % of the median of repetition
medians, and a decision:
  - >= 3 repetitions per side (and enough of them for the exact test to reach --alpha):
    two-sided Mann-Whitney U test on the repetition medians;
  - otherwise: separation of the [p10, p90] intervals (the envelope over repetitions).
  |change| <= threshold is SAME whatever the test says; a change beyond the threshold is
  SLOWER/FASTER only when the test (or the interval gap) supports it, else UNSURE.
The report names the two sides ("sglang -> linstate") and gives the geometric mean of the
AFTER/BEFORE time ratios overall and per op.
Exit status: 0 no regression, 1 at least one SLOWER case, 2 bad input or nothing compared (no
key with ok rows on both sides); one line on stderr.
The rule and its reasons: docs/compare.md.  plot.py imports this module.
"""
import argparse
import math
import os
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The reader, the join key and the median are lscsv's (the one reader of every script); they are
# re-exported here for plot.py, export.py and the tests.
from lscsv import (InputError, Key, KEY_FIELDS, Run, SCHEMA_V1_COLUMNS,  # noqa: E402,F401
                   SCHEMA_V2_COLUMNS, SCHEMA_VERSIONS, V1_IMPL_BY_BACKEND, format_key,
                   load as load_csv, log_ratio, median, one_line, parse_row, row_key)
import lscsv  # noqa: E402

DECISIONS = ("SLOWER", "FASTER", "SAME", "UNSURE", "NOISY")
MIN_REPS_FOR_UTEST = 3
DEFAULT_THRESHOLD = 4.0
# The noise bound (see noise_bound and docs/compare.md):
SPREAD_FACTOR = 3.0     # x the widest in-run spread, (p90 - p10) / 2 / median, of either side
REP_FACTOR = 2.0        # x the widest half-range of the repetition medians of either side
SCATTER_FACTOR = 3.0    # x the run's scatter: 1.4826 MAD of the log ratios of every key
MIN_KEYS_FOR_SCATTER = 8
# Run-to-run floors per op, in %, that no in-run statistic shows (override: --noise-floor).
# pool/fork: in the committed H200 A/A (results/h200/impls-45c3dc9/compare-aa.txt) its medians
# moved 9-18 % between two processes of one build while its in-run spread was 1-3 %: fork
# waits for the device inside its timed call over pool memory placed anew by every process.
DEFAULT_NOISE_FLOORS = {"pool/fork": 20.0}
# z of the 95 % interval and the median's asymptotic standard error (1.2533 sigma / sqrt n);
# p90 - p10 of a normal sample is 2.5631 sigma. Used to derive noise_pct for older files.
Z95, MEDIAN_SE, P10_P90_SIGMAS = 1.96, 1.2533, 2.5631


# ------------------------------------------------------------------------------------ joining

def tuning_items(text):
    """The "knob=value" items of a tuning string, as a set ("" -> empty set)."""
    return frozenset(i.strip() for i in text.split(",") if i.strip())


def check_tuning_spec(text):
    """Refuses (InputError) a tuning selector that is not "" or knob=value[,knob=value...]."""
    for item in sorted(tuning_items(text)):
        name, sep, _ = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"tuning {text!r}: item {item!r} is not knob=value")


def tuning_matches(spec, tuning):
    """True when the selector spec picks a row of this tuning string: the same string, or
    every knob=value item of a non-empty spec is an item of the tuning ("" picks "" only)."""
    if spec == tuning:
        return True
    want = tuning_items(spec)
    return bool(want) and want <= tuning_items(tuning)


@dataclass(frozen=True)
class Side:
    """Which rows of a run form one side of the comparison: None = any value."""
    variant: str = None
    impl: str = None
    tuning: str = None      # a tuning selector (see tuning_matches)

    def matches(self, row):
        return ((self.variant is None or row["variant"] == self.variant)
                and (self.impl is None or row["impl"] == self.impl)
                and (self.tuning is None or tuning_matches(self.tuning, row["tuning"])))

    def is_default(self):
        return self.variant is None and self.impl is None and self.tuning is None

    def label(self, default):
        """Short name of the side for the report ("sglang", "linstate [pdl=on]", "BEFORE")."""
        parts = []
        if self.impl is not None:
            parts.append(self.impl)
        if self.variant is not None:
            parts.append(f"variant={self.variant}")
        if self.tuning is not None:
            tuning = f"[{self.tuning}]" if self.tuning else "[no tuning]"
            parts.append(tuning if parts else f"tuning {tuning}")
        return " ".join(parts) or default


@dataclass(frozen=True)
class Drops:
    """Key fields that are not part of the identity (replaced by '*')."""
    device: bool = False
    variant: bool = False
    impl: bool = False
    tuning: bool = False
    by_uuid: bool = False  # the GPU field of the key is gpu_uuid, not device_index


def tuning_difference(tunings):
    """(the tunings without the items they all share, the shared items), both in order; the
    tunings are returned whole when one of them is empty or there is only one."""
    sets = [tuning_items(t) for t in tunings]
    if len(tunings) < 2 or not all(sets):
        return list(tunings), []
    shared = frozenset.intersection(*sets)
    def strip(t):
        return ",".join(i.strip() for i in t.split(",") if i.strip() and i.strip() not in shared)
    common = [i.strip() for i in tunings[0].split(",") if i.strip() in shared]
    return [strip(t) for t in tunings], common


def _show_values(values, most=4):
    shown = [repr(v) if v == "" else v for v in values[:most]]
    return ", ".join(shown) + (f", ... ({len(values)} in all)" if len(values) > most else "")


def select_rows(run, side, what, flag):
    """The rows of run that side picks. A selector that picks nothing is an InputError naming
    the values the run has (what: "BEFORE"/"AFTER"; flag: "--tuning-old"/"--tuning-new")."""
    rows = run.rows
    for col, want, opt in (("impl", side.impl, "--impls"), ("variant", side.variant, "--variants")):
        if want is None:
            continue
        kept = [r for r in rows if r[col] == want]
        if not kept:
            raise InputError(f"{opt}: {what} ({run.path}) has no rows of {col} {want!r} "
                             f"(it has: {_show_values(run.values(col, rows))})")
        rows = kept
    if side.tuning is not None:
        kept = [r for r in rows if tuning_matches(side.tuning, r["tuning"])]
        if not kept:
            raise InputError(f"{flag} {side.tuning!r}: {what} ({run.path}) has no rows of that "
                             f"tuning (it has: {_show_values(run.values('tuning', rows))})")
        rows = kept
    return rows


def group_side(rows, side, drops):
    """Rows that side picks, grouped by key, in first-appearance order."""
    groups = {}
    for r in rows:
        if side.matches(r):
            groups.setdefault(row_key(r, drops.device, drops.variant, drops.impl, drops.tuning,
                                      drops.by_uuid),
                              []).append(r)
    return groups


def group_rows(run, ignore_device=False, variant=None):
    """Rows of a run grouped by key, in first-appearance order. variant (str or None) keeps
    only rows of that variant and drops the variant from the key."""
    return group_side(run.rows, Side(variant=variant),
                      Drops(device=ignore_device, variant=variant is not None))


def check_one_tuning(groups, what, flag):
    """With tuning out of the key, refuses (InputError, naming the case) a key whose rows hold
    several tunings: which one to compare would be a guess."""
    for key, rows in groups.items():
        tunings = sorted({r["tuning"] for r in rows})
        if len(tunings) > 1:
            differ, common = tuning_difference(tunings)
            both = f", all with {','.join(common)}" if common else ""
            raise InputError(f"ambiguous: {format_key(key)} has {len(tunings)} tunings in "
                             f"{what} ({_show_values(differ, 3)}{both}); pick one with {flag} "
                             f"STR")


# ------------------------------------------------------------------------------------ decision

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


def decide(key, before_rows, after_rows, threshold, alpha, floor_pct=0.0, scatter_pct=0.0):
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


@dataclass
class Comparison:
    before: Run
    after: Run
    threshold: float
    alpha: float
    results: list = field(default_factory=list)        # CaseResult, BEFORE order
    only_before: list = field(default_factory=list)    # keys
    only_after: list = field(default_factory=list)
    not_compared: list = field(default_factory=list)   # (key, before statuses, after statuses)
    few_reps_utest: int = 0     # keys with >= 3 reps per side where the U test cannot reach alpha
    old: Side = field(default_factory=Side)             # which rows of BEFORE / AFTER
    new: Side = field(default_factory=Side)
    drops: Drops = field(default_factory=Drops)
    notes: list = field(default_factory=list)           # extra "note: ..." lines
    tunings_used: tuple = ((), ())                      # distinct tunings of the joined rows
    scatter_pct: float = 0.0                            # run_scatter_pct of the joined keys
    noise_floors: dict = field(default_factory=dict)    # op -> run-to-run floor, %

    def counts(self, results=None):
        results = self.results if results is None else results
        return {d: sum(1 for r in results if r.decision == d) for d in DECISIONS}

    def geomean_ratio(self, results=None):
        """Geometric mean of after/before median ratios over compared keys (NaN if none)."""
        results = self.results if results is None else results
        return math.exp(min(sum(log_ratio(r.after_us, r.before_us) for r in results)
                            / len(results), 700.0)) if results else float("nan")

    def per_op(self):
        """[(op, results)] in first-appearance order of the op column."""
        ops = {}
        for r in self.results:
            ops.setdefault(r.op, []).append(r)
        return list(ops.items())

    def sides(self):
        """(old label, new label): the selectors, or BEFORE/AFTER for a plain comparison."""
        if self.old.is_default() and self.new.is_default():
            return "BEFORE", "AFTER"
        return self.old.label("BEFORE"), self.new.label("AFTER")

    def nothing_compared(self):
        """None when some key was decided, else the one-line reason why nothing was."""
        if self.results:
            return None
        if self.not_compared:
            return (f"nothing compared: {len(self.not_compared)} keys on both sides, none with "
                    f"status=ok rows on both")
        return (f"nothing compared: no key on both sides ({len(self.only_before)} only in "
                f"BEFORE, {len(self.only_after)} only in AFTER)")

    def exit_code(self):
        if self.nothing_compared():
            return 2
        return 1 if any(r.decision == "SLOWER" for r in self.results) else 0


def check_devices(before, after, ignore_device):
    """Refuses (InputError) two runs on different devices unless ignore_device."""
    def show(devices):
        return "; ".join(f"{g or '?'} ({b})" for b, g in devices)

    bd, ad = before.devices(), after.devices()
    if bd != ad and not ignore_device:
        raise InputError(f"different devices: {before.path} has {show(bd)}, {after.path} has "
                         f"{show(ad)} (pass --ignore-device to compare anyway)")


def _pair(value, what):
    if value is None:
        return None, None
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InputError(f"{what} must be an (OLD, NEW) pair")
    return value


def compare_runs(before, after, threshold=DEFAULT_THRESHOLD, alpha=0.05, ignore_device=False,
                 variants=None, impls=None, tunings=None, noise_floors=None):
    """Joins two runs and decides every key present on both sides (see decide).

    variants, impls: None or (before value, after value): each side keeps the rows of its value
    and the field leaves the key (impls takes tuning out of the key too). tunings: None or
    (before selector, after selector), either None for "any" (see tuning_matches); a selector
    takes tuning out of the key. Tuning also leaves the key when a schema v1 run meets a v2
    run (v1 recorded no tuning). With tuning out of the key, a side holding several tunings of
    one key is an InputError naming the case. A selector that picks no row is an InputError.
    Keys on one side only, and keys without an ok row on some side, are listed, not decided.
    noise_floors: {op: percent} run-to-run floors of the noise bound (None: DEFAULT_NOISE_FLOORS);
    the run's scatter (run_scatter_pct over every joined key) is a floor for every key."""
    check_devices(before, after, ignore_device)
    bv, av = _pair(variants, "variants")
    bi, ai = _pair(impls, "impls")
    bt, at = _pair(tunings, "tunings")
    for t in (bt, at):
        if t is not None:
            check_tuning_spec(t)
    old, new = Side(bv, bi, bt), Side(av, ai, at)
    schemas = {s for run in (before, after) for s in run.schemas()}
    v1_files = [run.path for run in (before, after) if "1" in run.schemas()]
    mixed = "1" in schemas and len(schemas) > 1     # v1 (no tuning) against v2
    bu, au = before.gpu_uuids(), after.gpu_uuids()
    by_uuid = bu is not None and au is not None
    if by_uuid and not ignore_device and not set(bu) & set(au):
        raise InputError(f"no GPU in common: {before.path} ran on {', '.join(bu)}, {after.path} on "
                         f"{', '.join(au)} (pass --ignore-device to compare across GPUs)")
    drops = Drops(device=ignore_device, variant=variants is not None, impl=impls is not None,
                  tuning=impls is not None or bt is not None or at is not None or mixed,
                  by_uuid=by_uuid)
    brows = select_rows(before, old, "BEFORE", "--tuning-old")
    arows = select_rows(after, new, "AFTER", "--tuning-new")
    bg = group_side(brows, old, drops)
    ag = group_side(arows, new, drops)
    if drops.tuning:
        check_one_tuning(bg, "BEFORE", "--tuning-old")
        check_one_tuning(ag, "AFTER", "--tuning-new")
    cmp = Comparison(before, after, threshold, alpha, old=old, new=new, drops=drops)
    if mixed:
        cmp.notes.append(f"note: {' and '.join(dict.fromkeys(v1_files))} is schema v1 (impl "
                         f"from backend, no tuning): tuning is not part of the key")
    floors = dict(DEFAULT_NOISE_FLOORS if noise_floors is None else noise_floors)
    cmp.noise_floors = floors
    used_b, used_a = [], []
    joined = []
    for key, brows_k in bg.items():
        if key not in ag:
            cmp.only_before.append(key)
            continue
        arows_k = ag[key]
        bok = [r for r in brows_k if r["status"] == "ok"]
        aok = [r for r in arows_k if r["status"] == "ok"]
        if not bok or not aok:
            cmp.not_compared.append((key, _statuses(brows_k), _statuses(arows_k)))
            continue
        joined.append((key, bok, aok))
    cmp.scatter_pct = run_scatter_pct(
        [(median([r["time_us_median"] for r in bok]), median([r["time_us_median"] for r in aok]))
         for _, bok, aok in joined])
    for key, bok, aok in joined:
        res = decide(key, bok, aok, threshold, alpha, floors.get(bok[0]["op"], 0.0),
                     cmp.scatter_pct)
        if (res.method == "interval" and res.n_before >= MIN_REPS_FOR_UTEST
                and res.n_after >= MIN_REPS_FOR_UTEST):
            cmp.few_reps_utest += 1
        cmp.results.append(res)
        used_b.append(bok[0]["tuning"])
        used_a.append(aok[0]["tuning"])
    cmp.only_after = [k for k in ag if k not in bg]
    cmp.tunings_used = (tuple(dict.fromkeys(used_b)), tuple(dict.fromkeys(used_a)))
    return cmp


def _statuses(rows):
    return ",".join(sorted({r["status"] for r in rows}))


# ------------------------------------------------------------------------------------ output

COLUMNS = ("case", "variant", "impl", "tuning", "cache", "graph", "dev", "n", "before_us",
           "after_us", "change", "noise", "method", "p", "decision")


def common_tuning(results):
    """Items shared by every non-empty tuning in the keys of results, in the order of the
    first such tuning ([] when there is none). The table prints them once."""
    tunings = [r.key.tuning for r in results if r.key.tuning not in ("", "*")]
    if not tunings:
        return []
    shared = set.intersection(*(set(tuning_items(t)) for t in tunings))
    return [i.strip() for i in tunings[0].split(",") if i.strip() in shared]


def _tuning_cell(tuning, common):
    """A key's tuning for the table: "-" when empty, else its items not in common (which
    the report prints once), "(common)" when none is left."""
    if tuning in ("", "*"):
        return tuning or "-"
    rest = [i.strip() for i in tuning.split(",") if i.strip() and i.strip() not in common]
    return ",".join(rest) or "(common)"


def _cells(r, common=()):
    case, variant, impl, tuning, cache, graph, dev = r.key
    return [case, variant or "-", impl or "-", _tuning_cell(tuning, common), cache,
            "yes" if graph else "no",
            str(dev), f"{r.n_before}/{r.n_after}", f"{r.before_us:.3f}", f"{r.after_us:.3f}",
            f"{r.change_pct:+.2f}%" + (" (bytes differ)" if r.bytes_differ else ""),
            f"{r.bound_pct:.2f}%", r.method, "-" if math.isnan(r.p_value) else f"{r.p_value:.3g}", r.decision]


def _side_line(cmp):
    """'sglang -> linstate', with the tunings each side ran when tuning is not in the key."""
    old, new = cmp.sides()
    line = f"{old} -> {new}"
    if cmp.drops.tuning and cmp.results:
        bt, at = cmp.tunings_used
        if len(bt) == 1 and len(at) == 1:
            (b, a), common = tuning_difference([bt[0], at[0]])
            both = f"; both {','.join(common)}" if common else ""
            line += f" (tuning: {b or repr('')} -> {a or repr('')}{both})"
        else:
            line += f" (tuning: {len(bt)} -> {len(at)} tunings)"
    return line


def _ratio_text(g):
    return f"{g:.4f} ({(g - 1) * 100:+.2f}%)"


def _summary_lines(cmp):
    c = cmp.counts()
    g = cmp.geomean_ratio()
    lines = []
    if math.isnan(g):
        lines.append("geomean after/before: n/a (no case compared)")
    else:
        lines.append(f"geomean after/before: {_ratio_text(g)} over {len(cmp.results)} cases")
    lines.append(", ".join(f"{c[d]} {d}" for d in DECISIONS)
                 + f" (threshold {cmp.threshold:g}%, alpha {cmp.alpha:g})")
    floors = ", ".join(f"{op} {v:g}%" for op, v in sorted(cmp.noise_floors.items()))
    lines.append(f"noise: a verdict needs |change| > threshold and > the case's noise bound "
                 f"(column noise); run scatter {cmp.scatter_pct:.2f}%; op floors: "
                 f"{floors or 'none'}")
    bh, ah = cmp.before.holds(), cmp.after.holds()
    if bh != ah:
        lines.append(f"note: the stream hold differs (held {'/'.join(bh)} before, {'/'.join(ah)} "
                     f"after): unheld samples include the host's launch latency, so the changes "
                     f"mix timing method with code")
    if cmp.few_reps_utest:
        lines.append(f"note: {cmp.few_reps_utest} cases have too few repetitions for the U test "
                     f"to reach alpha {cmp.alpha:g}; decided by the interval rule")
    lines += cmp.notes
    return lines


def _per_op_rows(cmp):
    """[op, cases, geomean text, SLOWER, FASTER, SAME, UNSURE, NOISY] per op."""
    out = []
    for op, res in cmp.per_op():
        c = cmp.counts(res)
        out.append([op, str(len(res)), _ratio_text(cmp.geomean_ratio(res))]
                   + [str(c[d]) for d in DECISIONS])
    return out


PER_OP_COLUMNS = ("op", "cases", "geomean after/before") + DECISIONS


def _side_lists(cmp):
    """(title, items) pairs for the keys not decided."""
    out = []
    if cmp.only_before:
        out.append((f"only in BEFORE ({len(cmp.only_before)}), not compared",
                    [format_key(k) for k in cmp.only_before]))
    if cmp.only_after:
        out.append((f"only in AFTER ({len(cmp.only_after)}), not compared",
                    [format_key(k) for k in cmp.only_after]))
    if cmp.not_compared:
        out.append((f"status not ok ({len(cmp.not_compared)}), not compared",
                    [f"{format_key(k)}: before={b} after={a}" for k, b, a in cmp.not_compared]))
    return out


def _provenance(run):
    devs = "; ".join(g or "?" for _, g in run.devices())
    impls = ", ".join(run.values("impl"))
    return (f"{run.path} [{devs}; impl {impls}; schema v{'/'.join(run.schemas())}; "
            f"commit {', '.join(run.commits())}]")


def _align(table):
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]


def format_text(cmp):
    """Plain-text report: provenance, sides, aligned table, summary, per-op summary,
    undecided lists."""
    lines = [f"before: {_provenance(cmp.before)}", f"after:  {_provenance(cmp.after)}",
             f"sides:  {_side_line(cmp)}"]
    common = common_tuning(cmp.results)
    if common:
        lines.append(f"tuning: {','.join(common)} in every tuned key; the tuning column shows "
                     f"the rest")
    lines += _align([list(COLUMNS)] + [_cells(r, common) for r in cmp.results])
    lines += _summary_lines(cmp)
    if cmp.results:
        old, new = cmp.sides()
        lines.append(f"per op, geomean after/before ({old} -> {new}):")
        lines += [f"  {l}" for l in _align([list(PER_OP_COLUMNS)] + _per_op_rows(cmp))]
    for title, items in _side_lists(cmp):
        lines.append(f"{title}:")
        lines += [f"  {it}" for it in items]
    return "\n".join(lines) + "\n"


def _md_cell(s):
    return s.replace("|", "\\|")


def _md_table(columns, rows):
    return (["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
            + ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows])


def format_md(cmp):
    """Markdown report: the same content with pipe tables (for PR comments)."""
    lines = [f"**before:** `{_provenance(cmp.before)}`  ",
             f"**after:** `{_provenance(cmp.after)}`  ",
             f"**sides:** {_md_cell(_side_line(cmp))}  "]
    common = common_tuning(cmp.results)
    if common:
        lines.append(f"**tuning:** `{','.join(common)}` in every tuned key; the tuning column "
                     f"shows the rest")
    lines.append("")
    body = []
    for r in cmp.results:
        cells = _cells(r, common)
        cells[-1] = f"**{cells[-1]}**" if cells[-1] in ("SLOWER", "FASTER") else cells[-1]
        body.append(cells)
    lines += _md_table(COLUMNS, body)
    lines.append("")
    lines += [f"{s}  " for s in _summary_lines(cmp)]
    if cmp.results:
        old, new = cmp.sides()
        lines += ["", f"**per op, geomean after/before ({_md_cell(old)} -> {_md_cell(new)}):**",
                  ""]
        lines += _md_table(PER_OP_COLUMNS, _per_op_rows(cmp))
    for title, items in _side_lists(cmp):
        lines += ["", f"**{title}:**", ""] + [f"- `{_md_cell(it)}`" for it in items]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ CLI

def _variants_arg(text):
    old, sep, new = text.partition(":")
    if not sep or not old or not new:
        raise argparse.ArgumentTypeError(f"expected OLD:NEW, got {text!r}")
    return old, new


def _tuning_arg(text):
    try:
        check_tuning_spec(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _tunings_arg(text):
    pair = _variants_arg(text)
    for t in pair:
        _tuning_arg(t)
    return pair


def _nonneg_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0: {text!r}")
    return v


def _alpha_arg(text):
    v = _nonneg_float(text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1): {text!r}")
    return v


def _floor_arg(text):
    op, sep, pct = text.rpartition("=")
    if not sep or not op:
        raise argparse.ArgumentTypeError(f"expected OP=PERCENT (e.g. pool/fork=20), got {text!r}")
    return op, _nonneg_float(pct)


def noise_floors_arg(pairs):
    """{op: percent} from --noise-floor items on top of DEFAULT_NOISE_FLOORS."""
    floors = dict(DEFAULT_NOISE_FLOORS)
    floors.update(dict(pairs or ()))
    return floors


def add_compare_options(p):
    """Options shared with plot.py --compare."""
    p.add_argument("--threshold", type=_nonneg_float, default=DEFAULT_THRESHOLD,
                   help=f"change in percent within which a case is SAME (default "
                        f"{DEFAULT_THRESHOLD:g})")
    p.add_argument("--noise-floor", type=_floor_arg, action="append", metavar="OP=PCT",
                   help="run-to-run noise floor of an op (the op column), in percent; "
                        "repeatable; default " + ", ".join(f"{k}={v:g}" for k, v in
                                                           DEFAULT_NOISE_FLOORS.items())
                        + " (0 removes it)")
    p.add_argument("--alpha", type=_alpha_arg, default=0.05,
                   help="significance level of the U test (default 0.05)")
    p.add_argument("--ignore-device", action="store_true",
                   help="compare runs from different GPUs; the GPU (uuid or device_index) leaves the key")
    p.add_argument("--variants", type=_variants_arg, metavar="OLD:NEW",
                   help="compare variant OLD of BEFORE with variant NEW of AFTER")
    p.add_argument("--impls", type=_variants_arg, metavar="OLD:NEW",
                   help="compare impl OLD of BEFORE with impl NEW of AFTER (impl and tuning "
                        "leave the key; pick a tuning with --tuning-old/--tuning-new)")
    p.add_argument("--tunings", type=_tunings_arg, metavar="OLD:NEW",
                   help="compare tuning OLD with tuning NEW (same impl; = --tuning-old OLD "
                        "--tuning-new NEW)")
    p.add_argument("--tuning-old", type=_tuning_arg, metavar="STR",
                   help="BEFORE side: only rows whose tuning is STR or holds its knob=value "
                        "items")
    p.add_argument("--tuning-new", type=_tuning_arg, metavar="STR",
                   help="AFTER side: only rows whose tuning is STR or holds its knob=value "
                        "items")


def selection_args(args):
    """(variants, impls, tunings) for compare_runs from parsed add_compare_options args;
    InputError when --tunings is combined with --tuning-old/--tuning-new."""
    tunings = None
    if args.tunings is not None:
        if args.tuning_old is not None or args.tuning_new is not None:
            raise InputError("--tunings OLD:NEW and --tuning-old/--tuning-new pick the same "
                             "thing: give one or the other")
        tunings = args.tunings
    elif args.tuning_old is not None or args.tuning_new is not None:
        tunings = (args.tuning_old, args.tuning_new)
    return args.variants, args.impls, tunings


def main(argv=None):
    p = lscsv.ArgumentParser(
        prog="compare.py",
        description="Compare two linstate CSV runs (or two sides of one); exit 1 if any case is "
                    "SLOWER, 2 on bad input or when nothing was compared. NOISY cases (a "
                    "change the case's own noise explains) never fail.")
    p.add_argument("before", help="CSV of the baseline run")
    p.add_argument("after", nargs="?",
                   help="CSV of the candidate run (default: BEFORE again, for --variants, "
                        "--impls or --tunings within one file)")
    p.add_argument("--format", choices=("text", "md"), default="text")
    add_compare_options(p)
    args = p.parse_args(argv)
    try:
        variants, impls, tunings = selection_args(args)
        if args.after is None and variants is None and impls is None and tunings is None:
            raise InputError("one file given: compare two sides of it with --variants, --impls "
                             "or --tunings, or give AFTER.csv")
        before = load_csv(args.before)
        after = before if args.after is None else load_csv(args.after)
        cmp = compare_runs(before, after, args.threshold, args.alpha, args.ignore_device,
                           variants, impls, tunings, noise_floors_arg(args.noise_floor))
    except InputError as e:
        return lscsv.report("compare.py", e)
    except ImportError as e:
        print(f"compare.py: error: {e.name} is needed for the U test "
              f"(python3 -m pip install scipy)", file=sys.stderr)
        return 2
    sys.stdout.write(format_md(cmp) if args.format == "md" else format_text(cmp))
    reason = cmp.nothing_compared()
    if reason:
        print(f"compare.py: error: {reason}", file=sys.stderr)
    return cmp.exit_code()


if __name__ == "__main__":
    sys.exit(main())
