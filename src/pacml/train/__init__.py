"""PPO training of the PAC-ML agent and its checkpoints (imports torch and dgl)."""
