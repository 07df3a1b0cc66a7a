#!/usr/bin/env bash
# scripts/jobs/two-gpu.sh [OUT_DIR] — the two-GPU run of one host (issue: concurrent per-GPU ranks and
# their interference). One whole job for a machine with two GPUs, in four steps:
#   1. gpu-check     scripts/gpu-check.sh once per GPU (CUDA_VISIBLE_DEVICES=i), both at once
#   2. alone         the sweep on GPU A alone (nothing else running): alone.csv, its wall time
#   3. replicate     ranks 0 and 1 at once, one per GPU (--fleet replicate), merged, fleet report
#                    (spread between the two GPUs per case); rank 0 is GPU A with its neighbour busy
#   4. shard         ranks 0 and 1 at once in shard mode: the sweep's wall time against step 2's
# then the interference table: compare.py alone.csv vs rank 0 of step 3 (same GPU, same build,
# minutes apart), verdicts per family (interference.md), and the wall times (walltimes.txt).
#
# Each rank binds itself to its GPU's local CPUs (linstate-bench does, unless --no-bind). Nothing
# here uses NCCL. Environment:
#   GPUS="0 1"          the two devices (CUDA_VISIBLE_DEVICES values). A dry run on a one-GPU
#                       machine: GPUS="0 0" (both ranks share GPU 0: exercises every path; the
#                       numbers then measure sharing one GPU, not two)
#   LINSTATE_BENCH      the binary (default: build-gpu/bench/linstate-bench, built when missing)
#   LS_BENCH_ARGS       the sweep (default: the default sweep)
#   TWO_GPU_SKIP_CHECK=1  skip step 1
# Exit status: 0 every step ran (verdicts are data, not failures); 1 a step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
commit=${LS_GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
out=${1:-results/h200-x2/run-$commit}
read -r -a gpus <<<"${GPUS:-0 1}"
[ "${#gpus[@]}" -eq 2 ] || { echo "two-gpu: GPUS='${GPUS:-}': need two device values" >&2; exit 2; }
bench=${LINSTATE_BENCH:-build-gpu/bench/linstate-bench}
# shellcheck disable=SC2206
args=(${LS_BENCH_ARGS:-})
mkdir -p "$out"
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$out/steps.txt" >&2; }
fail=0

if [ -z "${LINSTATE_BENCH:-}" ]; then
  # built here, before the two gpu-checks start: they share build-gpu and find nothing to rebuild
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  { [ -f build-gpu/CMakeCache.txt ] || cmake -S . -B build-gpu "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo; } \
    >"$out/build.log" 2>&1 && cmake --build build-gpu -j "$(nproc)" >>"$out/build.log" 2>&1 \
    || { log "build failed (build.log)"; exit 1; }
fi
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m >"$out/topo.txt" 2>&1

if [ "${TWO_GPU_SKIP_CHECK:-0}" != 1 ]; then
  log "1. gpu-check on GPUs ${gpus[*]}"
  pids=()
  for i in 0 1; do
    [ $i -eq 1 ] && [ "${gpus[0]}" = "${gpus[1]}" ] && break   # one GPU: check it once
    CUDA_VISIBLE_DEVICES=${gpus[$i]} LS_GPU_CHECK_LOGDIR="$out/gpu-check-$i" \
      bash scripts/gpu-check.sh "$out/gpu-check-gpu${gpus[$i]}.txt" >"$out/gpu-check-$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { fail=1; log "gpu-check failed (gpu-check-*.txt)"; }; done
fi

# since T0: seconds from T0 (date +%s.%N) to now, 1 decimal
since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'; }
# run_rank MODE RANK GPU DIR: one rank of a world of 2 on one GPU
run_rank() {
  CUDA_VISIBLE_DEVICES=$3 "$bench" "${args[@]}" --fleet "$1" --rank "$2" --world 2 --out-dir "$4" \
    >"$out/$1-rank$2.log" 2>&1
}
# pair MODE: both ranks at once; prints the wall seconds
pair() {
  local t0 rc=0; t0=$(date +%s.%N)
  run_rank "$1" 0 "${gpus[0]}" "$out/$1" & local p0=$!
  run_rank "$1" 1 "${gpus[1]}" "$out/$1" & local p1=$!
  wait $p0 || rc=1; wait $p1 || rc=1
  since "$t0"
  return $rc
}

log "2. the sweep on GPU ${gpus[0]} alone"
t0=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=${gpus[0]} "$bench" "${args[@]}" --out "$out/alone.csv" >"$out/alone.log" 2>&1 \
  || { fail=1; log "alone run failed (alone.log)"; }
alone_s=$(since "$t0")

log "3. replicate: ranks 0 and 1 at once"
rep_s=$(pair replicate) || { fail=1; log "a replicate rank failed (replicate-rank*.log)"; }
python3 scripts/fleet/merge.py "$out/replicate" --out "$out/replicate.csv" >"$out/replicate-merge.txt" 2>&1 \
  || { fail=1; log "merge replicate failed"; }
python3 scripts/fleet/fleet_report.py "$out/replicate.csv" --out "$out/report" >"$out/report.log" 2>&1 \
  || { fail=1; log "fleet report failed (report.log)"; }

log "4. shard: ranks 0 and 1 at once"
shard_s=$(pair shard) || { fail=1; log "a shard rank failed (shard-rank*.log)"; }
python3 scripts/fleet/merge.py "$out/shard" --out "$out/shard.csv" >"$out/shard-merge.txt" 2>&1 \
  || { fail=1; log "merge shard failed"; }

{
  echo "GPUs: ${gpus[*]}"
  echo "alone (GPU ${gpus[0]}, whole sweep):       ${alone_s} s"
  echo "replicate (both, whole sweep each):   ${rep_s:-?} s"
  echo "shard (both, half the sweep each):    ${shard_s:-?} s"
  [ -n "${shard_s:-}" ] && echo "shard speed-up over one GPU:          $(awk -v a="$alone_s" -v s="$shard_s" 'BEGIN { printf "%.2f", a / s }')x"
} | tee "$out/walltimes.txt"

# Interference: GPU A alone vs GPU A with its neighbour running the same sweep.
python3 - "$out" <<'PY' || fail=1
import csv, glob, os, sys
out = sys.argv[1]
rank0 = [f for f in glob.glob(os.path.join(out, "replicate", "*rank0of2.csv"))]
if len(rank0) != 1:
    sys.exit(f"two-gpu: expected one rank-0 file in {out}/replicate, found {len(rank0)}")
os.symlink(os.path.relpath(rank0[0], out), os.path.join(out, "neighbour-busy.csv")) \
    if not os.path.exists(os.path.join(out, "neighbour-busy.csv")) else None
PY
python3 scripts/compare.py "$out/alone.csv" "$out/neighbour-busy.csv" --ignore-device \
  >"$out/interference-compare.txt" 2>&1
rc=$?
[ $rc -le 1 ] || { fail=1; log "compare alone vs neighbour-busy: exit $rc"; }
python3 - "$out" <<'PY' | tee "$out/interference.md"
# Per family: cases, geomean busy/alone, and compare.py's verdict counts from its text output.
import collections, csv, math, os, re, sys
out = sys.argv[1]
def rows(p):
    with open(p, newline="") as f:
        return {(r["case"], r["variant"], r["impl"], r["tuning"], r["graph"]): r for r in csv.DictReader(f)
                if r["status"] == "ok"}
a, b = rows(os.path.join(out, "alone.csv")), rows(os.path.join(out, "neighbour-busy.csv"))
verdicts = []  # (case, decision): compare.py's table lines, the decision last
for line in open(os.path.join(out, "interference-compare.txt")):
    w = line.split()
    if len(w) > 2 and "/" in w[0] and re.fullmatch(r"[A-Z]+", w[-1]):
        verdicts.append((w[0], w[-1]))
fam = collections.defaultdict(list)
for k in a.keys() & b.keys():
    fam[k[0].split("/")[0]].append(math.log(float(b[k]["time_us_median"]) / float(a[k]["time_us_median"])))
counts = collections.defaultdict(collections.Counter)
for case, v in verdicts:
    counts[case.split("/")[0]][v] += 1
print("| family | cases | geomean busy / alone | verdicts |")
print("|---|---|---|---|")
for f in sorted(fam):
    g = math.exp(sum(fam[f]) / len(fam[f]))
    vs = ", ".join(f"{n} {v}" for v, n in sorted(counts[f].items())) or "(see interference-compare.txt)"
    print(f"| {f} | {len(fam[f])} | {g:.4f} | {vs} |")
PY
log "done: $out (fail=$fail)"
exit $fail
