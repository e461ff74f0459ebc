"""PPO training of the PAC-ML agent and its checkpoints (imports torch and dgl; pins torch's and
MKL's CPU kernels first, `pacml.kernels`)."""

from pacml.kernels import pin

pin()
