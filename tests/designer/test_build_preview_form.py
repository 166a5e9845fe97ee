"""The build form and BOM pages (``designer/pages/forms/topologies.py``, ``_build_preview.html``,
``_topology_bom.html``): how the form tells build_preview.js to send each field, the host limits
of a preview and of a created topology, and one unit (Tb/s) for bisection everywhere.

``small_topology`` (tests/conftest.py) = 2 DGX-H100 rail-optimized + 1 storage server on eth-51t2
(128 × 400G)::

    [h0..1/nic0..7]--400G--[leaf0..7]==1 port==[spine0, spine1]      [storage0]--[sleaf0]--[spine0]
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from designer.bridge.facts import MAX_BUILD_HOSTS, MAX_PREVIEW_HOSTS
from designer.pages.forms.topologies import TopologyNewForm

pytestmark = pytest.mark.django_db


def test_oversubscription_is_sent_as_a_float():
    """FloatField subclasses IntegerField: marked "int", build_preview.js parseInt'ed 1.5 to 1."""
    form = TopologyNewForm(templates=[("dgx-h100", "DGX H100")])
    kinds = {name: form[name].field.widget.attrs["data-type"] for name in form.BUILD_FIELDS}
    assert kinds["oversubscription"] == "float"
    assert kinds["hosts"] == kinds["spines"] == kinds["tiers"] == "int"
    assert kinds["template"] == kinds["switch"] == "str"


def test_new_page_renders_the_float_type(client, user):
    client.force_login(user)
    body = client.get(reverse("topology_new")).content.decode()
    assert 'name="oversubscription"' in body
    tag = body[body.index('name="oversubscription"') - 300:body.index('name="oversubscription"') + 300]
    assert 'data-type="float"' in tag


def test_hosts_preview_past_the_build_limit_but_create_names_it(client, user, settings):
    """The field takes up to MAX_PREVIEW_HOSTS (the preview counts them); over MAX_BUILD_HOSTS a
    build job makes the topology (tests/designer/test_build_jobs.py), and more than the job's
    limit is refused on the field, with the limit named."""
    from designer.models import Topology

    client.force_login(user)
    body = client.get(reverse("topology_new")).content.decode()
    assert f'max="{MAX_PREVIEW_HOSTS}"' in body
    limit = settings.FABRICSCOPE_BUILD_JOB_MAX_HOSTS
    response = client.post(reverse("topology_new"), {
        "name": "big", "source": "cluster", "template": "dgx-h100", "hosts": limit + 1,
        "fabric": "rail-optimized", "storage": 0, "planes": 1, "oversubscription": 1})
    assert response.status_code == 400
    errors = response.context["form"].errors["hosts"]
    assert any("FABRICSCOPE_BUILD_JOB_MAX_HOSTS" in e and f"{limit:,}" in e
               and f"{MAX_BUILD_HOSTS:,}" in e for e in errors)
    assert not Topology.objects.exists()


def test_topology_page_bisection_is_in_tbps_and_says_what_is_counted(client, user, small_topology):
    """Bisection: injection 16 NIC ports × 400 = 6,400 Gb/s; into the spines 8 leaves × 2 × 400 =
    6,400 Gb/s (the storage leaf left out) → min / 2 = 3,200 Gb/s = 3.2 Tb/s, the preview's unit."""
    client.force_login(user)
    body = client.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    assert '<div class="v" data-k="bisection">3.2</div><div class="k">Bisection Tb/s</div>' in body
    assert "Gb/s" not in body[body.index('id="bom"'):body.index('id="bom-switches"')]
    assert 'id="bom-counted"' in body and "is 1 link, 2 ports" in body
    preview = client.get(reverse("topology_new")).content.decode()
    assert "Bisection Tb/s" in preview and "data-preview-counted" in preview
