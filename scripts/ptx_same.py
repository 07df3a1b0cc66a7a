#!/usr/bin/env python3
"""ptx_same.py — is a kernel's code unchanged? Compare the kernel entries of two PTX files.

usage: ptx_same.py OLD.ptx NEW.ptx [--select REGEX] [--map PATTERN REPL]...

Each `.entry NAME(...) { ... }` of NEW is compared with the entry of OLD whose name is NAME after
the --map rewrites (Python re.sub, in the order given; none: the same name). Before comparing,
each body has its own name and its branch labels ($L__BB<function>_<block>, numbered by the
entry's place in the file) normalised, so a kernel added or removed elsewhere in the file does
not make the others differ. --select keeps only the NEW entries whose name matches REGEX
(re.search). One line per NEW entry: `same`, `differs` or `missing in OLD`; then a summary.

Use it to show that a refactor leaves the measured code as it was (`nvcc -ptx` of the same .cu at
both commits, same flags), or that a new template instance is the kernel an earlier run measured
(map its new name onto the old one). PTX equality says nothing about SASS flags outside the PTX
(ptxas options): compile both sides with the same command.

Exit status: 0 when every selected NEW entry is `same`; 1 when one differs or is missing; 2 on bad
input (an unreadable file, a file with no entry, a bad REGEX, nothing selected).
"""
import argparse
import re
import sys

ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")
LABEL = re.compile(r"\$L__BB\d+_")


def fail(msg):
    print(f"ptx_same.py: {msg}", file=sys.stderr)
    sys.exit(2)


def entries(path):
    """{name: normalised text of the entry, from `.entry` to its closing brace}."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    out = {}
    for m in ENTRY.finditer(text):
        open_at = text.find("{", m.end())
        if open_at < 0:
            fail(f"{path}: entry {m.group(1)} has no body")
        depth, i = 0, open_at
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth:
            fail(f"{path}: entry {m.group(1)}: unbalanced braces")
        body = text[m.start():i + 1].replace(m.group(1), "ENTRY")
        out[m.group(1)] = LABEL.sub("$L__BB_", body)
    if not out:
        fail(f"{path}: no .entry in the file (not PTX?)")
    return out


def compile_re(text, what):
    try:
        return re.compile(text)
    except re.error as e:
        fail(f"{what} '{text}': {e}")


def main(argv):
    ap = argparse.ArgumentParser(prog="ptx_same.py", description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--select", metavar="REGEX", help="only NEW entries whose name matches")
    ap.add_argument("--map", nargs=2, action="append", default=[], metavar=("PATTERN", "REPL"),
                    help="rewrite a NEW name into the OLD name to compare with (re.sub)")
    a = ap.parse_args(argv)
    sel = compile_re(a.select, "--select") if a.select is not None else None
    maps = [(compile_re(p, "--map"), r) for p, r in a.map]
    old, new = entries(a.old), entries(a.new)
    names = [n for n in new if sel is None or sel.search(n)]
    if not names:
        fail(f"--select '{a.select}' matches no entry of {a.new}")
    counts = {"same": 0, "differs": 0, "missing in OLD": 0}
    for n in names:
        o = n
        for pat, repl in maps:
            try:
                o = pat.sub(repl, o)
            except (re.error, IndexError) as e:
                fail(f"--map '{pat.pattern}' '{repl}': {e}")
        verdict = "missing in OLD" if o not in old else ("same" if old[o] == new[n] else "differs")
        counts[verdict] += 1
        print(f"{verdict:15s} {n}" + (f"  (OLD {o})" if o != n else ""))
    print(f"{len(names)} entries: {counts['same']} same, {counts['differs']} differ, "
          f"{counts['missing in OLD']} missing in OLD")
    return 0 if counts["same"] == len(names) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
