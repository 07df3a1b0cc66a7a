"""compare_join.py — compare.py's join stage: which rows of each run form a side (--variants,
--impls, --tunings, --tuning-old/-new), the key they join on (lscsv.row_key with the fields a
selector took out), and compare_runs, which joins two runs and decides every key on both sides
(compare_rule.decide).
"""
import math
from dataclasses import dataclass, field

from compare_rule import (DECISIONS, DEFAULT_LATENCY_FLOOR, DEFAULT_NOISE_FLOORS, DEFAULT_THRESHOLD,
                          MIN_REPS_FOR_UTEST,
                          decide, run_scatter_pct)
from lscsv import InputError, Run, format_key, log_ratio, median, row_key

def _items(text):
    """The "knob=value" items of a tuning string, in order ("" -> [])."""
    return [i.strip() for i in text.split(",") if i.strip()]


def _knob(item):
    return item.split("=", 1)[0]


def tuning_items(text):
    """The "knob=value" items of a tuning string, as a set ("" -> empty set)."""
    return frozenset(_items(text))


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


def _knobs(tuning):
    return {_knob(i) for i in _items(tuning)}


def one_sided_knobs(brows, arows):
    """{impl: knobs that appear in the tunings of one side's rows of that impl only}, for the
    impls both sides ran: a knob added (or removed) between two builds, which the other build
    could not vary. Knob names come from the "knob=value" items of the rows' tunings."""
    def by_impl(rows):
        out = {}
        for r in rows:
            out.setdefault(r["impl"], set()).update(_knobs(r["tuning"]))
        return out
    b, a = by_impl(brows), by_impl(arows)
    return {im: sorted(b[im] ^ a[im]) for im in b.keys() & a.keys() if b[im] ^ a[im]}


def _strip_knobs(tuning, knobs):
    return ",".join(i for i in _items(tuning) if _knob(i) not in knobs)


def group_side(rows, side, drops, strip=None):
    """Rows that side picks, grouped by key, in first-appearance order. strip: {impl: knobs}
    whose items leave the key's tuning (one_sided_knobs)."""
    groups = {}
    for r in rows:
        if side.matches(r):
            key = row_key(r, drops.device, drops.variant, drops.impl, drops.tuning, drops.by_uuid)
            if strip and r["impl"] in strip and not drops.tuning:
                key = key._replace(tuning=_strip_knobs(key.tuning, strip[r["impl"]]))
            groups.setdefault(key, []).append(r)
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
    latency_floor: tuple = DEFAULT_LATENCY_FLOOR        # (under us, floor %)

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
                 variants=None, impls=None, tunings=None, noise_floors=None,
                 latency_floor=DEFAULT_LATENCY_FLOOR):
    """Joins two runs and decides every key present on both sides (see decide).

    variants, impls: None or (before value, after value): each side keeps the rows of its value
    and the field leaves the key (impls takes tuning out of the key too). tunings: None or
    (before selector, after selector), either None for "any" (see tuning_matches); a selector
    takes tuning out of the key. Tuning also leaves the key when a schema v1 run meets a v2
    run (v1 recorded no tuning). With tuning out of the key, a side holding several tunings of
    one key is an InputError naming the case. A selector that picks no row is an InputError.
    Keys on one side only, and keys without an ok row on some side, are listed, not decided.
    noise_floors: {op: percent} run-to-run floors of the noise bound (None: DEFAULT_NOISE_FLOORS);
    the run's scatter (run_scatter_pct over every joined key) is a floor for every key;
    latency_floor: (us, percent), the floor of a case under us microseconds on either side."""
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
    # A knob one build has and the other lacks leaves the key (the other build ran it at what
    # is now its default, whatever that was); the rows it then merges must hold one tuning.
    strip = {} if drops.tuning else one_sided_knobs(brows, arows)
    bg = group_side(brows, old, drops, strip)
    ag = group_side(arows, new, drops, strip)
    if drops.tuning or strip:
        check_one_tuning(bg, "BEFORE", "--tuning-old")
        check_one_tuning(ag, "AFTER", "--tuning-new")
    cmp = Comparison(before, after, threshold, alpha, old=old, new=new, drops=drops)
    for im, knobs in sorted(strip.items()):
        cmp.notes.append(f"note: impl {im}: knob{'s' if len(knobs) > 1 else ''} "
                         f"{', '.join(knobs)} on one side only: left out of the key")
    if mixed:
        cmp.notes.append(f"note: {' and '.join(dict.fromkeys(v1_files))} is schema v1 (impl "
                         f"from backend, no tuning): tuning is not part of the key")
    floors = dict(DEFAULT_NOISE_FLOORS if noise_floors is None else noise_floors)
    cmp.noise_floors = floors
    cmp.latency_floor = latency_floor
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
    # Two sides of one file ran case by case, one right after the other in the same process: a
    # drifting machine moved both alike, so the run's scatter (which would mostly measure how
    # differently the change itself moved the cases) is no floor there.
    one_file = before is after
    cmp.scatter_pct = 0.0 if one_file else run_scatter_pct(
        [(median([r["time_us_median"] for r in bok]), median([r["time_us_median"] for r in aok]))
         for _, bok, aok in joined])
    for key, bok, aok in joined:
        res = decide(key, bok, aok, threshold, alpha, floors.get(bok[0]["op"], 0.0),
                     cmp.scatter_pct, latency_floor)
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
