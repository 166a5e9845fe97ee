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
    # 8 rail leaves; the storage server and the hosts' storage NICs on a switch of their own
    assert "<td>leaf</td><td>eth-51t2</td><td>8</td>" in body
    assert '<td>leaf <span class="muted">(storage)</span></td><td>eth-51t2</td><td>1</td>' in body


def test_a_document_without_switches_has_no_bom_section(client, user):
    from designer.engine.model.templates import host_document

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


def _finished_job(topology, user, published):
    """A succeeded simulate job on ``topology``'s current revision (a stored one-flow result)."""
    from django.utils import timezone

    from designer.models import SimulationJob, SimulationResult

    scenario = services.scenario_create(topology=topology, user=user, name=f"ring-{topology.pk}",
                                        workload=[{"id": "ar", "kind": "allreduce",
                                                   "participants": {"kind": "gpu"}, "bytes": 1e9}])
    job = services.job_submit_simulate(scenario=scenario, user=user)
    SimulationResult.objects.create(job=job, data={
        "format": "fabricscope.result/1", "flows": [], "resources": [], "diff": None,
        "summary": {"patterns": {"ar": {"completion_s": 0.01}}, "max_utilization": 1.0,
                    "bottlenecks": []}})
    SimulationJob.objects.filter(pk=job.pk).update(state="succeeded", progress=100,
                                                   finished_at=timezone.now())
    return job


def test_compare_page_puts_two_boms_side_by_side(client, user, small_topology, published):
    """A = ``small_topology`` (2 hosts + 1 storage, o = 1): 8 rail leaves + 1 storage leaf and
    2 spines; B = 2 hosts at o = 2 without storage: 8 leaves, 2 spines. The storage leaf exists
    in A only; B's leaves have half the uplinks, so its leaf oversubscription 2:1 is worse (red)
    and it needs fewer single-mode optics (green)."""
    other = services.topology_build(owner=user, name="pod-2-o2", template="dgx-h100", hosts=2,
                                    options={"oversubscription": 2.0})
    a, b = _finished_job(small_topology, user, published), _finished_job(other, user, published)
    client.force_login(user)
    body = client.get(reverse("compare") + f"?a={a.pk}&b={b.pk}").content.decode()
    assert 'id="compare-bom"' in body
    section = body[body.index('id="compare-bom"'):]
    section = section[:section.index("</section>")]
    assert "leaf · eth-51t2 · switches" in section
    rows = {}
    for chunk in section.split("<tr ")[1:]:
        cells = [c.split("</td>")[0].strip() for c in chunk.split("<td")[1:]]
        if cells:
            rows[cells[0].lstrip(">")] = (cells, 'data-differs="1"' in chunk)
    over = rows["leaf tier"]
    assert over[1] and ">1:1" in over[0][1] and ">2:1" in over[0][2] and "fs-bad" in over[0][3]
    optics = rows["optics"]
    assert optics[1] and "fs-good" in optics[0][3]
    gpus = rows["GPUs"]
    assert not gpus[1] and "same" in gpus[0][3]


def test_compare_of_one_design_says_so(client, user, small_topology, published):
    a, b = _finished_job(small_topology, user, published), _finished_job(small_topology, user, published)
    client.force_login(user)
    body = client.get(reverse("compare") + f"?a={a.pk}&b={b.pk}").content.decode()
    assert "both jobs ran on the same design" in body
    assert 'data-differs="1"' not in body


def test_new_topology_form_takes_tiers_and_says_why_it_cannot_build(client, user):
    """tiers = 3 on 4 x DGX-H100: pods + super-spines although one spine layer would do; a
    leaves_per_rail the radix cannot hold comes back next to its field, with the numbers."""
    from designer.models import Topology

    client.force_login(user)
    base = {"source": "cluster", "template": "dgx-h100", "fabric": "rail-optimized", "storage": 0}
    response = client.post(reverse("topology_new"), {**base, "name": "three", "hosts": 4, "tiers": 3})
    assert response.status_code == 302, response.content.decode()[:2000]
    document = Topology.objects.get(owner=user, name="three").current_revision.document
    assert document["fabric"]["tiers"] == 3
    assert any(g["kind"] == "pod" for g in document["groups"])
    response = client.post(reverse("topology_new"), {**base, "name": "refused", "hosts": 512,
                                                     "switch": "eth-51t2", "leaves_per_rail": 1})
    body = response.content.decode()
    assert response.status_code == 400
    field = body[body.index('data-field="leaves_per_rail"'):]
    field = field[:field.index('data-field="planes"')]
    assert "holds 64" in field and "use ≥ 8" in field
