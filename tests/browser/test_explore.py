"""The Explore pages in a real browser (headless Chromium, live server).

alice opens her 2-host DGX-H100 topology (16 GPUs, rail-optimized), follows "Explore designs",
unchecks every option (refused above the form, nothing queued), then checks the fabric kinds
rail-optimized and rail-only and the oversubscriptions 1:1 and 2:1 (4 designs, counted live
under the form) with the default job mix (a DeepSeek-V3-shaped MoE step on the 16 GPUs), and
submits. The job runs in this process in its chunks (the workers' code: ``services.job_run``
then ``services.sweep_chunk_run``); the job page follows it to the result page, which draws
one marker per design coloured by W/GPU with the frontier as a line, lists the 4 designs, and
shows two ticked designs side by side.

    [h0: 8×H100, 8×NIC] ==rail 0..7== [leaf0..leaf7] == [spine*] == [leaf0..leaf7] ==rail== [h1]

Screenshots: ``/tmp/explore_result.png`` and ``/tmp/explore_form.png`` (and ``explore-result.png``,
``explore-form-error.png`` under the screenshot directory).
"""
from __future__ import annotations

import shutil

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRACES = """() => Array.from(document.querySelector('[data-plot="pareto"]').data || [])
    .map(t => ({name: t.name, mode: t.mode, n: (t.x || []).length}))"""


@pytest.fixture
def pod(user, published):
    from designer import services

    return services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={})


def test_explore_submit_run_and_compare_two_designs(app_page, live_server, sign_in, shot, pod):
    from designer import services
    from designer.models import SimulationJob, SweepChunk

    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/")
    page.click("#explore-link")
    assert "Explore designs" in page.inner_text("h1")
    checked = page.locator("#explore-form input[type=checkbox]:checked")
    while checked.count():
        checked.first.uncheck()
    page.click("#explore-submit")
    page.wait_for_load_state()
    assert "check at least one option" in page.inner_text("#explore-errors")
    assert not SimulationJob.objects.exists()
    shutil.copy(shot(page, "explore-form-error"), "/tmp/explore_form.png")

    for name, value in (("fabrics", "rail-optimized"), ("fabrics", "rail-only"),
                        ("oversubscriptions", "1"), ("oversubscriptions", "2")):
        page.check(f'input[name="{name}"][value="{value}"]')
    assert page.inner_text("#explore-count").startswith("4 designs")
    page.click("#explore-submit")
    page.wait_for_load_state()
    job = SimulationJob.objects.get()
    assert job.kind == "explore" and f"/jobs/{job.pk}/" in page.url
    services.job_run(job_id=job.pk)                          # the workers' code, in this process
    for chunk in SweepChunk.objects.filter(job=job).order_by("index"):
        services.sweep_chunk_run(chunk_id=chunk.pk)
    page.wait_for_url(f"**/jobs/{job.pk}/result/", timeout=30_000)
    page.wait_for_selector("html[data-figures-ready='1']", timeout=30_000)

    traces = page.evaluate(TRACES)
    assert traces[0] == {"name": "design", "mode": "markers", "n": 4}
    assert traces[1]["name"] == "Pareto frontier" and traces[1]["n"] >= 1
    rows = page.locator("#explore-points tbody tr")
    assert rows.count() == 4
    assert page.locator("#explore-points tbody tr.fs-frontier").count() == traces[1]["n"]
    assert "on the frontier" in page.inner_text("#explore-headline")
    assert page.is_disabled("#explore-compare")
    page.check('.fs-pick[value="0"]')
    page.check('.fs-pick[value="2"]')
    page.click("#explore-compare")
    side = page.inner_text("#explore-side-table").lower()     # headings are upper-cased by the CSS
    assert "#0" in side and "#2" in side and "rail-only" in side and "us$ per gpu" in side
    assert page.locator("#explore-side-table tr.fs-differs").count() >= 2   # design, cost differ
    shutil.copy(shot(page, "explore-result"), "/tmp/explore_result.png")
