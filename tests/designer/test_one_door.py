"""One door to the engine: only ``designer/bridge/`` imports ``designer.engine`` (docs/ARCHITECTURE.md).

Every ``.py`` of ``designer/`` (but the engine itself) and ``api/`` is parsed with ``ast``, and each
import anywhere in it — at the top, inside a function, under ``if`` — is checked: ``import
designer.engine...``, ``from designer.engine... import ...``, ``from designer import engine`` and
``importlib.import_module("designer.engine...")``. Migrations count too: they reach stored results
through ``designer.bridge.results``. The engine's own CLI and tests live under
``designer/engine/`` and ``tests/engine/``, outside this rule.

Also here: a scenario saved and run in one request is validated by the engine once.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = "designer.engine"
DOOR = ROOT / "designer" / "bridge"


def _product_files() -> list[Path]:
    files = [p for p in (ROOT / "designer").rglob("*.py")
             if (ROOT / "designer" / "engine") not in p.parents]
    return sorted(files + list((ROOT / "api").rglob("*.py")))


def _is_engine(module: str) -> bool:
    return module == ENGINE or module.startswith(ENGINE + ".")


def _engine_imports(path: Path) -> list[int]:
    """Line numbers of the imports of the engine in ``path``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            if any(_is_engine(alias.name) for alias in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _is_engine(node.module) or (
                    node.module == "designer" and any(a.name == "engine" for a in node.names)):
                lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", ""))
              in ("import_module", "__import__") and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and _is_engine(node.args[0].value)):
            lines.append(node.lineno)
    return lines


def test_only_the_bridge_imports_the_engine():
    files = _product_files()
    assert len(files) > 50 and any(p.parent == DOOR for p in files)
    offenders = [f"{path.relative_to(ROOT)}:{line}"
                 for path in files if DOOR not in path.parents
                 for line in _engine_imports(path)]
    assert not offenders, ("only designer/bridge/ may import designer.engine; go through "
                           "designer.bridge instead:\n  " + "\n  ".join(offenders))


def test_the_guard_sees_every_kind_of_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import designer.engine.catalog\n"
                      "from designer import engine\n"
                      "def f():\n"
                      "    from designer.engine.io import simai\n"
                      "    import importlib\n"
                      "    importlib.import_module('designer.engine.document')\n"
                      "from designer import bridge\n"
                      "from designer.engineering import x\n")
    assert _engine_imports(sample) == [1, 2, 4, 6]


@pytest.mark.django_db
def test_a_scenario_saved_and_run_in_one_request_is_validated_once(client, user, small_topology,
                                                                 published, monkeypatch):
    from django.urls import reverse

    from designer.engine.traffic import scenario as engine_scenario

    calls = []
    real = engine_scenario.normalize_scenario

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(engine_scenario, "normalize_scenario", counted)
    client.force_login(user)
    response = client.post(reverse("scenario_new", args=[small_topology.pk]), {
        "name": "once", "description": "", "mode": "steady", "nic_policy": "affinity",
        "multipath": "hash", "seed": "1", "action": "simulate", "workload_type": "patterns",
        "pattern-TOTAL_FORMS": "1", "pattern-INITIAL_FORMS": "0", "pattern-MIN_NUM_FORMS": "1",
        "pattern-MAX_NUM_FORMS": "32", "pattern-0-pid": "ar", "pattern-0-kind": "allreduce",
        "pattern-0-select": "gpu", "pattern-0-bytes_value": "1", "pattern-0-bytes_unit": "GB",
        "pattern-0-algorithm": "auto"})
    assert response.status_code == 302 and "/jobs/" in response["Location"], response
    assert len(calls) == 1
