"""The house rules a newcomer relies on (docs/ARCHITECTURE.md, "Rules that keep the house in order").

- every path docs/ARCHITECTURE.md names exists;
- no code, page or doc cites a file outside this repository (the map lives in docs/);
- no product module is over 600 lines;
- no function is graded D or worse by radon, except compiled kernels and import parsers, which
  may be D (never E or F) with a comment above the ``def`` saying why;
- no import cycle among the web app's modules (``designer/`` outside the engine, and ``api/``),
  imports inside functions included (the engine's own layers and cycles:
  ``tests/engine/test_layers.py``).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_DIRS = ("designer", "api")
MAX_MODULE_LINES = 600
# Compiled kernels (one pass over arrays, branches per token or case) and the import parsers
# (one branch per vendor format variant) may stay at D, each saying why in a comment.
D_ALLOWED_UNDER = ("designer/engine/solve/kernels/", "designer/engine/io/")
OUTSIDE_FILES = re.compile(r"\b(DESIGN|REFERENCE|STYLE)\.md\b|/work/shared|\.\./shared/")


def _product_modules():
    for top in PRODUCT_DIRS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" not in path.parts and "__pycache__" not in path.parts:
                yield path


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_path_named_in_the_architecture_map_exists():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"`([\w./-]+/[\w./-]*|[\w-]+\.(?:py|md|html|js))`", text))
    named |= set(re.findall(r"\]\(([\w./-]+\.md)\)", text))
    assert len(named) > 40, "the map names the files it talks about"
    missing = []
    for name in sorted(named):
        candidates = [ROOT / name, ROOT / "docs" / name]
        if not any(c.exists() for c in candidates):
            missing.append(name)
    assert not missing, f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_nothing_cites_a_file_outside_the_repository():
    offenders = []
    patterns = ("*.py", "*.js", "*.html", "*.md", "*.mjs", "Makefile")
    for pattern in patterns:
        for path in ROOT.rglob(pattern):
            rel = _rel(path)
            if rel.startswith((".venv/", "node_modules/", "static/vendor/", "artifacts/", "var/", ".git/")):
                continue
            if path.name == "test_house.py":
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if OUTSIDE_FILES.search(line):
                    offenders.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert not offenders, "cites a file that is not in the repository:\n" + "\n".join(offenders)


def test_no_product_module_is_over_600_lines():
    long = [f"{_rel(p)}: {n} lines" for p in _product_modules()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]
    assert not long, "split these by responsibility:\n" + "\n".join(long)


def _has_why_comment(lines: list[str], lineno: int) -> bool:
    """A ``#`` comment on the ``def`` line or in the three lines above it (decorators included)."""
    window = lines[max(0, lineno - 4):lineno]
    return any("#" in line for line in window)


def test_no_function_is_graded_d_or_worse():
    radon_complexity = pytest.importorskip("radon.complexity")
    offenders = []
    for path in _product_modules():
        source = path.read_text()
        lines = source.splitlines()
        rel = _rel(path)
        for block in radon_complexity.cc_visit(source):
            rank = radon_complexity.cc_rank(block.complexity)
            if rank < "D":
                continue
            allowed = (rank == "D" and rel.startswith(D_ALLOWED_UNDER)
                       and _has_why_comment(lines, block.lineno))
            if not allowed:
                offenders.append(f"{rel}:{block.lineno} {block.fullname} {rank} ({block.complexity})")
    assert not offenders, "simplify these (or, in a kernel or parser at D, say why):\n" + "\n".join(offenders)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, name: str, is_package: bool, known: set) -> set:
    """Project modules a module imports anywhere in its body (``from pkg import submodule`` is the
    submodule; an absent name is resolved to its nearest existing parent)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[:len(base) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def test_no_import_cycle_in_the_web_app():
    paths = {_module_name(p): p for p in _product_modules() if "engine" not in p.relative_to(ROOT).parts[:2]}
    known = set(paths)
    graph = {name: _imported(ast.parse(path.read_text()), name, path.name == "__init__.py", known)
             for name, path in paths.items()}
    # A module reaching its own package's __init__ is how Python loads it, not a cycle.
    graph = {n: {m for m in deps if not n.startswith(m + ".")} for n, deps in graph.items()}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert len(graph) > 100, "the walk found the web app's modules"
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
