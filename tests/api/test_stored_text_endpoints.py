"""Export JSON, a revision with its document, the BOM and GraphML answer as they did before they
were served from stored text and the digest (docs/RELIABILITY.md, "Big designs: cost per page").

"Before" is computed here the way the views computed it: the parsed document rendered by DRF's
JSONRenderer, ``bridge.fabric_bom`` and ``bridge.graphml`` of the document.
"""
from __future__ import annotations

import json

import pytest
from django.db import connection
from rest_framework.renderers import JSONRenderer

from api import serializers as s
from api.views import export as export_view
from designer import bridge, services
from designer.models import RevisionDigest
from tests.api.conftest import API, assert_error


def _same_json(new: bytes, old: bytes) -> None:
    """Equal JSON; on SQLite (which keeps the text as written) with the same key order too."""
    if connection.vendor == "sqlite":
        pairs = lambda b: json.loads(b, object_pairs_hook=list)  # noqa: E731
        assert pairs(new) == pairs(old)
    assert json.loads(new) == json.loads(old)


def _patched(topology, user):
    """A second revision, saved from a patch of a fabric link (its BOM changes)."""
    fabric = next(lk for lk in topology.current_revision.document["links"] if lk.get("tech") == "eth400")
    return services.revision_save(topology=topology, user=user, base_revision=1,
                                  patch={"links": {"update": [dict(fabric, capacity_gbps=100.0)]}})


@pytest.mark.parametrize("number", [1, 2])
def test_export_json_is_the_document_as_before(api, small_topology, user, number):
    _patched(small_topology, user)
    revision = small_topology.revisions.get(number=number)
    response = api.get(f"{API}/topologies/{small_topology.pk}/export/?format=json&revision={number}")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="pod-2-r{number}.json"'
    _same_json(response.content, JSONRenderer().render(revision.document))


def test_export_json_of_a_missing_revision_is_a_404(api, bob, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/export/"
    assert_error(api.get(url + "?revision=9"), 404, "not_found")
    assert_error(bob.get(url), 404, "not_found")


@pytest.mark.parametrize("number", [1, 2])
def test_revision_with_its_document_is_as_before(api, small_topology, user, number):
    _patched(small_topology, user)
    revision = small_topology.revisions.get(number=number)
    response = api.get(f"{API}/topologies/{small_topology.pk}/revisions/{number}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    before = JSONRenderer().render(s.RevisionDetailSerializer(revision).data)
    _same_json(response.content, before)
    assert list(response.json()) == ["number", "message", "author", "checksum", "created_at", "document"]


def test_revision_of_another_users_topology_is_a_404(bob, small_topology):
    assert_error(bob.get(f"{API}/topologies/{small_topology.pk}/revisions/1/"), 404, "not_found")


@pytest.mark.parametrize("number", [1, 2])
def test_bom_from_the_digest_equals_the_documents(api, small_topology, user, number):
    _patched(small_topology, user)
    revision = small_topology.revisions.get(number=number)
    assert RevisionDigest.objects.get(revision=revision).summary["bom"] is not None
    response = api.get(f"{API}/topologies/{small_topology.pk}/bom/?revision={number}")
    assert response.status_code == 200
    _same_json(response.content, JSONRenderer().render(bridge.fabric_bom(revision.document)))


def test_bom_without_switches_is_the_documents_bom_with_no_switch_row(api, user):
    """The digest stores None for a design without switches; the API answers its BOM as before."""
    document = bridge.host_document(template="dgx-h100", host_id="h0", name="one")
    single = services.topology_create(owner=user, name="one", document=document)
    revision = single.current_revision
    assert RevisionDigest.objects.get(revision=revision).summary["bom"] is None
    expected = bridge.fabric_bom(revision.document)
    assert expected["switches"] == []
    response = api.get(f"{API}/topologies/{single.pk}/bom/")
    assert response.status_code == 200
    _same_json(response.content, JSONRenderer().render(expected))


def test_bom_of_a_revision_without_digest_is_computed_as_before(api, small_topology):
    RevisionDigest.objects.all().delete()
    revision = small_topology.current_revision
    response = api.get(f"{API}/topologies/{small_topology.pk}/bom/")
    assert response.status_code == 200
    _same_json(response.content, JSONRenderer().render(bridge.fabric_bom(revision.document)))
    assert not RevisionDigest.objects.exists()   # a read never writes


def test_graphml_under_the_limit_is_as_before(api, small_topology):
    response = api.get(f"{API}/topologies/{small_topology.pk}/export/?format=graphml")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/graphml+xml"
    assert response.content == bridge.graphml(small_topology.current_revision.document)


def test_graphml_over_the_limit_is_a_413_naming_it_and_the_cli(api, small_topology, monkeypatch):
    monkeypatch.setattr(export_view, "GRAPHML_MAX_ELEMENTS", 100)
    response = api.get(f"{API}/topologies/{small_topology.pk}/export/?format=graphml")
    error = assert_error(response, 413, "export_too_large")
    assert response["Content-Type"] == "application/json"
    assert error["details"]["limit_elements"] == 100 and error["details"]["path"] == "format"
    assert error["details"]["elements"] == small_topology.node_count + small_topology.link_count
    assert "python -m designer.engine export" in error["message"] and "100" in error["message"]
