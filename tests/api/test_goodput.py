"""``POST /api/v1/topologies/<id>/goodput/`` × roles, hand-checkable rates, located errors.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized, 1 storage server::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]
"""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db

BODY = {"checkpoint": {"parameters": 8e9}, "monte_carlo": {"runs": 10, "days_per_run": 100}}


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/goodput/"


def test_owner_gets_the_plan_with_default_rates(api, small_topology):
    """16 GPUs at the GPU class's default AFR 196 / 16,384 × 365 / 54 → 16 × 196 / 16,384 / 54
    = 0.003545 GPU interruptions a day; the checkpoint (8e9 × 14 = 112 GB) is written by a
    simulated storage pattern."""
    r = api.post(url(small_topology), BODY, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["format"] == "fabricscope.goodput/1" and body["design"]["job_gpus"] == 16
    gpu = next(row for row in body["classes"] if row["class"] == "gpu")
    assert gpu["job_per_day"] == pytest.approx(16 * 196 / 16384 / 54)
    ck = body["checkpoint"]
    assert ck["bytes"] == 112e9 and ck["write_source"] == "simulated" and ck["write_s"] > 0
    assert 0 < body["goodput"] <= ck["ettr"] <= 1
    assert body["monte_carlo"]["simulated_days"] == 1000


def test_a_viewer_may_plan(client_for, small_topology, user, other_user):
    from designer import services

    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    assert client_for(other_user).post(url(small_topology), BODY, format="json").status_code == 200


def test_stranger_is_404_and_anonymous_401(bob, anon, small_topology):
    assert_error(bob.post(url(small_topology), BODY, format="json"), 404, "not_found")
    assert_error(anon.post(url(small_topology), BODY, format="json"), 401)


def test_bad_values_are_located_in_the_plan(api, small_topology):
    bad = {"rates": {"nic": {"afr": -1}, "host": {"repair_hours": 0}}, "checkpoint": {"write_s": 5, "read_s": 5}}
    error = assert_error(api.post(url(small_topology), bad, format="json"), 400)
    assert {"rates.nic.afr", "rates.host.repair_hours"} <= paths_of(error)
    error = assert_error(api.post(url(small_topology), {"rates": [1]}, format="json"), 400)
    assert "rates" in paths_of(error)
    too_long = {"monte_carlo": {"runs": 10_000, "days_per_run": 1000}}
    assert "monte_carlo" in str(assert_error(api.post(url(small_topology), too_long, format="json"), 400))


def test_two_designs_side_by_side_and_an_invisible_one_is_located(api, user, other_user, small_topology):
    """``against``: the same plan on a 4-host copy (twice the GPUs: twice the GPU
    interruptions a day); a topology the requester may not view is a 400 at ``against``."""
    from designer import services

    bigger = services.topology_build(owner=user, name="pod-4", template="dgx-h100", hosts=4, options={"storage": 1})
    r = api.post(url(small_topology), {**BODY, "against": bigger.pk}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["format"] == "fabricscope.goodput-compare/1"
    gpu = [next(row for row in body[k]["classes"] if row["class"] == "gpu")["job_per_day"] for k in "ab"]
    assert gpu[1] == pytest.approx(2 * gpu[0])
    assert next(row for row in body["a"]["classes"] if row["class"] == "nic")["blast"]["source"] == "simulated"
    hidden = services.topology_build(owner=other_user, name="theirs", template="dgx-h100", hosts=2)
    r = api.post(url(small_topology), {**BODY, "against": hidden.pk}, format="json")
    assert "against" in paths_of(assert_error(r, 400))
