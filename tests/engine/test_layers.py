"""The engine's layer contract: imports go down the layers, never up, and never round in a cycle.

Every module under ``designer/engine`` is parsed with :mod:`ast` (nothing is imported) and every
``import`` / ``from … import`` in it is read — at module level, inside functions and methods,
and inside ``if TYPE_CHECKING:`` blocks. Type-checking-only imports count like any other: an
annotation that names a higher layer is a dependency on that layer all the same, and allowing
them would let a cycle hide behind a flag (the checks stay simple and the contract has no
exception to remember).

The layers, bottom to top (a module may import its own layer and any lower one):

==  ================================================  ===========================================
 1  ``designer.engine`` (the package), ``errors``,      base
    ``numbers``, ``collector``
 2  ``catalog``, ``catalog_physical``,                 hardware facts; optics, racks, prices;
    ``catalog_copies``, ``catalog_nvswitch``           host-copy payloads; NVSwitch, NVLS figures
 3  ``solve``                                           max-min solver, timeline, id tables, kernels
 4  ``document``                                        the topology document (validate, accept)
 5  ``model``                                           topology, templates, fabrics, bom, …
 6  ``io``                                              import/export formats
 7  ``routing``
 8  ``traffic``                                         workloads, collectives, jobs, scenario
 9  ``analysis``                                        simulate, what-if, latency, …
10  ``benchmarks``
11  ``commands``
12  ``cli``, ``__main__``                               top
==  ================================================  ===========================================

Besides the layers:

- the module graph (one edge per import, function-level ones included) has no cycle;
- at each package level the graph of its children (subpackages and modules: an import from
  anything under one child to anything under another is an edge between them) has no cycle —
  within ``traffic/``, ``collectives`` ↔ ``jobs`` is a cycle even if no two modules form one;
- the engine imports neither Django, Celery, DRF nor Plotly, nor anything of the project
  outside ``designer.engine``.

Importing a submodule runs its parent packages' ``__init__`` first; that implicit import is not
an edge (it cannot form a harmful cycle: the parent is initialized before the child runs). An
explicit import of a package (``from designer.engine.traffic.collectives import PROTOCOLS``) is an
edge to that package's ``__init__``; ``from package import submodule`` is an edge to the
submodule.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "designer" / "engine"
TOP = "designer.engine"

#: Layer of each top-level name under ``designer.engine`` (bottom = 1).
LAYERS: dict[str, int] = {
    "": 1, "errors": 1, "numbers": 1, "collector": 1,
    "catalog": 2, "catalog_physical": 2, "catalog_copies": 2, "catalog_nvswitch": 2,
    "solve": 3,
    "document": 4,
    "model": 5,
    "io": 6,
    "routing": 7,
    "traffic": 8,
    "analysis": 9,
    "benchmarks": 10,
    "commands": 11,
    "cli": 12, "__main__": 12,
}
LAYER_NAMES = {1: "base", 2: "catalog", 3: "solve", 4: "document", 5: "model", 6: "io", 7: "routing",
               8: "traffic", 9: "analysis", 10: "benchmarks", 11: "commands", 12: "cli"}
FORBIDDEN = ("django", "celery", "rest_framework", "plotly")


def _modules() -> dict[str, Path]:
    """Dotted name → path of every engine module (a package is its ``__init__.py``)."""
    out = {}
    for path in sorted(ENGINE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """Absolute name of the module a ``from … import`` reads from (relative ones resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> list[tuple[str, int]]:
    """``(imported module, line)`` for every import statement anywhere in ``module``.

    ``from X import y`` is an import of ``X.y`` when that is a module of the engine, else of ``X``.
    """
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), filename=str(MODULES[module]))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                out.append((sub if sub in MODULES else source, node.lineno))
    return out


def _engine_target(name: str) -> str | None:
    """The engine module ``name`` refers to (the longest known prefix), or None outside it."""
    if name != TOP and not name.startswith(TOP + "."):
        return None
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _layer(module: str) -> int | None:
    rest = module[len(TOP) + 1:] if module != TOP else ""
    return LAYERS.get(rest.split(".")[0])


def _graph() -> tuple[dict[str, set[str]], dict[tuple[str, str], int]]:
    """Module → imported engine modules, and the first line of each edge."""
    graph, lines = defaultdict(set), {}
    for module in MODULES:
        for name, line in _imports(module):
            target = _engine_target(name)
            if target is None or target == module:
                continue
            graph[module].add(target)
            lines.setdefault((module, target), line)
    return graph, lines


def _components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (each holds a cycle)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):   # Tarjan; the graphs are small (a few hundred nodes)
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return comps


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a closed list of nodes) per strongly connected component."""
    return [_cycle_in(graph, comp) for comp in _components(graph)]


def _cycle_in(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest cycle through the first node of a strongly connected component."""
    start = min(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ()) & comp):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("not a cycle")


def _short(name: str) -> str:
    return name[len(TOP) + 1:] if name.startswith(TOP + ".") else name


def test_every_module_has_a_layer():
    unknown = [m for m in MODULES if _layer(m) is None]
    assert not unknown, f"modules with no layer (add them to LAYERS): {unknown}"


def test_imports_never_go_up_a_layer():
    graph, lines = _graph()
    bad = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            here, there = _layer(module), _layer(target)
            if there > here:
                bad.append(f"{MODULES[module].relative_to(ROOT)}:{lines[module, target]}: "
                           f"{_short(module)} (layer {here}, {LAYER_NAMES[here]}) imports "
                           f"{_short(target)} (layer {there}, {LAYER_NAMES[there]})")
    assert not bad, "imports up a layer:\n" + "\n".join(bad)


def test_no_import_cycle_between_modules():
    graph, lines = _graph()
    report = []
    for comp in _components(graph):
        cycle = _cycle_in(graph, comp)
        report.append(" → ".join(_short(m) + (f" (line {lines[m, n]})" if n else "")
                                 for m, n in zip(cycle, [*cycle[1:], None])))
        if len(comp) > len(cycle) - 1:
            report[-1] += f"  [all of: {', '.join(sorted(map(_short, comp)))}]"
    assert not report, "import cycles (function-level imports included):\n" + "\n".join(report)


def _child(package: str, module: str) -> str | None:
    """The child of ``package`` (a subpackage or module directly in it) that holds ``module``."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1:].split(".")[0]


def test_no_cycle_at_any_package_level():
    graph, _ = _graph()
    packages = [m for m in MODULES if _is_package(m)]
    report = []
    for package in sorted(packages):
        level = defaultdict(set)
        for module, targets in graph.items():
            a = _child(package, module)
            for target in targets:
                b = _child(package, target)
                if a and b and a != b:
                    level[a].add(b)
        for comp in _components(level):
            cycle = _cycle_in(level, comp)
            report.append(f"in {_short(package) or TOP}: " + " → ".join(_short(m) for m in cycle))
            if len(comp) > len(cycle) - 1:
                report[-1] += f"  [all of: {', '.join(sorted(map(_short, comp)))}]"
    assert not report, "package-level import cycles:\n" + "\n".join(report)


def test_the_engine_imports_no_framework_and_nothing_of_the_project_outside_it():
    bad = []
    for module in sorted(MODULES):
        for name, line in _imports(module):
            root = name.split(".")[0]
            outside = root in ("designer", "api") and _engine_target(name) is None
            if root in FORBIDDEN or outside:
                bad.append(f"{MODULES[module].relative_to(ROOT)}:{line}: imports {name}")
    assert not bad, "the engine stands alone:\n" + "\n".join(bad)


def test_the_checks_see_function_level_and_relative_imports():
    """The walk reads nested imports and resolves relative ones (guards the checks themselves)."""
    tree = ast.parse("def f():\n    if True:\n        from ..model import topology\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert _resolve("designer.engine.traffic.workloads", node) == "designer.engine.model"
    assert _resolve("designer.engine.traffic.jobs", node) == "designer.engine.traffic.model"
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _layer("designer.engine.cli") > _layer("designer.engine.analysis.simulate") > _layer(TOP)
