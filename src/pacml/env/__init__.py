"""The reinforcement-learning view of the simulator: features and a gymnasium env."""
