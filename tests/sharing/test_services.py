"""Sharing services and selectors: grants, roles, links (hashed, revocable, expiring), transfer,
fork and the audit trail. The world is drawn in ``tests/sharing/conftest.py``."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.utils import timezone

from designer import selectors, services
from designer.models import AuditEvent, Scenario, ShareLink, Topology, TopologyShare

pytestmark = pytest.mark.django_db


def test_roles(world):
    u, t = world.users, world.topology
    roles = {name: selectors.topology_role(u[name], t) for name in
             ("owner", "editor", "viewer", "team_viewer", "team_editor", "stranger")}
    assert roles == {"owner": "owner", "editor": "editor", "viewer": "viewer",
                     "team_viewer": "viewer", "team_editor": "editor", "stranger": None}
    link = selectors.ShareLinkVisitor(world.links["link"])
    assert selectors.topology_role(link, t) == "link"
    assert selectors.topology_role(selectors.ShareLinkVisitor(world.links["result_link"]), t) is None


def test_require_is_404_when_unseen_and_403_when_not_allowed(world):
    t = world.topology
    with pytest.raises(Http404):
        selectors.topology_require(world.users["stranger"], t, "view")
    with pytest.raises(PermissionDenied):
        selectors.topology_require(world.users["viewer"], t, "edit")
    assert selectors.topology_require(world.users["viewer"], t, "run") == "viewer"
    assert selectors.topology_require(world.users["editor"], t, "edit") == "editor"
    with pytest.raises(PermissionDenied):
        selectors.topology_require(world.users["editor"], t, "manage")


def test_grant_twice_changes_the_role_and_never_duplicates(world):
    alice, zed = world.users["owner"], world.users["zed"]
    first = services.share_grant(topology=world.topology, actor=alice, role="viewer", user=zed)
    second = services.share_grant(topology=world.topology, actor=alice, role="editor", user=zed)
    assert first.pk == second.pk and second.role == "editor"
    assert TopologyShare.objects.filter(topology=world.topology, user=zed).count() == 1
    with pytest.raises(ValidationError):
        services.share_grant(topology=world.topology, actor=alice, role="viewer", user=alice)
    with pytest.raises(ValidationError):
        services.share_grant(topology=world.topology, actor=alice, role="admin", user=zed)


def test_revoked_grant_loses_access_at_once(world):
    viewer = world.users["viewer"]
    services.share_revoke(share=world.shares["viewer"], actor=world.users["owner"])
    with pytest.raises(Http404):
        selectors.topology_get(user=viewer, pk=world.topology.pk)
    assert selectors.job_list(user=viewer).count() == 0


def test_link_token_is_random_hashed_and_shown_once(world):
    link, token = services.share_link_create(topology=world.topology,
                                             actor=world.users["owner"])
    assert len(token) >= 43 and token not in link.token_hash
    assert not ShareLink.objects.filter(token_hash=token).exists()
    assert selectors.share_link_resolve(token).pk == link.pk
    other = services.share_link_create(topology=world.topology, actor=world.users["owner"])[1]
    assert other != token


def test_link_revoke_and_expiry(world):
    link, token = services.share_link_create(
        topology=world.topology, actor=world.users["owner"],
        expires_at=timezone.now() + timedelta(hours=1))
    assert selectors.share_link_resolve(token) == link
    ShareLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(Http404):
        selectors.share_link_resolve(token)
    ShareLink.objects.filter(pk=link.pk).update(expires_at=None)
    services.share_link_revoke(link=ShareLink.objects.get(pk=link.pk), actor=world.users["owner"])
    with pytest.raises(Http404):
        selectors.share_link_resolve(token)
    with pytest.raises(ValidationError):
        services.share_link_create(topology=world.topology, actor=world.users["owner"],
                                   expires_at=timezone.now() - timedelta(days=1))
    with pytest.raises(ValidationError):  # a result link must name a job of this topology
        services.share_link_create(topology=world.topology, actor=world.users["owner"],
                                   job=world.secret_job)


def test_transfer_keeps_previous_owner_as_editor(world):
    alice, zed = world.users["owner"], world.users["zed"]
    services.topology_transfer(topology=world.topology, actor=alice, new_owner=zed)
    world.topology.refresh_from_db()
    assert world.topology.owner == zed
    assert selectors.topology_role(alice, world.topology) == "editor"
    assert selectors.topology_role(zed, world.topology) == "owner"
    with pytest.raises(ValidationError):  # already the owner
        services.topology_transfer(topology=world.topology, actor=zed, new_owner=zed)


def test_transfer_refuses_a_name_clash(world):
    bob = world.users["stranger"]
    services.topology_create(owner=bob, name="pod-2")
    with pytest.raises(ValidationError):
        services.topology_transfer(topology=world.topology, actor=world.users["owner"],
                                   new_owner=bob)


def test_fork_copies_current_revision_and_its_scenarios(world):
    """pod-2 r1 + scenario "ring" → victor's "pod-2 (fork)" r1 + "ring"; a second fork is
    "pod-2 (fork 2)"; the source is untouched."""
    victor = world.users["viewer"]
    fork = services.topology_fork(topology=world.topology, user=victor)
    assert (fork.owner, fork.name, fork.revision_number) == (victor, "pod-2 (fork)", 1)
    assert fork.current_revision.document == world.topology.current_revision.document
    assert list(Scenario.objects.filter(topology=fork).values_list("name", flat=True)) == ["ring"]
    assert fork.gpu_count == world.topology.gpu_count == 16
    assert services.topology_fork(topology=world.topology, user=victor).name == "pod-2 (fork 2)"
    assert Topology.objects.filter(owner=world.users["owner"]).count() == 1


def test_audit_trail_records_who_changed_what(world, published):
    alice, eve = world.users["owner"], world.users["editor"]
    services.revision_save(topology=world.topology, user=eve,
                           document=world.topology.current_revision.document, base_revision=1,
                           message="eve's change")
    services.job_submit_simulate(scenario=world.scenario, user=world.users["viewer"])
    services.share_revoke(share=world.shares["viewer"], actor=alice)
    services.topology_transfer(topology=world.topology, actor=alice, new_owner=world.users["zed"])
    events = list(AuditEvent.objects.filter(topology=world.topology)
                  .values_list("action", "actor__username"))
    for expected in [("revision.save", "alice"), ("share.grant", "alice"),
                     ("link.create", "alice"), ("link.revoke", "alice"),
                     ("job.submit", "alice"), ("revision.save", "eve"),
                     ("job.submit", "victor"), ("share.revoke", "alice"),
                     ("owner.transfer", "alice")]:
        assert expected in events, expected
    # deleting keeps the trail (with the topology's name)
    name, pk = world.topology.name, world.topology.pk
    services.topology_delete(topology=world.topology, actor=world.users["zed"])
    deleted = AuditEvent.objects.get(action="topology.delete")
    assert (deleted.topology_id, deleted.topology_name) == (None, name)
    assert not AuditEvent.objects.filter(topology_id=pk).exists()


def test_audit_is_for_owner_and_editors(world):
    assert selectors.audit_list(user=world.users["editor"], topology_pk=world.topology.pk).exists()
    with pytest.raises(PermissionDenied):
        selectors.audit_list(user=world.users["viewer"], topology_pk=world.topology.pk)
    with pytest.raises(Http404):
        selectors.audit_list(user=world.users["stranger"], topology_pk=world.topology.pk)


def test_fork_keeps_a_scenarios_latency_request(world):
    """A forked scenario asks the same latency view as its source."""
    request = {"message_bytes": 8, "initiators": ["gpu_initiated"]}
    services.scenario_update(scenario=world.scenario, user=world.users["owner"], latency=request)
    fork = services.topology_fork(topology=world.topology, user=world.users["viewer"])
    assert Scenario.objects.get(topology=fork).latency == request
