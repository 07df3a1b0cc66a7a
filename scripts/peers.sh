#!/usr/bin/env bash
# scripts/peers.sh — the pinned peer sources (peers/pins.txt), fetched, never committed.
#   scripts/peers.sh fetch   pip download --no-deps each pinned wheel into .peers/wheels/ and
#                            extract only the subtrees below into .peers/src/<pkg>-<version>/
#                            (paths inside the wheel kept as they are)
#   scripts/peers.sh du      size of .peers/src (the lead carries it to the GPU machine: keep it
#                            small, < 20 MB)
# Offline-tolerant: a package pip cannot fetch is a warning, and whatever is already extracted
# stays; the build then leaves out the peers whose sources are missing (one STATUS line each).
# triton is installed by scripts/setup.sh (pip install), not extracted.
set -uo pipefail
cd "$(dirname "$0")/.."
pins=peers/pins.txt
wheels=.peers/wheels
src=.peers/src

# Subtrees extracted per package (paths inside the wheel, a trailing / = a folder). Add a line
# here when a peer builds from more of a package.
subtrees() {
  case "$1" in
    sglang) echo "sglang/kernels/ops/attention/fla/ sglang/kernels/ops/attention/linear/ \
sglang/kernels/ops/mamba/ sglang/srt/layers/attention/linear/ sglang/srt/layers/attention/mamba/ \
sglang/srt/mem_cache/mamba_slot_fused.py \
sglang/kernels/jit/csrc/mamba/ \
sglang/kernels/jit/csrc/attention/kda_fused_decode.cuh sglang/kernels/jit/csrc/attention/kda_packed_decode.cuh \
sglang/kernels/jit/include/sgl_kernel/" ;;
    fla-core) echo "fla/ops/gated_delta_rule/ fla/ops/kda/ fla/ops/utils/ fla/ops/common/ fla/utils.py" ;;
    flashinfer-python) echo "flashinfer/mamba/ flashinfer/gdn_decode.py flashinfer/data/include/flashinfer/mamba/ \
flashinfer/data/csrc/selective_state_update.cu flashinfer/data/include/flashinfer/utils.cuh \
flashinfer/data/include/flashinfer/vec_dtypes.cuh flashinfer/data/include/flashinfer/exception.h" ;;
    apache-tvm-ffi) echo "tvm_ffi/include/" ;;
    # py_vllm (peers/vllm_py/vllm_load.py: KERNEL_FILES, DEPENDENCY_FILES, SSU_CONFIG_DIR)
    vllm) echo "vllm/third_party/flash_linear_attention/ops/fused_recurrent.py \
vllm/third_party/flash_linear_attention/ops/fused_sigmoid_gating.py \
vllm/third_party/flash_linear_attention/ops/op.py vllm/third_party/flash_linear_attention/ops/utils.py \
vllm/models/kimi_k3/nvidia/ops/third_party/kda/fused_recurrent.py \
vllm/model_executor/layers/mamba/ops/causal_conv1d.py vllm/model_executor/layers/mamba/ops/mamba_ssm.py \
vllm/model_executor/layers/mamba/ops/triton_helpers.py vllm/utils/math_utils.py \
vllm/model_executor/layers/mamba/ops/configs/selective_state_update/" ;;
    *) echo "" ;;
  esac
}

fetch() {
  mkdir -p "$wheels" "$src"
  local rc=0
  while read -r line; do
    line=${line%%#*}
    line=$(echo "$line" | tr -d '[:space:]')
    [ -z "$line" ] && continue
    local pkg=${line%%==*} ver=${line##*==}
    local paths
    paths=$(subtrees "$pkg")
    [ -z "$paths" ] && continue
    local dest="$src/$pkg-$ver"
    local norm=${pkg//-/_}
    local whl
    whl=$(ls "$wheels"/"$norm"-"$ver"-*.whl 2>/dev/null | head -1)
    if [ -z "$whl" ]; then
      echo "peers: pip download $pkg==$ver" >&2
      if ! python3 -m pip download -q --no-deps -d "$wheels" "$pkg==$ver" >&2; then
        echo "peers: warning: could not download $pkg==$ver (offline?); peers built from it are left out" >&2
        rc=1
        continue
      fi
      whl=$(ls "$wheels"/"$norm"-"$ver"-*.whl 2>/dev/null | head -1)
    fi
    [ -z "$whl" ] && { echo "peers: warning: no wheel for $pkg==$ver in $wheels" >&2; rc=1; continue; }
    python3 - "$whl" "$dest" $paths <<'PY' || rc=1
import os, shutil, sys, zipfile
whl, dest, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
tmp = dest + ".tmp"
shutil.rmtree(tmp, ignore_errors=True)
n = 0
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.endswith("/") or not any(name == p or (p.endswith("/") and name.startswith(p)) for p in paths):
            continue
        if os.path.isabs(name) or ".." in name.split("/"):
            continue
        z.extract(name, tmp)
        n += 1
shutil.rmtree(dest, ignore_errors=True)
os.rename(tmp, dest) if n else os.makedirs(dest, exist_ok=True)
print(f"peers: {os.path.basename(whl)}: {n} files -> {dest}", file=sys.stderr)
PY
  done < "$pins"
  du -sh "$src" >&2
  return $rc
}

case "${1:-}" in
  fetch) fetch || echo "peers: fetch incomplete (see warnings above)" >&2 ;;
  du) du -sh "$src" ;;
  *) echo "usage: scripts/peers.sh fetch|du" >&2; exit 2 ;;
esac
exit 0
