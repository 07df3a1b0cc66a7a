#!/usr/bin/env bash
# scripts/fleet/slurm/submit.sh — submit a linstate fleet run to Slurm and its merge as a dependent job.
#
#   scripts/fleet/slurm/submit.sh [options] [-- linstate-bench arguments]
#     --mode shard|replicate  shard: the sweep is split across the ranks (n GPUs, ~n times sooner);
#                             replicate: every rank runs it all (spread across GPUs) (default replicate)
#     --ntasks N              ranks per job, one GPU each (default 1)
#     --array N               instead: an array of N one-task jobs, each one rank of the fleet
#                             (for clusters that hand out single GPUs)
#     --partitions a,b        one fleet job per partition, e.g. one per GPU model (Slurm fixes an
#                             array's partition at submission, so partitions are separate jobs;
#                             merge.py keeps them apart by job_id). Default: the cluster's default
#     --gpus-per-task G       GPUs per rank (default 1; 0 on a cluster without GPUs: host backend)
#     --dir DIR               output folder shared by every rank (default results/fleet/<UTC time>)
#     --wait                  wait for the merge job and exit with its status
# The merge job (afterany: it also runs when a rank failed) writes DIR/merged.csv, DIR/merge.txt
# and, for replicate runs, DIR/report/ (fleet.md, fleet.png). Slurm's logs go to DIR/slurm-*.out.
# Run from the repository root (the jobs start there): build/bench/linstate-bench, or
# LINSTATE_BENCH=path, must be reachable from the nodes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=replicate ntasks=1 array=0 partitions="" gpus=1 dir="" wait=0
die() { echo "submit.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) mode=${2:-}; shift 2 ;;
    --ntasks) ntasks=${2:-}; shift 2 ;;
    --array) array=${2:-}; shift 2 ;;
    --partitions) partitions=${2:-}; shift 2 ;;
    --gpus-per-task) gpus=${2:-}; shift 2 ;;
    --dir) dir=${2:-}; shift 2 ;;
    --wait) wait=1; shift ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see the header of $0)" ;;
  esac
done
case "$mode" in shard|replicate) ;; *) die "--mode: bad value '$mode' (shard or replicate)" ;; esac
[[ "$ntasks" =~ ^[1-9][0-9]*$ ]] || die "--ntasks: bad value '$ntasks' (an integer >= 1)"
[[ "$array" =~ ^[0-9]+$ ]] || die "--array: bad value '$array' (an integer >= 1)"
[[ "$gpus" =~ ^[0-9]+$ ]] || die "--gpus-per-task: bad value '$gpus' (an integer >= 0)"
[ "$array" -eq 0 ] || [ "$ntasks" -eq 1 ] || die "--array $array: give --array or --ntasks, not both"
dir=${dir:-results/fleet/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

res=()
if [ "$array" -gt 0 ]; then res+=(--array="0-$((array - 1))" --ntasks=1); else res+=(--ntasks="$ntasks"); fi
[ "$gpus" -gt 0 ] && res+=(--gpus-per-task="$gpus" --gpu-bind=closest)
env_export="ALL,LS_FLEET_DIR=$dir,LS_FLEET_MODE=$mode,LS_SCRIPTS=$(dirname "$here")"

jobs=()
IFS=, read -r -a parts <<<"${partitions:-}"
[ ${#parts[@]} -gt 0 ] || parts=("")
for p in "${parts[@]}"; do
  popt=()
  [ -n "$p" ] && popt=(--partition="$p")
  jid=$(sbatch --parsable "${popt[@]}" "${res[@]}" --export="$env_export" \
    --output="$dir/slurm-%A_%a.out" "$here/fleet.sbatch" "$@")
  jobs+=("${jid%%;*}")
done
deps=$(IFS=:; echo "${jobs[*]}")
wait_opt=()
[ "$wait" -eq 1 ] && wait_opt=(--wait)
echo "fleet: $mode, jobs ${jobs[*]}; merge job after them; results in $dir"
set +e
mjid=$(sbatch --parsable "${wait_opt[@]}" --dependency="afterany:$deps" --export="$env_export" \
  --output="$dir/slurm-merge-%j.out" "$here/merge.sbatch")
rc=$?
set -e
echo "fleet: merge job ${mjid%%;*}: $dir/merged.csv, $dir/merge.txt$([ "$mode" = replicate ] && echo ", $dir/report/")"
exit "$rc"
