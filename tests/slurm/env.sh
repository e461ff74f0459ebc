# Sourced by up.sh, down.sh and run.sh: where the test cluster lives.
# Everything of it is under one folder and one network namespace; nothing else is touched.
PACML_SLURM_DIR=${PACML_SLURM_DIR:-/tmp/pacml-slurm}
PACML_SLURM_NETNS=${PACML_SLURM_NETNS:-pacml-slurm}
export SLURM_CONF="$PACML_SLURM_DIR/etc/slurm.conf"
# Run a command inside the namespace: its only network device is the loopback, so every
# daemon of the cluster (slurmctld, slurmd, slurmdbd, MariaDB, the MLflow server) is reachable
# on 127.0.0.1 only, whatever address it binds.
in_ns() { ip netns exec "$PACML_SLURM_NETNS" "$@"; }
