"""Write the README's results and experiments blocks from results/published (each run's and each
experiment's summary.md, as the workflow generated it from its summary.csv, and its figure).

    python tools/sync_readme.py           # rewrite the block
    python tools/sync_readme.py --check   # exit 1 if the README is not current
"""

import argparse
import sys
from pathlib import Path

from pacml.config import load_config
from pacml.experiments import RESULTS_BEGIN, RESULTS_END, results_block, sync_block, sync_readme

ROOT = Path(__file__).resolve().parents[1]

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--check", action="store_true")
args = ap.parse_args()
names = list(load_config(ROOT / "config.yaml").experiments)
readme = ROOT / "README.md"
results = sync_block(readme, RESULTS_BEGIN, RESULTS_END, results_block(ROOT / "results/published"), not args.check)
experiments = sync_readme(readme, ROOT / "results/published/experiments", names, write=not args.check)
for name, current in (("results", results), ("experiments", experiments)):
    print(f"README.md {name} block:", "current" if current else ("stale" if args.check else "rewritten"))
sys.exit(1 if args.check and not (results and experiments) else 0)
