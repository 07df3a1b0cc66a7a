#!/usr/bin/env bash
# scripts/jobs/before-after.sh — the before/after of the seed refactor, as ONE command on the GPU
# machine: build, measure three variant pairs in one linstate-bench run, compare and plot them.
#
#   scripts/jobs/before-after.sh [OUT_DIR]      OUT_DIR defaults to results/<gpu-name-slug>/
#
# The run (tp 2, B 1,8,64,256,512, T 1 and 4, --variant all, --benchmark_repetitions=5):
#   pool copy + accept, qwen3-next-80b-a3b ........... per-tensor (before) vs fused (after)
#   conv1d_update decode + verify, kimi-linear-48b-a3b  3-buffer (before) vs concat (after)
#   conv1d_update verify, qwen3-next-80b-a3b ......... clone (before, AFTER's conv-state clone)
#                                                       vs in-place (after, #13603)
# writes OUT_DIR/before-after.csv (and the run's stderr to before-after.log), then for each pair
# OLD:NEW, in OUT_DIR:
#   compare-OLD-vs-NEW.txt, compare-OLD-vs-NEW.md    scripts/compare.py CSV CSV --variants OLD:NEW
#   compare-OLD-vs-NEW.png                           scripts/plot.py --compare (same options)
# compare.py's exit 1 ("NEW is slower somewhere") is a result, not a failure of this script.
# About 50 cases x 5 repetitions: a few minutes on an H200, build included.
#
# Exit status: linstate-bench's (0 every row ok or skipped, 1 a case failed, 2 bad argument);
# otherwise 1 when a compare or plot step could not run (bad input, missing numpy/scipy/matplotlib).
# Environment:
#   LINSTATE_SKIP_SETUP=1   skip scripts/setup.sh (e.g. an offline machine already set up)
#   LINSTATE_BENCH=path     use this linstate-bench binary: no setup, no build
#   LS_GIT_COMMIT, LS_GIT_DIRTY  provenance; taken from git here when unset and this is a checkout
#                           (a copied tree without .git: pass them, or rows say "unknown")
#   LS_BENCH_ARGS           extra linstate-bench flags, e.g. "--cache flush" (word-split)
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=$(nproc 2>/dev/null || echo 2)
out_dir=${1:-}

if [ -z "${LS_GIT_COMMIT:-}" ] && git rev-parse HEAD >/dev/null 2>&1; then
  LS_GIT_COMMIT=$(git rev-parse HEAD)
  if [ -z "${LS_GIT_DIRTY:-}" ]; then
    if [ -z "$(git status --porcelain 2>/dev/null)" ]; then LS_GIT_DIRTY=0; else LS_GIT_DIRTY=1; fi
  fi
  export LS_GIT_COMMIT LS_GIT_DIRTY
fi

bench=${LINSTATE_BENCH:-build/bench/linstate-bench}
if [ -z "${LINSTATE_BENCH:-}" ]; then
  if [ "${LINSTATE_SKIP_SETUP:-0}" != "1" ]; then
    bash scripts/setup.sh
  fi
  echo "== configure + build (preset default, build/)" >&2
  cmake --preset default >/dev/null
  cmake --build build -j "$jobs" --target linstate-bench >&2
fi

# One run, one copy-peak measurement; the filter keeps exactly the three comparisons' cases
# (e.g. no qwen3 conv decode, which has a single variant; no kimi pool paths).
filter='^(pool/(copy|accept)/qwen3-next-80b-a3b'
filter+='|conv1d_update/(decode|verify)/kimi-linear-48b-a3b'
filter+='|conv1d_update/verify/qwen3-next-80b-a3b)/'
args=(--model "qwen3-next-80b-a3b,kimi-linear-48b-a3b" --tp 2
      --family "pool/copy,pool/accept,conv1d_update"
      --batch "1,8,64,256,512" --draft "1,4" --variant all
      --benchmark_repetitions=5 "--benchmark_filter=$filter")
if [ -n "$out_dir" ]; then
  args+=(--out "$out_dir/before-after.csv")
fi
# shellcheck disable=SC2206
extra=(${LS_BENCH_ARGS:-})
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== $bench ${args[*]} ${extra[*]}" >&2
set +e
# stdout (the final table) stays on stdout; stderr (progress) is shown and kept in $log
{ "$bench" "${args[@]}" "${extra[@]}" 2>&1 1>&3 3>&- | tee "$log" >&2; } 3>&1
bench_rc=${PIPESTATUS[0]}
set -e

csv=$(sed -n 's/^linstate-bench: wrote //p' "$log" | tail -n 1)
if [ -z "$csv" ] || [ ! -f "$csv" ]; then
  echo "before-after.sh: linstate-bench wrote no CSV (exit $bench_rc)" >&2
  exit $(( bench_rc ? bench_rc : 1 ))
fi
if [ -z "$out_dir" ]; then # default name results/<slug>/<stamp>.csv -> results/<slug>/before-after.csv
  out_dir=$(dirname "$csv")
  mv -f "$csv" "$out_dir/before-after.csv"
  csv=$out_dir/before-after.csv
fi
cat "$log" >"$out_dir/before-after.log"
echo "== $csv (linstate-bench exit $bench_rc)" >&2

# plot.py names its chart compare-<before stem>-vs-<after stem>.png: give it the CSV under the
# two variant names, so each pair gets its own file.
links=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$links"' EXIT
abs_csv=$(cd "$(dirname "$csv")" && pwd)/$(basename "$csv")
steps_rc=0
for pair in per-tensor:fused 3-buffer:concat clone:in-place; do
  old=${pair%%:*} new=${pair##*:}
  name="compare-$old-vs-$new"
  for fmt in text md; do
    ext=$([ "$fmt" = text ] && echo txt || echo md)
    rc=0
    python3 scripts/compare.py "$csv" "$csv" --variants "$pair" --format "$fmt" >"$out_dir/$name.$ext" || rc=$?
    if [ "$rc" -ge 2 ]; then
      echo "before-after.sh: compare.py --variants $pair --format $fmt failed (exit $rc)" >&2
      steps_rc=1
    fi
  done
  echo "== $pair: $(grep -m1 '^geomean' "$out_dir/$name.txt" || echo 'no summary')" >&2
  ln -sf "$abs_csv" "$links/$old.csv"
  ln -sf "$abs_csv" "$links/$new.csv"
  if ! python3 scripts/plot.py --compare "$links/$old.csv" "$links/$new.csv" --variants "$pair" \
       --out "$out_dir" >/dev/null; then
    echo "before-after.sh: plot.py --compare for $pair failed" >&2
    steps_rc=1
  fi
done
ls -1 "$out_dir"/before-after.* "$out_dir"/compare-* 2>/dev/null >&2 || true
if [ "$bench_rc" -ne 0 ]; then
  exit "$bench_rc"
fi
exit "$steps_rc"
