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
The rule and its reasons: docs/compare.md. This file is the command line; the stages are
lscsv.py (load), compare_join.py (sides, join), compare_rule.py (decide), compare_report.py
(report). plot.py imports this module.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The stages: lscsv (load, schema check, join key), compare_join (sides, join), compare_rule
# (decision), compare_report (text and md). The names plot.py and the tests take from this
# module are re-exported.
import lscsv  # noqa: E402
from lscsv import (InputError, SCHEMA_V1_COLUMNS, format_key, load as load_csv,  # noqa: E402,F401
                   parse_row, row_key)
from compare_rule import (DECISIONS, DEFAULT_LATENCY_FLOOR, DEFAULT_NOISE_FLOORS, DEFAULT_THRESHOLD,  # noqa: E402,F401
                          MIN_REPS_FOR_UTEST, row_noise_pct, utest_min_p)
from compare_join import check_tuning_spec, compare_runs  # noqa: E402
from compare_report import format_md, format_text  # noqa: E402


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


def _latency_floor_arg(text):
    us, sep, pct = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected US=PERCENT (e.g. 12=6), got {text!r}")
    return _nonneg_float(us), _nonneg_float(pct)


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
    p.add_argument("--latency-floor", type=_latency_floor_arg, default=DEFAULT_LATENCY_FLOOR,
                   metavar="US=PCT",
                   help="run-to-run noise floor, in percent, of a case under US microseconds on "
                        "either side (default %g=%g; 0=0 removes it)" % DEFAULT_LATENCY_FLOOR)
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
                           variants, impls, tunings, noise_floors_arg(args.noise_floor),
                           args.latency_floor)
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
