#!/usr/bin/env python3
"""Every kind of bad input, for every script that reads linstate CSVs: compare.py, plot.py,
export.py, side_by_side.py, fleet/merge.py and fleet/fleet_report.py each answer ONE line on
stderr and exit 2 (never a traceback, never a partial output), and a valid file of the same shape
passes (so the failure is the bad input's). One test per (script, kind), generated below.

Kinds of input: not UTF-8, a torn last row, header only (merge takes it: an idle fleet rank's
file), NaN / zero / negative times, p10 > median, a missing column, another schema version, an
unknown status. Kinds of output (scripts that write files): the output is one of the inputs,
is not a regular file (or folder), or cannot be written. Exit 77 when numpy/scipy/matplotlib
are missing.
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402

synth.require("matplotlib", "scipy")
PY = sys.executable
COLUMNS = synth.FLEET_CSV_COLUMNS
UUID = synth.UUID


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def ranked(rows, idx, world):
    for r in rows:
        r.update(gpu_uuid=UUID[idx], rank=str(idx), world_size=str(world), job_id="77", node=f"n{idx}",
                 host=f"n{idx}")
    return rows


def replicate_rows():
    """Two impls (linstate, sglang) on two GPUs: valid input for compare, plot, export,
    side_by_side and fleet_report alike."""
    out = []
    for idx in range(2):
        out += ranked(synth.v2(synth.suite(), scale=0.8 + 0.01 * idx), idx, 2)
        out += ranked(synth.v2(synth.suite(), impl="sglang", tuning="", scale=1.0 + 0.01 * idx), idx, 2)
    return out


def rank_file_rows():
    """One fleet rank's rows (rank 0 of 1): valid input for merge."""
    return ranked(synth.v2(synth.suite()), 0, 1)


# script -> (path under scripts/, valid rows, argv builder (input path, work dir) -> args)
SCRIPTS = {
    "compare": ("compare.py", replicate_rows, lambda p, d: [p, p]),
    "plot": ("plot.py", replicate_rows, lambda p, d: [p, "--out", os.path.join(d, "plots")]),
    "export": ("export.py", replicate_rows, lambda p, d: [p, "--out", os.path.join(d, "out.json")]),
    "side_by_side": ("side_by_side.py", replicate_rows,
                     lambda p, d: [p, "--out", os.path.join(d, "side.md")]),
    "merge": (os.path.join("fleet", "merge.py"), rank_file_rows,
              lambda p, d: [p, "--out", os.path.join(d, "merged.csv")]),
    "fleet_report": (os.path.join("fleet", "fleet_report.py"), replicate_rows,
                     lambda p, d: [p, "--out", os.path.join(d, "report")]),
}


def set_cell(col, value):
    def f(rows, cols):
        rows[0][col] = value
        return rows, cols
    return f


def order(rows, cols):
    rows[0]["time_us_p10"] = repr(float(rows[0]["time_us_median"]) * 1.5)
    return rows, cols


def drop_column(rows, cols):
    return rows, [c for c in cols if c != "time_us_p90"]


# kind -> (row/column mutation or None, byte mutation or None, words the error line must hold)
def not_utf8(data):
    i = data.index(b"\n") + 20
    return data[:i] + b"\xff\xfe" + data[i + 2:]


def torn(data):
    return data[:-7]


def header_only(data):
    return data[:data.index(b"\n") + 1]


INPUT_KINDS = {
    "not_utf8": (None, not_utf8, ["not UTF-8"]),
    "torn_last_row": (None, torn, ["torn"]),
    "header_only": (None, header_only, ["header only"]),
    "nan_time": (set_cell("time_us_median", "nan"), None, ["time_us_median"]),
    "zero_time": (set_cell("time_us_p10", "0"), None, ["time_us_p10"]),
    "negative_time": (set_cell("time_us_median", "-3.5"), None, ["time_us_median"]),
    "times_out_of_order": (order, None, ["out of order"]),
    "missing_column": (drop_column, None, ["time_us_p90"]),
    "schema_version": (set_cell("schema_version", "3"), None, ["schema_version"]),
    "unknown_status": (set_cell("status", "fine"), None, ["status", "'fine'"]),
}
# Header-only is an idle fleet rank's file: merge takes it (tests/fleet/test_idle_rank.sh).
ACCEPTED = {("merge", "header_only")}


class Base(synth.TempCase):
    def write(self, name, rows, cols=COLUMNS, mutate_bytes=None):
        path = synth.write_csv(os.path.join(self.dir, name), rows, cols)
        if mutate_bytes:
            data = read_bytes(path)
            with open(path, "wb") as f:
                f.write(mutate_bytes(data))
        return path

    def run_script(self, script, args):
        p = subprocess.run([PY, os.path.join(synth.SCRIPTS, SCRIPTS[script][0])] + args,
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def assert_one_line(self, rc, out, err, needles):
        self.assertNotIn("Traceback", err)
        self.assertEqual(rc, 2, f"stdout:\n{out}\nstderr:\n{err}")
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, f"not one line:\n{err}")
        for n in needles:
            self.assertIn(n, lines[0])

    def assert_no_output(self):
        """Nothing written next to the inputs: no output, no temporary left behind."""
        left = sorted(f for f in os.listdir(self.dir) if not f.startswith("in"))
        self.assertEqual([f for f in left if f != "plots" and f != "report"], [], left)
        for sub in ("plots", "report"):
            if os.path.isdir(os.path.join(self.dir, sub)):
                self.assertEqual(os.listdir(os.path.join(self.dir, sub)), [])


class ValidInput(Base):
    def test_every_script_takes_the_valid_file(self):
        for script, (_, rows, argv) in SCRIPTS.items():
            path = self.write("in.csv", rows())
            rc, out, err = self.run_script(script, argv(path, self.dir))
            self.assertEqual(rc, 0, f"{script}: {out}\n{err}")


class NewStatusesAndColumns(Base):
    """The reader takes every status of the documented forms and columns it does not know
    (appended by a newer writer), in every script."""

    def test_read_everywhere(self):
        rows = replicate_rows()
        for r, status in zip(rows, ["error:crash", "error:timeout", "error:exit", "fail_bounds",
                                    "skipped:resumed"]):
            r.update(status=status, time_us_median="", time_us_p10="", time_us_p90="")
        for r in rows:
            r.update(resumed_from="x.csv", source="py:impl.py")
        for script, (_, _, argv) in SCRIPTS.items():
            if script == "merge":
                continue  # one rank per file: rank_file_rows below
            path = self.write("in.csv", rows, COLUMNS + ["resumed_from", "source"])
            rc, out, err = self.run_script(script, argv(path, self.dir))
            self.assertEqual(rc, 0, f"{script}: {out}\n{err}")
        rows = rank_file_rows()
        rows[0]["status"] = "error:crash"
        path = self.write("in.csv", rows)
        rc, out, err = self.run_script("merge", SCRIPTS["merge"][2](path, self.dir))
        self.assertEqual(rc, 0, out + err)


class BadInput(Base):
    pass


def make_input_test(script, kind):
    mutate_rows, mutate_bytes, needles = INPUT_KINDS[kind]

    def test(self):
        _, rows_of, argv = SCRIPTS[script]
        rows, cols = rows_of(), list(COLUMNS)
        if mutate_rows:
            rows, cols = mutate_rows(rows, cols)
        path = self.write("in.csv", rows, cols, mutate_bytes)
        rc, out, err = self.run_script(script, argv(path, self.dir))
        if (script, kind) in ACCEPTED:
            self.assertEqual(rc, 0, out + err)
            return
        self.assert_one_line(rc, out, err, ["in.csv"] + needles)
        self.assert_no_output()
    return test


for _script in SCRIPTS:
    for _kind in INPUT_KINDS:
        setattr(BadInput, f"test_{_script}_{_kind}", make_input_test(_script, _kind))


class BadOutput(Base):
    """--out that is an input, is not a regular file (folder), or cannot be written."""

    def check(self, script, args, needles, inputs):
        before = {p: read_bytes(p) for p in inputs}
        rc, out, err = self.run_script(script, args)
        self.assert_one_line(rc, out, err, needles)
        for p, data in before.items():
            self.assertEqual(read_bytes(p), data, f"{script} changed its input {p}")
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp" in f], [])


FILE_OUT = {"export": "--out", "side_by_side": "--out", "merge": "--out"}
DIR_OUT = {"plot": "--out", "fleet_report": "--out"}


def make_output_tests(script):
    _, rows_of, argv = SCRIPTS[script]

    def inputs(self):
        path = self.write("in.csv", rows_of())
        args = argv(path, self.dir)
        return path, args[:args.index("--out")]

    def out_is_input(self):
        path, args = inputs(self)
        self.check(script, args + ["--out", path], ["in.csv"], [path])

    def out_not_regular(self):
        path, args = inputs(self)
        if script in FILE_OUT:
            target = os.path.join(self.dir, "a-folder")
            os.mkdir(target)
            needle = "not a regular file"
        else:
            target = os.path.join(self.dir, "a-file")
            open(target, "w").close()
            needle = "not a folder"
        self.check(script, args + ["--out", target], [needle], [path])

    def out_unwritable(self):
        path, args = inputs(self)
        blocker = os.path.join(self.dir, "plain-file")
        open(blocker, "w").close()
        target = os.path.join(blocker, "sub", "out.x")  # a folder that cannot exist
        self.check(script, args + ["--out", target], ["out.x" if script in FILE_OUT else "sub"], [path])

    return {"out_is_input": out_is_input, "out_not_regular": out_not_regular, "out_unwritable": out_unwritable}


for _script in list(FILE_OUT) + list(DIR_OUT):
    for _kind, _fn in make_output_tests(_script).items():
        setattr(BadOutput, f"test_{_script}_{_kind}", _fn)


class MergeWritesAside(Base):
    def test_never_over_an_input_and_whole_or_absent(self):
        """merge.py --out naming one of its rank files: refused, the file untouched; a good merge
        leaves no temporary beside its output."""
        d = os.path.join(self.dir, "ranks")
        os.mkdir(d)
        r0 = synth.write_csv(os.path.join(d, "r0.csv"), rank_file_rows(), COLUMNS)
        data = read_bytes(r0)
        rc, out, err = self.run_script("merge", [r0, "--out", r0])
        self.assert_one_line(rc, out, err, ["one of the inputs"])
        self.assertEqual(read_bytes(r0), data)
        merged = os.path.join(d, "merged.csv")     # inside the input folder: skipped as an input
        rc, out, err = self.run_script("merge", [d, "--out", merged])
        self.assertEqual(rc, 0, out + err)
        rc, out, err = self.run_script("merge", [d, "--out", merged])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("1 rank files", out)
        self.assertEqual(sorted(os.listdir(d)), ["merged.csv", "r0.csv"])
        self.assertEqual(read_bytes(merged), data.replace(b"\r\n", b"\n"))  # rows as lines


if __name__ == "__main__":
    unittest.main(verbosity=2)
