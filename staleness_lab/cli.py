"""The ``staleness-lab`` command. It parses arguments and prints; the logic lives in the package.

Exit status 2 with one line on stderr for every kind of bad input (the field and the rule it
breaks), never a traceback, and nothing written under ``--trace-out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

from staleness_lab import __version__
from staleness_lab.api import simulate
from staleness_lab.errors import InputError
from staleness_lab.model import load_workload
from staleness_lab.tracefiles import check_output_dir, write_trace


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="staleness-lab", description="Scheduling updates in streaming data warehouses.")
    parser.add_argument("--version", action="version", version=f"staleness-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sim = sub.add_parser("simulate", help="simulate a workload under a policy")
    sim.add_argument("workload", help="workload file (YAML or JSON)")
    sim.add_argument("--policy", required=True, help="policy name (see `staleness-lab policies`)")
    sim.add_argument("--tracks", type=int, help="override the number of tracks")
    sim.add_argument("--horizon", type=float, help="override the horizon")
    sim.add_argument("--seed", type=int, help="override the seed")
    sim.add_argument("--relative", action="store_true", help="also compute relative lateness (a second run with unlimited tracks)")
    sim.add_argument("--json", action="store_true", help="print one deterministic JSON object")
    sim.add_argument("--trace-out", type=Path, metavar="DIR", help="write DIR/jobs.parquet and DIR/freshness.parquet")

    val = sub.add_parser("validate", help="check a workload and print its nominal utilization")
    val.add_argument("workload", help="workload file (YAML or JSON)")

    sub.add_parser("policies", help="list the registered policies")

    bench = sub.add_parser("bench", help="run the engine benchmark (from a source checkout)")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to benchmarks/bench_engine.py")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except InputError as err:
        print(f"staleness-lab: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0


def _simulate(args: argparse.Namespace) -> int:
    workload = load_workload(args.workload)
    if args.trace_out is not None:
        check_output_dir(args.trace_out, "--trace-out")
    result = simulate(
        workload, args.policy, relative=args.relative, tracks=args.tracks, horizon=args.horizon, seed=args.seed
    )
    if args.trace_out is not None:
        write_trace(result.trace, args.trace_out, version=__version__)
    summary: dict[str, Any] = {**result.summary(), "version": __version__}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        f"policy {summary['policy']}  horizon {summary['horizon']:g}  seed {summary['seed']}  "
        f"tracks {summary['tracks']}  events {summary['events']}  jobs {summary['jobs']}"
    )
    print(f"total weighted staleness {summary['total_weighted_staleness']:.6g}", end="")
    if "relative_lateness" in summary:
        print(f"  relative lateness {summary['relative_lateness']:.4f}", end="")
    print()
    print(result.tables.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    return 0


def _validate(args: argparse.Namespace) -> int:
    workload = load_workload(args.workload)
    utils = workload.utilization()
    print(f"{args.workload}: valid, {len(workload.tables)} tables, {workload.tracks} tracks, horizon {workload.horizon:g}")
    width = max(len(t.name) for t in workload.tables)
    for table, util in zip(workload.tables, utils):
        shown = "n/a (no period)" if util is None else f"{util:.4f}"
        print(f"  {table.name:<{width}}  {table.kind:<8}  utilization {shown}")
    known = [u for u in utils if u is not None]
    total = sum(known)
    note = "" if len(known) == len(utils) else f" (over the {len(known)} tables with a period)"
    print(f"total nominal utilization {total:.4f} on {workload.tracks} tracks = {total / workload.tracks:.4f} per track{note}")
    return 0


def _policies(args: argparse.Namespace) -> int:
    from staleness_lab.policies import available_policies

    for name, summary in available_policies().items():
        print(f"{name:<14} {summary}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_engine.py"
    if not script.is_file():
        raise InputError("bench", f"needs a source checkout: {script.name} not found next to the package")
    return subprocess.call([sys.executable, str(script), *args.args])


_COMMANDS = {"simulate": _simulate, "validate": _validate, "policies": _policies, "bench": _bench}


if __name__ == "__main__":
    sys.exit(main())
