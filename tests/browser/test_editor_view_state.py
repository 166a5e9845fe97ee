"""The real editor page (live server, real saved topology): looking never edits.

alice's pod-2 (2 DGX-H100 hosts h0, h1 under a rail-optimized fabric, revision r1). In the
editor she collapses h0 by double-click and expands it again, searches for ``h1/nic3``, zooms,
and reloads the tab: the status stays "saved · rev 1", no undo step appears, leaving would not
ask "leave site?", and the reload restores her view (sessionStorage per topology). One edit (a
new NVMe drive) then marks the topology unsaved and arms the prompt; undo takes only it back.
Screenshots: ``$ARTIFACTS_DIR/screenshots/view-state-*.png``.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser.conftest import wait_until_at_rest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PREVENTED = """() => {
    const e = new Event('beforeunload', { cancelable: true });
    window.dispatchEvent(e);
    return e.defaultPrevented;
}"""


def stats(page) -> dict:
    return page.evaluate("fabricscopeEditor.stats()")


def open_editor(page, url: str):
    page.goto(url)
    page.wait_for_function("window.fabricscopeEditor !== undefined")
    page.wait_for_selector("#fabricscope-editor canvas")
    return page


def group_xy(page, ref: str) -> tuple[float, float]:
    return tuple(page.evaluate("""(ref) => {
        const ed = fabricscopeEditor.editor;
        const p = ed.view.elementFor('group', ref).renderedPosition();
        const r = ed.canvas.getBoundingClientRect();
        return [r.left + p.x, r.top + p.y];
    }""", ref))


def assert_clean(page, what: str):
    s = stats(page)
    assert not s["dirty"] and s["undo"] == 0, (what, s)
    assert page.locator(".fs-status").inner_text() == "saved · rev 1", what
    assert not page.evaluate(PREVENTED), what


def test_expand_search_zoom_reload_never_dirty_an_edit_does(app_page, live_server, user, sign_in,
                                                             shot):
    from designer import services

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    page = sign_in(app_page, "alice", "alice-password-1")
    url = live_server.url + reverse("editor", args=[topology.pk])
    open_editor(page, url)
    assert_clean(page, "opened")
    saved = page.evaluate("fabricscopeEditor.getDocument()")
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h0')")
    page.keyboard.press("e")
    wait_until_at_rest(page)
    assert stats(page)["collapsed"] == 1
    page.evaluate("fabricscopeEditor.editor.fit()")
    wait_until_at_rest(page)
    page.mouse.dblclick(*group_xy(page, "h0"))                 # expand again
    wait_until_at_rest(page)
    assert stats(page)["collapsed"] == 0
    assert_clean(page, "collapse and expand")
    page.fill(".fs-search", "h1/nic3")
    page.press(".fs-search", "Enter")
    wait_until_at_rest(page)
    assert stats(page)["selected"] == ["n:h1/nic3"]
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['h0'])")
    wait_until_at_rest(page)
    assert_clean(page, "search, focus, collapse")
    shot(page, "view-state-01-looked", full_page=False)
    before = stats(page)
    page.wait_for_timeout(300)                                   # viewport writes are debounced
    page.reload()
    page.wait_for_function("window.fabricscopeEditor !== undefined")
    after = stats(page)
    assert after["collapsed"] == 1 and after["zoom"] == pytest.approx(before["zoom"], rel=1e-6)
    assert_clean(page, "reloaded")
    assert page.evaluate("fabricscopeEditor.getDocument()") == saved
    # One edit: an NVMe drive from the palette.
    page.click('.fs-kind[data-kind="nvme"]')
    page.wait_for_function("fabricscopeEditor.stats().dirty")
    assert page.locator(".fs-status").inner_text().startswith("● unsaved")
    assert page.evaluate(PREVENTED)
    shot(page, "view-state-02-edited", full_page=False)
    page.click('button[data-action="undo"]')
    assert_clean(page, "undone")
    assert page.evaluate("fabricscopeEditor.getDocument()") == saved
    assert not page.js_errors
