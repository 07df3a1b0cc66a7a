#!/usr/bin/env bash
# scripts/jobs/variants-h200.sh OUT_DIR [STEP...] — on the GPU machine: issue 23's kernel variants,
# each a knob value, A/B'd against the auto rules of kernels/cuda/choose.h beside the peers (same
# run, same inputs); the rules are set from these files (results/h200/variants-*/).
# Needs build/ (cmake --preset default -DLINSTATE_PYTHON=$(command -v python3), built), .peers/src
# and .peers/aot carried, LS_GIT_COMMIT set. Steps (default: ab fused profile checks; in order):
#   ab        abdelta, abahead, abssu and abconv: one run per family, linstate under auto and under each
#             variant forced, beside the peers, tp 2, T 1, 2, 4, 8 (B 1, 2, 4, 8, 16, 32, 128), and
#             compare-*.txt: scripts/compare.py of each variant against auto
#   abdelta   ab-delta.csv: delta.variant=split, split2 (GDN qwen3-next, KDA kimi-linear; col8 /
#             col4 of variants-4db0dd1, hoist of variants-8cd532a and thin of check-d8fad17 lost
#             and were removed)
#   abahead   ab-ahead.csv: delta.ahead=off / on (GDN and KDA verify on the vk layout, T 2, 4, 8,
#             B 1-512) beside py_vllm and py_sglang (their vk layout), compare-ahead.txt: on
#             against off (results/h200/vk-ahead-39f3f21/: the A/B its auto rule waits for)
#   abwide    ab-wide.csv: kv verify at the batches where auto picks SPLIT2 or WIDE by their waves
#             (ls_delta_wide_over_split2): auto against delta.variant=regs (WIDE from B = 9) and
#             =split2, GDN and KDA, T 2, 4, 8, B 8-28, beside py_sglang and py_vllm; compare-wide-*.txt
#             (results/h200/split2-wide-ccfb6fe/ and wide-tail-ccd833d/: the runs its rule came from)
#   abvk8     ab-vk8.csv: vk verify, delta.variant=vk8 (8 value rows per warp, as vLLM's KDA verify
#             programs from B = 13 at tp 2; half vk4's warps, twice the state bytes in flight per
#             warp), token-ahead off and on, against auto and vk4 off / on, GDN and KDA, T 2 and 4,
#             B 4-512, beside py_vllm; compare-vk8*.txt (KDA verify trails vLLM at T = 2:
#             results/h200/tried-decay-table-8dc3b01/)
#   decode    decode.csv: GDN and KDA decode, B 1, 8, 32, 128, 256, 512, linstate (auto) on both
#             state layouts beside sglang, py_vllm and flashinfer (their vk layout); stream /
#             stream4 of variants-8f5a322 lost and were removed
#   abssu     ab-ssu.csv: ssu.variant=rows, rows8, each at ssu.block=32 / 64 and with the slot guess
#             forced on (Mamba2 nemotron-h)
#   abconv    ab-convcm.csv: channel-major conv decode (qwen3-next) B 128, 512 under every conv kernel
#             (wave of check-d8fad17 lost and was removed)
#   fused     ab-fused.csv: conv_delta.variant=cluster, tiles, bulk and bulkp, one-kernel and back-to-back
#             (--variant all), beside SGLang's fused KDA verify; graph replays; B 1, 8, 32, 128,
#             512, T 1 and 4 (kimi-linear, qwen3-next)
#   profile   ncu (SpeedOfLight, LaunchStats, Occupancy, WarpStateStats) of the cases still behind
#             a peer, linstate (auto, and the new variants) and the peer: ncu-CASE-IMPL.txt (the CASES list)
#   fidelity  py_vllm's launch=kernel against launch=wrapper (vLLM's own decode wrappers),
#             fidelity-vllm.csv / .md; FlashInfer's GDN verify at B = 1 T = 8 (fi-b1t8.csv)
#   checks    at once (correctness does not depend on timing; the timed steps run alone before):
#             ctest of the kernel tests (ctest.log), and compute-sanitizer memcheck and racecheck
#             of them on their quick matrices (sanitize-TOOL-TEST.log; sanitize.txt, one exit
#             status each); each bounded by VARIANTS_CHECK_S seconds (default 330)
# Exit status 1 when a run, a test or a sanitizer fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: scripts/jobs/variants-h200.sh OUT_DIR [STEP...]}
shift
steps=" ${*:-ab fused profile checks} "
steps=${steps// ab / abdelta abahead abssu abconv }
P=(--impl linstate,sglang,py_vllm --tp 2 --draft 1,2,4,8 --batch 1,2,4,8,16,32,128)
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
tests='^(test_gpu_delta|test_gpu_delta_forced|test_gpu_delta_forced2|test_gpu_ssu|test_gpu_ssu_rows|test_gpu_conv|test_gpu_conv_delta)$'
for s in $steps; do
  step "$s"
  case $s in
    abdelta)
      run ab-delta "${P[@]}" --family gdn,kda --model qwen3-next-80b-a3b,kimi-linear-48b-a3b \
        --tune linstate:delta.variant=auto --tune linstate:delta.variant=split \
        --tune linstate:delta.variant=split2
      for v in split split2; do vs ab-delta delta.variant=auto delta.variant=$v $v; done ;;
    abahead)
      run ab-ahead --impl linstate,py_vllm,py_sglang --tp 2 --family gdn/verify,kda/verify \
        --model qwen3-next-80b-a3b,kimi-linear-48b-a3b --state-layout vk --draft 2,4,8 \
        --batch 1,2,4,8,16,24,32,64,128,256,512 --tune linstate:delta.ahead=off --tune linstate:delta.ahead=on
      vs ab-ahead delta.ahead=off delta.ahead=on ahead ;;
    abwide)
      run ab-wide --impl linstate,py_sglang,py_vllm --tp 2 --family gdn/verify,kda/verify \
        --model qwen3-next-80b-a3b,kimi-linear-48b-a3b --draft 2,4,8 --batch 8,9,10,12,13,16,17,18,19,20,24,28 \
        --tune linstate:delta.variant=auto --tune linstate:delta.variant=regs --tune linstate:delta.variant=split2
      for v in regs split2; do vs ab-wide delta.variant=auto delta.variant=$v wide-$v; done ;;
    abvk8)
      run ab-vk8 --impl linstate,py_vllm --tp 2 --family gdn/verify,kda/verify \
        --model qwen3-next-80b-a3b,kimi-linear-48b-a3b --state-layout vk --draft 2,4 \
        --batch 4,8,13,16,24,32,64,128,512 --tune linstate:delta.variant=auto \
        --tune linstate:delta.variant=vk4,linstate:delta.ahead=off --tune linstate:delta.variant=vk4,linstate:delta.ahead=on \
        --tune linstate:delta.variant=vk8,linstate:delta.ahead=off --tune linstate:delta.variant=vk8,linstate:delta.ahead=on
      A=delta.variant=auto,delta.ahead=auto
      vs ab-vk8 $A delta.variant=vk8,delta.ahead=off vk8
      vs ab-vk8 $A delta.variant=vk8,delta.ahead=on vk8-ahead
      vs ab-vk8 delta.variant=vk4,delta.ahead=off delta.variant=vk8,delta.ahead=off vk8-vs-vk4-off ;;
    decode)
      run decode --impl linstate,sglang,py_vllm,flashinfer --tp 2 --family gdn/decode,kda/decode \
        --model qwen3-next-80b-a3b,kimi-linear-48b-a3b --batch 1,8,32,128,256,512 --state-layout kv,vk ;;
    abssu)
      run ab-ssu "${P[@]}" --family mamba2_ssu --model nemotron-h-8b \
        --tune linstate:ssu.variant=auto --tune linstate:ssu.variant=rows --tune linstate:ssu.variant=rows8 \
        --tune linstate:ssu.variant=rows8,linstate:ssu.block=32 --tune linstate:ssu.variant=rows8,linstate:ssu.block=64 \
        --tune linstate:ssu.variant=rows,linstate:ssu.block=32 \
        --tune linstate:ssu.variant=rows,linstate:ssu.speculate=on --tune linstate:ssu.variant=rows8,linstate:ssu.speculate=on
      D=ssu.block=auto,ssu.speculate=auto
      vs ab-ssu ssu.variant=auto,$D ssu.variant=rows8,$D rows8
      vs ab-ssu ssu.variant=auto,$D ssu.variant=rows8,ssu.block=32 rows8-block32
      vs ab-ssu ssu.variant=auto,$D ssu.variant=rows8,ssu.block=64 rows8-block64
      vs ab-ssu ssu.variant=auto,$D ssu.variant=rows,ssu.block=32 rows-block32
      vs ab-ssu ssu.variant=auto,$D ssu.variant=rows,ssu.speculate=on rows-spec
      vs ab-ssu ssu.variant=auto,$D ssu.variant=rows8,ssu.speculate=on rows8-spec ;;
    abconv)
      run ab-convcm --impl linstate,sglang,py_vllm --tp 2 --family conv1d_update/decode --model qwen3-next-80b-a3b \
        --batch 128,512 --tune linstate:conv.variant=auto --tune linstate:conv.variant=tile \
        --tune linstate:conv.variant=vec8 --tune linstate:conv.variant=pair --tune linstate:conv.variant=quad ;;
    fused)
      run ab-fused --impl linstate,sglang --tp 2 --family conv_delta --variant all --graph on \
        --model kimi-linear-48b-a3b,qwen3-next-80b-a3b --batch 1,8,32,128,512 --draft 1,4 \
        --tune linstate:conv_delta.variant=cluster --tune linstate:conv_delta.variant=tiles \
        --tune linstate:conv_delta.variant=bulk --tune linstate:conv_delta.variant=bulkp
      vs ab-fused conv_delta.variant=bulk conv_delta.variant=bulkp fused-bulkp ;;
    profile)
      # CASE|KERNEL REGEX|IMPL|BENCH ARGS (one launch each: the 4th, after warm-up)
      while IFS='|' read -r name re impl args; do
        [ -n "$name" ] || continue
        # shellcheck disable=SC2086
        timeout 120 ncu --kernel-name-base function -k "regex:$re" --launch-skip 3 --launch-count 1 \
          --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
          "$B" --impl "$impl" --tp 2 --no-verify --profile $args </dev/null >"$out/ncu-$name-$impl.txt" 2>&1 || rc=1
        echo "ncu $name $impl: $(grep -m1 -E 'Duration' "$out/ncu-$name-$impl.txt" | tr -s ' ')" >&2
      done <<'CASES'
kda-verify-B1-T4|delta_rule|linstate|--family kda/verify --model kimi-linear-48b-a3b --batch 1 --draft 4
kda-verify-B1-T4|fused_recurrent_kda_fwd|py_vllm|--family kda/verify --model kimi-linear-48b-a3b --batch 1 --draft 4
gdn-verify-B16-T4|delta_rule|linstate|--family gdn/verify --model qwen3-next-80b-a3b --batch 16 --draft 4
gdn-verify-B16-T4|fused_sigmoid_gating|sglang|--family gdn/verify --model qwen3-next-80b-a3b --batch 16 --draft 4
gdn-decode-B128|delta_|linstate|--family gdn/decode --model qwen3-next-80b-a3b --batch 128
gdn-decode-B128|gdn_decode|flashinfer|--family gdn/decode --model qwen3-next-80b-a3b --batch 128
fused-kda-verify-B128-T4-tiles|conv_delta|linstate|--family conv_delta/verify --variant one-kernel --model kimi-linear-48b-a3b --batch 128 --draft 4 --tune linstate:conv_delta.variant=tiles
fused-kda-decode-B512-bulk|conv_delta|linstate|--family conv_delta/decode --variant one-kernel --model kimi-linear-48b-a3b --batch 512
fused-kda-decode-B512-bulkp|conv_delta|linstate|--family conv_delta/decode --variant one-kernel --model kimi-linear-48b-a3b --batch 512 --tune linstate:conv_delta.variant=bulkp
kda-decode-B512|delta_|linstate|--family kda/decode --model kimi-linear-48b-a3b --batch 512
fused-kda-verify-B128-T4|fused_kda|sglang|--family conv_delta/verify --variant one-kernel --model kimi-linear-48b-a3b --batch 128 --draft 4
CASES
      ;;
    fidelity)
      run fidelity-vllm --impl py_vllm --tune py_vllm:launch=kernel --tune py_vllm:launch=wrapper \
        --family gdn,kda,mamba2_ssu,conv1d_update --model qwen3-next-80b-a3b,kimi-linear-48b-a3b,nemotron-h-8b \
        --batch 1,128,512 --draft 1 --graph both
      python3 scripts/fidelity_check.py "$out/fidelity-vllm.csv" --aot py_vllm --py py_vllm \
        --tunings launch=kernel:launch=wrapper --out "$out/fidelity-vllm.md" >&2 || rc=1
      run fi-b1t8 --impl linstate,flashinfer --family gdn --model qwen3-next-80b-a3b --tp 2 --batch 1,8 --draft 8 ;;
    checks)
      for t in test_gpu_delta test_gpu_delta_forced test_gpu_delta_forced2 test_gpu_ssu test_gpu_ssu_rows test_gpu_conv test_gpu_conv_delta; do
        bin=$(find build/tests -type f -name "$t" -perm -u+x | head -1)
        for tool in memcheck racecheck; do
          ( LS_GPU_TEST_QUICK=1 timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 99 "$bin" \
              >"$out/sanitize-$tool-$t.log" 2>&1; echo "sanitize $tool $t: exit $?" >>"$out/sanitize.txt" ) &
        done
      done
      ctest --test-dir build -R "$tests" -j 7 --timeout "$limit" --output-on-failure >"$out/ctest.log" 2>&1 || rc=1
      grep -E 'Test +#|tests passed|tests failed' "$out/ctest.log" >&2
      wait
      sort "$out/sanitize.txt" >&2
      grep -qv ': exit 0$' "$out/sanitize.txt" && rc=1 ;;
    *) echo "variants-h200: unknown step '$s'" >&2; exit 2 ;;
  esac
done
exit $rc
