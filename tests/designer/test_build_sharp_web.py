"""``sharp`` in the web build form reaches ``build_cluster(sharp=...)`` (the API: tests/api/test_build_sharp_api.py).

Design: 4 DGX H100 on a rail-optimized fabric; with ``sharp`` the default switch becomes InfiniBand
NDR (``ib-ndr-64``) and every switch carries ``attrs.sharp``::

    [h0..3/nic r]--400G--[leaf r (sharp)]     r = 0..7
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from designer.pages.forms.topologies import TopologyNewForm

pytestmark = pytest.mark.django_db


def test_form_sends_sharp_as_a_checkbox_and_passes_it_on():
    form = TopologyNewForm({"name": "s", "source": "cluster", "template": "dgx-h100", "hosts": 4,
                            "fabric": "rail-optimized", "sharp": "on"}, templates=[("dgx-h100", "DGX H100")])
    assert form.is_valid(), form.errors
    assert form["sharp"].field.widget.attrs["data-type"] == "bool"
    assert form.service_args()["options"]["sharp"] is True
    off = TopologyNewForm({"name": "s", "source": "cluster", "template": "dgx-h100", "hosts": 4,
                           "fabric": "rail-optimized"}, templates=[("dgx-h100", "DGX H100")])
    assert off.is_valid() and "sharp" not in off.service_args()["options"]


def test_created_topology_has_sharp_switches(client, user):
    from designer.models import Topology

    client.force_login(user)
    response = client.post(reverse("topology_new"), {
        "name": "sharp pod", "source": "cluster", "template": "dgx-h100", "hosts": 4,
        "fabric": "rail-optimized", "storage": 0, "planes": 1, "oversubscription": 1, "sharp": "on"})
    assert response.status_code == 302, getattr(response, "context", None) and response.context["form"].errors
    doc = Topology.objects.get(name="sharp pod").revisions.order_by("-number").first().document
    switches = [n for n in doc["nodes"] if n["kind"] == "switch"]
    assert switches and all(n["attrs"].get("sharp") is True for n in switches)

