#!/usr/bin/env bash
# scripts/jobs/aa-h200.sh OUT_DIR [STEP...] — on the GPU machine: the A/A of the default sweep (two
# processes of one build, compare.py), alone on the GPU, and the GPU test of the pool's queued
# slot operations. Needs build/ (cmake --preset default ..., built) and LS_GIT_COMMIT set.
# Steps (default: aa):
#   pool   test_gpu_state_ops (quick matrix, with the queued slot operations): state-ops.txt
#   aa     aa-1.csv, aa-2.csv (the default sweep twice) and compare-aa.txt
#   bind   the default sweep's pool family in 3 processes each with --bind gpu and --bind core,
#          alternating: bind-{gpu,core}-N.csv and bind-spread.txt (scripts/jobs/spread.py: how far
#          a case moves between processes; does one pinned core narrow pool/fork's spread?)
# Exit status 1 when a step fails (compare.py's exit 1: a case SLOWER or FASTER).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: scripts/jobs/aa-h200.sh OUT_DIR [STEP...]}
shift
B=build/bench/linstate-bench
[ -x "$B" ] || { echo "aa-h200: $B missing (build first)" >&2; exit 2; }
mkdir -p "$out"
rc=0
for s in ${*:-aa}; do
  echo "== $s $(date -u +%T)" >&2
  case $s in
    pool)
      LS_GPU_TEST_QUICK=1 timeout 300 build/tests/gpu/test_gpu_state_ops >"$out/state-ops.txt" 2>&1 || rc=1
      echo "state ops: $(tail -1 "$out/state-ops.txt")" >&2 ;;
    aa)
      for i in 1 2; do
        "$B" --backend cuda --out "$out/aa-$i.csv" >"$out/aa-$i.txt" 2>"$out/aa-$i.log" || rc=1
      done
      python3 scripts/compare.py "$out/aa-1.csv" "$out/aa-2.csv" >"$out/compare-aa.txt" 2>&1 || rc=1
      grep -m1 -E '^[0-9]+ SLOWER' "$out/compare-aa.txt" >&2 ;;
    bind)
      for i in 1 2 3; do
        for m in gpu core; do
          "$B" --backend cuda --family pool --bind $m --out "$out/bind-$m-$i.csv" >/dev/null 2>"$out/bind-$m-$i.log" || rc=1
        done
      done
      python3 scripts/jobs/spread.py gpu="$out/bind-gpu-1.csv,$out/bind-gpu-2.csv,$out/bind-gpu-3.csv" \
        core="$out/bind-core-1.csv,$out/bind-core-2.csv,$out/bind-core-3.csv" >"$out/bind-spread.txt" 2>&1 || rc=1
      grep -E 'pool/(fork|alloc|free)' "$out/bind-spread.txt" >&2 ;;
    *) echo "aa-h200: unknown step '$s'" >&2; exit 2 ;;
  esac
done
exit $rc
