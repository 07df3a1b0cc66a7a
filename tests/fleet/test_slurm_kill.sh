#!/usr/bin/env bash
# test_slurm_kill.sh BENCH REPO — one rank of an srun -n 2 shard run is killed (SIGKILL) mid-sweep
# on a private Slurm cluster (slurm_cluster.sh): the other rank finishes, scripts/fleet/merge.py exits 1
# naming the missing shard (rank 1, incomplete) and keeps exactly rank 0's rows. Exit 77 when
# Slurm is not installed.
set -euo pipefail
bench=$1 repo=$2
for v in $(compgen -e); do case "$v" in SLURM_*|JOB_COMPLETION_INDEX) unset "$v" ;; esac; done
. "$repo/tests/fleet/slurm_cluster.sh"
cluster_start
d=$LS_CLUSTER_DIR
# Slow enough per case (min-time 0.15 s) that rank 1 is killed with cases still to run.
args=(--backend host --model qwen3-next-80b-a3b --family conv1d_update,gdn,pool/copy --batch 1,2,4,8
      --draft 1 --min-samples 3 --min-time 0.15 --max-time 0.3 --no-bind)
"$bench" "${args[@]}" --list --fleet shard --rank 0 --world 2 >"$d/rank0.txt" 2>/dev/null
n1=$("$bench" "${args[@]}" --list --fleet shard --rank 1 --world 2 2>/dev/null | wc -l)

# Each rank records its pid, then becomes linstate-bench (exec keeps the pid).
srun -n 2 --kill-on-bad-exit=0 bash -c 'echo $$ >"$0/pid.$SLURM_PROCID"; exec "$@"' "$d" \
  "$bench" "${args[@]}" --fleet shard --out-dir "$d/out" >/dev/null 2>"$d/srun.err" &
srun_pid=$!
tmp1=""
for i in $(seq 1 300); do # until rank 1 has written two rows (header + 2 lines)
  tmp1=$(ls "$d"/out/*_rank1of2.csv.tmp.* 2>/dev/null || true) # the rank's private temporary
  [ -n "$tmp1" ] && [ -f "$d/pid.1" ] && [ "$(wc -l <"$tmp1")" -ge 3 ] && break
  sleep 0.1
done
[ -n "$tmp1" ] && [ "$(wc -l <"$tmp1")" -ge 3 ] || ls_fail "rank 1 wrote no rows in 30 s: $(cat "$d/srun.err")"
kill -KILL "$(cat "$d/pid.1")"
wait "$srun_pid" || true # srun reports the killed task; rank 0 finishes its shard
rows1=$(($(wc -l <"$tmp1") - 1))
[ "$rows1" -lt "$n1" ] || ls_fail "rank 1 finished all $n1 cases before it was killed"
ls "$d"/out/*_rank0of2.csv >/dev/null || ls_fail "rank 0 did not finish: $(ls "$d/out")"

set +e
python3 "$repo/scripts/fleet/merge.py" "$d/out" --out "$d/merged.csv" >"$d/merge.txt" 2>&1
rc=$?
set -e
cat "$d/merge.txt"
[ "$rc" -eq 1 ] || ls_fail "merge exit $rc, want 1 (a shard missing)"
grep -q "missing shard: rank 1 of 2 incomplete" "$d/merge.txt" || ls_fail "merge did not name rank 1's missing shard"
python3 - "$d/merged.csv" "$d/rank0.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
want = [l.strip() for l in open(sys.argv[2]) if l.strip()]
got = [r["case"] for r in rows]
if got != want or any(r["rank"] != "0" or r["status"] != "ok" for r in rows):
    print(f"FAIL: merged rows {got} (ranks {sorted({r['rank'] for r in rows})}), want rank 0's {want}", file=sys.stderr)
    sys.exit(1)
print(f"ok: merged keeps rank 0's {len(rows)} rows, none of the killed rank's")
PY
echo "ok: slurm kill"
