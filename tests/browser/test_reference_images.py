"""Reference images of the editor (tolerant diff, tests/browser/imagediff.py): a regression in how
a topology is drawn is seen, not only its data.

alice's 1,024-GPU cluster (128 DGX-H100 under a rail-optimized fabric, built from the template)
opens with its hosts collapsed; then one host (h0) is expanded and framed: its PCIe tree with the
NICs on the fabric side, in the kind colours and shapes every result view uses (designer/figures/
style.py, #fs-style). References live in tests/browser/reference/; after a wanted change, run with
FABRICSCOPE_UPDATE_REFERENCES=1 and look at the new pictures before committing them.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser.conftest import screenshot_dir, wait_until_at_rest
from tests.browser.imagediff import MAX_CHANGED_SHARE, MAX_MEAN_DIFF, assert_matches_reference, image_diff

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def canvas_png(page) -> bytes:
    """The editor's canvas, its status line masked (it prints a render time that varies)."""
    wait_until_at_rest(page)
    page.mouse.move(0, 0)
    return page.locator(".fs-canvas").screenshot(animations="disabled", mask=[page.locator(".fs-footer")])


def test_editor_1024_gpus_collapsed_and_one_host_expanded_match_references(app_page, live_server, user, sign_in,
                                                                         browser):
    from designer import services

    topology = services.topology_build(owner=user, name="cluster-1024", template="dgx-h100", hosts=128)
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(live_server.url + reverse("editor", args=[topology.pk]))
    page.wait_for_function("window.fabricscopeEditor !== undefined")
    page.wait_for_selector("#fabricscope-editor canvas")
    kinds = page.evaluate("JSON.parse(document.getElementById('fs-style').textContent).kinds")
    assert kinds["gpu"]["shape"] == "round-rectangle" and kinds["nic"]["color"] == "#e69f00"
    assert page.evaluate("fabricscopeEditor.stats().collapsed") == 128
    page.evaluate("fabricscopeEditor.editor.fit()")
    collapsed = canvas_png(page)
    shots = screenshot_dir()
    (shots / "reference-editor-1024-collapsed.png").write_bytes(collapsed)
    print(f"\neditor 1,024 GPUs collapsed vs reference: "
          f"{assert_matches_reference(browser, collapsed, 'editor-1024-collapsed', shots)}")

    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['h0'])")
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'h0')")
    expanded = canvas_png(page)
    (shots / "reference-editor-host-expanded.png").write_bytes(expanded)
    print(f"editor one host expanded vs reference: "
          f"{assert_matches_reference(browser, expanded, 'editor-host-expanded', shots)}")
    # The comparison can fail: the two views differ far beyond the tolerance.
    apart = image_diff(browser, collapsed, expanded)
    assert "size" in apart or apart["mean"] > MAX_MEAN_DIFF or apart["changed"] > MAX_CHANGED_SHARE, apart
