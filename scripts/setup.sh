#!/usr/bin/env bash
# scripts/setup.sh — install what linstate needs to build and test, skipping what is present.
# Debian/Ubuntu; uses apt-get when run as root, pip for the Python libraries of scripts/.
# Works offline when everything is already installed (the GPU machine has no network).
set -euo pipefail

need_pkgs=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/local/include/$1" ]; }

have_cmd cmake      || need_pkgs+=(cmake)
have_cmd cc         || need_pkgs+=(build-essential)
have_cmd c++        || need_pkgs+=(g++)
have_cmd pkg-config || need_pkgs+=(pkg-config)
have_cmd python3    || need_pkgs+=(python3 python3-pip)
have_hdr benchmark/benchmark.h || need_pkgs+=(libbenchmark-dev)
have_hdr hwloc.h    || need_pkgs+=(libhwloc-dev)

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && have_cmd apt-get; then
    echo "setup: installing ${need_pkgs[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2
  else
    echo "setup: missing ${need_pkgs[*]} (run as root on Debian/Ubuntu to install them)" >&2
    exit 1
  fi
fi

# Slurm and munge for the fleet tests (CTest label slurm: a private one-node cluster on the
# loopback address). Optional: without root or network the tests say SKIPPED (exit 77).
have_sbin() { have_cmd "$1" || [ -x "/usr/sbin/$1" ]; }
slurm_pkgs=()
have_sbin slurmctld && have_sbin slurmd && have_cmd srun || slurm_pkgs+=(slurm-wlm)
have_sbin munged || slurm_pkgs+=(munge)
if [ ${#slurm_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && have_cmd apt-get; then
    echo "setup: installing ${slurm_pkgs[*]} (Slurm fleet tests)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${slurm_pkgs[@]}" >&2; } \
      || echo "setup: warning: ${slurm_pkgs[*]} not installed; the Slurm fleet tests will be skipped" >&2
  else
    echo "setup: note: ${slurm_pkgs[*]} missing (root installs them); the Slurm fleet tests will be skipped" >&2
  fi
fi

# Python libraries for scripts/ (compare, plot). Not needed to build or benchmark; the tests of
# the scripts need them. A failed install (e.g. offline) is a warning: those tests then fail loudly.
if ! python3 -c 'import numpy, scipy, matplotlib' >/dev/null 2>&1; then
  echo "setup: installing numpy scipy matplotlib (pip)" >&2
  if ! python3 -m pip install -q numpy scipy matplotlib >&2; then
    if [ "$(id -u)" -eq 0 ] && have_cmd apt-get; then
      apt-get install -y -qq python3-numpy python3-scipy python3-matplotlib >&2 || true
    fi
    python3 -c 'import numpy, scipy, matplotlib' >/dev/null 2>&1 \
      || echo "setup: warning: numpy/scipy/matplotlib unavailable; scripts/compare.py and plot.py will not run" >&2
  fi
fi

# Peer impls (docs/peers.md): triton 3.6.0 AOT-compiles the Triton peers at build time (no GPU
# needed), and the pinned peer sources are fetched into .peers/src. Both are optional: offline,
# a warning, and the build leaves those peers out.
if ! python3 -c 'import triton, sys; sys.exit(0 if triton.__version__.startswith("3.6.") else 1)' >/dev/null 2>&1; then
  echo "setup: installing triton==3.6.0 (pip)" >&2
  python3 -m pip install -q triton==3.6.0 >&2 \
    || echo "setup: warning: triton 3.6.0 unavailable; the Triton peer impls will be left out" >&2
fi
bash "$(dirname "$0")/peers.sh" fetch || true
