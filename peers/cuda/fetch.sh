#!/usr/bin/env bash
# peers/cuda/fetch.sh — fetch the pinned wheels the CUDA peers (flashinfer, sglang_cuda) need and
# extract only the headers/sources they compile into .peers/src/<pkg>-<version>/<path in wheel>.
# Pins: peers/pins.txt ("name==version" lines) when it names them, else the defaults below.
# Wheels are fetched with `pip download --no-deps` into .peers/wheels/ (skipped when present);
# nothing is installed. Works offline once the wheels are there. Usage: bash peers/cuda/fetch.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
wheels=$root/.peers/wheels
src=$root/.peers/src
mkdir -p "$wheels" "$src"

pin() { # pin NAME DEFAULT -> the version pinned in peers/pins.txt, else DEFAULT
  local v=""
  if [ -f peers/pins.txt ]; then
    v=$(sed -n "s/^[[:space:]]*$1[[:space:]]*==[[:space:]]*\([^[:space:]#]*\).*/\1/p" peers/pins.txt | head -n1)
  fi
  echo "${v:-$2}"
}

fetch() { # fetch NAME VERSION -> path of the wheel
  local name=$1 ver=$2 norm
  norm=$(echo "$name" | tr '-' '_')
  local whl
  whl=$(ls "$wheels"/"${norm}"-"${ver}"-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$whl" ]; then
    echo "fetch: pip download --no-deps $name==$ver" >&2
    python3 -m pip download -q --no-deps --only-binary=:all: "$name==$ver" -d "$wheels" >&2
    whl=$(ls "$wheels"/"${norm}"-"${ver}"-*.whl | head -n1)
  fi
  echo "$whl"
}

extract() { # extract WHEEL DEST PREFIX... : members under each prefix (a file or a folder/)
  python3 - "$@" <<'PY'
import sys, zipfile, os
whl, dest, prefixes = sys.argv[1], sys.argv[2], sys.argv[3:]
n = 0
with zipfile.ZipFile(whl) as z:
    for m in z.namelist():
        if m.endswith('/'):
            continue
        if any(m == p or (p.endswith('/') and m.startswith(p)) for p in prefixes):
            out = os.path.join(dest, m)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(m) as f, open(out, 'wb') as g:
                g.write(f.read())
            n += 1
missing = [p for p in prefixes if not any(m == p or (p.endswith('/') and m.startswith(p)) for m in z.namelist())]
if missing:
    sys.exit(f"fetch: {whl}: nothing under {missing}")
print(f"fetch: {n} files -> {dest}", file=sys.stderr)
PY
}

fi_ver=$(pin flashinfer-python 0.7.2.post1)
sg_ver=$(pin sglang 0.5.23)
tvm_ver=$(pin apache-tvm-ffi 0.1.11)

# FlashInfer: the Mamba selective-state-update headers and the three they include from flashinfer/.
w=$(fetch flashinfer-python "$fi_ver")
d=$src/flashinfer-python-$fi_ver
rm -rf "$d"
extract "$w" "$d" flashinfer/data/include/flashinfer/mamba/ \
  flashinfer/data/include/flashinfer/utils.cuh flashinfer/data/include/flashinfer/vec_dtypes.cuh \
  flashinfer/data/include/flashinfer/exception.h

# SGLang: the two JIT CUDA sources and the sgl_kernel headers they include.
w=$(fetch sglang "$sg_ver")
d=$src/sglang-$sg_ver
rm -rf "$d"
extract "$w" "$d" sglang/kernels/jit/csrc/mamba/causal_conv1d.cuh \
  sglang/kernels/jit/csrc/attention/kda_packed_decode.cuh \
  sglang/kernels/jit/include/sgl_kernel/tensor.h sglang/kernels/jit/include/sgl_kernel/utils.h \
  sglang/kernels/jit/include/sgl_kernel/utils.cuh sglang/kernels/jit/include/sgl_kernel/type.cuh \
  sglang/kernels/jit/include/sgl_kernel/warp.cuh sglang/kernels/jit/include/sgl_kernel/bits.h \
  sglang/kernels/jit/include/sgl_kernel/math.cuh sglang/kernels/jit/include/sgl_kernel/tile.cuh \
  sglang/kernels/jit/include/sgl_kernel/vec.cuh sglang/kernels/jit/include/sgl_kernel/source_location.h

# apache-tvm-ffi (SGLang's pinned dependency): the C++ headers and dlpack the sgl_kernel headers include.
w=$(fetch apache-tvm-ffi "$tvm_ver")
d=$src/apache-tvm-ffi-$tvm_ver
rm -rf "$d"
extract "$w" "$d" tvm_ffi/include/

du -sh "$src/flashinfer-python-$fi_ver" "$src/sglang-$sg_ver" "$src/apache-tvm-ffi-$tvm_ver" >&2
