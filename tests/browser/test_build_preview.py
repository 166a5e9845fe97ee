"""The New page's live build preview (static/js/build_preview.js): what it sends, that it says when
its numbers are stale, and that a 100,000-GPU design previews. Screenshots: build-01-oversub.png,
build-02-stale.png, build-03-100k.png (ARTIFACTS_DIR/screenshots/).

64 × DGX-H100 on eth-51t2 (128 × 400G), oversubscription 1.5: one leaf per rail holds the 64
hosts (max_down_ports(128, 1.5) = 76), 64 host ports want ceil(64/1.5) = 43 uplinks; the fewest
spines: S = ceil(8 × 43 / 128) = 3, bundles of 15 (64 + 45 = 109 ≤ 128 ports; a spine 8 × 15 =
120 ≤ 128) → 8 leaves + 3 spines = 11 switches, 64 : 45 = 1.42:1. Sent as 1 (the bug), it was
1:1 with 8 + 8 = 16 switches.
"""
from __future__ import annotations

import json
import re

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"
PREVIEW = "/api/v1/topologies/build-preview/"


def _stat(page, key: str) -> str:
    return page.locator(f'#build-preview [data-k="{key}"]').inner_text()


def test_oversubscription_is_previewed_as_typed_and_built_the_same(app_page, live_server, user, sign_in, shot):
    page = sign_in(app_page, "alice", PASSWORD)
    sent = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if PREVIEW in r.url else None)
    page.goto(f"{live_server.url}/topologies/new/")
    page.fill("#id_name", "o15")
    page.select_option("#id_switch", "eth-51t2")
    page.fill("#id_oversubscription", "1.5")
    page.fill("#id_hosts", "64")
    page.wait_for_function("() => document.querySelector('#build-preview [data-k=gpus]').textContent === '512'"
                           " && document.querySelector('#build-preview').dataset.state === 'ok'")
    assert sent[-1]["oversubscription"] == 1.5 and sent[-1]["document"] is False
    assert _stat(page, "switches") == "11"
    assert "leaf 1.42:1" in _stat(page, "oversub")
    shot(page, "build-01-oversub")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    counts = page.locator("#bom-switches tbody tr td:nth-child(3)").all_inner_texts()
    assert sum(int(c) for c in counts) == 11
    assert "leaf 1.42:1" in page.locator("#bom").inner_text()


def test_the_preview_says_when_its_numbers_are_stale(app_page, live_server, user, sign_in, shot):
    """A slow answer (held here until the checks are done) keeps the old numbers on screen: they
    are dimmed and the status says they are being updated, from the first keystroke until the
    answer arrives."""
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/new/")
    page.fill("#id_hosts", "16")
    page.wait_for_function("() => document.querySelector('#build-preview [data-k=gpus]').textContent === '128'"
                           " && document.querySelector('#build-preview').dataset.state === 'ok'")

    held = []
    page.route(f"**{PREVIEW}", lambda route: held.append(route))
    page.fill("#id_hosts", "32")
    box = page.locator("#build-preview")
    assert box.get_attribute("data-state") == "stale"  # at once, before the request leaves
    page.wait_for_function("() => document.querySelector('#build-preview').dataset.state === 'busy'")
    assert box.get_attribute("aria-busy") == "true"
    assert "Updating" in box.locator("[data-preview-status]").inner_text()
    assert _stat(page, "gpus") == "128"  # the old number, shown as such
    opacity = box.locator("[data-preview-stats]").evaluate("el => getComputedStyle(el).opacity")
    assert float(opacity) < 0.6
    box.scroll_into_view_if_needed()
    shot(page, "build-02-stale", full_page=False)
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_function("() => document.querySelector('#build-preview').dataset.state === 'ok'", timeout=20_000)
    assert _stat(page, "gpus") == "256" and box.get_attribute("aria-busy") is None
    assert float(box.locator("[data-preview-stats]").evaluate("el => getComputedStyle(el).opacity")) == 1


def test_a_100k_gpu_design_previews(app_page, live_server, user, sign_in, shot):
    """12,500 × DGX-H100 (past the 2,048 hosts a created topology may have): 100,000 GPUs."""
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/new/")
    page.fill("#id_hosts", "12500")
    page.wait_for_function("() => document.querySelector('#build-preview [data-k=gpus]').textContent === '100,000'",
                           timeout=30_000)
    assert page.locator("#build-preview").get_attribute("data-state") == "ok"
    assert "core" in page.locator("#build-preview [data-preview-switches]").inner_text()
    shot(page, "build-03-100k")
