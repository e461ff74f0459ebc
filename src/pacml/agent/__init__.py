"""The PAC-ML agent: the DGL network and its greedy policy (imports torch and dgl; pins torch's
and MKL's CPU kernels first, `pacml.kernels`)."""

from pacml.kernels import pin

pin()
