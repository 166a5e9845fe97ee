"""The Diagnose form page: who may open it, a located error next to the run whose log is bad
(400, nothing saved), a good submission going to the job page, and the links to it.

Topology (``small_topology``): 2 DGX H100 hosts ``h0``, ``h1``, rail-optimized. Runs: the
nccl-tests#319 log (``diagnose_support``); the engine is the real one when present.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from designer.models import SimulationJob
from tests.designer.diagnose_support import BAD_LOG, LOG, use_engine

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def engine(monkeypatch):
    return use_engine(monkeypatch)


def test_owner_opens_the_form_stranger_gets_404(client, small_topology, user, other_user):
    client.force_login(user)
    page = client.get(reverse("diagnose", args=[small_topology.pk]) + "?op=all_gather")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="id_run0_text"' in html and 'id="id_run3_hosts"' in html
    assert '<option value="all_gather" selected>' in html
    client.force_login(other_user)
    assert client.get(reverse("diagnose", args=[small_topology.pk])).status_code == 404


def test_links_from_the_topology_and_nccl_tests_pages(client, small_topology, user):
    client.force_login(user)
    target = reverse("diagnose", args=[small_topology.pk])
    assert f'href="{target}"' in client.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    nccl = client.get(reverse("nccl_tests", args=[small_topology.pk])).content.decode()
    assert f'href="{target}?op=all_reduce"' in nccl


def test_bad_log_is_shown_at_its_run_and_nothing_is_saved(client, small_topology, user, published):
    client.force_login(user)
    response = client.post(reverse("diagnose", args=[small_topology.pk]), {
        "op": "all_reduce", "run0_text": LOG, "run1_label": "broken", "run1_text": BAD_LOG})
    assert response.status_code == 400
    form = response.context["form"]
    assert form.errors == {"run1_text": ["line 3: expected 13 columns, got 4"]}
    assert not SimulationJob.objects.exists()


def test_empty_form_asks_for_a_log(client, small_topology, user):
    client.force_login(user)
    response = client.post(reverse("diagnose", args=[small_topology.pk]), {"op": "all_reduce"})
    assert response.status_code == 400
    assert response.context["form"].non_field_errors() == ["upload or paste at least one nccl-tests log"]


def test_good_logs_queue_a_job_with_labels_and_hosts(client, small_topology, user, published):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(user)
    response = client.post(reverse("diagnose", args=[small_topology.pk]), {
        "op": "all_reduce", "algorithm": "auto", "run0_hosts": "h0, h1", "run0_text": LOG,
        "run2_file": SimpleUploadedFile("rack-b.txt", LOG.encode())})
    job = SimulationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job_detail", args=[job.pk])
    assert [(r["label"], r["hosts"]) for r in job.inputs["runs"]] == [("run1", ["h0", "h1"]), ("rack-b.txt", None)]
