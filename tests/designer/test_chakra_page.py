"""Chakra traces on the scenario page: Read traces converts the uploaded ``.et`` files and the
communicator groups with the API's bridge call and shows the summary (ranks, nodes by type, bytes
by collective) and the job's JSON; nothing is saved until Save, which saves that job. Truncated
or mismatched files are located errors next to the upload; the API's limits apply.

Data: ``small_topology`` = 2 DGX-H100 hosts (16 GPUs); traces ``tests/engine/data/chakra/``
(``tools/chakra_fixture.py``: 4 ranks, node ids 1-13, groups tp0 = ranks 0, 1 and tp1 = ranks
2, 3): rank r runs on ``h0/gpu<r>``.
"""
from __future__ import annotations

import json
import pathlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from designer.models import Scenario
from tests.designer.test_scenario_jobs import job_post

pytestmark = pytest.mark.django_db

DATA = pathlib.Path(__file__).parents[1] / "engine" / "data" / "chakra"
MIB = 1024 * 1024


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def _traces(ranks=range(4), cut: dict | None = None) -> list:
    out = []
    for r in ranks:
        content = (DATA / f"trace.{r}.et").read_bytes()
        if cut and r in cut:
            content = content[:cut[r]]
        out.append(SimpleUploadedFile(f"trace.{r}.et", content, content_type="application/octet-stream"))
    return out


def _groups():
    return SimpleUploadedFile("groups.json", (DATA / "groups.json").read_bytes(), content_type="application/json")


def test_read_traces_shows_the_summary_then_save_imports_the_job(alice, small_topology):
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, job_post(action="import", job="", workload_type="patterns",
                                        chakra_traces=_traces(), chakra_groups=_groups()))
    assert response.status_code == 200, response.content.decode()[:2000]
    assert not Scenario.objects.exists()
    body = response.content.decode()
    summary = response.context["job_form"].chakra_summary
    assert summary["ranks"] == 4 and summary["files"] == 4 and summary["phases"] == 13
    # 13 nodes a rank: 3 COMP (nodes 3, 5, 8) and 6 collectives (4, 6, 9, 10, 11, 13) on each of 4 ranks
    assert summary["nodes"]["COMP_NODE"] == 12 and summary["nodes"]["COMM_COLL_NODE"] == 24
    # all-reduce: 8 MiB on each of 4 ranks; reduce-scatter 16 MiB on each of 4
    assert summary["bytes_by_collective"]["allreduce"] == 4 * 8 * MIB
    assert summary["bytes_by_collective"]["reducescatter"] == 4 * 16 * MIB
    assert 'id="chakra-summary"' in body and "COMM_COLL_NODE" in body and "reducescatter" in body
    assert "tp0" in body and "tp1" in body
    job_text = response.context["job_form"]["job"].value()
    imported = json.loads(job_text)
    phases = {p["id"]: p for p in imported["job"]["phases"]}
    assert phases["n4"]["patterns"][0]["groups"] == [["h0/gpu0", "h0/gpu1"], ["h0/gpu2", "h0/gpu3"]]
    assert response.context["job_form"]["workload_type"].value() == "job"
    # Confirmation: Save posts the shown JSON; the scenario then holds the imported job.
    response = alice.post(url, job_post(job=job_text, name="chakra-step"))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Scenario.objects.get(name="chakra-step").workload == imported


def test_the_page_and_the_api_convert_alike(alice, small_topology):
    url = reverse("scenario_new", args=[small_topology.pk])
    page = alice.post(url, job_post(action="import", job="", chakra_traces=_traces(), chakra_groups=_groups()))
    files = [open(DATA / f"trace.{r}.et", "rb") for r in range(4)]
    try:
        api = alice.post(f"/api/v1/topologies/{small_topology.pk}/chakra-import/",
                         {"traces": files, "groups": open(DATA / "groups.json", "rb")})
    finally:
        for f in files:
            f.close()
    assert api.status_code == 200
    assert json.loads(page.context["job_form"]["job"].value()) == api.json()["workload"]


@pytest.mark.parametrize(("post", "field", "words"), [
    ({"ranks": [0, 1]}, "chakra_groups", "groups['tp1'][1]: rank 3 has no trace"),
    ({"cut": {2: 40}}, "chakra_traces", "rank 2 (trace.2.et) byte"),
    ({"groups": b'{"tp0": [0, 9]}'}, "chakra_groups", "groups['tp0'][1]: rank 9"),
    ({"groups": b'{"tp0": [0, 1]'}, "chakra_groups", "groups"),
])
def test_bad_traces_are_located_and_nothing_is_saved(alice, small_topology, post, field, words):
    groups = (SimpleUploadedFile("groups.json", post["groups"]) if "groups" in post else _groups())
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]),
                          job_post(action="import", job="", chakra_traces=_traces(post.get("ranks", range(4)),
                                                                                  post.get("cut")),
                                   chakra_groups=groups))
    assert response.status_code == 400 and not Scenario.objects.exists()
    errors = response.context["job_form"].errors[field]
    assert any(words in e for e in errors), errors
    assert "Traceback" not in response.content.decode()
    assert response.context["job_form"].chakra_summary is None


def test_the_api_limits_apply(alice, small_topology, monkeypatch):
    from designer.pages.forms import chakra

    monkeypatch.setattr(chakra, "CHAKRA_MAX_RANK_FILES", 3)
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]),
                          job_post(action="import", job="", chakra_traces=_traces()))
    assert response.status_code == 400
    assert "at most 3" in " ".join(response.context["job_form"].errors["chakra_traces"])
    monkeypatch.setattr(chakra, "CHAKRA_MAX_HOSTS", 1)
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]),
                          job_post(action="import", job="", chakra_traces=_traces(range(2))))
    assert "designs of up to 1 hosts; this one has 2" in " ".join(response.context["job_form"].errors["chakra_traces"])


@pytest.mark.parametrize("readonly, title", [(False, "(nothing is saved)"), (True, "viewer: fork to edit")])
def test_each_import_button_carries_one_title(alice, small_topology, other_user, readonly, title):
    """A viewer's disabled button says why in its only title; an editor's says what it does (two
    ``title`` attributes on one element: the browser shows the first and drops the other)."""
    import re

    from designer import services
    from tests.conftest import RING_ALLREDUCE

    scenario = services.scenario_create(topology=small_topology, user=small_topology.owner, name="ring",
                                        workload=RING_ALLREDUCE)
    if readonly:
        services.share_grant(topology=small_topology, actor=small_topology.owner, role="viewer",
                             user=other_user)
        alice.force_login(other_user)
    html = alice.get(reverse("scenario_edit", args=[scenario.pk])).content.decode()
    for button_id in ("import-workload", "import-chakra"):
        tag = re.search(rf'<button[^>]*id="{button_id}"[^>]*>', html).group(0)
        assert tag.count("title=") == 1, tag
        assert title in tag and ("disabled" in tag) == readonly
