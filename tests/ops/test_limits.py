"""Resource limits: flow count up front (400), per-user active jobs (429), time and memory
limits turned into clear failure messages, RLIMIT_AS really enforced in a child process."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from designer import services
from designer.choices import JobState
from designer.models import Scenario, SimulationJob
from designer.services.runs import error_text
from tests.conftest import ROOT, RING_ALLREDUCE

pytestmark = pytest.mark.django_db

# pod-2: 2 DGX-H100 hosts = 16 GPUs. A ring all-reduce over them makes 16 x 8 channels = 128
# flows; an all-to-all makes 16 x 15 = 240.
ALLTOALL = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e6}]


def test_flow_count_is_computed_without_building_flows(small_topology):
    from designer import bridge
    from designer.engine.traffic.scenario import normalize_scenario
    from designer.bridge import scenario_flow_count

    def count(workload):
        doc = bridge.scenario_document(revision=small_topology.current_revision,
                                       workload=workload, routing={}, failures=[],
                                       mode="steady")
        return scenario_flow_count(normalize_scenario(doc))

    assert count(RING_ALLREDUCE) == 128
    assert count(ALLTOALL) == 240
    assert count(RING_ALLREDUCE + ALLTOALL) == 368


def test_over_limit_scenario_rejected_at_save_and_submission(api_for, user, small_topology,
                                                             settings, published):
    api = api_for(user)
    settings.FABRICSCOPE_JOB_MAX_FLOWS = 200
    response = api.post("/api/v1/scenarios/", {
        "topology": small_topology.pk, "name": "big", "workload": ALLTOALL}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "limit_exceeded"
    assert "240 flows" in error["message"] and "at most 200" in error["message"]
    assert error["details"][0]["path"].endswith("workload")
    assert not Scenario.objects.filter(name="big").exists()
    # A scenario saved under a higher limit is refused at submission once the limit is lower.
    settings.FABRICSCOPE_JOB_MAX_FLOWS = 1000
    scenario = services.scenario_create(topology=small_topology, user=user, name="big",
                                        workload=ALLTOALL)
    settings.FABRICSCOPE_JOB_MAX_FLOWS = 200
    response = api.post("/api/v1/jobs/", {"scenario": scenario.pk, "kind": "simulate"},
                        format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "limit_exceeded"
    assert not SimulationJob.objects.exists() and not published


def test_per_user_active_job_limit_is_429(api_for, user, other_user, scenario, settings,
                                          published):
    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 2
    api = api_for(user)
    submit = lambda: api.post("/api/v1/jobs/", {"scenario": scenario.pk, "kind": "simulate"},
                              format="json")
    first, second = submit(), submit()
    assert first.status_code == second.status_code == 201
    third = submit()
    assert third.status_code == 429, third.content
    error = third.json()["error"]
    assert error["code"] == "too_many_jobs"
    assert error["details"] == {"active": 2, "limit": 2, "retry_after_s": 10}
    assert "2 jobs queued or running (limit 2 per user)" in error["message"]
    assert SimulationJob.objects.count() == 2
    # Finished jobs do not count; other users have their own allowance.
    SimulationJob.objects.filter(pk=first.json()["id"]).update(state=JobState.SUCCEEDED)
    assert submit().status_code == 201
    topology = services.topology_build(owner=other_user, name="b", template="dgx-h100", hosts=1)
    theirs = services.scenario_create(topology=topology, user=other_user, name="r",
                                      workload=RING_ALLREDUCE)
    assert services.job_submit_simulate(scenario=theirs, user=other_user).state == "queued"


def test_limit_errors_have_clear_messages(settings):
    from celery.exceptions import SoftTimeLimitExceeded

    from designer.ops.limits import describe_error

    settings.FABRICSCOPE_JOB_MEMORY_LIMIT_MB = 512
    settings.FABRICSCOPE_JOB_SOFT_TIME_LIMIT = 90
    assert describe_error(MemoryError()).startswith(
        "out of memory: the job needed more than the worker's limit of 512 MiB")
    assert describe_error(SoftTimeLimitExceeded()).startswith(
        "time limit exceeded: the job ran longer than 90 s")
    assert describe_error(ValueError("x")) is None
    assert error_text(MemoryError()).startswith("out of memory")


def test_memory_limit_turns_a_huge_allocation_into_memory_error():
    """RLIMIT_AS applied the way worker pool processes apply it: the process survives."""
    code = textwrap.dedent("""
        import os, django
        os.environ["DJANGO_SETTINGS_MODULE"] = "designer.settings"
        os.environ["FABRICSCOPE_JOB_MEMORY_LIMIT_MB"] = "1024"
        django.setup()
        import numpy as np
        from designer.ops.limits import apply_memory_limit
        assert apply_memory_limit() == 1024 * 1024 * 1024
        try:
            np.ones(2 * 1024 ** 3 // 8)  # 2 GiB
        except MemoryError:
            print("memory error")
        small = np.ones(1024 ** 2 // 8)  # the process goes on working
        print("alive", small.nbytes)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={"DEBUG": "1", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["memory error", "alive 1048576"]


def test_limits_summary_surfaces_engine_limits(settings):
    from designer.engine.document import LIMITS
    from designer.engine.traffic.workloads import MAX_FLOWS
    from designer.ops.limits import summary

    figures = summary()
    assert figures["document"] == LIMITS and figures["engine_max_flows"] == MAX_FLOWS
    assert figures["job_max_flows"] == settings.FABRICSCOPE_JOB_MAX_FLOWS
