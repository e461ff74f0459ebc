"""The reinforcement-learning view of the simulator: features and a gymnasium-style env."""
