"""What each role sees on the pages: viewers get no edit controls (read-only editor, no save or
new-scenario buttons) but can run scenarios and fork; the owner's sharing page works end to end.
"""
from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from designer.models import AuditEvent, ShareLink, SimulationJob, Topology

pytestmark = pytest.mark.django_db


def _editor_config(html: str) -> dict:
    return json.loads(re.search(r'id="editor-config"[^>]*>(.*?)</script>', html, re.S)[1])


def test_viewer_sees_no_edit_controls(world, page_as):
    viewer = page_as("viewer")
    t = world.topology
    detail = viewer.get(reverse("topology_detail", args=[t.pk])).content.decode()
    assert "View topology (read-only)" in detail and "Open editor" not in detail
    assert reverse("scenario_new", args=[t.pk]) not in detail
    assert 'id="fork-button"' in detail and 'id="share-button"' not in detail
    assert 'id="activity"' not in detail  # viewers do not see the audit trail
    assert _editor_config(viewer.get(reverse("editor", args=[t.pk])).content.decode())[
        "readonly"] is True
    scenario = viewer.get(reverse("scenario_edit", args=[world.scenario.pk])).content.decode()
    assert 'value="save"' not in scenario and 'id="viewer-note"' in scenario
    assert 'value="simulate"' in scenario
    job = viewer.get(reverse("job_detail", args=[world.queued_job.pk])).content.decode()
    assert 'id="cancel-form"' not in job  # not their job


def test_editor_and_owner_controls(world, page_as):
    t = world.topology
    for who in ("owner", "editor", "team_editor"):
        client = page_as(who)
        detail = client.get(reverse("topology_detail", args=[t.pk])).content.decode()
        assert "Open editor" in detail and 'id="activity"' in detail, who
        assert _editor_config(client.get(reverse("editor", args=[t.pk])).content.decode())[
            "readonly"] is False
    owner_page = page_as("owner").get(reverse("sharing", args=[t.pk])).content.decode()
    editor_page = page_as("editor").get(reverse("sharing", args=[t.pk])).content.decode()
    assert 'id="grant-form"' in owner_page and 'id="link-form"' in owner_page
    assert 'id="grant-form"' not in editor_page and 'id="link-form"' not in editor_page


def test_viewer_runs_a_scenario_but_cannot_save_it(world, page_as):
    viewer = page_as("viewer")
    url = reverse("scenario_edit", args=[world.scenario.pk])
    response = viewer.post(url, {"action": "simulate", "name": "renamed"})
    job = SimulationJob.objects.latest("pk")
    assert response.status_code == 302 and response["Location"] == reverse("job_detail",
                                                                           args=[job.pk])
    assert job.submitted_by == world.users["viewer"]
    world.scenario.refresh_from_db()
    assert world.scenario.name == "ring"  # the name field was ignored
    assert viewer.post(url, {"action": "save", "name": "x"}).status_code == 403
    # their own job: they may cancel it
    assert viewer.post(reverse("job_cancel", args=[job.pk])).status_code == 302
    job.refresh_from_db()
    assert job.state == "cancelled"


def test_shared_with_me_tab_filters_by_role_and_owner(world, page_as, django_user_model):
    from designer import services

    carol = django_user_model.objects.create_user("carol", password="x")
    other = services.topology_create(owner=carol, name="carol-lab")
    services.share_grant(topology=other, actor=carol, role="editor", user=world.users["viewer"])
    viewer = page_as("viewer")
    base = reverse("topology_list") + "?tab=shared"
    everything = viewer.get(base).content.decode()
    assert "pod-2" in everything and "carol-lab" in everything
    assert 'data-role="viewer"' in everything and 'data-role="editor"' in everything
    as_editor = viewer.get(base + "&role=editor").content.decode()
    assert "carol-lab" in as_editor and "pod-2" not in as_editor
    by_alice = viewer.get(base + "&owner=alice").content.decode()
    assert "pod-2" in by_alice and "carol-lab" not in by_alice
    assert "Owner: carol" in everything  # the owner filter offers only owners who shared
    mine = viewer.get(reverse("topology_list")).content.decode()
    assert "pod-2" not in mine


def test_sharing_page_flow(world, page_as):
    owner = page_as("owner")
    t = world.topology
    url = reverse("sharing", args=[t.pk])
    owner.post(reverse("share_grant", args=[t.pk]), {"kind": "user", "name": "zed",
                                                     "role": "viewer"})
    owner.post(reverse("share_grant", args=[t.pk]), {"kind": "group", "name": "nope",
                                                     "role": "viewer"})
    page = owner.get(url).content.decode()
    assert "zed" in page and "no team named" in page  # the refused grant says why, once
    assert "no team named" not in owner.get(url).content.decode()
    response = owner.post(reverse("link_create", args=[t.pk]),
                          {"job": world.job.pk, "expires_in_days": "7"}, follow=True)
    body = response.content.decode()
    new_url = re.search(r'id="new-link-url">([^<]+)<', body)[1]
    assert "/s/" in new_url
    assert 'id="new-link-url"' not in owner.get(url).content.decode()  # shown once
    token = new_url.rstrip("/").rsplit("/", 1)[1]
    anon = page_as("anon")
    assert anon.get(f"/s/{token}/").status_code == 302
    link = ShareLink.objects.latest("pk")
    owner.post(reverse("link_revoke", args=[t.pk, link.pk]))
    assert anon.get(f"/s/{token}/results/{world.job.pk}/").status_code == 404
    owner.post(reverse("share_role", args=[t.pk, world.shares["viewer"].pk]), {"role": "editor"})
    assert AuditEvent.objects.filter(action="share.change").exists()
    owner.post(reverse("share_revoke", args=[t.pk, world.shares["viewer"].pk]))
    assert page_as("viewer").get(reverse("topology_detail", args=[t.pk])).status_code == 404


def test_delete_needs_the_name_and_transfer_keeps_editor(world, page_as):
    owner = page_as("owner")
    t = world.topology
    owner.post(reverse("topology_delete", args=[t.pk]), {"confirm": "wrong"})
    assert Topology.objects.filter(pk=t.pk).exists()
    response = owner.post(reverse("topology_transfer", args=[t.pk]), {"username": "zed"})
    assert response.status_code == 302
    t.refresh_from_db()
    assert t.owner.username == "zed"
    assert owner.get(reverse("sharing", args=[t.pk])).status_code == 200  # now an editor
    assert owner.post(reverse("topology_delete", args=[t.pk]),
                      {"confirm": "pod-2"}).status_code == 403


def test_fork_from_the_page(world, page_as):
    response = page_as("team_viewer").post(reverse("topology_fork", args=[world.topology.pk]))
    fork = Topology.objects.get(owner=world.users["team_viewer"])
    assert response["Location"] == reverse("topology_detail", args=[fork.pk])
    assert fork.name == "pod-2 (fork)"
