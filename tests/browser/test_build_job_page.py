"""The New page's large build as a job, in a real browser: the form goes to the job page, which
follows the build and opens the topology when it is saved. Screenshots ``build_job_queued.png``
and ``build_job_done.png`` under the screenshot directory (conftest ``shot``).

The inline limit (``facts.MAX_BUILD_HOSTS``) is lowered to 2 so that 4 DGX-H100 hosts (32 GPUs)
take the job path; the job runs in this process, as a worker runs it.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_new_page_builds_a_large_cluster_by_a_job(app_page, live_server, sign_in, shot, user,
                                                  published, monkeypatch):
    from designer import services
    from designer.models import SimulationJob

    monkeypatch.setattr("designer.bridge.facts.MAX_BUILD_HOSTS", 2)
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(live_server.url + reverse("topology_new"))
    page.fill("#id_name", "pod-4")
    page.fill("#id_hosts", "4")
    page.click("button:has-text('Create topology')")
    page.wait_for_selector("#job")
    job = SimulationJob.objects.get(topology__name="pod-4")
    assert page.url.endswith(reverse("job_detail", args=[job.pk]))
    assert "Build of" in page.inner_text("body") and "dgx-h100" in page.inner_text("body")
    shot(page, "build_job_queued")

    services.job_run(job_id=job.pk, hostname="w@test", task_id=published[0][2])
    page.wait_for_selector("#job-result:not([hidden])", timeout=30000)
    assert "Open topology" in page.inner_text("#job-result")
    page.wait_for_timeout(600)  # the bar's width transition
    shot(page, "build_job_done")
    page.wait_for_url(live_server.url + reverse("topology_detail", args=[job.topology_id]), timeout=30000)
    body = page.inner_text("body")
    assert "pod-4" in body and "r1" in body
    assert not page.js_errors, page.js_errors
