#!/usr/bin/env python3
"""--resume (README "Resume a sweep", docs/csv.md "Resume") end to end on the host backend.

usage: test_bench_resume.py CHECK BENCH_BINARY
  kill     a sweep SIGKILLed mid-way, resumed from its temporary (with a torn row appended): the
           final CSV has every planned case exactly once, the rows of the killed run byte for byte,
           the new rows marked resumed_from, and the temporary is gone; the worker process never
           held the temporary (a descriptor inherited across exec kept its lock past the kill)
  rerun    rows with an error status, of another build or missing repetitions run again; the rest
           are kept as they were; a resume in place is refused when it would drop rows of another
           sweep
  errors   a missing file, a directory, an empty file, a file that is not a linstate CSV, another
           version's header, a damaged row and a temporary a live run holds: one line, exit 2,
           nothing written
  rows     a row of this header whose cells are not what the bench writes (schema_version 1, a
           status not in docs/csv.md "Statuses", a cell more or fewer, a non-numeric or negative
           repetition, a number column that is not a number, CR LF line ends): one line naming the
           line and what is wrong, exit 2, nothing written; every documented status is taken (fail_* and error:*
           run again, skipped:* kept byte for byte)
  version  (a third argument: the ls_test_oddversion_impl plugin) an impl version with a newline,
           a tab, a quote, longer than the cell: its rows are kept on --resume, in place and not
"""
import csv
import fcntl
import glob
import io
import os
import signal
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, LS_GIT_COMMIT="0123456789abcdef0123456789abcdef01234567", LS_GIT_DIRTY="0")
# 24 pool cases of >= 0.1 s of measured time each: long enough to be killed mid-way.
SWEEP = ["--backend", "host", "--family", "pool", "--model", "qwen3-next-80b-a3b,nemotron-h-8b", "--tp", "8",
         "--batch", "1,2,3", "--draft", "1,2", "--min-samples", "3", "--min-time", "0.1", "--max-time", "0.5",
         "--noise-target", "0"]
FAST = ["--backend", "host", "--family", "pool/alloc,pool/copy", "--model", "qwen3-next-80b-a3b", "--tp", "8",
        "--batch", "1,2", "--min-samples", "3", "--min-time", "0.001", "--max-time", "0.01"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(bench, args, cwd):
    p = subprocess.run([bench] + args, cwd=cwd, capture_output=True, text=True, timeout=300, env=ENV)
    return p.returncode, p.stdout, [l for l in p.stderr.splitlines() if l.strip()]


def lines(path):
    with open(path, newline="") as f:
        return f.read().split("\n")


def rows_of(text_lines):
    return list(csv.DictReader(io.StringIO("\n".join(text_lines))))


def planned(bench, args, cwd):
    rc, out, err = run(bench, args + ["--list"], cwd)
    if rc != 0:
        fail("--list: rc %d %s" % (rc, err))
    return [l for l in out.splitlines() if l]


def ident(r):
    return (r["case"], r["variant"], r["repetition"])


def fds_on(pid, path):
    """Descriptors of process pid open on path (Linux /proc; none when the process is gone)."""
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return []
    found = []
    for n in names:
        try:
            if os.path.realpath(os.readlink("/proc/%d/fd/%s" % (pid, n))) == os.path.realpath(path):
                found.append(n)
        except OSError:
            pass
    return found


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def check_kill(bench, tmp):
    keys = planned(bench, SWEEP, tmp)
    out = os.path.join(tmp, "run.csv")
    p = subprocess.Popen([bench] + SWEEP + ["--out", out], cwd=tmp, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=ENV)
    deadline, temp = time.time() + 240, None
    while time.time() < deadline and p.poll() is None:
        found = glob.glob(glob.escape(out) + ".tmp.*")
        if found and len(lines(found[0])) >= 7:  # header + 5 rows + ""
            temp = found[0]
            break
        time.sleep(0.05)
    # the worker process must not inherit the temporary (nor its lock: a SIGKILLed parent's worker
    # dies a moment later, and a resume started in that moment would take it for a live run's)
    held = {c: fds_on(c, temp) for c in children(p.pid)} if temp else {}
    p.send_signal(signal.SIGKILL)
    p.wait()
    if temp and not held:
        fail("no worker process under the running sweep")
    if any(held.values()):
        fail("the worker process holds the output temporary open: %s" % held)
    if not temp or os.path.exists(out):
        fail("the sweep was not killed mid-way (temp %s, final exists %s)" % (temp, os.path.exists(out)))
    old = lines(temp)[1:-1]  # complete rows (the kill may have torn the last one)
    if len(old) >= len(keys):
        fail("killed after every case (%d rows)" % len(old))
    if lines(temp)[-1] == "":  # not torn by the kill itself: a torn row as a kill leaves one
        with open(temp, "a") as f:
            f.write(old[-1][: len(old[-1]) // 2])
    rc, _, err = run(bench, SWEEP + ["--resume", temp], tmp)
    if rc != 0:
        fail("resume: rc %d\n%s" % (rc, "\n".join(err[-20:])))
    if os.path.exists(temp) or not os.path.exists(out):
        fail("after resume: temporary still there %s, final there %s" % (os.path.exists(temp), os.path.exists(out)))
    said = [l for l in err if "--resume" in l]
    if len(said) != 1 or "%d row(s) kept" % len(old) not in said[0] or "torn" not in said[0]:
        fail("resume summary: %r" % said)
    final = [l for l in lines(out)[1:] if l]
    rows = rows_of(lines(out))
    if sorted(r["case"] for r in rows) != sorted(keys):
        fail("final CSV: %d rows, cases differ from the %d planned (duplicates or missing)" % (len(rows), len(keys)))
    for l in old:
        if final.count(l) != 1:
            fail("a row of the killed run is not in the final CSV exactly once, byte for byte:\n%s" % l)
    new = [r for r, l in zip(rows, final) if l not in old]
    if len(new) != len(keys) - len(old) or any(r["resumed_from"] != temp for r in new):
        fail("new rows: %d (want %d), resumed_from %s" % (len(new), len(keys) - len(old),
                                                         sorted({r["resumed_from"] for r in new})))
    if any(r["resumed_from"] for r in rows_of([lines(out)[0]] + old)):
        fail("kept rows changed resumed_from")


def check_rerun(bench, tmp):
    src = os.path.join(tmp, "src.csv")
    rc, _, err = run(bench, FAST + ["--repetitions", "2", "--out", src], tmp)
    if rc != 0:
        fail("first run: rc %d %s" % (rc, err[-5:]))
    text = lines(src)
    header, body = text[0], [l for l in text[1:] if l]
    rows = rows_of([header] + body)
    cols = header.split(",")
    if len(rows) != 8:
        fail("first run: %d rows, want 8" % len(rows))

    def edited(line, col, value):
        cells = next(csv.reader([line]))
        cells[cols.index(col)] = value
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="").writerow(cells)
        return buf.getvalue()
    # row 0: error status; row 2: another build; row 5 (a rep 1): dropped; the rest kept
    body2 = [edited(body[0], "status", "error:timing"), body[1], edited(body[2], "git_commit", "f" * 40),
             body[3], body[4], body[6], body[7]]
    dropped = rows[5]
    with open(src, "w") as f:
        f.write("\n".join([header] + body2) + "\n")
    out = os.path.join(tmp, "new.csv")
    rc, _, err = run(bench, FAST + ["--repetitions", "2", "--resume", src, "--out", out], tmp)
    if rc != 0:
        fail("resume: rc %d %s" % (rc, err[-5:]))
    final = [l for l in lines(out)[1:] if l]
    frows = rows_of(lines(out))
    if sorted(map(ident, frows)) != sorted(map(ident, rows)):
        fail("final rows %s, want every (case, rep) once" % sorted(map(ident, frows)))
    for i in (1, 3, 4, 6, 7):
        if final.count(body[i]) != 1:
            fail("row %d (%s) not kept byte for byte" % (i, ident(rows[i])))
    for r in (rows[0], rows[2], dropped):
        again = [f for f in frows if ident(f) == ident(r)]
        if len(again) != 1 or again[0]["resumed_from"] != src or again[0]["status"] != "ok":
            fail("%s was not measured again: %s" % (ident(r), again))
    if lines(src)[1:] != body2 + [""]:
        fail("the resumed file was changed")
    # in place: refused while the file holds rows of another sweep (they would be lost) ...
    narrow = [a if a != "pool/alloc,pool/copy" else "pool/alloc" for a in FAST]
    rc, _, err = run(bench, narrow + ["--repetitions", "2", "--resume", out], tmp)
    if rc != 2 or len(err) != 1 or "would be lost" not in err[-1]:
        fail("in place with rows of another sweep: rc %d, %r" % (rc, err[-3:]))
    if [l for l in lines(out)[1:] if l] != final or glob.glob(out + ".tmp*"):
        fail("the refused in-place resume changed %s or left a temporary" % out)
    # ... and done when every row is of the sweep: nothing to run, the file as it was; one line
    # says so (no error of GB's about a run of no case)
    nothing = "nothing to run: all 4 cases are in " + out
    rc, _, err = run(bench, FAST + ["--repetitions", "2", "--resume", out], tmp)
    if rc != 0 or [l for l in lines(out)[1:] if l] != final or not any(l.endswith(nothing) for l in err) or \
            any("Failed to match" in l for l in err):
        fail("in-place resume of a complete file: rc %d, %r" % (rc, err[-3:]))
    # the sidecar aimed at the file resumed from: refused (it would replace the rows)
    rc, _, err = run(bench, FAST + ["--repetitions", "2", "--resume", out, "--out", os.path.join(tmp, "y.csv"),
                                    "--samples-out", "./" + os.path.relpath(out, tmp)], tmp)
    if rc != 2 or len(err) != 1 or "same file" not in err[0] or "--samples-out" not in err[0] or \
            [l for l in lines(out)[1:] if l] != final or glob.glob(out + ".tmp*"):
        fail("--samples-out naming the --resume file: rc %d, %r" % (rc, err[-3:]))
    # to a new file: the kept rows, byte for byte
    x4 = os.path.join(tmp, "x4.csv")
    rc, _, err = run(bench, FAST + ["--repetitions", "2", "--resume", out, "--out", x4], tmp)
    if rc != 0 or [l for l in lines(x4)[1:] if l] != final or not any(l.endswith(nothing) for l in err) or \
            any("Failed to match" in l for l in err):
        fail("complete resume to a new file: rc %d, %r" % (rc, err[-4:]))


def one_line(bench, args, want, tmp):
    out = os.path.join(tmp, "never.csv")
    rc, _, err = run(bench, FAST + ["--out", out] + args, tmp)
    if rc != 2 or len(err) != 1 or want not in err[0]:
        fail("%s: want exit 2 and one line with %r; rc %d, %r" % (args, want, rc, err))
    if glob.glob(out + "*"):
        fail("%s: an output was written" % args)


def check_errors(bench, tmp):
    good = os.path.join(tmp, "good.csv")
    rc, _, err = run(bench, FAST + ["--out", good], tmp)
    if rc != 0:
        fail("first run: %s" % err[-3:])
    text = lines(good)

    def write(name, data, mode="w"):
        path = os.path.join(tmp, name)
        with open(path, mode) as f:
            f.write(data)
        return path
    one_line(bench, ["--resume", os.path.join(tmp, "missing.csv")], "missing.csv", tmp)
    one_line(bench, ["--resume", tmp], "not a regular file", tmp)
    one_line(bench, ["--resume", write("empty.csv", "")], "empty", tmp)
    one_line(bench, ["--resume", write("notes.txt", "hello,world\n1,2\n")], "not a linstate CSV", tmp)
    one_line(bench, ["--resume", write("bin.csv", b"\x00\x01\xff\xfe", "wb")], "not a linstate CSV", tmp)
    one_line(bench, ["--resume", write("cr.csv", "a\rb\x1b[2J,c\n1,2\n")], "header 'a?b?[2J,c'", tmp)
    old_header = text[0].rsplit(",", 1)[0]  # a version without the last column
    one_line(bench, ["--resume", write("old.csv", "\n".join([old_header] + text[1:]))], "another linstate version", tmp)
    damaged = [text[0], text[1][:40], text[2]] + text[3:]
    one_line(bench, ["--resume", write("damaged.csv", "\n".join(damaged))], "line 2", tmp)
    one_line(bench, ["--resume", write("quote.csv", "\n".join([text[0], text[1] + '"x'] + text[2:]))], "line 2", tmp)
    one_line(bench, ["--resume", ""], "--resume", tmp)
    locked = write("held.csv.tmp.ABCDEF", "\n".join(text))
    with open(locked) as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        one_line(bench, ["--resume", locked], "running", tmp)


def raw_cells(line):
    """The cells of a CSV line as written (quotes kept), split on the commas outside quotes."""
    cells, cur, quoted = [], "", False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            cells.append(cur)
            cur = ""
        else:
            cur += ch
    return cells + [cur]


def check_rows(bench, tmp):
    good = os.path.join(tmp, "good.csv")
    rc, _, err = run(bench, FAST + ["--out", good], tmp)
    if rc != 0:
        fail("first run: %s" % err[-3:])
    text = lines(good)
    header, body = text[0], [l for l in text[1:] if l]
    cols = header.split(",")
    n = len(cols)

    def set_cell(line, col, raw):
        cells = raw_cells(line)
        cells[cols.index(col)] = raw
        return ",".join(cells)

    def damaged(name, i, line, want):
        path = os.path.join(tmp, name + ".csv")
        with open(path, "w") as f:
            f.write("\n".join([header] + body[:i] + [line] + body[i + 1:]) + "\n")
        one_line(bench, ["--resume", path], want, tmp)
    damaged("v1", 0, set_cell(body[0], "schema_version", "1"), "line 2: schema_version 1, this build writes 2")
    damaged("v1q", 2, set_cell(body[2], "schema_version", '"1"'), "line 4: schema_version 1, this build writes 2")
    damaged("bogus", 0, set_cell(body[0], "status", '"bogus"'), "line 2: unknown status 'bogus'")
    damaged("nostatus", 1, set_cell(body[1], "status", '""'), "line 3: unknown status ''")
    damaged("skipped", 0, set_cell(body[0], "status", '"skipped:whim"'), "line 2: unknown status 'skipped:whim'")
    damaged("extra", 0, body[0] + ",1", "line 2: %d cells, the header has %d" % (n + 1, n))
    damaged("extraq", 0, body[0] + ',"a,b"', "line 2: %d cells, the header has %d" % (n + 1, n))
    damaged("fewer", 3, body[3].rsplit(",", 1)[0], "line 5: %d cells, the header has %d" % (n - 1, n))
    damaged("rep", 0, set_cell(body[0], "repetition", "x"), "line 2: repetition 'x' is not an integer")
    damaged("repneg", 0, set_cell(body[0], "repetition", "-1"), "line 2: repetition -1 is negative")
    damaged("rep_empty", 0, set_cell(body[0], "repetition", ""), "line 2: repetition '' is not an integer")
    damaged("dev", 0, set_cell(body[0], "device_index", "0x"), "line 2: device_index '0x' is not an integer")
    damaged("median", 0, set_cell(body[0], "time_us_median", "fast"), "line 2: time_us_median 'fast' is not a number")
    damaged("nan", 0, set_cell(body[0], "gbps", "nan"), "line 2: gbps 'nan' is not a number")
    damaged("ctl", 0, set_cell(body[0], "status", '"ok\rx"'), "line 2: unknown status 'ok?x'")
    damaged("cr", 1, body[1] + "\r", "line 3: ends in CR LF")
    crlf = os.path.join(tmp, "crlf.csv")
    with open(crlf, "w", newline="\r\n") as f:
        f.write("\n".join([header] + body) + "\n")
    one_line(bench, ["--resume", crlf], "line 1 ends in CR LF", tmp)
    # every status docs/csv.md lists is taken: fail_* and error:* run again, skipped:* kept
    again = ["fail_numerics", "fail_bounds", "error:setup", "error:verify", "error:timing", "error:crash",
             "error:exit", "error:timeout"]
    src = os.path.join(tmp, "statuses.csv")
    with open(src, "w") as f:
        f.write("\n".join([header] + [set_cell(body[0], "status", '"%s"' % s) for s in again] + body[1:]) + "\n")
    out = os.path.join(tmp, "again.csv")
    rc, _, err = run(bench, FAST + ["--resume", src, "--out", out], tmp)
    said = [l for l in err if "--resume" in l]
    if rc != 0 or len(said) != 1 or "%d row(s) kept" % (len(body) - 1) not in said[0] \
            or "%d run again" % len(again) not in said[0]:
        fail("fail_*/error:* rows: rc %d, %r" % (rc, err[-3:]))
    final = [l for l in lines(out)[1:] if l]
    new = [l for l in final if l not in body]
    if len(final) != len(body) or len(new) != 1 or raw_cells(new[0])[cols.index("case")] != \
            raw_cells(body[0])[cols.index("case")]:
        fail("fail_*/error:* rows: not measured again once: %r" % new)
    skipped = [set_cell(body[i], "status", '"%s"' % s)
               for i, s in enumerate(["skipped:oom", "skipped:no_graph", "skipped:unsupported"])]
    with open(src, "w") as f:
        f.write("\n".join([header] + skipped + body[3:]) + "\n")
    out = os.path.join(tmp, "kept.csv")
    rc, _, err = run(bench, FAST + ["--resume", src, "--out", out], tmp)
    if rc != 0 or [l for l in lines(out)[1:] if l] != skipped + body[3:]:
        fail("skipped:* rows not kept byte for byte: rc %d, %r" % (rc, err[-3:]))


def check_version(bench, tmp, plugin):
    """An impl whose version text the CSV cleans (newline, tab, quote; longer than the cell keeps):
    its rows are this sweep's on --resume (the cleaned text is compared on both sides), so a
    resume in place of a complete file runs nothing and one of a file missing a row runs only it."""
    args = ["--backend", "host", "--impl-path", plugin, "--impl", "oddversion", "--family", "pool/copy,conv1d_update",
            "--model", "qwen3-next-80b-a3b", "--tp", "8", "--batch", "1,2", "--draft", "1", "--min-samples", "3",
            "--min-time", "0.001", "--max-time", "0.01"]
    src = os.path.join(tmp, "odd.csv")
    rc, _, err = run(bench, args + ["--out", src], tmp)
    text = lines(src) if os.path.exists(src) else []
    rows = rows_of(text)
    if rc != 0 or len(rows) != 4 or any(r["status"] != "ok" for r in rows):
        fail("first run: rc %d, %d rows:\n%s" % (rc, len(rows), "\n".join(err[-5:])))
    version = rows[0]["impl_version"]
    if not version.startswith('odd 1.0 (built from "a" tree)') or "\n" in version or "\t" in version:
        fail("impl_version written as %r" % version)
    rc, _, err = run(bench, args + ["--resume", src], tmp)
    if rc != 0 or not any(l.endswith("nothing to run: all 4 cases are in " + src) for l in err) or \
            lines(src) != text:
        fail("in-place resume of a complete file: rc %d, %r" % (rc, err[-3:]))
    # a row missing: the other three kept byte for byte, none "not of this sweep", one case run
    body = [l for l in text[1:] if l]
    part = os.path.join(tmp, "part.csv")
    with open(part, "w") as f:
        f.write("\n".join([text[0]] + body[:3]) + "\n")
    out = os.path.join(tmp, "done.csv")
    rc, _, err = run(bench, args + ["--resume", part, "--out", out], tmp)
    said = [l for l in err if "row(s) kept" in l]
    final = [l for l in lines(out)[1:] if l] if os.path.exists(out) else []
    if rc != 0 or len(said) != 1 or "3 row(s) kept" not in said[0] or " 0 not of this sweep" not in said[0] or \
            final[:3] != body[:3] or sorted(map(ident, rows_of([text[0]] + final))) != sorted(map(ident, rows)):
        fail("resume of a file missing a row: rc %d, %r" % (rc, err[-3:]))


def main():
    check, bench = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        if check == "version":
            check_version(bench, tmp, sys.argv[3])
        else:
            {"kill": check_kill, "rerun": check_rerun, "errors": check_errors, "rows": check_rows}[check](bench,
                                                                                                       tmp)
    print("ok")


if __name__ == "__main__":
    main()
