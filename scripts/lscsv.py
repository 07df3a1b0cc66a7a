"""lscsv.py — the one reader of linstate CSVs. compare.py, plot.py, export.py, side_by_side.py,
fleet/merge.py and fleet/fleet_report.py import it; docs/compare.md#the-csv-reader says the same.

load(path) reads one file and checks, each failure an InputError whose message is ONE line naming
the file, the line and the bad value (the scripts print it and exit 2):
  text      UTF-8 (a leading BOM is skipped); ends with a newline, since the writer ends every row
            with one: a last line without it is a row torn by a killed writer
  header    every schema-v1 column (order not enforced); no column named twice or left unnamed;
            a file with schema_version 2 rows also needs the v2 columns (impl, impl_version,
            tuning, kernel). Columns are only ever appended (docs/csv.md), so any other column
            (a newer writer's, an impl's own) is kept as text and otherwise ignored
  rows      at least one (allow_empty: a header-only file, e.g. a fleet rank with no case of its
            own); each has as many cells as the header; schema_version 1 or 2; a status of the
            documented form: ok, skipped:<reason>, fail_<what>, error:<kind>
  numbers   device_index and graph (join-key parts) are integers on every row, repetition when
            filled, noise_pct a real when filled. On an ok row the integer and real columns parse
            (an empty real cell is NaN, the writer's NaN), and the times are finite and > 0 with
            time_us_p10 <= time_us_median <= time_us_p90
The row dicts carry parsed numbers in those columns, text elsewhere, '_line' (the row's line
number) and '_raw' (the row's text as written, without its newline: merge.py copies it). A v1
row gets impl from backend (V1_IMPL_BY_BACKEND) and empty impl_version, tuning and kernel.

The join key (row_key) is the one every script uses: (case, variant, impl, tuning, cache_regime,
graph, GPU), a vk-layout gdn/kda row joining as "<case>/layout:vk".
"""
import argparse
import csv
import gzip
import io
import math
import os
import re
import sys
import tempfile
import zlib
from dataclasses import dataclass
from typing import NamedTuple

SCHEMA_VERSIONS = ("1", "2")

# Schema v1 columns, in the order the harness writes them (docs/csv.md). Files may carry
# more columns after these (repetition, rotated, time_us_min, time_us_max, held, ...).
SCHEMA_V1_COLUMNS = (
    "schema_version", "suite_version", "git_commit", "git_dirty", "timestamp", "host", "backend",
    "device_index", "gpu_name", "driver_version", "cuda_runtime", "sm_count", "sm_clock_mhz",
    "mem_clock_mhz", "cpuset", "numa_node", "case", "mechanism", "op", "variant", "model", "tp",
    "batch", "draft_tokens", "layers", "conv_dtype", "state_dtype", "pool_slots", "cache_regime",
    "graph", "samples", "time_us_median", "time_us_p10", "time_us_p90", "time_us_mean",
    "time_us_stddev", "bytes", "gbps", "copy_peak_gbps", "pct_of_copy_peak", "max_rel_err",
    "status",
)
# Appended by schema v2 (after the v1 extras); required in a file with schema_version 2 rows.
SCHEMA_V2_COLUMNS = ("impl", "impl_version", "tuning", "kernel")
# impl of a v1 row, by backend (v1 only had our CUDA kernels and the host reference).
V1_IMPL_BY_BACKEND = {"cuda": "linstate", "host": "host"}
# Parsed on every row: they are part of the join key.
KEY_INT_COLUMNS = ("device_index", "graph")
# Parsed on status=ok rows only (a row that was not timed leaves them empty).
OK_INT_COLUMNS = ("tp", "batch", "draft_tokens", "layers", "pool_slots", "samples", "bytes")
OK_FLOAT_COLUMNS = ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean",
                    "time_us_stddev", "gbps", "copy_peak_gbps", "pct_of_copy_peak", "max_rel_err")
# Optional columns parsed when present and filled.
OPTIONAL_INT_COLUMNS = ("repetition",)
OPTIONAL_FLOAT_COLUMNS = ("noise_pct",)
# The times of an ok row, in the order they must be: finite, > 0, p10 <= median <= p90.
TIME_COLUMNS = ("time_us_p10", "time_us_median", "time_us_p90")
# The documented status forms (docs/csv.md#statuses).
# The tail (<reason>, <what>, <kind>) is free text, so a new status of one of these forms
# (error:crash, fail_bounds, ...) is read without a change here.
STATUS_RE = re.compile(r"ok|(skipped:|fail_|error:)\S.*")


class InputError(Exception):
    """Bad input: the message is the one line printed before exiting with status 2."""


def one_line(text):
    """text with its control characters (newlines too) shown as spaces, so an error about a
    hostile value is still one line."""
    return re.sub(r"[\x00-\x1f\x7f\u2028\u2029\x85]", " ", str(text))


@dataclass
class Run:
    """One CSV file: its path, its header and its rows (dicts, see the module doc)."""
    path: str
    rows: list
    header: tuple = ()
    header_raw: str = ""    # the header line as written, without its newline

    def devices(self):
        """Sorted distinct (backend, gpu_name) pairs of the run."""
        return sorted({(r["backend"], r["gpu_name"]) for r in self.rows})

    def holds(self):
        """Sorted distinct values of the held column; files from before that column timed
        every sample unheld ("0")."""
        return sorted({r.get("held", "") or "0" for r in self.rows})

    def schemas(self):
        """Sorted distinct schema_version values of the rows ("1", "2")."""
        return sorted({r["schema_version"] for r in self.rows})

    def gpu_uuids(self):
        """Sorted distinct gpu_uuid values; None when some row has none (v1 files, files from
        before the column was filled, host rows)."""
        uuids = {r.get("gpu_uuid") or "" for r in self.rows}
        return None if "" in uuids else sorted(uuids)

    def values(self, col, rows=None):
        """Sorted distinct values of a column over rows (default: every row)."""
        return sorted({r[col] for r in (self.rows if rows is None else rows)})

    def commits(self):
        """Distinct git commits (with '+dirty' when the tree was dirty), in file order."""
        seen = []
        for r in self.rows:
            c = r["git_commit"][:12] + ("+dirty" if r["git_dirty"] not in ("0", "") else "")
            if c not in seen:
                seen.append(c)
        return seen


# ------------------------------------------------------------------------------------ reading

def read_text(path, partial=False):
    """The file's text. InputError when it cannot be read, is not a regular file, is not UTF-8,
    or (unless partial) its last line has no newline (a torn row). partial (a killed writer's
    temporary) drops a torn last line instead. A path ending in .gz is read through gzip (the
    large CSVs kept under results/ are stored so, results/README.md)."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(f"{path}: not a whole gzip file ({one_line(str(e))})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x})") from None
    if text and not text.endswith("\n"):
        if not partial:
            line = text.count("\n") + 1
            raise InputError(f"{path}:{line}: last line has no newline: a torn row (the writer "
                             f"was killed?)")
        text = text[:text.rfind("\n") + 1]
    return text


def records(path, text):
    """(line number, raw text, cells) per CSV record of text, blank lines skipped."""
    lines = []

    def feed():
        for line in io.StringIO(text, newline=""):
            lines.append(line)
            yield line
    reader = csv.reader(feed(), strict=True)
    try:
        for cells in reader:
            raw = "".join(lines).rstrip("\r\n")
            lines.clear()
            if cells and any(c.strip() for c in cells):
                yield reader.line_num, raw, cells
    except csv.Error as e:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None


def parse_number(path, lineno, col, text, kind):
    """int or float of a CSV cell; InputError naming file, line, column and value otherwise.
    An empty real cell is NaN (the writer's form of NaN/inf); an empty integer is an error."""
    if kind is float and text.strip() == "":
        return float("nan")
    try:
        return int(text) if kind is int else float(text)
    except ValueError:
        shown = one_line(text if len(text) <= 40 else text[:40] + "...")
        raise InputError(f"{path}:{lineno}: column {col}: not a number: {shown!r}") from None


def check_header(path, header):
    """Refuses (InputError) a header without the v1 columns, or with a column named twice or
    left unnamed."""
    if "schema_version" not in header:
        raise InputError(f"{path}: no schema_version column (not a linstate CSV?)")
    seen = set()
    for i, h in enumerate(header):
        if not h:
            raise InputError(f"{path}:1: column {i + 1} has no name")
        if h in seen:
            raise InputError(f"{path}:1: column {one_line(h)!r} named twice")
        seen.add(h)
    missing = [c for c in SCHEMA_V1_COLUMNS if c not in seen]
    if missing:
        raise InputError(f"{path}: missing columns: {', '.join(missing)}")


def load(path, allow_empty=False, partial=False):
    """Reads and validates one linstate CSV (see the module doc); returns a Run."""
    text = read_text(path, partial)
    recs = records(path, text)
    first = next(recs, None)
    if first is None:
        if partial:
            return Run(path, [], ())
        raise InputError(f"{path}: empty file (no header)")
    header = tuple(h.strip() for h in first[2])
    check_header(path, header)
    rows = []
    for lineno, raw, cells in recs:
        if len(cells) != len(header):
            raise InputError(f"{path}:{lineno}: {len(cells)} cells, header has {len(header)}")
        row = parse_row(path, lineno, dict(zip(header, cells)), header)
        row["_raw"] = raw
        rows.append(row)
    if not rows and not allow_empty:
        raise InputError(f"{path}: no data rows (header only)")
    return Run(path, rows, header, first[1])


def parse_row(path, lineno, row, header=None):
    """Validates and converts one row (see the module doc); header (default: the row's own
    columns) is checked for the v2 columns when the row says schema_version 2."""
    version = row["schema_version"].strip()
    if version not in SCHEMA_VERSIONS:
        raise InputError(f"{path}:{lineno}: schema_version is {one_line(row['schema_version'])!r}, "
                         f"this script reads {' and '.join(SCHEMA_VERSIONS)}")
    row["schema_version"] = version
    if version == "1":
        backend = row["backend"]
        row["impl"] = V1_IMPL_BY_BACKEND.get(backend, backend)
        row["impl_version"] = row["tuning"] = row["kernel"] = ""
    else:
        missing = [c for c in SCHEMA_V2_COLUMNS if c not in (header or row)]
        if missing:
            raise InputError(f"{path}:{lineno}: schema_version 2 row, but the header lacks "
                             f"columns: {', '.join(missing)}")
    if not STATUS_RE.fullmatch(row["status"]):
        raise InputError(f"{path}:{lineno}: column status: {one_line(row['status'])!r} is not "
                         f"ok, skipped:<reason>, fail_<what> or error:<kind>")
    row["_line"] = lineno
    for col in KEY_INT_COLUMNS:
        row[col] = parse_number(path, lineno, col, row[col], int)
    for col in OPTIONAL_INT_COLUMNS:
        if row.get(col, "") != "":
            row[col] = parse_number(path, lineno, col, row[col], int)
    for col in OPTIONAL_FLOAT_COLUMNS:
        row[col] = parse_number(path, lineno, col, row.get(col, ""), float)
    if row["status"] != "ok":
        return row
    for col in OK_INT_COLUMNS:
        row[col] = parse_number(path, lineno, col, row[col], int)
    for col in OK_FLOAT_COLUMNS:
        row[col] = parse_number(path, lineno, col, row[col], float)
    for col in TIME_COLUMNS:
        v = row[col]
        if not math.isfinite(v) or v <= 0:
            raise InputError(f"{path}:{lineno}: column {col}: invalid time {v!r} in an ok row "
                             f"(finite and > 0)")
    p10, med, p90 = (row[c] for c in TIME_COLUMNS)
    if not p10 <= med <= p90:
        raise InputError(f"{path}:{lineno}: times out of order in an ok row: time_us_p10 {p10!r}, "
                         f"time_us_median {med!r}, time_us_p90 {p90!r} (p10 <= median <= p90)")
    return row


# ------------------------------------------------------------------------------------ the key

KEY_FIELDS = ("case", "variant", "impl", "tuning", "cache_regime", "graph", "device_index")


class Key(NamedTuple):
    """A join key; a field that is not part of the identity is "*"."""
    case: str
    variant: str
    impl: str
    tuning: str
    cache: str
    graph: object
    dev: object


def row_key(row, ignore_device=False, drop_variant=False, drop_impl=False, drop_tuning=False,
            by_uuid=False):
    """The join key of a row: (case, variant, impl, tuning, cache_regime, graph, GPU), the GPU
    being gpu_uuid when by_uuid else device_index, with the GPU, variant, impl and/or tuning
    replaced by '*' when they are not part of the identity. A gdn/kda row run on the vk state
    layout joins as "<case>/layout:vk" (kv, the original layout, keeps the bare case key),
    except when impls are set against each other: each impl runs its own layout there."""
    case = row["case"]
    if row.get("state_layout") == "vk" and not drop_impl:
        case += "/layout:vk"
    return Key(case,
               "*" if drop_variant else row["variant"],
               "*" if drop_impl else row["impl"],
               "*" if drop_tuning else row["tuning"],
               row["cache_regime"],
               row["graph"],
               "*" if ignore_device else (row.get("gpu_uuid", "") if by_uuid else row["device_index"]))


def format_key(key):
    """Human form of a key: the case, then the non-default qualifiers."""
    case, variant, impl, tuning, cache, graph, dev = key
    parts = [case]
    if variant not in ("", "*"):
        parts.append(f"variant={variant}")
    if impl not in ("", "*"):
        parts.append(f"impl={impl}")
    if tuning not in ("", "*"):
        parts.append(f"tuning={tuning}")
    parts.append(f"cache={cache}")
    if graph:
        parts.append("graph")
    if dev != "*":
        parts.append(f"dev={dev}")
    return " ".join(parts)


def median(values):
    """Median of a non-empty sequence (mean of the two middle values when even)."""
    values = sorted(values)
    n = len(values)
    mid = n // 2
    return values[mid] if n % 2 else 0.5 * (values[mid - 1] + values[mid])


def geomean(pairs):
    """Geometric mean of the ratios num / den of pairs of positive numbers (NaN when there are
    none), from the logs: a quotient that would overflow or underflow a float cannot break it."""
    if not pairs:
        return float("nan")
    return math.exp(min(sum(log_ratio(n, d) for n, d in pairs) / len(pairs), 700.0))


def log_ratio(after, before):
    """log(after / before) of two positive times, without forming the quotient."""
    return math.log(after) - math.log(before)


# ------------------------------------------------------------------------------------ outputs

def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_file(path, inputs, what="--out"):
    """Refuses (InputError) an output file that is one of the inputs, exists as something other
    than a regular file, or lies in a folder that is missing or cannot be written."""
    for i in inputs:
        if os.path.exists(path) and _same_file(path, i) or os.path.realpath(path) == os.path.realpath(i):
            raise InputError(f"{what} {path}: is one of the inputs ({i})")
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{what} {path}: exists and is not a regular file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{what} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{what} {path}: folder {folder} is not writable")


def check_output_dir(path, inputs, what="--out"):
    """Creates the output folder; InputError when it is one of the inputs, is something else
    than a folder, or cannot be created or written."""
    for i in inputs:
        if os.path.realpath(path) == os.path.realpath(i):
            raise InputError(f"{what} {path}: is one of the inputs")
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{what} {path}: exists and is not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise InputError(f"{what} {path}: cannot create: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{what} {path}: folder is not writable")


def write_file(path, text, inputs=(), what="--out"):
    """Writes text to path through a private temporary (mkstemp) in path's folder, renamed into
    place: a reader never sees a half-written file, and an input is never written over
    (check_output_file first). InputError on any failure; the temporary is removed."""
    check_output_file(path, inputs, what)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=folder)
    except OSError as e:
        raise InputError(f"{what} {path}: cannot create a temporary in {folder}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(f"{what} {path}: cannot write: {e.strerror}") from None


# ------------------------------------------------------------------------------------ CLI

class ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error (prog: error: message) and exit 2, like every other bad
    input of the scripts."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {one_line(message)}\n")
        sys.exit(2)


def report(prog, err):
    """Prints InputError err as the one line '<prog>: error: <message>'; returns 2."""
    print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
    return 2


def run_main(prog, parser, body, argv=None):
    """parser's arguments (bad options: one line, exit 2), then body(args)'s exit status, or
    InputError as one line and 2."""
    args = parser.parse_args(argv)
    try:
        return body(args)
    except InputError as e:
        return report(prog, e)
