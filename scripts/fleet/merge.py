#!/usr/bin/env python3
"""Gather the per-rank CSVs of a linstate fleet run into one CSV.

usage: merge.py DIR|FILE... --out MERGED.csv [--allow-mixed]

Every *.csv in the given folders (and every file given) is one rank's output (linstate-bench
--fleet ... --out-dir DIR); --out is never taken as an input (a folder's MERGED.csv is skipped, a
file named both ways is an error). An earlier merge's output in a folder (merge.sbatch writes
DIR/merged.csv) is left out with a note: a file there whose rows hold several ranks, or whose rows
are line for line another file's (the merge of a one-rank fleet). The merged file has the common header and every row of every
complete rank file, ordered by job and rank; rows are copied byte for byte. It is written
through a private temporary in its folder (mkstemp) and renamed into place, so it is whole or
absent and never written over an input.

Checks:
  reader      every file passes lscsv's checks (UTF-8, no torn last row, the schema's columns,
              statuses, ordered positive times); a header-only file is a rank that got no case
              of its own (linstate-bench writes one when a shard is empty): its rank, world size
              and job come from its name (..._job<id>_rank<r>of<n>.csv)
  schema      every file has the same header and the fleet columns (rank, world_size, job_id)
              filled by linstate-bench --fleet
  provenance  one git_commit (with its dirty flag) and one suite_version across files: an
              error unless --allow-mixed
  shards      per fleet (job_id, world_size) every rank 0..world_size-1 once; a rank that left
              only its temporary FILE.csv.tmp.XXXXXX (killed before it finished) is reported as
              incomplete and its rows are left out; a rank with no file at all is reported missing
It reports per fleet whether it was a shard run (each measurement on one rank) or a replicate run
(measurements on several ranks); a measurement is lscsv's join key without the GPU, plus the
repetition.

Exit status: 0 every rank complete; 1 a shard missing or incomplete (the merged file still holds
the rows of the rest); 2 bad input, with one line on stderr (no files, a file lscsv refuses, mixed
schema or provenance, duplicate ranks, an output that is an input, not a regular file or not
writable).
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lscsv  # noqa: E402  (the CSV reader and the join key)
from lscsv import InputError  # noqa: E402

FLEET_COLUMNS = ("rank", "world_size", "job_id", "node", "gpu_uuid")
PARTIAL_RE = re.compile(r"\.csv\.tmp(\.[A-Za-z0-9]{6})?$")
# bench/fleet.c's file name: <host>_<gpu>[_job<job_id>]_rank<r>of<n>.csv
RANK_NAME_RE = re.compile(r"(?:_job(?P<job>[A-Za-z0-9._-]+))?_rank(?P<rank>\d+)of(?P<world>\d+)\.csv$")


def file_safe(text):
    """text as bench/fleet.c puts it into a file name: '_' for each character outside
    [A-Za-z0-9.-]."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", text)


def measurement(row):
    """A measurement's identity across ranks: the join key without the GPU, and the repetition."""
    return lscsv.row_key(row, ignore_device=True) + (row.get("repetition", ""),)


def one_value(path, rows, col):
    values = {r[col] for r in rows}
    if len(values) != 1:
        raise InputError(f"{path}: column {col} is not one value per file: {sorted(values)}")
    return values.pop()


def collect(inputs, out_path):
    """(complete files, partial files, the complete files found in folders) under inputs, sorted.
    A folder's file that is out_path is skipped; an input file that is out_path is an InputError."""
    complete, partial, scanned = [], [], set()
    out_real = os.path.realpath(out_path)
    for item in inputs:
        if os.path.isdir(item):
            found = [p for p in glob.glob(os.path.join(item, "*.csv")) if os.path.realpath(p) != out_real]
            complete += found
            scanned.update(found)
            # linstate-bench's private temporaries are FILE.csv.tmp.XXXXXX (docs/csv.md); older
            # runs left FILE.csv.tmp
            partial += [p for p in glob.glob(os.path.join(item, "*.csv.tmp*")) if PARTIAL_RE.search(p)]
        elif os.path.realpath(item) == out_real:
            raise InputError(f"--out {out_path}: is one of the inputs")
        elif PARTIAL_RE.search(item):
            partial.append(item)
        elif os.path.isfile(item):
            complete.append(item)
        elif os.path.exists(item):
            raise InputError(f"{item}: not a regular file or folder")
        else:
            raise InputError(f"{item}: no such file or folder")
    return sorted(set(complete)), sorted(set(partial)), scanned


def read_rank(path, header, log, scanned=False):
    """The rank record of a complete file (None for a header-only file whose name does not say
    its rank, or for a file found in a folder whose rows hold several ranks: an earlier merge's
    output). header: the first file's (header names, raw line), or None."""
    run = lscsv.load(path, allow_empty=True)
    if scanned and "rank" in run.header and len({r["rank"] for r in run.rows}) > 1:
        log.write(f"merge: note: {path} holds the rows of several ranks (an earlier merge's output); left out\n")
        return run, None
    if header is not None and run.header != header[0]:
        raise InputError(f"{path}: header differs from {header[2]}'s (mixed schema)")
    missing = [c for c in ("git_commit", "suite_version") + FLEET_COLUMNS if c not in run.header]
    if missing:
        raise InputError(f"{path}: no column {missing[0]} (not written by linstate-bench --fleet)")
    rows = run.rows
    if not rows:
        m = RANK_NAME_RE.search(os.path.basename(path))
        if not m or int(m["rank"]) >= int(m["world"]):
            log.write(f"merge: note: {path} has no rows and its name does not say its rank; left out\n")
            return run, None
        log.write(f"merge: note: {path} has no rows (rank {m['rank']} of {m['world']} got no case)\n")
        return run, dict(path=path, rows=[], rank=int(m["rank"]), world=int(m["world"]),
                         job=m["job"] or "", commit=None, suite=None, gpu=None)
    rank, world = one_value(path, rows, "rank"), one_value(path, rows, "world_size")
    if not rank.isdigit() or not world.isdigit() or int(rank) >= int(world):
        raise InputError(f"{path}: rank {rank!r} of world_size {world!r} (not a fleet rank's file)")
    commit = one_value(path, rows, "git_commit") + ("+dirty" if one_value(path, rows, "git_dirty") == "1" else "")
    return run, dict(path=path, rows=rows, rank=int(rank), world=int(world),
                     job=one_value(path, rows, "job_id"), commit=commit,
                     suite=one_value(path, rows, "suite_version"),
                     gpu=one_value(path, rows, "gpu_uuid") or one_value(path, rows, "host"))


def drop_copies(ranks, scanned, log):
    """ranks less the folder-found files whose rows are line for line an earlier-kept file's (a
    one-rank fleet's merged.csv beside its rank file, or a copy); a rank name
    (..._rank<r>of<n>.csv) is kept before another name. Different rows under one rank stay, for
    the duplicate-rank check."""
    kept, seen = [], {}
    order = sorted(ranks, key=lambda r: (RANK_NAME_RE.search(os.path.basename(r["path"])) is None, r["path"]))
    for r in order:
        lines = tuple(row["_raw"] for row in r["rows"])
        if lines and lines in seen and r["path"] in scanned:
            log.write(f"merge: note: {r['path']} has the same rows as {seen[lines]}; left out\n")
            continue
        seen.setdefault(lines, r["path"])
        kept.append(r)
    return sorted(kept, key=lambda r: r["path"])


def merge(inputs, out_path, allow_mixed=False, log=None):
    """Writes the merged CSV; returns the exit status (0 or 1). Raises InputError."""
    log = log or sys.stdout
    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            raise InputError(f"--out {out_path}: cannot create its folder: {e.strerror}") from None
    files, partials, scanned = collect(inputs, out_path)
    lscsv.check_output_file(out_path, files + partials)
    if not files and not partials:
        raise InputError(f"no rank files (*.csv) in {' '.join(inputs)}")
    header, ranks = None, []
    for path in files:
        run, rank = read_rank(path, header, log, path in scanned)
        if header is None:
            header = (run.header, run.header_raw, path)
        if rank is not None:
            ranks.append(rank)
    ranks = drop_copies(ranks, scanned, log)
    # A header-only file names its job as bench/fleet.c wrote it into the name ('_' for every
    # character outside [A-Za-z0-9.-]): it belongs to the fleet whose job reads so.
    jobs = {(file_safe(r["job"]), r["world"]): r["job"] for r in ranks if r["rows"]}
    for r in ranks:
        if not r["rows"]:
            r["job"] = jobs.get((r["job"], r["world"]), r["job"])
    for what in ("commit", "suite"):
        seen = sorted({r[what] for r in ranks if r[what] is not None})
        if len(seen) > 1 and not allow_mixed:
            raise InputError(f"mixed {'git commits' if what == 'commit' else 'suite versions'}: "
                             f"{', '.join(seen)} (pass --allow-mixed to merge anyway)")

    # Ranks that left only a .tmp file: rank from its rows when it wrote any.
    incomplete = []
    for path in partials:
        rows = lscsv.load(path, allow_empty=True, partial=True).rows
        ids = {(r.get("job_id", ""), r.get("world_size", ""), r.get("rank", "")) for r in rows}
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
            for row in r["rows"]:
                by_key.setdefault(measurement(row), set()).add(r["rank"])
        mode = "replicate" if any(len(s) > 1 for s in by_key.values()) else "shard"
        name = f"job {job}" if job else "job (none)"
        gpus = sorted({r["gpu"] for r in members if r["gpu"] is not None})
        log.write(f"merge: {name}: {mode}, {len(members)} of {world} ranks, {len(by_key)} cases, "
                  f"GPUs {', '.join(gpus)}\n")
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

    lines = [header[1]] if header is not None else []
    ordered = sorted(ranks, key=lambda r: (r["job"], r["world"], r["rank"]))
    lines += [row["_raw"] for r in ordered for row in r["rows"]]
    lscsv.write_file(out_path, "".join(line + "\n" for line in lines), files + partials)
    log.write(f"merge: {len(ranks)} rank files, {len(lines) - (header is not None)} rows -> {out_path}\n")
    return status


def main(argv=None):
    p = lscsv.ArgumentParser(prog="merge.py", description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="folders of rank files, or rank files")
    p.add_argument("--out", required=True, help="merged CSV")
    p.add_argument("--allow-mixed", action="store_true", help="merge files of different commits or suite versions")
    a = p.parse_args(argv)
    try:
        return merge(a.inputs, a.out, a.allow_mixed)
    except InputError as e:
        return lscsv.report("merge.py", e)


if __name__ == "__main__":
    sys.exit(main())
