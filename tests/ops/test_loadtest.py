"""The load-test runner end to end, short: app on loopback, locust headless, a summary."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def test_runner_short_run_has_no_errors_and_loses_no_job(tmp_path):
    # find_spec, not import: importing locust monkey-patches this process with gevent.
    if importlib.util.find_spec("locust") is None:
        pytest.skip("locust is not installed")
    out = tmp_path / "load"
    run = subprocess.run([sys.executable, "loadtest/run.py", "--users", "4", "--spawn-rate", "4",
                          "--duration", "12", "--workers", "1", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=500)
    app_errors = [line for line in (out / "app.log").read_text(errors="replace").splitlines()
                  if "level=ERROR" in line][:3]
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:], app_errors)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total"]["requests"] > 50 and summary["total"]["failures"] == 0
    for category in ("page", "api read", "api edit"):
        assert summary[category]["requests"] > 0 and summary[category]["p95_ms"] is not None
    jobs = summary["jobs_in_database"]
    assert jobs == {"succeeded": summary["jobs_seen_by_users"]["submitted"]} or \
        summary["jobs_seen_by_users"]["submitted"] == 0
    assert "fabricscope_http_requests_total" in (out / "metrics.txt").read_text()
    assert (out / "summary.md").read_text().startswith("4 users")
    # each user signed in once through the form (its own category); CPU by process role
    assert summary["sign-in"]["requests"] == 8 and summary["sign-in"]["failures"] == 0
    cpu = summary["cpu_s"]
    assert cpu["app"]["web"] > 0 and cpu["app"]["worker"] > 0 and cpu["locust"] > 0, cpu
