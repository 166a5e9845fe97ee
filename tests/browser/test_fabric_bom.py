"""New-topology form with its live build preview, then the topology page's bill of materials
(issue 16). Screenshots: fabric-01-new-preview.png, fabric-02-bom.png.

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
