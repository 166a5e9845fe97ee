"""The topology editor showing a GB200 NVL72 rack (issue 21): expanded, trays collapsed, the
whole NVLink domain collapsed. Screenshots go to $ARTIFACTS_DIR/screenshots/ (or
artifacts/screenshots/) as ``editor-nvl72-*.png`` — look at them.

The document is one NVL72 rack wired into a rail-optimized fabric (4 rails, one leaf each, and spines above them)::

        [leaf0] [leaf1] [leaf2] [leaf3]        (one per compute-NIC rail)
           \\      |       |      /
        rack0 ─ h0 (nvlink_domain)
                 ├─ h0/tray0 … h0/tray17   (host groups: 2 Grace, 4 GPUs, 6 NICs, 2 memories)
                 └─ h0/nvs0 … h0/nvs8      (nvlink_switch_tray groups: 2 NVSwitch chips each)
"""
from __future__ import annotations

import pytest

from designer.engine.fabrics import build_cluster
from tests.browser.conftest import wait_until_at_rest
from tests.browser.harness.fixture_server import MockState, serve
from tests.browser.test_editor_harness import open_editor, shot, stats

pytestmark = pytest.mark.browser

TRAY_NODES = 2 + 2 + 4 + 6          # Grace CPUs, memories, GPUs, NICs of one compute tray
RACK_NODES = 18 * TRAY_NODES + 18   # plus the 18 NVSwitch chips


@pytest.fixture(scope="module")
def nvl72_server():
    doc = build_cluster("gb200-nvl72", 1, fabric="rail-optimized", name="nvl72-rack")
    state = MockState(document=doc)
    srv, base = serve(state)
    yield state, base
    srv.shutdown()


@pytest.fixture
def page(browser, nvl72_server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    ctx.close()


def _fit_and_shoot(page, name):
    wait_until_at_rest(page)
    page.evaluate("fabricscopeEditor.editor.fit()")
    wait_until_at_rest(page)
    return shot(page, name)


def test_nvl72_rack_expanded_and_collapsed(page, nvl72_server):
    state, base = nvl72_server
    open_editor(page, base)
    devices = len(state.document["nodes"])
    switches = sum(1 for n in state.document["nodes"] if n["kind"] == "switch")
    assert switches == 4 + state.document["fabric"]["spines"]   # a leaf per rail, and spines
    assert devices == RACK_NODES + switches
    page.evaluate("fabricscopeEditor.editor.expandAll ? fabricscopeEditor.editor.expandAll() : null")
    page.click('button[data-action="expand-all"]')
    s = stats(page)
    assert s["collapsed"] == 0 and s["visibleNodes"] >= devices
    _fit_and_shoot(page, "nvl72-expanded")
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h0/tray0')")
    wait_until_at_rest(page)
    shot(page, "nvl72-tray0-zoomed")
    # Trays collapsed: each compute tray is one node, the NVLink-switch layer stays visible.
    trays = [f"h0/tray{t}" for t in range(18)]
    page.evaluate("(ids) => fabricscopeEditor.editor.toggleCollapse(ids)", trays)
    s = stats(page)
    assert s["collapsed"] == 18
    assert s["visibleNodes"] < devices - 18 * (TRAY_NODES - 1) + 30   # 30 >= the group nodes left
    _fit_and_shoot(page, "nvl72-trays-collapsed")
    # The whole NVLink domain collapsed: the rack is one node next to its leaves.
    page.click('button[data-action="expand-all"]')
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['h0'])")
    s = stats(page)
    assert s["collapsed"] >= 1 and s["visibleNodes"] <= switches + 2
    _fit_and_shoot(page, "nvl72-domain-collapsed")
    assert page.errors == []
