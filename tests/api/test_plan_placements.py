"""``PUT/DELETE /api/v1/topologies/<id>/plan/``: hand placements saved with the topology, read back by
GET, refused with located 400s that change nothing; POST previews placements without saving.

Topology (``pod8``): 8 DGX H100 hosts, rail-optimized, planned with the defaults (42 U, 40 kW)::

    R01-01 [h0 h1 h2]  R01-02 [h3 h4 h5]  R01-03 [h6 h7]  R01-04 [leaf0..leaf7]   R02-01 [spines]

Permissions per role are in ``tests/sharing/test_plan_placements.py``.
"""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def pod8(user):
    from designer import services

    return services.topology_build(owner=user, name="pod-8", template="dgx-h100", hosts=8, options={})


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/plan/"


def _rack_of(plan: dict, device: str) -> str:
    return next(r["id"] for r in plan["racks"] if any(d["id"] == device for d in r["devices"]))


def test_save_then_reload_then_reset(api, pod8):
    assert _rack_of(api.get(url(pod8)).json(), "h6") == "R01-03"
    r = api.put(url(pod8), {"placements": {"h6": {"rack": "R01-01"}}}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["placements"] == {"h6": {"rack": "R01-01", "position": 25}}
    assert r.json()["summary"]["over_budget"] == ["R01-01"]  # four DGX H100 in 40 kW: allowed, named
    pod8.refresh_from_db()
    assert pod8.plan_placements == {"h6": {"rack": "R01-01", "position": 25}}
    again = api.get(url(pod8)).json()  # a later read applies the saved placement
    assert _rack_of(again, "h6") == "R01-01" and again["placements"] == pod8.plan_placements
    h6 = [c for c in again["cables"] if c["a_device"] == "h6"]
    assert {c["a_rack"] for c in h6} == {"R01-01"}
    assert api.delete(url(pod8)).status_code == 204
    pod8.refresh_from_db()
    assert pod8.plan_placements == {}
    assert _rack_of(api.get(url(pod8)).json(), "h6") == "R01-03"


def test_post_previews_placements_without_saving(api, pod8):
    r = api.post(url(pod8), {"placements": {"h6": {"rack": "R01-01"}}}, format="json")
    assert r.status_code == 200, r.content
    assert _rack_of(r.json(), "h6") == "R01-01"
    pod8.refresh_from_db()
    assert pod8.plan_placements == {}


def test_bad_placements_are_located_400s_and_change_nothing(api, pod8):
    assert api.put(url(pod8), {"placements": {"h7": {"rack": "R01-01"}}}, format="json").status_code == 200
    saved = {"h7": {"rack": "R01-01", "position": 25}}
    cases = [
        ({"placements": {"h6": {"rack": "R01-01"}}, "rack": {"units": 24}}, "placements.h6.rack"),  # full
        ({"placements": {"h6": {"rack": "R09-01"}}}, "placements.h6.rack"),
        ({"placements": {"nope": {"rack": "R01-01"}}}, "placements.nope"),
        ({"placements": {"h6": {"rack": "R01-01", "position": 20}}}, "placements.h6.position"),
        ({"placements": ["h6"]}, "placements"),
        ({"placements": {"h6": {"rack": "R01-01"}}, "colour": 1}, "colour"),
        ({}, "placements"),  # PUT needs them ({} resets)
    ]
    for body, path in cases:
        error = assert_error(api.put(url(pod8), body, format="json"), 400)
        assert path in paths_of(error), (body, error)
        pod8.refresh_from_db()
        assert pod8.plan_placements == saved, body
    full = assert_error(api.put(url(pod8), cases[0][0], format="json"), 400)
    assert "full" in str(full)


def test_a_viewer_may_look_but_not_save(client_for, pod8, user, other_user):
    from designer import services

    services.share_grant(topology=pod8, actor=user, role="viewer", user=other_user)
    viewer = client_for(other_user)
    assert viewer.get(url(pod8)).status_code == 200
    assert viewer.post(url(pod8), {"placements": {"h6": {"rack": "R01-01"}}}, format="json").status_code == 200
    assert_error(viewer.put(url(pod8), {"placements": {"h6": {"rack": "R01-01"}}}, format="json"), 403,
                 "permission_denied")
    assert_error(viewer.delete(url(pod8)), 403, "permission_denied")
    pod8.refresh_from_db()
    assert pod8.plan_placements == {}


def test_a_fork_keeps_the_placements(api, pod8, user):
    from designer import services

    api.put(url(pod8), {"placements": {"h6": {"rack": "R01-01"}}}, format="json")
    pod8.refresh_from_db()
    fork = services.topology_fork(topology=pod8, user=user)
    assert fork.plan_placements == pod8.plan_placements
