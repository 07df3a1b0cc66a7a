#!/usr/bin/env bash
# scripts/jobs/two-gpu.sh's dry run (host backend, both "GPUs" the same, a tiny sweep): every step runs,
# the replicate merge holds every case once per rank, the shard merge once, and the wall-time and
# interference tables are written. usage: test_two_gpu.sh BENCH SOURCE_DIR
set -uo pipefail
bench=$1 src=$2
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fail() { echo "test_two_gpu: $*" >&2; exit 1; }
GPUS="0 0" TWO_GPU_SKIP_CHECK=1 LINSTATE_BENCH="$bench" \
  LS_BENCH_ARGS="--backend host --family conv1d_update,pool/copy --model nemotron-h-8b --tp 8 --batch 1,4 --draft 1" \
  bash "$src/scripts/jobs/two-gpu.sh" "$out/run" >"$out/log" 2>&1 || { cat "$out/log" >&2; fail "two-gpu.sh failed"; }
r=$out/run
for f in alone.csv replicate.csv shard.csv walltimes.txt interference.md report/fleet.md; do
  [ -s "$r/$f" ] || fail "missing $f"
done
python3 - "$r" <<'PY' || fail "merged counts"
import collections, csv, sys
r = sys.argv[1]
def cases(f):
    with open(f"{r}/{f}", newline="") as fh:
        return collections.Counter(x["case"] for x in csv.DictReader(fh))
alone, rep, shard = cases("alone.csv"), cases("replicate.csv"), cases("shard.csv")
assert len(alone) == 4, alone
assert rep == collections.Counter({c: 2 for c in alone}), rep
assert shard == collections.Counter({c: 1 for c in alone}), shard
PY
grep -q "shard speed-up over one GPU" "$r/walltimes.txt" || fail "walltimes.txt has no speed-up line"
grep -q "^| conv1d_update | 2 |" "$r/interference.md" || fail "interference.md has no conv1d_update row"
echo "test_two_gpu: ok"
