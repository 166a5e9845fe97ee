"""The physical-plan page in a real browser (headless Chromium, live server).

alice opens her 8-host DGX-H100 topology (64 GPUs, rail-optimized), follows the Floor plan link
and sees the racks as an elevation (3 DGX a 40 kW rack: 3 + 3 + 2, a network rack of leaves at
the end of the row, the spines in a spine row), the costed BOM and the cable schedule; she
downloads the schedule as CSV (one line per cable); then lowers the rack budget to 10 kW, under
one DGX H100's 10.2 kW, and every compute rack turns red and is named in the flags.

    [h0..h7: 8×H100, 8×NIC] ==rail 0..7== [leaf0..leaf7] == [spine*]

Screenshots: ``$ARTIFACTS_DIR/screenshots/plan.png``, ``plan-over-budget.png``.
"""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pod(user):
    from designer import services

    return services.topology_build(owner=user, name="pod-8", template="dgx-h100", hosts=8, options={})


def test_racks_bom_cables_csv_and_over_budget(app_page, live_server, sign_in, shot, pod):
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/")
    page.click("#plan-link")
    page.wait_for_selector("#plan-racks")
    assert "Floor plan" in page.inner_text("h1")
    compute = page.locator("#plan-racks .rack").filter(has=page.locator(".dev.k-server"))
    assert [compute.nth(i).locator(".dev.k-server").count() for i in range(compute.count())] == [3, 3, 2]
    assert page.locator("#plan-racks .rack.over").count() == 0
    assert page.locator("#plan-racks .dev.k-switch").count() >= 8
    cables = page.locator("#plan-cables tbody tr").count()
    assert cables == 100  # the first 100 rows of the schedule
    assert "servers" in page.inner_text("#plan-bom") and "dgx-h100" in page.inner_text("#plan-bom")
    assert page.js_errors == []
    page.fill("#id_rows", "12")
    page.click("#plan-submit")
    page.wait_for_selector("#plan-racks")
    assert page.locator("#plan-cables tbody tr").count() == 12
    shot(page, "plan")

    csv = page.request.get(page.get_attribute("#plan-csv", "href") and
                           live_server.url + page.get_attribute("#plan-csv", "href"))
    assert csv.ok and csv.headers["content-type"].startswith("text/csv")
    lines = csv.text().strip().splitlines()
    assert lines[0].startswith("label,a_device,a_port")
    bom = page.request.get(f"{live_server.url}/api/v1/topologies/{pod.pk}/bom/").json()
    assert len(lines) - 1 == sum(bom["cables"].values())

    page.fill("#id_rack_kw", "10")
    page.click("#plan-submit")
    page.wait_for_selector("#plan-flags")
    over = page.locator("#plan-racks .rack.over")
    assert over.count() == 8  # one DGX H100 (10.2 kW) a rack, each over 10 kW
    flags = page.inner_text("#plan-flags")
    assert "racks[R01-01]" in flags and "over the rack's 10 kW budget" in flags
    assert page.js_errors == []
    shot(page, "plan-over-budget")
