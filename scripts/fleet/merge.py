#!/usr/bin/env python3
"""Gather the per-rank CSVs of a linstate fleet run into one CSV.

usage: merge.py DIR|FILE... --out MERGED.csv [--allow-mixed]

Every *.csv in the given folders (and every file given) is one rank's output (linstate-bench
--fleet ... --out-dir DIR). The merged file has the common header and every row of every
complete rank file, ordered by job and rank; rows are copied byte for byte.

Checks:
  schema      every file has the same header, schema_version 1 or 2, and the fleet columns
              (rank, world_size, job_id) filled by linstate-bench --fleet
  provenance  one git_commit (with its dirty flag) and one suite_version across files: an
              error unless --allow-mixed
  shards      per fleet (job_id, world_size) every rank 0..world_size-1 once; a rank that left
              only its temporary FILE.csv.tmp.XXXXXX (killed before it finished) is reported as incomplete and its
              rows are left out; a rank with no file at all is reported missing
It reports per fleet whether it was a shard run (each case on one rank) or a replicate run
(cases on several ranks).

Exit status: 0 every rank complete; 1 a shard missing or incomplete (the merged file still holds
the rows of the rest); 2 bad input (no files, mixed schema or provenance, duplicate ranks).
"""
import argparse
import csv
import glob
import os
import re
import sys

FLEET_COLUMNS = ("rank", "world_size", "job_id", "node", "gpu_uuid")
# A measurement's identity within one rank (docs/csv.md join key, plus the repetition).
CASE_FIELDS = ("case", "variant", "impl", "tuning", "cache_regime", "graph", "state_layout", "repetition")


class InputError(Exception):
    """One line printed before exit 2."""


def parse_line(line):
    return next(csv.reader([line]))


def read_rank_file(path, partial=False):
    """(header line, header names, list of (raw line, row dict)). A partial (.tmp) file may be
    empty or end in a torn line: its complete lines only."""
    with open(path, newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif partial and lines:
        lines.pop()  # torn last row of a killed process
    if not lines:
        if partial:
            return "", [], []
        raise InputError(f"{path}: empty file (no header)")
    header = lines[0]
    names = parse_line(header)
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        cells = parse_line(line)
        if len(cells) != len(names):
            raise InputError(f"{path}:{i}: {len(cells)} cells, header has {len(names)}")
        rows.append((line, dict(zip(names, cells))))
    return header, names, rows


def one_value(path, rows, col):
    values = {r[col] for _, r in rows}
    if len(values) != 1:
        raise InputError(f"{path}: column {col} is not one value per file: {sorted(values)}")
    return values.pop()


PARTIAL_RE = re.compile(r"\.csv\.tmp(\.[A-Za-z0-9]{6})?$")


def collect(inputs, out_path):
    """(complete files, partial files) under inputs, sorted; the output file itself excluded."""
    complete, partial = [], []
    out_abs = os.path.abspath(out_path)
    for item in inputs:
        if os.path.isdir(item):
            complete += glob.glob(os.path.join(item, "*.csv"))
            # linstate-bench's private temporaries are FILE.csv.tmp.XXXXXX (docs/csv.md); older
            # runs left FILE.csv.tmp
            partial += [p for p in glob.glob(os.path.join(item, "*.csv.tmp*")) if PARTIAL_RE.search(p)]
        elif PARTIAL_RE.search(item):
            partial.append(item)
        elif os.path.isfile(item):
            complete.append(item)
        else:
            raise InputError(f"{item}: no such file or folder")
    complete = sorted(p for p in set(complete) if os.path.abspath(p) != out_abs)
    return complete, sorted(set(partial))


def merge(inputs, out_path, allow_mixed=False, log=sys.stdout):
    """Writes the merged CSV; returns the exit status (0 or 1). Raises InputError."""
    files, partials = collect(inputs, out_path)
    if not files and not partials:
        raise InputError(f"no rank files (*.csv) in {' '.join(inputs)}")
    header, ranks = None, []
    for path in files:
        h, names, rows = read_rank_file(path)
        if header is None:
            header = h
        elif h != header:
            raise InputError(f"{path}: header differs from {files[0]}'s (mixed schema)")
        missing_cols = [c for c in ("schema_version", "git_commit", "suite_version") + FLEET_COLUMNS
                        if c not in names]
        if missing_cols:
            raise InputError(f"{path}: no column {missing_cols[0]} (not written by linstate-bench --fleet)")
        if not rows:
            log.write(f"merge: note: {path} has no rows\n")
            continue
        if one_value(path, rows, "schema_version") not in ("1", "2"):
            raise InputError(f"{path}: schema_version {rows[0][1]['schema_version']!r} (1 or 2 are read)")
        rank, world = one_value(path, rows, "rank"), one_value(path, rows, "world_size")
        if not rank.isdigit() or not world.isdigit() or int(rank) >= int(world):
            raise InputError(f"{path}: rank {rank!r} of world_size {world!r} (not a fleet rank's file)")
        commit = one_value(path, rows, "git_commit") + ("+dirty" if one_value(path, rows, "git_dirty") == "1" else "")
        ranks.append(dict(path=path, rows=rows, rank=int(rank), world=int(world),
                          job=one_value(path, rows, "job_id"), commit=commit,
                          suite=one_value(path, rows, "suite_version"),
                          gpu=one_value(path, rows, "gpu_uuid") or one_value(path, rows, "host")))
    for what in ("commit", "suite"):
        seen = sorted({r[what] for r in ranks})
        if len(seen) > 1 and not allow_mixed:
            raise InputError(f"mixed {'git commits' if what == 'commit' else 'suite versions'}: "
                             f"{', '.join(seen)} (pass --allow-mixed to merge anyway)")

    # Ranks that left only a .tmp file: rank from its rows when it wrote any.
    incomplete = []
    for path in partials:
        _, names, rows = read_rank_file(path, partial=True)
        ids = {(r.get("job_id", ""), r.get("world_size", ""), r.get("rank", "")) for _, r in rows}
        incomplete.append((path, ids.pop() if len(ids) == 1 else None, len(rows)))

    status = 0
    fleets = sorted({(r["job"], r["world"]) for r in ranks} |
                    {(i[0], int(i[1])) for _, i, _ in incomplete if i and i[1].isdigit()})
    for job, world in fleets:
        members = sorted((r for r in ranks if (r["job"], r["world"]) == (job, world)), key=lambda r: r["rank"])
        present = [r["rank"] for r in members]
        dups = sorted({x for x in present if present.count(x) > 1})
        if dups:
            paths = [r["path"] for r in members if r["rank"] == dups[0]]
            raise InputError(f"job {job or '(none)'}: rank {dups[0]} twice: {' '.join(paths)}")
        by_key = {}
        for r in members:
            for _, row in r["rows"]:
                by_key.setdefault(tuple(row.get(c, "") for c in CASE_FIELDS), set()).add(r["rank"])
        mode = "replicate" if any(len(s) > 1 for s in by_key.values()) else "shard"
        name = f"job {job}" if job else "job (none)"
        log.write(f"merge: {name}: {mode}, {len(members)} of {world} ranks, {len(by_key)} cases, "
                  f"GPUs {', '.join(sorted({r['gpu'] for r in members}))}\n")
        for rank in range(world):
            if rank in present:
                continue
            status = 1
            torn = [(p, n) for p, i, n in incomplete if i == (job, str(world), str(rank))]
            if torn:
                log.write(f"merge: {name}: missing shard: rank {rank} of {world} incomplete "
                          f"({torn[0][0]}: {torn[0][1]} rows, the process did not finish; left out)\n")
            else:
                log.write(f"merge: {name}: missing shard: rank {rank} of {world} (no file)\n")
    for path, ident, n in incomplete:
        if ident is None:
            status = 1
            log.write(f"merge: incomplete file {path} ({n} rows, rank unknown; left out)\n")

    rows_out = 0
    tmp = out_path + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(tmp, "w", newline="") as f:
        if header is not None:
            f.write(header + "\n")
        for r in sorted(ranks, key=lambda r: (r["job"], r["world"], r["rank"])):
            for line, _ in r["rows"]:
                f.write(line + "\n")
                rows_out += 1
    os.replace(tmp, out_path)
    log.write(f"merge: {len(ranks)} rank files, {rows_out} rows -> {out_path}\n")
    return status


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="folders of rank files, or rank files")
    p.add_argument("--out", required=True, help="merged CSV")
    p.add_argument("--allow-mixed", action="store_true", help="merge files of different commits or suite versions")
    a = p.parse_args(argv)
    try:
        return merge(a.inputs, a.out, a.allow_mixed)
    except (InputError, OSError) as e:
        print(f"merge.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
