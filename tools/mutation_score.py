"""Print the mutation score of `make mutation`'s last run (mutmut's results in mutants/).

Per area (sim/, cluster/, graphs/partition.py, train/ppo.py, analysis.py): mutants killed
(a test failed, or it timed out), survived, with no test reaching them, and not yet run. The
score is killed / (mutants run - equivalent mutants), where the equivalent mutants are those
`docs/testing.md` lists by name with a reason (a mutant that changes no behaviour cannot be
killed). ``--survivors`` lists the surviving mutants' names (``mutmut show NAME`` shows one).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AREAS = {
    "sim/": "src/pacml/sim/",
    "cluster/": "src/pacml/cluster/",
    "graphs/partition.py": "src/pacml/graphs/partition.py",
    "train/ppo.py": "src/pacml/train/ppo.py",
    "analysis.py": "src/pacml/analysis.py",
}
KILLED = {1, 3, 36, 37, -24, 24, 152, 255, -11, -9}  # mutmut's killed, timeout and crash codes
SURVIVED, NO_TESTS = 0, {5, 33}


def equivalent_mutants(doc: Path = ROOT / "docs" / "testing.md") -> set[str]:
    """The mutant names listed in docs/testing.md (a line ``- `pacml.x.y__mutmut_N`: reason``)."""
    if not doc.is_file():
        return set()
    return set(re.findall(r"^- `(pacml\.[\w.]+__mutmut_\d+)`", doc.read_text(), re.M))


def results(mutants: Path = ROOT / "mutants") -> dict[str, dict[str, int | None]]:
    """{source path (from src/): {mutant name: exit code or None}} from mutmut's .meta files."""
    out = {}
    for meta in sorted((mutants / "src").rglob("*.py.meta")):
        codes = json.loads(meta.read_text()).get("exit_code_by_key", {})
        if codes:
            out[str(meta.relative_to(mutants).with_suffix(""))] = codes
    return out


def main(argv: list[str]) -> int:
    found = results()
    if not found:
        print("no mutmut results in mutants/: run `make mutation` first", file=sys.stderr)
        return 1
    equivalent = equivalent_mutants()
    print(
        f"{'area':22} {'mutants':>7} {'killed':>7} {'survived':>8} {'no test':>7} {'not run':>7} {'equiv':>5} {'score':>6}"
    )
    survivors = []
    for area, prefix in AREAS.items():
        codes = {k: v for path, by in found.items() if path.startswith(prefix) for k, v in by.items()}
        if not codes:
            continue
        killed = sum(v in KILLED for v in codes.values())
        survived = [k for k, v in codes.items() if v == SURVIVED]
        no_tests = sum(v in NO_TESTS for v in codes.values())
        not_run = sum(v is None for v in codes.values())
        equiv = sum(k in equivalent for k in survived)
        run = len(codes) - not_run
        score = killed / (run - equiv) if run > equiv else float("nan")
        survivors += [k for k in survived if k not in equivalent]
        print(
            f"{area:22} {len(codes):7d} {killed:7d} {len(survived):8d} {no_tests:7d} {not_run:7d} {equiv:5d} "
            f"{100 * score:5.1f}%"
        )
    if "--survivors" in argv:
        print("\nsurvivors not listed as equivalent in docs/testing.md:")
        print("\n".join(sorted(survivors)) or "(none)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
