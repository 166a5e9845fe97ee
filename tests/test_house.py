"""The house rules a newcomer relies on (docs/ARCHITECTURE.md, "Rules that keep the house in order").

- every path docs/ARCHITECTURE.md names exists;
- no code, page or doc cites a file outside this repository (the map lives in docs/);
- no product module is over 600 lines;
- no function is graded D or worse by radon, except compiled kernels and import parsers, which
  may be D (never E or F) with a comment above the ``def`` saying why.
"""
from __future__ import annotations

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
