"""A job's result page (Gantt, step time, exposed communication) and the scenario page importing
a SimAI workload file, in a real browser. Screenshots: ``job_result.png`` and
``scenario_import.png`` under the screenshot directory (conftest ``shot``).

Data: alice's pod-2 (2 DGX-H100, 16 GPUs); the job is tp 8 × dp 2: 1 ms of compute, then the
DP all-reduce (one ring per rail), then 1 ms of optimizer compute. The SimAI file is SimAI's
``example/microAllReduce.txt`` (tests/engine/data/simai/) with ``all_gpus: 16``.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIMAI = (__import__("pathlib").Path(__file__).parents[1] / "engine" / "data" / "simai" / "microAllReduce.txt")
JOB = {"job": {"layout": {"tp": 8, "dp": 2}, "phases": [
    {"id": "fwd", "compute_s": 0.001},
    {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e9,
                                                 "groups": {"layout": "dp"}}]},
    {"id": "opt", "after": ["dp"], "compute_s": 0.001}]}}


@pytest.fixture
def pod(user, published):
    from designer import services

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    scenario = services.scenario_create(topology=topology, user=user, name="step", workload=JOB)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk)          # the real engine result, in process
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    return topology, scenario, job


def test_job_result_page_shows_the_step_and_its_gantt(app_page, live_server, sign_in, shot, pod):
    _, _, job = pod
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(live_server.url + reverse("job_result", args=[job.pk]))
    page.wait_for_function("document.documentElement.getAttribute('data-figures-ready') === '1'", timeout=30000)
    stats = page.inner_text("#job-stats").lower()
    assert "step time" in stats and "exposed communication" in stats
    assert page.locator('[data-plot="job"] .main-svg').count() > 0        # the Gantt is drawn
    bars = page.locator('[data-plot="job"] .barlayer .point').count()
    assert bars == 3                                                     # fwd, dp, opt
    page.locator("#sec-job").scroll_into_view_if_needed()
    shot(page, "job_result")
    assert not page.js_errors, page.js_errors


def test_scenario_page_imports_a_simai_file(app_page, live_server, sign_in, shot, pod, tmp_path):
    topology, _, _ = pod
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(live_server.url + reverse("scenario_new", args=[topology.pk]))
    assert page.locator('[data-workload-panel="job"]').is_hidden()
    page.locator('label:has(input[name="workload_type"][value="job"])').click()
    assert page.locator('[data-workload-panel="patterns"]').is_hidden()
    assert page.locator("[data-add-pattern]").is_hidden()
    path = tmp_path / "microAllReduce_16g.txt"
    path.write_text(SIMAI.read_text().replace("all_gpus: 8", "all_gpus: 16"))
    page.set_input_files('input[name="workload_file"]', str(path))
    page.click("#import-workload")
    page.wait_for_selector("#job-overview")
    overview = page.inner_text("#job-overview")
    assert "Imported from SimAI" in overview and "tp 8" in overview and "allreduce" in overview
    assert '"source": "simai"' in page.input_value("#id_job")
    assert page.locator('[data-workload-panel="job"]').is_visible()    # the page stays on the job
    shot(page, "scenario_import")
    page.fill("#id_name", "imported")
    page.click('button[name="action"][value="save"]')
    page.wait_for_load_state()
    assert "Saved scenario imported" in page.inner_text("body")
    assert not page.js_errors, page.js_errors
