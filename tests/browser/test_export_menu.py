"""The topology page's Export menu in a real browser (headless Chromium, live server).

alice opens her 2-host DGX-H100 topology and drives the Export menu with the keyboard only: Tab
to the button, ArrowDown opens it on the first format, ArrowDown/End move, Escape closes it and
the focus is back on the button. Each format the design can be said in downloads a non-empty file
named ``<name>-r1.<extension>`` as the API names it; the two it cannot (Slurm blocks need NVLink
domains, SimAI's topology has no host interior) show the API's message and located problems in
the page, not raw JSON.

    [h0, h1: 8×H100, 8×CX-7] ==rail 0..7== [leaf0..leaf7] == [spine*]

Screenshots: ``$ARTIFACTS_DIR/screenshots/export-menu.png``, ``export-error.png``.
"""
from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# format -> file name suffix after "<name>-r1." (api.views.export: OPS_EXPORTS and json/graphml)
DOWNLOADS = {"json": "json", "graphml": "graphml", "astra-sim": "astra-sim.json", "htsim": "topo",
             "slurm-tree": "conf", "dot-air": "dot", "netbox": "netbox.json"}
REFUSED = {"slurm-block": "nvlink_domain", "simai-topo": "SimAI"}


@pytest.fixture
def pod(user):
    from designer import services

    return services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={})


def _focused(page) -> str:
    return page.evaluate("() => document.activeElement.dataset.exportFormat || document.activeElement.id")


def test_export_menu_with_the_keyboard_downloads_and_errors(app_page, live_server, sign_in, shot, pod):
    from designer.pages.exports import EXPORT_FORMATS

    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/")
    formats = [f for f, _, _ in EXPORT_FORMATS]
    assert set(formats) == set(DOWNLOADS) | set(REFUSED)

    page.focus("#compare-link")
    page.keyboard.press("Tab")
    assert _focused(page) == "export-button"
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("#export-button", "aria-expanded") == "true"
    assert page.is_visible("#export-menu")
    assert _focused(page) == formats[0]
    page.keyboard.press("ArrowDown")
    assert _focused(page) == formats[1]
    page.keyboard.press("End")
    assert _focused(page) == formats[-1]
    page.keyboard.press("ArrowDown")          # wraps to the first
    assert _focused(page) == formats[0]
    assert "PCIe tree" in page.inner_text('[data-export-format="astra-sim"]')
    shot(page, "export-menu")
    page.keyboard.press("Escape")
    assert not page.is_visible("#export-menu") and _focused(page) == "export-button"

    for fmt in formats:
        page.focus("#export-button")
        page.keyboard.press("Enter")
        while _focused(page) != fmt:
            page.keyboard.press("ArrowDown")
        if fmt in DOWNLOADS:
            with page.expect_download() as info:
                page.keyboard.press("Enter")
            download = info.value
            assert download.suggested_filename == f"pod-2-r1.{DOWNLOADS[fmt]}", fmt
            body = open(download.path(), "rb").read()
            assert body.strip(), fmt
            if fmt in ("json", "astra-sim", "netbox"):
                json.loads(body)
            page.wait_for_selector("#export-status:has-text('Downloaded')")
            assert page.is_hidden("#export-error")
        else:
            page.keyboard.press("Enter")
            page.wait_for_selector("#export-error", state="visible")
            text = page.inner_text("#export-error")
            assert "cannot be exported" in text and REFUSED[fmt] in text, text
            assert '{"error"' not in text and '"code"' not in text
            assert page.locator("[data-export-error-details] li").count() <= 6   # 5 problems + "… and N more"
            shot(page, f"export-error-{fmt}")
    page.click("[data-export-error-close]")
    assert page.is_hidden("#export-error")
    assert page.js_errors == []
