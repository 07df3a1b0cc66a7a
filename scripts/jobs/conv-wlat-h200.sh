#!/usr/bin/env bash
# scripts/jobs/conv-wlat-h200.sh [OUT_DIR] — on the GPU machine: the correctness test and the A/B
# that set the auto rule of conv.variant=wlat (kernels/cuda/conv_wlat.cuh; LS_CONV_WLAT_MAX_B_DECODE
# / _VERIFY in kernels/cuda/choose.h). Steps:
#   1. ctest -R '^test_gpu_conv$' (the matrix under every conv tuning, wlat's three included):
#      ctest.log
#   2. one run, same inputs: linstate under conv.variant=auto, =wlat, =wlat with conv.prefetch=off,
#      beside the peers of CONV_WLAT_IMPLS, window-major (Kimi) and channel-major (Qwen3-Next,
#      which wlat leaves to auto: its rows must come out SAME) conv at tp 2, B 1, 8, 32, 128, 512,
#      T 1, 2, 4, 8: ab-conv.csv (console table ab-conv.txt)
#   3. compare.py of each wlat tuning against auto (compare-auto-vs-wlat*.txt; exit 1 = something
#      SLOWER, expected where wlat loses: that is what sets the limits) and of wlat against each
#      peer (compare-PEER-vs-wlat.txt)
# Environment: LINSTATE_BENCH (default build/bench/linstate-bench; built with the default preset
# when missing), CONV_WLAT_IMPLS (default linstate,sglang; add py_vllm where the Python bridge is
# built, as scripts/jobs/peers-h200.sh's build step does).
# Exit status: 0 when the test passed and every run finished; 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
out=${1:-results/h200/conv-wlat-$commit}
bench=${LINSTATE_BENCH:-build/bench/linstate-bench}
impls=${CONV_WLAT_IMPLS:-linstate,sglang}
mkdir -p "$out"
rc=0
if [ ! -x "$bench" ]; then
  { cmake --preset default && cmake --build build -j; } >"$out/build.log" 2>&1 \
    || { echo "conv-wlat: build failed (see $out/build.log)" >&2; exit 1; }
fi
ctest --test-dir build -R '^test_gpu_conv$' --output-on-failure >"$out/ctest.log" 2>&1 || rc=1
grep -E "tests passed|tests failed" "$out/ctest.log" >&2
"$bench" --impl "$impls" --family conv1d_update --model kimi-linear-48b-a3b,qwen3-next-80b-a3b --tp 2 \
  --batch 1,8,32,128,512 --draft 1,2,4,8 \
  --tune linstate:conv.variant=auto --tune linstate:conv.variant=wlat \
  --tune linstate:conv.variant=wlat,linstate:conv.prefetch=off \
  --out "$out/ab-conv.csv" >"$out/ab-conv.txt" 2>"$out/ab-conv.log" || rc=1
auto=conv.variant=auto
wlat=conv.variant=wlat,conv.prefetch=on
wlat_np=conv.variant=wlat,conv.prefetch=off
python3 scripts/compare.py "$out/ab-conv.csv" --tunings "$auto:$wlat" >"$out/compare-auto-vs-wlat.txt"
echo "auto -> wlat: compare rc $?" >&2
python3 scripts/compare.py "$out/ab-conv.csv" --tunings "$auto:$wlat_np" >"$out/compare-auto-vs-wlat-noprefetch.txt"
echo "auto -> wlat,prefetch=off: compare rc $?" >&2
for p in ${impls//,/ }; do
  [ "$p" = linstate ] && continue
  python3 scripts/compare.py "$out/ab-conv.csv" --impls "$p:linstate" --tuning-new "$wlat" \
    >"$out/compare-$p-vs-wlat.txt"
  echo "$p -> linstate wlat: compare rc $?" >&2
done
exit $rc
