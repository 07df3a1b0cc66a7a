#!/usr/bin/env bash
# scripts/jobs/fidelity.sh [OUT_DIR] — the AOT `sglang` peer against SGLang's own Python path
# (`py_sglang`, docs/peers.md "Fidelity") on one GPU, and a before/after of two SGLang trees.
# Needs the Python bridge (--impl py_sglang@...), torch and triton 3.6 in python3, and
# .peers/src/sglang-0.5.23 (carried: the GPU machine has no network). Steps:
#   1. side by side   linstate-bench --impl sglang,py_sglang@0.5.23 on every op both offer
#                     (SSU, conv update, GDN, KDA, fused KDA conv verify) at B = 1, 128, 512, eager
#                     and graph, decode and T = 4 verify: fidelity-*.csv
#   2. the check      scripts/fidelity_check.py: AOT within 3 % of py_sglang at B >= 128 and at
#                     B = 1 in graph mode, both verified -> fidelity.md (exit status kept)
#   3. JIT vs AOT     the cubins Triton's JIT compiled for py_sglang (TRITON_CACHE_DIR=OUT/triton-
#                     cache) against the AOT cubins: registers and identical SASS -> jit-vs-aot.md
#   4. before/after   a copy of the pinned tree with ONE launch choice changed (the SSU wrapper's
#                     num_warps for dstate <= 128: 1 -> 4), both trees in one run; compare.py
#                     --impls must show a change on the mamba2_ssu rows only -> before-after.md
# Environment: LINSTATE_BENCH (default build/bench/linstate-bench, built with the default preset
# when missing), FIDELITY_ARGS (extra linstate-bench flags, e.g. --tp 2).
# Exit status: 0 all steps ran and the fidelity check passed; 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
out=${1:-results/h200/fidelity-$commit}
bench=${LINSTATE_BENCH:-build/bench/linstate-bench}
# shellcheck disable=SC2206
extra=(${FIDELITY_ARGS:-})
mkdir -p "$out"
out=$(cd "$out" && pwd)
rc=0
if [ ! -x "$bench" ]; then
  cmake --preset default >"$out/build.log" 2>&1 && cmake --build build -j >>"$out/build.log" 2>&1 \
    || { echo "fidelity: build failed (see $out/build.log)" >&2; exit 1; }
fi
[ -d .peers/src/sglang-0.5.23/sglang ] || { echo "fidelity: .peers/src/sglang-0.5.23 missing (scripts/peers.sh fetch, then carry it)" >&2; exit 1; }
export TRITON_CACHE_DIR="$out/triton-cache"
rm -rf "$TRITON_CACHE_DIR"
impls=sglang,py_sglang@0.5.23
common=(--batch 1,128,512 --draft 1,4 --graph both "${extra[@]}")

run() {  # name, then linstate-bench flags
  local name=$1; shift
  echo "fidelity: $name" >&2
  "$bench" --impl "$impls" "${common[@]}" "$@" --out "$out/fidelity-$name.csv" 2>"$out/fidelity-$name.log" \
    || { echo "fidelity: $name: linstate-bench failed (see $out/fidelity-$name.log)" >&2; rc=1; }
}
# 1. every op with both impls; SGLang's own layouts (vk states; KDA conv as one 3C buffer)
run mamba2 --model nemotron-h-8b,nemotron-nano-9b-v2 --family mamba2_ssu,conv1d_update
run gdn --model qwen3-next-80b-a3b --family gdn,conv1d_update --state-layout vk
run kda --model kimi-linear-48b-a3b --family kda --state-layout vk
run kda-conv --model kimi-linear-48b-a3b --family conv1d_update --variant concat
run kda-conv-delta --model kimi-linear-48b-a3b --family conv_delta/verify --state-layout vk

# 2. the 3 % check
python3 scripts/fidelity_check.py "$out"/fidelity-*.csv --aot sglang --py py_sglang@0.5.23 --tol 3 \
  --out "$out/fidelity.md" >/dev/null || rc=1

# 3. the JIT's cubins against the AOT's
python3 peers/sglang_py/jit_spec.py --cache "$TRITON_CACHE_DIR" --aot-dir build/peers/gen/sglang \
  >"$out/jit-vs-aot.md" || rc=1

# 4. before/after: the pinned tree and a copy with one launch choice changed
after="$out/src/sglang-ssu-warps4"
rm -rf "$after" && mkdir -p "$after" && cp -r .peers/src/sglang-0.5.23/sglang "$after/"
ssu="$after/sglang/kernels/ops/mamba/triton_ops/mamba_ssm.py"
grep -q "((8, 1) if dstate <= 128" "$ssu" || { echo "fidelity: $ssu: the launch table moved" >&2; exit 1; }
sed -i 's/((8, 1) if dstate <= 128/((8, 4) if dstate <= 128/' "$ssu"
impls="py_sglang@0.5.23,py_sglang@$after"
run before-after --model nemotron-h-8b,qwen3-next-80b-a3b --family mamba2_ssu,conv1d_update,gdn --state-layout vk
# the bridge names an instance by its source as given: take the second py_sglang impl of the CSV
b_impl=$(python3 - "$out/fidelity-before-after.csv" <<'PY'
import csv, sys
names = sorted({r["impl"] for r in csv.DictReader(open(sys.argv[1])) if r["impl"].startswith("py_sglang@")})
print(next((n for n in names if n != "py_sglang@0.5.23"), ""))
PY
)
python3 scripts/compare.py "$out/fidelity-before-after.csv" --impls "py_sglang@0.5.23:$b_impl" --format md \
  >"$out/before-after.md"
echo "(expected: SLOWER/FASTER on mamba2_ssu rows only; conv1d_update and gdn rows SAME)" >>"$out/before-after.md"
echo "fidelity: $out (fidelity.md, jit-vs-aot.md, before-after.md)" >&2
exit $rc
