"""``GET/POST /api/v1/topologies/<id>/plan/`` × roles, counts against the BOM, located errors.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized, 1 storage server::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]
"""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/plan/"


def test_owner_gets_the_plan_and_its_cables_equal_the_bom(api, small_topology):
    r = api.get(url(small_topology))
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["format"] == "fabricscope.plan/1" and body["bom"]["gpus"] == 16
    bom = api.get(f"{API}/topologies/{small_topology.pk}/bom/").json()
    assert len(body["cables"]) == sum(bom["cables"].values())
    servers = next(t for t in body["bom"]["tiers"] if t["tier"] == "servers")
    assert servers["count"] == 2 and servers["item"] == "dgx-h100"


def test_post_overrides_the_rack(api, small_topology):
    r = api.post(url(small_topology), {"rack": {"units": 48, "power_kw": 15}}, format="json")
    assert r.status_code == 200, r.content
    racks = r.json()["racks"]
    assert all(rack["units"] == 48 for rack in racks)
    # 15 kW holds one DGX H100 (10.2 kW) and not two: one server a rack.
    assert [len(rack["devices"]) for rack in racks if rack["role"] == "compute"] == [1, 1]


def test_a_viewer_may_plan(client_for, small_topology, user, other_user):
    from designer import services

    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    assert client_for(other_user).get(url(small_topology)).status_code == 200


def test_stranger_is_404_and_anonymous_401(bob, anon, small_topology):
    assert_error(bob.get(url(small_topology)), 404, "not_found")
    assert_error(bob.post(url(small_topology), {}, format="json"), 404, "not_found")
    assert_error(anon.get(url(small_topology)), 401)


def test_bad_values_are_located(api, small_topology):
    bad = {"prices": {"switch:eth-51t2": 0, "server:dgx-h100": -1}, "power": {"nic:ConnectX-7": 1e9}}
    error = assert_error(api.post(url(small_topology), bad, format="json"), 400)
    assert {"prices.switch:eth-51t2", "prices.server:dgx-h100", "power.nic:ConnectX-7"} <= paths_of(error)
    assert "rack" in paths_of(assert_error(api.post(url(small_topology), {"rack": [1]}, format="json"), 400))
    assert "colour" in paths_of(assert_error(api.post(url(small_topology), {"colour": 1}, format="json"), 400))


def test_a_share_link_may_read_not_post(anon, small_topology, user):
    from designer import services

    _, token = services.share_link_create(topology=small_topology, actor=user)
    assert anon.get(url(small_topology), HTTP_X_SHARE_TOKEN=token).status_code == 200
    assert_error(anon.post(url(small_topology), {}, format="json", HTTP_X_SHARE_TOKEN=token), 403)
