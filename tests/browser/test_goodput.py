"""The goodput page in a real browser (headless Chromium, live server).

alice opens her 2-host DGX-H100 topology (16 GPUs, rail-optimized, 1 storage server), follows
the Goodput link and sees goodput against the checkpoint interval with Daly's optimum marked at
the top of the curve, the interruptions per day by class, the blast radius and one simulated
run; then compares with a 4-host copy (two traces on every figure).

    [h0: 8×H100, 8×NIC] ==rail 0..7== [leaf0..leaf7] == [spine*] ==  [storage0]

Screenshots: ``$ARTIFACTS_DIR/screenshots/goodput-*.png``.
"""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CURVE = """() => Array.from(document.querySelector('[data-plot="goodput_curve"]').data || [])
    .map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))"""
NAMES = """(key) => Array.from(document.querySelector(`[data-plot="${key}"]`).data || []).map(t => t.name)"""


@pytest.fixture
def pods(user):
    from designer import services

    small = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={"storage": 1})
    big = services.topology_build(owner=user, name="pod-4", template="dgx-h100", hosts=4, options={"storage": 1})
    return small, big


def _ready(page):
    page.wait_for_selector("html[data-figures-ready='1']")


def test_curve_with_its_optimum_classes_timeline_and_a_comparison(app_page, live_server, sign_in, shot, pods):
    small, big = pods
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{small.pk}/")
    page.click("#goodput-link")
    _ready(page)
    assert "Goodput under failures" in page.inner_text("h1")
    traces = {t["name"]: t for t in page.evaluate(CURVE)}
    curve, star = traces["pod-2: goodput"], traces["pod-2: optimum (Daly)"]
    assert len(curve["x"]) == 61 and star["y"][0] >= max(curve["y"]) - 1e-12
    assert min(curve["x"]) < star["x"][0] < max(curve["x"])
    assert page.evaluate(NAMES, "goodput_classes") == ["pod-2"]
    assert "failure" in page.evaluate(NAMES, "goodput_timeline")
    assert page.js_errors == []
    shot(page, "goodput-plan")

    page.select_option("#id_against", str(big.pk))
    page.click("#goodput-submit")
    _ready(page)
    assert page.evaluate(NAMES, "goodput_classes") == ["pod-2", "pod-4"]
    names = page.evaluate(NAMES, "goodput_curve")
    assert "pod-4: optimum (Daly)" in names and "pod-2: optimum (Daly)" in names
    assert page.locator("#goodput-stats-2").count() == 1
    assert page.js_errors == []
    shot(page, "goodput-compare")


def test_rates_are_edited_in_the_table_and_bad_ones_are_located(app_page, live_server, sign_in, shot, pods):
    """The rate table is prefilled with the cited defaults; a NIC AFR of 0.5 a NIC-year raises
    the NIC interruptions (the bar grows), a zero host repair and a negative GPU AFR come back
    as errors on their own inputs, and nothing is planned. The classes table names where each
    blast radius comes from: the N-1 sweep (a NIC down breaks the all-reduce), or the rule."""
    small, _ = pods
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{small.pk}/goodput/?runs=20&days_per_run=54")
    _ready(page)
    nic_before = _bar(page, "nic")
    page.click("#goodput-rates summary")
    assert float(page.input_value("#id_afr_nic")) == pytest.approx(7 / 16384 * 365 / 54)
    assert "Llama 3 Herd of Models" in page.inner_text("#goodput-rate-table tr[data-class='nic']")
    page.fill("#id_afr_nic", "0.5")
    page.click("#goodput-submit")
    _ready(page)
    assert _bar(page, "nic") == pytest.approx(nic_before * 0.5 / (7 / 16384 * 365 / 54), rel=1e-6)
    page.click("#sec-rows summary")
    assert page.inner_text("#goodput-rows tr[data-class='nic'] .blast-source") == "simulated"
    assert "h0/nic0 down" in page.inner_text("#goodput-rows tr[data-class='nic']")
    assert page.inner_text("#goodput-rows tr[data-class='software'] .blast-source") == "rule"
    shot(page, "goodput-rates")

    page.click("#goodput-rates summary") if not page.locator("#goodput-rates[open]").count() else None
    page.fill("#id_repair_host", "0")
    page.fill("#id_afr_gpu", "-1")
    page.click("#goodput-submit")
    page.wait_for_selector("#id_repair_host-err")
    assert "host repair: must be more than 0 hours" in page.inner_text("#id_repair_host-err")
    assert "gpu AFR" in page.inner_text("#id_afr_gpu-err")
    assert page.get_attribute("#id_afr_gpu", "aria-invalid") == "true"
    assert page.locator("#sec-curve").count() == 0
    assert page.js_errors == []
    shot(page, "goodput-rate-errors")


def _bar(page, cls: str) -> float:
    """The job's interruptions a day of ``cls`` in the classes figure."""
    trace = page.evaluate("""() => document.querySelector('[data-plot="goodput_classes"]').data[0]""")
    return trace["y"][list(trace["x"]).index(cls)]
