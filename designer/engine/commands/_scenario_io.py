"""Helpers shared by the scenario commands (simulate, sweep, compare): reading JSON input with
located errors, stderr progress, writing the JSON output."""
from __future__ import annotations

import json
import os
import sys

from designer.engine.errors import InvalidScenario, Problem

__all__ = ["read_json", "load_scenario", "progress_printer", "write"]


def read_json(path: str, where: str):
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidScenario("not JSON", [Problem(where, f"invalid JSON at line {exc.lineno} column "
                                                          f"{exc.colno}: {exc.msg}")]) from None


def load_scenario(path: str):
    """The scenario dict and a loader resolving a topology path relative to the scenario file."""
    scenario = read_json(path, path)
    if not isinstance(scenario, dict):
        raise InvalidScenario("a scenario must be a JSON object", [Problem(path, "not an object")])
    base = os.path.dirname(os.path.abspath(path)) if path != "-" else os.getcwd()
    return scenario, (lambda ref: read_json(os.path.join(base, ref), f"topology ({ref})"))


def progress_printer(quiet: bool):
    if quiet:
        return None

    def progress(fraction: float, message: str) -> None:
        print(f"[{fraction * 100:3.0f}%] {message}", file=sys.stderr, flush=True)

    return progress


def write(doc: dict, output: str | None) -> None:
    text = json.dumps(doc, indent=1, allow_nan=False)
    if output:
        with open(output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
