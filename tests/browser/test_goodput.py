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
