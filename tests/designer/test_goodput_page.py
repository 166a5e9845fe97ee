"""The goodput page (``/topologies/<pk>/goodput/``) without a browser: who may open it, the plan
and its figures, a second design side by side, errors above the form, the link from the topology.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized, 1 storage server.
"""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

QUICK = "?runs=5&days_per_run=20"


def page(topology) -> str:
    return f"/topologies/{topology.pk}/goodput/"


def test_owner_sees_the_plan_viewer_too_stranger_404(client, user, other_user, django_user_model, small_topology):
    from designer import services

    client.force_login(user)
    r = client.get(page(small_topology) + QUICK)
    assert r.status_code == 200, r.content[:2000]
    out = r.context["out"]
    assert out["design"]["job_gpus"] == 16 and out["checkpoint"]["write_source"] == "simulated"
    figures = r.context["figures"]
    assert set(figures) == {"goodput_curve", "goodput_classes", "goodput_blast", "goodput_timeline"}
    star = next(t for t in figures["goodput_curve"]["data"] if t["name"].endswith("optimum (Daly)"))
    curve = next(t for t in figures["goodput_curve"]["data"] if t["name"].endswith("goodput"))
    assert star["y"][0] >= max(curve["y"]) - 1e-12       # the marked optimum is the curve's top
    assert out["monte_carlo"]["simulated_days"] == 100
    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    client.force_login(other_user)
    assert client.get(page(small_topology) + QUICK).status_code == 200
    client.force_login(django_user_model.objects.create_user("carol", password="carol-password-1"))
    assert client.get(page(small_topology)).status_code == 404


def test_two_designs_side_by_side(client, user, small_topology):
    """A 4-host copy: twice the GPUs, twice the interruptions a day of every GPU class."""
    from designer import services

    bigger = services.topology_build(owner=user, name="pod-4", template="dgx-h100", hosts=4,
                                     options={"storage": 1})
    client.force_login(user)
    r = client.get(page(small_topology) + QUICK + f"&against={bigger.pk}")
    assert r.status_code == 200, r.content[:2000]
    a, b = r.context["out"], r.context["other"]
    gpu = [next(row for row in o["classes"] if row["class"] == "gpu")["job_per_day"] for o in (a, b)]
    assert gpu[1] == pytest.approx(2 * gpu[0])
    bars = r.context["figures"]["goodput_classes"]["data"]
    assert [t["name"] for t in bars] == ["pod-2", "pod-4"]


def test_errors_show_above_the_form_and_the_topology_links_here(client, user, small_topology):
    client.force_login(user)
    r = client.post(page(small_topology), {"parameters_billions": 8, "restart_overhead_s": 600, "runs": 5,
                                           "days_per_run": 20, "seed": 0, "exposed_communication_fraction": 0.1,
                                           "gpus": 999})
    assert r.status_code == 400 and r.context["out"] is None
    assert "job.gpus: 999 GPUs asked; the design has 16" in r.content.decode()
    r = client.post(page(small_topology), {"parameters_billions": 8, "restart_overhead_s": 600, "runs": 2000,
                                           "days_per_run": 100, "seed": 0, "exposed_communication_fraction": 0.1})
    assert r.status_code == 400 and "100,000 simulated days" in r.content.decode()
    detail = client.get(f"/topologies/{small_topology.pk}/").content.decode()
    assert f'href="/topologies/{small_topology.pk}/goodput/"' in detail
