"""The compare page reached from a topology page and from a result page, with the keyboard.

alice has ``pod-2`` (2 DGX-H100 rail-optimized + 1 storage server, o = 1) and ``pod-2-o2``
(2 DGX-H100 at o = 2, no storage). From pod-2's page she follows "Compare…", tabs to the
picker (pod-2-o2 is chosen), tabs to "Compare" and presses Enter: the two bills of materials side
by side, no simulation run. From a result page she follows "compare with another result…" to
the result picker and the two results side by side.

    [h0] [h1] [storage] ==400G== [leaf0..7 (+ storage leaf)] ==400G x 1/o== [spine0, spine1]

Screenshots: ``$ARTIFACTS_DIR/screenshots/compare-*.png``.
"""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"


@pytest.fixture
def designs(user):
    from designer import services

    a = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={"storage": 1})
    b = services.topology_build(owner=user, name="pod-2-o2", template="dgx-h100", hosts=2,
                                options={"oversubscription": 2.0})
    return a, b


def test_bom_compare_from_the_topology_page_by_keyboard(app_page, live_server, sign_in, shot, designs):
    a, b = designs
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/{a.pk}/")
    page.click("#compare-link")
    page.wait_for_selector("#compare-pick")
    assert "Compare two designs" in page.inner_text("h1")
    page.locator("#compare-b").focus()
    assert page.evaluate("document.activeElement.id") == "compare-b"
    assert page.locator("#compare-b").input_value() == str(b.pk)     # the only other design, chosen
    shot(page, "compare-01-picker-from-topology")
    page.keyboard.press("Tab")                       # to the Compare button
    assert page.evaluate("document.activeElement.id") == "compare-go"
    page.keyboard.press("Enter")                     # submits the GET form
    page.wait_for_selector("#compare-bom")
    assert page.url.endswith(f"/compare/?da={a.pk}%3A1&db={b.pk}") or f"db={b.pk}" in page.url
    bom = page.locator("#compare-bom")
    assert "A: pod-2 rev 1 · B: pod-2-o2 rev 1" in bom.inner_text()
    leaf = bom.locator("tr", has_text="leaf tier")
    assert "2:1" in leaf.inner_text() and leaf.locator("td.fs-bad").count() == 1
    assert page.js_errors == []
    shot(page, "compare-02-bom-only")
    page.click("#compare-swap")
    page.wait_for_selector("#compare-bom")
    assert "A: pod-2-o2 rev 1 · B: pod-2 rev 1" in page.inner_text("#compare-bom")


def test_result_compare_from_a_result_page(app_page, live_server, sign_in, shot, designs, user, published):
    from tests.designer.test_compare_pages import _finished_job

    a, b = designs
    job_a, job_b = _finished_job(a, user, "ring"), _finished_job(b, user, "ring")
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/jobs/{job_a.pk}/result/")
    page.click("#compare-link")
    page.wait_for_selector("#compare-pick")
    page.locator("#compare-b").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("#compare-bom")
    assert f"b={job_b.pk}" in page.url and "Compare two results" in page.inner_text("h1")
    assert page.locator("#compare-pick").count() == 1           # pick another B from here
    page.wait_for_selector("html[data-figures-ready='1']")
    shot(page, "compare-03-results-from-result-page")
