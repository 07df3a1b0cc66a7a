#!/usr/bin/env bash
# scripts/aa-check.sh [--build DIR] [--out DIR] [--backend cuda|host] [--compare-dir DIR]
#                     [--interleave|--no-interleave] [--rounds N] [--plant-pct 5|10|50]
#                     [-- BENCH ARGS...]
#
# Checks that scripts/compare.py stays quiet on no change and catches a planted one (issue 13):
#   1. A/A: the same build runs the same sweep twice (two processes, one after the other);
#      compare.py must say 0 SLOWER and 0 FASTER (and exit 0).
#   2. planted: the sweep again with the TEST-ONLY wrapper impl "<impl>_planted"
#      (tests/plugin/planted_impl.c, loaded with --impl-path) that forwards every op to the
#      built-in impl and slows gdn by plant.pct; compare.py --impls <impl>:<impl>_planted must
#      call every planted row SLOWER (cuda) and no other row SLOWER or FASTER.
# Prints each run's wall time, both comparisons (also written to OUT/compare-aa.txt and
# OUT/compare-planted.txt) and, per planted row, the slowdown actually measured.
#
#   cuda (default when BUILD has the linstate plugin and nvidia-smi lists a GPU): the full default
#        sweep, plant.pct 5 (gdn calls with B >= 512: gdn decode/verify at B = 512).
#   host: a small sweep (qwen3-next + kimi-linear, conv/gdn decode, pool copy/accept, B 1,4), plant.pct 50 on
#        every gdn call. A busy shared host can make the planted rows NOISY: there, they must only
#        not be FASTER; the A/A and the other rows are checked as on the GPU. (CTest scripts_aa_check.)
# --plant-pct P sets the planted slowdown (knob plant.pct; default 5 on cuda, 50 on host).
# --compare-dir DIR judges with DIR/compare.py instead (e.g. an older one, to show it fails).
# --interleave (default on host) runs the sweeps case by case, each case for A, A' and planted in
# turn (one linstate-bench process per case and run), so that the drifting load of a shared
# machine hits every side alike; --no-interleave (default on cuda) runs three whole sweeps.
# --rounds N (interleaved only; default 3 on host, 1 on cuda): N processes per case and side, so
# each side has N repetitions and compare.py sees how far a case moves between processes.
# BENCH ARGS replace the sweep's axes (e.g. -- --family gdn --batch 512). Exit 0 when every check
# passes, 1 when one fails, 2 on bad usage or a missing binary/plugin.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="" out="" backend="" extra=() cmpdir="$root/scripts" interleave="" rounds="" pct_arg=""
# An option's value: the next argument, or a usage error (exit 2) naming what it needs.
value() { [ $# -ge 3 ] && [ -n "$3" ] || { echo "aa-check.sh: $1 needs $2" >&2; exit 2; }; printf '%s' "$3"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(value --build "a directory" "${2-}") || exit 2; shift 2 ;;
    --out) out=$(value --out "a directory" "${2-}") || exit 2; shift 2 ;;
    --backend) backend=$(value --backend "cuda or host" "${2-}") || exit 2; shift 2 ;;
    --compare-dir) cmpdir=$(value --compare-dir "a directory" "${2-}") || exit 2; shift 2 ;;
    --interleave) interleave=1; shift ;;
    --no-interleave) interleave=0; shift ;;
    --plant-pct) pct_arg=$(value --plant-pct "5, 10 or 50" "${2-}") || exit 2; shift 2
                 [[ "$pct_arg" =~ ^(5|10|50)$ ]] || { echo "aa-check.sh: --plant-pct: bad value '$pct_arg' (5, 10 or 50)" >&2; exit 2; } ;;
    --rounds) rounds=$(value --rounds "a count" "${2-}") || exit 2; shift 2
              [[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "aa-check.sh: --rounds: bad value '$rounds' (1-99)" >&2; exit 2; } ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "aa-check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ]; then
  for b in "$root/build-gpu" "$root/build" "$root/build-host"; do
    [ -x "$b/bench/linstate-bench" ] && { build=$b; break; }
  done
fi
bench=$build/bench/linstate-bench
[ -n "$build" ] && [ -x "$bench" ] || { echo "aa-check.sh: no linstate-bench in '${build:-build*}' (build first, or --build DIR)" >&2; exit 2; }
if [ -z "$backend" ]; then
  backend=host
  [ -f "$build/tests/plugin/libls_test_planted_linstate.so" ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && backend=cuda
fi
case "$backend" in
  cuda) impl=linstate; pct=5; axes=(); interleave=${interleave:-0}; rounds=${rounds:-1} ;;
  host) impl=host; pct=50; interleave=${interleave:-1}; rounds=${rounds:-3}
        axes=(--model qwen3-next-80b-a3b,kimi-linear-48b-a3b --family conv1d_update/decode,gdn/decode,pool/copy,pool/accept
              --batch 1,4 --draft 1,2 --max-time 0.1) ;;
  *) echo "aa-check.sh: --backend: bad value '$backend' (cuda or host)" >&2; exit 2 ;;
esac
[ ${#extra[@]} -gt 0 ] && axes=("${extra[@]}")
[ -n "$pct_arg" ] && pct=$pct_arg
plugin=$build/tests/plugin/libls_test_planted_$impl.so
[ -f "$plugin" ] || { echo "aa-check.sh: no planted plugin $plugin (built with the tests)" >&2; exit 2; }
out=${out:-$build/aa-check}
mkdir -p "$out" || exit 2
export PYTHONDONTWRITEBYTECODE=1

# The three runs: NAME and its extra arguments.
run_args() {
  case "$1" in
    planted) printf '%s\n' --impl-path "$plugin" --impl "${impl}_planted" --tune "${impl}_planted:plant.pct=$pct" ;;
  esac
}
bench_run() { # NAME OUTFILE ARGS...: one linstate-bench run of NAME's sweep
  local name=$1 file=$2; shift 2
  local a; mapfile -t a < <(run_args "$name")
  "$bench" --backend "$backend" "${axes[@]}" "${a[@]}" "$@" --out "$file" >>"$out/$name.txt" 2>>"$out/$name.log" || {
    echo "aa-check.sh: the $name sweep failed (see $out/$name.log)" >&2; tail -5 "$out/$name.log" >&2; exit 1; }
}
ere_escape() { printf '%s' "$1" | sed -e 's/[][\.^$*+?(){}|]/\\&/g'; }

names=(aa-1 aa-2 planted)
for n in "${names[@]}"; do rm -f "$out/$n.csv" "$out/$n.txt" "$out/$n.log"; done
if [ "$interleave" = 1 ]; then
  # Case by case, each case run for every NAME in turn: the machine's load drifts over seconds,
  # and interleaving makes every drift hit the two A/A sides (and the planted side) alike.
  listerr=$(mktemp)
  mapfile -t keys < <("$bench" --backend "$backend" "${axes[@]}" --list 2>"$listerr")
  # the bench's own line (a bad axis value) says more than "no case"
  [ ${#keys[@]} -gt 0 ] || { { grep -m1 '^linstate-bench:' "$listerr" || head -1 "$listerr"; } | grep . >&2 || echo "aa-check.sh: the sweep lists no case" >&2; rm -f "$listerr"; exit 2; }
  rm -f "$listerr"
  t0=$SECONDS
  for key in "${keys[@]}"; do
    filter="^$(ere_escape "$key")(/(impl|tune|dev|repeats|iterations|min_time|threads):[^/]*|/(manual|real|process)_time)*\$"
    for ((round = 0; round < rounds; round++)); do for n in "${names[@]}"; do
      bench_run "$n" "$out/$n.part.csv" --benchmark_filter="$filter"
      if [ -f "$out/$n.csv" ]; then tail -n +2 "$out/$n.part.csv" >>"$out/$n.csv"; else cp "$out/$n.part.csv" "$out/$n.csv"; fi
      rm -f "$out/$n.part.csv"
    done; done
  done
  echo "runs aa-1, aa-2, planted interleaved case by case, $rounds process(es) each: $((SECONDS - t0)) s (${#keys[@]} cases)"
else
  for n in "${names[@]}"; do
    t0=$SECONDS
    bench_run "$n" "$out/$n.csv"
    echo "run $n: $((SECONDS - t0)) s ($(($(wc -l <"$out/$n.csv") - 1)) rows) -> $out/$n.csv"
  done
fi

[ -f "$cmpdir/compare.py" ] || { echo "aa-check.sh: --compare-dir: no compare.py in '$cmpdir'" >&2; exit 2; }
python3 "$cmpdir/compare.py" "$out/aa-1.csv" "$out/aa-2.csv" >"$out/compare-aa.txt"
aa_rc=$?
python3 "$cmpdir/compare.py" "$out/aa-1.csv" "$out/planted.csv" --impls "$impl:${impl}_planted" \
  >"$out/compare-planted.txt"
planted_rc=$?

python3 - "$cmpdir" "$out" "$impl" "$backend" "$aa_rc" "$planted_rc" <<'EOF'
import re, sys
sys.path.insert(0, sys.argv[1])
import compare
out, impl, backend, aa_rc, planted_rc = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
a1, a2, pl = (compare.load_csv(f"{out}/{n}.csv") for n in ("aa-1", "aa-2", "planted"))
fails = []
aa = compare.compare_runs(a1, a2)
c = aa.counts()
print(f"A/A: {', '.join(f'{c[d]} {d}' for d in compare.DECISIONS)} over {len(aa.results)} cases "
      f"(compare.py exit {aa_rc}; {out}/compare-aa.txt)")
for r in aa.results:
    if r.decision in ("SLOWER", "FASTER"):
        fails.append(f"A/A: {r.key.case} {r.decision} {r.change_pct:+.2f}% (noise bound {getattr(r, 'bound_pct', 0):.2f}%)")
if aa_rc != 0:
    fails.append(f"A/A: compare.py exit {aa_rc}, expected 0")
# The planted rows: the wrapper's explain says "+planted P% at B>=N" on gdn rows.
planted_keys = set()
for r in pl.rows:
    m = re.search(r"\+planted (\d+)% at B>=(\d+)", r.get("kernel", ""))
    if m and int(m.group(1)) > 0 and int(r["batch"]) >= int(m.group(2)):
        planted_keys.add((r["case"], r["variant"]))
cmp = compare.compare_runs(a1, pl, impls=(impl, impl + "_planted"))
c = cmp.counts()
print(f"planted: {', '.join(f'{c[d]} {d}' for d in compare.DECISIONS)} over {len(cmp.results)} cases, "
      f"{len(planted_keys)} planted (compare.py exit {planted_rc}; {out}/compare-planted.txt)")
if not planted_keys:
    fails.append("planted: no planted row in the sweep (does it hold gdn at the plant's batch?)")
for r in cmp.results:
    planted = (r.key.case, r.key.variant) in planted_keys
    if planted:
        print(f"  planted {r.key.case}: {r.before_us:.3f} -> {r.after_us:.3f} us, measured "
              f"{r.change_pct:+.2f}% (noise bound {getattr(r, 'bound_pct', 0):.2f}%): {r.decision}")
        ok = r.decision == "SLOWER" if backend == "cuda" else r.decision not in ("FASTER",)
        if not ok:
            fails.append(f"planted: {r.key.case} is {r.decision}, expected SLOWER")
    elif r.decision in ("SLOWER", "FASTER"):
        fails.append(f"planted run: unplanted {r.key.case} {r.decision} {r.change_pct:+.2f}%")
for f in fails:
    print("FAIL: " + f)
print("result: " + ("FAIL" if fails else "PASS"))
sys.exit(1 if fails else 0)
EOF
