#!/usr/bin/env bash
# scripts/bench.sh — the main command: set up, configure and build (CMake preset "default",
# build dir build/), then run linstate-bench with the given arguments.
#
#   scripts/bench.sh                      the default sweep (GPU: 3 presets x every family at tp 2,
#                                         B 1..512, T 1,2,3,4,8; host: a smoke sweep)
#   scripts/bench.sh --model qwen3-next-80b-a3b --tp 1,2,4,8 --state-dtype fp32,bf16
#   scripts/bench.sh --list               what would run
#
# The CSV lands in results/<gpu-name-slug or host>/<UTC time>Z-<pid>.csv (unless --out is given);
# the final table goes to stdout, progress to stderr. Exit status is linstate-bench's: 0 when
# every row is ok or skipped, 1 when a case failed (fail_numerics/error), 2 on a bad argument.
# --impl naming anything but linstate and host (a peer such as sglang, a Python impl such as
# py_sglang@PATH) or --impl-path also builds target linstate-impls: every peer library this build
# can make and the Python bridge.
# LINSTATE_SKIP_SETUP=1 skips scripts/setup.sh (e.g. an offline machine that is already set up).
# LINSTATE_BUILD_DIR=DIR uses that configured build folder instead of configuring build/ (tests).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

if [ "${LINSTATE_SKIP_SETUP:-0}" != "1" ]; then
  bash scripts/setup.sh
fi
targets=(linstate-bench)
prev=""
for a in "$@"; do
  names=""
  case "$prev" in --impl) names=$a ;; --impl-path) names=plugin ;; esac
  case "$a" in --impl=*) names=${a#--impl=} ;; --impl-path=*) names=plugin ;; esac
  for n in ${names//,/ }; do
    case "$n" in
      linstate | host) ;;
      *) targets=(linstate-bench linstate-impls) ;;
    esac
  done
  prev=$a
done
build=${LINSTATE_BUILD_DIR:-build}
if [ -z "${LINSTATE_BUILD_DIR:-}" ]; then
  echo "== configure (preset default, build/)" >&2
  cmake --preset default >/dev/null
fi
echo "== build ${targets[*]} ($build/)" >&2
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >&2
echo "== $build/bench/linstate-bench $*" >&2
exec "$build/bench/linstate-bench" "$@"
