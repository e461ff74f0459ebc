"""Guards the version matrix: pacml, dgl and torch import together and DGL runs on the CPU."""

import os

os.environ.setdefault("DGLBACKEND", "pytorch")


def test_pacml_dgl_torch_message_passing_step():
    import dgl
    import dgl.function as fn
    import torch

    import pacml

    assert pacml.__version__
    g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    g.ndata["h"] = torch.tensor([[1.0], [2.0], [4.0]])
    g.update_all(fn.copy_u("h", "m"), fn.mean("m", "h_new"))
    # each node receives its single predecessor's value
    assert g.ndata["h_new"].squeeze(1).tolist() == [4.0, 1.0, 2.0]
    assert torch.__version__.startswith("2.2.1")
    assert dgl.__version__ == "2.1.0"


def test_importing_pacml_pulls_in_no_heavy_dependency():
    import subprocess
    import sys

    code = (
        "import sys, pacml, pacml.sim, pacml.sim.engine, pacml.sim.lookahead, pacml.policies.base,"
        " pacml.policies.baselines, pacml.policies.planning, pacml.graphs, pacml.cli, pacml.runs,"
        " pacml.workflow, pacml.tracking, pacml.env.features, pacml.sim.experiment, pacml.config\n"
        "heavy = [m for m in ('torch', 'dgl', 'mlflow', 'matplotlib', 'numba') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_numba_compiles_against_the_pinned_numpy():
    """numba 0.60.0 (the compiled look-ahead) supports numpy 1.22-2.0: it loads with this numpy."""
    import numba
    import numpy as np

    @numba.njit
    def total(x):
        return x.sum()

    assert numba.__version__ == "0.60.0" and np.__version__.startswith("1.")
    assert total(np.arange(5, dtype=np.int64)) == 10
