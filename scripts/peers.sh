#!/usr/bin/env bash
# scripts/peers.sh — the pinned peer sources (peers/pins.txt), fetched, never committed.
#   scripts/peers.sh fetch   pip download --no-deps each pinned wheel into .peers/wheels/ and
#                            extract only the subtrees below into .peers/src/<pkg>-<version>/
#                            (paths inside the wheel kept as they are)
#   scripts/peers.sh du      size of .peers/src (the lead carries it to the GPU machine: keep it
#                            small, < 20 MB)
#   scripts/peers.sh aot-flashinfer-gdn [gdn_aot.py options]
#                            FlashInfer's CuTe-DSL GDN kernels compiled ahead of time for sm_90a into
#                            .peers/aot/flashinfer-gdn (~6 MB; carry it with .peers/src). Needs the
#                            CUTLASS DSL, installed from the pinned wheels into .peers/dsl (~240 MB,
#                            this machine's Python; never carried) and flashinfer's gdn_kernels/
#                            taken from its wheel into .peers/aot/src-flashinfer. No GPU needed.
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
sglang/kernels/ops/attention/kda_packed_decode.py sglang/kernels/ops/memory/ptr_table.py sglang/_version.py \
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
# What the folder was extracted from: the same wheel and subtrees again is a no-op; a changed
# subtree list (subtrees() above) extracts again.
stamp_name = ".extracted-from"
stamp = "\n".join([os.path.basename(whl)] + paths) + "\n"
try:
    with open(os.path.join(dest, stamp_name)) as f:
        if f.read() == stamp:
            print(f"peers: {os.path.basename(whl)}: {dest} is up to date", file=sys.stderr)
            sys.exit(0)
except OSError:
    pass
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
if n:
    with open(os.path.join(tmp, stamp_name), "w") as f:
        f.write(stamp)
shutil.rmtree(dest, ignore_errors=True)
os.rename(tmp, dest) if n else os.makedirs(dest, exist_ok=True)
print(f"peers: {os.path.basename(whl)}: {n} files -> {dest}", file=sys.stderr)
PY
  done < "$pins"
  du -sh "$src" >&2
  return $rc
}

# ---- flashinfer GDN ahead of time (peers/flashinfer/gdn_aot.py; docs/peers.md "flashinfer GDN")
dsl_pins="nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 \
nvidia-cutlass-dsl-libs-core==4.8.1 cuda-bindings cuda-pathfinder"
aot_flashinfer_gdn() {
  local dsl=.peers/dsl aot=.peers/aot fi_pin
  fi_pin=$(grep -E '^flashinfer-python==' "$pins" | head -1)
  [ -n "$fi_pin" ] || { echo "peers: no flashinfer-python pin in $pins" >&2; return 1; }
  if [ ! -d "$dsl/nvidia_cutlass_dsl" ]; then
    echo "peers: pip install --target $dsl the CUTLASS DSL ($dsl_pins)" >&2
    # shellcheck disable=SC2086
    python3 -m pip install -q --no-deps --target "$dsl" $dsl_pins >&2 || return 1
  fi
  python3 -c "import google.protobuf" 2>/dev/null || python3 -m pip install -q --target "$dsl" protobuf >&2 || return 1
  local ver=${fi_pin##*==} whl
  whl=$(ls "$wheels"/flashinfer_python-"$ver"-*.whl 2>/dev/null | head -1)
  [ -n "$whl" ] || python3 -m pip download -q --no-deps -d "$wheels" "$fi_pin" >&2 || return 1
  whl=$(ls "$wheels"/flashinfer_python-"$ver"-*.whl 2>/dev/null | head -1)
  mkdir -p "$aot"
  python3 - "$whl" "$aot/src-flashinfer" <<'PY' || return 1
import shutil, sys, zipfile
whl, dest = sys.argv[1:]
want = ["flashinfer/gdn_kernels/" + f for f in ("gdn_decode_pretranspose.py", "gdn_decode_mtp.py",
        "device_target.py", "dtype_compat.py", "cute_dsl_cache_naming.py")]
shutil.rmtree(dest, ignore_errors=True)
with zipfile.ZipFile(whl) as z:
    for n in want:
        z.extract(n, dest)
PY
  python3 peers/flashinfer/gdn_aot.py --dsl "$dsl" --fi-src "$aot/src-flashinfer" --out "$aot/flashinfer-gdn" "$@" || return 1
  du -sh "$aot/flashinfer-gdn" >&2
}

case "${1:-}" in
  fetch) fetch || echo "peers: fetch incomplete (see warnings above)" >&2 ;;
  du) du -sh "$src" ;;
  aot-flashinfer-gdn) shift; aot_flashinfer_gdn "$@" || { echo "peers: aot-flashinfer-gdn failed" >&2; exit 1; } ;;
  *) echo "usage: scripts/peers.sh fetch|du|aot-flashinfer-gdn" >&2; exit 2 ;;
esac
exit 0
