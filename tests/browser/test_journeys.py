"""User journeys through the real app in headless Chromium: a live Django server, a real Celery
worker for jobs, screenshots of every page in ``$ARTIFACTS_DIR/screenshots/journey-*.png``.

The main journey builds 64 × DGX-H100 on a rail-optimized fabric (512 GPUs, 8 rails)::

    spine0 … spineS
       |  \\ … /  |
    leaf0 … leaf7          (one leaf per rail; NIC i of every host on rail i)
     |||     |||
    h0 … h63 (8 GPUs, 4 NVSwitches, PCIe Gen5 switches, 2 sockets, 8+2 NICs each)
"""
from __future__ import annotations

import re

import pytest

from tests.browser.conftest import wait_until_at_rest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"


def expect(page):
    from playwright.sync_api import expect as _expect

    return _expect


def test_sign_in_errors_then_empty_list(app_page, live_server, user, sign_in, shot):
    page = app_page
    page.goto(live_server.url + "/topologies/")
    assert "/accounts/login/" in page.url  # login required
    sign_in(page, "alice", "not-her-password")
    assert page.locator("#login-error").is_visible()
    assert "did not match" in page.locator("#login-error").inner_text()
    shot(page, "journey-01-sign-in-error")
    sign_in(page, "alice", PASSWORD)
    assert page.url.endswith("/topologies/")
    assert page.get_by_role("heading", name="No topologies yet").is_visible()
    shot(page, "journey-02-empty-list")
    page.click("nav.tabs >> text=Shared with me")
    assert page.get_by_role("heading", name="Nothing shared with you yet").is_visible()
    shot(page, "journey-03-shared-empty")
    # "/" focuses the search box from anywhere on the page.
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    assert not page.js_errors


def test_generate_cluster_scenario_run_to_result(app_page, live_server, user, sign_in, shot,
                                                 celery_worker):
    # A short test delay makes the running state and a moving progress bar observable.
    celery_worker(FABRICSCOPE_TEST_JOB_DELAY="2")
    page = sign_in(app_page, "alice", PASSWORD)
    base = live_server.url

    # New page: a bad host count first, shown next to the field.
    page.click("nav.mainnav >> text=New")
    shot(page, "journey-04-new")
    page.fill("#id_name", "pod-64")
    page.fill("#id_hosts", "0")
    page.click("text=Create topology")
    assert page.locator('[data-field="hosts"] .errorlist').is_visible()
    shot(page, "journey-05-new-error")

    page.fill("#id_hosts", "64")
    page.select_option("#id_template", "dgx-h100")
    page.select_option("#id_fabric", "rail-optimized")
    page.click("text=Create topology")
    page.wait_for_url(re.compile(r"/topologies/\d+/$"))
    assert page.get_by_role("heading", name="pod-64").is_visible()
    stats = page.locator(".stats").inner_text()
    assert "64" in stats and "512" in stats
    shot(page, "journey-06-topology")
    topology_url = page.url

    # Host matrix of h0: DGX H100 GPUs are NV18 apart.
    page.click("text=Host matrix")
    page.wait_for_url(re.compile(r"/hosts/"))
    assert page.locator("#topo-matrix td.pc-nv").count() == 56  # 8 × 7 GPU pairs
    shot(page, "journey-07-host-matrix")
    page.select_option("#host", "h5")
    page.wait_for_url(re.compile(r"host=h5"))
    assert "Host h5" in page.locator("h1").inner_text()

    # Scenario builder: an unknown device in the selector is refused, located on its field.
    page.goto(topology_url)
    page.click(".page-head >> text=New scenario")
    page.wait_for_url(re.compile(r"/scenarios/new/"))
    shot(page, "journey-08-scenario-new")
    page.fill("#id_name", "ring-4g")
    page.select_option("#id_pattern-0-select", "ids")
    page.fill("#id_pattern-0-ids", "h0/gpu0, h99/gpu0")
    page.click("button[value=simulate]")
    page.wait_for_load_state()
    error = page.locator('[data-field="pattern-0-ids"] .errorlist')
    assert error.is_visible() and "h99/gpu0" in error.inner_text()
    assert page.locator("#form-errors").is_visible()
    error.scroll_into_view_if_needed()
    shot(page, "journey-09-scenario-error", full_page=False)

    # Fix it: all GPUs, 4 GB, one NIC down picked from the searchable list.
    page.select_option("#id_pattern-0-select", "gpu")
    page.fill("#id_pattern-0-bytes_value", "4")
    page.select_option("#id_pattern-0-bytes_unit", "GB")
    page.fill("input[data-filter-for=id_failures_down]", "h3/nic2")
    page.keyboard.press("Enter")   # the targets are searched on the server: the chip comes with its answer
    expect(page)(page.locator(".picked")).to_contain_text("h3/nic2", timeout=10_000)
    page.click("button[value=simulate]")
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    job_url = page.url
    shot(page, "journey-10-job-start")

    # Live progress: the page changes state on its own (no reload) until the job ends.
    expect(page)(page.locator("#job-state .badge")).to_have_attribute(
        "data-state", re.compile("running|succeeded"), timeout=60_000)
    shot(page, "journey-11-job-running")
    page.wait_for_function(
        "document.getElementById('job') === null || "
        "['succeeded','failed','cancelled'].includes(document.getElementById('job').dataset.state)",
        timeout=120_000)
    if page.url == job_url:
        wait_until_at_rest(page)  # the bar's width transition
        shot(page, "journey-12-job-done")
        state = page.locator("#job").get_attribute("data-state")
        assert state == "succeeded", page.locator("#job-error").inner_text()
        assert page.locator("#job-pct").inner_text() == "100%"
    # Where the result page is installed the job page moves there by itself.
    if page.locator("#job-result").is_visible() or page.url != job_url:
        page.wait_for_url(re.compile(r"/result/"), timeout=15_000)
        # On a condition, not the network: every figure is drawn (results.js sets the flag).
        page.wait_for_function("document.documentElement.getAttribute('data-figures-ready') === '1'",
                               timeout=30_000)
        shot(page, "journey-13-result")
        assert "Simulation result" in page.locator("h1").inner_text()
    assert not page.js_errors, page.js_errors


def test_topology_pages_and_profile_dark(dark_page, live_server, user, sign_in, shot):
    """Dark mode screenshots of the topology page, a revision diff, the builder and the profile."""
    from designer import services

    topology = services.topology_build(owner=user, name="pod-2", template="aws-p5", hosts=2,
                                       description="Two p5 hosts: 32 EFA NICs each.")
    doc = topology.current_revision.document
    doc2 = dict(doc, nodes=[*doc["nodes"], {"id": "extra-leaf", "kind": "switch",
                                            "attrs": {"role": "leaf"}}])
    services.revision_save(topology=topology, user=user, document=doc2, base_revision=1,
                           message="add a spare leaf")
    services.scenario_create(topology=topology, user=user, name="a2a",
                             workload=[{"id": "moe", "kind": "alltoall",
                                        "participants": {"kind": "gpu"}, "bytes": 1e8}])
    page = sign_in(dark_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/")
    shot(page, "journey-20-list-dark")
    page.click("text=pod-2")
    shot(page, "journey-21-topology-dark")
    page.click("text=Show diff")
    assert "extra-leaf" in page.locator("#diff-nodes").inner_text()
    shot(page, "journey-22-diff-dark")
    page.goto(f"{live_server.url}/topologies/{topology.pk}/hosts/")
    shot(page, "journey-23-host-matrix-dark")
    page.goto(f"{live_server.url}/topologies/{topology.pk}/")
    page.click("text=a2a")
    # The builder's script binds "+ Add pattern" when the page has loaded; a click before that
    # would land on a button without its handler (seen on a loaded CI machine).
    page.wait_for_load_state("load")
    page.click("text=+ Add pattern")
    page.select_option("#id_pattern-1-kind", "p2p")
    assert page.locator("#id_pattern-1-src").is_visible()
    assert not page.locator("#id_pattern-1-algorithm").is_visible()
    page.click("button[value=save]")
    page.wait_for_load_state()
    # An empty p2p source/destination is refused by the engine, next to the fields.
    src_error = page.locator('[data-field="pattern-1-src"] .errorlist')
    assert src_error.is_visible()
    src_error.scroll_into_view_if_needed()
    shot(page, "journey-24-scenario-error-dark", full_page=False)
    page.fill("#id_pattern-1-src", "h0/gpu0")
    page.fill("#id_pattern-1-dst", "h1/gpu0")
    page.click("button[value=save]")
    page.wait_for_load_state()
    shot(page, "journey-24b-scenario-after-save-dark", full_page=False)
    assert "Saved scenario" in page.locator(".flash-wrap").inner_text()

    page.click(".usernav .user")
    page.click("text=Create token")
    key = page.locator("#new-token").inner_text()
    assert re.fullmatch(r"fsk_[A-Za-z0-9_-]{43}", key)   # 256 random bits (designer/services/tokens.py)
    shot(page, "journey-25-profile-token-dark")
    page.goto(page.url.replace("/profile/token/", "/profile/"))   # visited again: the key is not shown twice
    assert page.locator("#new-token").count() == 0  # shown once
    page.once("dialog", lambda d: d.accept())
    page.click("text=Revoke")
    page.wait_for_load_state()
    assert "API token revoked" in page.locator(".flash-wrap").inner_text()
    assert not page.js_errors, page.js_errors


def test_editor_page_renders(app_page, live_server, user, sign_in, shot):
    from designer import services

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    page = sign_in(app_page, "alice", PASSWORD)
    page.goto(f"{live_server.url}/topologies/{topology.pk}/editor/")
    page.wait_for_selector("#fabricscope-editor canvas", timeout=20_000)
    page.wait_for_function("window.fabricscopeEditor !== undefined", timeout=20_000)
    wait_until_at_rest(page)
    shot(page, "journey-30-editor", full_page=False)
    assert not page.js_errors, page.js_errors
