#!/usr/bin/env bash
# `cutegen bench --slurm` against a real Slurm: a one-node cluster (munged, slurmctld, slurmd from
# Debian's slurm-wlm and munge) started here in a temporary directory as root, no cgroups, no GRES.
# Two CPU shards of a --baselines-only suite run as an array job; `bench report` must merge both
# shards' results, every task exactly once. The daemons are killed on every way out.
# Skips (exit 77) only where Slurm is not installed or this is not root (SlurmUser=root).
set -uo pipefail
cutegen="$1"
src="$2"
for tool in munged slurmctld slurmd sbatch squeue sinfo; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    echo "SKIP: $tool is not installed (scripts/setup installs slurm-wlm and munge)"; exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the one-node Slurm of this test runs its daemons as root"; exit 77; fi
export PATH="$PATH:/usr/sbin"

# A short path: munge's socket name must fit in sockaddr_un.
tmp="$(mktemp -d /tmp/cgslurm.XXXXXX)"
chmod 755 "$tmp"
cleanup() {
  for f in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munge/munged.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  for f in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munge/munged.pid"; do
    [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
check() {
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
die() { echo "FAIL $*"; for l in "$tmp"/log/*.log "$tmp/munge/munged.log"; do [ -f "$l" ] && { echo "--- $l"; tail -20 "$l"; }; done; exit 1; }

# munge: its own key and socket
mkdir -p "$tmp/munge" && chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/sock" --pid-file="$tmp/munge/munged.pid" \
  --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/seed" || die "munged did not start"

# Free ports for this cluster, so concurrent runs and a real Slurm on the machine do not collide.
read -r ctld_port d_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=cutegentest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || die "slurmctld did not start"
slurmd -f "$SLURM_CONF" || die "slurmd did not start"
for _ in $(seq 100); do sinfo -h -o '%t' 2>/dev/null | grep -q '^idle' && break; sleep 0.2; done
sinfo -h -o '%t' | grep -q '^idle' || die "the node never became idle: $(sinfo 2>&1)"
echo "ok   one-node Slurm is up"

# The suite: four small problems, two shards.
mkdir -p "$tmp/p"
cp "$src/problems/relu.py" "$src/problems/scale_add.py" "$src/problems/layernorm.py" "$src/problems/row_sum.py" "$tmp/p/"
export CUTEGEN_PROBLEM_SCALE=64 CUTEGEN_CACHE_DIR="$tmp/cache" CUTEGEN_LOCK_DIR="$tmp/locks" XDG_CONFIG_HOME="$tmp/xdg"
unset CUTEGEN_CONFIG CUDA_VISIBLE_DEVICES
out=$("$cutegen" bench "$tmp/p" --baselines-only --device cpu --runs 5 --out "$tmp/suite" --slurm --shards 2 2>&1); rc=$?
check "bench --slurm submits" test $rc -eq 0 || echo "$out"
job=$(cat "$tmp/suite/slurm/job" 2>/dev/null)
check "the job id is recorded" test -n "$job"
check "the script is in the suite" grep -q '^#SBATCH --array=0-1$' "$tmp/suite/slurm/bench.sbatch"
for _ in $(seq 300); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.2; done
check "both array tasks finished" test -z "$(squeue -h -j "$job" 2>/dev/null)"
for i in 0 1; do
  check "shard $i wrote its output" test -s "$tmp/suite/slurm/shard-$i.out"
done
out=$("$cutegen" bench report "$tmp/suite" --format json)
check "bench report merges both shards, every task exactly once" python3 -c '
import json, sys
s = json.load(sys.stdin)
names = [t["name"] for t in s["tasks"]]
assert sorted(names) == ["layernorm", "relu", "row_sum", "scale_add"], names
assert s["counts"]["measured"] == 4, s["counts"]
shards = sorted({t["shard"] for t in s["tasks"]})
assert shards == ["0/2", "1/2"], shards
assert all(t["attempts"] == 1 for t in s["tasks"]), [t["attempts"] for t in s["tasks"]]
' <<<"$out"
out=$("$cutegen" bench status "$tmp/suite"); check "bench status sees all four" grep -q '4 measured' <<<"$out"
if ((fails)); then
  for i in 0 1; do echo "--- shard $i"; cat "$tmp/suite/slurm/shard-$i.out" 2>/dev/null; done
  tail -20 "$tmp/log/slurmd.log"
  echo "$fails check(s) failed"; exit 1
fi
echo "all Slurm checks passed"
