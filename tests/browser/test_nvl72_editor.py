"""The topology editor showing a GB200 NVL72 rack: expanded, trays collapsed, the
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

from designer.engine.model.fabrics import build_cluster
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


def _bundles(doc, collapsed):
    """Expected edges when the groups in ``collapsed`` are closed, computed here from the
    document (not by the editor): ``{(end, end): [tech, ...]}``, one entry per pair of visible
    ends with a collapsed group on at least one side, and the count of individual links."""
    parent = {g["id"]: g.get("parent") for g in doc["groups"]}

    def rep(node):
        chain, g = [], node.get("group")
        while g:
            chain.append(g)
            g = parent.get(g)
        closed = [g for g in chain if g in collapsed]
        return "g:" + closed[-1] if closed else "n:" + node["id"]

    where = {n["id"]: rep(n) for n in doc["nodes"]}
    bundles, single = {}, 0
    for link in doc["links"]:
        a, b = where[link["a"]], where[link["b"]]
        if a == b:
            continue
        if a.startswith("n:") and b.startswith("n:"):
            single += 1
        else:
            bundles.setdefault(tuple(sorted((a, b))), []).append(link.get("tech"))
    return bundles, single


EDGES = """() => fabricscopeEditor.editor.cy.edges().map((e) => ({id: e.id(), etype: e.data('etype'),
    source: e.data('source'), target: e.data('target'), count: e.data('count') || 1,
    label: e.data('label'), width: e.data('width'), net: e.data('net'),
    dashed: e.style('line-style') === 'dashed'}))"""


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
    # Every tray closed, compute and NVLink-switch: the 1,296 NVLinks draw as 18 × 9 bundles of
    # 8 (4 GPUs × 2 chips), "8 × nvlink5x1 (…)", dashed only where they are network links.
    switch_trays = [f"h0/nvs{t}" for t in range(9)]
    page.evaluate("(ids) => fabricscopeEditor.editor.setCollapsed(ids, true)", switch_trays)
    wait_until_at_rest(page)
    s = stats(page)
    assert s["collapsed"] == 27 and not s["dirty"] and s["undo"] == 0   # view state, not an edit
    bundles, single = _bundles(state.document, set(trays + switch_trays))
    edges = page.evaluate(EDGES)
    aggs = {tuple(sorted((e["source"], e["target"]))): e for e in edges if e["etype"] == "agg"}
    assert len(edges) == len(bundles) + single and set(aggs) == set(bundles)
    nvlink = [e for key, e in aggs.items() if set(bundles[key]) == {"nvlink5x1"}]
    assert len(nvlink) == 18 * 9 and all(e["count"] == 8 for e in nvlink)
    one = aggs[("g:h0/nvs0", "g:h0/tray0")]
    assert one["label"].startswith("8 × nvlink5x1 (") and not one["dashed"]
    eth = [e for key, e in aggs.items() if set(bundles[key]) == {"eth400"}]
    assert eth and all(e["dashed"] for e in eth)            # tray ⇄ leaf: the network, dashed
    assert min(e["width"] for e in nvlink) > max(e["width"] for e in eth if e["count"] == 1)
    _fit_and_shoot(page, "nvl72-collapsed")
    # Selecting a bundle lists its 8 members; expanding both ends restores them one by one.
    member = next(link["id"] for link in state.document["links"]
                  if link["a"].startswith("h0/tray0/") and link["b"].startswith("h0/nvs0/"))
    page.evaluate("(id) => fabricscopeEditor.editor.selectIds('link', [id])", member)
    assert stats(page)["selected"] == ["agg:g:h0/nvs0|g:h0/tray0"]
    page.wait_for_function("document.querySelectorAll('.fs-side .fs-list li').length === 8")
    assert "8 × nvlink5x1" in page.inner_text(".fs-side")
    page.evaluate("fabricscopeEditor.editor.setCollapsed(['h0/tray0', 'h0/nvs0'], false)")
    wait_until_at_rest(page)
    edges = page.evaluate(EDGES)
    direct = [e for e in edges if e["etype"] == "link" and {e["source"][2:].rsplit("/", 1)[0], e["target"][2:].rsplit("/", 1)[0]} == {"h0/tray0", "h0/nvs0"}]
    assert len(direct) == 8 and not any(e["id"] == "agg:g:h0/nvs0|g:h0/tray0" for e in edges)
    assert not stats(page)["dirty"]
    # The whole NVLink domain collapsed: the rack is one node next to its leaves.
    page.click('button[data-action="expand-all"]')
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['h0'])")
    s = stats(page)
    assert s["collapsed"] >= 1 and s["visibleNodes"] <= switches + 2
    _fit_and_shoot(page, "nvl72-domain-collapsed")
    assert not stats(page)["dirty"]
    assert page.errors == []
