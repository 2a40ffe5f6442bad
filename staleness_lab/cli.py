"""The ``staleness-lab`` command. It parses arguments and prints; the logic lives in the package.

Exit status 2 with one line on stderr for every kind of bad input (the field and the rule it
breaks), never a traceback, and nothing written under ``--trace-out``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from staleness_lab import __version__
from staleness_lab.api import simulate
from staleness_lab.errors import Infeasible, InputError
from staleness_lab.jsonout import dumps, strict
from staleness_lab.intermittent.plan import METHODS
from staleness_lab.intermittent.schemes import OBJECTIVES, SCHEMES
from staleness_lab.intermittent.size import MAX_MODEL_TERMS, PlanLimits
from staleness_lab.model import load_workload
from staleness_lab.policies import available_policies, parse_options, policy_options
from staleness_lab.sim.engine import ENGINES
from staleness_lab.sim.size import check_run_size
from staleness_lab.outputs import check_output_directory, nothing_is_ours
from staleness_lab.teach import DEFAULT_IP, DEFAULT_PORT, serve
from staleness_lab.tracefiles import check_output_dir, check_trace_dir, write_trace

if TYPE_CHECKING:
    from staleness_lab.workflows.size import WorkflowLimits


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


#: The plan-size guard's defaults, shown in ``plan --help``.
PLAN_LIMITS = PlanLimits()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="staleness-lab", description="Scheduling updates in streaming data warehouses.")
    parser.add_argument("--version", action="version", version=f"staleness-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sim = sub.add_parser("simulate", help="simulate a workload under a policy")
    sim.add_argument("workload", nargs="?", help="workload file (YAML or JSON)")
    sim.add_argument("--policy", help="policy name (see --list-policies)")
    sim.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a policy option (repeatable)")
    sim.add_argument("--list-policies", action="store_true", help="name every policy with its options, types and defaults")
    sim.add_argument("--tracks", type=int, help="override the number of tracks")
    sim.add_argument("--horizon", type=float, help="override the horizon")
    sim.add_argument("--seed", type=int, help="override the seed")
    sim.add_argument("--relative", action="store_true", help="also compute relative lateness (a second run with unlimited tracks)")
    sim.add_argument("--json", action="store_true", help="print one deterministic JSON object")
    sim.add_argument("--trace-out", type=Path, metavar="DIR", help="write DIR/jobs.parquet and DIR/freshness.parquet")
    sim.add_argument("--engine", choices=ENGINES, default="auto",
                     help="the loop that runs it: auto (the compiled core where the policy has a compiled order), "
                          "python (the reference) or compiled (exit 2 for a policy the core lacks); same results")
    _max_events_option(sim)

    chk = sub.add_parser("check", help="run a policy (drained where feeds are finite) and check every paper's "
                                       "theorems on the trace: bound, preconditions, what the trace shows")
    chk.add_argument("workload", help="workload file (YAML or JSON)")
    chk.add_argument("--policy", required=True, help="policy name (see `simulate --list-policies`)")
    chk.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a policy option (repeatable)")
    chk.add_argument("--tracks", type=int, help="override the number of tracks")
    chk.add_argument("--horizon", type=float, help="override the horizon (raised further to drain finite feeds)")
    chk.add_argument("--seed", type=int, help="override the seed")
    chk.add_argument("--json", action="store_true", help="print one strict JSON object")
    _max_events_option(chk)

    bud = sub.add_parser("budget", help="certified lag budgets: per table with a target_lag, the bound the scheduler "
                                        "guarantees (Leontyev et al.), its preconditions and a verdict; min_tracks, blame")
    bud.add_argument("workload", help="workload file (YAML or JSON) with at least one target_lag")
    bud.add_argument("--tracks", type=int, help="certify on N tracks (default: the workload's)")
    bud.add_argument("--policy", default="gedf-np", help="the scheduler the bound is for: gedf-np (default) or aus")
    bud.add_argument("--bound", default="leontyev", help="leontyev (default: Theorems 1-3) or slot (gedf-np only: "
                                                         "Theorem 2 with releases at their files' slots, p_k tighter)")
    bud.add_argument("--json", action="store_true", help="print one strict JSON object")

    opt = sub.add_parser("optimum", help="the exact minimum of Bateni et al.'s X_w over all schedules (CP-SAT, "
                                         "forced batching), with its schedule")
    opt.add_argument("workload", help="workload file (YAML or JSON): replayed base tables, at most 200 updates")
    opt.add_argument("--time-limit", type=float, default=10.0, metavar="S", help="CP-SAT wall-clock seconds (default: 10)")
    opt.add_argument("--workers", type=int, default=1, metavar="N", help="CP-SAT workers, 1 to 64 (default: 1)")
    opt.add_argument("--relaxed", action="store_true", help="drop forced batching: a lower bound (Bateni digest A9)")
    opt.add_argument("--json", action="store_true", help="print one strict JSON object")

    val = sub.add_parser("validate", help="check a workload and print its nominal utilization")
    val.add_argument("workload", help="workload file (YAML or JSON)")
    _max_events_option(val)

    sub.add_parser("policies", help="list the registered policies")

    sweep = sub.add_parser("sweep", help="run a named experiment over a parameter grid (locally or on Spark)")
    sweep.add_argument("experiment", nargs="?", help="experiment name (see --list)")
    sweep.add_argument("--list", action="store_true", help="name the experiments and their parameters")
    sweep.add_argument("--grid", type=Path, metavar="FILE", help="YAML: parameter -> list of values, plus optional fixed:")
    sweep.add_argument("--master", help="Spark master URL (default: SPARK_MASTER, else embedded local[*])")
    sweep.add_argument("--runner", choices=["spark", "local"], default="spark", help="where rows run (default: spark)")
    sweep.add_argument("--out", type=Path, metavar="FILE", help="results Parquet file (default: data/results/EXPERIMENT.parquet)")
    sweep.add_argument("--cache", type=Path, metavar="DIR", help="per-row result cache (default: data/cache)")
    sweep.add_argument("--no-cache", action="store_true", help="recompute every row (and refresh the cache)")

    report = sub.add_parser("report", help="execute the notebooks with papermill and render HTML reports")
    report.add_argument("--quick", action="store_true", help="small parameters (for tests)")
    report.add_argument("--only", metavar="NAME", action="append",
                        help="render only this notebook (name without .ipynb); repeat it for several")
    report.add_argument("--profile", choices=["standard", "full"], default="standard", help="experiment scale (default: standard)")
    report.add_argument("--out", type=Path, default=Path("reports"), metavar="DIR", help="where the HTML goes (default: reports/)")
    report.add_argument("--cache", nargs="?", const="", metavar="DIR",
                        help="reuse and store sweep rows in a per-row cache (default DIR: data/cache), so a stopped "
                             "render resumes; without it every row is recomputed")
    report.add_argument("--jobs", metavar="N",
                        help="notebooks rendered at once, each in its own kernel with its own Spark driver, longest "
                             "first (default: one per core, at most 3)")

    teach = sub.add_parser("teach", help="serve notebooks/teaching/ to a class with Voila (code hidden; loopback "
                                         "unless --ip says otherwise)")
    teach.add_argument("--port", default=str(DEFAULT_PORT), metavar="P", help=f"port to listen on (default: {DEFAULT_PORT})")
    teach.add_argument("--ip", default=DEFAULT_IP, metavar="ADDR",
                       help=f"address to listen on (default: {DEFAULT_IP}; 0.0.0.0 lets the whole network in)")

    plan = sub.add_parser("plan", help="plan an intermittent query set (Chandrasekaran & Sudarshan) with one scheme")
    plan.add_argument("queries", metavar="QUERIES.yaml", help="query set file (YAML or JSON)")
    plan.add_argument("--scheme", required=True, choices=SCHEMES, help="the planning scheme")
    plan.add_argument("--no-minbatch", action="store_true",
                      help="dispatch policies: each batch takes whatever has arrived (Fig. 8's baseline)")
    plan.add_argument("--executors", type=int, metavar="M", help="override the number of shared executors")
    plan.add_argument("--delta-rsf", metavar="X", help="override MinBatch's relative slack delta_rsf")
    plan.add_argument("--cmax", metavar="C", help="override c_max, the largest cost of a non-final batch (seconds)")
    plan.add_argument("--objective", choices=OBJECTIVES, default="misses",
                      help="optimal: phase 1 minimises misses or tardiness (default: misses)")
    plan.add_argument("--time-limit", type=float, default=10.0, metavar="S", help="optimal: wall-clock seconds per solver phase (default: 10)")
    plan.add_argument("--workers", type=int, default=2, metavar="W", help="optimal: CP-SAT workers, 1 to 64 (default: 2)")
    plan.add_argument("--method", choices=METHODS, default="auto",
                      help="optimal: the slot model (monolithic), per-query columns under a relaxed master "
                           "(decomposition), or auto: the decomposition when every query has an executor of "
                           "its own (each is then planned exactly), else the slot model (default: auto)")
    plan.add_argument("--json", action="store_true", help="print one strict JSON object")
    plan.add_argument("--out", type=Path, metavar="DIR", help="write DIR/batches.parquet and DIR/queries.parquet")
    plan.add_argument("--max-queries", type=int, metavar="Q",
                      help=f"refuse query sets of more than Q queries (default: {PLAN_LIMITS.max_queries:,})")
    plan.add_argument("--max-tuples", type=int, metavar="N",
                      help=f"refuse a query of more than N tuples (default: {PLAN_LIMITS.max_tuples:,})")
    plan.add_argument("--max-model-terms", type=int, metavar="T",
                      help="optimal: refuse a CP-SAT model of more than T terms, batch slots times the cost and "
                           "arrival tables they read (default: 500,000, about 0.9 GB to solve)")
    plan.add_argument("--max-batches", type=int, metavar="B",
                      help="refuse query sets whose N sum past B, the most batches a plan may need "
                           f"(default: {PLAN_LIMITS.max_batches:,})")

    tpch = sub.add_parser("tpch", help="TPC-H data for the intermittent-query experiments")
    tpch_sub = tpch.add_subparsers(dest="tpch_command", required=True, parser_class=_Parser)
    gen = tpch_sub.add_parser("generate", help="orders and lineitem as P Parquet parts arriving 1 s apart, "
                                               "the static tables, and a manifest")
    gen.add_argument("--scale", type=float, required=True, metavar="SF", help="TPC-H scale factor (1 is about 1 GB)")
    gen.add_argument("--parts", type=int, required=True, metavar="P", help="stream parts (files) of orders and lineitem")
    gen.add_argument("--out", type=Path, metavar="DIR", help="where to write (default: data/tpch/sf<SF>-p<P>)")
    cal = tpch_sub.add_parser("calibrate", help="measure each query's batch and aggregation costs on Spark and fit "
                                                "Cost(x) = S + R*x and AggCost(n) = a0 + a1*n (digest §6)")
    cal.add_argument("--queries", nargs="+", metavar="Q", help="catalogue queries (default: all 13)")
    cal.add_argument("--scale", type=float, default=0.1, metavar="SF", help="TPC-H scale factor (default: 0.1)")
    cal.add_argument("--parts", type=int, default=90, metavar="P", help="stream parts (default: 90); the data "
                                                                        "in data/tpch/sf<SF>-p<P> is generated if missing")
    cal.add_argument("--master", metavar="URL", help="Spark master (default: $SPARK_MASTER, else local[*])")
    cal.add_argument("--out", type=Path, metavar="DIR", help="where to write <query>.json "
                                                             "(default: data/costmodels/sf<SF>-p<P>)")
    cal.add_argument("--warmups", type=int, default=2, metavar="N", help="unmeasured runs per point (default: 2)")
    cal.add_argument("--repeats", type=int, default=3, metavar="N", help="measured runs per point, median kept "
                                                                         "(default: 3)")

    run = tpch_sub.add_parser("run", help="plan a query set with one scheme and execute it on Spark, batch by "
                                          "batch in virtual time, each batch's measured time its duration")
    run.add_argument("queries", metavar="QUERIES.yaml", help="query set file; query names are catalogue queries "
                                                             "(Q1 ... CQ4), tuple k is part k")
    run.add_argument("--scheme", required=True, choices=SCHEMES, help="algorithm1, exact, optimal: planned with the "
                                                                      "cost models, then executed; llf, edf, sjf, rr: "
                                                                      "dispatched on the measured durations")
    run.add_argument("--no-minbatch", action="store_true", help="dispatch policies: no MinBatch (Fig. 8's baseline)")
    run.add_argument("--data", type=Path, metavar="DIR", help="a TPC-H generation (default: data/tpch/sf<SF>-p<P>, "
                                                              "generated if missing)")
    run.add_argument("--scale", type=float, default=0.01, metavar="SF", help="TPC-H scale factor (default: 0.01)")
    run.add_argument("--parts", type=int, default=20, metavar="P", help="stream parts (default: 20)")
    run.add_argument("--master", metavar="URL", help="Spark master (default: $SPARK_MASTER, else local[*]); on a "
                                                     "cluster the data and run directories must be shared")
    run.add_argument("--out", type=Path, metavar="DIR", help="the run directory: partials, results, batches "
                                                             "(default: data/runs/intermittent/<scheme>-<time>)")
    run.add_argument("--json", action="store_true", help="print one strict JSON object")

    workflow = sub.add_parser("workflow", help="Olston's asynchronous incremental workflows")
    workflow_sub = workflow.add_subparsers(dest="workflow_command", required=True, parser_class=_Parser)
    wf_validate = workflow_sub.add_parser("validate", help="check a workflow file and print, per channel, its layout, "
                                                           "own and propagated bounds, and the asynchronous "
                                                           "variants withheld (digest §1-§3)")
    wf_validate.add_argument("file", metavar="WF.yaml", help="workflow file (YAML or JSON)")
    wf_validate.add_argument("--json", action="store_true", help="print one strict JSON object")
    _workflow_limit_options(wf_validate)
    wf_run = workflow_sub.add_parser("run", help="run a workflow under a scheduler and scenario: lag per output "
                                                 "bound, cost, scheduler time (Olston §7)")
    wf_run.add_argument("file", metavar="WF.yaml", help="workflow file (YAML or JSON)")
    wf_run.add_argument("--scheduler", default="dp", metavar="dp|greedy|random",
                        help="Algorithm 1 (dp, default) or a baseline")
    wf_run.add_argument("--scenario", default="async-incr", metavar="async-incr|sync-incr|async-batch|sync-batch",
                        help="default async-incr (the full model)")
    wf_run.add_argument("--mode", default="sizes", metavar="sizes|memory|spark",
                        help="sizes: row counts only (default)")
    wf_run.add_argument("--horizon", metavar="DUR", help="hours, or 15min, 1d, 1w (default: the workflow's)")
    wf_run.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the inputs, noise and RANDOM (default 0)")
    wf_run.add_argument("--option", action="append", default=[], metavar="K=V",
                        help="a heuristic on or off: prune_old, chains, propagate, overkill, longterm (default all "
                             "on); or a reading: empty_incomparable (default on), reinvoke_until_fresh, "
                             "readable_across_channels (default off)")
    wf_run.add_argument("--json", action="store_true", help="print one strict JSON object")
    wf_run.add_argument("--trace-out", type=Path, metavar="DIR",
                        help="write DIR/invocations, blocks, episodes and scheduler_calls .parquet")
    wf_run.add_argument("--store", type=Path, metavar="DIR",
                        help="the spark mode's block store (default data/warehouse); a rerun of the same run resumes")
    _workflow_limit_options(wf_run)
    from staleness_lab.workflows.size import MAX_RUN_STEPS

    wf_run.add_argument("--max-run-steps", type=int, metavar="N",
                        help=f"refuse a run whose input arrivals times operators pass N (default: {MAX_RUN_STEPS:,})")
    wf_verify = workflow_sub.add_parser("verify", help="check a block store: every manifest against its Parquet data "
                                                       "(each part's size and SHA-256; only regular files are opened), "
                                                       "and list orphans; exit 1 on damage")
    wf_verify.add_argument("store", metavar="STORE", type=Path, help="a store root or one run's directory")
    wf_verify.add_argument("--json", action="store_true", help="print one strict JSON object")

    bench = sub.add_parser("bench", help="run the engine benchmark (from a source checkout)")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to benchmarks/bench_engine.py")
    return parser


def _max_events_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-events", type=int, metavar="N",
                        help="refuse runs estimated above N events (default: 10^8, or what half of this "
                             "machine's memory holds)")


#: What a MemoryError says, by command: the knobs that command has.
_MEMORY_HINT = "the run did not fit in this process's memory; lower the horizon or --max-events"
_MEMORY_HINTS = {
    "plan": "the plan did not fit in this process's memory; plan fewer or smaller queries, or lower "
            "--max-queries, --max-tuples or --max-batches",
    "optimum": "the model did not fit in this process's memory; give fewer updates",
}


def _workflow_limit_options(parser: argparse.ArgumentParser) -> None:
    from staleness_lab.workflows.size import MAX_ARRIVALS, MAX_CHANNELS, MAX_LAYOUT, MAX_OPERATORS

    parser.add_argument("--max-channels", type=int, metavar="N", help=f"refuse workflows with more than N channels "
                                                                      f"(default: {MAX_CHANNELS:,})")
    parser.add_argument("--max-operators", type=int, metavar="N", help=f"refuse workflows with more than N operators "
                                                                       f"(default: {MAX_OPERATORS:,})")
    parser.add_argument("--max-layout", type=int, metavar="N", help=f"refuse a channel whose layout (joins, unions "
                                                                    f"fanning out) passes N elements "
                                                                    f"(default: {MAX_LAYOUT:,})")
    parser.add_argument("--max-arrivals", type=int, metavar="N", help=f"refuse more than N input arrivals over the "
                                                                      f"horizon (default: {MAX_ARRIVALS:,})")


def _workflow_limits(args: argparse.Namespace) -> WorkflowLimits:
    from staleness_lab.workflows.size import WorkflowLimits

    return WorkflowLimits.given(channels=args.max_channels, operators=args.max_operators, layout=args.max_layout,
                                arrivals=args.max_arrivals, run_steps=getattr(args, "max_run_steps", None))


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so every ``finally`` removes its temporary files."""


#: The signal that is ending this command (its exception type), once one has come.
_stopping: list[type[KeyboardInterrupt]] = []


def _stop(stop: type[KeyboardInterrupt]) -> NoReturn:
    """End the command on a signal: logging is switched off first, since a library interrupted
    in a call logs it with a traceback on the way out (py4j: "KeyboardInterrupt while sending
    command"), and the one line ``main`` prints is all the signal is to say. Warnings go too:
    pyspark's ``toPandas`` interrupted mid-collection warns that its Arrow path failed. The
    signal is remembered: a library cleaning up after the interrupt may raise an error of its
    own in its place (py4j's call-site reset on a broken gateway: "Answer from Java side is empty")."""
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    _stopping.append(stop)
    raise stop()


def _stopped(stop: type[KeyboardInterrupt]) -> int:
    """The one line and the exit status of a command ended by ``stop`` (SIGTERM or Ctrl-C)."""
    terminated = issubclass(stop, _Terminated)
    print(f"staleness-lab: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130


def _on_sigterm(signum: int, frame: object) -> NoReturn:
    _stop(_Terminated)


def _on_sigint(signum: int, frame: object) -> NoReturn:
    _stop(KeyboardInterrupt)


def _after_spark_started(before: Any) -> None:
    """Take SIGINT back once Spark runs (``before``: its handler before): Spark's context
    installs one that cancels the jobs with another call into the JVM before raising, whose
    failure then adds tracebacks. The JVM's jobs end with the process (pyspark kills its
    gateway at exit), and the block store's commit removes its temporaries on the way out. A
    SIGINT ignored before (a background job) stays ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN if before == signal.SIG_IGN else _on_sigint)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:  # everything after it is the benchmark's own (argparse's REMAINDER
        args = argparse.Namespace(command="bench", args=argv[1:])  # would not take a leading --out)
    else:
        args = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:  # Ctrl-C ends the command as SIGTERM does: logging off
        signal.signal(signal.SIGINT, _on_sigint)  # first, so a stopped kernel's death is not logged
    try:
        return _COMMANDS[args.command](args)
    except InputError as err:
        print(f"staleness-lab: error: {err}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"staleness-lab: error: memory: {_MEMORY_HINTS.get(args.command, _MEMORY_HINT)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: temporary files are gone by now
        return _stopped(type(stop))
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    except Exception:
        if not _stopping:
            raise
        return _stopped(_stopping[0])  # an error raised while unwinding from the signal
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)


def _simulate(args: argparse.Namespace) -> int:
    if args.list_policies:
        return _policies(args)
    if args.workload is None:
        raise InputError("WORKLOAD", "a workload file is required (or --list-policies)")
    if args.policy is None:
        raise InputError("--policy", "a policy name is required (see --list-policies)")
    workload = load_workload(args.workload)
    options = parse_options(args.policy, args.option)
    if args.trace_out is not None:
        check_trace_dir(args.trace_out, "--trace-out")
    try:
        given = {key: getattr(args, key) for key in ("tracks", "horizon", "seed") if getattr(args, key) is not None}
        result = simulate(workload, args.policy, options=options, relative=args.relative,
                          max_events=args.max_events, engine=args.engine, **given)
    except Infeasible as result_:
        return _infeasible(result_, args)
    if args.trace_out is not None:
        write_trace(result.trace, args.trace_out, version=__version__)
    summary: dict[str, Any] = {"status": "ok", **result.summary(), "version": __version__}
    if args.json:
        print(dumps(summary))
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
    if "targets" in summary:
        print("freshness targets")
        print(result.target_metrics.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    return 0


def _infeasible(result: Infeasible, args: argparse.Namespace, **extra: Any) -> int:
    """A policy that cannot run the workload is a result: printed (JSON or text, with ``extra``
    keys in JSON), exit 0."""
    if args.json:
        print(dumps({"status": "infeasible", "reason": result.reason, "policy": args.policy, "version": __version__,
                     **extra}))
    else:
        print(f"infeasible: {result.reason}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from staleness_lab.api import check

    workload = load_workload(args.workload)
    options = parse_options(args.policy, args.option)
    given = {key: getattr(args, key) for key in ("tracks", "horizon", "seed") if getattr(args, key) is not None}
    try:
        report = check(workload, args.policy, options=options, max_events=args.max_events, **given)
    except Infeasible as result:
        return _infeasible(result, args, checks=[])
    out = report.to_json(args.policy, __version__)
    if args.json:
        print(dumps(out))
        return 0
    summary = out["summary"]
    x_text = f"X {out['X']:.6g}" if out["X"] is not None else f"X n/a ({out['X_reason']})"
    print(f"policy {args.policy}  horizon {out['horizon']:g}{' (drained)' if summary['drained'] else ''}  "
          f"tracks {out['tracks']}  {x_text}")
    print(f"{summary['records']} claims: {summary['held']} hold, {summary['failed']} fail, {summary['undecided']} "
          f"undecided (a precondition unmet), {summary['diagnostics_failed']} diagnostic(s) fail")
    frame = report.frame[["claim", "table", "holds", "observed", "bound", "ratio", "unmet"]]
    print(frame.to_string(index=False, na_rep="-", float_format=lambda v: f"{v:.6g}"))
    return 0


def _optimum(args: argparse.Namespace) -> int:
    from staleness_lab.optimize.staleness_optimum import optimum

    workload = load_workload(args.workload)
    try:
        result = optimum(workload, time_limit=args.time_limit, workers=args.workers, relaxed=args.relaxed)
    except InputError as err:
        if err.field in ("time_limit", "workers"):
            raise InputError("--" + err.field.replace("_", "-"), err.rule) from None
        raise
    out = result.to_json(__version__)
    if args.json:
        print(dumps(out))
        return 0
    model = "relaxed (no forced batching)" if args.relaxed else "forced batching"
    if out["objective_X"] is None:
        print(f"status {out['status']}: no schedule within {args.time_limit:g} s  ({model}, {out['wall_s']:.2f} s)")
        return 0
    print(f"status {out['status']}  X_w {out['objective_X']:.10g}  bound {out['bound']:.10g}  gap {out['gap']:.3g}  "
          f"({model}, {out['wall_s']:.2f} s)")
    print(f"weighted staleness over [0, {workload.horizon:g}] {out['staleness']:.10g}  exact {'yes' if out['exact'] else 'no'}")
    if result.note:
        print(f"note: {result.note}")
    print(result.batches.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    return 0


def _budget(args: argparse.Namespace) -> int:
    from staleness_lab.lag_budget import budget

    workload = load_workload(args.workload)
    try:
        result = budget(workload, tracks=args.tracks, policy=args.policy, bound=args.bound)
    except InputError as err:
        if err.field in ("tracks", "policy", "bound"):
            raise InputError("--" + err.field, err.rule) from None
        raise
    out = result.to_json(__version__)
    if args.json:
        print(dumps(out))
        return 0
    basis = "Leontyev et al., Theorems 1-3" if out["bound_kind"] == "leontyev" else "slot: Theorem 2 with releases at slots"
    print(f"lag budget under {out['policy']} on {out['tracks']} tracks (bounds: {basis}, exact); "
          f"observed_worst: one run, horizon {out['horizon']:g}, seed {out['seed']}")
    if out["observed_reason"]:
        print(f"observed_worst n/a: {out['observed_reason']}")
    print(result.frame.drop(columns="preconditions").to_string(index=False, na_rep="-",
                                                               float_format=lambda v: f"{v:.6g}"))
    fewest = out["min_tracks"] if out["min_tracks"] is not None else f"none ({out['min_tracks_reason']})"
    print(f"min_tracks: {fewest}")
    if out["blame"] is not None:
        print(f"blame: {', '.join(out['blame'])} ({out['blame_method']})")
    print("preconditions:")
    for row in out["tables"]:
        for p in row["preconditions"]:
            print(f"  {row['table']}  {p['name']}  {'met' if p['met'] else 'UNMET'}  {p['why']}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    workload = load_workload(args.workload)
    size = check_run_size(workload, args.max_events)
    utils = workload.utilization()
    print(f"{args.workload}: valid, {len(workload.tables)} tables, {workload.tracks} tracks, horizon {workload.horizon:g}, "
          f"about {size.events:,.0f} events")
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
    for name, summary in available_policies().items():
        print(f"{name:<24} {summary}")
        for option in policy_options(name):
            print(f"    --option {option.describe()}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from staleness_lab.experiments import get_experiment, list_experiments
    from staleness_lab.sweeps.sweep import list_command, sweep_command

    experiment = get_experiment(args.experiment) if args.experiment else None
    if args.list:
        return list_command([experiment] if experiment is not None else list_experiments())
    return sweep_command(
        experiment=experiment, grid=args.grid, master=args.master, runner=args.runner, out=args.out,
        cache=args.cache, use_cache=not args.no_cache,
    )


def _report(args: argparse.Namespace) -> int:
    from staleness_lab.reports import report_command

    cache = None
    if args.cache is not None:
        from staleness_lab.sweeps.cache import default_cache_dir

        cache = Path(args.cache) if args.cache else default_cache_dir()
        check_output_dir(cache, "--cache")
    return report_command(quick=args.quick, only=args.only, profile=args.profile, out=args.out, cache=cache,
                          jobs=None if args.jobs is None else _jobs_option(args.jobs))


def _jobs_option(text: str) -> int | str:
    """``report --jobs`` as a number when it is a whole number (:func:`report_command` checks
    it), else as given, for the command to name it."""
    try:
        return int(text.strip(), 10)
    except ValueError:
        return text


def _teach(args: argparse.Namespace) -> int:
    return serve(port=args.port, ip=args.ip)


def _plan(args: argparse.Namespace) -> int:
    from staleness_lab.intermittent import load_queryset
    from staleness_lab.intermittent.planfiles import check_plan_dir, plan_json, write_plan
    from staleness_lab.intermittent.schemes import check_options, make_plan
    from staleness_lab.intermittent.size import check_plan_size

    qs = load_queryset(args.queries)
    overrides = {"executors": args.executors, "delta_rsf": args.delta_rsf, "c_max": args.cmax}
    for (key, value), option in zip(overrides.items(), ("--executors", "--delta-rsf", "--cmax")):
        if value is not None:  # validated by the model, as if written in the file
            try:
                qs = qs.with_overrides(**{key: value})
            except InputError as err:
                raise InputError(option, err.rule) from None
    options = {"scheme": args.scheme, "minbatch": not args.no_minbatch, "objective": args.objective,
               "time_limit": args.time_limit, "workers": args.workers, "method": args.method}
    check_options(args.scheme, args.objective, args.time_limit, args.workers, method=args.method)
    limits = PlanLimits.given(max_queries=args.max_queries, max_tuples=args.max_tuples, max_batches=args.max_batches)
    check_plan_size(qs, limits)  # before any work, as make_plan does again
    if args.out is not None:
        check_plan_dir(args.out, "--out")
    plan = make_plan(qs, args.scheme, minbatch=options["minbatch"], objective=args.objective,
                     time_limit=args.time_limit, workers=args.workers, limits=limits, method=args.method,
                     max_model_terms=MAX_MODEL_TERMS if args.max_model_terms is None else args.max_model_terms)
    if args.out is not None:
        given = {key: value for key, value in overrides.items() if value is not None}
        write_plan(plan, args.out, version=__version__, options={**options, "queries_file": str(args.queries), **given})
    if args.json:
        print(dumps(plan_json(plan, version=__version__)))
        return 0
    print(f"scheme {plan.scheme}  status {plan.status}  queries {len(qs.queries)}  executors {qs.executors}")
    if plan.reason:
        print(f"reason: {plan.reason}")
    if plan.solver is not None:
        print(f"solver: {plan.solver.get('status')}  deadlines {plan.solver.get('deadlines')}")
    if plan.steps:
        print(plan.batches.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    else:
        print("(no batches)")
    if plan.status == "ok":
        print(f"misses {plan.misses}  total cost {float(plan.total_cost):.6g}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_engine.py"
    if not script.is_file():
        raise InputError("bench", f"needs a source checkout: {script.name} not found next to the package")
    return subprocess.call([sys.executable, str(script), *args.args])


def _tpch(args: argparse.Namespace) -> int:
    from staleness_lab.intermittent.tpch import generate

    if args.tpch_command == "calibrate":
        return _tpch_calibrate(args)
    if args.tpch_command == "run":
        return _tpch_run(args)
    directory, made = generate(args.scale, args.parts, args.out, progress=sys.stderr.isatty())
    print(f"{directory}: {'generated' if made else 'up to date (manifest matches), skipped'}")
    return 0


def _tpch_calibrate(args: argparse.Namespace) -> int:
    from staleness_lab.intermittent import tpch
    from staleness_lab.spark import get_spark
    from staleness_lab.spark.intermittent.calibrate import (calibrate, check_calibration_parts, check_out_dir,
                                                            check_runs, resolve_queries)
    from staleness_lab.spark.intermittent.catalogue import CATALOGUE, TpchData
    from staleness_lab.paths import data_root

    names = args.queries or list(CATALOGUE)
    resolve_queries(names)
    check_runs(args.warmups, args.repeats)
    scale = tpch.check_scale(args.scale)
    parts = check_calibration_parts(tpch.check_parts(args.parts))
    out = args.out if args.out is not None else data_root() / "data" / "costmodels" / f"sf{scale:g}-p{parts}"
    check_out_dir(out, names)  # the output rule, before any data is generated or Spark starts
    progress = sys.stderr.isatty()
    directory, _ = tpch.generate(scale, parts, progress=progress, option="data")
    get_spark(args.master)
    table = calibrate(names, TpchData(directory), out, warmups=args.warmups, repeats=args.repeats, progress=progress)
    shown = table[["query", "S", "R", "r2", "a0", "a1"]].rename(columns={"r2": "R2"})
    print(shown.to_string(index=False, na_rep="n/a", float_format="{:.4g}".format))
    print(f"{out}: {len(table)} cost models (data: {directory})")
    return 0


def _tpch_run(args: argparse.Namespace) -> int:
    from staleness_lab.intermittent import tpch
    from staleness_lab.intermittent import load_queryset
    from staleness_lab.intermittent.schemes import DISPATCH_SCHEMES, make_plan
    from staleness_lab.spark import get_spark
    from staleness_lab.spark.intermittent.runner import catalogue_names, dispatch, execute

    qs = load_queryset(args.queries)
    catalogue_names(qs)
    if args.out is not None:  # a run directory is never replaced: only a new or empty one
        check_output_directory(args.out, "--out", nothing_is_ours, hint="give a new or empty run directory")
    if args.data is not None:
        tpch.check_generation(args.data, "--data")  # marker, sizes and checksums, before Spark starts
        data = args.data
    else:
        data, _ = tpch.generate(tpch.check_scale(args.scale), tpch.check_parts(args.parts), progress=sys.stderr.isatty(),
                                option="--data")
    get_spark(args.master)
    if args.scheme in DISPATCH_SCHEMES:
        scheme = args.scheme + ("-nominbatch" if args.no_minbatch else "")
        run = dispatch(qs, scheme, data, out=args.out)
    else:
        run = execute(make_plan(qs, args.scheme, minbatch=not args.no_minbatch), data, out=args.out,
                      progress=sys.stderr.isatty())
    plan = run.plan
    if args.json:
        print(dumps({"scheme": plan.scheme, "run": str(run.directory), "misses": plan.misses,
                     "total_seconds": float(plan.total_cost), "violations": run.violations,
                     "batches": strict(run.batches.to_dict(orient="records")),
                     "queries": strict(plan.queries.to_dict(orient="records"))}))
        return 0
    shown = run.batches[["query", "batch", "kind", "start", "end", "first", "last", "modeled_cost", "measured_seconds",
                         "planned_start"]]
    print(shown.to_string(index=False, na_rep="-", float_format=lambda v: f"{v:.4g}"))
    print(f"scheme {plan.scheme}  misses {plan.misses}  measured total {float(plan.total_cost):.4g} s  "
          f"run {run.directory}")
    return 0


def _workflow(args: argparse.Namespace) -> int:
    return _WORKFLOW_COMMANDS[args.workflow_command](args)


def _workflow_validate(args: argparse.Namespace) -> int:
    from staleness_lab.workflows.durations import format_duration
    from staleness_lab.workflows.load import load_workflow
    from staleness_lab.workflows.propagate import bounds_report

    report = bounds_report(load_workflow(args.file, limits=_workflow_limits(args)))
    if args.json:
        print(dumps({"status": "valid", "file": str(args.file), **report}))
        return 0

    def bounds(b: dict[str, Any]) -> str:
        stale = [("-" if t is None else format_duration(t)) for t in b["staleness"]]
        text = f"stale [{', '.join(stale)}]" if any(t is not None for t in b["staleness"]) else ""
        inc = f"inc {format_duration(b['inconsistency'])}" if b["inconsistency"] is not None else ""
        return " ".join(part for part in (text, inc) if part) or "-"

    channels = report["channels"]
    print(f"{args.file}: valid workflow {report['workflow']}, {len(channels)} channels, horizon "
          f"{format_duration(report['horizon'])}, sha256 {report['sha256'][:16]}")
    rows = [("channel", "role", "layout", "own", "propagated")] + [
        (c["name"], c["role"], " ".join(f"({src},{path})" for src, path in c["layout"]), bounds(c["own"]),
         bounds(c["propagated"])) for c in channels]
    widths = [max(len(row[k]) for row in rows) for k in range(4)]
    for row in rows:
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[4])
    print("asynchronous variants (a delta read from one input; digest correction 3):")
    for v in report["async_variants"]:
        print(f"  operators[{v['index']}] ({v['operator']}) input {v['input']} {v['channel']}: "
              f"{'offered' if v['offered'] else 'WITHHELD'} ({v['reason']})")
    if not report["async_variants"]:
        print("  none (no join or union)")
    return 0


def _workflow_run(args: argparse.Namespace) -> int:
    from staleness_lab.tracefiles import write_frames
    from staleness_lab.workflows.durations import parse_duration
    from staleness_lab.workflows.block_store import check_writable_dir, default_store
    from staleness_lab.workflows.load import load_workflow
    from staleness_lab.workflows.sim import TRACE_FRAMES, RunConfig, block_store, options_from, run
    from staleness_lab.workflows.store_lock import store_lock

    pairs: dict[str, str] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError("--option", f"must be K=V, got {item!r}")
        pairs[key.strip()] = value
    horizon = None if args.horizon is None else parse_duration(_hours_if_number(args.horizon), "--horizon", gt=0)
    if args.store is not None and args.mode != "spark":
        raise InputError("--store", f"only the spark mode keeps a block store (--mode is {args.mode})")
    config = RunConfig(scheduler=args.scheduler, scenario=args.scenario, mode=args.mode, seed=args.seed,
                       horizon=horizon, options=options_from(pairs), store=args.store)
    limits = _workflow_limits(args)
    if config.mode == "spark":
        check_writable_dir(config.store or default_store(), "--store")
    if args.trace_out is not None:
        check_trace_dir(args.trace_out, "--trace-out", tuple(f"{name}.parquet" for name in TRACE_FRAMES))
    workflow = load_workflow(args.file, limits=limits)
    if config.mode == "spark":
        store = block_store(workflow, config, config.horizon or workflow.horizon)
        store.check()  # before Spark starts
        with store_lock(store.root):  # one writer per store, refused before Spark starts
            from staleness_lab.spark.session import get_spark
            from staleness_lab.spark.workflows.executor import spark_rows

            before = signal.getsignal(signal.SIGINT)
            get_spark()
            _after_spark_started(before)
            result = run(workflow, config, spark_rows)
    else:
        result = run(workflow, config)
    summary = result.summary
    if args.trace_out is not None:
        meta = {b"staleness_lab.workflow_sha256": summary["workflow_sha256"].encode(),
                b"staleness_lab.seed": str(config.seed).encode(), b"staleness_lab.version": __version__.encode(),
                b"staleness_lab.scheduler": config.scheduler.encode(), b"staleness_lab.scenario": config.scenario.encode()}
        write_frames(result.frames, args.trace_out, meta, option="--trace-out")
    if args.json:
        print(dumps(summary))
        return 0
    print(f"{args.file}: {summary['workflow']} {summary['scenario']} {summary['scheduler']} seed {config.seed}, "
          f"{summary['horizon_h']:g} h: {summary['status']}")
    print(f"  plans {summary['plans']}, invocations {summary['invocations']}, infeasible {summary['infeasible']}, "
          f"cost {summary['cost_cpu_h']:.6g} CPU-h, scheduler {summary['scheduler_s']:.3f} s")
    for label, lag in summary["lag"].items():
        shown = "no episode" if lag["median"] is None else f"median {lag['median']:.6g}, max {lag['max']:.6g} CPU-h"
        print(f"  lag {label}: {shown} ({lag['episodes']} episodes)")
    return 0


def _hours_if_number(text: str) -> str | float:
    """A command line's bare number is hours (``--horizon 6``); a workflow file's string must
    carry its unit, so the duration parser refuses ``"6"`` there."""
    try:
        return float(text)
    except ValueError:
        return text


def _workflow_verify(args: argparse.Namespace) -> int:
    from staleness_lab.workflows.block_store import verify

    if not args.store.is_dir():
        raise InputError("STORE", f"{args.store} is not a directory")
    found = verify(args.store)
    if found.runs == 0:
        raise InputError("STORE", f"{args.store} holds no run (no run.json below it)")
    if args.json:
        print(dumps({"status": "damaged" if found.damage else "ok", "runs": found.runs, "blocks": found.blocks,
                     "orphans": found.orphans, "damage": found.damage}))
    else:
        print(f"{args.store}: {found.runs} run(s), {found.blocks} block(s), {len(found.orphans)} orphan(s), "
              f"{len(found.damage)} damaged")
        for line in found.damage:
            print(f"  damaged: {line}")
        for path in found.orphans:
            print(f"  orphan (invisible; a resumed run removes it): {path}")
    return 1 if found.damage else 0


_WORKFLOW_COMMANDS = {"validate": _workflow_validate, "run": _workflow_run, "verify": _workflow_verify}


_COMMANDS = {
    "simulate": _simulate, "check": _check, "validate": _validate, "policies": _policies, "sweep": _sweep, "report": _report, "teach": _teach, "bench": _bench,
    "plan": _plan, "tpch": _tpch, "optimum": _optimum, "budget": _budget, "workflow": _workflow,
}


if __name__ == "__main__":
    sys.exit(main())
