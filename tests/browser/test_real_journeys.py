"""Browser journeys through the REAL app: live Django server, real REST API, real Celery worker.

Unlike ``test_editor_harness.py`` (the editor against a mock API), every request here reaches
the real views and services; jobs run on a real ``celery worker`` subprocess. Screenshots go to
``$ARTIFACTS_DIR/screenshots/real-*.png``.

Journey 1 builds this topology by hand in the editor (two hosts from the dgx-h100 template)::

                    [spine0]
                   /        \\         ib-ndr uplinks (leaf0 – spine0 capacity overridden)
              [leaf0]      [leaf1]
              |     \\      /     |      ib-ndr: NIC i of each host -> leaf i
          h0/nic0  h1/nic0  h0/nic1  h1/nic1
          [ h0: 8 GPUs … ]  [ h1: 8 GPUs … ]
"""
from __future__ import annotations

import json
import re

import pytest

from tests.browser.conftest import wait_until_at_rest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"


# ---------------------------------------------------------------------------------- helpers
def api_get(page, base: str, path: str):
    """GET an API path with the page's session cookie; returns the decoded JSON (asserts 200)."""
    response = page.request.get(base + path)
    assert response.status == 200, (path, response.status, response.text()[:500])
    return response.json()


def element_shot(page, selector: str, name: str, *, bottom: float | None = None):
    """Screenshot of one element, to page y ``bottom`` when given, cut from a full-page shot taken
    from the top (so the sticky header never covers it)."""
    from tests.browser.conftest import screenshot_dir

    page.evaluate("window.scrollTo(0, 0)")
    box = page.evaluate("""(sel) => {
        const a = document.querySelector(sel).getBoundingClientRect();
        return {x: a.left + scrollX, y: a.top + scrollY, width: a.width, height: a.height};
    }""", selector)
    if bottom is not None:
        box["height"] = bottom - box["y"]
    path = screenshot_dir() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True, clip=box)
    return path


def path_schematic_bottom(page) -> float:
    """Page y just below the path view's drawing of the flow (above its per-hop bar chart)."""
    return page.evaluate("""(() => {
        const el = document.querySelector('[data-plot=path]'), fl = el._fullLayout;
        const r = el.getBoundingClientRect();
        return r.top + scrollY + fl._size.t + (1 - fl.yaxis2.domain[0]) * fl._size.h + 34;
    })()""")


def doc(page) -> dict:
    return page.evaluate("fabricscopeEditor.getDocument()")


def stats(page) -> dict:
    return page.evaluate("fabricscopeEditor.stats()")


def open_editor(page, url: str):
    page.goto(url)
    page.wait_for_function("window.fabricscopeEditor !== undefined")
    page.wait_for_selector("#fabricscope-editor canvas")
    return page


def node_xy(page, kind: str, ref: str) -> tuple[float, float]:
    """Page coordinates of the canvas element standing for a document node or group."""
    return tuple(page.evaluate("""([kind, ref]) => {
        const ed = fabricscopeEditor.editor;
        const p = ed.view.elementFor(kind, ref).renderedPosition();
        const r = ed.canvas.getBoundingClientRect();
        return [r.left + p.x, r.top + p.y];
    }""", [kind, ref]))


def click_node(page, ref: str, kind: str = "node"):
    x, y = node_xy(page, kind, ref)
    page.mouse.click(x, y)


def spots_above(page, *specs: tuple[float, float]) -> list[dict]:
    """Canvas points (relative to the canvas) above everything drawn, where a dropped device joins
    no host group: ``(fx, fy)`` = fraction of the drawing's width, fraction of the free band's height."""
    return page.evaluate("""(specs) => {
        const cy = fabricscopeEditor.editor.cy;
        const bb = cy.elements().renderedBoundingBox();
        return specs.map(([fx, fy]) => ({x: bb.x1 + fx * (bb.x2 - bb.x1), y: fy * bb.y1}));
    }""", [list(s) for s in specs])


def connect(page, a: str, b: str, tech: str, capacity: float | None = None):
    """Connect mode is on: click a, click b, pick ``tech`` in the link dialog, add the link."""
    before = stats(page)["links"]
    click_node(page, a)
    click_node(page, b)
    dialog = page.locator('dialog[data-dialog="link"]')
    dialog.wait_for(state="visible")
    assert dialog.locator(".fs-ends").inner_text().split() == [a, "⟷", b]
    dialog.locator("select[name=tech]").select_option(tech)
    if capacity is not None:
        dialog.locator("input[name=capacity]").fill(str(capacity))
    dialog.locator("button[value=ok]").click()
    page.wait_for_function(f"fabricscopeEditor.stats().links === {before + 1}")


def semantic(document: dict) -> dict:
    """What a save must keep: groups, nodes, links (ids, ends, tech, capacity), attrs, positions."""
    return {
        "groups": sorted((g["id"], g.get("kind"), g.get("parent")) for g in document["groups"]),
        "nodes": sorted((n["id"], n["kind"], n.get("group"), json.dumps(n.get("attrs") or {}, sort_keys=True))
                        for n in document["nodes"]),
        "links": sorted((lk["id"], lk["a"], lk["b"], lk.get("tech"), lk.get("capacity_gbps"))
                        for lk in document["links"]),
        "positions": {k: [round(v, 3) for v in p]
                      for k, p in (document.get("layout") or {}).get("positions", {}).items()},
    }


# ---------------------------------------------------------------------------------- journey 1
def test_build_by_hand_save_and_reload(app_page, live_server, user, sign_in, shot):
    page = sign_in(app_page, "alice", PASSWORD)
    base = live_server.url

    # A blank topology from the New page.
    page.goto(base + "/topologies/new/")
    page.fill("#id_name", "hand-built")
    page.click("[data-source-switch] label:has(input[value=blank])")
    assert page.is_checked("input[name=source][value=blank]")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    topology_id = int(re.search(r"/topologies/(\d+)/$", page.url).group(1))
    shot(page, "real-01-blank-topology")
    editor_url = f"{base}/topologies/{topology_id}/editor/"
    open_editor(page, editor_url)
    assert stats(page)["nodes"] == 0 and stats(page)["revision"] is None
    assert page.locator(".fs-empty").is_visible()  # an empty canvas says what to do
    assert page.inner_text(".fs-status") == "new · not saved yet"
    shot(page, "real-02-editor-empty", full_page=False)

    # Two hosts from the dgx-h100 template ("+ Host").
    for host in ("h0", "h1"):
        page.click('button[data-action="insert-host"]')
        dialog = page.locator('dialog[data-dialog="host"]')
        dialog.wait_for(state="visible")
        assert dialog.locator("input[name=host_id]").input_value() == host
        dialog.locator("select[name=template]").select_option("dgx-h100")
        dialog.locator("button[value=ok]").click()
        page.wait_for_function(f"fabricscopeEditor.getDocument().groups.some(g => g.id === '{host}')")
    assert not page.locator(".fs-empty").is_visible()
    d = doc(page)
    per_host = sum(1 for n in d["nodes"] if n.get("group", "").startswith("h0"))
    assert per_host > 30 and len(d["nodes"]) == 2 * per_host
    page.keyboard.press("Escape")
    page.click('button[data-action="fit"]')
    wait_until_at_rest(page)
    shot(page, "real-03-two-hosts", full_page=False)

    # Two leaves and a spine above the hosts, dragged from the palette.
    canvas = page.locator(".fs-canvas")
    for spot in spots_above(page, (0.25, 0.62), (0.75, 0.62), (0.5, 0.22)):
        page.locator('.fs-kind[data-kind="switch"]').drag_to(canvas, target_position=spot)
    d = doc(page)
    switches = [n for n in d["nodes"] if n["kind"] == "switch"]
    assert [s["id"] for s in switches] == ["leaf0", "leaf1", "leaf2"], switches
    assert all("group" not in s for s in switches)

    # Properties panel: the third switch is the spine (role, and a fitting id).
    assert stats(page)["selected"] == ["n:leaf2"]
    page.select_option(".fs-props select[name=role]", "spine")
    page.fill(".fs-props input[name=id]", "spine0")
    page.press(".fs-props input[name=id]", "Tab")
    spine = next(n for n in doc(page)["nodes"] if n["id"] == "spine0")
    assert spine["attrs"] == {"role": "spine"}
    page.click('button[data-action="fit"]')
    wait_until_at_rest(page)
    shot(page, "real-04-switches-placed", full_page=False)

    # Connect mode: uplinks and one NIC of each host to each leaf.
    page.locator(".fs-canvas").focus()
    page.keyboard.press("c")
    assert stats(page)["mode"] == "connect"
    connect(page, "leaf0", "spine0", "ib-ndr")
    connect(page, "leaf1", "spine0", "ib-ndr")
    for host in ("h0", "h1"):
        connect(page, f"{host}/nic0", "leaf0", "ib-ndr")
        connect(page, f"{host}/nic1", "leaf1", "ib-ndr")
    page.keyboard.press("Escape")
    assert stats(page)["mode"] is None

    # A link property: override leaf0 – spine0's capacity in the properties panel.
    uplink = next(lk for lk in doc(page)["links"] if {lk["a"], lk["b"]} == {"leaf0", "spine0"})
    page.evaluate("id => fabricscopeEditor.editor.focusElement('link', id)", uplink["id"])
    page.wait_for_function("id => fabricscopeEditor.stats().selected.join() === 'l:' + id", arg=uplink["id"])
    wait_until_at_rest(page)
    page.fill(".fs-props input[name=capacity_gbps]", "200")
    page.press(".fs-props input[name=capacity_gbps]", "Tab")
    uplink = next(lk for lk in doc(page)["links"] if lk["id"] == uplink["id"])
    assert uplink["capacity_gbps"] == 200 and uplink["tech"] == "ib-ndr"
    assert "overridden" in page.locator(".fs-props").inner_text()
    page.click('button[data-action="fit"]')
    wait_until_at_rest(page)
    shot(page, "real-05-connected", full_page=False)

    # Save through the real API: 201, revision 1, message stored.
    edited = doc(page)
    positions = edited["layout"]["positions"]
    assert {"leaf0", "leaf1", "spine0", "h0/gpu0", "h1/nic9"} <= set(positions)
    with page.expect_response(lambda r: r.url.endswith(f"/api/v1/topologies/{topology_id}/revisions/")
                              and r.request.method == "POST") as saved:
        page.click('button[data-action="save"]')
        page.fill('dialog[data-dialog="save"] input[name=message]', "two DGX-H100 + leaf/spine by hand")
        page.click('dialog[data-dialog="save"] button[value=ok]')
    assert saved.value.status == 201, saved.value.text()[:500]
    page.wait_for_function("!fabricscopeEditor.stats().dirty")
    number = saved.value.json()["number"]
    assert stats(page)["revision"] == number
    assert page.inner_text(".fs-status") == f"saved · rev {number}"
    shot(page, "real-06-saved", full_page=False)

    # Reload: the same document, hand-placed positions and properties included.
    open_editor(page, editor_url)
    after = stats(page)
    assert after["revision"] == number and not after["dirty"]
    assert after["undo"] == after["redo"] == 0
    assert page.locator('[data-action="undo"]').is_disabled()
    assert page.locator('[data-action="redo"]').is_disabled()
    reloaded = doc(page)
    assert semantic(reloaded) == semantic(edited)
    # Exactly what was sent, up to the server's normalization (it marks hand-set link
    # capacities capacity_basis "explicit"; nothing else changes).
    from designer import bridge

    assert reloaded == bridge.normalize_document(edited)
    for nid in ("leaf0", "spine0", "h1/gpu3"):
        pos = page.evaluate(f"fabricscopeEditor.editor.view.elementFor('node', '{nid}').position()")
        assert [round(pos["x"], 3), round(pos["y"], 3)] == [round(v, 3) for v in positions[nid]]
    page.click('button[data-action="fit"]')
    wait_until_at_rest(page)
    shot(page, "real-07-reloaded", full_page=False)
    # For the README: the reloaded editor with the overridden uplink selected.
    page.evaluate("id => fabricscopeEditor.editor.selectIds('link', [id])", uplink["id"])
    page.evaluate("document.activeElement.blur()")
    page.mouse.move(*node_xy(page, "node", "h0/gpu0"))  # no hover highlight left on a button
    wait_until_at_rest(page)
    assert "overridden" in page.locator(".fs-props").inner_text()
    shot(page, "real-08-editor-readme", full_page=False)

    # The API agrees: one revision with the message, its document is the edited one.
    revisions = api_get(page, base, f"/api/v1/topologies/{topology_id}/revisions/")
    rows = revisions["results"] if isinstance(revisions, dict) else revisions
    assert [r["number"] for r in rows] == [number]
    assert rows[0]["message"] == "two DGX-H100 + leaf/spine by hand"
    stored = api_get(page, base, f"/api/v1/topologies/{topology_id}/revisions/{number}/")["document"]
    assert stored == reloaded
    assert not page.js_errors, page.js_errors


# ---------------------------------------------------------------------------------- journey 2
def test_save_conflict_between_two_pages(chromium_browser, app_page, live_server, user, sign_in,
                                         shot):
    """Two editors on revision 1 of pod-2: the first saves (r2), the second's save is refused (409)
    with the conflict dialog; reloading shows the first one's change, and r2 is not overwritten."""
    from designer import services

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    original = topology.current_revision.document
    base = live_server.url
    editor_url = f"{base}/topologies/{topology.pk}/editor/"
    first = open_editor(sign_in(app_page, "alice", PASSWORD), editor_url)
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        second = context.new_page()
        second.set_default_timeout(15_000)
        errors: list[str] = []
        second.on("pageerror", lambda exc: errors.append(str(exc)))
        open_editor(sign_in(second, "alice", PASSWORD), editor_url)
        assert stats(first)["revision"] == stats(second)["revision"] == 1

        # First page: a storage server, saved as r2.
        first.click('.fs-kind[data-kind="storage"]')
        first.click('button[data-action="save"]')
        first.fill('dialog[data-dialog="save"] input[name=message]', "first: add a storage server")
        first.click('dialog[data-dialog="save"] button[value=ok]')
        first.wait_for_function("!fabricscopeEditor.stats().dirty && fabricscopeEditor.stats().revision === 2")
        shot(first, "real-10-conflict-first-saved", full_page=False)

        # Second page, still on r1: an NVMe drive; its save is refused with the current number.
        second.click('.fs-kind[data-kind="nvme"]')
        with second.expect_response(lambda r: r.url.endswith("/revisions/") and r.request.method == "POST") as refused:
            second.keyboard.press("Control+s")
            second.fill('dialog[data-dialog="save"] input[name=message]', "second: add an NVMe drive")
            second.click('dialog[data-dialog="save"] button[value=ok]')
        assert refused.value.status == 409
        assert refused.value.json()["error"]["details"]["current_revision"] == 2
        dialog = second.locator('dialog[data-dialog="conflict"]')
        dialog.wait_for(state="visible")
        assert "You started from revision 1; the latest is revision 2." in dialog.inner_text()
        assert "nothing was overwritten" in dialog.inner_text()
        assert dialog.locator('[data-action="reload-latest"]').is_visible()
        assert stats(second)["dirty"] and stats(second)["revision"] == 1
        shot(second, "real-11-conflict-dialog", full_page=False)

        # Reload the latest: the first page's storage server, not the unsaved NVMe drive.
        dialog.locator('[data-action="reload-latest"]').click()
        second.wait_for_function("window.fabricscopeEditor && fabricscopeEditor.stats().revision === 2")
        ids = {n["id"] for n in doc(second)["nodes"]}
        assert "storage0" in ids and "nvme0" not in ids
        assert not stats(second)["dirty"]
        assert semantic(doc(second)) == semantic(doc(first))
        second.evaluate("fabricscopeEditor.editor.focusElement('node', 'storage0')")
        wait_until_at_rest(second)
        shot(second, "real-12-conflict-reloaded", full_page=False)

        # No revision was overwritten: r1 (generated) and r2 (the first page's), nothing else.
        rows = api_get(first, base, f"/api/v1/topologies/{topology.pk}/revisions/")
        rows = rows["results"] if isinstance(rows, dict) else rows
        assert [(r["number"], r["message"]) for r in rows][0] == (2, "first: add a storage server")
        assert [r["number"] for r in rows] == [2, 1]
        r2 = api_get(first, base, f"/api/v1/topologies/{topology.pk}/revisions/2/")["document"]
        assert "storage0" in {n["id"] for n in r2["nodes"]} and "nvme0" not in {n["id"] for n in r2["nodes"]}
        assert api_get(first, base, f"/api/v1/topologies/{topology.pk}/revisions/1/")["document"] == original
    finally:
        context.close()
    assert not errors and not first.js_errors, (errors, first.js_errors)


# ---------------------------------------------------------------------------------- journeys 3 and 4
PROGRESS_RECORDER = """
window.__pcts = [];
document.addEventListener('DOMContentLoaded', () => {
  const el = document.getElementById('job-pct');
  if (!el) return;
  window.__pcts.push(el.textContent);
  new MutationObserver(() => window.__pcts.push(el.textContent))
    .observe(el, {childList: true, characterData: true, subtree: true});
});
"""


def new_cluster(page, base: str, name: str, hosts: int) -> int:
    """Generate a DGX-H100 rail-optimized cluster on the New page; returns its id."""
    page.goto(base + "/topologies/new/")
    page.fill("#id_name", name)
    page.fill("#id_hosts", str(hosts))
    page.select_option("#id_template", "dgx-h100")
    page.select_option("#id_fabric", "rail-optimized")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    return int(re.search(r"/topologies/(\d+)/$", page.url).group(1))


def fill_ring_allreduce(page, name: str):
    """Scenario builder: one ring all-reduce over every GPU, 1 GB."""
    page.fill("#id_name", name)
    page.select_option("#id_pattern-0-kind", "allreduce")
    page.select_option("#id_pattern-0-select", "gpu")
    page.select_option("#id_pattern-0-algorithm", "ring")
    page.fill("#id_pattern-0-bytes_value", "1")
    page.select_option("#id_pattern-0-bytes_unit", "GB")


def run_to_result(page, shot, prefix: str) -> int:
    """Press Run simulation, follow the job page to 100 % and onto the result page; returns the job id."""
    page.click("button[value=simulate]")
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    job_id = int(re.search(r"/jobs/(\d+)/$", page.url).group(1))
    shot(page, f"{prefix}-job")
    page.wait_for_function("window.__pcts && window.__pcts.includes('100%')", timeout=120_000)
    seen = [int(p.rstrip("%")) for p in page.evaluate("window.__pcts")]
    assert seen == sorted(seen) and seen[-1] == 100, seen  # progress only moves forward
    assert page.locator("#job-result").is_visible()  # "Open result" shows before the redirect
    wait_until_at_rest(page)  # the bar's width transition (the page moves on after 1.2 s)
    shot(page, f"{prefix}-job-done")
    page.wait_for_url(re.compile(rf"/jobs/{job_id}/result/$"), timeout=20_000)
    page.wait_for_function("document.documentElement.getAttribute('data-figures-ready') === '1'",
                           timeout=30_000)
    return job_id


@pytest.mark.worker
def test_ring_allreduce_result_path_and_utilization(app_page, live_server, user, sign_in, shot,
                                                    celery_worker):
    celery_worker(FABRICSCOPE_TEST_JOB_DELAY="1.5")  # a visible running state and moving bar
    page = sign_in(app_page, "alice", PASSWORD)
    page.add_init_script(PROGRESS_RECORDER)
    base = live_server.url
    topology_id = new_cluster(page, base, "pod-4", 4)
    assert "4" in page.locator(".stats").inner_text() and "32" in page.locator(".stats").inner_text()
    page.click(".page-head >> text=New scenario")
    page.wait_for_url(re.compile(rf"/topologies/{topology_id}/scenarios/new/$"))
    fill_ring_allreduce(page, "ring-32")
    shot(page, "real-20-scenario-builder")
    job_id = run_to_result(page, shot, "real-21")
    shot(page, "real-22-result")
    assert "Simulation result" in page.locator("h1").inner_text()
    result = api_get(page, base, f"/api/v1/jobs/{job_id}/result/")

    # Path view: pick a flow that crosses the fabric; the hop list is its path.
    flow = next(f for f in result["flows"] if f["src"].startswith("h0/") and f["dst"].startswith("h1/")
                and len(f.get("path") or []) > 4)
    page.fill("#fs-flow-search", flow["id"])
    options = page.locator("#fs-flow-select option")
    labels = options.all_inner_texts()
    index = next(i for i, text in enumerate(labels) if text.split()[0] == flow["id"])
    page.select_option("#fs-flow-select", index=index)
    page.wait_for_function("id => document.querySelector('[data-plot=path]')._fsFigure.fabricscope.flow === id",
                           arg=flow["id"])
    hops = page.locator("[data-hop-list] .fs-hop-nodes").all_inner_texts()
    assert hops == [f"{a} → {b}" for a, b in zip(flow["path"], flow["path"][1:])]
    shown = page.evaluate("document.querySelector('[data-plot=path]')._fsFigure.fabricscope.path")
    assert shown == flow["path"]
    element_shot(page, "#sec-path", "real-23-path")

    # Utilization view: links drawn and coloured; the tiers box plot exists.
    topo = page.evaluate("""(() => { const el = document.querySelector('[data-plot=topology]');
        return el._fullData.map(t => ({name: t.name, type: t.type, n: (t.x || []).length,
                                       colors: t.line && t.line.color || (t.marker && t.marker.color)})); })()""")
    assert len(topo) > 0
    links = [t for t in topo if t["name"] and "link" in t["name"].lower()]
    assert links and sum(t["n"] for t in links) > 0, topo
    tiers = page.evaluate("document.querySelector('[data-plot=tiers]')._fullData.map(t => t.type)")
    assert "box" in tiers, tiers
    page.locator("#sec-topology").scroll_into_view_if_needed()
    shot(page, "real-24-utilization", full_page=False)
    # For the README: the unified topology coloured by utilization, then the path view.
    readme = element_shot(page, "#sec-topology", "real-25-result-readme", bottom=path_schematic_bottom(page))
    assert readme.stat().st_size > 50_000
    assert not page.js_errors, page.js_errors


@pytest.mark.worker
def test_nic_failure_what_if(app_page, live_server, user, sign_in, shot, celery_worker):
    from designer import services

    celery_worker()
    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    page = sign_in(app_page, "alice", PASSWORD)
    page.add_init_script(PROGRESS_RECORDER)
    base = live_server.url
    page.goto(f"{base}/topologies/{topology.pk}/scenarios/new/")
    fill_ring_allreduce(page, "ring-nic0-down")
    page.fill("input[data-filter-for=id_failures_down]", "h0/nic0")
    page.keyboard.press("Enter")   # searched on the server: the chip comes with its answer
    page.locator(".picked .chip").first.wait_for(timeout=10_000)
    assert page.locator(".picked .chip").count() == 1
    assert "h0/nic0" in page.locator(".picked .chip").inner_text()
    page.locator("#failures").scroll_into_view_if_needed()
    shot(page, "real-30-failure-picked", full_page=False)
    job_id = run_to_result(page, shot, "real-31")
    result = api_get(page, base, f"/api/v1/jobs/{job_id}/result/")
    diff = result["diff"]
    assert diff, "a scenario with failures carries a diff"
    assert page.locator("#sec-whatif").is_visible()
    assert "h0/nic0" in page.locator(".fs-failures").inner_text()
    page.locator("#sec-whatif").scroll_into_view_if_needed()
    shot(page, "real-32-whatif", full_page=False)
    summary = diff["summary"]
    assert summary["disconnected"] + summary["rerouted"] > 0  # GPU h0/gpu0 loses its only NIC

    # What changed: the disconnected / rerouted flows listed are the API's, with its counts.
    changes = page.evaluate("""(() => { const el = document.querySelector('[data-plot=whatif_changes]');
        const rows = Array.from(el.querySelectorAll('tbody tr'));
        return {title: el.querySelector('caption').textContent,
                cells: [0, 1].map((c) => rows.map((r) => r.cells[c].textContent))}; })()""")
    kinds, ids = changes["cells"][0], changes["cells"][1]
    for kind, key in (("disconnected", "disconnected"), ("rerouted", "rerouted")):
        listed = [i for k, i in zip(kinds, ids) if k == kind]
        assert listed == [d["flow"] for d in diff.get(key) or []], (kind, listed)
        assert f"{summary[key]:,} {kind}" in changes["title"]
    assert "h0/gpu0" in page.locator("[data-plot=whatif_changes]").inner_text()

    # Completion before → after per pattern: the bars are the API's numbers (ms).
    bars = page.evaluate("""(() => { const el = document.querySelector('[data-plot=whatif_completion]');
        return el._fullData.map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y), text: t.text})); })()""")
    by_name = {b["name"]: b for b in bars}
    patterns = summary["patterns"]
    assert by_name["baseline"]["x"] == list(patterns)
    for name, key in (("baseline", "before"), ("with failures", "after")):
        # A pattern that does not complete is drawn where its surviving flows finish.
        expected = [(patterns[p]["completion_s"][key] or patterns[p]["surviving_completion_s"]) * 1e3
                    for p in patterns]
        assert by_name[name]["y"] == pytest.approx(expected), name
    # The headline says what happens: the ring loses gpu0's flows, so the job does not complete.
    verdict = page.locator("#result-verdict").inner_text()
    assert verdict.startswith("Does not complete — ") and "h0/nic0 is down" in verdict, verdict
    assert result["summary"]["complete"] is False and result["summary"]["job_completion_s"] is None
    lost = [p for p in patterns if not patterns[p].get("complete", True)]
    for p, text in zip(patterns, by_name["with failures"]["text"]):
        if p in lost:
            assert f"{patterns[p]['disconnected']:,} flow" in text and "lost" in text, text
    element_shot(page, "#sec-whatif", "real-33-whatif-section")
    assert not page.js_errors, page.js_errors


def test_import_a_server_into_the_editor(app_page, live_server, user, sign_in, shot):
    """Import in the editor: a real ``nvidia-smi topo -m`` capture (ANSI escapes, legend) becomes a
    new host through the server's parser, added next to what is already on the canvas."""
    from pathlib import Path

    page = sign_in(app_page, "alice", PASSWORD)
    base = live_server.url
    page.goto(base + "/topologies/new/")
    page.fill("#id_name", "imported")
    page.click("[data-source-switch] label:has(input[value=blank])")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    topology_id = int(re.search(r"/topologies/(\d+)/$", page.url).group(1))
    open_editor(page, f"{base}/topologies/{topology_id}/editor/")

    capture = Path(__file__).resolve().parents[1] / "engine" / "data" / "import" / "dgx-a100-topo-m.txt"
    page.set_input_files("input[type=file]", str(capture))
    page.wait_for_function("fabricscopeEditor.getDocument().nodes.length > 0")
    document = doc(page)
    gpus = [n["id"] for n in document["nodes"] if n["kind"] == "gpu"]
    nics = [n["id"] for n in document["nodes"] if n["kind"] == "nic"]
    assert sorted(gpus) == [f"h0/gpu{i}" for i in range(8)]
    assert len(nics) >= 8 and all(n.startswith("h0/") for n in nics)
    assert any(g["id"] == "h0" and g["kind"] == "host" for g in document["groups"])
    assert "Imported dgx-a100-topo-m.txt (nvidia-smi) as host h0" in page.inner_text("body")
    shot(page, "real-40-imported-host", full_page=False)

    # A second import lands beside the first under the next free host id; undo removes it.
    page.set_input_files("input[type=file]", str(capture))
    page.wait_for_function("fabricscopeEditor.getDocument().nodes.some(n => n.id.startsWith('h1/'))")
    page.keyboard.press("Control+z")
    assert not any(n["id"].startswith("h1/") for n in doc(page)["nodes"])
