# tests/fleet/slurm_cluster.sh — a private one-node Slurm cluster on the loopback address, for the
# fleet tests. Sourced (bash); defines:
#   cluster_start   generates slurm.conf in $LS_CLUSTER_DIR (a fresh temporary folder) with free
#                   non-default ports, starts munged (its own key and socket), slurmctld and slurmd
#                   there and waits until the node is idle; exports SLURM_CONF. Exits 77 (skipped)
#                   with a SKIPPED line when Slurm or munge is not installed, 1 when a daemon fails.
#   cluster_stop    cancels every job, stops the daemons by their pid files, removes the folder.
#                   Installed as the EXIT trap by cluster_start: nothing is left running.
# State, spool, logs and pids live in the temporary folder; nothing under /etc or /var is touched.

ls_fail() { echo "FAIL: $*" >&2; exit 1; }

cluster_have_slurm() {
  local c
  for c in slurmctld slurmd munged srun sbatch squeue sinfo scancel; do
    if ! command -v "$c" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$c" ]; then
      echo "SKIPPED: '$c' not found: Slurm and munge are not installed (scripts/setup.sh installs slurm-wlm and munge as root on Debian/Ubuntu)"
      return 1
    fi
  done
  return 0
}

# Two free TCP ports on 127.0.0.1 (asked of the kernel, so parallel tests do not collide).
cluster_ports() {
  python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

cluster_log_tail() {
  local f
  for f in "$LS_CLUSTER_DIR"/*.log; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
  done
}

cluster_stop() {
  local rc=$?
  [ -n "${LS_CLUSTER_DIR:-}" ] && [ -d "$LS_CLUSTER_DIR" ] || exit "$rc"
  if [ -f "$LS_CLUSTER_DIR/slurmctld.pid" ]; then
    scancel --quiet --full --signal=KILL --user="$(id -un)" >/dev/null 2>&1 || true
    local i
    for i in $(seq 1 50); do # jobs gone before their slurmd (its step daemons end with them)
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local d pid
  for d in slurmd slurmctld munged; do
    pid=$(cat "$LS_CLUSTER_DIR/$d.pid" 2>/dev/null || true)
    [ -n "$pid" ] || continue
    kill -TERM "$pid" 2>/dev/null || continue
    for i in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  done
  [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && cluster_log_tail
  rm -rf "$LS_CLUSTER_DIR"
  exit "$rc"
}

cluster_start() {
  cluster_have_slurm || exit 77
  export PATH="$PATH:/usr/sbin"
  LS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ls-slurm.XXXXXX")
  export LS_CLUSTER_DIR
  trap cluster_stop EXIT
  trap 'exit 130' INT TERM
  local d=$LS_CLUSTER_DIR user node ports ctld_port slurmd_port
  chmod 700 "$d"
  mkdir -p "$d/state" "$d/spool" "$d/munge"
  chmod 700 "$d/munge"
  user=$(id -un)
  node="lsnode$$"
  read -r ctld_port slurmd_port < <(cluster_ports)

  # munge: a key of our own and a socket in the folder; the daemons and clients find it through
  # AuthInfo below.
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge/munge.key"
  munged --force --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" \
    --pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munge/seed" \
    >"$d/munged.out" 2>&1 || { cat "$d/munged.out" >&2; ls_fail "munged did not start"; }

  cat >"$d/slurm.conf" <<EOF
ClusterName=lstest$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
PlugStackConfig=$d/plugstack.conf
InactiveLimit=0
KillWait=2
MinJobAge=2
NodeName=$node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$d/plugstack.conf"
  export SLURM_CONF="$d/slurm.conf"
  slurmctld -c -f "$SLURM_CONF" || ls_fail "slurmctld did not start"
  slurmd -N "$node" -f "$SLURM_CONF" || ls_fail "slurmd did not start"
  local i state=""
  for i in $(seq 1 100); do
    state=$(sinfo -h -n "$node" -o %t 2>/dev/null || true)
    [ "$state" = "idle" ] && break
    sleep 0.2
  done
  [ "$state" = "idle" ] || ls_fail "the node did not become idle (state '$state')"
  LS_CLUSTER_NODE=$node
  export LS_CLUSTER_NODE
  echo "cluster: $node up (slurmctld port $ctld_port, slurmd port $slurmd_port, $d)"
}
