#!/usr/bin/env bash
# scripts/jobs/peers-h200.sh OUT_DIR [STEP...] — on the GPU machine: the Python-impl and peer steps
# of issues 20-22, each writing under OUT_DIR (log + CSV). Steps (default: all, in this order):
#   build        cmake --preset default (the venv's python3 for the bridge) and build everything
#   tests        the GPU tests of the Python impls, py_sglang, py_vllm, flashinfer's GDN, the fault
#                and guard plugins (ctest -R; ctest.log)
#   fault        the faulting CUDA plugin beside linstate, kept as CSV (fault-cuda.csv): its B = 4
#                rows error:*, every linstate row ok
#   fidelity     the AOT sglang peer beside SGLang's own wrappers (py_sglang@0.5.23) for the SSU
#                (fidelity-mamba2.csv) and scripts/fidelity_check.py over OUT_DIR/fidelity-*.csv
#   beforeafter  two SGLang trees in one run: the pinned one and a copy whose SSU wrapper launches
#                num_warps 4 instead of 1 (before-after.csv, before-after.md)
#   sidebyside   every impl over the default models, B 1, 8, 32, 128, 512, T 1, 2 and 4 (T = 2: KDA
#                verify trailed vLLM there, results/h200/tried-decay-table-8dc3b01/), GDN/KDA on both
#                state layouts (the peers run vk only) (side-by-side.csv; scripts/side_by_side.py:
#                side-by-side.md against linstate on kv, side-by-side-vk.md on vk, the peers' layout)
# Needs .peers/src (and .peers/aot for FlashInfer's GDN) carried; LS_GIT_COMMIT set.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/jobs/peers-h200.sh OUT_DIR [STEP...]}
shift
steps=${*:-build tests fault fidelity beforeafter sidebyside}
mkdir -p "$out"
B=build/bench/linstate-bench
rc=0
step() { echo "== $1 $(date -u +%T)" >&2; }
for s in $steps; do
  step "$s"
  case $s in
    build)
      { cmake --preset default -DLINSTATE_PYTHON="$(command -v python3)" && cmake --build build -j; } \
        >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
      grep -E "linstate: (Python bridge|peer)" "$out/build.log" >&2 ;;
    tests)
      ctest --test-dir build -R 'pyimpl_gpu|pyimpl_case_begin|py_sglang|py_vllm|flashinfer_gdn|peer_modules|plugin_fault_cuda|plugin_guard' \
        --output-on-failure >"$out/ctest.log" 2>&1 || rc=1
      grep -E "Test +#|tests passed|tests failed" "$out/ctest.log" >&2 ;;
    fault)
      "$B" --tp 8 --batch 1,4 --draft 1 --model qwen3-next-80b-a3b,kimi-linear-48b-a3b --family pool \
        --benchmark_filter=pool/copy --impl-path build/tests/plugin/libls_test_fault_cuda.so \
        --impl fault_cuda,linstate --out "$out/fault-cuda.csv" >"$out/fault-cuda.txt" 2>"$out/fault-cuda.log"
      echo "fault: rc $? (1 expected: a case failed)" >&2; tail -12 "$out/fault-cuda.txt" >&2 ;;
    fidelity)
      "$B" --impl sglang,py_sglang@0.5.23 --batch 1,128,512 --draft 1,4 --graph both \
        --model nemotron-h-8b,nemotron-nano-9b-v2 --family mamba2_ssu \
        --out "$out/fidelity-mamba2.csv" >/dev/null 2>"$out/fidelity-mamba2.log" || rc=1
      python3 scripts/fidelity_check.py "$out"/fidelity-*.csv --aot sglang --py py_sglang@0.5.23 --tol 3 \
        --out "$out/fidelity.md" >&2 || rc=1 ;;
    beforeafter)
      after=/tmp/sglang-ssu-warps4
      rm -rf "$after" && mkdir -p "$after" && cp -r .peers/src/sglang-0.5.23/sglang "$after/"
      sed -i 's/((8, 1) if dstate <= 128/((8, 4) if dstate <= 128/' "$after/sglang/kernels/ops/mamba/triton_ops/mamba_ssm.py"
      "$B" --impl "py_sglang@0.5.23,py_sglang@warps4=$after" --batch 1,128,512 --draft 1,4 \
        --model nemotron-h-8b,qwen3-next-80b-a3b --family mamba2_ssu,conv1d_update,gdn --state-layout vk \
        --out "$out/before-after.csv" >/dev/null 2>"$out/before-after.log" || rc=1
      python3 scripts/compare.py "$out/before-after.csv" --impls py_sglang@0.5.23:py_sglang@warps4 --format md \
        >"$out/before-after.md"
      echo "compare rc $? (1: something slower)" >&2 ;;
    sidebyside)
      "$B" --impl linstate,sglang,py_sglang,py_vllm,fla,flashinfer,sglang_cuda \
        --model qwen3-next-80b-a3b,kimi-linear-48b-a3b,nemotron-h-8b --family conv1d_update,gdn,kda,mamba2_ssu \
        --batch 1,8,32,128,512 --draft 1,2,4 --state-layout kv,vk --out "$out/side-by-side.csv" \
        >"$out/side-by-side.txt" 2>"$out/side-by-side.log" || rc=1
      python3 scripts/side_by_side.py "$out/side-by-side.csv" --impl linstate/kv --out "$out/side-by-side.md" || rc=1
      python3 scripts/side_by_side.py "$out/side-by-side.csv" --impl linstate/vk --out "$out/side-by-side-vk.md" || rc=1
      tail -n 2 "$out/side-by-side.md" "$out/side-by-side-vk.md" >&2 ;;
    *) echo "peers-h200: unknown step '$s'" >&2; exit 2 ;;
  esac
done
exit $rc
