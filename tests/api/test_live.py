"""Against a live server over real HTTP: the example client (with a real Celery worker) and a
bounded schemathesis run with every check on, which must find no 5xx and no answer the OpenAPI
schema does not describe (tests/api/_schemathesis.py, docs/RELIABILITY.md)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from designer import services
from tests.api import _schemathesis as st

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.worker
def test_example_client_runs_a_nic_sweep(live_server, celery_worker, user):
    """examples/api_client.py end to end: build 32 DGX H100, ring all-reduce, sweep over NICs."""
    celery_worker()
    env = {**os.environ, "FABRICSCOPE_URL": live_server.url,
           "FABRICSCOPE_TOKEN": services.api_token_rotate(user=user).key}
    run = subprocess.run([sys.executable, "examples/api_client.py"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1500)
    out = run.stdout + run.stderr
    print(out)
    assert re.search(r"topology \d+ .*: 32 hosts, 256 GPUs", out), out
    assert "scenario" in out and "sweep job" in out and "%" in out, out
    if importlib.util.find_spec("designer.engine.analysis.whatif") is None:
        assert run.returncode == 1 and "sweep failed" in out, out
        pytest.skip("designer.engine.analysis.whatif does not exist yet: the client ran up to the "
                    "sweep, which failed as expected")
    assert run.returncode == 0, out
    # 32 hosts x 8 compute NICs = 256 single-NIC failures; the 2 storage NICs per host have no
    # uplink in this fabric, so they are listed apart, not ranked.
    assert "sweep succeeded" in out and "Top 5 of 256 NIC failures" in out, out
    assert "(64 unwired NICs not ranked)" in out and "does not complete (ar)" in out, out
    ranked = re.findall(r"^\s+[1-5]\. down h\d+/nic\d+: ", run.stdout, flags=re.M)
    assert len(ranked) == 5, out


@pytest.fixture
def schemathesis_settings(settings):
    """Room for the run: no rate limits or active-job cap in the way, small generated builds."""
    settings.FABRICSCOPE_API_THROTTLE_RATES = {s: "1000000/min"
                                               for s in ("anon", "user", "job_submit")}
    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 0
    settings.FABRICSCOPE_API_MAX_BUILD_HOSTS = 8  # keep generated builds small
    return settings


@pytest.mark.schemathesis
@pytest.mark.skipif(not st.SCHEMATHESIS.exists(), reason="schemathesis is not installed")
def test_schemathesis_all_checks_and_stateful(live_server, user, other_user, small_topology,
                                              scenario, published, schemathesis_settings,
                                              tmp_path):
    """Every schemathesis check (server errors, status codes, content types, headers, response
    schemas, negative/positive data, auth, methods…) over all phases, stateful included, as a
    token user who owns seeded objects; then anonymously, for the 401 shapes. Bounded: 10
    examples per operation and phase, one worker, seed 1 (about three minutes on 2 cores)."""
    data = st.seed(user=user, other_user=other_user, topology=small_topology, scenario=scenario)
    config = st.write_config(tmp_path / "schemathesis.toml", data)
    before = st.request_counts()
    authed = st.run(live_server.url, config, tmp_path / "authed.ndjson", max_examples=10,
                    phases="examples,coverage,fuzzing,stateful",
                    headers=[f"Authorization: Bearer {data.token}"], security_parameters=False)
    anonymous = st.run(live_server.url, config, tmp_path / "anonymous.ndjson", max_examples=5,
                       phases="examples,fuzzing", headers=[])
    counts = st.request_counts()
    counts = {k: v - before.get(k, 0) for k, v in counts.items()}
    out = authed.stdout + authed.stderr + "\n" + anonymous.stdout + anonymous.stderr
    (ROOT / "var").mkdir(exist_ok=True)
    (ROOT / "var" / "schemathesis-last-run.txt").write_text(  # counts for RELIABILITY.md
        f"{out}\nrequests answered under /api/v1/ by status class: {json.dumps(counts)}\n")
    assert authed.returncode == 0, authed.stdout[-8000:] + authed.stderr[-2000:]
    assert anonymous.returncode == 0, anonymous.stdout[-8000:] + anonymous.stderr[-2000:]
    # The app's own request metrics agree: no 5xx, and both 2xx and 401 answers were reached.
    assert counts.get("5xx", 0) == 0, counts
    assert counts.get("2xx", 0) > 0 and counts.get("4xx", 0) > 0, counts
    assert "Stateful" in authed.stdout and "API Links" in authed.stdout, authed.stdout[-3000:]
