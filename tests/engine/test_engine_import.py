"""Importing any engine module loads neither Django, Celery nor Plotly (docs/ARCHITECTURE.md, "Rules").

Every module under ``designer/engine`` is imported, found with :func:`pkgutil.walk_packages`, in
a fresh interpreter: a framework import anywhere in the engine (even in a CLI command or a
benchmark) fails here. The walk is checked against the ``.py`` files on disk so that a module
the walk cannot see (a folder without ``__init__.py``) does not escape the check.
"""
import importlib.machinery
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "designer" / "engine"
FRAMEWORKS = ("django", "celery", "plotly")

# Runs in a subprocess. ``designer.engine.__main__`` runs the CLI when imported: it is imported
# with ``--help`` as its arguments, its output swallowed and its exit caught.
_IMPORT_ALL = """
import contextlib, importlib, io, json, pkgutil, sys
import designer.engine
names = sorted(m.name for m in pkgutil.walk_packages(designer.engine.__path__, "designer.engine."))
for name in names:
    if name == "designer.engine.__main__":
        sys.argv = ["python -m designer.engine", "--help"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            importlib.import_module(name)
    else:
        importlib.import_module(name)
bad = sorted(m for m in sys.modules if m.split(".")[0] in FRAMEWORKS)
print(json.dumps({"modules": names, "loaded": bad}))
"""


def _modules_on_disk() -> list[str]:
    names = []
    # .py files, and compiled extension modules (the AOT solver kernels when built)
    suffixes = (".py", *importlib.machinery.EXTENSION_SUFFIXES)
    for path in (p for p in ENGINE.rglob("*") if p.name.endswith(suffixes)):
        stem = path.name[:-len(next(s for s in suffixes if path.name.endswith(s)))]
        parts = (*path.parent.relative_to(ROOT).parts, stem)
        if "__pycache__" in parts:
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(n for n in names if n != "designer.engine")


def test_every_engine_module_imports_without_django_celery_or_plotly():
    code = f"FRAMEWORKS = {FRAMEWORKS!r}\n" + _IMPORT_ALL
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["modules"] == _modules_on_disk()
    assert len(report["modules"]) >= 40
    assert report["loaded"] == [], f"engine modules pulled in {report['loaded']}"
