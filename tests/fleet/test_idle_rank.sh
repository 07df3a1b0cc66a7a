#!/usr/bin/env bash
# test_idle_rank.sh BENCH REPO — a fleet shard rank that the split leaves without a case (world 2,
# one case): it writes a header-only file (and a header-only --samples-out) and exits 0, and
# scripts/fleet/merge.py counts it as present (exit 0, "2 of 2 ranks"), also when the job name
# is not file-name safe (the file name carries it with '_' for ' ').
set -uo pipefail
bench=$1 repo=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
args=(--backend host --family pool/copy --model qwen3-next-80b-a3b --batch 1 --draft 1 --repetitions 1)
for r in 0 1; do
  JOB_COMPLETION_INDEX=$r JOB_NAME="ls job" "$bench" "${args[@]}" --fleet shard --world 2 --out-dir "$d/out" \
    --samples-out "$d/samples$r.csv" >"$d/log$r" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { cat "$d/log$r" >&2; fail "rank $r exited $rc"; }
done
idle=$(ls "$d"/out/*rank1of2.csv) || fail "rank 1 wrote no file"
[ "$(wc -l <"$idle")" -eq 1 ] || fail "rank 1's file is not header-only: $(wc -l <"$idle") lines"
[ "$(wc -l <"$d/samples1.csv")" -eq 1 ] || fail "rank 1's samples file is not header-only"
grep -q "no case for this rank" "$d/log1" || fail "rank 1 does not say it had no case: $(cat "$d/log1")"
python3 "$repo/scripts/fleet/merge.py" "$d/out" --out "$d/merged.csv" >"$d/merge.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$d/merge.txt" >&2; fail "merge.py exited $rc"; }
grep -q "job ls job: shard, 2 of 2 ranks" "$d/merge.txt" || { cat "$d/merge.txt" >&2; fail "merge did not count the idle rank"; }
echo "ok: the idle rank wrote a header-only file and merge.py counts it"
