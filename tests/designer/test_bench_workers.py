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


def _bench(*args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SECRET_KEY="test-bench-workers-secret-key", PYTHONUNBUFFERED="1")
    done = subprocess.run(
        [sys.executable, "manage.py", "bench_workers", "--hosts", "2", "--workers", "1",
         "--repeat", "1", "--chunks", "2", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def _assert_chunk_timing(job: dict) -> None:
    """One worker ran both chunks: two spans, one pickup (the first chunk), one gap between."""
    assert job["chunk_run_s"]["n"] == 2 and job["chunk_run_s"]["min"] > 0
    assert job["pickup_s"]["n"] == 1 and job["pickup_s"]["min"] >= 0
    assert job["gap_s"]["n"] == 1 and job["gap_s"]["min"] >= 0
    assert job["chunk_busy_s"] >= job["chunk_run_s"]["max"]
    # worker time outside the chunks, per chunk: (1 x wall - busy) / 2, as printed
    assert job["overhead_per_chunk_s"] == round((job["wall_s"] - job["chunk_busy_s"]) / 2, 4)
    assert job["overhead_per_chunk_s"] > 0


def test_bench_workers_tiny_run_prints_figures_and_the_sweep_succeeds():
    figures = _bench("--over", "nic")

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
    _assert_chunk_timing(job)
    assert run["overhead_per_chunk_s"] == [job["overhead_per_chunk_s"]]


def test_bench_workers_runs_the_explorer_grid_in_chunks():
    """``--kind explore``: the 8-point grid (4 fabrics x 2 oversubscriptions) around the 2-host
    cluster, in 2 chunks on one worker; every point is in the merged result."""
    figures = _bench("--kind", "explore")

    assert figures["succeeded"] is True
    config = figures["config"]
    assert config["kind"] == "explore" and config["over"] is None
    assert config["grid"] == {"fabric": ["rail-optimized", "rail-only", "leaf-spine", "fat-tree"],
                              "oversubscription": [1, 2]}
    assert config["candidates"] == 8
    (job,) = figures["jobs"]
    assert job["state"] == "succeeded" and job["chunks"] == 2
    assert job["ranked"] == job["candidates"] == 8
    _assert_chunk_timing(job)
