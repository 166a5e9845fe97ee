"""The browser code's own checks, run as part of ``make test``: ESLint over ``static/js`` and
``tests/js`` (config: ``eslint.config.js``, with its function size limits), the ``node --test``
unit tests in ``tests/js/`` (the editor's DOM-free parts: model, layout, view, edit, keyboard,
io; the result pages' label fit; the job and scenario pages' helpers), and that the editor page
preloads every editor module.

Both need Node.js; ESLint comes from ``node_modules/`` (``make setup`` runs ``npm ci`` from
``package-lock.json``). Without ``node`` on PATH the tests skip; a missing ``node_modules/`` is a
failure (``npx --no-install`` never downloads), since ``make setup`` should have installed it.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 300

needs_node = pytest.mark.skipif(
    shutil.which("node") is None,
    reason="node is not on PATH (Node.js 20+ runs the JavaScript lint and unit tests)")


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


def _fail_with(proc: subprocess.CompletedProcess, what: str, hint: str = "") -> None:
    pytest.fail(f"{what} failed (exit {proc.returncode}){hint}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}",
                pytrace=False)


@needs_node
def test_eslint_passes():
    proc = _run(["npx", "--no-install", "eslint", "static/js", "tests/js"])
    if proc.returncode != 0:
        missing = not (ROOT / "node_modules" / ".bin" / "eslint").exists()
        _fail_with(proc, "npx --no-install eslint static/js tests/js",
                   " - node_modules/ is missing: run `make setup` (npm ci)" if missing else "")


@needs_node
def test_node_unit_tests_pass():
    proc = _run(["node", "--test", "--test-reporter=spec", "tests/js/"])
    if proc.returncode != 0:
        _fail_with(proc, "node --test tests/js/")
    # A runner that found no test file exits 0 too: make sure tests actually ran.
    counts = re.findall(r"^\S+ tests (\d+)$", proc.stdout, flags=re.M)
    assert counts and int(counts[-1]) > 0, f"node --test ran no test:\n{proc.stdout}"


def test_eslint_limits_function_size():
    """The limits stay on: a function over them is split, not exempted."""
    config = (ROOT / "eslint.config.js").read_text("utf-8")
    assert "complexity: ['error', 15]" in config
    assert "'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }]" in config
    for path in (ROOT / "static" / "js").rglob("*.js"):
        assert "eslint-disable" not in path.read_text("utf-8"), path


def test_editor_page_preloads_every_editor_module():
    """editor.html preloads the editor's modules while the document downloads; a module it does
    not list is fetched only once the module importing it has arrived (a longer open)."""
    page = (ROOT / "templates" / "designer" / "editor.html").read_text("utf-8")
    preloaded = set(re.findall(r"""<link rel="modulepreload" href="{% static 'js/editor/([\w.]+\.js)' %}">""", page))
    modules = {p.name for p in (ROOT / "static" / "js" / "editor").glob("*.js")}
    assert preloaded == modules, f"missing: {sorted(modules - preloaded)}, gone: {sorted(preloaded - modules)}"
