#!/usr/bin/env bash
# A one-node Slurm on this machine, from Debian's packages (deploy/install-deps.sh --with-slurm),
# for longhaul-agent --executor slurm and its tests (docs/slurm.md).
#
#   deploy/slurm-local.sh start|revive|stop|status
#
# `revive` starts whichever daemon is not running (after a test killed it) with the same
# slurm.conf, keeping the controller's saved jobs, and resumes the node if it is down.
#
# Everything lives under $LONGHAUL_SLURM_DIR (default /var/tmp/longhaul-slurm): slurm.conf,
# state, spool, logs, pid files. Client commands need SLURM_CONF=$DIR/etc/slurm.conf, which
# `start` prints. The node is this host with its real CPUs and memory and two GPUs as gres
# that are not GPUs: character devices under $DIR/dev (like /dev/null), so that Slurm hands
# them out and sets CUDA_VISIBLE_DEVICES (skipped where mknod is not allowed). Where the cgroup
# v1 memory controller is mounted, jobs run under task/cgroup with their memory enforced, so a
# job over its --mem ends OUT_OF_MEMORY (task/none otherwise). Two partitions:
# `low` (default, PriorityTier=1) and `high` (PriorityTier=2); PreemptType=preempt/partition_prio
# with PreemptMode=CANCEL, so a `high` job cancels a `low` one, whose state becomes PREEMPTED.
# `short` gives every job a 1-minute time limit (the time limit test).
# No accounting daemon: ended jobs are read with `scontrol show job` while the controller
# remembers them (MinJobAge=600 s), and a line per ended job goes to $DIR/log/jobcomp.txt
# (JobCompType=jobcomp/filetxt). Needs root (SlurmUser=root, munged).
#
# A cold `start` (no slurmctld running) clears the controller's saved state (`slurmctld -c`):
# jobs queued by an earlier start, whose processes died with its slurmd, are forgotten instead
# of sitting ahead of new jobs in the queue (they would show `PENDING (Priority)` for ever).
# `start` while the daemons run keeps them and their queue.
#
# LONGHAUL_SLURM_CPUS=N makes the node claim N CPUs (SlurmdParameters=config_overrides), so
# that N one-CPU jobs run at once: bench/slurm/queued.sh uses it for trivial jobs. A later plain
# `start` writes the real count again and restarts the daemons.
set -euo pipefail

DIR="${LONGHAUL_SLURM_DIR:-/var/tmp/longhaul-slurm}"
CONF="$DIR/etc/slurm.conf"
export SLURM_CONF="$CONF"
NODE="$(hostname -s)"
WAIT_S="${LONGHAUL_SLURM_WAIT_S:-60}"

die() { echo "slurm-local: $*" >&2; exit 1; }

alive() {  # pid file -> running? (the daemon the file is named after: a pid left in a stale
  # file may belong to another process by now)
  local pid
  [ -f "$1" ] && pid=$(cat "$1") && kill -0 "$pid" 2>/dev/null &&
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "$1" .pid)" ]
}

# The fake GPUs: character devices, since slurmd refuses gres files that are not devices.
make_gpus() {
  mkdir -p "$DIR/dev"
  local i
  for i in 0 1; do
    [ -c "$DIR/dev/gpu$i" ] || mknod "$DIR/dev/gpu$i" c 1 3 2>/dev/null || return 1
  done
}

# task/cgroup with the v1 memory controller (Slurm 22.05's cgroup/v2 needs slurmd under
# systemd, which a container does not have); LONGHAUL_SLURM_CGROUP=0 turns it off.
cgroup_v1_memory() {
  [ "${LONGHAUL_SLURM_CGROUP:-1}" != 0 ] && [ -w /sys/fs/cgroup/memory ] &&
    [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]
}

write_conf() {
  local cpus mem task=task/none gres="" overrides=""
  cpus="$(nproc)"
  if [ -n "${LONGHAUL_SLURM_CPUS:-}" ]; then
    cpus="$LONGHAUL_SLURM_CPUS"
    overrides="SlurmdParameters=config_overrides"
  fi
  # Leave a tenth of the memory to the system; slurmd refuses a node that claims more than it has.
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
  mkdir -p "$DIR/etc" "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run"
  if make_gpus; then
    gres="Gres=gpu:2 "
    echo "NodeName=$NODE Name=gpu File=$DIR/dev/gpu[0-1]" >"$DIR/etc/gres.conf"
  else
    rm -f "$DIR/etc/gres.conf"
  fi
  if cgroup_v1_memory; then
    task=task/cgroup
    printf '%s\n' CgroupPlugin=cgroup/v1 CgroupMountpoint=/sys/fs/cgroup ConstrainRAMSpace=yes \
      ConstrainSwapSpace=yes AllowedSwapSpace=0 >"$DIR/etc/cgroup.conf"
  else
    rm -f "$DIR/etc/cgroup.conf"
  fi
  cat >"$CONF.tmp" <<EOF
# Written by deploy/slurm-local.sh; rewritten at every start.
ClusterName=longhaul
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=$task
${gres:+GresTypes=gpu}
$overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# A job's memory when it does not ask (--mem); enforced under task/cgroup.
DefMemPerCPU=1024
SchedulerType=sched/backfill
# Jobs start at the next second's scheduling pass, not up to 3 s after a submit or an end (the
# default batch_sched_delay), which held the node to about 0.7 trivial jobs a second.
SchedulerParameters=batch_sched_delay=0
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
KillWait=5
# A node whose slurmd stops answering is DOWN (and its jobs NODE_FAIL) after 10 s, not the
# default 300 s, so that the node failure test (tests/slurm/slurm_fault_test.cc) is quick.
SlurmdTimeout=10
MinJobAge=600
# Jobs the controller holds at once, ended ones included until MinJobAge: the default 10000
# would refuse sbatch during bench/slurm/queued.sh's 10,000 attempts.
MaxJobCount=50000
ReturnToService=2
MpiDefault=none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem ${gres}State=UNKNOWN
PartitionName=low Nodes=$NODE Default=YES PriorityTier=1 MaxTime=INFINITE State=UP
PartitionName=high Nodes=$NODE PriorityTier=2 MaxTime=INFINITE State=UP
PartitionName=short Nodes=$NODE PriorityTier=1 DefaultTime=1 MaxTime=1 State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
  [ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (install munge)"
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  runuser -u munge -- munged || die "munged did not start"
  local deadline=$((SECONDS + 10))
  until munge -n 2>/dev/null | unmunge >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "munged does not answer after 10 s"
    sleep 0.2
  done
}

node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null | head -1; }

cmd_start() {  # $1: "revive": keep slurm.conf and the controller's saved jobs
  command -v slurmctld >/dev/null || die "slurmctld not found: run deploy/install-deps.sh --with-slurm"
  [ "$(id -u)" -eq 0 ] || die "needs root (SlurmUser=root)"
  local clear=-c
  if [ "${1:-}" = revive ]; then
    [ -f "$CONF" ] || die "$CONF is missing: use start"
    clear=""
  fi
  # Daemons left running by an older version of this script run with its slurm.conf: when the
  # file this version writes differs, restart them with it (a missing partition would fail
  # the tests that use it).
  if [ -n "$clear" ] && [ -f "$CONF" ] && alive "$DIR/run/slurmctld.pid" &&
    alive "$DIR/run/slurmd.pid"; then
    cp "$CONF" "$CONF.running"
    write_conf
    if ! cmp -s "$CONF" "$CONF.running"; then
      echo "slurm-local: slurm.conf changed; restarting slurmctld and slurmd"
      cmd_stop
    fi
    rm -f "$CONF.running"
  fi
  if ! alive "$DIR/run/slurmctld.pid" || ! alive "$DIR/run/slurmd.pid"; then
    [ -n "$clear" ] && write_conf
    start_munge
    if ! alive "$DIR/run/slurmctld.pid"; then
      # -c forgets every saved job. Their batch scripts (hash.N/job.ID) would otherwise be
      # purged one by one as slurmctld starts, about 12 ms each: over a minute after a
      # 10,000-job bench, longer than the wait below.
      [ -n "$clear" ] && rm -rf "$DIR/state"/hash.[0-9]*
      slurmctld $clear -f "$CONF" || die "slurmctld did not start; see $DIR/log/slurmctld.log"
    fi
    alive "$DIR/run/slurmd.pid" || slurmd -f "$CONF" || die "slurmd did not start; see $DIR/log/slurmd.log"
  fi
  local deadline=$((SECONDS + WAIT_S)) state=""
  while :; do
    state="$(node_state)"
    case "$state" in
      idle|mixed|allocated|completing) break ;;
      down*|drain*|drained*) scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    [ $SECONDS -lt $deadline ] ||
      die "node $NODE is not up after ${WAIT_S} s (sinfo says '${state:-nothing}'); see $DIR/log/"
    sleep 0.5
  done
  echo "slurm-local: node $NODE is $state; export SLURM_CONF=$CONF"
}

cmd_stop() {
  local f pid
  for f in slurmd slurmctld; do
    if alive "$DIR/run/$f.pid"; then
      pid="$(cat "$DIR/run/$f.pid")"
      kill "$pid"
      local deadline=$((SECONDS + 15))
      while kill -0 "$pid" 2>/dev/null; do
        if [ $SECONDS -ge $deadline ]; then kill -9 "$pid" 2>/dev/null || true; break; fi
        sleep 0.2
      done
    fi
  done
  echo "slurm-local: stopped (munged left running; state kept in $DIR)"
}

cmd_status() {
  local ok=0
  alive "$DIR/run/slurmctld.pid" && echo "slurmctld: running" || { echo "slurmctld: not running"; ok=1; }
  alive "$DIR/run/slurmd.pid" && echo "slurmd: running" || { echo "slurmd: not running"; ok=1; }
  [ $ok -eq 0 ] && sinfo
  echo "SLURM_CONF=$CONF"
  return $ok
}

case "${1:-}" in
  start) cmd_start ;;
  revive) cmd_start revive ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start|revive|stop|status" >&2; exit 2 ;;
esac
