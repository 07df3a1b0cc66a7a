#!/usr/bin/env bash
# scripts/test.sh — set up, configure, build and run every CTest test; non-zero on any failure.
# GPU tests (label gpu) skip themselves (exit 77) when no device is visible.
#   scripts/test.sh            default build (CUDA when nvcc is found), its host tests again as
#                              another machine (L2 size, core count), + ASan/UBSan host build
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

# The host suite again, as another machine: a 256 KiB L2 and one core reported by sysconf
# (tests/machine/fake_machine.c). A test that passes only with this machine's caches or cores
# fails here. GPU, Slurm and the long script/peer tests do not read the host's shape.
fake=build/tests/machine/libls_fake_machine.so
if [ -f "$fake" ] && [ ${#ctest_args[@]} -eq 0 ]; then
  echo "== the host tests as a machine with a 256 KiB L2 and 1 core" >&2
  LD_PRELOAD="$PWD/$fake" LS_FAKE_L2_BYTES=262144 LS_FAKE_L3_BYTES=0 LS_FAKE_NPROC=1 \
    ctest --test-dir build --output-on-failure -j "$jobs" -LE 'gpu|slurm|fleet|scripts|peers'
fi

if [ "$asan" -eq 1 ]; then
  echo "== ASan/UBSan host build" >&2
  cmake --preset asan >/dev/null
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'gpu|slow|slurm' "${ctest_args[@]}"
fi
