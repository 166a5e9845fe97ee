"""``bench``: run the engine benchmarks and print one JSON object of figures.

Benchmarks live in ``designer/engine/benchmarks/<area>.py``; each module exposes
``BENCHMARKS: dict[str, Callable[[], dict]]`` (name -> function returning figures, seconds and
bytes). They are benchmarks, not tests: nothing here asserts a timing.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import sys

import designer.engine.benchmarks as benchmarks_pkg


def add_arguments(parser) -> None:
    parser.add_argument("--only", action="append", default=[],
                        help="run only benchmarks whose name contains this text (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the benchmark names and exit")


def _all_benchmarks() -> dict:
    found = {}
    for info in sorted(pkgutil.iter_modules(benchmarks_pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{benchmarks_pkg.__name__}.{info.name}")
        for name, fn in getattr(module, "BENCHMARKS", {}).items():
            found[f"{info.name}.{name}"] = fn
    return found


def run(args) -> int:
    selected = {name: fn for name, fn in _all_benchmarks().items()
                if not args.only or any(text in name for text in args.only)}
    if args.list:
        print("\n".join(selected))
        return 0
    figures = {}
    for name, fn in selected.items():
        print(f"bench: {name} …", file=sys.stderr, flush=True)
        figures[name] = fn()
        print(json.dumps({name: figures[name]}), file=sys.stderr, flush=True)
    print(json.dumps(figures, indent=2))
    return 0
