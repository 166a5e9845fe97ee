"""The Content-Security-Policy in a real browser: every page renders with it and the browser
reports no violation (headless Chromium against the live server).

A policy that blocks what a page needs fails quietly — Plotly draws nothing, the editor stays
blank — so this listens for the browser's own ``securitypolicyviolation`` events and
"Content Security Policy" console messages on the pages that run the most script: the editor
(Cytoscape), the host matrix, a result (Plotly), a job page, and a share-link result opened
without an account. (Here rather than in tests/security/ because Playwright's sync API allows
one browser per thread: the session's ``browser`` fixture lives in tests/browser/conftest.py.)
"""
from __future__ import annotations

import pytest

from tests.browser.conftest import _page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Injected by the browser driver (not subject to the page's policy): records every violation.
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
    (e) => window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`));
"""


@pytest.fixture
def pod(user, published):
    """alice's pod-2 (2 DGX-H100) with one finished simulation and a link to its result."""
    from designer import services
    from tests.conftest import RING_ALLREDUCE
    from tests.sharing.conftest import finish

    topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    scenario = services.scenario_create(topology=topology, user=user, name="ring",
                                        workload=RING_ALLREDUCE)
    job = finish(services.job_submit_simulate(scenario=scenario, user=user))
    _, token = services.share_link_create(topology=topology, actor=user, job=job)
    return topology, job, token


def watched_page(browser_):
    context, page = _page(browser_, "light")
    page.add_init_script(RECORD_VIOLATIONS)
    page.console_csp = []
    page.on("console", lambda m: page.console_csp.append(m.text)
            if "Content Security Policy" in m.text else None)
    return context, page


def violations(page) -> list[str]:
    return page.evaluate("window.__csp || []") + page.console_csp


def test_pages_render_under_the_policy(chromium_browser, live_server, sign_in, pod):
    topology, job, token = pod
    base = live_server.url
    context, page = watched_page(chromium_browser)
    sign_in(page, "alice", "alice-password-1")
    checks = {
        f"/topologies/{topology.pk}/editor/": "() => window.fabricscopeEditor "
                                               "&& fabricscopeEditor.stats().nodes > 0",
        f"/topologies/{topology.pk}/hosts/": "() => document.querySelectorAll('#topo-matrix td')"
                                             ".length > 0",
        f"/jobs/{job.pk}/result/": "() => document.querySelector('#fig-topology .plot-container,"
                                   " #fig-topology svg') !== null",
        f"/jobs/{job.pk}/": "() => document.getElementById('job') !== null",
        f"/topologies/{topology.pk}/": "() => document.querySelector('h1') !== null",
    }
    for path, rendered in checks.items():
        response = page.goto(base + path)
        assert response.status == 200, path
        assert "script-src 'self';" in response.headers["content-security-policy"]
        page.wait_for_function(rendered, timeout=30_000)
        assert violations(page) == [], path
    assert page.js_errors == []
    context.close()

    guest_context, guest = watched_page(chromium_browser)
    guest.goto(f"{base}/s/{token}/")
    guest.wait_for_function("() => document.querySelector('#fig-topology .plot-container, "
                            "#fig-topology svg') !== null", timeout=30_000)
    assert violations(guest) == [] and guest.js_errors == []
    guest_context.close()
