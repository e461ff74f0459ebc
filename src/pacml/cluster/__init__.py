"""The RAMP cluster: topology, transfer times and first-fit placement (pure, no I/O)."""
