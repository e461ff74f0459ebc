"""The ``pacml`` command line: parse arguments, call one pacml function, print."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pacml.errors import PacmlError

MAX_ERROR_CHARS = 2000
"""An error longer than this is cut (a whole file must never fill the terminal)."""


def _seed(text: str) -> int:
    value = _integer(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text!r}: a seed must be an integer >= 0")
    return value


def _positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be an integer >= 1")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _output_file(text: str) -> str:
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; name the file to write")
    return text


def _output_dir(text: str) -> str:
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file; name a directory")
    return text


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="YAML config (default: ./config.yaml when there is one, as the workflow reads it; else the "
        "paper's setting; an agent without --config runs in its checkpoint's own config)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. --set cluster.servers_per_rack=4 (repeatable)",
    )


def _default_config(args: argparse.Namespace) -> None:
    """Without --config, the project's ./config.yaml is the config (the workflow's numbers for
    the same words), unless a checkpoint brings its own."""
    if args.config is None and getattr(args, "checkpoint", None) is None and Path("config.yaml").is_file():
        args.config = "config.yaml"
        print("pacml: config: ./config.yaml (pass --config FILE to choose another)", file=sys.stderr)


def _cmd_graphs_import(args: argparse.Namespace) -> int:
    from pacml.graphs.commands import import_pipedream_dir

    for path in import_pipedream_dir(args.dir, args.out, args.steps):
        print(path)
    return 0


def _cmd_graphs_profile(args: argparse.Namespace) -> int:
    from pacml.graphs.commands import profile_models

    for path in profile_models(args.models, args.out, args.steps, args.format, args.input, args.batch, args.precision):
        print(path)
    return 0


def _cmd_graphs_summary(args: argparse.Namespace) -> int:
    from pacml.graphs.commands import summary_table

    table = summary_table(args.files, args.csv, args.steps)
    print(table)
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    _default_config(args)
    from pacml.runs import simulate

    metrics = simulate(
        args.graphs,
        args.policy,
        args.dist,
        args.seed,
        args.config,
        args.overrides,
        args.out,
        args.checkpoint,
        args.records,
    )
    print(
        json.dumps(
            {
                k: metrics[k]
                for k in (
                    "blocking_rate",
                    "jobs_arrived",
                    "jobs_blocked",
                    "mean_jct",
                    "mean_degree",
                    "demand_throughput",
                )
            },
            indent=1,
        )
    )
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    _default_config(args)
    from pacml.train.starts import train_agent

    summary = train_agent(args.graphs, args.dist, args.seed, args.config, args.overrides, args.out)
    print(
        f"best validation blocking rate {summary['best_blocking_rate']:.4f} at update {summary['best_update']} "
        f"({summary['global_step']} steps, {summary['wall_s']:.0f} s); checkpoints in {args.out}"
    )
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    _default_config(args)
    from pacml.runs import evaluate

    rows = evaluate(
        args.graphs, args.policy, args.dist, args.seeds, args.config, args.overrides, args.out, args.checkpoint
    )
    for r in rows:
        print(f"{r['policy']} {r['dist']} seed={r['seed']} blocking_rate={r['blocking_rate']:.4f}")
    return 0


def _cmd_mlflow_relocate(args: argparse.Namespace) -> int:
    from pacml.tracking import relocate_artifacts

    moved = relocate_artifacts(args.db)
    for name, old, new in moved:
        print(f"experiment {name}: artifacts {old} -> {new}")
    if not moved:
        print(f"{args.db}: every artifact location already points beside it")
    return 0


DIST_HELP = "JCT-requirement distribution: beta_a, beta_b, beta_c, beta_d, or one under distributions: in the config"
POLICY_HELP = (
    "para_max, para_min, random, sequential, oracle, best_fixed, fixed-K (e.g. fixed-4), "
    "rollout, rollout_clairvoyant (an upper bound), pacml (with --checkpoint)"
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pacml")
    except PackageNotFoundError:  # run from a source tree without installing
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pacml",
        description="pacml: learn how much to partition deep-learning jobs on a RAMP optical cluster (PAC-ML).",
    )
    parser.add_argument("--version", action="version", version=f"pacml {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    graphs = sub.add_parser("graphs", help="import, profile and characterise job graphs")
    gsub = graphs.add_subparsers(dest="graphs_command", required=True, metavar="SUBCOMMAND")
    p = gsub.add_parser("import-pipedream", help="convert PipeDream graph.txt profiles to canonical JSON")
    p.add_argument("dir", help="directory of PipeDream profiles (*.txt or */graph.txt)")
    p.add_argument("--out", type=_output_dir, required=True, help="output directory")
    p.add_argument("--steps", type=_positive, default=50, help="training steps per job (default 50)")
    p.set_defaults(func=_cmd_graphs_import)
    p = gsub.add_parser(
        "profile",
        help="profile models on the meta device (no weights, no downloads) into PipeDream graph files",
        description="Profile models into per-layer graphs: the paper's five (alexnet, gnmt, resnet18, "
        "squeezenet1_0, vgg16; 'paper' or 'all' for them), gpt2 and bert_base, any torchvision model "
        "(torchvision.models.list_models(); 'modern' for vit_b_16 gpt2 bert_base resnet50 mobilenet_v2), "
        "or module:callable returning a torch.nn.Module (needs --input).",
    )
    p.add_argument("models", nargs="+", help="model names, 'paper', 'modern', or module:callable")
    p.add_argument("--out", type=_output_dir, required=True, help="output directory")
    p.add_argument("--steps", type=_positive, default=50, help="training steps per job (default 50)")
    p.add_argument(
        "--format",
        choices=("pipedream", "json"),
        default="pipedream",
        help="pipedream: <name>.txt in PipeDream's graph.txt format (default); json: pacml's canonical <name>.json",
    )
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="SHAPE[:DTYPE]",
        help="an input of forward, e.g. 1x3x224x224 or 8x1024:int64 (repeat for several inputs; "
        "default: the model's own, see pacml.graphs.models)",
    )
    p.add_argument("--batch", type=_positive, default=None, help="replace the first dimension of every input")
    p.add_argument(
        "--precision",
        choices=("fp32", "tf32", "bf16"),
        default="fp32",
        help="numeric format of the A100 roofline: fp32 (the paper's), tf32 or bf16 tensor cores",
    )
    p.set_defaults(func=_cmd_graphs_profile)
    p = gsub.add_parser("summary", help="characterise graphs (ops, deps, depth, sequential JCT, memory)")
    p.add_argument("files", nargs="+", help="graph files (.json or PipeDream .txt) or directories")
    p.add_argument("--csv", type=_output_file, help="write the table to this CSV file")
    p.add_argument("--steps", type=_positive, default=None, help="override training steps per job")
    p.set_defaults(func=_cmd_graphs_summary)

    p = sub.add_parser("simulate", help="run one episode of a policy and write its metrics as JSON")
    p.add_argument("--graphs", required=True, help="directory of graph files (.json or PipeDream .txt)")
    p.add_argument("--policy", required=True, help=POLICY_HELP)
    p.add_argument("--dist", required=True, help=DIST_HELP)
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument("--checkpoint", help="agent checkpoint (policy pacml)")
    p.add_argument("--out", type=_output_file, required=True, help="output JSON file")
    p.add_argument("--records", type=_output_file, help="also write one CSV row per job here")
    _add_config_args(p)
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser("train", help="train a PAC-ML agent with masked PPO on one distribution")
    p.add_argument("--graphs", required=True, help="directory of graph files")
    p.add_argument("--dist", required=True, help=DIST_HELP)
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument(
        "--out",
        type=_output_dir,
        required=True,
        help="output directory (best.pt, last.pt, curve.json); an existing last.pt is resumed",
    )
    _add_config_args(p)
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("evaluate", help="evaluate a policy on test seeds and write tidy rows as JSON")
    p.add_argument("--graphs", required=True, help="directory of graph files")
    p.add_argument("--policy", required=True, help=POLICY_HELP)
    p.add_argument("--checkpoint", help="agent checkpoint (policy pacml)")
    p.add_argument("--dist", required=True, help=DIST_HELP)
    p.add_argument("--seeds", type=_seed, nargs="+", required=True)
    p.add_argument("--out", type=_output_file, required=True, help="output JSON file")
    _add_config_args(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser(
        "mlflow-relocate",
        help="after moving results/: point the MLflow store's artifact links at the artifacts/ beside it",
    )
    p.add_argument("--db", default="results/mlflow/mlflow.db", help="the SQLite store (tracking.db)")
    p.set_defaults(func=_cmd_mlflow_relocate)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except PacmlError as exc:
        return _error(str(exc))
    except FileNotFoundError as exc:
        return _error(f"{exc.filename}: no such file or directory")
    except IsADirectoryError as exc:
        return _error(f"{exc.filename}: is a directory, not a file")
    except PermissionError as exc:
        return _error(f"{exc.filename}: permission denied")


def _error(message: str) -> int:
    if len(message) > MAX_ERROR_CHARS:
        message = f"{message[:MAX_ERROR_CHARS]}... ({len(message)} characters)"
    print(f"pacml: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
