#!/usr/bin/env bash
# scripts/jobs/fleet-h200.sh — the fleet paths on ONE GPU (the H200 of the device tool): two
# linstate-bench processes take turns as ranks 0 and 1 of a world of 2 (--rank/--world, no
# launcher), in shard mode and in replicate mode; each mode is merged (scripts/fleet/merge.py) and the
# replicate run gets a fleet report (scripts/fleet/fleet_report.py).
#
#   scripts/jobs/fleet-h200.sh [OUT_DIR]        default results/h200/fleet-<short commit>
#
# Writes OUT_DIR/shard/*.csv + shard.csv + shard-merge.txt, OUT_DIR/replicate/*.csv +
# replicate.csv + replicate-merge.txt, OUT_DIR/report/ (fleet.md, fleet.csv, fleet.png) and
# OUT_DIR/check.txt, the assertions below:
#   shard      every planned case exactly once over ranks 0 and 1, each rank exactly its --list
#   replicate  every planned case once per rank
#   both       gpu_uuid "GPU-..." and pci_bus_id filled, world_size 2, one GPU
# Exit status: 0 all checks passed; 1 a check or a run failed.
# Environment: LINSTATE_BENCH=path (no build), LINSTATE_SKIP_SETUP=1, LS_BENCH_ARGS (the sweep;
# default below, a few minutes per mode on an H200).
set -euo pipefail
cd "$(dirname "$0")/../.."
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
out=${1:-results/h200/fleet-$commit}
bench=${LINSTATE_BENCH:-}
if [ -z "$bench" ]; then
  [ "${LINSTATE_SKIP_SETUP:-0}" = 1 ] || bash scripts/setup.sh
  cmake --preset default >/dev/null
  cmake --build build -j "$(nproc)" --target linstate-bench
  bench=build/bench/linstate-bench
fi
# shellcheck disable=SC2206
args=(${LS_BENCH_ARGS:---model qwen3-next-80b-a3b,nemotron-h-8b --family conv1d_update,gdn,mamba2_ssu,pool/copy --tp 2 --batch 1,64,512 --draft 1,4})
mkdir -p "$out"
"$bench" "${args[@]}" --list >"$out/planned.txt"
for mode in shard replicate; do
  for r in 0 1; do # two processes taking turns on the one GPU
    "$bench" "${args[@]}" --list --fleet "$mode" --rank $r --world 2 >"$out/$mode-rank$r.txt" 2>/dev/null
    echo "== $mode rank $r of 2" >&2
    "$bench" "${args[@]}" --fleet "$mode" --rank $r --world 2 --out-dir "$out/$mode" >"$out/$mode-rank$r.log" 2>&1 \
      || { tail -n 20 "$out/$mode-rank$r.log" >&2; echo "fleet-h200: $mode rank $r failed" >&2; exit 1; }
  done
  python3 scripts/fleet/merge.py "$out/$mode" --out "$out/$mode.csv" | tee "$out/$mode-merge.txt"
done
python3 scripts/fleet/fleet_report.py "$out/replicate.csv" --out "$out/report" >/dev/null
python3 - "$out" <<'PY' | tee "$out/check.txt"
import collections, csv, sys
out = sys.argv[1]
planned = [l.strip() for l in open(f"{out}/planned.txt") if l.strip()]
def rows(mode):
    with open(f"{out}/{mode}.csv", newline="") as f:
        return list(csv.DictReader(f))
bad = []
for mode in ("shard", "replicate"):
    rs = rows(mode)
    n = collections.Counter(r["case"] for r in rs)
    want = 1 if mode == "shard" else 2
    if set(n) != set(planned) or any(v != want for v in n.values()):
        bad.append(f"{mode}: cases not {want} time(s) each: {sorted((c, v) for c, v in n.items() if v != want)[:3]}")
    for r in range(2):
        mine = [l.strip() for l in open(f"{out}/{mode}-rank{r}.txt") if l.strip()]
        if [x["case"] for x in rs if x["rank"] == str(r)] != mine:
            bad.append(f"{mode}: rank {r} did not run exactly its --list")
    uuids = {r["gpu_uuid"] for r in rs}
    if len(uuids) != 1 or not uuids.pop().startswith("GPU-") or "" in {r["pci_bus_id"] for r in rs}:
        bad.append(f"{mode}: gpu_uuid/pci_bus_id not filled with one GPU")
    if {r["world_size"] for r in rs} != {"2"} or any(r["status"] != "ok" for r in rs):
        bad.append(f"{mode}: world_size or status off")
    print(f"{mode}: {len(rs)} rows, {len(n)} cases, gpu {rs[0]['gpu_uuid']} bus {rs[0]['pci_bus_id']}")
for b in bad:
    print("FAIL: " + b)
print("result: " + ("FAIL" if bad else "PASS"))
sys.exit(1 if bad else 0)
PY
echo "fleet-h200: $out (shard.csv, replicate.csv, report/fleet.md)"
