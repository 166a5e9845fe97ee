"""Moving devices by hand on the floor-plan page, in a real browser (headless Chromium, live server).

alice's 8-host DGX-H100 pod (rail-optimized), planned with 1 m rack width and 1 m slack so the
lengths are whole metres::

    R01-01 [h0 h1 h2]  R01-02 [h3 h4 h5]  R01-03 [h6 h7]  R01-04 [leaf0..leaf7]   R02-01 [spines]

1. She drags h6 from R01-03 onto the top of R01-01: its 8 cables to the leaves grow from 2 m (DAC)
   to 4 m (ACC), R01-01 (four DGX H100, ~40.8 kW) turns red and is named in the flags; a reload
   shows the same (saved with the topology).
2. Keyboard only: Enter on h7 picks it, arrow keys choose R01-04 (the network rack), Enter moves
   it: its cables are now in-rack, 2 m.
3. A move onto units another device holds is refused with a located error; nothing changes.
4. "Reset to automatic" puts everything back.

Screenshots: ``plan-dragged.png``, ``plan-keyboard.png``, ``plan-move-error.png``, ``plan-reset.png``
(the whole page) and each ``…-racks.png`` (the racks card alone).
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from tests.browser.conftest import screenshot_dir

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pod(user):
    from designer import services

    return services.topology_build(owner=user, name="pod-8", template="dgx-h100", hosts=8, options={})


def _cables(page, device: str) -> set[tuple[str, str]]:
    """(length m, medium) of the schedule rows whose A end is ``device``."""
    rows = page.eval_on_selector_all(
        "#plan-cables tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))")
    return {(r[7], r[6]) for r in rows if r[1] == device}


def _rack_of(page, device: str) -> str:
    return page.get_attribute(f'#plan-racks .dev[data-id="{device}"]', "data-id") and page.eval_on_selector(
        f'#plan-racks .dev[data-id="{device}"]', "d => d.closest('.rack-box').dataset.rack")


def _shots(page, shot, name: str) -> None:
    """The whole page (scrolled to the top: the header is sticky) and the racks card alone."""
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, name)
    box = page.locator("#sec-racks").bounding_box()  # page coordinates at scroll 0
    page.screenshot(path=str(screenshot_dir() / f"{name}-racks.png"), full_page=True, clip=box)


def test_drag_keyboard_error_and_reset(app_page, live_server, sign_in, shot, pod):
    page = sign_in(app_page, "alice", "alice-password-1")
    query = urlencode({"overrides": json.dumps({"spacing_m": {"rack_width": 1, "slack": 1}})})
    page.goto(f"{live_server.url}/topologies/{pod.pk}/plan/?{query}")
    page.wait_for_selector("#plan-racks")
    assert _rack_of(page, "h6") == "R01-03" and _cables(page, "h6") == {("2.0", "DAC")}
    assert page.locator("#plan-racks .rack.over").count() == 0
    assert "all placed automatically" in page.inner_text("#plan-placed").lower()

    # 1. Drag h6 onto the top of R01-01.
    with page.expect_navigation():
        page.drag_and_drop('#plan-racks .dev[data-id="h6"]', "#rack-R01-01 .rack-box",
                           target_position={"x": 40, "y": 4})
    page.wait_for_selector("#plan-racks")
    assert _rack_of(page, "h6") == "R01-01"
    assert page.locator('#plan-racks .dev.moved[data-id="h6"]').count() == 1
    assert _cables(page, "h6") == {("4.0", "ACC")}
    assert page.locator("#plan-racks .rack.over").count() == 1 and page.locator("#rack-R01-01.over").count() == 1
    assert "racks[R01-01]" in page.inner_text("#plan-flags") and "1 over budget" in page.inner_text("#plan-over").lower()
    assert "1 device placed by hand" in page.inner_text("#plan-placed").lower()
    pod.refresh_from_db()
    assert pod.plan_placements["h6"]["rack"] == "R01-01"
    page.reload()
    page.wait_for_selector("#plan-racks")
    assert _rack_of(page, "h6") == "R01-01" and _cables(page, "h6") == {("4.0", "ACC")}
    assert page.js_errors == []
    _shots(page, shot, "plan-dragged")

    # 2. Keyboard: Enter on h7, choose R01-04 in the rack list, Enter.
    page.focus('#plan-racks .dev[data-id="h7"]')
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "id_rack"
    assert page.input_value("#id_device") == "h7"
    for _ in range(3):  # R01-01 -> R01-02 -> R01-03 -> R01-04
        page.keyboard.press("ArrowDown")
    assert page.input_value("#id_rack") == "R01-04"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#plan-racks")
    assert _rack_of(page, "h7") == "R01-04" and _cables(page, "h7") == {("2.0", "DAC")}
    assert "2 devices placed by hand" in page.inner_text("#plan-placed").lower()
    _shots(page, shot, "plan-keyboard")

    # 3. Onto units h1 holds: a located error, nothing saved.
    before = dict(pod.__class__.objects.get(pk=pod.pk).plan_placements)
    page.select_option("#id_device", "h5")
    page.select_option("#id_rack", "R01-01")
    page.fill("#id_position", "10")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    errors = page.inner_text("#move-errors")
    assert "placements.h5.position" in errors and "overlap h1 (U9–U16)" in errors and "nothing saved" in errors
    assert pod.__class__.objects.get(pk=pod.pk).plan_placements == before
    assert _rack_of(page, "h5") == "R01-02"
    _shots(page, shot, "plan-move-error")

    # 4. Reset to automatic.
    with page.expect_navigation():
        page.click("#plan-reset")
    page.wait_for_selector("#plan-racks")
    assert _rack_of(page, "h6") == "R01-03" and _rack_of(page, "h7") == "R01-03"
    assert page.locator("#plan-racks .dev.moved").count() == 0 and page.locator("#plan-racks .rack.over").count() == 0
    assert _cables(page, "h6") == {("2.0", "DAC")}
    assert page.is_disabled("#plan-reset")
    assert page.js_errors == []
    _shots(page, shot, "plan-reset")
