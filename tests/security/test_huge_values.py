"""Finite but huge numbers: two 1e308-byte collectives sum to inf.

Before the fix: the API saved such a scenario; its page answered 500 for owner and viewers
(``filesizeformat`` of the inf sum raised ``OverflowError``); a SimAI import of the same sizes
was accepted; and a job on it failed with a false "crosses a resource of capacity 0".
Now the engine refuses any value over its bound (``designer.engine.document.bounds``) with a
located error, a scenario stored before the fix still renders, and a job on it fails saying
which value is too large.

Data: ``small_topology`` = 2 DGX-H100 hosts (16 GPUs); the job is tp 8 × dp 2.
"""
from __future__ import annotations

import json
import pathlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from designer.models import Scenario, SimulationJob

from tests.api.conftest import API, _fresh_throttles, api, assert_error, client_for, paths_of  # noqa: F401 (fixtures)
from tests.designer.test_pages import scenario_post

pytestmark = pytest.mark.django_db

SIMAI = pathlib.Path(__file__).parents[1] / "engine" / "data" / "simai"


def huge_job(size=1e308, compute_s=0.001) -> dict:
    pattern = {"kind": "allreduce", "bytes": size, "groups": {"layout": "dp"}}
    return {"job": {"layout": {"tp": 8, "dp": 2}, "phases": [
        {"id": "fwd", "compute_s": compute_s},
        {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g1", **pattern}, {"id": "g2", **pattern}]}]}}


def legacy_scenario(topology, user, workload) -> Scenario:
    """A scenario stored before the bounds existed (saved without the engine's check)."""
    return Scenario.objects.create(topology=topology, revision=topology.current_revision, name="legacy",
                                   workload=workload, routing={}, failures=[], mode="steady", created_by=user)


@pytest.mark.parametrize("size", [1e308, 2.0 ** 60 + 2 ** 10, 10 ** 400])
def test_api_refuses_a_huge_collective_with_a_located_400(api, small_topology, size):
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "huge", "workload": huge_job(size)}), 400)
    assert "workload.job.phases[1].patterns[0].bytes" in paths_of(error), error
    text = json.dumps(error)
    assert "over the limit of 2**60" in text and "1 EiB" in text, text
    assert not Scenario.objects.exists()


def test_the_bound_itself_is_accepted(api, small_topology):
    response = api.post(f"{API}/scenarios/", {"topology": small_topology.pk, "name": "eib",
                                              "workload": huge_job(2 ** 60)})
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("field, value, where", [
    ("demand_gbps", 1e300, "workload[0].demand_gbps"),
    ("bytes", 1e19, "workload[0].bytes"),
])
def test_pattern_list_values_are_bounded(api, small_topology, field, value, where):
    pattern = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
               "bytes": 1e9, field: value}
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "big", "workload": [pattern]}), 400)
    assert where in paths_of(error), error


def test_phase_seconds_are_bounded(api, small_topology):
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "slow", "workload": huge_job(1e9, compute_s=1e308)}), 400)
    assert "workload.job.phases[0].compute_s" in paths_of(error), error


def test_a_stored_legacy_scenario_page_renders_for_owner_and_viewer(client, small_topology, user, other_user):
    from designer import services

    scenario = legacy_scenario(small_topology, user, huge_job(1e308))
    client.force_login(user)
    page = client.get(reverse("scenario_edit", args=[scenario.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="job-overview"' in body and "over 1 EiB" in body
    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    client.force_login(other_user)
    page = client.get(reverse("scenario_edit", args=[scenario.pk]))
    assert page.status_code == 200 and "over 1 EiB" in page.content.decode()


def test_a_legacy_scenario_with_a_400_digit_size_renders(client, small_topology, user):
    scenario = legacy_scenario(small_topology, user, huge_job(10 ** 400))
    client.force_login(user)
    page = client.get(reverse("scenario_edit", args=[scenario.pk]))
    assert page.status_code == 200 and "over 1 EiB" in page.content.decode()


def test_a_job_on_a_legacy_scenario_is_refused_at_submission(small_topology, user, published):
    from django.core.exceptions import ValidationError

    from designer import services

    scenario = legacy_scenario(small_topology, user, huge_job(1e308))
    with pytest.raises(ValidationError) as caught:
        services.job_submit_simulate(scenario=scenario, user=user)
    assert "phases[1].patterns[0].bytes" in str(caught.value) and "2**60" in str(caught.value)


def test_a_queued_job_on_huge_values_fails_saying_why(small_topology, user):
    """A job queued before the fix runs on the worker: it fails naming the value, not a link."""
    from designer import services

    scenario = legacy_scenario(small_topology, user, huge_job(1e308))
    job = SimulationJob.objects.create(
        kind="simulate", topology_id=small_topology.pk, revision=scenario.revision, scenario=scenario,
        submitted_by=user, inputs={"workload": scenario.workload, "routing": {}, "failures": [], "mode": "steady"},
        parameters={}, message="queued", celery_task_id="t-huge")
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == "failed"
    assert "capacity 0" not in job.error, job.error
    assert "bytes" in job.error and "2**60" in job.error, job.error


def simai_with_size(size: str) -> str:
    text = (SIMAI / "microAllReduce.txt").read_text().replace("all_gpus: 8", "all_gpus: 16")
    lines = text.splitlines()
    cols = lines[2].split()
    cols[4] = cols[7] = cols[10] = size
    return "\n".join(lines[:2] + ["\t".join(cols)] + lines[3:]) + "\n"


def test_simai_import_of_huge_sizes_is_a_located_error(client, small_topology, user):
    client.force_login(user)
    upload = SimpleUploadedFile("huge.txt", simai_with_size("1" + "0" * 308).encode(), content_type="text/plain")
    post = scenario_post(name="step", workload_type="patterns", job="", workload_format="simai",
                         action="import", workload_file=upload)
    response = client.post(reverse("scenario_new", args=[small_topology.pk]), post)
    assert response.status_code == 400 and not Scenario.objects.exists()
    errors = response.context["job_form"].errors["workload_file"]
    assert any("line 3" in e and "comm size" in e and "2**60" in e for e in errors), errors


def test_simai_engine_bounds_sizes_and_times():
    from designer.engine.errors import ImportFormatError
    from designer.engine.io.simai import simai_job

    with pytest.raises(ImportFormatError) as caught:
        simai_job(simai_with_size("2000000000000000000"))       # 2e18 B > 2**60
    assert any(p.path == "line 3" and "fwd comm size" in p.message for p in caught.value.problems)
    job = simai_job(simai_with_size(str(2 ** 60)))            # the bound itself is fine
    assert job["job"]["phases"]


@pytest.mark.parametrize("field, value", [("capacity_gbps", 1e308), ("latency_ns", 1e300),
                                          ("capacity_ab_gbps", 1e16)])
def test_a_link_quantity_over_the_bound_is_located_on_both_validation_paths(field, value):
    """Capacities and latencies are bounded at 1e15 (Gb/s, ns) so sums over millions of links
    stay finite: the column-wise acceptance must not vouch for the document, and the item walk
    names the link and the bound. 1e15 itself is accepted."""
    from designer.engine.document import validate
    from tests.engine.test_document import small

    doc = small()
    doc["links"][1][field] = value
    problems = [(p.path, p.message) for p in validate(doc)]
    assert problems == [(f"links[1].{field}", f"must be at most 1e+15, got {value:.3g} (larger values "
                                              "overflow sums over the links and bytes ÷ rate)")]
    doc["links"][1][field] = 1e15
    assert validate(doc) == []
    # the slow path too: another problem elsewhere makes the walk run over every item
    doc["links"][1][field] = value
    doc["nodes"][0]["group"] = "nowhere"
    assert (f"links[1].{field}", problems[0][1]) in [(p.path, p.message) for p in validate(doc)]
