"""The machine a training ran on: what sets the last digits of its weights.

The simulator and the baselines give the same numbers on every machine. A trained agent
gives the same numbers only where torch and MKL run the same kernels: kernels of different
vector widths (AVX2, AVX-512) sum in different orders, so the same seed and config give
weights that differ in their last bits, then decisions that differ now and then, then
another agent (measured in the README, "Reproducibility"). `pacml.kernels` pins them to AVX2
by default. Every training records its host (``curve.json``'s ``host``, the MLflow run's
``host.*`` tags: a killed run continued on another host records the one that finished it):
the CPU, the kernel level torch dispatched to and the kernel variables set, so a user can
see which kernels made an agent.
"""

from __future__ import annotations

import os
import platform

from pacml.kernels import KERNEL_PINS, NATIVE_VARIABLE

PIN_VARIABLES = (*KERNEL_PINS, "MKL_ENABLE_INSTRUCTIONS", NATIVE_VARIABLE)
"""The environment variables that choose torch's and MKL's kernels (recorded when set)."""


VECTOR_ISAS = ("avx512f", "avx2", "avx", "sse4_2")
"""CPU flags from widest to narrowest: a record names the widest the CPU has."""


def cpu_facts(cpuinfo: str = "/proc/cpuinfo") -> dict[str, str]:
    """The first CPU's vendor, family and model numbers, model name and widest vector flag,
    from Linux's ``/proc/cpuinfo`` (elsewhere only what `platform` knows). A virtual machine
    may name its CPU vaguely ("Intel(R) Xeon(R) Processor"); family and model still tell the
    generation."""
    fields: dict[str, str] = {}
    try:
        with open(cpuinfo) as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block only
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return {"cpu_model": platform.processor() or platform.machine()}
    flags = set(fields.get("flags", "").split())
    return {
        "cpu_model": fields.get("model name", ""),
        "cpu_vendor": fields.get("vendor_id", ""),
        "cpu_family_model": f"{fields.get('cpu family', '')}/{fields.get('model', '')}",
        "cpu_vector_isa": next((isa for isa in VECTOR_ISAS if isa in flags), "none"),
    }


def host_record() -> dict[str, str]:
    """What decides a training's arithmetic on this host: the CPU, the kernel level torch
    dispatches to (after ``ATEN_CPU_CAPABILITY``), the library versions and the pins set."""
    import numpy as np
    import torch

    record = {
        **cpu_facts(),
        "machine": platform.machine(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "numpy": np.__version__,
    }
    record.update({f"env.{k}": os.environ[k] for k in PIN_VARIABLES if k in os.environ})
    return record
