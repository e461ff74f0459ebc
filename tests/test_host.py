"""The host record every training writes (pacml.train.host): what sets its weights' last digits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pacml.kernels import KERNEL_PINS, NATIVE_VARIABLE
from pacml.train.host import cpu_facts

CPUINFO = """processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 207
model name	: Intel(R) Xeon(R) Processor
flags		: fpu sse4_2 avx avx2 avx512f avx512bw

processor	: 1
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 1
model name	: AMD EPYC 7763
flags		: fpu sse4_2 avx avx2
"""


@pytest.mark.parametrize(
    ("flags", "widest"),
    [("fpu sse4_2 avx avx2 avx512f avx512bw", "avx512f"), ("fpu sse4_2 avx avx2", "avx2"), ("fpu", "none")],
)
def test_cpu_facts_read_the_first_processor_and_its_widest_vector_flag(tmp_path, flags, widest):
    text = CPUINFO.replace("fpu sse4_2 avx avx2 avx512f avx512bw", flags, 1)
    (tmp_path / "cpuinfo").write_text(text)
    assert cpu_facts(str(tmp_path / "cpuinfo")) == {
        "cpu_model": "Intel(R) Xeon(R) Processor",
        "cpu_vendor": "GenuineIntel",
        "cpu_family_model": "6/207",
        "cpu_vector_isa": widest,
    }


def test_cpu_facts_without_cpuinfo_still_name_the_machine(tmp_path):
    assert cpu_facts(str(tmp_path / "missing"))["cpu_model"]


def _run(code: str, env: dict[str, str], *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _record(env: dict[str, str]) -> dict:
    return json.loads(
        _run("import json; from pacml.train.host import host_record; print(json.dumps(host_record()))", env)
    )


CLEAN = {k: v for k, v in os.environ.items() if k not in (*KERNEL_PINS, NATIVE_VARIABLE)}


def test_the_record_names_the_kernels_torch_dispatches_to_and_the_pins_set():
    pytest.importorskip("torch")
    pinned = _record(CLEAN)  # importing pacml.train pins the kernels (pacml.kernels)
    assert {k[4:]: v for k, v in pinned.items() if k.startswith("env.")} == KERNEL_PINS
    if pinned["cpu_vector_isa"] in ("avx2", "avx512f"):
        assert pinned["torch_cpu_capability"] == "AVX2"
    native = _record({**CLEAN, NATIVE_VARIABLE: "1"})
    assert {k for k in native if k.startswith("env.")} == {f"env.{NATIVE_VARIABLE}"}
    if native["cpu_vector_isa"] == "avx512f":
        assert native["torch_cpu_capability"] == "AVX512"
    # a variable the user set wins: 'default' is ATen's scalar kernels, on every CPU
    own = _record({**CLEAN, "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"})
    assert own["torch_cpu_capability"] == "NO AVX"
    assert own["env.ATEN_CPU_CAPABILITY"] == "default" and own["env.MKL_CBWR"] == "COMPATIBLE"
    assert own["env.ONEDNN_MAX_CPU_ISA"] == "AVX2"  # the one left unset is pinned
    assert {k: v for k, v in own.items() if not k.startswith("env.") and k != "torch_cpu_capability"} == {
        k: v for k, v in native.items() if not k.startswith("env.") and k != "torch_cpu_capability"
    }


# torch operations whose last bits depend on the kernels (MKL's matrix products, ATen's
# reductions), as one hash; pacml.agent is imported after torch, as ppo.py does
_KERNEL_HASH = """
import hashlib, sys
import torch
if sys.argv[1:] == ["agent"]:
    import pacml.agent
torch.set_num_threads(1)
g = torch.Generator().manual_seed(0)
a, b = torch.randn(257, 129, generator=g), torch.randn(129, 65, generator=g)
x = torch.randn(1000, 64, generator=g, requires_grad=True)
torch.relu(x @ torch.randn(64, 32, generator=g)).sum().backward()
h = hashlib.md5()
for t in (a @ b, torch.nn.functional.layer_norm(a, (129,)), torch.logsumexp(a, 1), x.grad):
    h.update(t.numpy().tobytes())
print(h.hexdigest())
"""


def test_importing_the_agent_after_torch_pins_its_kernels_like_variables_set_at_start():
    """The pin is set when pacml.agent is imported, after torch: torch and MKL read the
    variables at their first operation, so the numbers equal a process started with them
    set. The hash sees the kernels: ATen's scalar ones give other bits on every x86 CPU with
    AVX2, and on Intel's AVX-512 CPUs the unpinned ones do (the reason for the pin). On an AMD
    EPYC with AVX-512 (2026-12-07) the unpinned numbers equalled the pinned ones: its matrix
    product, LayerNorm, logsumexp and gradient gave the same bits under AVX2 and AVX-512."""
    pytest.importorskip("torch")
    at_start = _run(_KERNEL_HASH, {**CLEAN, **KERNEL_PINS})
    on_import = _run(_KERNEL_HASH, CLEAN, "agent")
    assert on_import == at_start
    cpu = cpu_facts()
    if cpu["cpu_vector_isa"] in ("avx2", "avx512f"):
        scalar = _run(_KERNEL_HASH, {**CLEAN, "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}, "agent")
        assert scalar != at_start
    if cpu["cpu_vector_isa"] == "avx512f" and cpu["cpu_vendor"] == "GenuineIntel":
        native = _run(_KERNEL_HASH, {**CLEAN, NATIVE_VARIABLE: "1"}, "agent")
        assert native != at_start
