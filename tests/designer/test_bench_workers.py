"""``manage.py bench_workers`` runs end to end with tiny parameters (shape only, no timings).

The command is run as a subprocess exactly as a user runs it, on its embedded default: a scratch
SQLite file and an embedded Redis in a temporary directory (DATABASE_URL and REDIS_URL removed
from its environment), one real Celery worker, one 2-host sweep over the NICs::

    h0 (8 GPUs, 10 NICs) ──rails── leaves ──rails── h1 (8 GPUs, 10 NICs)    + storage0

Nothing here asserts a time: the figures are only checked to be there and positive.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def test_bench_workers_tiny_run_prints_figures_and_the_sweep_succeeds():
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SECRET_KEY="test-bench-workers-secret-key", PYTHONUNBUFFERED="1")
    done = subprocess.run(
        [sys.executable, "manage.py", "bench_workers", "--hosts", "2", "--workers", "1",
         "--repeat", "1", "--over", "nic", "--chunks", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-4000:]
    figures = json.loads(done.stdout)

    assert figures["benchmark"] == "bench_workers"
    assert figures["succeeded"] is True
    config = figures["config"]
    assert config["hosts"] == 2 and config["gpus"] == 16
    assert config["workers"] == [1] and config["chunks"] == 2 and config["over"] == ["nic"]
    assert config["database"] == "sqlite (scratch)"
    assert config["candidates"] == 20  # 2 hosts x (8 rail NICs + 2 storage NICs on the storage fabric)

    run = figures["runs"]["1"]
    assert run["succeeded"] is True
    assert len(run["wall_s"]) == 1 and run["wall_s"][0] > 0
    assert run["median_s"] == run["wall_s"][0]
    assert figures["baseline_workers"] == 1 and figures["speedup"] == {"1": 1.0}

    (job,) = figures["jobs"]
    assert job["state"] == "succeeded" and job["workers"] == 1
    assert job["chunks"] == 2 and job["chunks_per_worker"] == [2]  # one worker ran both
    assert job["ranked"] == job["candidates"] == 20
