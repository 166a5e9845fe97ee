"""Browser tests of the topology editor, against its standalone harness and a mock API.

Real headless Chromium (Debian's /usr/bin/chromium) driven by Playwright. The harness page is
editor_harness.html served by harness/fixture_server.py, which also mocks the save (201/409/400),
build-preview, validate and template endpoints. Screenshots go to $ARTIFACTS_DIR/screenshots/ (or
artifacts/screenshots/) — look at them.

The default document is a rack ``r0`` holding two DGX-H100-like hosts under one ToR::

        [spine0]   [spine1]
             \\      /
              [r0/tor0]          (8 ib-ndr links per host, one per NIC rail)
             /         \\
        [h0: 38 dev]  [h1: 38 dev]   -> 79 devices, 148 links, 3 groups
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.browser.conftest import wait_until_at_rest
from tests.browser.harness.fixture_server import MockState, cluster_document, serve


pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ["ARTIFACTS_DIR"]) / "screenshots" if os.environ.get("ARTIFACTS_DIR") else REPO / "artifacts" / "screenshots"
EMPTY = {"format": "fabricscope.topology/1", "name": "scratch", "groups": [], "nodes": [], "links": []}


# ---------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def server():
    state = MockState()
    srv, base = serve(state)
    yield state, base
    srv.shutdown()


@pytest.fixture
def state(server):
    st, _ = server
    st.__init__()  # fresh defaults for every test; the server keeps the same object
    return st


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    ctx.close()
    assert not errors, f"JavaScript errors: {errors}"


def open_editor(page, base):
    page.goto(f"{base}/harness")
    page.wait_for_function("window.fabricscopeEditor !== undefined")
    return page


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"editor-{name}.png"
    page.screenshot(path=str(path))
    return path


def doc(page):
    return page.evaluate("fabricscopeEditor.getDocument()")


def stats(page):
    return page.evaluate("fabricscopeEditor.stats()")


def node_xy(page, kind, ref):
    """Page coordinates of the element standing for a document node/group."""
    return page.evaluate("""([kind, ref]) => {
        const ed = fabricscopeEditor.editor;
        const el = ed.view.elementFor(kind, ref);
        const p = el.renderedPosition();
        const r = ed.canvas.getBoundingClientRect();
        return [r.left + p.x, r.top + p.y];
    }""", [kind, ref])


def click_node(page, ref, kind="node", **kw):
    x, y = node_xy(page, kind, ref)
    page.mouse.click(x, y, **kw)


# ---------------------------------------------------------------------------------- tests
def test_place_connect_edit_undo_copy_save_and_reload(page, server, state):
    """Palette → two devices, connect them with a picked tech, edit, undo/redo, copy/paste,
    save (201) and reload: the document comes back identical, positions included."""
    _, base = server
    state.document = dict(EMPTY)
    state.revision = 1
    open_editor(page, base)

    page.click('.fs-kind[data-kind="gpu"]')
    canvas = page.locator(".fs-canvas")
    page.locator('.fs-kind[data-kind="nic"]').drag_to(canvas, target_position={"x": 420, "y": 420})
    d = doc(page)
    assert [n["id"] for n in d["nodes"]] == ["gpu0", "nic0"]
    assert set(d["layout"]["positions"]) == {"gpu0", "nic0"}

    # Connect mode: click source, click target, pick a technology.
    page.keyboard.press("c")
    click_node(page, "gpu0")
    click_node(page, "nic0")
    dialog = page.locator('dialog[data-dialog="link"]')
    dialog.wait_for(state="visible")
    dialog.locator("select[name=tech]").select_option("pcie5x16")
    assert float(dialog.locator("input[name=capacity]").input_value()) == pytest.approx(384.0)  # effective
    dialog.locator("input[name=latency]").fill("150")
    dialog.locator("button[value=ok]").click()
    page.wait_for_function("fabricscopeEditor.stats().links === 1")
    page.keyboard.press("Escape")
    link = doc(page)["links"][0]
    assert (link["a"], link["b"], link["tech"], link["capacity_gbps"], link["latency_ns"]) == \
        ("gpu0", "nic0", "pcie5x16", 384.0, 150.0)

    # Property: model of the GPU; an id clash is refused with a message.
    click_node(page, "gpu0")
    # Fill only once the panel shows gpu0: a late re-render would drop the typed value.
    page.wait_for_function("(document.querySelector('.fs-props input[name=id]') || {}).value === 'gpu0'")
    page.fill(".fs-props input[name=model]", "H100")
    page.press(".fs-props input[name=model]", "Tab")
    # The edit lands on the change event; on a loaded machine that can trail the key press.
    page.wait_for_function("(fabricscopeEditor.getDocument().nodes[0].attrs || {}).model === 'H100'")
    assert doc(page)["nodes"][0]["attrs"] == {"model": "H100"}
    page.fill(".fs-props input[name=id]", "nic0")
    page.press(".fs-props input[name=id]", "Tab")
    assert page.locator('.fs-props [data-error="id"]').inner_text() == "“nic0” is already used."
    assert [n["id"] for n in doc(page)["nodes"]] == ["gpu0", "nic0"]

    # Undo / redo cover every edit.
    page.locator(".fs-canvas").focus()
    page.keyboard.press("Control+z")
    assert "attrs" not in doc(page)["nodes"][0]
    page.keyboard.press("Control+Shift+z")
    assert doc(page)["nodes"][0]["attrs"] == {"model": "H100"}
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+y")
    assert doc(page)["nodes"][0]["attrs"] == {"model": "H100"}

    # Copy / paste both devices with their link: new unique ids, link rewired to the copies.
    page.keyboard.press("Control+a")
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    d = doc(page)
    assert [n["id"] for n in d["nodes"]] == ["gpu0", "nic0", "gpu1", "nic1"]
    assert {(l["a"], l["b"]) for l in d["links"]} == {("gpu0", "nic0"), ("gpu1", "nic1")}
    assert len({l["id"] for l in d["links"]}) == 2
    assert d["layout"]["positions"]["gpu1"] == [p + 48 for p in d["layout"]["positions"]["gpu0"]]
    page.keyboard.press("Escape")
    shot(page, "edited")

    # Save → 201 → revision shown, clean state, CSRF and base revision sent.
    assert stats(page)["dirty"]
    page.click('button[data-action="save"]')
    page.fill('dialog[data-dialog="save"] input[name=message]', "two devices")
    page.click('dialog[data-dialog="save"] button[value=ok]')
    page.wait_for_function("!fabricscopeEditor.stats().dirty", timeout=5000)
    assert stats(page)["revision"] == 2
    assert page.inner_text(".fs-status") == "saved · rev 2"
    method, path, body, csrf = state.requests[-1]
    assert (method, path, body["base_revision"], body["message"], csrf) == \
        ("POST", "/api/v1/topologies/1/revisions/", 1, "two devices", "test-csrf-token")
    saved = doc(page)
    assert state.document == saved

    # Reload: the very same document, hand-placed positions included.
    open_editor(page, base)
    assert doc(page) == saved
    assert stats(page)["revision"] == 2 and not stats(page)["dirty"]
    for nid in ("gpu0", "nic1"):
        pos = page.evaluate(f"fabricscopeEditor.editor.view.elementFor('node', '{nid}').position()")
        assert [pos["x"], pos["y"]] == saved["layout"]["positions"][nid]


def test_drag_moves_and_is_undoable(page, server, state):
    _, base = server
    open_editor(page, base)
    page.evaluate("fabricscopeEditor.editor.focusElement('node', 'h0/gpu0')")
    wait_until_at_rest(page)  # the zoom animation: node_xy must read the final viewport
    x, y = node_xy(page, "node", "h0/gpu0")
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 30, y + 60, steps=6)
    page.mouse.up()
    d = doc(page)
    assert "h0/gpu0" in d["layout"]["positions"]
    page.keyboard.press("Control+z")
    assert "layout" not in doc(page) or "h0/gpu0" not in doc(page)["layout"].get("positions", {})


def test_stale_save_shows_conflict_dialog(page, server, state):
    _, base = server
    open_editor(page, base)
    page.click('.fs-kind[data-kind="storage"]')
    state.save_mode = "409"
    page.keyboard.press("Control+s")
    page.click('dialog[data-dialog="save"] button[value=ok]')
    dlg = page.locator('dialog[data-dialog="conflict"]')
    dlg.wait_for(state="visible")
    assert "latest is revision 4" in dlg.inner_text()
    assert "nothing was overwritten" in dlg.inner_text()
    assert stats(page)["dirty"] and stats(page)["revision"] == 3
    shot(page, "conflict")
    with page.expect_download() as dl:
        dlg.locator('[data-action="conflict-export"]').click()
    mine = json.loads(Path(dl.value.path()).read_text())
    assert any(n["id"] == "storage0" for n in mine["nodes"])
    state.revision = 4
    dlg.locator('[data-action="reload-latest"]').click()  # no leave-page prompt blocks this
    page.wait_for_function("window.fabricscopeEditor && fabricscopeEditor.stats().revision === 4")
    assert not any(n["id"] == "storage0" for n in doc(page)["nodes"])


def test_invalid_save_lists_problems_and_highlights(page, server, state):
    _, base = server
    d = state.document
    bad_link, bad_node = d["links"][12]["id"], d["nodes"][3]["id"]
    state.save_mode = "400"
    state.invalid_details = [
        {"path": "links[12].b", "message": f'unknown node "h3/nic9"'},
        {"path": "nodes[3].kind", "message": 'unknown kind "gpuu"'},
        {"path": "name", "message": "too long"},
    ]
    open_editor(page, base)
    page.click('.fs-kind[data-kind="nvme"]')  # something to save (appended: indices unchanged)
    page.click('button[data-action="save"]')
    page.click('dialog[data-dialog="save"] button[value=ok]')
    page.locator(".fs-problems").wait_for(state="visible")
    assert page.locator(".fs-problem").count() == 3
    assert "links[12].b" in page.inner_text(".fs-problems")
    problems = set(stats(page)["problems"])
    assert {f"l:{bad_link}", f"n:{bad_node}"} <= problems
    page.locator('.fs-problem[data-problem="0"]').click()
    wait_until_at_rest(page)
    assert stats(page)["selected"] == [f"l:{bad_link}"]
    assert page.locator('.fs-problem[data-problem="2"]').is_disabled()
    shot(page, "invalid")
    # Collapsing the host keeps the problem visible on the collapsed node.
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['h0'])")
    assert "g:h0" in stats(page)["problems"]


def test_collapse_and_expand_host(page, server, state):
    _, base = server
    open_editor(page, base)
    before = stats(page)
    assert before["visibleNodes"] == 79 + 3
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h0')")
    page.keyboard.press("e")
    s = stats(page)
    assert s["collapsed"] == 1 and s["visibleNodes"] == 82 - 38
    # The 8 NIC → ToR links of h0 are now one aggregate edge with count and capacity.
    label = page.evaluate("fabricscopeEditor.editor.cy.getElementById('agg:g:h0|n:r0/tor0').data('label')")
    assert label == "8 × ib-ndr (3.2 Tb/s)"
    # Collapsing is view state: the document does not carry it and is not "unsaved".
    assert "collapsed" not in doc(page).get("layout", {}) and not s["dirty"] and s["undo"] == 0
    wait_until_at_rest(page)  # collapsing may animate a step back; fit() stops only a running one
    page.evaluate("fabricscopeEditor.editor.fit()")
    wait_until_at_rest(page)
    shot(page, "collapsed-host")
    x, y = node_xy(page, "group", "h0")
    page.mouse.dblclick(x, y)
    assert stats(page)["visibleNodes"] == 82 and stats(page)["collapsed"] == 0
    # Collapsing the rack hides both hosts behind one node.
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['r0'])")
    assert stats(page)["visibleNodes"] == 3


BEFOREUNLOAD_PREVENTED = """() => {
    const e = new Event('beforeunload', { cancelable: true });
    window.dispatchEvent(e);
    return e.defaultPrevented;
}"""


def assert_clean(page, what):
    """Not "unsaved", no undo step, and leaving the page would not ask "leave site?"."""
    s = stats(page)
    assert not s["dirty"] and s["undo"] == 0, (what, s)
    assert page.locator(".fs-status").inner_text().startswith("saved"), what
    assert not page.evaluate(BEFOREUNLOAD_PREVENTED), what


def test_looking_never_edits(page, server, state):
    """Expand/collapse by double-click and by key, search-and-focus, zoom, select, neighbourhood
    and fit: none of them marks the topology unsaved, adds an undo step or arms the leave prompt.
    Then one real edit (moving a device) does all three, and undo covers only that edit."""
    _, base = server
    open_editor(page, base)
    assert_clean(page, "opened")
    original = doc(page)
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h0')")
    page.keyboard.press("e")
    wait_until_at_rest(page)
    assert stats(page)["collapsed"] == 1
    assert_clean(page, "collapse by key")
    x, y = node_xy(page, "group", "h0")
    page.mouse.dblclick(x, y)
    wait_until_at_rest(page)
    assert stats(page)["collapsed"] == 0
    assert_clean(page, "expand by double-click")
    page.click('button[data-action="collapse-all"]')
    page.click('button[data-action="expand-all"]')
    assert_clean(page, "collapse all, expand all")
    page.fill(".fs-search", "h1/nic3")
    page.press(".fs-search", "Enter")
    wait_until_at_rest(page)
    assert stats(page)["selected"] == ["n:h1/nic3"]
    assert_clean(page, "search and focus")
    page.keyboard.press("h")  # 1-hop neighbourhood of the selection
    page.keyboard.press("Escape")
    page.mouse.move(640, 400)
    page.mouse.wheel(0, -300)
    wait_until_at_rest(page)
    page.evaluate("fabricscopeEditor.editor.fit()")
    wait_until_at_rest(page)
    click_node(page, "h0/gpu2")
    assert stats(page)["selected"] == ["n:h0/gpu2"]
    assert_clean(page, "zoom, select, neighbourhood, fit")
    assert doc(page) == original
    shot(page, "looked-not-edited")
    # One edit: drag h0/gpu2 by 60 px.
    x, y = node_xy(page, "node", "h0/gpu2")
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 30, y + 20, steps=4)
    page.mouse.move(x + 60, y + 40, steps=4)
    page.mouse.up()
    page.wait_for_function("fabricscopeEditor.stats().dirty")
    s = stats(page)
    assert s["undo"] == 1 and page.locator(".fs-status").inner_text().startswith("● unsaved")
    assert page.evaluate(BEFOREUNLOAD_PREVENTED)
    shot(page, "edited-unsaved")
    # Undo takes back the move, not any of the looking above: the document is the original again.
    page.click('button[data-action="undo"]')
    assert doc(page) == original and stats(page)["collapsed"] == 0
    assert_clean(page, "undo back to the save")


def test_real_leave_prompt_only_after_an_edit(browser, server, state):
    """Chromium's own beforeunload dialog: none after expanding and searching, one after an edit."""
    _, base = server
    seen = []
    for edit in (False, True):
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        pg = ctx.new_page()
        pg.on("dialog", lambda d, edit=edit: (seen.append((edit, d.type)), d.accept()))
        open_editor(pg, base)
        pg.evaluate("fabricscopeEditor.editor.focusElement('node', 'h0/gpu1')")
        pg.keyboard.press("e")
        pg.fill(".fs-search", "tor0")
        pg.press(".fs-search", "Enter")
        if edit:
            pg.click('.fs-kind[data-kind="nvme"]')
        pg.close(run_before_unload=True)
        deadline = time.monotonic() + 3
        while edit and not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        ctx.close()
    assert seen == [(True, "beforeunload")]


def test_view_survives_reload_in_the_same_tab(page, server, state):
    """Collapsed hosts, zoom and selection come back after a reload (sessionStorage per topology)."""
    _, base = server
    open_editor(page, base)
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['h1'])")
    page.evaluate("fabricscopeEditor.editor.cy.zoom(0.9)")
    click_node(page, "h0/nic0")
    page.wait_for_timeout(300)  # viewport writes are debounced by 150 ms
    before = stats(page)
    page.reload()
    page.wait_for_function("window.fabricscopeEditor !== undefined")
    after = stats(page)
    assert after["collapsed"] == 1 and after["selected"] == ["n:h0/nic0"]
    assert after["zoom"] == pytest.approx(before["zoom"], rel=1e-6)
    assert not after["dirty"]


def test_large_cluster_opens_collapsed_and_interactive(page, server, state):
    """128 DGX-H100 hosts (1,024 GPUs, ~4,900 devices, ~9,900 links) open with hosts collapsed."""
    _, base = server
    try:
        from designer.engine.model.fabrics import build_cluster  # the engine's generator, once it exists
        big = build_cluster("dgx-h100", 128)
    except Exception:
        big = cluster_document(128, spines=16, name="1024-gpu")
    state.document = big
    t0 = time.perf_counter()
    open_editor(page, base)
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    wall = time.perf_counter() - t0
    s = stats(page)
    print(f"\n128-host cluster: {s['nodes']} devices, {s['links']} links -> {s['visibleNodes']} nodes, "
          f"{s['visibleEdges']} edges visible; editor init {s['loadMs']:.0f} ms, "
          f"page load to first frame {wall * 1000:.0f} ms")
    assert s["collapsed"] == 128
    assert s["visibleNodes"] < 400
    shot(page, "cluster-128-collapsed")
    t1 = time.perf_counter()
    page.evaluate("fabricscopeEditor.editor.focusElement('node', 'h77/gpu3')")
    wait_until_at_rest(page)
    print(f"expand h77 and zoom to h77/gpu3: {(time.perf_counter() - t1) * 1000:.0f} ms (incl. 250 ms animation)")
    assert stats(page)["selected"] == ["n:h77/gpu3"]
    shot(page, "cluster-128-host-expanded")


def test_readonly_has_no_edit_controls(page, server, state):
    _, base = server
    state.readonly = True
    open_editor(page, base)
    for sel in ('.fs-kind[data-kind="gpu"]', 'button[data-action="save"]', 'button[data-action="connect"]',
                'button[data-action="undo"]'):
        assert not page.locator(sel).is_visible(), sel
    assert page.locator('button[data-action="export-png"]').is_visible()
    page.keyboard.press("Delete")
    page.keyboard.press("Control+v")
    page.fill(".fs-search", "h1/nic3")
    page.press(".fs-search", "Enter")
    wait_until_at_rest(page)
    assert stats(page)["selected"] == ["n:h1/nic3"]
    assert page.locator(".fs-props input[name=model]").is_disabled()
    page.keyboard.press("Delete")
    assert stats(page)["nodes"] == 79 and not stats(page)["dirty"]
    page.keyboard.press("e")  # collapse still works for viewers
    assert stats(page)["collapsed"] == 1
    shot(page, "readonly")


def test_insert_host_generate_and_search(page, server, state):
    _, base = server
    open_editor(page, base)
    page.click('button[data-action="insert-host"]')
    dlg = page.locator('dialog[data-dialog="host"]')
    assert dlg.locator("input[name=host_id]").input_value() == "h2"
    dlg.locator("button[value=ok]").click()
    page.wait_for_function("fabricscopeEditor.stats().nodes === 79 + 38")
    assert state.requests[-1] == ("GET", "/api/v1/templates/dgx-h100/host/", {"host_id": "h2"})
    d = doc(page)
    assert all(f"h2/{x}" in d["layout"]["positions"] for x in ("gpu0", "nic9", "cpu1"))
    shot(page, "inserted-host")

    page.click('button[data-action="generate"]')
    g = page.locator('dialog[data-dialog="generate"]')
    g.locator("input[name=hosts]").fill("6")
    g.locator("select[name=fabric]").select_option("rail-optimized")
    g.locator("input[name=spines]").fill("2")
    g.locator("button[value=ok]").click()
    page.wait_for_function("fabricscopeEditor.stats().nodes === 6 * 38 + 8 + 2")
    assert state.requests[-1][2]["hosts"] == 6 and state.requests[-1][2]["fabric"] == "rail-optimized"
    page.keyboard.press("Control+z")  # generating is one undoable step
    assert stats(page)["nodes"] == 79 + 38
    page.keyboard.press("Control+y")

    page.fill(".fs-search", "h4/gpu")
    assert page.locator(".fs-results li").count() >= 8
    page.press(".fs-search", "Enter")
    wait_until_at_rest(page)
    assert stats(page)["selected"] == ["n:h4/gpu0"]
    page.keyboard.press("h")
    page.wait_for_function("fabricscopeEditor.editor.cy.$('.nhood').length > 5")
    assert page.evaluate("fabricscopeEditor.editor.cy.$('.nhood').length") > 5
    shot(page, "generated-neighbourhood")
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    page.locator('dialog[data-dialog="help"]').wait_for(state="visible")
    shot(page, "help")


def test_import_file_and_export(page, server, state, tmp_path):
    _, base = server
    open_editor(page, base)
    small = cluster_document(1, spines=1, name="imported")
    f = tmp_path / "imported.json"
    f.write_text(json.dumps(small))
    page.set_input_files(".fs-editor input[type=file]", str(f))
    page.wait_for_function("fabricscopeEditor.stats().nodes === 38 + 8 + 1")
    assert doc(page)["name"] == "imported"
    with page.expect_download() as dl:
        page.click('button[data-action="export-json"]')
    assert json.loads(Path(dl.value.path()).read_text())["nodes"] == doc(page)["nodes"]
    with page.expect_download() as dl:
        page.click('button[data-action="export-png"]')
    assert Path(dl.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dark_mode_screenshot(browser, server, state):
    _, base = server
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    pg = ctx.new_page()
    open_editor(pg, base)
    pg.evaluate("fabricscopeEditor.editor.focusElement('group', 'h1')")
    wait_until_at_rest(pg)
    pg.evaluate("fabricscopeEditor.editor.setEdgeLabels(true)")
    bg = pg.evaluate("getComputedStyle(document.querySelector('.fs-editor')).getPropertyValue('--fs-bg').trim()")
    assert bg == "#12161c"
    shot(pg, "dark-host")
    ctx.close()


IMPORTS = REPO / "tests" / "engine" / "data" / "import"


def test_import_servers_keeps_models_and_compares_matrices(page, server, state):
    """nvidia-smi topo -m of a DGX A100 (8 GPUs x 18 columns) and an H200 NCCL XML imported next
    to pod-a (h0, h1): hosts h2 and h3. The host's "Compare path matrix" shows the file's matrix
    next to the engine's (all 144 cells agree); the XML host is H200 with ConnectX-7 NICs."""
    _, base = server
    open_editor(page, base)
    page.set_input_files(".fs-editor input[type=file]", str(IMPORTS / "dgx-a100-topo-m.txt"))
    page.wait_for_function("fabricscopeEditor.getDocument().groups.some(g => g.id === 'h2')")
    page.set_input_files(".fs-editor input[type=file]", str(IMPORTS / "dgx-h200-nccl-topo.xml"))
    page.wait_for_function("fabricscopeEditor.getDocument().groups.some(g => g.id === 'h3')")
    nodes = {n["id"]: n for n in doc(page)["nodes"]}
    assert nodes["h3/gpu0"]["attrs"]["model"] == "H200"
    assert nodes["h3/nic0"]["attrs"]["model"] == "ConnectX-7" and nodes["h3/nic0"]["attrs"]["name"] == "mlx5_0"
    assert nodes["h2/nic0"]["attrs"]["name"] == "mlx5_0"
    assert nodes["h2/gpu0"]["attrs"]["cpu_affinity"] == "48-63,176-191"
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h2')")
    wait_until_at_rest(page)
    page.click('button[data-action="import-matrix"]')
    dlg = page.locator('dialog[data-dialog="matrix"]')
    dlg.wait_for(state="visible")
    assert dlg.locator("figure").count() == 2
    assert "All 144 cells agree" in dlg.locator(".fs-matrix-summary").inner_text()
    assert dlg.locator("td.fs-diff").count() == 0
    assert dlg.locator("figure").nth(0).locator('td[data-cell="GPU0|NIC0"]').inner_text() == "PXB"
    shot(page, "import-matrix-compare")
    dlg.locator("button[value=close]").click()
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h3')")
    wait_until_at_rest(page)
    page.click('button[data-action="import-matrix"]')
    assert dlg.locator("figure").count() == 1 and "holds no matrix" in dlg.inner_text()
    assert dlg.locator('td[data-cell="GPU0|GPU1"]').inner_text() == "NV18"
    shot(page, "import-matrix-xml")
    dlg.locator("button[value=close]").click()
    # Two imports are two edits; undo takes the last one back and nothing else.
    assert stats(page)["undo"] == 2
    page.click('button[data-action="undo"]')
    assert not any(n.startswith("h3/") for n in {n["id"] for n in doc(page)["nodes"]})
    assert any(n.startswith("h2/") for n in {n["id"] for n in doc(page)["nodes"]})
