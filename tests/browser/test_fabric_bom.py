"""New-topology form with its live build preview, then the topology page's bill of materials.
Screenshots: fabric-01-new-preview.png, fabric-02-bom.png.

Preview of 16 x DGX-H100, rail-optimized, eth-51t2, 1 storage server: 128 GPUs, 8 rail leaves +
1 storage leaf + 2 spines = 11 switches.
"""
from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"


def test_new_form_preview_and_bom(app_page, live_server, user, sign_in, shot):
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/new/")
    page.fill("#id_name", "pod-16")
    page.select_option("#id_template", "dgx-h100")
    page.select_option("#id_switch", "eth-51t2")
    page.fill("#id_storage", "1")
    page.fill("#id_hosts", "16")
    box = page.locator("#build-preview")
    page.wait_for_function("() => document.querySelector('#build-preview [data-k=gpus]').textContent === '128'")
    assert box.locator('[data-k="switches"]').inner_text() == "11"
    assert "storage-leaf" in box.locator("[data-preview-links]").inner_text()
    shot(page, "fabric-01-new-preview")

    page.fill("#id_leaves_per_rail", "0")  # a bad value: the preview says where
    page.wait_for_function("() => /leaves_per_rail/.test(document.querySelector("
                           "'#build-preview [data-preview-status]').textContent)")
    page.fill("#id_leaves_per_rail", "")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    bom = page.locator("#bom")
    assert "eth-51t2" in bom.locator("#bom-switches").inner_text()
    assert "in-row" in bom.locator("#bom-links").inner_text()
    bom.scroll_into_view_if_needed()
    shot(page, "fabric-02-bom")


def test_editor_generate_dialog_is_the_same_form(app_page, live_server, user, sign_in, shot):
    """The editor's Generate dialog is the New page's form (same fields, same live preview); a
    request that cannot be built says why with numbers and keeps the dialog open; Enter generates.

    512 × DGX-H100 on eth-51t2 in 128 × 400 G mode: a leaf holds 64 hosts per rail, so
    leaves_per_rail = 1 is refused ("... holds 64 ... (use ≥ 8)"). 2 hosts, rail-optimized:
    16 GPUs, 8 rail leaves + 2 spines = 10 switches.
    """
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/new/")
    page.fill("#id_name", "blank-one")
    page.click("[data-source-switch] label:has(input[value=blank])")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    page.goto(page.url + "editor/")
    page.wait_for_function("() => !!window.fabricscopeEditor")
    page.click('button[data-action="generate"]')
    dialog = page.locator('dialog[data-dialog="generate"]')
    new_fields = {"template", "hosts", "fabric", "switch", "oversubscription", "nic_link_tech",
                  "leaves_per_rail", "planes", "tiers", "rails", "spines", "storage", "sharp"}
    names = set(dialog.locator("[data-build-param]").evaluate_all(
        "els => els.map(e => e.dataset.buildParam)"))
    assert names == new_fields
    assert page.evaluate("document.activeElement.name") == "hosts"  # keyboard: type at once

    page.keyboard.type("512")
    dialog.locator("select[name=switch]").select_option("eth-51t2")
    dialog.locator("input[name=leaves_per_rail]").fill("1")
    status = dialog.locator("[data-preview-status]")
    page.wait_for_function("() => /holds 64/.test(document.querySelector("
                           "'dialog[data-dialog=generate] [data-preview-status]').textContent)")
    assert "use ≥ 8" in status.inner_text()
    field = dialog.locator('.field[data-field="leaves_per_rail"]')
    assert "holds 64" in field.inner_text() and "has-error" in field.get_attribute("class")
    shot(page, "fabric-04-editor-dialog-error")
    dialog.locator("input[name=leaves_per_rail]").press("Enter")  # refused: the dialog stays
    page.wait_for_function("() => !document.querySelector("
                           "'dialog[data-dialog=generate] .fs-dialog-error').hidden")
    assert dialog.evaluate("d => d.open")
    assert "holds 64" in dialog.locator(".fs-dialog-error").inner_text()

    dialog.locator("input[name=leaves_per_rail]").fill("")
    dialog.locator("input[name=hosts]").fill("2")
    page.wait_for_function("() => document.querySelector("
                           "'dialog[data-dialog=generate] [data-k=gpus]').textContent === '16'")
    assert dialog.locator('[data-k="switches"]').inner_text() == "10"
    assert "eth-51t2" in dialog.locator("[data-preview-switches]").inner_text()
    shot(page, "fabric-03-editor-dialog-preview")
    dialog.locator("input[name=hosts]").press("Enter")
    page.wait_for_function("() => fabricscopeEditor.stats().nodes > 16")
    assert not dialog.evaluate("d => d.open")
    doc = page.evaluate("fabricscopeEditor.getDocument()")
    assert doc["fabric"]["hosts"] == 2 and doc["fabric"]["switch"] == "eth-51t2"


def test_compare_page_shows_two_boms_side_by_side(app_page, live_server, user, sign_in, shot,
                                                 published):
    """Two finished jobs on two designs: A = 16 × DGX-H100 rail-optimized at o = 1, B = the same
    at o = 2. B's leaves have half the uplinks: fewer spine ports and optics (green), 2:1 leaf
    oversubscription and half the bisection (red)."""
    from tests.designer.test_topology_bom_page import _finished_job

    from designer import services

    a_top = services.topology_build(owner=user, name="rail-16-o1", template="dgx-h100", hosts=16)
    b_top = services.topology_build(owner=user, name="rail-16-o2", template="dgx-h100", hosts=16,
                                    options={"oversubscription": 2.0})
    a, b = _finished_job(a_top, user, published), _finished_job(b_top, user, published)
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/compare/?a={a.pk}&b={b.pk}")
    section = page.locator("#compare-bom")
    section.wait_for()
    assert section.locator("tr[data-differs='1']").count() >= 4
    over = section.locator("tr", has_text="leaf tier")
    assert "2:1" in over.inner_text() and over.locator("td.fs-bad").count() == 1
    section.scroll_into_view_if_needed()
    shot(page, "fabric-05-compare-bom")
