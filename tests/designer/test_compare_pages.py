"""The compare page reached from a topology page and from a result page, and the bill-of-materials
comparison of two designs (or two revisions of one) without any job.

``small_topology`` = 2 DGX-H100 rail-optimized + 1 storage server at o = 1 (8 rail leaves +
1 storage leaf, 2 spines); its revision 2 (or the design ``pod-2-o2``) has o = 2: its leaf
tier's oversubscription is worse (red) and it needs fewer single-mode optics (green)::

    [h0] [h1] [storage] ==400G== [leaf0..7, storage leaf] ==400G x (1/o)== [spine0, spine1]
"""
from __future__ import annotations

import copy
import re

import pytest
from django.urls import reverse

from designer import services

pytestmark = pytest.mark.django_db


def _finished_job(topology, user, name="ring"):
    """A succeeded simulate job on ``topology``'s current revision (a stored one-pattern result)."""
    from django.utils import timezone

    from designer.models import SimulationJob, SimulationResult

    scenario = services.scenario_create(topology=topology, user=user, name=f"{name}-{topology.pk}",
                                        workload=[{"id": "ar", "kind": "allreduce",
                                                   "participants": {"kind": "gpu"}, "bytes": 1e9}])
    job = services.job_submit_simulate(scenario=scenario, user=user)
    SimulationResult.objects.create(job=job, data={
        "format": "fabricscope.result/1", "flows": [], "resources": [], "diff": None,
        "summary": {"patterns": {"ar": {"completion_s": 0.01}}, "max_utilization": 1.0, "bottlenecks": []}})
    SimulationJob.objects.filter(pk=job.pk).update(state="succeeded", progress=100, finished_at=timezone.now())
    return job


def _second_revision(topology, user):
    """Revision 2 of ``topology``: the same 2 hosts rebuilt at oversubscription 2, no storage."""
    from designer.models import Topology

    o2 = services.topology_build(owner=user, name="scratch-o2", template="dgx-h100", hosts=2,
                                 options={"oversubscription": 2.0})
    document = copy.deepcopy(o2.current_revision.document)
    Topology.objects.filter(pk=o2.pk).delete()
    return services.revision_save(topology=topology, user=user, document=document, base_revision=1,
                                  message="leaves at 2:1")


def _bom_rows(body: str) -> dict[str, tuple[list[str], bool]]:
    section = body[body.index('id="compare-bom"'):]
    section = section[:section.index("</section>")]
    rows = {}
    for chunk in section.split("<tr ")[1:]:
        cells = [c.split("</td>")[0].strip() for c in chunk.split("<td")[1:]]
        if cells:
            rows[cells[0].lstrip(">")] = (cells, 'data-differs="1"' in chunk)
    return rows


def _options(body: str) -> list[str]:
    select = re.search(r'<select id="compare-b" name="\w+" required>(.*?)</select>', body, re.DOTALL)
    return re.findall(r'<option value="([^"]+)"', select.group(1)) if select else []


def test_topology_page_links_to_the_design_picker(client, user, small_topology, published):
    other = services.topology_build(owner=user, name="pod-2-o2", template="dgx-h100", hosts=2,
                                    options={"oversubscription": 2.0})
    _second_revision(small_topology, user)
    client.force_login(user)
    detail = client.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    link = f'href="/compare/?da={small_topology.pk}" id="compare-link"'
    assert link in detail
    body = client.get(f"/compare/?da={small_topology.pk}").content.decode()
    assert '<label for="compare-b">' in body and 'name="da" value="%d:2"' % small_topology.pk in body
    assert _options(body) == [f"{small_topology.pk}:1", str(other.pk)]   # r1 of this design, then others
    assert "No simulation needed" in body or "no simulation needed" in body


def test_two_designs_compare_by_bom_without_any_job(client, user, small_topology):
    from designer.models import SimulationJob

    other = services.topology_build(owner=user, name="pod-2-o2", template="dgx-h100", hosts=2,
                                    options={"oversubscription": 2.0})
    client.force_login(user)
    r = client.get(f"/compare/?da={small_topology.pk}&db={other.pk}")
    assert r.status_code == 200 and not SimulationJob.objects.exists()
    body = r.content.decode()
    assert "A: pod-2 rev 1 · B: pod-2-o2 rev 1" in body
    rows = _bom_rows(body)
    cells, differs = rows["leaf tier"]
    assert differs and ">1:1" in cells[1] and ">2:1" in cells[2] and "fs-bad" in cells[3]
    assert rows["optics"][1] and "fs-good" in rows["optics"][0][3]
    assert not rows["GPUs"][1]
    assert f'?da={other.pk}:1&amp;db={small_topology.pk}:1" id="compare-swap"' in body
    assert _options(body)      # the picker stays on the page to change B


def test_two_revisions_of_one_design(client, user, small_topology):
    _second_revision(small_topology, user)
    client.force_login(user)
    body = client.get(f"/compare/?da={small_topology.pk}:1&db={small_topology.pk}:2").content.decode()
    assert "A: pod-2 rev 1 · B: pod-2 rev 2" in body
    assert _bom_rows(body)["leaf tier"][1]
    assert f'/topologies/{small_topology.pk}/diff/?a=1&amp;b=2" id="compare-diff"' in body
    same = client.get(f"/compare/?da={small_topology.pk}:2&db={small_topology.pk}").content.decode()
    assert "one design on both sides (pod-2 rev 2)" in same and 'data-differs="1"' not in same


def test_result_page_links_to_the_result_picker(client, user, other_user, small_topology, published):
    """The picker lists the other finished jobs the user can see, newest first; a stranger's
    job is not among them."""
    a, b = _finished_job(small_topology, user, "a"), _finished_job(small_topology, user, "b")
    theirs = services.topology_build(owner=other_user, name="bobs", template="dgx-h100", hosts=2, options={})
    _finished_job(theirs, other_user, "c")
    client.force_login(user)
    page = client.get(reverse("job_result", args=[a.pk])).content.decode()
    assert f'href="/compare/?a={a.pk}" id="compare-link"' in page
    body = client.get(f"/compare/?a={a.pk}").content.decode()
    assert _options(body) == [str(b.pk)] and f'name="a" value="{a.pk}"' in body
    compared = client.get(f"/compare/?a={a.pk}&b={b.pk}")
    assert compared.status_code == 200 and 'id="compare-bom"' in compared.content.decode()
    assert 'id="compare-designs-link"' in compared.content.decode()


def test_bad_and_unseen_sides(client, user, other_user, small_topology):
    theirs = services.topology_build(owner=other_user, name="bobs", template="dgx-h100", hosts=2, options={})
    client.force_login(user)
    assert client.get(f"/compare/?da={theirs.pk}").status_code == 404
    assert client.get(f"/compare/?da={small_topology.pk}&db={theirs.pk}").status_code == 404
    assert client.get(f"/compare/?da={small_topology.pk}:9").status_code == 404
    assert client.get("/compare/?da=x").status_code == 400
    assert client.get(f"/compare/?da={small_topology.pk}:").status_code == 400
    assert client.get("/compare/").status_code == 404
