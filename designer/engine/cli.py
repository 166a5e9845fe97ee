"""``python -m designer.engine <command>``: the engine's command line.

Each command lives in the module that owns its concept and exposes two functions:
``add_arguments(parser)`` and ``run(args) -> int``. Modules are imported lazily so that
``--help`` and small commands start fast. An :class:`EngineError` becomes one clear line on
stderr (one line per located problem) and exit status 1 — never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# Nothing heavier than argparse at the top: ``designer.engine.errors`` (dataclasses, inspect:
# as much import time as the rest of ``--help``) is imported only once a command has raised.

__all__ = ["COMMANDS", "main"]

# command name -> (module path, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("designer.engine.commands.build", "build a host or a cluster from a template"),
    "validate": ("designer.engine.commands.validate", "validate a topology document"),
    "topo-matrix": ("designer.engine.commands.topo_matrix", "nvidia-smi topo -m style matrix of one host"),
    "solve": ("designer.engine.commands.solve", "max-min fair rates for explicit flow paths"),
    "simulate": ("designer.engine.commands.simulate", "run a scenario and print the result"),
    "expand": ("designer.engine.commands.expand", "a result's resources grouped by symmetry, expanded to records"),
    "sweep": ("designer.engine.commands.sweep", "rank every single failure of a class by impact"),
    "compare": ("designer.engine.commands.compare", "compare NIC policies on one scenario"),
    "place": ("designer.engine.commands.place", "rank placements of the next job on a shared cluster"),
    "import": ("designer.engine.commands.import_", "import NCCL XML, nvidia-smi topo -m or hwloc XML"),
    "export": ("designer.engine.commands.export", "export a host to NCCL XML (or the document to GraphML)"),
    "bench": ("designer.engine.commands.bench", "run the benchmarks and print JSON figures"),
    "nccl-tests": ("designer.engine.commands.nccl_tests", "predicted nccl-tests table (and compare with a real run)"),
    "nccl-log": ("designer.engine.commands.nccl_log", "read NCCL_DEBUG=INFO logs and check them against a design"),
    "diagnose": ("designer.engine.commands.diagnose", "measured nccl-tests runs -> the faults that explain them"),
    "bom": ("designer.engine.commands.bom", "bill of materials and fabric facts of a topology"),
    "catalog": ("designer.engine.commands.catalog", "list link technologies or (--switches) switch models"),
    "import-workload": ("designer.engine.commands.import_workload", "import a SimAI/ASTRA-sim workload file as a job"),
    "tuner": ("designer.engine.commands.tuner", "NCCL tuner-plugin CSV of the engine's algorithm/protocol choices"),
    "acceptance": ("designer.engine.commands.acceptance", "acceptance spec (min busbw per size) and its check of nccl-tests logs"),
    "goodput": ("designer.engine.commands.goodput", "failures x the design: interruptions, checkpoint interval, goodput"),
    "plan": ("designer.engine.commands.plan", "floor plan, cable schedule, costed BOM and LLDP as-built check"),
    "explore": ("designer.engine.commands.explore", "design-space explorer: a grid of fabrics x a job mix, Pareto frontier"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m designer.engine",
        description="Fabricscope engine: design and simulate GPU-to-spine topologies.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = _parser()
        if not argv or argv[0] in ("-h", "--help"):
            parser.print_help()
            return 0 if argv else 2
        parser.error(f"unknown command {argv[0]!r} (choose from {', '.join(COMMANDS)})")
    name = argv[0]
    module_path, help_text = COMMANDS[name]
    try:
        module = importlib.import_module(module_path)
    except ModuleNotFoundError as exc:
        if exc.name != module_path:
            raise
        print(f"error: command {name!r} is not available in this build", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog=f"python -m designer.engine {name}", description=help_text)
    module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:
        return _reader_left()
    except Exception as exc:
        status = _known_error(exc)
        if status is None:
            raise
        return status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _reader_left() -> int:
    """``... | head``: the reader closed the pipe before the output ended. Leave quietly with
    the shell's status for SIGPIPE (141) instead of a traceback; the rest of the output goes
    to /dev/null so that the final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _known_error(exc: Exception) -> int | None:
    """Exit status 1 after one line per problem for an engine error or a missing file; None
    for anything else (a bug: let its traceback through)."""
    from designer.engine.errors import EngineError

    if isinstance(exc, EngineError):
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    if isinstance(exc, FileNotFoundError):
        print(f"error: {exc.filename}: no such file", file=sys.stderr)
        return 1
    return None
