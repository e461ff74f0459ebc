"""The host record every training writes (pacml.train.host): what sets its weights' last digits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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


def _record(env: dict[str, str]) -> dict:
    code = "import json; from pacml.train.host import host_record; print(json.dumps(host_record()))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_record_names_the_kernels_torch_dispatches_to_and_the_pins_set():
    pytest.importorskip("torch")
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    native = _record(env)
    assert not any(k.startswith("env.") and k[4:] in ("ATEN_CPU_CAPABILITY", "MKL_CBWR") for k in native)
    pinned = _record({**env, "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"})
    # 'default' is ATen's scalar kernels, on every CPU: the record says what torch really uses
    assert pinned["torch_cpu_capability"] == "NO AVX" != native["torch_cpu_capability"]
    assert pinned["env.ATEN_CPU_CAPABILITY"] == "default" and pinned["env.MKL_CBWR"] == "COMPATIBLE"
    assert {k: v for k, v in pinned.items() if not k.startswith("env.") and k != "torch_cpu_capability"} == {
        k: v for k, v in native.items() if k != "torch_cpu_capability"
    }
