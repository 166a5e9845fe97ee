"""Racks and trays said as such: a rack-scale template's "hosts" on the New form are racks, and a
topology of GB200 NVL72 racks counts racks and compute trays on its page, not "hosts".

Two racks as ``build_cluster("gb200-nvl72", 2)`` makes them::

    rack0 ─ h0 (nvlink_domain) ─ h0/tray0 … h0/tray17 (hosts), h0/nvs0 … h0/nvs8
    rack1 ─ h1 (nvlink_domain) ─ h1/tray0 … h1/tray17,          h1/nvs0 … h1/nvs8
"""
from __future__ import annotations

import pytest

from designer.pages import selectors as pages
from designer.pages.forms.topologies import TopologyNewForm


def test_new_form_says_a_rack_scale_template_counts_racks():
    assert "racks" in TopologyNewForm().fields["hosts"].label


@pytest.mark.django_db
def test_host_units_count_racks_and_trays(user):
    from designer import services

    racks = services.topology_build(owner=user, name="two-nvl72", template="gb200-nvl72", hosts=2)
    assert pages.host_units(racks.current_revision) == {"racks": 2, "trays": 36, "servers": 0}
    assert racks.host_count == 36
    servers = services.topology_build(owner=user, name="two-dgx", template="dgx-h100", hosts=2)
    assert pages.host_units(servers.current_revision) == {"racks": 0, "trays": 0, "servers": 2}
    assert pages.host_units(None) == {"racks": 0, "trays": 0, "servers": 0}
