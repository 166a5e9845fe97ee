"""The editor opens a 32,768-GPU design collapsed, within 2 s.

The design: 4,096 × DGX-H100, rail-optimized on eth-51t2 (128 × 400G), three tiers
(``services.topology_build``: 206,080 devices, 382,976 links, ~58 MB of JSON)::

    super-spines: [core0 … core255]          the top tier, one group
    [pod0] [pod1] … [pod7]                  each: 64 leaves, 64 spines, 128 racks of 4 hosts
       rack → h{i} → 8 H100, NVSwitches, PCIe, NICs

The editor opens it at the level of its group hierarchy that fits the screen
(``viewstate.autoCollapsed``): 8 pods + the super-spines = 9 nodes and 8 aggregate edges
(pod ⇄ super-spines). Expanding pod0 shows its 128 racks (closed) and its 128 switches;
expanding a rack shows its 4 hosts (closed).

Measured and printed (``-s``), for a first open in a web process that did not save the design
(its cache cleared: the compressed document comes from the disk store the save wrote,
``designer/editor_document.py``) and a second one (from the process's cache; the browser's HTTP
cache is off for both): navigation → first collapsed frame (the 2 s target), split as
``tests/browser/editor_timing.py`` describes. See docs/PERFORMANCE.md for the figures and the
method.
"""
from __future__ import annotations

import time

import pytest

from tests.browser.conftest import wait_until_at_rest
from tests.browser.editor_timing import open_editor

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "alice-password-1"
HOSTS = 4096
# The 2 s target (navigation → first collapsed frame); the 2 shared cores of the test machine
# run other work (load ~3-8), so the test asserts a looser bound and prints the measured figure.
NAVIGATION_TARGET_MS = 2000
NAVIGATION_LIMIT_MS = 5 * NAVIGATION_TARGET_MS
# The page itself stays small: the ~85 MB document is never inlined in it.
PAGE_LIMIT_BYTES = 1_000_000


def test_32k_gpu_design_opens_collapsed(app_page, live_server, user, sign_in, shot, settings):
    from designer import editor_document, services

    settings.FABRICSCOPE_BUILD_MAX_ELEMENTS = 0  # one request may build it here (0: no limit)
    settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE = 0

    started = time.process_time()
    topology = services.topology_build(owner=user, name="pod-32k", template="dgx-h100",
                                       hosts=HOSTS, options={"switch": "eth-51t2"})
    build_cpu_s = time.process_time() - started
    assert topology.gpu_count == 8 * HOSTS
    page = sign_in(app_page, "alice", PASSWORD)
    # Main-thread busy time (CDP Performance.TaskDuration) beside the wall clock: on 2 cores
    # shared with other test runs, the wall clock also counts time the renderer waited for a CPU.
    # The browser's HTTP cache is off: each open downloads the document.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    url = f"{live_server.url}/topologies/{topology.pk}/editor/"
    editor_document.cache_clear()
    print(f"\n32k-GPU design ({topology.node_count:,} devices, {topology.link_count:,} links; "
          f"build + store {build_cpu_s:.1f} s CPU); target {NAVIGATION_TARGET_MS} ms")
    # First open: as a new web process (the disk store, written by the save); then its cache.
    for label in ("first open (a new web process)", "second open (server cache)"):
        t, s = open_editor(page, cdp, url, label)
        assert (s["nodes"], s["links"]) == (206_080, 382_976)
        assert s["visibleNodes"] == 8 + 1 and s["visibleEdges"] == 8
        assert t["docFetches"] == 1  # the preload served the editor's fetch: one download
        assert t["pageBytes"] < PAGE_LIMIT_BYTES < t["docDecoded"]
        assert t["frame"] < NAVIGATION_LIMIT_MS
    wait_until_at_rest(page)
    shot(page, "editor-32k-pods")

    # One level down: pod0 shows its racks (closed) and its leaves and spines.
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['pod0'])")
    s = page.evaluate("fabricscopeEditor.stats()")
    assert s["visibleNodes"] == 9 + 128 + 128  # pod0's box stays; its 128 racks, 64 leaves + 64 spines
    page.evaluate("fabricscopeEditor.editor.toggleCollapse(['rack0'])")
    s = page.evaluate("fabricscopeEditor.stats()")
    assert s["visibleNodes"] == 9 + 128 + 128 + 4  # + rack0's 4 hosts, closed
    page.evaluate("fabricscopeEditor.editor.focusElement('group', 'rack0')")
    wait_until_at_rest(page)
    shot(page, "editor-32k-pod0-rack0")
