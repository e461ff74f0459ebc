# Sourced by up.sh, down.sh and test_slurm.py: where the test cluster lives. Its state is one
# folder and one network namespace; outside them it uses munge's default socket and a link at
# /etc/slurm/slurm.conf (up.sh says why; down.sh removes both with the daemons).
PACML_SLURM_DIR=${PACML_SLURM_DIR:-/tmp/pacml-slurm}
PACML_SLURM_NETNS=${PACML_SLURM_NETNS:-pacml-slurm}
export SLURM_CONF="$PACML_SLURM_DIR/etc/slurm.conf"
# Run a command inside the namespace: its only network device is the loopback, so every
# daemon of the cluster (slurmctld, slurmd, slurmdbd, MariaDB) is reachable
# on 127.0.0.1 only, whatever address it binds.
in_ns() { ip netns exec "$PACML_SLURM_NETNS" "$@"; }
