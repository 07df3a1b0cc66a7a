#!/usr/bin/env python3
"""Asserts a merged fleet CSV against the planned case list (for the Slurm fleet tests).

usage: check_merged.py shard|replicate MERGED.csv PLANNED.txt WORLD NODE [--rank-lists DIR]
  shard      every planned case exactly once, every rank 0..WORLD-1 present
  replicate  every planned case exactly once per rank, on every rank
Both: every row ok, world_size WORLD, one non-empty job_id, node NODE. With --rank-lists, DIR/rankR.txt
holds `linstate-bench --list --fleet shard --rank R --world WORLD`: each rank ran exactly its list.
Exits 1 with a FAIL line naming what differs.
"""
import collections
import csv
import os
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    rank_lists = None
    if "--rank-lists" in args:
        i = args.index("--rank-lists")
        rank_lists = args[i + 1]
        del args[i:i + 2]
    mode, merged, planned_path, world, node = args
    world = int(world)
    planned = [l.strip() for l in open(planned_path) if l.strip()]
    rows = list(csv.DictReader(open(merged, newline="")))
    if not rows:
        fail(f"{merged}: no rows")
    bad = [(r["case"], r["status"]) for r in rows if r["status"] != "ok"]
    if bad:
        fail(f"rows not ok: {bad[:3]}")
    for col, want in (("world_size", {str(world)}), ("node", {node})):
        got = {r[col] for r in rows}
        if got != want:
            fail(f"column {col}: {sorted(got)}, want {sorted(want)}")
    jobs = {r["job_id"] for r in rows}
    if len(jobs) != 1 or "" in jobs:
        fail(f"one job id expected, got {sorted(jobs)}")
    ranks = {r["rank"] for r in rows}
    if ranks != {str(i) for i in range(world)}:
        fail(f"ranks {sorted(ranks)}, want 0..{world - 1}")
    count = collections.Counter(r["case"] for r in rows)
    per_rank = collections.Counter((r["case"], r["rank"]) for r in rows)
    if set(count) != set(planned):
        fail(f"cases differ from the plan: missing {sorted(set(planned) - set(count))[:3]}, "
             f"extra {sorted(set(count) - set(planned))[:3]}")
    want = 1 if mode == "shard" else world
    off = {c: n for c, n in count.items() if n != want}
    if off:
        fail(f"{mode}: cases not exactly {want} times: {sorted(off.items())[:3]}")
    if mode == "replicate" and any(n != 1 for n in per_rank.values()):
        fail("replicate: a case twice on one rank")
    if rank_lists:
        for r in range(world):
            mine = [l.strip() for l in open(os.path.join(rank_lists, f"rank{r}.txt")) if l.strip()]
            ran = [x["case"] for x in rows if x["rank"] == str(r)]
            if ran != mine:
                fail(f"rank {r} ran {ran[:3]}..., its --list says {mine[:3]}...")
    print(f"ok: {mode}: {len(rows)} rows, {len(count)} cases, ranks {sorted(ranks)}, job {jobs.pop()}")


if __name__ == "__main__":
    main()
