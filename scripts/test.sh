#!/usr/bin/env bash
# scripts/test.sh — set up, configure, build and run every CTest test; non-zero on any failure.
# GPU tests (label gpu) skip themselves (exit 77) when no device is visible.
#   scripts/test.sh            default build (CUDA when nvcc is found) + ASan/UBSan host build
#                              (the Slurm fleet tests, label slurm, run in the default build only)
#   scripts/test.sh --no-asan  skip the sanitizer build
#   scripts/test.sh -L gpu     pass extra arguments to ctest (here: only GPU tests)
set -euo pipefail
cd "$(dirname "$0")/.."
asan=1
ctest_args=()
for a in "$@"; do
  case "$a" in
    --no-asan) asan=0 ;;
    *) ctest_args+=("$a") ;;
  esac
done
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/setup.sh

echo "== default build" >&2
cmake --preset default >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" "${ctest_args[@]}"

if [ "$asan" -eq 1 ]; then
  echo "== ASan/UBSan host build" >&2
  cmake --preset asan >/dev/null
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'gpu|slow|slurm' "${ctest_args[@]}"
fi
