"""Physical values and printable ids, each refused with its location.

Faults found by hand: link capacities ``0``, ``1e-320`` (subnormal) and a negative NIC
``port_gbps`` were accepted; so was a NUL in a node id (stored on SQLite; PostgreSQL ``jsonb``
refuses ``\\u0000``, so the same save fails there with a 500), and a right-to-left override in a
topology name, shown reversed on every page.

The document under test::

    [g0]--100 Gb/s--[g1]      (g0 is a GPU, g1 a NIC with attrs.port_gbps = 400)
"""
from __future__ import annotations

import copy
import json

import pytest

from designer.engine.document import validator as document
from designer.engine.errors import EngineError


def base() -> dict:
    return {"format": "fabricscope.topology/1", "name": "pair",
            "nodes": [{"id": "g0", "kind": "gpu"},
                      {"id": "g1", "kind": "nic", "attrs": {"port_gbps": 400.0}}],
            "links": [{"id": "l0", "a": "g0", "b": "g1", "capacity_gbps": 100.0,
                       "latency_ns": 500}]}


def problems(doc) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in document.validate(doc)]


def with_value(path: tuple, value) -> dict:
    doc = copy.deepcopy(base())
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def test_the_base_document_is_valid():
    assert problems(base()) == []
    assert document.normalize(base())["links"][0]["capacity_gbps"] == 100.0


@pytest.mark.parametrize("value, message", [
    (0, "must be positive, got 0"),
    (0.0, "must be positive, got 0.0"),
    (1e-320, "must be at least 2.23e-308, got 1e-320 (subnormal)"),
    (-5, "must not be negative, got -5"),
    (float("nan"), "must be finite, got nan"),
    (float("inf"), "must be finite, got inf"),
    ("100", "must be a number, got string"),
    (True, "must be a number, got boolean"),
])
def test_link_capacity_must_be_positive_and_finite(value, message):
    assert problems(with_value(("links", 0, "capacity_gbps"), value)) == [
        ("links[0].capacity_gbps", message)]


def test_a_link_declared_down_may_have_no_capacity():
    doc = with_value(("links", 0, "capacity_gbps"), 0)
    doc["links"][0]["status"] = "down"
    assert problems(doc) == []


def test_node_capacity_and_physical_attrs():
    assert problems(with_value(("nodes", 0, "capacity_gbps"), 0)) == [
        ("nodes[0].capacity_gbps", "must be positive, got 0")]
    assert problems(with_value(("nodes", 1, "attrs", "port_gbps"), -400)) == [
        ("nodes[1].attrs.port_gbps", "must not be negative, got -400")]
    assert problems(with_value(("nodes", 1, "attrs", "port_gbps"), None)) == [
        ("nodes[1].attrs.port_gbps", "must be a number, got null")]
    assert problems(with_value(("nodes", 1, "attrs", "port_gbps"), 0)) == [
        ("nodes[1].attrs.port_gbps", "must be positive, got 0")]
    # latencies may be zero, not negative
    assert problems(with_value(("links", 0, "latency_ns"), 0)) == []
    assert problems(with_value(("links", 0, "latency_ns"), -1)) == [
        ("links[0].latency_ns", "must not be negative, got -1")]


@pytest.mark.parametrize("bad, code", [
    ("g\x000", "U+0000"), ("g\n0", "U+000A"), ("g\x7f", "U+007F"), ("g\u2028", "U+2028"),
    ("g\u202e0", "U+202E"), ("g\u2066x", "U+2066"), ("g\u2069", "U+2069"),
])
def test_ids_must_be_printable(bad, code):
    doc = with_value(("nodes", 0, "id"), bad)
    doc["links"][0]["a"] = bad
    found = problems(doc)
    assert found[0][0] == "nodes[0].id" and code in found[0][1]
    assert ("links[0].a", found[0][1]) in found  # the reference is refused the same way
    assert problems(with_value(("links", 0, "id"), bad))[0][0] == "links[0].id"
    assert problems(with_value(("name",), bad))[0][0] == "name"


def test_printable_unicode_ids_stay_valid():
    """Not an ASCII-only rule: names in any script, and the arrows/dashes of real ids, pass."""
    for fine in ("gpu-ü", "ノード0", "h0/nic0→leaf", "x\u200dy"):
        assert problems(with_value(("nodes", 0, "id"), fine))[:1] != [("nodes[0].id", fine)]
        doc = with_value(("nodes", 0, "id"), fine)
        doc["links"][0]["a"] = fine
        assert problems(doc) == []


def test_values_nest_at_most_64_levels_wherever_they_are():
    deep: object = 1
    for _ in range(65):
        deep = [deep]
    # The free-form places (unknown fields are refused: docs/FORMATS.md, Fields); attrs is one
    # level itself, so it holds 63 more.
    assert problems(with_value(("links", 0, "attrs"), {"x": deep[0]})) == [
        ("links[0].attrs", "nested deeper than 64 levels")]
    assert problems(with_value(("fabric",), deep)) == [("fabric", "nested deeper than 64 levels")]
    assert problems(with_value(("links", 0, "attrs"), {"x": deep[0][0]})) == []  # 64 levels: fine


@pytest.mark.django_db
def test_api_locates_bad_values_and_names(world, api_as):
    client = api_as("owner")
    nul = with_value(("nodes", 0, "id"), "g\x000")
    nul["links"][0]["a"] = "g\x000"
    response = client.post("/api/v1/validate/", {"document": nul}, format="json")
    assert response.status_code == 200  # the validate endpoint reports, it does not refuse
    assert "nodes[0].id" in json.dumps(response.json())
    url = f"/api/v1/topologies/{world.topology.pk}/revisions/"
    zero = with_value(("links", 0, "capacity_gbps"), 0)
    response = client.post(url, {"document": zero, "base_revision": 1}, format="json")
    assert response.status_code == 400
    assert {"path": "document.links[0].capacity_gbps", "message": "must be positive, got 0"} in (
        response.json()["error"]["details"])
    response = client.post("/api/v1/topologies/", {"name": "evil\u202etxt.exe",
                                                   "document": base()}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["details"][0]["path"] == "name"
    response = client.patch(f"/api/v1/topologies/{world.topology.pk}/",
                            {"name": "a\x00b"}, format="json")
    assert response.status_code == 400


@pytest.mark.django_db
def test_scenario_and_fork_names_must_be_printable(world):
    from django.core.exceptions import ValidationError

    from designer import services
    from tests.conftest import RING_ALLREDUCE

    alice = world.users["owner"]
    with pytest.raises(ValidationError) as exc:
        services.scenario_create(topology=world.topology, user=alice, name="ring\u202e",
                                 workload=RING_ALLREDUCE)
    assert "name" in exc.value.message_dict
    with pytest.raises(ValidationError):
        services.topology_fork(topology=world.topology, user=alice, name="fork\x07")


def test_engine_error_for_bad_values_is_an_engine_error():
    with pytest.raises(EngineError) as exc:
        document.normalize(with_value(("links", 0, "capacity_gbps"), 1e-320))
    assert exc.value.problems[0].path == "links[0].capacity_gbps"
