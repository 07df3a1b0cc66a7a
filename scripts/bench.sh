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
# LINSTATE_SKIP_SETUP=1 skips scripts/setup.sh (e.g. an offline machine that is already set up).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

if [ "${LINSTATE_SKIP_SETUP:-0}" != "1" ]; then
  bash scripts/setup.sh
fi
echo "== configure + build (preset default, build/)" >&2
cmake --preset default >/dev/null
cmake --build build -j "$jobs" --target linstate-bench >&2
echo "== build/bench/linstate-bench $*" >&2
exec build/bench/linstate-bench "$@"
