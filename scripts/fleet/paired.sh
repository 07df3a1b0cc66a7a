#!/usr/bin/env bash
# scripts/fleet/paired.sh — before/after on a fleet without ever comparing two GPUs: every rank runs the
# BEFORE and AFTER linstate-bench binaries alternately on its own GPU (ABBA order over rounds, so
# a drift of clocks or temperature hits both sides alike), then each side's rounds become
# repetitions of one file per rank.
#
#   scripts/fleet/paired.sh --before BIN --after BIN --dir DIR [--rounds N] [--mode replicate|shard]
#                     [-- linstate-bench arguments]
#
# Run it once per GPU: under srun (srun -n 8 --gpus-per-task=1 scripts/fleet/paired.sh ...), in a Slurm
# batch step or a Kubernetes Indexed Job (rank from the launcher), or alone (rank 0 of 1). Both
# binaries get the same arguments and --fleet MODE (default replicate; shard splits the same plan
# the same way for both, so each case's before and after still share a GPU). Writes
#   DIR/before/<host>_<gpu>[_job<id>]_rank<r>of<n>.csv, DIR/after/... (every round's rows, appended)
# and, per round, DIR/<side>/round<k>/ and its stderr DIR/<side>/round<k>.log. Then, on any machine:
#   scripts/fleet/merge.py DIR/before --out DIR/before.csv && scripts/fleet/merge.py DIR/after --out DIR/after.csv
#   scripts/compare.py DIR/before.csv DIR/after.csv   # joins on case and gpu_uuid: per GPU
# Exit status: the first failing linstate-bench's, 2 on a bad option.
set -euo pipefail
before="" after="" dir="" rounds=3 mode=replicate
die() { echo "paired.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --before) before=${2:-}; shift 2 ;;
    --after) after=${2:-}; shift 2 ;;
    --dir) dir=${2:-}; shift 2 ;;
    --rounds) rounds=${2:-}; shift 2 ;;
    --mode) mode=${2:-}; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see the header of $0)" ;;
  esac
done
[ -x "$before" ] || die "--before: bad value '$before' (an executable linstate-bench)"
[ -x "$after" ] || die "--after: bad value '$after' (an executable linstate-bench)"
[ -n "$dir" ] || die "--dir: an output folder is needed"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds: bad value '$rounds' (an integer >= 1)"
case "$mode" in shard|replicate) ;; *) die "--mode: bad value '$mode' (shard or replicate)" ;; esac
rank_args=()
if [ -z "${SLURM_PROCID:-}${SLURM_ARRAY_TASK_ID:-}${JOB_COMPLETION_INDEX:-}" ] && [[ " $* " != *" --rank "* ]]; then
  rank_args=(--rank 0 --world 1) # not launched as a fleet: one rank
fi
for k in $(seq 0 $((rounds - 1))); do
  order="before after"
  [ $((k % 2)) -eq 1 ] && order="after before"
  for side in $order; do
    bin=$before
    [ "$side" = after ] && bin=$after
    mkdir -p "$dir/$side"
    rc=0
    "$bin" --fleet "$mode" "${rank_args[@]}" --out-dir "$dir/$side/round$k" "$@" >/dev/null \
      2>"$dir/$side/round$k.log" || rc=$?
    if [ "$rc" -ne 0 ]; then
      tail -n 5 "$dir/$side/round$k.log" >&2
      echo "paired.sh: $side round $k: $bin exited $rc (log: $dir/$side/round$k.log)" >&2
      exit "$rc"
    fi
  done
done
# One file per rank and side: the rounds' rows appended under one header, byte for byte (each
# row is one line: docs/csv.md). compare.py counts every ok row of a key as one repetition.
for side in before after; do
  for f in "$dir/$side/round0"/*.csv; do
    name=$(basename "$f")
    head -n 1 "$f" >"$dir/$side/$name"
    for k in $(seq 0 $((rounds - 1))); do
      cmp -s <(head -n 1 "$dir/$side/round$k/$name") <(head -n 1 "$f") \
        || die "$dir/$side/round$k/$name: header differs from round 0's"
      tail -n +2 "$dir/$side/round$k/$name" >>"$dir/$side/$name"
    done
  done
done
echo "paired.sh: $rounds rounds, before and after alternating; files in $dir/before and $dir/after"
