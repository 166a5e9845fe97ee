"""Importing the engine and its topology modules loads neither Django, Celery nor Plotly."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_import_is_framework_free():
    code = ("import sys, designer.engine, designer.engine.document, designer.engine.catalog, "
            "designer.engine.templates, designer.engine.fabrics, designer.engine.pathclass, "
            "designer.engine.topology\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'plotly'))\n"
            "print(','.join(bad))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
