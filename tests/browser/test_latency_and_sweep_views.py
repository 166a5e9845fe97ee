"""Issue 31 in a real browser: the latency view asked on the scenario page and drawn on the
result page (one way vs round trip), a NIC sweep whose rows tell NICs apart after NCCL's
fallback, and a policy comparison that labels what does not complete, on a log axis.

Clusters (DGX-H100 hosts, rail-optimized fabric)::

    scenario page: alice's 2-host pod, ring all-reduce over the 16 GPUs, latency of an 8 B message
                   on ar#0 (NVLink, inside h0) and ar#7 (h0 → h1 through the fabric)
    sweep:   3 hosts, rail 1 at 100 Gb/s (the others 400): every NIC down breaks the ring
    compare: 2 hosts, all-reduce 200 MB (~1 ms) + a 20 GB p2p (~1.3 s), h0/nic0 down

Screenshots go to /tmp/shots/issue31-*.png (look at them).
"""
from __future__ import annotations

import json
import pathlib

import pytest

from tests.browser.test_results import PAGES, open_page, page, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

SHOTS = pathlib.Path("/tmp/shots")
LAYOUT = """(key) => { const el = document.querySelector(`[data-plot="${key}"]`);
    return {y: el._fullLayout.yaxis.type, notes: (el.layout.annotations || []).map(a => a.text),
            texts: el._fullData.map(t => t.text), names: el._fullData.map(t => t.name)}; }"""


def _shot(page, name: str, selector: str | None = None) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"issue31-{name}.png"
    if selector:
        page.locator(selector).screenshot(path=str(path))
    else:
        page.screenshot(path=str(path), full_page=False)


@pytest.fixture(scope="module")
def views():
    from designer.engine.analysis.whatif import compare_policies, sweep
    from designer.engine.model.fabrics import build_cluster
    from tests.engine.test_sweep import _slow_rail_scenario

    topo = build_cluster("dgx-h100", 2)
    mixed = {"topology": topo, "failures": [{"target": "h0/nic0", "mode": "down"}],
             "workload": [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 2e8},
                          {"id": "big", "kind": "p2p", "src": "h0/gpu3", "dst": "h1/gpu3", "bytes": 2e10}]}
    PAGES["i31-sweep"] = {"result": json.loads(json.dumps(sweep(_slow_rail_scenario(), over=["nic"])))}
    PAGES["i31-policies"] = {"result": json.loads(json.dumps(compare_policies(mixed)))}
    return PAGES


def test_sweep_rows_differ_after_nccls_fallback(page, server, views):
    open_page(page, f"{server}/_t/result/i31-sweep/")
    got = page.evaluate(LAYOUT, "ranking")
    increases, losses = got["texts"][1], got["texts"][2]
    assert all(t.startswith("↻ ") for t in increases + losses if t)
    assert len(set(increases)) >= 2 and len(set(losses)) >= 2           # the rows tell NICs apart
    labels = page.evaluate("document.querySelector('[data-plot=ranking]')._fullData[0].y")
    assert {lab.split(". ", 1)[1] for lab in labels[-3:]} == {"h0/nic1 down", "h1/nic1 down", "h2/nic1 down"}
    _shot(page, "sweep", "[data-plot=ranking]")


def test_policy_comparison_labels_the_pattern_that_does_not_complete(page, server, views):
    open_page(page, f"{server}/_t/result/i31-policies/")
    got = page.evaluate(LAYOUT, "policies")
    assert got["y"] == "log"
    assert any("does not complete" in t for t in got["texts"][0])
    assert any(n.startswith("does not complete · affinity · with failures · ar: ") for n in got["notes"])
    # The labels are drawn, not only in the data.
    assert page.locator("[data-plot=policies] .annotation-text").first.is_visible()
    _shot(page, "policies", "[data-plot=policies]")
    # The switch: linear at a click.
    page.locator("[data-plot=policies] .updatemenu-button").nth(1).click()
    page.wait_for_function("document.querySelector('[data-plot=policies]')._fullLayout.yaxis.type === 'linear'")
    _shot(page, "policies-linear", "[data-plot=policies]")


@pytest.mark.django_db(transaction=True)
def test_scenario_page_asks_for_the_latency_view_and_the_result_shows_it(
        app_page, live_server, sign_in, user, published):
    from designer import services
    from designer.models import Scenario

    pod = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={})
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/scenarios/new/")
    page.select_option("#id_pattern-0-algorithm", "ring")    # ring: ar#7 is h0/gpu7 -> h1/gpu0
    page.check("#id_latency_on")
    page.fill("#id_latency_value", "8")
    page.select_option("#id_latency_unit", "B")
    page.fill("#id_latency_flows", "ar#0, ar#7")          # inside a host (NVLink) and across (NET)
    page.locator("#latency").scroll_into_view_if_needed()
    _shot(page, "scenario-form", "#latency")
    with page.expect_navigation():
        page.click("button[name=action][value=save]")
    scenario = Scenario.objects.get(topology=pod)
    assert scenario.latency == {"message_bytes": 8, "initiators": ["cpu_proxy", "gpu_initiated"],
                                "flows": ["ar#0", "ar#7"]}
    assert page.is_checked("#id_latency_on") and page.input_value("#id_latency_value") == "8"
    _shot(page, "scenario-saved")

    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk)
    page.goto(f"{live_server.url}/jobs/{job.pk}/result/")
    page.wait_for_function("document.documentElement.getAttribute('data-figures-ready') === '1'", timeout=30000)
    section = page.locator("#sec-latency")
    section.scroll_into_view_if_needed()
    assert "round trip" in section.inner_text() and "one way" in section.inner_text()
    got = page.evaluate(LAYOUT, "latency")
    assert "round trip (ping + pong)" in got["names"]
    ticks = page.evaluate("document.querySelector('[data-plot=latency]')._fullData[0].x[0]")
    assert "ar#7 (NET)" in ticks
    _shot(page, "result-latency", "#sec-latency")
    assert not page.js_errors, page.js_errors
