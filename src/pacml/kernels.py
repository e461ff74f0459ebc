"""The CPU kernels torch and MKL use, pinned so that a trained agent is the same on more machines.

torch's own kernels (ATen) and MKL's pick their vector instructions (AVX2, AVX-512) when first
used, and kernels of different widths sum in different orders: the same seed and config then
give weights that differ in their last bits, decisions that differ now and then, and another
agent (README, "Reproducibility"). `pin` sets torch's, MKL's and oneDNN's own variables to
AVX2 before torch's first operation, so every x86 machine with AVX2 runs the same kernels: MKL
promises the same results on every processor that has the pinned instructions (its
"conditional numerical reproducibility"), and ATen's AVX2 kernels are the same code on every
such machine. On this project's AVX-512 machine the pin cost no speed (docs/timings.md).

`pacml.agent` and `pacml.train`, the packages that import torch, call `pin` when imported;
`import pacml` does not. The variables are read when torch first computes, not when it is
imported, so the pin holds as long as no torch operation ran before one of those packages was
imported. A variable already set is left as it is (yours wins), and ``PACML_NATIVE_KERNELS=1``
leaves all three unset, so torch and MKL use the CPU's widest instructions (numbers that
reproduce only on the same kind of CPU). Every training records what it ran with
(`pacml.train.host`).
"""

from __future__ import annotations

import os

KERNEL_PINS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
"""torch's, MKL's and oneDNN's variables and the values `pin` sets."""

NATIVE_VARIABLE = "PACML_NATIVE_KERNELS"
"""Set to 1 to leave the kernels unpinned."""


def pin() -> dict[str, str]:
    """Set each of `KERNEL_PINS` that is not set yet (unless ``PACML_NATIVE_KERNELS=1``);
    returns the variables this call set."""
    if os.environ.get(NATIVE_VARIABLE, "") not in ("", "0"):
        return {}
    added = {k: v for k, v in KERNEL_PINS.items() if k not in os.environ}
    os.environ.update(added)
    return added
