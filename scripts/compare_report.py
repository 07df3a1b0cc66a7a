"""compare_report.py — compare.py's report stage: the text and markdown reports of a
Comparison (provenance, sides, the table, the summary, per op, the keys not decided).
"""
import math

from compare_join import tuning_difference, tuning_items
from compare_rule import DECISIONS
from lscsv import format_key

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
                 f"{floors or 'none'}; latency floor {cmp.latency_floor[1]:g}% under "
                 f"{cmp.latency_floor[0]:g} us")
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
