#!/usr/bin/env bash
# Stop exactly the daemons up.sh started (by the PIDs it wrote), then remove the namespace
# if up.sh created it. Safe to run twice.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
D=$PACML_SLURM_DIR
[ -f "$D/pids" ] || { echo "down.sh: nothing to stop under $D"; exit 0; }
# Reverse start order: slurmd, slurmctld, slurmdbd, MariaDB, munged.
tac "$D/pids" | while read -r name pid; do
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "down.sh: $name ($pid) killed"; else echo "down.sh: $name ($pid) stopped"; fi
    fi
done
: > "$D/pids"
if [ "$(readlink /etc/slurm/slurm.conf 2>/dev/null)" = "$D/etc/slurm.conf" ]; then rm /etc/slurm/slurm.conf; fi
if [ "$(cat "$D/netns_created" 2>/dev/null)" = 1 ]; then ip netns del "$PACML_SLURM_NETNS" 2>/dev/null || true; fi
