#!/usr/bin/env python3
"""linstate-bench with impl plugins, end to end on the host runtime (CTest label plugin).

  test_plugin_cli.py CHECK --bench BIN --example SO --wrong SO --bad-KIND SO ...

CHECK:
  sweep   the example plugin next to the built-in host impl: example conv/pool rows ok within
          tolerance, gdn rows skipped:unsupported, impl/impl_version/tuning/kernel columns, a
          host row for every example case; --tune points give rows with their tuning strings
  wrong   the "wrong" plugin (conv output +4 bf16 ulps): exit 1, conv rows fail_numerics over
          the 1e-2 tolerance, pool rows ok, gdn rows skipped:unsupported
  errors  plugins linstate must refuse: exit 2 and exactly one stderr line naming the problem
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []
EX_DEFAULT = "copy.chunk=row,conv.loop=row"
CONV_TOL = 1e-2  # bench_verify_tolerance: every conv1d_update case


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, file=sys.stderr)


def run(args, *extra, cwd=None):
    cmd = [os.path.abspath(args.bench)] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240, cwd=cwd)
    return p


def sweep(args, out, *extra, expect_rc=0):
    p = run(args, "--backend", "host", "--tp", "8", "--min-samples", "3", "--min-time", "0.001",
            "--max-time", "0.01", "--out", out, *extra)
    check(p.returncode == expect_rc,
          "rc %d, want %d for %s\nstderr tail:\n%s" % (p.returncode, expect_rc, " ".join(extra), p.stderr[-3000:]))
    rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
    check(len(rows) > 0, "no CSV rows in %s" % out)
    return rows, p


def family(r):
    return r["op"].split("/")[0]


def key(r):
    return tuple(r[k] for k in ("op", "variant", "model", "tp", "batch", "draft_tokens", "conv_dtype",
                                "state_dtype"))


def check_sweep(args, tmp):
    rows, p_sweep = sweep(args, os.path.join(tmp, "sweep.csv"), "--impl-path", args.example, "--impl",
                          "example,host", "--family", "conv1d_update,pool,gdn", "--batch", "1,3", "--draft", "1,3")
    ex = [r for r in rows if r["impl"] == "example"]
    host = [r for r in rows if r["impl"] == "host"]
    said = [ln for ln in p_sweep.stderr.splitlines() if "impl example has no" in ln]
    check(said == ["linstate-bench: impl example has no gdn: its cases that call it are skipped:unsupported"],
          "why the gdn rows are skipped, once: %s" % said)
    check(len(ex) + len(host) == len(rows), "rows of impls other than example/host: %s"
          % sorted({r["impl"] for r in rows}))
    check(len(ex) == len(host), "%d example rows vs %d host rows" % (len(ex), len(host)))
    check(sorted(map(key, ex)) == sorted(map(key, host)), "example and host rows cover different cases")
    fams = {}
    for r in ex:
        fams.setdefault(family(r), []).append(r)
    check(sorted(fams) == ["conv1d_update", "gdn", "pool"], "example families %s" % sorted(fams))
    check({r["op"] for r in fams.get("pool", [])} == {"pool/alloc", "pool/free", "pool/copy", "pool/fork",
                                                        "pool/accept"},
          "pool ops of example: %s" % sorted({r["op"] for r in fams.get("pool", [])}))
    check({r["batch"] for r in ex} == {"1", "3"} and {r["draft_tokens"] for r in ex} == {"1", "3"},
          "batch/draft axes of example rows")
    for r in ex:
        name = r["case"]
        check(r["impl_version"] == "example 1.0", "%s: impl_version %r" % (name, r["impl_version"]))
        check(r["tuning"] == EX_DEFAULT, "%s: tuning %r, want %r" % (name, r["tuning"], EX_DEFAULT))
        if family(r) == "gdn":
            check(r["status"] == "skipped:unsupported", "%s: status %r, want skipped:unsupported" % (name, r["status"]))
            continue
        check(r["status"] == "ok", "%s: status %r" % (name, r["status"]))
        tol = 0.0 if family(r) == "pool" else CONV_TOL
        check(r["max_rel_err"] != "" and float(r["max_rel_err"]) <= tol,
              "%s: max_rel_err %r over %g" % (name, r["max_rel_err"], tol))
        check(r["time_us_median"] != "" and float(r["time_us_median"]) > 0, "%s: no time" % name)
        if family(r) == "conv1d_update":
            check(r["kernel"].startswith("example_conv_row B="), "%s: kernel %r" % (name, r["kernel"]))
    for r in host:
        check(r["status"] == "ok", "host %s: status %r" % (r["case"], r["status"]))
        check(r["tuning"] == "" and r["impl_version"] == "float64 reference",
              "host %s: tuning %r version %r" % (r["case"], r["tuning"], r["impl_version"]))

    # Two tuning points of the example, one prefixed: rows carry the full knob string.
    rows, _ = sweep(args, os.path.join(tmp, "tune.csv"), "--impl-path", args.example, "--impl", "example,host",
                    "--model", "qwen3-next-80b-a3b", "--family", "conv1d_update,pool/copy,pool/accept",
                    "--batch", "3", "--draft", "1,3", "--tune", "copy.chunk=bytes",
                    "--tune", "example:conv.loop=channel")
    by = {}
    for r in rows:
        by.setdefault((r["impl"], r["tuning"]), []).append(r)
    want = {("example", "copy.chunk=bytes,conv.loop=row"), ("example", "copy.chunk=row,conv.loop=channel"),
            ("host", "")}
    check(set(by) == want, "impl x tuning points %s, want %s" % (sorted(by), sorted(want)))
    for (im, tune), rs in by.items():
        check(len(rs) == 4, "%s %r: %d rows, want 4 (2 conv + pool/copy + pool/accept)" % (im, tune, len(rs)))
        for r in rs:
            check(r["status"] == "ok", "%s %r %s: status %r" % (im, tune, r["case"], r["status"]))
            if im == "example" and family(r) == "conv1d_update":
                loop = "channel" if "conv.loop=channel" in tune else "row"
                check(r["kernel"].startswith("example_conv_%s " % loop), "%s %r: kernel %r" % (r["case"], tune,
                                                                                         r["kernel"]))


def check_wrong(args, tmp):
    rows, p = sweep(args, os.path.join(tmp, "wrong.csv"), "--impl-path", args.wrong, "--impl", "wrong",
                    "--family", "conv1d_update,pool,gdn", "--batch", "1,3", "--draft", "1,3", expect_rc=1)
    check(all(r["impl"] == "wrong" for r in rows), "rows of other impls")
    conv = [r for r in rows if family(r) == "conv1d_update"]
    pool = [r for r in rows if family(r) == "pool"]
    gdn = [r for r in rows if family(r) == "gdn"]
    check(len(conv) > 0 and len(pool) > 0 and len(gdn) > 0, "conv %d pool %d gdn %d rows" % (len(conv), len(pool),
                                                                                            len(gdn)))
    for r in conv:
        check(r["status"] == "fail_numerics", "%s: status %r, want fail_numerics" % (r["case"], r["status"]))
        err = float(r["max_rel_err"]) if r["max_rel_err"] else float("nan")
        # +4 ulps of a bf16 value: 4 * 2^-8 / m relative, m in [1, 2): 1.56 % to 3.13 % of the largest.
        check(CONV_TOL < err < 0.05, "%s: max_rel_err %r, want in (1e-2, 5e-2)" % (r["case"], r["max_rel_err"]))
        check(r["time_us_median"] in ("", "0", "nan"), "%s: a failed case was timed (%r)" % (r["case"],
                                                                                             r["time_us_median"]))
    for r in pool:
        check(r["status"] == "ok" and float(r["max_rel_err"]) == 0, "%s: status %r err %r"
              % (r["case"], r["status"], r["max_rel_err"]))
    for r in gdn:
        check(r["status"] == "skipped:unsupported", "%s: status %r" % (r["case"], r["status"]))
    check("over tolerance" in p.stderr, "stderr does not report the tolerance failure")


def check_errors(args, tmp):
    cases = [
        (args.bad_noentry, "exports no linstate_impl_v1"),
        (args.bad_abi, "impl ABI 3, this linstate speaks 2"),
        (args.bad_null, "linstate_impl_v1(2) returned NULL"),
        (args.bad_knob, "knob copy.chunk: values 'row||bytes' must be"),
        (args.bad_clash, "name 'host' is already taken"),
        (os.path.join(tmp, "libmissing.so"), "cannot load " + os.path.join(tmp, "libmissing.so")),
    ]
    for path, phrase in cases:
        p = run(args, "--backend", "host", "--impl-path", path, "--list")
        lines = p.stderr.splitlines()
        what = os.path.basename(path)
        check(p.returncode == 2, "%s: rc %d, want 2" % (what, p.returncode))
        check(len(lines) == 1, "%s: %d stderr lines, want 1:\n%s" % (what, len(lines), p.stderr))
        check(len(lines) >= 1 and lines[0].startswith("linstate-bench: --impl-path: ") and phrase in lines[0]
              and path in lines[0], "%s: stderr %r lacks %r and the path" % (what, p.stderr, phrase))
        check(p.stdout == "", "%s: stdout not empty: %r" % (what, p.stdout[:200]))
    # A bare file name is the file in the current directory (as the docs' `--impl-path libexample.so`);
    # one that is not there is refused saying so.
    shutil.copy(args.example, os.path.join(tmp, "libexample.so"))
    p = run(args, "--backend", "host", "--impl-path", "libexample.so", "--impl", "example", "--list", cwd=tmp)
    check(p.returncode == 0 and "/impl:example" in p.stdout, "bare name in the current directory: rc %d\n%s"
          % (p.returncode, p.stderr))
    p = run(args, "--backend", "host", "--impl-path", "libnosuch.so", "--list", cwd=tmp)
    check(p.returncode == 2 and "(no such file in the current directory either)" in p.stderr,
          "a bare name found nowhere: rc %d\n%s" % (p.returncode, p.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["sweep", "wrong", "errors"])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--wrong", required=True)
    for k in ("noentry", "abi", "null", "knob", "clash"):
        ap.add_argument("--bad-" + k, required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        {"sweep": check_sweep, "wrong": check_wrong, "errors": check_errors}[args.check](args, tmp)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
