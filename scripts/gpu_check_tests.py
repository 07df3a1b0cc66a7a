#!/usr/bin/env python3
"""scripts/gpu_check_tests.py BUILD_DIR < ctest --show-only=json-v1 output

What gpu-check.sh's sanitizer passes run, one line per test ctest lists:
  NAME bin PATH     the test's command is a program of the build (its own binary): sanitize PATH
  NAME run RUNNER   the command runs an interpreter (python3, bash, ...; directly or through
                    `cmake -E env`): RUNNER drives linstate-bench or a plugin, not sanitized
A `bin` PATH that is not an executable file is gpu-check's "binary not found" (a failure).
Exit status 2 when stdin is not ctest's json.
"""
import json
import os
import re
import sys

INTERPRETER = re.compile(r"^(python[0-9.]*|bash|sh|perl)$")


def classify(test, build):
    cmd = test.get("command") or []
    if not cmd:
        return "run", "(no command)"
    for arg in cmd:
        if INTERPRETER.match(os.path.basename(arg)):
            return "run", os.path.basename(arg)
    first = os.path.realpath(cmd[0])
    if first == build or first.startswith(build + os.sep):
        return "bin", cmd[0]
    return "run", os.path.basename(cmd[0])


def main(argv):
    if len(argv) != 2:
        print("usage: gpu_check_tests.py BUILD_DIR < ctest --show-only=json-v1", file=sys.stderr)
        return 2
    build = os.path.realpath(argv[1])
    try:
        tests = json.load(sys.stdin)["tests"]
    except (ValueError, KeyError, TypeError) as e:
        print(f"gpu_check_tests.py: stdin is not ctest's json ({e})", file=sys.stderr)
        return 2
    for t in tests:
        kind, what = classify(t, build)
        print(t["name"], kind, what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
