"""pacml: learning how much to partition deep-learning jobs on a RAMP optical cluster.

Importing this package has no side effects and pulls in neither torch, dgl,
mlflow nor matplotlib; the sub-packages that need them import them lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
