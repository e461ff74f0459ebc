"""Partitioning policies: the protocol, the name registry and the baselines."""
