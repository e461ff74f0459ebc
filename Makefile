# The README's two commands: `make test` and `make results`.
# Both create .venv (Python 3.11 + pip only) when it is missing or older than
# pyproject.toml, then run inside it. No conda needed.
PYTHON ?= python3.11
VENV   := .venv
STAMP  := $(VENV)/.pacml-installed
CORES  ?= all

.PHONY: test test-slurm results experiments smoke venv bench coverage mutation clean-venv

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (set PYTHON=/path/to/python3.11)"; exit 1; }
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --upgrade --quiet pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/python -m pytest

# The smoke scale as SLURM jobs on a real single-node cluster that tests/slurm/up.sh brings up
# (as root: Debian's slurm-wlm, slurmdbd, MariaDB, munge; loopback-only network namespace) and
# tests/slurm/down.sh stops. The executor plugins go in without their dependency pins:
# plugin 2.6.1 caps pandas < 3 (for its optional efficiency report), which our tested pandas 3.0
# is not; plugin 2.7+ needs numpy >= 2, which torch 2.2.1 excludes.
SLURM_PLUGINS := snakemake-executor-plugin-slurm==2.6.1 snakemake-executor-plugin-slurm-jobstep==0.6.1
test-slurm: $(STAMP)
	$(VENV)/bin/python -m pip install --quiet --no-deps $(SLURM_PLUGINS)
	$(VENV)/bin/python -m pytest -m slurm -s -p no:cacheprovider tests/slurm

results: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES)

# The generalisation experiments (experiments: in config.yaml) into results/experiments/; the
# main workflow's jobs they reuse (mixed_beta's reference agents) run first. unseen_models reads
# PipeDream profiles from graphs.pipedream_dir (../shared/pipedream_profiles).
experiments: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) experiments

# The whole DAG at the smoke scale (a plumbing check: its numbers mean nothing).
smoke: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) --config workflow='{scale: smoke}'

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/bench_sim.py
	$(VENV)/bin/python benchmarks/bench_plan.py

# Line and branch coverage of pacml under the suite, printed per module (jobs that the
# workflow tests run in Snakemake subprocesses are not counted).
coverage: $(STAMP)
	$(VENV)/bin/python -m pip install --quiet 'pytest-cov==7.1.0'
	$(VENV)/bin/python -m pytest -q --cov=pacml --cov-branch --cov-report=term

# Mutation testing (mutmut 3.8.1, installed on demand) over sim/, cluster/, graphs/partition.py,
# train/ppo.py and analysis.py ([tool.mutmut] in pyproject.toml), then the score per area. It
# resumes where it stopped; MUTANTS='pacml.sim.*' runs a subset; docs/testing.md lists the
# equivalent mutants. Slow: hours for all of it on 2 cores.
MUTANTS ?=
# ulimit -v: a mutant whose loop keeps allocating (e.g. sample_arrivals never reaching the horizon)
# gets a MemoryError at 6 GB of address space, which counts as killed, instead of taking the machine.
mutation: $(STAMP)
	$(VENV)/bin/python -m pip install --quiet 'mutmut==3.8.1'
	ulimit -v 6000000 && OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PACML_SHARED=$(abspath ..)/shared $(VENV)/bin/mutmut run --max-children $(shell nproc) $(MUTANTS)
	$(VENV)/bin/python tools/mutation_score.py --survivors

clean-venv:
	rm -rf $(VENV)
