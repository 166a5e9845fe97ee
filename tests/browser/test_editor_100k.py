"""The editor opens a 100,000-GPU design collapsed (issue 38's target: within 3 s).

The design: 12,500 × DGX-H100, rail-optimized, three tiers, built as the New page builds a
cluster over ``MAX_BUILD_HOSTS`` hosts: a ``build`` job (``designer/services/builds.py``, the
lean path), run here in this process as a worker runs it (628,968 devices, 1,262,180 links,
~259 MB of JSON as stored).

Measured and printed (``-s``), for the first open after the build (the web process did not
build it: its cache is cleared first, as a web process apart from the worker starts) and a
second one (the browser's HTTP cache off for both): navigation → first collapsed frame, split as
``tests/browser/editor_timing.py`` describes. See docs/PERFORMANCE.md, "100,000 GPUs in the
browser", for the figures and the method. Then one device is added and saved (target: within
2 s, click → saved), as ``tests/browser/test_large_save.py`` does at 2,048 hosts.
"""
from __future__ import annotations

import time

import pytest

from tests.browser.conftest import wait_until_at_rest
from tests.browser.editor_timing import open_editor

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"
HOSTS = 12_500
# The 3 s target (navigation → first collapsed frame); the 2 shared cores of the test machine
# run other work, so the test asserts a loose bound and prints the measured figure.
NAVIGATION_TARGET_MS = 3000
NAVIGATION_LIMIT_MS = 5 * NAVIGATION_TARGET_MS
# A one-node save (issue 38's target: within 2 s), asserted loosely as the open is.
SAVE_TARGET_MS = 2000
SAVE_LIMIT_MS = 10 * SAVE_TARGET_MS
# At most this many nodes drawn at open (viewstate.autoCollapsed opens levels while ≤ 400 show).
OPEN_VISIBLE_LIMIT = 400


def test_100k_gpu_design_opens_collapsed(app_page, live_server, user, sign_in, shot, published):
    from designer import editor_document, services

    job = services.topology_build_submit(owner=user, name="cluster-100k", template="dgx-h100",
                                         hosts=HOSTS)
    started = time.process_time()
    services.job_run(job_id=job.pk, hostname="w@test", task_id=published[0][2])
    build_cpu_s = time.process_time() - started
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    topology = job.topology
    topology.refresh_from_db()
    assert topology.gpu_count == 8 * HOSTS
    page = sign_in(app_page, "alice", PASSWORD)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    url = f"{live_server.url}/topologies/{topology.pk}/editor/"
    editor_document.cache_clear()  # the worker built it; a web process starts with nothing
    print(f"\n100k-GPU design ({topology.node_count:,} devices, {topology.link_count:,} links; "
          f"build job {build_cpu_s:.1f} s CPU); target {NAVIGATION_TARGET_MS} ms")
    for label in ("first open after the build", "second open"):
        t, s = open_editor(page, cdp, url, label)
        assert (s["nodes"], s["links"]) == (topology.node_count, topology.link_count)
        assert 1 < s["visibleNodes"] <= OPEN_VISIBLE_LIMIT
        assert t["docFetches"] == 1  # the preload served the editor's fetch: one download
        assert t["frame"] < NAVIGATION_LIMIT_MS
    wait_until_at_rest(page)
    shot(page, "editor-100k-collapsed")
    assert not page.js_errors, page.js_errors
    _one_node_save(page, topology)


def _one_node_save(page, topology) -> None:
    """One device from the palette, saved: a patch of a few hundred bytes, answered without the
    document (``Prefer: return=minimal``), stored as a patch on the build's revision (its item
    store written by the job). Printed: click on Save → the editor clean again, and the server's
    part (the request's wall time)."""
    from designer.models import TopologyRevision

    page.click('.fs-kind[data-kind="nvme"]')
    started = time.perf_counter()
    with page.expect_response(lambda r: r.url.endswith("/revisions/") and r.request.method == "POST",
                              timeout=SAVE_LIMIT_MS) as saved:
        page.click('button[data-action="save"]')
        page.fill('dialog[data-dialog="save"] input[name=message]', "one NVMe drive")
        page.click('dialog[data-dialog="save"] button[value=ok]')
    assert saved.value.status == 201, saved.value.text()[:500]
    assert "document" not in saved.value.json()
    page.wait_for_function("!fabricscopeEditor.stats().dirty", timeout=SAVE_LIMIT_MS)
    save_ms = (time.perf_counter() - started) * 1000
    timing = saved.value.request.timing
    server_ms = timing["responseStart"] - timing["requestStart"]
    revision = TopologyRevision.objects.get(topology=topology, number=2)
    assert revision.base_id == topology.current_revision_id and revision.stored_document is None
    print(f"one-node save: {save_ms:.0f} ms from the click (server {server_ms:.0f} ms); "
          f"target {SAVE_TARGET_MS} ms")
    assert save_ms < SAVE_LIMIT_MS
    assert not page.js_errors, page.js_errors
