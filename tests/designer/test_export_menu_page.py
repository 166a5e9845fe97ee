"""The topology page's Export menu (designer/pages/exports.py): one item per format the export API
answers — json, graphml and every ops export — each linking to that API URL, with a line on what
the target loses; no menu before a first revision.

Data: ``small_topology`` = 2 DGX-H100 hosts, rail-optimized, 1 storage server (revision 1).
"""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from api.views.export import OPS_EXPORTS
from designer.pages.exports import EXPORT_FORMATS

pytestmark = pytest.mark.django_db


def test_the_menu_lists_every_format_the_api_exports():
    assert [f for f, _, _ in EXPORT_FORMATS][:2] == ["json", "graphml"]
    assert {f for f, _, _ in EXPORT_FORMATS} == {"json", "graphml", *OPS_EXPORTS}
    assert all(note.endswith(".") and len(note) < 160 for _, _, note in EXPORT_FORMATS)


def test_the_topology_page_links_each_item_to_the_export_api(client, user, small_topology):
    client.force_login(user)
    body = client.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    items = re.findall(r'<a role="menuitem" tabindex="-1" href="([^"]+)" download data-export-format="([^"]+)"', body)
    assert [f for _, f in items] == [f for f, _, _ in EXPORT_FORMATS]
    for href, fmt in items:
        assert href == f"/api/v1/topologies/{small_topology.pk}/export/?format={fmt}"
        answer = client.get(href)
        assert answer.status_code in (200, 400), (fmt, answer.status_code)   # 400: a design the format cannot say
    assert 'aria-haspopup="menu"' in body and "export_menu.js" in body


def test_no_menu_before_a_first_revision(client, user):
    from designer import services

    empty = services.topology_create(owner=user, name="empty", description="", document=None)
    client.force_login(user)
    body = client.get(reverse("topology_detail", args=[empty.pk])).content.decode()
    assert "export-button" not in body
