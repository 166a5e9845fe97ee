"""The topology page's bill of materials section (``_topology_bom.html``).

``small_topology`` = 2 DGX-H100 rail-optimized + 1 storage server, default eth-51t2 (128 x 400G):
8 rail leaves + 1 storage leaf, 2 spines; 16 host ports + 1 storage port, all in-row.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from designer import services

pytestmark = pytest.mark.django_db


def test_topology_page_shows_the_bom(client, user, small_topology):
    client.force_login(user)
    body = client.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    assert 'id="bom"' in body and 'id="bom-switches"' in body
    assert "eth-51t2" in body and "in-row" in body
    assert "<td>leaf</td><td>eth-51t2</td><td>9</td>" in body


def test_a_document_without_switches_has_no_bom_section(client, user):
    from designer.engine.templates import host_document

    client.force_login(user)
    host = services.topology_create(owner=user, name="one-host", document=host_document("dgx-h100"))
    body = client.get(reverse("topology_detail", args=[host.pk])).content.decode()
    assert 'id="bom"' not in body


def test_new_topology_form_takes_the_generator_parameters(client, user):
    """4 x DGX-H100 on ib-ndr-64 (64 x 400G) at o = 2, 2 planes: 8 leaves of 4 host ports and
    2 uplink ports; 4 rails per plane, 2 spines per plane."""
    from designer.models import Topology

    client.force_login(user)
    response = client.post(reverse("topology_new"), {
        "name": "ndr-4", "source": "cluster", "template": "dgx-h100", "hosts": 4,
        "fabric": "rail-optimized", "storage": 0, "switch": "ib-ndr-64", "oversubscription": 2,
        "nic_link_tech": "ib-ndr", "planes": 2})
    assert response.status_code == 302, response.content.decode()[:2000]
    document = Topology.objects.get(owner=user, name="ndr-4").current_revision.document
    fabric = document["fabric"]
    assert (fabric["switch"], fabric["planes"], fabric["spines"], fabric["oversubscription"]) == \
        ("ib-ndr-64", 2, 4, 2.0)
    page = client.get(reverse("topology_new")).content.decode()
    assert 'id="build-preview"' in page and "build_preview.js" in page
