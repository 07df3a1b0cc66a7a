#!/usr/bin/env bash
# scripts/jobs/variants-h200.sh OUT_DIR [STEP...] — on the GPU machine: issue 23's kernel variants
# (each a knob value; the A/B below is what set their auto rules in kernels/cuda/choose.h, from
# results/h200/variants-08b9550/, and re-checks them) and the peer checks of issue 22.
# Needs build/ (cmake --preset default -DLINSTATE_PYTHON=$(command -v python3), built), .peers/src
# and .peers/aot carried, LS_GIT_COMMIT set. Steps (default: ab fidelity tests; in order):
#   ab        one run per family, linstate under auto and under the variant forced, beside the
#             peers (same inputs), tp 2, B 1, 2, 4, 8, 16, 32, 128 (conv: 1, 4, 8, 16, 32, 128,
#             512), T 1, 2, 4, 8:
#               ab-delta.csv  delta.variant=split and split2 (GDN qwen3-next, KDA kimi-linear)
#               ab-ssu.csv    ssu.variant=rows     (Mamba2 nemotron-h)
#               ab-conv.csv   conv.variant=wlat, prefetch on and off, and pair / quad (the
#                             window-major kernels before wlat) (kimi-linear, qwen3-next)
#             and compare-*.txt: scripts/compare.py of each variant against auto
#   col       linstate alone, delta.variant=auto against col8 and col4 (one warp per 8- / 4-column
#             tile, no exchange; auto never takes them yet), GDN qwen3-next and KDA kimi-linear,
#             tp 2, B 1, 2, 4, 8, 16, 32, 128, T 1, 2, 4, 8: ab-col.csv, compare-col8.txt,
#             compare-col4.txt (not in the default steps)
#   fidelity  py_vllm's launch=kernel against launch=wrapper (vLLM's own decode wrappers),
#             fidelity-vllm.csv / .md; FlashInfer's GDN verify at B = 1 T = 8 (fi-b1t8.csv)
#   checks    at once (correctness does not depend on timing; the timed steps run alone before):
#             ctest of the variants' and py_vllm's GPU tests (ctest.log), and compute-sanitizer
#             memcheck and racecheck of the three kernel tests on their quick matrices
#             (sanitize-TOOL-TEST.log; sanitize.txt, one exit status each); each bounded by
#             VARIANTS_CHECK_S seconds (default 330)
# Exit status 1 when a run, a test or a sanitizer fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: scripts/jobs/variants-h200.sh OUT_DIR [STEP...]}
shift
steps=${*:-ab fidelity checks}
limit=${VARIANTS_CHECK_S:-330}
B=build/bench/linstate-bench
[ -x "$B" ] || { echo "variants-h200: $B missing (build first)" >&2; exit 2; }
mkdir -p "$out"
rc=0
step() { echo "== $1 $(date -u +%T)" >&2; }
run() { # name, bench args...
  local n=$1; shift
  "$B" "$@" --out "$out/$n.csv" >"$out/$n.txt" 2>"$out/$n.log" || rc=1
  echo "$n: $(tail -1 "$out/$n.txt")" >&2
}
vs() { # file old new name: compare.py's summary line
  python3 scripts/compare.py "$out/$1.csv" --tuning-old "$2" --tuning-new "$3" >"$out/compare-$4.txt" 2>&1
  echo "compare $4: $(grep -m1 -E '^[0-9]+ SLOWER' "$out/compare-$4.txt")" >&2
}
tests='^(test_gpu_delta|test_gpu_ssu|test_gpu_conv|test_gpu_py_vllm|test_gpu_peer_flashinfer_gdn)$'
for s in $steps; do
  step "$s"
  case $s in
    ab)
      P=(--impl linstate,sglang,py_vllm --tp 2 --draft 1,2,4,8)
      run ab-delta "${P[@]}" --family gdn,kda --model qwen3-next-80b-a3b,kimi-linear-48b-a3b \
        --batch 1,2,4,8,16,32,128 --tune linstate:delta.variant=auto --tune linstate:delta.variant=split \
        --tune linstate:delta.variant=split2
      vs ab-delta delta.variant=auto delta.variant=split split
      vs ab-delta delta.variant=auto delta.variant=split2 split2
      run ab-ssu "${P[@]}" --family mamba2_ssu --model nemotron-h-8b --batch 1,2,4,8,16,32,128 \
        --tune linstate:ssu.variant=auto --tune linstate:ssu.variant=rows
      vs ab-ssu ssu.variant=auto ssu.variant=rows rows
      run ab-conv "${P[@]}" --family conv1d_update --model kimi-linear-48b-a3b,qwen3-next-80b-a3b \
        --batch 1,4,8,16,32,128,512 --tune linstate:conv.variant=auto \
        --tune linstate:conv.variant=wlat,linstate:conv.prefetch=on \
        --tune linstate:conv.variant=wlat,linstate:conv.prefetch=off \
        --tune linstate:conv.variant=pair --tune linstate:conv.variant=quad
      vs ab-conv conv.variant=auto,conv.prefetch=auto conv.variant=wlat,conv.prefetch=on wlat
      vs ab-conv conv.variant=auto,conv.prefetch=auto conv.variant=wlat,conv.prefetch=off wlat-noprefetch
      vs ab-conv conv.variant=auto,conv.prefetch=auto conv.variant=pair pair
      vs ab-conv conv.variant=auto,conv.prefetch=auto conv.variant=quad quad ;;
    col)
      run ab-col --impl linstate --tp 2 --draft 1,2,4,8 --family gdn,kda \
        --model qwen3-next-80b-a3b,kimi-linear-48b-a3b --batch 1,2,4,8,16,32,128 \
        --tune linstate:delta.variant=auto --tune linstate:delta.variant=col8 --tune linstate:delta.variant=col4
      vs ab-col delta.variant=auto delta.variant=col8 col8
      vs ab-col delta.variant=auto delta.variant=col4 col4 ;;
    fidelity)
      run fidelity-vllm --impl py_vllm --tune py_vllm:launch=kernel --tune py_vllm:launch=wrapper \
        --family gdn,kda,mamba2_ssu,conv1d_update --model qwen3-next-80b-a3b,kimi-linear-48b-a3b,nemotron-h-8b \
        --batch 1,128,512 --draft 1 --graph both
      python3 scripts/fidelity_check.py "$out/fidelity-vllm.csv" --aot py_vllm --py py_vllm \
        --tunings launch=kernel:launch=wrapper --out "$out/fidelity-vllm.md" >&2 || rc=1
      run fi-b1t8 --impl linstate,flashinfer --family gdn --model qwen3-next-80b-a3b --tp 2 --batch 1,8 --draft 8 ;;
    checks)
      for t in test_gpu_delta test_gpu_ssu test_gpu_conv; do
        bin=$(find build/tests -type f -name "$t" -perm -u+x | head -1)
        for tool in memcheck racecheck; do
          ( LS_GPU_TEST_QUICK=1 timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 99 "$bin" \
              >"$out/sanitize-$tool-$t.log" 2>&1; echo "sanitize $tool $t: exit $?" >>"$out/sanitize.txt" ) &
        done
      done
      ctest --test-dir build -R "$tests" -j 5 --timeout "$limit" --output-on-failure >"$out/ctest.log" 2>&1 || rc=1
      grep -E 'Test +#|tests passed|tests failed' "$out/ctest.log" >&2
      wait
      sort "$out/sanitize.txt" >&2
      grep -qv ': exit 0$' "$out/sanitize.txt" && rc=1 ;;
    *) echo "variants-h200: unknown step '$s'" >&2; exit 2 ;;
  esac
done
exit $rc
