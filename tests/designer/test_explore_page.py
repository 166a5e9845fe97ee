"""The Explore pages without a browser: who may open them, located errors, a job to its result page.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized, 1 storage server::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]
"""
from __future__ import annotations

import json

import pytest
from django.urls import reverse

from designer.models import SimulationJob, SweepChunk

pytestmark = pytest.mark.django_db

A2A = json.dumps([{"id": "a2a", "patterns": [{"id": "x", "kind": "alltoall", "bytes": 1e8}],
                   "placement": {"policy": "packed", "gpus": 16}}])


def test_owner_sees_the_form_stranger_gets_404(client, small_topology, user, other_user):
    client.force_login(user)
    page = client.get(reverse("explore", args=[small_topology.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="explore-form"' in html and 'value="rail-only"' in html and "deepseek-v3" in html
    assert reverse("explore", args=[small_topology.pk]) in client.get(
        reverse("topology_detail", args=[small_topology.pk])).content.decode()
    client.force_login(other_user)
    assert client.get(reverse("explore", args=[small_topology.pk])).status_code == 404


def test_nothing_checked_and_bad_traffic_are_400s(client, small_topology, user, published):
    client.force_login(user)
    url = reverse("explore", args=[small_topology.pk])
    r = client.post(url, {"traffic": A2A, "chunks": 2})
    assert r.status_code == 400 and "check at least one option" in r.content.decode()
    r = client.post(url, {"fabrics": ["rail-only"], "traffic": "{not json", "chunks": 2})
    assert r.status_code == 400 and "not JSON" in r.content.decode()
    r = client.post(url, {"gpus": 0, "fabrics": ["rail-only"], "traffic": A2A, "chunks": 2})
    assert r.status_code == 400
    r = client.post(url, {"fabrics": ["rail-only"], "planes": ["1", "2"], "oversubscriptions": ["1", "2", "3", "4"],
                          "switches": ["eth-51t2", "eth-25t6"], "templates": ["dgx-h100", "dgx-b200", "gb200-nvl72",
                                                                               "hgx-h200", "aws-p5"],
                          "tiers": ["auto", "2", "3"], "nic_link_techs": ["eth400", "eth800"], "traffic": A2A,
                          "chunks": 2})
    assert r.status_code == 400 and "480 points" in r.content.decode() and "exceed the limit of 256" in r.content.decode()
    assert not SimulationJob.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_submit_run_and_result_page(client, small_topology, user, published):
    client.force_login(user)
    r = client.post(reverse("explore", args=[small_topology.pk]),
                    {"fabrics": ["rail-optimized", "rail-only"], "oversubscriptions": ["1", "2"],
                     "traffic": A2A, "chunks": 2})
    assert r.status_code == 302, r.content.decode()[:2000]
    job = SimulationJob.objects.get()
    assert job.kind == "explore" and job.inputs["grid"] == {"fabric": ["rail-optimized", "rail-only"],
                                                           "oversubscription": [1, 2]}
    from designer import services

    services.job_run(job_id=job.pk)
    for chunk in SweepChunk.objects.filter(job=job):
        services.sweep_chunk_run(chunk_id=chunk.pk)
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    page = client.get(reverse("job_result", args=[job.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-view="explore"' in html and 'id="explore-points"' in html and "frontier" in html
    assert html.count('class="fs-pick"') == 4 and 'id="explore-data"' in html
    figures = client.get(f"/api/v1/jobs/{job.pk}/figures/").json()
    assert figures["pareto"]["fabricscope"]["kind"] == "explore-pareto"
    assert sorted(figures["pareto"]["fabricscope"]["points"]) == [0, 1, 2, 3]


@pytest.mark.django_db(transaction=True)
def test_a_share_link_to_the_result_shows_the_exploration(client, small_topology, user, published):
    """A read-only link to an explore job's result opens its page (chart, table), not a simulation's."""
    from designer import services

    job = services.job_submit_explore(topology=small_topology, user=user, chunks=1, request={
        "grid": {"fabric": ["rail-only", "rail-optimized"]}, "jobs": json.loads(A2A)})
    services.job_run(job_id=job.pk)
    for chunk in SweepChunk.objects.filter(job=job):
        services.sweep_chunk_run(chunk_id=chunk.pk)
    _, token = services.share_link_create(topology=small_topology, actor=user, job=job)
    page = client.get(reverse("link_result", args=[token, job.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-view="explore"' in html and html.count('class="fs-pick"') == 2
