"""Floor-plan hand placements × every kind of requester (the principals of ``tests/sharing/conftest.py``).

alice's pod-2 plans as ``R01-01 [h0 h1]  R01-02 [leaf0..leaf7]  R02-01 [spine0 spine1 storage0
sleaf0]``; the move under test puts h1 into the network rack R01-02. Only those who may edit the
topology (owner, editors, team editors) save or reset placements; viewers and share links read the
plan and nothing changes; strangers see nothing (404), anonymous callers 401 / sign-in.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.api.conftest import assert_error
from tests.sharing.conftest import PRINCIPALS, expect

pytestmark = pytest.mark.django_db

MOVE = {"placements": {"h1": {"rack": "R01-02"}}}
SAVED = {"h1": {"rack": "R01-02", "position": 17}}

PUT = expect(owner=200, editor=200, viewer=403, team_viewer=403, team_editor=200, stranger=404, anon=401,
             link=403, result_link=403, revoked_link=401, expired_link=401)
READ = expect(owner=200, editor=200, viewer=200, team_viewer=200, team_editor=200, stranger=404, anon=401,
              link=200, result_link=404, revoked_link=401, expired_link=401)
PAGE_POST = expect(owner=302, editor=302, viewer=403, team_viewer=403, team_editor=302, stranger=404, anon=302,
                   link=302, result_link=302, revoked_link=302, expired_link=302)


def _url(world) -> str:
    return f"/api/v1/topologies/{world.topology.pk}/plan/"


def _saved(world) -> dict:
    world.topology.refresh_from_db()
    return world.topology.plan_placements


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_api_save_matrix(world, api_as, principal):
    response = api_as(principal).put(_url(world), MOVE, format="json")
    assert response.status_code == PUT[principal], response.content[:300]
    assert _saved(world) == (SAVED if PUT[principal] == 200 else {})
    if response.status_code >= 400:
        assert_error(response, response.status_code)


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_api_reset_matrix(world, api_as, principal):
    from designer import services

    services.plan_placements_save(topology=world.topology, request={}, placements=MOVE["placements"])
    response = api_as(principal).delete(_url(world))
    assert response.status_code == (204 if PUT[principal] == 200 else PUT[principal])
    assert _saved(world) == ({} if PUT[principal] == 200 else SAVED)


def test_api_read_matrix_sees_the_saved_move(world, api_as):
    from designer import services

    services.plan_placements_save(topology=world.topology, request={}, placements=MOVE["placements"])
    got = {}
    for p in PRINCIPALS:
        response = api_as(p).get(_url(world))
        got[p] = response.status_code
        if response.status_code == 200:
            assert response.json()["placements"] == SAVED, p
    assert got == READ


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_page_move_and_reset_matrix(world, page_as, principal):
    client = page_as(principal)
    move = client.post(reverse("plan_move", args=[world.topology.pk]), {"device": "h1", "rack": "R01-02"})
    assert move.status_code == PAGE_POST[principal]
    assert _saved(world) == (SAVED if PAGE_POST[principal] == 302 and principal in ("owner", "editor", "team_editor")
                             else {})
    reset = client.post(reverse("plan_reset", args=[world.topology.pk]))
    assert reset.status_code == PAGE_POST[principal]
    assert _saved(world) == {}


def test_the_page_shows_move_controls_to_editors_only(world, page_as):
    plan = reverse("plan", args=[world.topology.pk])
    editor = page_as("editor").get(plan).content.decode()
    assert 'id="move-form"' in editor and 'draggable="true"' in editor and 'id="plan-reset"' in editor
    viewer = page_as("viewer").get(plan).content.decode()
    assert 'id="move-form"' not in viewer and 'draggable="true"' not in viewer and 'id="plan-readonly"' in viewer


def test_a_page_move_that_does_not_fit_is_located_and_saves_nothing(world, page_as):
    client = page_as("owner")
    # 16 U racks: h0 and h1 (8 U each) fill R01-01.
    url = reverse("plan_move", args=[world.topology.pk]) + "?rack_units=16"
    response = client.post(url, {"device": "storage0", "rack": "R01-01"})
    assert response.status_code == 400
    body = response.content.decode()
    assert 'id="move-errors"' in body and "placements.storage0.rack: rack R01-01 is full" in body
    assert _saved(world) == {}
    response = client.post(url, {"device": "h1", "rack": "R07-01"})
    assert response.status_code == 400 and "placements.h1.rack: no rack" in response.content.decode()
    assert _saved(world) == {}
