"""The episode simulator: workload, one-step JCT, the engine, records and metrics (pure, no I/O)."""
