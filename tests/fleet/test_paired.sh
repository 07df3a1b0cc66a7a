#!/usr/bin/env bash
# test_paired.sh BENCH REPO — scripts/fleet/paired.sh with one binary as BEFORE and AFTER, 2 rounds on
# the host backend: ABBA order (file times), each side's rank file holds both rounds' rows, the
# merged sides compare per GPU with 2 repetitions a side, and bad options are refused.
set -euo pipefail
bench=$1 repo=$2
for v in $(compgen -e); do case "$v" in SLURM_*|JOB_COMPLETION_INDEX) unset "$v" ;; esac; done
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
args=(--backend host --model qwen3-next-80b-a3b --family gdn,pool/copy --batch 1,2 --draft 1 --min-samples 3
      --min-time 0.001 --max-time 0.02 --no-bind)
bash "$repo/scripts/fleet/paired.sh" --before "$bench" --after "$bench" --dir "$d/p" --rounds 2 -- "${args[@]}" \
  || fail "paired.sh exited $?"
f=$(cd "$d/p/before/round0" && ls *.csv)
[ "$(echo "$f" | wc -l)" -eq 1 ] && [[ "$f" == *_host_rank0of1.csv ]] || fail "round files: $f"
older() { python3 -c 'import os, sys; sys.exit(os.stat(sys.argv[1]).st_mtime_ns >= os.stat(sys.argv[2]).st_mtime_ns)' "$1" "$2"; }
older "$d/p/before/round0/$f" "$d/p/after/round0/$f" || fail "round 0 runs before, then after"
older "$d/p/after/round1/$f" "$d/p/before/round1/$f" || fail "round 1 runs after, then before"
for side in before after; do
  one=$(($(wc -l <"$d/p/$side/round0/$f") - 1))
  both=$(($(wc -l <"$d/p/$side/$f") - 1))
  [ "$one" -eq 4 ] && [ "$both" -eq 8 ] || fail "$side: $one rows a round, $both in the side's file (want 4, 8)"
  python3 "$repo/scripts/fleet/merge.py" "$d/p/$side" --out "$d/$side.csv" >/dev/null || fail "merge $side"
done
out=$(python3 "$repo/scripts/compare.py" "$d/before.csv" "$d/after.csv") || [ $? -eq 1 ] || fail "compare: $out"
[ "$(echo "$out" | grep -c ' 2/2 ')" -eq 4 ] || fail "4 cases with 2 repetitions a side: $out"
for bad in "--rounds 0" "--mode split" "--before /nonexistent"; do
  set +e
  err=$(bash "$repo/scripts/fleet/paired.sh" --before "$bench" --after "$bench" --dir "$d/x" $bad 2>&1 >/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && [[ "$err" == *"bad value"* ]] || fail "$bad: rc $rc: $err"
done
echo "ok: paired"
