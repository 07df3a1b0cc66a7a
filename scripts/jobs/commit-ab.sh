#!/usr/bin/env bash
# scripts/jobs/commit-ab.sh — an earlier commit against this tree, in one call of the GPU machine
# (whose copy of the tree has no .git). Two steps:
#
#   scripts/jobs/commit-ab.sh prepare COMMIT
#       here, in a checkout: writes .peers/ab/<sha>.tar (git archive of COMMIT, results/ left
#       out) and prints the sha and the path; carry .peers/ab with the call.
#   scripts/jobs/commit-ab.sh run OUT SHA [--rounds N] [--cmake-arg ARG]... [--old-bench PATH]
#                                 [--new-bench PATH] -- BENCH ARGS
#       on the GPU machine: builds the archive's linstate-bench (extracted into a scratch folder
#       under $TMPDIR, .peers linked; cmake --preset default with the ARGs, in its build/) and this
#       tree's (build/, same ARGs) at once, then N rounds (default 3) of one process per side, old
#       first: linstate-bench BENCH ARGS --out OUT/old-I.csv (LS_GIT_COMMIT=SHA) and OUT/new-I.csv
#       (this tree's LS_GIT_COMMIT, which must be set). Then OUT/old.csv and OUT/new.csv (each
#       side's processes as repetitions), compare.py old.csv new.csv > OUT/compare.txt (with
#       N >= 2 it sees how far a case moves between processes) and, from N = 2, spread.py >
#       OUT/spread.txt.
#       --old-bench / --new-bench PATH use that binary for the side and build nothing for it (a
#       rerun on a warm machine; the host test).
#
# Logs: OUT/build-old.log, OUT/build-new.log, OUT/{old,new}-I.log, OUT/times.txt (seconds per step).
# Exit status: 0 when every step ran and compare.py found nothing SLOWER (its exit status: a
# FASTER case is the summary line's, printed on stderr); 1 when it did (a result, not a failure:
# read OUT/compare.txt) or a run failed; 2 on bad usage, a missing archive or a failed build.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ab_dir=${LS_AB_DIR:-$root/.peers/ab} # where prepare writes and run reads (tests: a scratch folder)
die() { echo "commit-ab.sh: $*" >&2; exit 2; }

case ${1:-} in
  prepare)
    [ $# -eq 2 ] || die "usage: commit-ab.sh prepare COMMIT"
    sha=$(git -C "$root" rev-parse --verify --short "$2^{commit}" 2>/dev/null) || die "prepare: '$2' names no commit"
    mkdir -p "$ab_dir" || die "prepare: cannot create $ab_dir"
    git -C "$root" archive --format=tar -o "$ab_dir/$sha.tar" "$sha" -- . ':!results' ||
      die "prepare: git archive of $sha failed"
    echo "$sha $ab_dir/$sha.tar"
    exit 0 ;;
  run) shift ;;
  *) die "usage: commit-ab.sh prepare COMMIT | run OUT SHA [--rounds N] [--cmake-arg ARG]... [--old-bench PATH] [--new-bench PATH] -- BENCH ARGS" ;;
esac

[ $# -ge 2 ] || die "run: needs OUT and SHA"
out=$1 sha=$2
shift 2
rounds=3 cmake_args=() old_bench="" new_bench="" bench_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) [[ "${2:-}" =~ ^[1-9][0-9]?$ ]] || die "--rounds: bad value '${2:-}' (1-99)"; rounds=$2; shift 2 ;;
    --cmake-arg) [ -n "${2:-}" ] || die "--cmake-arg needs a value"; cmake_args+=("$2"); shift 2 ;;
    --old-bench) [ -x "${2:-}" ] || die "--old-bench: '${2:-}' is not an executable"; old_bench=$2; shift 2 ;;
    --new-bench) [ -x "${2:-}" ] || die "--new-bench: '${2:-}' is not an executable"; new_bench=$2; shift 2 ;;
    --) shift; bench_args=("$@"); break ;;
    *) die "run: unknown argument '$1'" ;;
  esac
done
[ -n "${LS_GIT_COMMIT:-}" ] || die "run: set LS_GIT_COMMIT to this tree's commit"
mkdir -p "$out" && rm -f "$out/times.txt" || die "run: cannot create $out"
t0=$SECONDS
stamp() { echo "$1 $((SECONDS - t0)) s" >>"$out/times.txt"; }

jobs=$(nproc 2>/dev/null || echo 2)
half=$(( jobs > 3 ? jobs / 2 : 1 ))
old_pid="" new_rc=0 old_rc=0
if [ -z "$old_bench" ]; then
  tar_file=$ab_dir/$sha.tar
  [ -f "$tar_file" ] || die "run: no archive $tar_file (commit-ab.sh prepare $sha, and carry .peers/ab)"
  old_src=$(mktemp -d "${TMPDIR:-/tmp}/commit-ab-$sha.XXXXXX")
  tar -xf "$tar_file" -C "$old_src" || die "run: cannot extract $tar_file"
  [ -d "$root/.peers" ] && ln -s "$root/.peers" "$old_src/.peers"
  ( cd "$old_src" && LS_GIT_COMMIT=$sha cmake --preset default "${cmake_args[@]}" &&
      cmake --build build -j "$half" --target linstate-bench ) >"$out/build-old.log" 2>&1 &
  old_pid=$!
  old_bench=$old_src/build/bench/linstate-bench
fi
if [ -z "$new_bench" ]; then
  ( cd "$root" && cmake --preset default "${cmake_args[@]}" && cmake --build build -j "$half" --target linstate-bench ) \
    >"$out/build-new.log" 2>&1
  new_rc=$?
  new_bench=$root/build/bench/linstate-bench
fi
if [ -n "$old_pid" ]; then wait "$old_pid"; old_rc=$?; fi # only the build: nothing else runs behind
stamp "builds (old rc $old_rc, new rc $new_rc)"
[ $old_rc -eq 0 ] || { tail -n 20 "$out/build-old.log" >&2; die "run: the build of $sha failed ($out/build-old.log)"; }
[ $new_rc -eq 0 ] || { tail -n 20 "$out/build-new.log" >&2; die "run: this tree's build failed ($out/build-new.log)"; }
[ -x "$old_bench" ] || die "run: $old_bench missing"
[ -x "$new_bench" ] || die "run: $new_bench missing"

rc=0
rm -f "$out"/old*.csv "$out"/new*.csv
for ((i = 1; i <= rounds; i++)); do
  for side in old new; do
    if [ $side = old ]; then b=$old_bench c=$sha; else b=$new_bench c=$LS_GIT_COMMIT; fi
    LS_GIT_COMMIT=$c "$b" "${bench_args[@]}" --out "$out/$side-$i.csv" >"$out/$side-$i.txt" 2>"$out/$side-$i.log" || {
      echo "commit-ab.sh: $side run $i exited $? ($out/$side-$i.log)" >&2; rc=1; }
    stamp "$side-$i"
    [ -f "$out/$side-$i.csv" ] || continue
    if [ -f "$out/$side.csv" ]; then tail -n +2 "$out/$side-$i.csv" >>"$out/$side.csv"; else cp "$out/$side-$i.csv" "$out/$side.csv"; fi
  done
done
[ -f "$out/old.csv" ] && [ -f "$out/new.csv" ] || die "run: a side wrote no rows (see $out/*.log)"
python3 "$root/scripts/compare.py" "$out/old.csv" "$out/new.csv" >"$out/compare.txt" 2>&1
case $? in 0) ;; 1) rc=1 ;; *) echo "commit-ab.sh: compare.py failed ($out/compare.txt)" >&2; rc=1 ;; esac
if [ "$rounds" -ge 2 ]; then # spread.py: how far each side moves between its processes
  groups=()
  for side in old new; do groups+=("$side=$(ls "$out/$side"-[0-9]*.csv | paste -sd, -)"); done
  python3 "$root/scripts/jobs/spread.py" "${groups[@]}" >"$out/spread.txt" 2>&1 || rc=1
fi
stamp "compare"
grep -m1 -E '^[0-9]+ SLOWER' "$out/compare.txt" >&2
exit $rc
