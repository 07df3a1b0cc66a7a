#!/usr/bin/env bash
# scripts/gpu-check.sh [SUMMARY_FILE] — the one command for the GPU machine.
# Without a visible GPU it builds nothing, prints "result: SKIPPED" and exits 77.
#
# Configures (Ninja when present) and builds in build-gpu, runs every CTest test labelled gpu,
# then runs each GPU test binary under compute-sanitizer --tool memcheck and --tool racecheck
# with LS_GPU_TEST_QUICK=1 (the tests shrink their shape matrices: sanitizers are slow). Writes a
# summary (GPU, driver, date, git commit, each test pass/fail/skip, sanitizer verdicts) to stdout
# and to SUMMARY_FILE (default build-gpu/gpu-check.txt). Exit status non-zero on any failure.
#
# Environment:
#   LS_GPU_BUILD_DIR      build directory (default build-gpu)
#   LS_GPU_CHECK_TESTS    ctest -R regex restricting the tests (default: all gpu tests)
#   LS_GPU_CHECK_SANITIZE 0 skips the compute-sanitizer passes
#   LS_GPU_CHECK_SANITIZE_TESTS  ctest -R regex of the binaries the sanitizers run (default: the
#                         tests run); the summary names it, so a partial pass is never read as whole
#   LS_GPU_CHECK_LOGDIR   where full logs go (default: next to SUMMARY_FILE)
#   LS_GPU_CHECK_JOBS     ctest -j (default 4); the sanitizer passes run alongside, in the background
set -uo pipefail
cd "$(dirname "$0")/.."

summary=${1:-build-gpu/gpu-check.txt}   # the committed copy (results/<gpu>/) is written by hand
build=${LS_GPU_BUILD_DIR:-build-gpu}
regex=${LS_GPU_CHECK_TESTS:-}
sanitize=${LS_GPU_CHECK_SANITIZE:-1}
san_regex=${LS_GPU_CHECK_SANITIZE_TESTS:-$regex}
mkdir -p "$(dirname "$summary")"
logdir=${LS_GPU_CHECK_LOGDIR:-$(dirname "$summary")}
mkdir -p "$logdir"
jobs=$(nproc 2>/dev/null || echo 4)
status=0
lines=()
note() { lines+=("$*"); echo "$*"; }

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
commit=${LS_GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
# dirty: LS_GIT_DIRTY, else git's status, but only of the commit git sees as HEAD (a copied tree
# with a stale .git beside it would read as changed everywhere): "+dirty?" when unknown
head=$(git rev-parse HEAD 2>/dev/null || true)
if [ -n "${LS_GIT_DIRTY:-}" ]; then dirty=$([ "$LS_GIT_DIRTY" = 1 ] && echo "+dirty" || true)
elif [ -n "${LS_GIT_COMMIT:-}" ] && [[ -z "$head" || "$head" != "$LS_GIT_COMMIT"* ]]; then dirty="+dirty?"
else dirty=$( [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null | head -1)" ] && echo "+dirty" || true); fi
note "linstate gpu-check"
note "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
note "gpu:    ${gpu:-none found (nvidia-smi)}"
note "commit: ${commit}${dirty}"
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  note "result: SKIPPED (no GPU visible: nvidia-smi lists none); nothing was built or run"
  printf '%s\n' "${lines[@]}" >"$summary"
  exit 77
fi

# ---------------------------------------------------------------- build
gen=()
# Ninja for a new build dir; an existing one keeps its generator.
[ -f "$build/CMakeCache.txt" ] || { command -v ninja >/dev/null 2>&1 && gen=(-G Ninja); }
if ! cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$logdir/gpu-check-build.log" 2>&1 ||
   ! cmake --build "$build" -j "$jobs" >>"$logdir/gpu-check-build.log" 2>&1; then
  note "build:  FAILED (see $logdir/gpu-check-build.log)"
  tail -30 "$logdir/gpu-check-build.log"
  printf '%s\n' "${lines[@]}" >"$summary"
  exit 1
fi
note "build:  ok ($build)"

# ---------------------------------------------------------------- compute-sanitizer (background)
# The sanitizer passes (quick matrices) run concurrently with ctest: they are bound by the host
# reference on the CPU, not by the GPU, and correctness does not depend on timing.
declare -a san_jobs=()
if [ "$sanitize" != "0" ]; then
  if ! command -v compute-sanitizer >/dev/null 2>&1; then
    note "sanitizer: compute-sanitizer not found: SKIPPED"
  else
    [ -n "${LS_GPU_CHECK_SANITIZE_TESTS:-}" ] && note "sanitizer: only the tests matching '$san_regex'"
    # Each test's own binary, from its ctest command (scripts/gpu_check_tests.py); tests whose
    # command runs an interpreter (python3, bash: they drive linstate-bench or a plugin) have
    # none and are noted; a compiled test whose binary is missing is a failure.
    while read -r t kind bin; do
      if [ "$kind" = run ]; then
        note "sanitizer: $t: run by $bin, not a test binary: not sanitized"
        continue
      fi
      if [ ! -x "$bin" ]; then
        note "sanitizer: $t: binary not found ($bin)"; status=1
        continue
      fi
      for tool in memcheck racecheck; do
        log="$logdir/gpu-check-$tool-$t.log"
        ( LS_GPU_TEST_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 99 "$bin" >"$log" 2>&1
          echo $? >"$log.rc" ) &
        san_jobs+=("$tool $t $log")
      done
    done < <(ctest --test-dir "$build" -N -L gpu ${san_regex:+-R "$san_regex"} --show-only=json-v1 2>/dev/null |
             python3 scripts/gpu_check_tests.py "$build" || echo "(ctest-json) bin (unreadable)")
  fi
fi

# ---------------------------------------------------------------- ctest -L gpu
ctest_args=(--test-dir "$build" -L gpu --output-on-failure -j "${LS_GPU_CHECK_JOBS:-4}")
[ -n "$regex" ] && ctest_args+=(-R "$regex")
ctest "${ctest_args[@]}" >"$logdir/gpu-check-ctest.log" 2>&1
rc=$?
[ $rc -ne 0 ] && status=1
# "  1/4 Test #1: test_gpu_conv ....................   Passed   12.34 sec"
while read -r name verdict secs; do
  note "test:   $(printf '%-28s %-8s %s s' "$name" "$verdict" "$secs")"
done < <(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [ .*]*\(Passed\|Failed\|Not Run\|Skipped\|Timeout\|Exception\)[^0-9]*\([0-9.]*\) sec.*/\1 \2 \3/p' \
           "$logdir/gpu-check-ctest.log" | sed 's/Not Run/Skipped/')
grep -q 'tests passed' "$logdir/gpu-check-ctest.log" &&
  note "ctest:  $(grep 'tests passed' "$logdir/gpu-check-ctest.log")"
[ $rc -ne 0 ] && tail -40 "$logdir/gpu-check-ctest.log"

# ---------------------------------------------------------------- sanitizer verdicts
wait
for job in "${san_jobs[@]}"; do
  read -r tool t log <<<"$job"
  rc=$(cat "$log.rc" 2>/dev/null || echo 1)
  case $rc in
    0) verdict="clean" ;;
    77) why=$(grep -m1 '^skip:' "$log" | cut -c7-) # the test's own reason
        verdict="skipped (${why:-exit 77, no reason printed})" ;;
    99) verdict="ERRORS: $(grep -m1 -E '(Invalid|Race|ERROR SUMMARY)' "$log")"; status=1 ;;
    *) verdict="test failed (exit $rc)"; status=1 ;;
  esac
  note "sanitizer: $(printf '%-10s %-28s %s' "$tool" "$t" "$verdict")"
done

note "result: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
printf '%s\n' "${lines[@]}" >"$summary"
exit $status
