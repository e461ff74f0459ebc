"""The PAC-ML agent: the DGL network and its greedy policy (imports torch and dgl)."""
