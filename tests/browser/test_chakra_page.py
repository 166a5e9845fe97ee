"""Chakra traces on the scenario page in a real browser (headless Chromium, live server).

alice opens New scenario on her 2-host DGX-H100 topology, picks "Training job (DAG)", opens the
Chakra section, chooses the four rank files and the groups JSON of ``tests/engine/data/chakra/``
(``tools/chakra_fixture.py``) and presses Read traces: the page shows the summary (4 ranks, nodes
by type, bytes by collective, groups tp0/tp1) and the job's JSON, and nothing is saved yet. She
names the scenario and presses Save: the scenario exists and holds that job. A truncated rank
file first shows a located error beside the upload.

    [h0, h1: 8×H100, 8×CX-7] ==rail 0..7== [leaf*] == [spine*];  rank r on h0/gpu<r>

Screenshots: ``$ARTIFACTS_DIR/screenshots/chakra-summary.png``, ``chakra-error.png``.
"""
from __future__ import annotations

import json
import pathlib

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DATA = pathlib.Path(__file__).parents[1] / "engine" / "data" / "chakra"


@pytest.fixture
def pod(user):
    from designer import services

    return services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={})


def test_chakra_upload_summary_then_save(app_page, live_server, sign_in, shot, pod, tmp_path):
    from designer.models import Scenario

    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(live_server.url + reverse("scenario_new", args=[pod.pk]))
    page.locator('label:has(input[name="workload_type"][value="job"])').click()
    page.locator("#chakra-import summary").click()

    # A truncated rank file: a located error next to the upload, nothing saved.
    bad = tmp_path / "trace.2.et"
    bad.write_bytes((DATA / "trace.2.et").read_bytes()[:40])
    page.set_input_files('input[name="chakra_traces"]',
                         [str(DATA / f"trace.{r}.et") for r in (0, 1, 3)] + [str(bad)])
    page.set_input_files('input[name="chakra_groups"]', str(DATA / "groups.json"))
    page.click("#import-chakra")
    page.wait_for_load_state()
    errors = page.inner_text("#chakra-import")
    assert "rank 2 (trace.2.et) byte" in errors, errors
    assert page.locator("#chakra-summary").count() == 0
    page.locator("#chakra-import").scroll_into_view_if_needed()
    shot(page, "chakra-error")
    assert not Scenario.objects.exists()

    page.set_input_files('input[name="chakra_traces"]', [str(DATA / f"trace.{r}.et") for r in range(4)])
    page.set_input_files('input[name="chakra_groups"]', str(DATA / "groups.json"))
    page.click("#import-chakra")
    page.wait_for_selector("#chakra-summary")
    summary = page.inner_text("#chakra-summary")
    assert "4 ranks" in summary and "13 phases" in summary
    assert "COMM_COLL_NODE" in page.inner_text("#chakra-nodes") and "24" in page.inner_text("#chakra-nodes")
    assert "reducescatter" in page.inner_text("#chakra-bytes") and "64" in page.inner_text("#chakra-bytes")
    assert "tp0" in page.inner_text("#chakra-groups") and "tp1" in page.inner_text("#chakra-groups")
    job = json.loads(page.input_value("#id_job"))
    assert {p["id"] for p in job["job"]["phases"]} == {f"n{k}" for k in range(1, 14)}
    assert not Scenario.objects.exists()       # shown, not saved
    page.locator("#chakra-summary").scroll_into_view_if_needed()
    shot(page, "chakra-summary")

    page.fill("#id_name", "chakra-step")
    page.click('button[name="action"][value="save"]')
    page.wait_for_load_state()
    assert "Saved scenario chakra-step" in page.inner_text("body")
    assert Scenario.objects.get(name="chakra-step").workload == job
    assert not page.js_errors, page.js_errors
