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


_FORM = {"parameters_billions": 8, "restart_overhead_s": 600, "runs": 5, "days_per_run": 20, "seed": 0,
         "exposed_communication_fraction": 0.1}


def test_the_rate_table_is_prefilled_edits_recompute_and_blast_is_swept(client, user, small_topology):
    """The table shows every class with its cited default; a NIC AFR of 10× the default gives
    10× the NIC interruptions a day; the blast radius is the N-1 sweep's (a NIC down breaks the
    all-reduce under affinity; software has nothing in the fabric: the rule)."""
    client.force_login(user)
    r = client.get(page(small_topology) + QUICK)
    html = r.content.decode()
    rows = {row["class"]: row for row in r.context["form"].rate_rows()}
    assert rows["nic"]["afr_input"].value() == pytest.approx(rows["nic"]["afr"])
    assert 'name="afr_nic"' in html and 'name="repair_host"' in html and "Llama 3 Herd of Models, Table 5" in html
    before = next(c for c in r.context["out"]["classes"] if c["class"] == "nic")
    assert before["blast"]["source"] == "simulated" and before["effect"] == "interrupt"
    assert "h0/nic0 down" in html
    software = next(c for c in r.context["out"]["classes"] if c["class"] == "software")
    assert software["blast"]["source"] == "rule"
    r = client.post(page(small_topology), {**_FORM, "afr_nic": 10 * rows["nic"]["afr"], "repair_nic": 12})
    assert r.status_code == 200, r.content[:3000]
    after = next(c for c in r.context["out"]["classes"] if c["class"] == "nic")
    assert after["job_per_day"] == pytest.approx(10 * before["job_per_day"])
    assert after["repair_hours"] == 12.0


@pytest.mark.parametrize("field, value, message", [
    ("afr_nic", "-1", "nic AFR: Ensure this value is greater than or equal to 0"),
    ("afr_gpu", "NaN", "gpu AFR: Enter a number."),
    ("repair_host", "0", "host repair: must be more than 0 hours"),
])
def test_bad_rates_get_located_errors_and_change_nothing(client, user, small_topology, field, value, message):
    client.force_login(user)
    r = client.post(page(small_topology), {**_FORM, field: value})
    assert r.status_code == 400 and r.context["out"] is None
    html = r.content.decode()
    assert message in html and f'id="id_{field}-err"' in html and "goodput-rates\" open" in html
