#!/usr/bin/env bash
# scripts/profile.sh — profile ONE benchmark case by its stable key, with Nsight Systems (default)
# or Nsight Compute (--ncu). Reports land in results/profiles/ (or --out DIR).
#
#   scripts/profile.sh CASE_KEY [--ncu] [--capture nvtx|api] [--out DIR] [--dry-run] [-- bench args]
#   e.g. scripts/profile.sh gdn/verify/qwen3-next-80b-a3b/tp2/B:64/T:4/fp32 --ncu
#
# How the case is picked out:
#  - the bench runs only that case: --benchmark_filter is the key, regex-escaped and anchored, with
#    the suffixes the bench and Google Benchmark append (/dev:N, /iterations:1, /repeats:N,
#    /manual_time) allowed after it; and
#    --profile (fixed small iteration count inside cudaProfilerStart/Stop);
#  - nsys captures the harness's measure phase only: --capture-range=nvtx on the registered
#    string "measure" of domain "linstate" (registered, so NSYS_NVTX_PROFILER_REGISTER_ONLY=0 is
#    not needed), tracing cuda,nvtx; capture stops after the first measure range. Graph cases
#    (/graph keys) are traced per node (--cuda-graph-trace=node): each kernel of a replay shows,
#    not one opaque graph launch;
#  - --capture api: the window is the bench's own cudaProfilerStart/Stop pair instead (--profile
#    takes its 3 samples inside it, warm-up outside): nsys --capture-range=cudaProfilerApi, ncu
#    --profile-from-start off. Use it when NVTX capture is unavailable (NVTX compiled out, an
#    nsys without NVTX capture) — it needs no NVTX at all;
#  - ncu profiles only kernels launched inside the measure phase of that case: --nvtx with the
#    push/pop filter 'linstate@<key>/measure', where each '/' of the key is escaped as '\/'
#    (ncu reads an unescaped '/' as the separator of nested ranges).
#    Clocks are never locked (--clock-control none): we profile what the benchmark measures.
#  - the kernels run in linstate-bench's worker process (a child of the one started here, see
#    docs/timing.md "Worker process"): ncu is told to follow it (--target-processes all); nsys
#    follows exec'd children by default (the worker is forked and exec'd at once).
# Environment: LINSTATE_BENCH (bench binary; default build/bench/linstate-bench),
#   LS_NSYS_ARGS / LS_NCU_ARGS (extra profiler options, word-split, e.g. LS_NCU_ARGS='--set full').
# Exit: the profiler's status; 1 when nsys/ncu or the bench binary is missing; 2 on bad usage.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() { echo "profile.sh: $*" >&2; exit 2; }
missing() { echo "profile.sh: $*" >&2; exit 1; }

# ERE-escape (Google Benchmark compiles --benchmark_filter as a POSIX extended regex).
ere_escape() { printf '%s' "$1" | sed -e 's/[][\.^$*+?(){}|]/\\&/g'; }

# The --benchmark_filter value selecting exactly one case key (and its GB name suffixes).
bench_filter() {
  printf '^%s(/(dev|repeats|iterations|min_time|min_warmup_time|threads):[^/]*|/(manual|real|process)_time)*$' \
    "$(ere_escape "$1")"
}

# The ncu --nvtx-include value: kernels inside range "measure" nested in range <key>, domain
# linstate. Backslash-escapes ncu's filter metacharacters in the key.
ncu_nvtx_filter() {
  printf 'linstate@%s/measure' "$(printf '%s' "$1" | sed -e 's/[][\/@*]/\\&/g')"
}

[ $# -ge 1 ] || usage
key=$1
shift
case "$key" in
  -h|--help) usage ;;
  ""|-*) die "first argument must be a case key (e.g. gdn/verify/<model>/tp2/B:64/T:4/fp32), got '$key'" ;;
esac
case "$key" in
  *[[:space:]]*|*[[:cntrl:]]*) die "case key must not contain spaces or control characters: '$key'" ;;
esac

tool=nsys
capture=nvtx
out="$root/results/profiles"
dry=0
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ncu) tool=ncu ;;
    --capture)
      if [ $# -lt 2 ]; then die "--capture needs nvtx or api"; fi
      case "$2" in nvtx|api) capture=$2 ;; *) die "--capture: '$2' is not nvtx or api" ;; esac
      shift ;;
    --out)
      if [ $# -lt 2 ] || [ -z "$2" ]; then die "--out needs a directory"; fi
      out=$2
      shift ;;
    --dry-run) dry=1 ;;
    --) shift; bench_args=("$@"); break ;;
    *) die "unknown option '$1' (linstate-bench arguments go after --)" ;;
  esac
  shift
done

bench=${LINSTATE_BENCH:-$root/build/bench/linstate-bench}
name=$(printf '%s' "$key" | tr -c 'A-Za-z0-9._-' '_')
filter=$(bench_filter "$key")
read -r -a nsys_extra <<< "${LS_NSYS_ARGS:-}"
read -r -a ncu_extra <<< "${LS_NCU_ARGS:-}"

if [ "$tool" = nsys ]; then
  report="$out/$name.nsys-rep"
  if [ "$capture" = nvtx ]; then
    window=(--capture-range=nvtx --nvtx-capture='measure@linstate')
  else
    window=(--capture-range=cudaProfilerApi)
  fi
  cmd=(nsys profile -t 'cuda,nvtx' --cuda-graph-trace=node "${window[@]}"
       --capture-range-end=stop --force-overwrite=true -o "$out/$name" "${nsys_extra[@]}")
else
  report="$out/$name.ncu-rep"
  if [ "$capture" = nvtx ]; then
    window=(--nvtx --nvtx-include "$(ncu_nvtx_filter "$key")")
  else
    window=(--profile-from-start off)
  fi
  cmd=(ncu "${window[@]}" --target-processes all --clock-control none --force-overwrite -o "$out/$name" "${ncu_extra[@]}")
fi
cmd+=("$bench" "--benchmark_filter=$filter" --profile "${bench_args[@]}")

if [ "$dry" -eq 1 ]; then
  printf '%q ' "${cmd[@]}"
  printf '\n'
  exit 0
fi

# The profiler: PATH first, then the usual install folders (the CUDA toolkit's bin is often not
# on PATH; ncu ships there, nsys under /opt/nvidia/nsight-systems/<version>/bin).
find_tool() {
  local t=$1 d
  if command -v "$t" 2>/dev/null; then return 0; fi
  for d in "${CUDA_HOME:-/usr/local/cuda}/bin" /usr/local/cuda/bin /opt/nvidia/nsight-compute/*/ \
           /opt/nvidia/nsight-systems/*/bin; do
    if [ -x "$d/$t" ]; then printf '%s\n' "$d/$t"; return 0; fi
  done
  return 1
}

if ! tool_path=$(find_tool "$tool"); then
  if [ "$tool" = nsys ]; then
    missing "nsys (Nsight Systems) not found in PATH: install it (e.g. the nsight-systems package" \
            "or /opt/nvidia/nsight-systems/*/bin on PATH), or use --ncu for Nsight Compute"
  else
    missing "ncu (Nsight Compute) not found in PATH nor in /usr/local/cuda/bin: install" \
            "Nsight Compute or put its folder on PATH"
  fi
fi
cmd[0]=$tool_path
[ -x "$bench" ] || missing "benchmark binary not found: $bench (build it: cmake --build build" \
                           "--target linstate-bench, or set LINSTATE_BENCH)"
mkdir -p "$out"

echo "profile.sh: $tool_path on case $key" >&2
"${cmd[@]}"
if [ -e "$report" ]; then
  echo "profile.sh: report: $report" >&2
  if [ "$tool" = nsys ]; then
    echo "profile.sh: summary: nsys stats -r cuda_gpu_kern_sum,nvtx_sum '$report'" >&2
  fi
else
  echo "profile.sh: $tool wrote no report at $report (did the case run? check the key with" \
       "$bench --benchmark_list_tests)" >&2
  exit 1
fi
