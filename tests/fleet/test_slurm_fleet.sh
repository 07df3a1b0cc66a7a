#!/usr/bin/env bash
# test_slurm_fleet.sh BENCH REPO — linstate fleets on a private one-node Slurm cluster
# (slurm_cluster.sh): srun -n 2 in shard and replicate mode, an sbatch --array of single-task
# ranks through scripts/fleet/slurm/submit.sh with its dependent merge job, and a replicate submission
# that ends in a fleet report. Host backend, tiny sweep. Exit 77 when Slurm is not installed.
set -euo pipefail
bench=$1 repo=$2
for v in $(compgen -e); do case "$v" in SLURM_*|JOB_COMPLETION_INDEX) unset "$v" ;; esac; done
. "$repo/tests/fleet/slurm_cluster.sh"
cluster_start
d=$LS_CLUSTER_DIR node=$LS_CLUSTER_NODE
check="python3 $repo/tests/fleet/check_merged.py"
merge="python3 $repo/scripts/fleet/merge.py"
args=(--backend host --model qwen3-next-80b-a3b --family conv1d_update,gdn,pool/copy --batch 1,2,4
      --draft 1 --min-samples 3 --min-time 0.001 --max-time 0.02 --no-bind)
"$bench" "${args[@]}" --list >"$d/planned.txt" 2>/dev/null
mkdir -p "$d/lists"
for r in 0 1; do
  "$bench" "${args[@]}" --list --fleet shard --rank $r --world 2 >"$d/lists/rank$r.txt" 2>/dev/null
done

echo "== srun -n 2, shard"
srun -n 2 "$bench" "${args[@]}" --fleet shard --out-dir "$d/shard" 2>"$d/shard.err" >/dev/null \
  || { cat "$d/shard.err" >&2; ls_fail "srun shard"; }
[ "$(ls "$d/shard" | grep -c '_host_job[0-9]*_rank[01]of2\.csv$')" -eq 2 ] || ls_fail "per-rank files: $(ls "$d/shard")"
$merge "$d/shard" --out "$d/shard.csv" || ls_fail "merge shard"
$check shard "$d/shard.csv" "$d/planned.txt" 2 "$node" --rank-lists "$d/lists"

echo "== srun -n 2, replicate"
srun -n 2 "$bench" "${args[@]}" --fleet replicate --out-dir "$d/repl" 2>"$d/repl.err" >/dev/null \
  || { cat "$d/repl.err" >&2; ls_fail "srun replicate"; }
$merge "$d/repl" --out "$d/repl.csv" | tee "$d/repl.txt" || ls_fail "merge replicate"
grep -q "replicate, 2 of 2 ranks" "$d/repl.txt" || ls_fail "merge did not see a replicate run"
$check replicate "$d/repl.csv" "$d/planned.txt" 2 "$node"

echo "== sbatch --array=0-1 (submit.sh --array 2), merged by the dependent job"
(cd "$d" && LINSTATE_BENCH="$bench" bash "$repo/scripts/fleet/slurm/submit.sh" --mode shard --array 2 \
  --gpus-per-task 0 --dir "$d/array" --wait -- "${args[@]}") || { cat "$d"/array/slurm-* >&2; ls_fail "submit.sh --array"; }
$check shard "$d/array/merged.csv" "$d/planned.txt" 2 "$node" --rank-lists "$d/lists"
grep -q "shard, 2 of 2 ranks" "$d/array/merge.txt" || ls_fail "merge job output: $(cat "$d/array/merge.txt")"

echo "== submit.sh --ntasks 2 replicate: merge job and fleet report"
(cd "$d" && LINSTATE_BENCH="$bench" bash "$repo/scripts/fleet/slurm/submit.sh" --mode replicate --ntasks 2 \
  --gpus-per-task 0 --dir "$d/sub" --wait -- "${args[@]}") || { cat "$d"/sub/slurm-* >&2; ls_fail "submit.sh --ntasks 2"; }
$check replicate "$d/sub/merged.csv" "$d/planned.txt" 2 "$node"
[ -s "$d/sub/report/fleet.md" ] && [ -s "$d/sub/report/fleet.png" ] \
  || { cat "$d/sub/report.txt" >&2; ls_fail "no fleet report in $d/sub/report"; }
echo "ok: slurm fleet"
