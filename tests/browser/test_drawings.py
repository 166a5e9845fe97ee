"""Drawings in Chromium: a GB200 NVL72 rack as it opens, an imported 4 × H200 host, a GB200
host matrix and the rack-scale topology page. Screenshots go to $ARTIFACTS_DIR/screenshots/ (or
artifacts/screenshots/) as ``editor-drawings-*.png`` and ``drawings-*.png`` — look at them. With
``FABRICSCOPE_DOC_IMAGES=1`` the editor screenshots are also written to ``docs/img/`` (the
README's pictures).

The NVL72 document is the one of test_nvl72_editor.py: one rack, 18 compute trays and 9
NVLink-switch trays in an ``nvlink_domain``, 4 rail leaves and spines above::

        [leaf0..3]  (dashed: Ethernet)
            |
        rack0 ─ h0 ─ tray0..17 (4 GPUs, 6 NICs, 2 Grace, 2 memories)  ══ 8 × nvlink5x1 ══  nvs0..8 (2 chips)

The H200 host is the NCCL XML import ``tests/engine/data/import/dgx-h200-nccl-topo.xml``::

        [nic0]                 [nic1]
        [nvs0] [nvs1] [nvs2] [nvs3]         every GPU: 5 + 4 + 4 + 5 = 18 NVLinks (nvlink4x5 / x4)
        gpu0 gpu1      gpu2 gpu3
          [pcie0]        [pcie1]             nic0 on pcie0, nic1 on pcie1
          [cpu0] ──upi── [cpu1]
"""
from __future__ import annotations

import os
import shutil
from itertools import combinations
from pathlib import Path

import pytest

from designer.engine.io import import_text
from designer.engine.model.fabrics import build_cluster
from tests.browser.conftest import wait_until_at_rest
from tests.browser.harness.fixture_server import MockState, serve
from tests.browser.test_editor_harness import open_editor, shot, stats
from tests.browser.test_nvl72_editor import EDGES, _bundles

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
H200_XML = REPO / "tests" / "engine" / "data" / "import" / "dgx-h200-nccl-topo.xml"
PASSWORD = "alice-password-1"  # tests/conftest.py's user
MIN_LABEL_PX = 9    # a collapsed box's label at the zoom that fits the rack: readable on screen

# Per collapsed group: its label's rendered font size and its widest line against its box.
GROUP_LABELS = """() => { const cy = fabricscopeEditor.editor.cy; const z = cy.zoom();
  const ctx = document.createElement('canvas').getContext('2d');
  return cy.nodes('[etype="group"][?collapsed]').map((n) => {
    const fs = n.numericStyle('font-size');
    ctx.font = `${n.style('font-weight')} ${fs}px ${n.style('font-family')}`;
    const labelW = Math.max(...n.data('label').split('\\n').map((l) => ctx.measureText(l).width));
    return {id: n.data('ref'), fontPx: fs * z, label: n.data('label'), boxW: n.width(), labelW}; }); }"""

# A colour of the editor's palette (a CSS variable of .fs-editor).
CSS_VAR = "(v) => getComputedStyle(document.querySelector('.fs-editor')).getPropertyValue(v).trim()"

# Rendered box of each element's label (nodes: their own; edges: their main label), px.
LABELS = """(sel) => fabricscopeEditor.editor.cy.elements(sel).filter((e) => e.style('label'))
  .map((e) => ({id: e.id(), text: e.style('label'),
    box: e.renderedBoundingBox({includeNodes: false, includeEdges: false, includeLabels: true})}))"""


def _doc_image(path: Path, name: str) -> None:
    """Copy a screenshot into docs/img/ when asked (FABRICSCOPE_DOC_IMAGES=1)."""
    if os.environ.get("FABRICSCOPE_DOC_IMAGES") == "1":
        shutil.copyfile(path, REPO / "docs" / "img" / name)


def _overlap(a: dict, b: dict) -> bool:
    return a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    ctx.close()


def _serve(document):
    state = MockState(document=document)
    srv, base = serve(state)
    return state, srv, base


def test_nvl72_rack_opens_collapsed_bundled_and_readable(page):
    """One NVL72 rack opens with its 27 trays closed (not 1,610 edges): one bundle per pair of
    closed trays, "8 × nvlink5x1 (…)" in the NVLink colour, and every box's label readable."""
    doc = build_cluster("gb200-nvl72", 1, fabric="rail-optimized", name="nvl72-rack")
    state, srv, base = _serve(doc)
    try:
        open_editor(page, base)
        wait_until_at_rest(page)
        s = stats(page)
        trays = {g["id"] for g in doc["groups"] if g.get("parent") == "h0"}
        assert len(trays) == 27 and s["collapsed"] == 27 and not s["dirty"]
        bundles, single = _bundles(doc, trays)
        edges = page.evaluate(EDGES)
        assert len(edges) == len(bundles) + single == s["visibleEdges"] < 300
        nvlink = [e for e in edges if e["etype"] == "agg" and e["label"].startswith("8 × nvlink5x1 (")]
        assert len(nvlink) == 18 * 9
        nv_color = page.evaluate("(id) => fabricscopeEditor.editor.cy.$id(id).style('line-color')", nvlink[0]["id"])
        legend = page.evaluate(CSS_VAR, "--fs-speed-5")
        assert _rgb(nv_color) == _rgb(legend)
        for g in page.evaluate(GROUP_LABELS):
            assert g["fontPx"] >= MIN_LABEL_PX, g
            assert g["labelW"] <= g["boxW"] + 1, g         # no line runs out of its box
        assert page.evaluate(GROUP_LABELS)[0]["label"].count("\n") == 2
        path = shot(page, "drawings-nvl72-rack")
        _doc_image(path, "editor-nvl72-rack.png")
        assert page.errors == []
    finally:
        srv.shutdown()


def _rgb(colour: str) -> tuple:
    """"#d55e00" or "rgb(213,94,0)" -> (213, 94, 0)."""
    colour = colour.strip()
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(v) for v in colour[colour.index("(") + 1:-1].split(",")[:3])


def _segment_distance(p, a, b) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return ((ax + t * dx - px) ** 2 + (ay + t * dy - py) ** 2) ** 0.5


def test_imported_h200_host_drawing(page):
    """The imported 4 × H200 host: no NIC's PCIe link runs through an NVSwitch, its NVLinks
    (x4 and x5) take the NVLink colour, not the ≤ 800 Gb/s PCIe class's, and with labels on no
    two labels of the NVLink fan overlap (each GPU says NV18, as nvidia-smi topo -m does)."""
    doc = import_text(H200_XML.read_bytes()).document
    state, srv, base = _serve(doc)
    try:
        open_editor(page, base)
        page.evaluate("fabricscopeEditor.editor.fit()")
        wait_until_at_rest(page)
        pos = page.evaluate("""() => Object.fromEntries(fabricscopeEditor.editor.cy.nodes('[etype="node"]')
            .map((n) => [n.data('ref'), [n.position('x'), n.position('y'), n.width()]]))""")
        nvswitches = [n for n in pos if "nvswitch" in n]
        for link in doc["links"]:
            if {link["a"].split("/")[1][:3], link["b"].split("/")[1][:3]} == {"nic", "pci"}:
                for n in nvswitches:
                    x, y, w = pos[n]
                    d = _segment_distance((x, y), pos[link["a"]][:2], pos[link["b"]][:2])
                    assert d > w / 2 + 4, f"{link['a']}-{link['b']} runs through {n} ({d:.0f} px)"
        colours = page.evaluate(
            "() => fabricscopeEditor.editor.cy.edges().map((e) => [e.data('tech'), e.style('line-color')])")
        legend = {v: _rgb(page.evaluate(CSS_VAR, v)) for v in ("--fs-speed-4", "--fs-speed-5")}
        nv = {_rgb(c) for tech, c in colours if tech.startswith("nvlink4")}
        assert nv == {legend["--fs-speed-5"]} and legend["--fs-speed-4"] not in nv
        assert not nv & {_rgb(c) for tech, c in colours if tech.startswith("pcie")}
        page.evaluate("fabricscopeEditor.editor.setEdgeLabels(true)")
        wait_until_at_rest(page)
        fan = page.evaluate(LABELS, 'edge[tech ^= "nvlink"], node[kind="gpu"], node[kind="nvswitch"]')
        gpus = [lab for lab in fan if lab["id"].startswith("n:h0/gpu")]
        assert len(gpus) == 4 and all("NV18" in lab["text"] for lab in gpus)
        clashes = [(a["text"], b["text"]) for a, b in combinations(fan, 2) if _overlap(a["box"], b["box"])]
        assert clashes == []
        path = shot(page, "drawings-h200-host")
        _doc_image(path, "editor-h200-host.png")
        assert page.errors == []
    finally:
        srv.shutdown()


@pytest.mark.django_db(transaction=True)
def test_gb200_host_matrix_and_rack_counts(app_page, live_server, user, sign_in, shot):
    """Two GB200 NVL72 racks: the topology page says 2 racks and 36 compute trays (not "36
    hosts"); a tray's host matrix shows NV18 between its GPUs and SYS to every NIC, the class
    nvidia-smi topo -m prints on a GB200 compute tray (C2C-attached GPUs: docs/ENGINE.md)."""
    from designer import services

    topology = services.topology_build(owner=user, name="two-nvl72", template="gb200-nvl72", hosts=2)
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/{topology.pk}/")
    stat = "(id) => [...document.querySelectorAll(`#${id} div`)].map((d) => d.textContent.trim())"
    assert page.evaluate(stat, "stat-racks") == ["2", "NVLink racks · 36 compute trays"]
    assert page.locator("#stat-hosts").count() == 0
    shot(page, "drawings-gb200-topology")
    page.goto(f"{live_server.url}/topologies/{topology.pk}/hosts/?host=h0/tray0")
    cells = page.evaluate("""() => {
        const cols = [...document.querySelectorAll('#topo-matrix thead th')].map((th) => th.innerText.trim());
        const out = {};
        for (const tr of document.querySelectorAll('#topo-matrix tbody tr')) {
          const row = tr.querySelector('th').innerText.trim();
          tr.querySelectorAll('td').forEach((td, i) => { out[`${row}|${cols[i + 1]}`] = td.innerText.trim(); });
        }
        return out; }""")
    assert cells["GPU0|GPU1"] == "NV18"
    nics = {v for k, v in cells.items() if "|NIC" in k}
    assert nics == {"SYS"} and len([k for k in cells if "|NIC" in k]) == 4 * 6
    assert "NVLink-C2C" in page.inner_text("#c2c-note")   # the page says why, not a PCIe hop count
    shot(page, "drawings-gb200-host-matrix")
