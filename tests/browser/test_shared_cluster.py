"""A shared cluster in a real browser (headless Chromium, live server): the scenario builder's
"Jobs sharing the cluster" mode, a simulation, and the result page's per-job table and heatmap.

alice's design: 8 DGX-H100 hosts on a leaf-spine fabric, 4 hosts per ToR, uplinks 4:1
oversubscribed::

    [spine0 … ]
      |      |
    [tor0]  [tor1]
    h0..h3  h4..h7   (8 GPUs and 8 NICs each)

With the keyboard and the rows' controls she adds job "train" (a 1 GB all-reduce) on the hosts
h0 and h4, picked in the host list (one per rack, so its ring crosses the spine), and job "eval"
(a 1 GB all-reduce) placed by the "spread" policy on 8 GPUs (one per free host in turn, across
both racks). They share oversubscribed ToR uplinks, so at least one is slowed (the result
page's per-job table shows × > 1); with two jobs each heatmap cell is its row's slowdown − 1
(in %), read from the drawn plot, and the diagonal is grey. The job runs in this process (``services.job_run``, the worker's
code). Screenshots: ``shared-editor.png``, ``shared-result.png``, ``shared-heatmap.png`` under
the screenshot directory (artifacts/screenshots/).
"""
from __future__ import annotations

import json

import pytest

from tests.browser.conftest import screenshot_dir

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEATMAP = """() => { const el = document.querySelector('[data-plot="interference"]');
    const cells = el.data[0], grey = el.data[1];
    return {rows: cells.y, cols: cells.base, values: cells.marker.color, grey: grey.y.map((y, k) => [y, grey.base[k]]),
            ticks: el.layout.xaxis.ticktext, drawn: el.querySelectorAll('.barlayer .point').length}; }"""


@pytest.fixture
def pod(user, published):
    from designer import services

    return services.topology_build(owner=user, name="racks-2", template="dgx-h100", hosts=8,
                                   fabric="leaf-spine", options={"oversubscription": 4})


def _add_jobs(page):
    page.locator('label:has(input[name="workload_type"][value="jobs"])').click()
    page.click("[data-add-job]")                               # job1: renamed, placed on picked hosts
    assert page.evaluate("document.activeElement.hasAttribute('data-job-id')")   # focus on the new id
    page.keyboard.press("Control+A")
    page.keyboard.type("train")
    row = page.locator('[data-job-row="0"]')
    row.locator("[data-job-mode]").select_option("hosts")
    row.locator("[data-job-hosts]").select_option(["h0", "h4"])
    page.click("[data-add-job]")                               # job2: the spread policy on 8 GPUs
    page.keyboard.press("Control+A")
    page.keyboard.type("eval")
    row = page.locator('[data-job-row="1"]')
    row.locator("[data-job-policy]").select_option("spread")
    row.locator("[data-job-gpus]").fill("8")
    return json.loads(page.input_value("#id_jobs"))


def _shot(page, selector: str, name: str) -> None:
    """An element's screenshot without the sticky top bar and run bar drawn over it."""
    page.add_style_tag(content=".topbar, .run-bar { position: static !important; }")
    page.locator(selector).screenshot(path=str(screenshot_dir() / f"{name}.png"))


def test_add_two_jobs_run_and_read_the_heatmap(app_page, live_server, sign_in, pod):
    from designer import services
    from designer.models import Scenario, SimulationJob

    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/scenarios/new/")
    page.fill("#id_name", "train + eval")
    jobs = _add_jobs(page)
    assert jobs == [
        {"id": "train", "patterns": [{"id": "allreduce", "kind": "allreduce", "bytes": 1e9}],
         "placement": {"hosts": ["h0", "h4"]}},
        {"id": "eval", "patterns": [{"id": "allreduce", "kind": "allreduce", "bytes": 1e9}],
         "placement": {"policy": "spread", "gpus": 8}}]
    _shot(page, "#cluster-jobs", "shared-editor")
    page.click('button[name="action"][value="simulate"]')
    page.wait_for_load_state()
    job = SimulationJob.objects.get()
    assert Scenario.objects.get().placed_jobs == jobs and f"/jobs/{job.pk}/" in page.url
    services.job_run(job_id=job.pk)                            # the worker's code, in this process
    page.wait_for_url(f"**/jobs/{job.pk}/result/", timeout=30_000)
    page.wait_for_selector("html[data-figures-ready='1']", timeout=30_000)

    rows = page.locator("#shared-jobs tbody tr")
    assert rows.count() == 2
    table = {rows.nth(k).get_attribute("data-job"): rows.nth(k).locator("td").all_inner_texts() for k in range(2)}
    assert set(table) == {"train", "eval"}
    assert table["eval"][1] == "spread" and table["train"][1] == "explicit"
    slowdown = {j: float(cells[4].lstrip("×")) for j, cells in table.items()}
    assert max(slowdown.values()) > 1.001, table              # they share the oversubscribed uplinks
    assert page.locator("#shared-links tbody tr").count() >= 1
    heat = page.evaluate(HEATMAP)
    assert heat["ticks"] == ["train", "eval"]
    assert sorted(zip(heat["rows"], heat["cols"])) == [("eval", 0), ("train", 1)]
    assert sorted(heat["grey"]) == [["eval", 1], ["train", 0]]  # the diagonal
    # With two jobs, row i's cell is i's slowdown by the other alone: its table slowdown − 1.
    for row, value in zip(heat["rows"], heat["values"]):
        assert value == pytest.approx(100 * (slowdown[row] - 1), abs=0.06), (row, value, slowdown)
    assert heat["drawn"] == 4                                  # 2 × 2 tiles on the page
    _shot(page, "#fig-interference", "shared-heatmap")
    _shot(page, "#sec-shared", "shared-result")
    assert not page.js_errors, page.js_errors
