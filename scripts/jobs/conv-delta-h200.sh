#!/usr/bin/env bash
# scripts/jobs/conv-delta-h200.sh OUT_DIR [STEP...] — on the GPU machine: the fused conv + GDN/KDA
# op's two linstate kernels (knob conv_delta.variant: cluster, tiles; docs/ops.md) checked and
# timed against each other, against the two ops back to back and against SGLang's fused KDA
# verify kernel — the A/B that is to set conv_delta.variant=auto (kernels/cuda/choose.c).
# Needs build/ (cmake --preset default, built) with .peers carried (the sglang impl), LS_GIT_COMMIT
# set. Steps (default: checks ab; in order):
#   checks  ctest test_gpu_conv_delta (its matrix under both variants; ctest.log), then
#           compute-sanitizer memcheck and racecheck of it on the quick matrix
#           (sanitize-TOOL.log; sanitize.txt, one exit status each), each bounded by
#           CONV_DELTA_CHECK_S seconds (default 330)
#   ab      ab.csv: family conv_delta, variants one-kernel and back-to-back, linstate under
#           cluster and tiles beside sglang (KDA verify T 3..8 only), kimi-linear (KDA) and
#           qwen3-next (GDN), tp 2, B 1, 8, 32, 128, 512, T 1, 4, 8; then scripts/compare.py:
#             compare-tiles.txt       tiles against cluster (one-kernel)
#             compare-b2b-TUNE.txt    back-to-back against one-kernel under TUNE (cluster, tiles)
#             compare-sglang.txt      sglang against linstate tiles (one-kernel)
# Exit status 1 when a run, the test or a sanitizer fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: scripts/jobs/conv-delta-h200.sh OUT_DIR [STEP...]}
shift
steps=${*:-checks ab}
limit=${CONV_DELTA_CHECK_S:-330}
B=build/bench/linstate-bench
[ -x "$B" ] || { echo "conv-delta-h200: $B missing (build first)" >&2; exit 2; }
mkdir -p "$out"
rc=0
for s in $steps; do
  echo "== $s $(date -u +%T)" >&2
  case $s in
    checks)
      ctest --test-dir build -R '^test_gpu_conv_delta$' --timeout "$limit" --output-on-failure >"$out/ctest.log" 2>&1 || rc=1
      grep -E 'Test +#|tests passed|tests failed|worst error' "$out/ctest.log" >&2
      bin=$(find build/tests -type f -name test_gpu_conv_delta -perm -u+x | head -1)
      : >"$out/sanitize.txt"
      for tool in memcheck racecheck; do
        LS_GPU_TEST_QUICK=1 timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 99 "$bin" \
          >"$out/sanitize-$tool.log" 2>&1
        echo "sanitize $tool: exit $?" >>"$out/sanitize.txt"
      done
      cat "$out/sanitize.txt" >&2
      grep -qv ': exit 0$' "$out/sanitize.txt" && rc=1 ;;
    ab)
      "$B" --impl linstate,sglang --family conv_delta --variant one-kernel,back-to-back \
        --model kimi-linear-48b-a3b,qwen3-next-80b-a3b --tp 2 --batch 1,8,32,128,512 --draft 1,4,8 \
        --tune linstate:conv_delta.variant=cluster --tune linstate:conv_delta.variant=tiles --explain \
        --out "$out/ab.csv" >"$out/ab.txt" 2>"$out/ab.log" || rc=1
      tail -1 "$out/ab.txt" >&2
      cmp() { # name, compare.py args...
        local n=$1; shift
        python3 scripts/compare.py "$out/ab.csv" "$@" >"$out/compare-$n.txt" 2>&1
        echo "compare $n: $(grep -m1 -E '^[0-9]+ SLOWER' "$out/compare-$n.txt")" >&2
      }
      cmp tiles --variants one-kernel:one-kernel --impls linstate:linstate \
        --tuning-old conv_delta.variant=cluster --tuning-new conv_delta.variant=tiles
      for t in cluster tiles; do
        cmp "b2b-$t" --variants back-to-back:one-kernel --impls linstate:linstate \
          --tuning-old conv_delta.variant=$t --tuning-new conv_delta.variant=$t
      done
      cmp sglang --variants one-kernel:one-kernel --impls sglang:linstate --tuning-new conv_delta.variant=tiles ;;
    *) echo "conv-delta-h200: unknown step '$s'" >&2; exit 2 ;;
  esac
done
exit $rc
