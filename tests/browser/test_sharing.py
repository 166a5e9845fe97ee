"""Sharing in a real browser (headless Chromium, live server): alice shares pod-2 with bob as a
viewer; bob finds it under "Shared with me", gets a read-only editor (no Save), an API write is
refused (403), he forks it; alice revokes, and bob's next visit is a 404. A read-only result
link opened in a fresh browser context (no account) shows the result without edit controls.

Screenshots: ``$ARTIFACTS_DIR/screenshots/sharing-*.png``.
"""
from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def shared_pod(user, other_user, published):
    """alice's pod-2 (2 DGX-H100, r1), scenario "ring", one finished simulation."""
    from designer import services
    from tests.conftest import RING_ALLREDUCE
    from tests.sharing.conftest import finish

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2,
                                       options={"storage": 1}, description="two DGX H100")
    scenario = services.scenario_create(topology=topology, user=user, name="ring",
                                        workload=RING_ALLREDUCE)
    job = finish(services.job_submit_simulate(scenario=scenario, user=user))
    return topology, job


def test_share_view_fork_revoke_and_result_link(chromium_browser, app_page, live_server,
                                                sign_in, shot, shared_pod):
    topology, job = shared_pod
    base = live_server.url

    # alice shares with bob as a viewer, on the sharing page
    alice = sign_in(app_page, "alice", "alice-password-1")
    alice.goto(f"{base}/topologies/{topology.pk}/")
    alice.click("#share-button")
    alice.fill("#id_name", "bob")
    alice.select_option("#id_role", "viewer")
    alice.click("#grant-form button[type=submit]")
    assert alice.locator("#share-table").get_by_role("cell", name="bob", exact=True).is_visible()
    # and creates a read-only link to the result
    alice.select_option("#link-job", str(job.pk))
    alice.fill("#id_label", "for the vendor review")
    alice.click("#link-form button[type=submit]")
    link_url = alice.locator("#new-link-url").inner_text().strip()
    assert re.search(r"/s/[A-Za-z0-9_-]{43}/$", link_url), link_url
    shot(alice, "sharing-01-owner-sharing-page")

    # bob: "Shared with me" lists it with his role
    bob_context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    bob = bob_context.new_page()
    bob.set_default_timeout(15_000)
    bob.js_errors = []
    bob.on("pageerror", lambda exc: bob.js_errors.append(str(exc)))
    sign_in(bob, "bob", "bob-password-1")
    bob.goto(f"{base}/topologies/?tab=shared")
    row = bob.locator("#topology-table tbody tr", has_text="pod-2")
    assert row.locator("[data-role=viewer]").is_visible()
    assert "alice" in row.inner_text()
    shot(bob, "sharing-02-shared-with-me")

    # topology page: read-only view, no new-scenario, fork offered
    row.locator("a.row-link").click()
    assert bob.locator("#my-role").text_content().strip() == "viewer"   # DOM text; CSS capitalizes it
    assert bob.locator("text=Open editor").count() == 0
    assert bob.locator("text=New scenario").count() == 0
    shot(bob, "sharing-03-viewer-topology")
    bob.click("#view-readonly")
    bob.wait_for_selector(".fs-readonly")
    assert not bob.locator("[data-action=save]").is_visible()
    assert "read-only" in bob.locator(".fs-status").inner_text()
    shot(bob, "sharing-04-viewer-editor-readonly")

    # an API write with bob's session is refused with the standard error shape
    status, body = bob.evaluate("""async (pk) => {
        const csrf = (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || '';
        const r = await fetch(`/api/v1/topologies/${pk}/revisions/`, {method: 'POST',
          headers: {'Content-Type': 'application/json', 'X-CSRFToken': csrf},
          body: JSON.stringify({document: {nodes: []}, base_revision: 1})});
        return [r.status, await r.json()];
    }""", topology.pk)
    assert status == 403 and body["error"]["code"] == "permission_denied", body

    # fork into his own space
    bob.goto(f"{base}/topologies/{topology.pk}/")
    bob.click("#fork-button")
    assert bob.get_by_role("heading", name="pod-2 (fork)").is_visible()
    assert bob.locator("text=Open editor").count() == 1  # his own copy
    shot(bob, "sharing-05-fork")

    # alice revokes; bob loses access at once
    alice.goto(f"{base}/topologies/{topology.pk}/sharing/")
    alice.once("dialog", lambda dialog: dialog.accept())
    alice.locator("#share-table tr", has_text="bob").locator("button", has_text="Revoke").click()
    alice.wait_for_load_state()
    assert alice.locator("#share-table").get_by_role("cell", name="bob", exact=True).count() == 0
    shot(alice, "sharing-06-after-revoke")
    response = bob.goto(f"{base}/topologies/{topology.pk}/")
    assert response.status == 404
    shot(bob, "sharing-07-revoked-404")
    assert not bob.js_errors, bob.js_errors
    bob_context.close()

    # the result link, in a fresh context without any account
    guest_context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    guest = guest_context.new_page()
    guest.set_default_timeout(15_000)
    response = guest.goto(link_url)
    assert response.status == 200 and f"/results/{job.pk}/" in guest.url
    assert guest.locator("#share-banner").is_visible()
    assert guest.get_by_role("heading", name=re.compile("Simulation result")).is_visible()
    guest.wait_for_selector("#fig-topology .plot-container, #fig-topology svg", timeout=30_000)
    for control in ("Sign out", "Share result", "Cancel job", "Open editor"):
        assert guest.locator(f"text={control}").count() == 0, control
    assert guest.locator("form[method=post]").count() == 0
    shot(guest, "sharing-08-result-link")
    # the topology itself is not part of a result link
    assert guest.goto(link_url.replace("/s/", "/s/") + "editor/").status == 404
    guest_context.close()
    assert not alice.js_errors, alice.js_errors
