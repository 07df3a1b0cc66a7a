#!/usr/bin/env bash
# scripts/jobs/ceiling-probe.sh [OUT_FILE] [probe options] — on the GPU machine: builds ls_ceiling_probe
# (tools/ceiling_probe.cu) in build-gpu and runs it, output to stdout and OUT_FILE (default
# build-gpu/ceiling-probe.txt). Options pass through (--size-mib, --free-gb, --chunk-gb, --rounds,
# --device). Without a visible GPU it builds nothing and exits 77. docs/timing.md says how to read it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-gpu/ceiling-probe.txt}
[ $# -gt 0 ] && shift
build=${LS_GPU_BUILD_DIR:-build-gpu}
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "ceiling-probe: no visible GPU: SKIPPED" >&2
    exit 77
fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target ls_ceiling_probe -j "$(nproc)" >/dev/null
mkdir -p "$(dirname "$out")"
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
        --format=csv,noheader 2>/dev/null | sed 's/^/# before: /' || true
    "$build/tools/ls_ceiling_probe" "$@"
    nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
        --format=csv,noheader 2>/dev/null | sed 's/^/# after: /' || true
} | tee "$out"
