"""The physical-plan page without a browser: who may open it, its CSV, located errors.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized, 1 storage server::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]
"""
from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_owner_sees_racks_stranger_gets_404(client, small_topology, user, other_user):
    client.force_login(user)
    page = client.get(reverse("plan", args=[small_topology.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="plan-racks"' in html and 'id="plan-bom"' in html and "dgx-h100" in html
    assert reverse("plan", args=[small_topology.pk]) in client.get(
        reverse("topology_detail", args=[small_topology.pk])).content.decode()
    client.force_login(other_user)
    assert client.get(reverse("plan", args=[small_topology.pk])).status_code == 404
    assert client.get(reverse("plan_cables_csv", args=[small_topology.pk])).status_code == 404


def test_csv_has_one_line_per_cable(client, small_topology, user):
    client.force_login(user)
    response = client.get(reverse("plan_cables_csv", args=[small_topology.pk]) + "?rack_kw=30&media=dac&media=dr")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    lines = response.content.decode().strip().splitlines()
    bom = client.get(f"/api/v1/topologies/{small_topology.pk}/bom/").json()
    assert len(lines) - 1 == sum(bom["cables"].values())
    assert {line.split(",")[9] for line in lines[1:]} <= {"dac", "dr"}


def test_bad_override_is_shown_and_located(client, small_topology, user):
    client.force_login(user)
    response = client.get(reverse("plan", args=[small_topology.pk]),
                          {"overrides": '{"prices": {"switch:eth-51t2": 0}}'})
    assert response.status_code == 400
    assert "prices.switch:eth-51t2: must be a number &gt; 0" in response.content.decode()
    response = client.get(reverse("plan", args=[small_topology.pk]), {"overrides": "{not json"})
    assert response.status_code == 400 and "not JSON" in response.content.decode()
