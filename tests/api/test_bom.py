"""``GET /topologies/<id>/bom/``: the engine's bill of materials of a revision, per role."""
from __future__ import annotations

from tests.api.conftest import API, assert_error


def test_owner_gets_the_bom_of_the_current_and_a_named_revision(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/bom/"
    response = api.get(url)
    assert response.status_code == 200, response.content[:500]
    bom = response.json()
    assert bom["format"] == "fabricscope.bom/1"
    assert {"switches", "links", "cables", "transceivers", "oversubscription", "bisection_gbps",
            "power"} <= set(bom)
    assert api.get(url + "?revision=1").status_code == 200
    assert_error(api.get(url + "?revision=9"), 404, "not_found")


def test_stranger_and_anonymous_cannot_read_the_bom(bob, anon, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/bom/"
    assert_error(bob.get(url), 404, "not_found")
    assert anon.get(url).status_code in (401, 403)


def test_build_preview_carries_the_bom(api):
    response = api.post(f"{API}/topologies/build-preview/",
                        {"template": "dgx-h100", "hosts": 4, "switch": "eth-51t2", "planes": 1},
                        format="json")
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    leaf = next(r for r in body["bom"]["switches"] if r["tier"] == "leaf")
    assert (leaf["model"], leaf["count"]) == ("eth-51t2", 8)


def test_build_preview_refuses_what_the_ports_cannot_hold(api):
    response = api.post(f"{API}/topologies/build-preview/",
                        {"template": "dgx-h100", "hosts": 64, "switch": "eth-25t6", "leaves_per_rail": 1},
                        format="json")
    error = assert_error(response, 400)
    assert any("leaves_per_rail" in d["path"] and "holds 32" in d["message"] for d in error["details"]), error
