"""The Diagnose page in a real browser (headless Chromium, live server).

alice opens her 2-host DGX-H100 topology (16 GPUs, rail-optimized), follows the Diagnose link,
pastes the stdout of a real all_reduce_perf run on 2 HGX H100 hosts (NVIDIA/nccl-tests#319,
tests/engine/data/nccl_tests/) labelled with the hosts h0, h1, and submits; a garbage log is
refused next to its run with its line number first. The job runs in this process (the worker's
code, without a worker: ``services.job_run``); the job page follows it to the result page, which
draws the measured curve (markers), the predicted band (shaded) and the top explanation's curve
(a line), ranks the explanations, and redraws another explanation's curve when its row is chosen
with the keyboard.

    [h0: 8×H100, 8×NIC] ==rail 0..7== [leaf0..leaf7] == [spine*] == [leaf0..leaf7] ==rail== [h1]

Screenshots: ``/tmp/diagnose_result.png`` and ``/tmp/diagnose_form.png`` (and ``diagnose-result.png``,
``diagnose-form-error.png`` under the screenshot directory).
"""
from __future__ import annotations

import shutil

import pytest

from tests.designer.diagnose_support import BAD_LOG, LOG, use_engine

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRACES = """() => Array.from(document.querySelector('[data-plot="diagnosis"]').data || [])
    .map(t => ({name: t.name, mode: t.mode, fill: t.fill || null, visible: t.visible === undefined ? true : t.visible,
                n: (t.x || []).length}))"""


@pytest.fixture
def pod(user, published, monkeypatch):
    from designer import services

    use_engine(monkeypatch)
    return services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={})


def _submit(page, log: str):
    page.fill("#id_run0_label", "pair")
    page.fill("#id_run0_hosts", "h0, h1")
    page.fill("#id_run0_text", log)
    page.click("#diagnose-submit")
    page.wait_for_load_state()


def test_diagnose_submit_run_and_read_the_result(app_page, live_server, sign_in, shot, pod):
    from designer import services
    from designer.models import SimulationJob

    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/")
    page.click("#diagnose-link")
    assert "Diagnose measured runs" in page.inner_text("h1")

    _submit(page, BAD_LOG)                                   # refused at its run, nothing queued
    error = page.inner_text('[data-field="run0_text"] .errorlist')
    assert "line 3: expected 13 columns, got 4" in error
    assert not SimulationJob.objects.exists()
    shutil.copy(shot(page, "diagnose-form-error"), "/tmp/diagnose_form.png")

    _submit(page, LOG)
    job = SimulationJob.objects.get()
    assert job.kind == "diagnose" and f"/jobs/{job.pk}/" in page.url
    services.job_run(job_id=job.pk)                          # the worker's code, in this process
    page.wait_for_url(f"**/jobs/{job.pk}/result/", timeout=30_000)
    page.wait_for_selector("html[data-figures-ready='1']", timeout=30_000)

    verdict = page.inner_text("#diagnosis-verdict")
    traces = page.evaluate(TRACES)
    measured = [t for t in traces if t["mode"] == "markers"]
    assert [t["name"] for t in measured] == ["measured: pair"] and measured[0]["n"] == 10
    assert [t for t in traces if t["fill"] == "tonexty"], traces            # the shaded band
    explained = [t for t in traces if t["name"].startswith("explained: ")]
    rows = page.locator("#diagnosis-explanations tbody tr")
    assert rows.count() == len(explained)
    assert page.locator("#diagnosis-runs tbody tr").count() == 1
    if explained:
        assert verdict.startswith("Most likely: ")
        assert [t["visible"] for t in explained] == [True] + [False] * (len(explained) - 1)
        assert page.inner_text("#diagnosis-explanations tbody tr:first-child td:nth-child(2)") in verdict
    if len(explained) > 1:                                   # the keyboard picks another curve
        page.focus('[data-explain="1"]')
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('[data-explain=\"1\"]').getAttribute('aria-pressed') === 'true'")
        visible = [t["visible"] for t in page.evaluate(TRACES) if t["name"].startswith("explained: ")]
        assert visible == [False, True] + [False] * (len(explained) - 2)
        assert "fs-picked" in (rows.nth(1).get_attribute("class") or "")
        page.focus('[data-explain="0"]')
        page.keyboard.press("Enter")
    page.evaluate("() => window.scrollTo(0, 0)")   # a full-page shot from the top: the sticky bar stays up there
    path = shot(page, "diagnose-result")
    shutil.copy(path, "/tmp/diagnose_result.png")
    assert not page.js_errors, page.js_errors
