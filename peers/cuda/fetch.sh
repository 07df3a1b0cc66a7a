#!/usr/bin/env bash
# peers/cuda/fetch.sh — kept for muscle memory: the CUDA peers' sources come from the one fetch
# of every pinned peer package (peers/pins.txt, subtrees in scripts/peers.sh).
exec bash "$(dirname "$0")/../../scripts/peers.sh" fetch
