#!/usr/bin/env python3
"""compare.py — before/after comparison of two linstate CSV runs (schema v1).

    scripts/compare.py BEFORE.csv AFTER.csv [--threshold 5] [--alpha 0.05]
                       [--format text|md] [--ignore-device] [--variants OLD:NEW]

Rows are joined on the key (case, variant, cache_regime, graph, device_index); --ignore-device
drops device_index from the key, --variants OLD:NEW compares variant OLD of BEFORE with variant
NEW of AFTER (and drops variant from the key). Every status=ok row of a key is one repetition.
Per key: change % of the median of repetition medians, and a decision:
  - >= 3 repetitions per side (and enough of them for the exact test to reach --alpha):
    two-sided Mann-Whitney U test on the repetition medians;
  - otherwise: separation of the [p10, p90] intervals (the envelope over repetitions).
  |change| <= threshold is SAME whatever the test says; a change beyond the threshold is
  SLOWER/FASTER only when the test (or the interval gap) supports it, else UNSURE.
Exit status: 0 no regression, 1 at least one SLOWER case, 2 bad input (one line on stderr).
The rule and its reasons: scripts/README-compare.md.  plot.py imports this module.
"""
import argparse
import csv
import math
import sys
from dataclasses import dataclass, field

SCHEMA_VERSION = "1"

# Schema v1 columns, in the order the harness writes them (results/README.md). Files may carry
# more columns after these (repetition, rotated, time_us_min, time_us_max, ...).
SCHEMA_V1_COLUMNS = (
    "schema_version", "suite_version", "git_commit", "git_dirty", "timestamp", "host", "backend",
    "device_index", "gpu_name", "driver_version", "cuda_runtime", "sm_count", "sm_clock_mhz",
    "mem_clock_mhz", "cpuset", "numa_node", "case", "mechanism", "op", "variant", "model", "tp",
    "batch", "draft_tokens", "layers", "conv_dtype", "state_dtype", "pool_slots", "cache_regime",
    "graph", "samples", "time_us_median", "time_us_p10", "time_us_p90", "time_us_mean",
    "time_us_stddev", "bytes", "gbps", "copy_peak_gbps", "pct_of_copy_peak", "max_rel_err",
    "status",
)
# Parsed on every row: they are part of the join key.
KEY_INT_COLUMNS = ("device_index", "graph")
# Parsed on status=ok rows only (a skipped row may leave them empty).
OK_INT_COLUMNS = ("tp", "batch", "draft_tokens", "layers", "pool_slots", "samples", "bytes")
OK_FLOAT_COLUMNS = ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean",
                    "time_us_stddev", "gbps", "copy_peak_gbps", "pct_of_copy_peak", "max_rel_err")
# Optional trailing columns parsed when present.
OPTIONAL_INT_COLUMNS = ("repetition",)
# Time columns of an ok row must be finite: NaN never passes.
TIME_COLUMNS = ("time_us_median", "time_us_p10", "time_us_p90")

DECISIONS = ("SLOWER", "FASTER", "SAME", "UNSURE")
MIN_REPS_FOR_UTEST = 3


class InputError(Exception):
    """Bad input: the message is the one line printed before exiting with status 2."""


@dataclass
class Run:
    """One CSV file: its path and its rows (dicts of str, with parsed numeric columns)."""
    path: str
    rows: list

    def devices(self):
        """Sorted distinct (backend, gpu_name) pairs of the run."""
        return sorted({(r["backend"], r["gpu_name"]) for r in self.rows})

    def holds(self):
        """Sorted distinct values of the held column; files from before that column timed
        every sample unheld ("0")."""
        return sorted({r.get("held", "") or "0" for r in self.rows})

    def commits(self):
        """Distinct git commits (with '+dirty' when the tree was dirty), in file order."""
        seen = []
        for r in self.rows:
            c = r["git_commit"][:12] + ("+dirty" if r["git_dirty"] not in ("0", "") else "")
            if c not in seen:
                seen.append(c)
        return seen


def _parse_number(path, lineno, col, text, kind):
    """int or float of a CSV cell; InputError naming file, line, column and value otherwise.
    An empty real cell is NaN (the writer's form of NaN/inf); an empty integer is an error."""
    if kind is float and text.strip() == "":
        return float("nan")
    try:
        return int(text) if kind is int else float(text)
    except ValueError:
        raise InputError(f"{path}:{lineno}: column {col}: not a number: {text!r}") from None


def load_csv(path):
    """Reads and validates one linstate CSV (schema v1).

    Checks, each failing with one InputError line: the file opens; it has a header with every
    v1 column (order is not enforced, extra columns are allowed); every row says
    schema_version 1 and has as many cells as the header; key columns parse as integers on
    every row; numeric columns parse on status=ok rows (an empty real cell is NaN), whose time
    columns must be finite and non-negative (median > 0). Returns a Run whose row dicts carry the parsed numbers and
    '_line' (the row's line number)."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: empty file (no header)")
            header = [h.strip() for h in header]
            if "schema_version" not in header:
                raise InputError(f"{path}: no schema_version column (not a linstate CSV?)")
            missing = [c for c in SCHEMA_V1_COLUMNS if c not in header]
            if missing:
                raise InputError(f"{path}: missing columns: {', '.join(missing)}")
            rows = []
            for cells in reader:
                lineno = reader.line_num
                if not cells or all(not c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    raise InputError(f"{path}:{lineno}: {len(cells)} cells, header has "
                                     f"{len(header)}")
                rows.append(_parse_row(path, lineno, dict(zip(header, cells))))
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text") from None
    if not rows:
        raise InputError(f"{path}: no data rows")
    return Run(path, rows)


def _parse_row(path, lineno, row):
    """Validates and converts one row (see load_csv)."""
    if row["schema_version"].strip() != SCHEMA_VERSION:
        raise InputError(f"{path}:{lineno}: schema_version is {row['schema_version']!r}, "
                         f"this script reads {SCHEMA_VERSION}")
    row["_line"] = lineno
    for col in KEY_INT_COLUMNS:
        row[col] = _parse_number(path, lineno, col, row[col], int)
    for col in OPTIONAL_INT_COLUMNS:
        if col in row and row[col] != "":
            row[col] = _parse_number(path, lineno, col, row[col], int)
    if row["status"] != "ok":
        return row
    for col in OK_INT_COLUMNS:
        row[col] = _parse_number(path, lineno, col, row[col], int)
    for col in OK_FLOAT_COLUMNS:
        row[col] = _parse_number(path, lineno, col, row[col], float)
    for col in TIME_COLUMNS:
        v = row[col]
        if not math.isfinite(v) or v < 0 or (col == "time_us_median" and v == 0):
            raise InputError(f"{path}:{lineno}: column {col}: invalid time {v!r} in an ok row")
    return row


# ------------------------------------------------------------------------------------ joining

KEY_FIELDS = ("case", "variant", "cache_regime", "graph", "device_index")


def row_key(row, ignore_device=False, drop_variant=False):
    """The join key of a row: (case, variant, cache_regime, graph, device_index), with
    device_index and/or variant replaced by '*' when they are not part of the identity."""
    return (row["case"],
            "*" if drop_variant else row["variant"],
            row["cache_regime"],
            row["graph"],
            "*" if ignore_device else row["device_index"])


def format_key(key):
    """Human form of a key: the case, then the non-default qualifiers."""
    case, variant, cache, graph, dev = key
    parts = [case]
    if variant not in ("", "*"):
        parts.append(f"variant={variant}")
    parts.append(f"cache={cache}")
    if graph:
        parts.append("graph")
    if dev != "*":
        parts.append(f"dev={dev}")
    return " ".join(parts)


def group_rows(run, ignore_device=False, variant=None):
    """Rows of a run grouped by key, in first-appearance order. variant (str or None) keeps
    only rows of that variant and drops the variant from the key."""
    groups = {}
    for r in run.rows:
        if variant is not None and r["variant"] != variant:
            continue
        groups.setdefault(row_key(r, ignore_device, variant is not None), []).append(r)
    return groups


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
    bytes_differ: bool = False


def median(values):
    """Median of a non-empty sequence (mean of the two middle values when even)."""
    values = sorted(values)
    n = len(values)
    mid = n // 2
    return values[mid] if n % 2 else 0.5 * (values[mid - 1] + values[mid])


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


def decide(key, before_rows, after_rows, threshold, alpha):
    """Decision for one key from its status=ok repetitions on both sides.

    SAME when |change| <= threshold (a significant but small change is SAME). Beyond it:
      utest    (>= 3 reps per side and utest_min_p <= alpha): SLOWER/FASTER when p < alpha;
      interval (otherwise): SLOWER when after.p10 > before.p90, FASTER when
               after.p90 < before.p10, using per side [min p10, max p90] over repetitions;
    anything else is UNSURE (noisy overlap, or too little evidence for a big change)."""
    b_meds = [r["time_us_median"] for r in before_rows]
    a_meds = [r["time_us_median"] for r in after_rows]
    b, a = median(b_meds), median(a_meds)
    change = (a / b - 1.0) * 100.0
    nb, na = len(b_meds), len(a_meds)
    use_utest = (nb >= MIN_REPS_FOR_UTEST and na >= MIN_REPS_FOR_UTEST
                 and utest_min_p(nb, na) <= alpha)
    p = mann_whitney_p(b_meds, a_meds) if use_utest else float("nan")
    if abs(change) <= threshold:
        decision = "SAME"
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
                      decision, bytes_differ)


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

    def counts(self):
        return {d: sum(1 for r in self.results if r.decision == d) for d in DECISIONS}

    def geomean_ratio(self):
        """Geometric mean of after/before median ratios over compared keys (NaN if none)."""
        if not self.results:
            return float("nan")
        return math.exp(sum(math.log(r.after_us / r.before_us) for r in self.results)
                        / len(self.results))

    def exit_code(self):
        return 1 if any(r.decision == "SLOWER" for r in self.results) else 0


def check_devices(before, after, ignore_device):
    """Refuses (InputError) two runs on different devices unless ignore_device."""
    def show(devices):
        return "; ".join(f"{g or '?'} ({b})" for b, g in devices)

    bd, ad = before.devices(), after.devices()
    if bd != ad and not ignore_device:
        raise InputError(f"different devices: {before.path} has {show(bd)}, {after.path} has "
                         f"{show(ad)} (pass --ignore-device to compare anyway)")


def compare_runs(before, after, threshold=5.0, alpha=0.05, ignore_device=False, variants=None):
    """Joins two runs and decides every key present on both sides (see decide). variants is
    None or (before_variant, after_variant). Keys on one side only, and keys without an ok
    row on some side, are listed, not decided."""
    check_devices(before, after, ignore_device)
    bv, av = variants if variants else (None, None)
    bg = group_rows(before, ignore_device, bv)
    ag = group_rows(after, ignore_device, av)
    cmp = Comparison(before, after, threshold, alpha)
    for key, brows in bg.items():
        if key not in ag:
            cmp.only_before.append(key)
            continue
        arows = ag[key]
        bok = [r for r in brows if r["status"] == "ok"]
        aok = [r for r in arows if r["status"] == "ok"]
        if not bok or not aok:
            cmp.not_compared.append((key, _statuses(brows), _statuses(arows)))
            continue
        res = decide(key, bok, aok, threshold, alpha)
        if (res.method == "interval" and res.n_before >= MIN_REPS_FOR_UTEST
                and res.n_after >= MIN_REPS_FOR_UTEST):
            cmp.few_reps_utest += 1
        cmp.results.append(res)
    cmp.only_after = [k for k in ag if k not in bg]
    return cmp


def _statuses(rows):
    return ",".join(sorted({r["status"] for r in rows}))


# ------------------------------------------------------------------------------------ output

COLUMNS = ("case", "variant", "cache", "graph", "dev", "n", "before_us", "after_us", "change",
           "method", "p", "decision")


def _cells(r):
    case, variant, cache, graph, dev = r.key
    return [case, variant or "-", cache, "yes" if graph else "no", str(dev),
            f"{r.n_before}/{r.n_after}", f"{r.before_us:.3f}", f"{r.after_us:.3f}",
            f"{r.change_pct:+.2f}%" + (" (bytes differ)" if r.bytes_differ else ""),
            r.method, "-" if math.isnan(r.p_value) else f"{r.p_value:.3g}", r.decision]


def _summary_lines(cmp):
    c = cmp.counts()
    g = cmp.geomean_ratio()
    lines = []
    if math.isnan(g):
        lines.append("geomean after/before: n/a (no case compared)")
    else:
        lines.append(f"geomean after/before: {g:.4f} ({(g - 1) * 100:+.2f}%) over "
                     f"{len(cmp.results)} cases")
    lines.append(", ".join(f"{c[d]} {d}" for d in DECISIONS)
                 + f" (threshold {cmp.threshold:g}%, alpha {cmp.alpha:g})")
    bh, ah = cmp.before.holds(), cmp.after.holds()
    if bh != ah:
        lines.append(f"note: the stream hold differs (held {'/'.join(bh)} before, {'/'.join(ah)} "
                     f"after): unheld samples include the host's launch latency, so the changes "
                     f"mix timing method with code")
    if cmp.few_reps_utest:
        lines.append(f"note: {cmp.few_reps_utest} cases have too few repetitions for the U test "
                     f"to reach alpha {cmp.alpha:g}; decided by the interval rule")
    return lines


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
    return f"{run.path} [{devs}; commit {', '.join(run.commits())}]"


def format_text(cmp):
    """Plain-text report: provenance, aligned table, summary, undecided lists."""
    lines = [f"before: {_provenance(cmp.before)}", f"after:  {_provenance(cmp.after)}"]
    table = [list(COLUMNS)] + [_cells(r) for r in cmp.results]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    for row in table:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    lines += _summary_lines(cmp)
    for title, items in _side_lists(cmp):
        lines.append(f"{title}:")
        lines += [f"  {it}" for it in items]
    return "\n".join(lines) + "\n"


def _md_cell(s):
    return s.replace("|", "\\|")


def format_md(cmp):
    """Markdown report: the same content with a pipe table (for PR comments)."""
    lines = [f"**before:** `{_provenance(cmp.before)}`  ",
             f"**after:** `{_provenance(cmp.after)}`", ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "|".join("---" for _ in COLUMNS) + "|")
    for r in cmp.results:
        cells = _cells(r)
        cells[-1] = f"**{cells[-1]}**" if cells[-1] in ("SLOWER", "FASTER") else cells[-1]
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    lines.append("")
    lines += [f"{s}  " for s in _summary_lines(cmp)]
    for title, items in _side_lists(cmp):
        lines += ["", f"**{title}:**", ""] + [f"- `{_md_cell(it)}`" for it in items]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ CLI

def _variants_arg(text):
    old, sep, new = text.partition(":")
    if not sep or not old or not new:
        raise argparse.ArgumentTypeError(f"expected OLD:NEW, got {text!r}")
    return old, new


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


def add_compare_options(p):
    """Options shared with plot.py --compare."""
    p.add_argument("--threshold", type=_nonneg_float, default=5.0,
                   help="change in percent within which a case is SAME (default 5)")
    p.add_argument("--alpha", type=_alpha_arg, default=0.05,
                   help="significance level of the U test (default 0.05)")
    p.add_argument("--ignore-device", action="store_true",
                   help="compare runs from different GPUs; device_index leaves the key")
    p.add_argument("--variants", type=_variants_arg, metavar="OLD:NEW",
                   help="compare variant OLD of BEFORE with variant NEW of AFTER")


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="compare.py",
        description="Compare two linstate CSV runs; exit 1 if any case is SLOWER, 2 on bad input.")
    p.add_argument("before", help="CSV of the baseline run")
    p.add_argument("after", help="CSV of the candidate run")
    p.add_argument("--format", choices=("text", "md"), default="text")
    add_compare_options(p)
    args = p.parse_args(argv)
    try:
        before, after = load_csv(args.before), load_csv(args.after)
        cmp = compare_runs(before, after, args.threshold, args.alpha, args.ignore_device,
                           args.variants)
    except InputError as e:
        print(f"compare.py: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"compare.py: error: {e.name} is needed for the U test "
              f"(python3 -m pip install scipy)", file=sys.stderr)
        return 2
    sys.stdout.write(format_md(cmp) if args.format == "md" else format_text(cmp))
    return cmp.exit_code()


if __name__ == "__main__":
    sys.exit(main())
