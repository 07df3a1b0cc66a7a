#!/usr/bin/env python3
"""Every relative link of the repository's Markdown resolves (CTest scripts_doc_links, label scripts).

  test_doc_links.py [REPO]

Walks every *.md under REPO (default: this file's repository; folders starting with "." or
"build" are skipped), and for each link `[text](target)` that is not a URL checks that the target
file or folder exists and that a `#anchor` names a heading of the target Markdown file, slugged as
GitHub does (lower case, punctuation other than "-" and "_" dropped, each space a "-", "-1", "-2"
for repeats). Links and headings inside code (fenced blocks, `spans`) do not count. Prints one line
per broken link (file:line: target: why) and exits 1 if there is one, else prints "ok". It first
checks itself on a planted tree (a broken anchor, a missing file, GitHub's slugs of punctuation).
"""
import os
import re
import sys
import tempfile

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """(line number, text) of each line outside fenced code, with `code spans` blanked."""
    fenced = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                fenced = None if fenced == m.group(1) else (fenced or m.group(1))
                continue
            if fenced is None:
                yield n, re.sub(r"`+[^`]*`+", lambda s: "`" + " " * (len(s.group(0)) - 2) + "`", line)


def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path, cache={}):  # noqa: B006 (a per-run cache)
    if path not in cache:
        seen, out = {}, set()
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        fenced = None
        for line in lines:
            m = FENCE.match(line)
            if m:
                fenced = None if fenced == m.group(1) else (fenced or m.group(1))
                continue
            h = HEADING.match(line) if fenced is None else None
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                out.add(s if k == 0 else "%s-%d" % (s, k))
            out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
        cache[path] = out
    return cache[path]


def check_file(path, repo):
    bad = []
    for n, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = "%s:%d: %s" % (os.path.relpath(path, repo), n, target)
            if not os.path.exists(dest):
                bad.append(where + ": no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append(where + ": no heading '#%s' in %s" % (anchor, os.path.relpath(dest, repo)))
    return bad


def markdown_files(repo):
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(root, f)


def self_check():
    """The checker finds what it must on a planted tree, and passes what GitHub resolves."""
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "docs"))
        with open(os.path.join(d, "docs", "b.md"), "w") as f:
            f.write("# B\n## Fused conv update + delta rule\n## Sidecar (`--samples-out FILE`)\n## B\n"
                    "```sh\n# not a heading\n```\n")
        with open(os.path.join(d, "a.md"), "w") as f:
            f.write("[ok](docs/b.md#fused-conv-update--delta-rule) [ok](docs/b.md#sidecar---samples-out-file)\n"
                    "[ok](docs/b.md#b-1) [ok](#a) [ok](https://x/y#z) `[code](no.md)`\n# A\n"
                    "[bad](docs/b.md#not-a-heading)\n[bad](docs/c.md)\n```\n[code](no.md)\n```\n")
        got = [b.split(": ", 1)[0] for b in check_file(os.path.join(d, "a.md"), d)]
        return got == ["a.md:4", "a.md:5"], got


def main(argv):
    ok, got = self_check()
    if not ok:
        print("self-check: broken links found at %s, want a.md:4 and a.md:5" % got, file=sys.stderr)
        return 1
    repo = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = list(markdown_files(repo))
    bad = [b for f in files for b in check_file(f, repo)]
    for b in bad:
        print(b)
    if bad:
        print("%d broken link(s) in %d Markdown files" % (len(bad), len(files)), file=sys.stderr)
        return 1
    print("ok: %d Markdown files" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
