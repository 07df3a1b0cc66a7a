#!/usr/bin/env bash
# scripts/jobs/house-h200.sh OUT_DIR BEFORE_TREE BEFORE_COMMIT — on the GPU machine: did a code move
# (issue 24: bench/families, kernels/api, scripts/, results/) change anything a sweep measures?
#   1. builds linstate-bench of BEFORE_TREE (a source tree of BEFORE_COMMIT, e.g. `git archive`d
#      into an ignored folder and carried) in BEFORE_TREE/build as the default preset builds (RelWithDebInfo), sm_90 only;
#   2. the default sweep three times, one process after the other: this tree's build/ (built
#      before, `cmake --preset default -DLINSTATE_CUDA_ARCHS=90`) -> after-1.csv, BEFORE's ->
#      before.csv, this tree's again -> after-2.csv (each with its .txt table and .log);
#   3. same_cases.py before.csv after-1.csv (every case, every non-timing column identical),
#      compare.py after-1.csv after-2.csv (the A/A) and compare.py before.csv after-1.csv.
# Prints each sweep's wall time and the three verdicts; exit 1 when one fails.
# LS_GIT_COMMIT (this tree's commit) must be set; the before rows carry BEFORE_COMMIT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: house-h200.sh OUT_DIR BEFORE_TREE BEFORE_COMMIT}
before=${2:?usage: house-h200.sh OUT_DIR BEFORE_TREE BEFORE_COMMIT}
bcommit=${3:?usage: house-h200.sh OUT_DIR BEFORE_TREE BEFORE_COMMIT}
: "${LS_GIT_COMMIT:?set LS_GIT_COMMIT to the commit of this tree}"
after_bin=build/bench/linstate-bench
[ -x "$after_bin" ] || { echo "house-h200: $after_bin missing (build this tree first)" >&2; exit 2; }
mkdir -p "$out"
rc=0
{ cmake -S "$before" -B "$before/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLINSTATE_CUDA_ARCHS=90 &&
  cmake --build "$before/build" --target linstate-bench -j; } >"$out/before-build.log" 2>&1 ||
  { tail -30 "$out/before-build.log"; exit 1; }
sweep() { # name binary commit
  local t0=$SECONDS
  LS_GIT_COMMIT=$3 "$2" --out "$out/$1.csv" >"$out/$1.txt" 2>"$out/$1.log" || rc=1
  echo "sweep $1: $((SECONDS - t0)) s, $(tail -1 "$out/$1.txt")"
}
sweep after-1 "$after_bin" "$LS_GIT_COMMIT"
sweep before "$before/build/bench/linstate-bench" "$bcommit"
sweep after-2 "$after_bin" "$LS_GIT_COMMIT"
python3 scripts/jobs/same_cases.py "$out/before.csv" "$out/after-1.csv" >"$out/same-cases.txt"
echo "same_cases before vs after-1: rc $? ($(tail -1 "$out/same-cases.txt" | cut -c1-160))"
python3 scripts/compare.py "$out/after-1.csv" "$out/after-2.csv" >"$out/compare-aa.txt"
echo "compare A/A: rc $? ($(grep -m1 -E 'SLOWER|FASTER' "$out/compare-aa.txt" | cut -c1-160))"
python3 scripts/compare.py "$out/before.csv" "$out/after-1.csv" >"$out/compare-before-after.txt"
echo "compare before/after: rc $? ($(grep -m1 -E 'SLOWER|FASTER' "$out/compare-before-after.txt" | cut -c1-160))"
exit $rc
