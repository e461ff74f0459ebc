#!/usr/bin/env bash
# Bring up a real single-node SLURM cluster for the tests: munge, MariaDB, slurmdbd,
# slurmctld and slurmd (Debian's slurm-wlm 22.05), as root, inside the network namespace
# $PACML_SLURM_NETNS (loopback only), all state under $PACML_SLURM_DIR.
# Installs the Debian packages when missing. Waits until `sinfo` shows the node idle.
# Every daemon's PID is written to $PACML_SLURM_DIR/pids; down.sh stops exactly those.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
D=$PACML_SLURM_DIR

[ "$(id -u)" = 0 ] || { echo "up.sh: must run as root (it installs packages and starts daemons)" >&2; exit 1; }
if [ -s "$D/pids" ]; then  # a list left by a run that was killed counts only while one lives
    while read -r name pid; do
        if kill -0 "$pid" 2>/dev/null; then
            echo "up.sh: a cluster is already up under $D ($name, pid $pid; run tests/slurm/down.sh first)" >&2; exit 1
        fi
    done < "$D/pids"
fi

need=()
for pair in ip:iproute2 slurmctld:slurm-wlm slurmd:slurm-wlm slurmdbd:slurmdbd mariadbd:mariadb-server munged:munge; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "up.sh: installing ${need[*]}"
    apt-get update -qq
    # policy-rc.d keeps the packages' own services from starting: this script starts its own.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi

rm -rf "$D"
mkdir -p "$D"/{etc,log,run,state,spool,munge,mysql}
chmod 755 "$D"; chmod 700 "$D/munge"
: > "$D/pids"
remember() { echo "$1 $2" >> "$D/pids"; }   # name pid

netns_created=0
if ! ip netns list | grep -qw "$PACML_SLURM_NETNS"; then
    ip netns add "$PACML_SLURM_NETNS"; netns_created=1
fi
echo "$netns_created" > "$D/netns_created"
in_ns ip link set lo up
# A second loopback address: glibc's getaddrinfo(AI_ADDRCONFIG), which Slurm calls, returns
# no IPv4 address on a host whose only one is 127.0.0.1 (the namespace still has no route out).
in_ns ip -4 addr show dev lo | grep -q 127.0.0.2 || in_ns ip addr add 127.0.0.2/8 dev lo

wait_for() {  # what, seconds, command...
    local what=$1 secs=$2; shift 2
    for _ in $(seq "$secs"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
    echo "up.sh: $what did not come up within ${secs}s; logs under $D/log" >&2
    tail -n 20 "$D"/log/* >&2 || true
    exit 1
}

# munge: the credentials every Slurm message carries. Its socket is munge's default path
# (Slurm's clients look there whatever AuthInfo says), so a munged already on it is refused.
sock=/run/munge/munge.socket.2
if [ -S "$sock" ] && munge -n -S "$sock" >/dev/null 2>&1; then
    echo "up.sh: a munged already listens on $sock (not ours; stop it or use that machine's SLURM)" >&2; exit 1
fi
mkdir -p /run/munge
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$D/munge/munge.key"
munged --force --key-file="$D/munge/munge.key" --socket="$sock" \
    --pid-file="$D/run/munged.pid" --log-file="$D/log/munged.log" --seed-file="$D/munge/seed" \
    </dev/null >>"$D/log/munged.out" 2>&1
wait_for munged 10 test -s "$D/run/munged.pid"
remember munged "$(cat "$D/run/munged.pid")"

# MariaDB: slurmdbd's accounting store (sacct reads job states from it).
mariadb-install-db --no-defaults --datadir="$D/mysql" --user=root \
    --auth-root-authentication-method=socket --skip-test-db >"$D/log/mariadb-install.log" 2>&1
in_ns mariadbd --no-defaults --datadir="$D/mysql" --socket="$D/run/mysqld.sock" \
    --pid-file="$D/run/mysqld.pid" --bind-address=127.0.0.1 --port=3306 --user=root \
    --log-error="$D/log/mariadb.log" --skip-log-bin </dev/null >>"$D/log/mariadb.out" 2>&1 &
wait_for MariaDB 60 timeout 5 mariadb --no-defaults -S "$D/run/mysqld.sock" -u root -e 'SELECT 1'
remember mariadbd "$(cat "$D/run/mysqld.pid")"
dbpass=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
mariadb --no-defaults -S "$D/run/mysqld.sock" -u root <<SQL
CREATE DATABASE slurm_acct_db;
CREATE USER 'slurm'@'localhost' IDENTIFIED BY '$dbpass';
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$dbpass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
SQL

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 2048 ))  # 2 GiB left to the daemons

cat > "$D/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
LogFile=$D/log/slurmdbd.log
PidFile=$D/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=3306
StorageUser=slurm
StoragePass=$dbpass
StorageLoc=slurm_acct_db
CONF
chmod 600 "$D/etc/slurmdbd.conf"

cat > "$D/etc/slurm.conf" <<CONF
# Written by tests/slurm/up.sh: one node, this machine's cores and memory.
ClusterName=pacml
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# Memory: sampled every 2 s; a step over its --mem is killed (SLURM's message in its log).
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=2
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=6819
AccountingStorageEnforce=associations
AccountingStoreFlags=job_comment   # sacct shows the rule of each job
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=600
KillWait=10
InactiveLimit=0
SlurmdTimeout=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=pacml Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# The default path too: the jobstep plugin (0.6.1) clears SLURM_* from the environment of the
# `srun` it starts inside a job, SLURM_CONF included, so srun reads /etc/slurm/slurm.conf.
# A link to ours, made only where there is none (down.sh removes it if it is still ours).
if [ -e /etc/slurm/slurm.conf ] || [ -L /etc/slurm/slurm.conf ]; then
    if [ "$(readlink /etc/slurm/slurm.conf)" != "$D/etc/slurm.conf" ]; then
        echo "up.sh: /etc/slurm/slurm.conf exists and is not this test cluster's; not replacing it" >&2; exit 1
    fi
else
    mkdir -p /etc/slurm && ln -s "$D/etc/slurm.conf" /etc/slurm/slurm.conf
fi

# slurmd loads a cgroup plugin even with task/none; naming v1 skips the mount detection
# (no cgroup filesystem in a container) and nothing here asks it to confine anything.
mkdir -p "$D/cgroup"
cat > "$D/etc/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=$D/cgroup
IgnoreSystemd=yes
CONF

# slurmdbd reads slurmdbd.conf from the folder of slurm.conf.
in_ns slurmdbd </dev/null >>"$D/log/slurmdbd.out" 2>&1
wait_for slurmdbd 30 test -s "$D/run/slurmdbd.pid"
remember slurmdbd "$(cat "$D/run/slurmdbd.pid")"
wait_for "slurmdbd's port" 30 in_ns timeout 5 sacctmgr -n list cluster
in_ns sacctmgr -i add cluster pacml >/dev/null
in_ns sacctmgr -i add account pacml Cluster=pacml Description=pacml-tests Organization=pacml >/dev/null
in_ns sacctmgr -i add user root Account=pacml DefaultAccount=pacml >/dev/null

in_ns slurmctld </dev/null >>"$D/log/slurmctld.out" 2>&1
wait_for slurmctld 30 test -s "$D/run/slurmctld.pid"
remember slurmctld "$(cat "$D/run/slurmctld.pid")"
in_ns slurmd -N "$host" </dev/null >>"$D/log/slurmd.out" 2>&1
wait_for slurmd 30 test -s "$D/run/slurmd.pid"
remember slurmd "$(cat "$D/run/slurmd.pid")"

idle() { in_ns timeout 5 sinfo -h -N -o '%t' | grep -qx idle; }
wait_for "the node (idle in sinfo)" 60 idle
in_ns sinfo
echo "up.sh: SLURM cluster up (pids in $D/pids; SLURM_CONF=$SLURM_CONF)"
