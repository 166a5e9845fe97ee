"""One topology, checked once per request: the in-memory rule equals the SQL rule, and a mark
never lets anyone else through.

Single-object reads (``topology_get``, ``job_get``, ``revision_get``) fetch the row by its key
and apply :func:`designer.selectors.topology_role` to it in memory; lists filter by
:func:`designer.selectors.visible_topologies` in SQL. For every principal of
``tests/sharing/conftest.py`` (owner, editor, viewer, team members, stranger, anonymous, topology
link, result link) and both topologies (alice's, shared; bob's, not), the two agree. The checked
topology carries a mark of who it was checked for: handed to anyone else, or after its owner
changed in memory, it is checked again.
"""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from designer import selectors
from designer.models import Topology
from designer.selectors import ShareLinkVisitor
from tests.sharing.conftest import USERS

pytestmark = pytest.mark.django_db

SQL_ROLE_PRINCIPALS = (*USERS, "anon", "link", "result_link")


def _principal(world, name: str):
    if name in USERS:
        return world.users[name]
    if name == "anon":
        return AnonymousUser()
    return ShareLinkVisitor(world.links[name])


@pytest.mark.parametrize("name", SQL_ROLE_PRINCIPALS)
def test_memory_rule_equals_sql_rule(world, name):
    """Visible by the in-memory rule exactly when the SQL rule lists it, with the same role."""
    user = _principal(world, name)
    for topology in (world.topology, world.secret):
        fresh = Topology.objects.get(pk=topology.pk)
        listed = selectors.topology_list(user=user).filter(pk=topology.pk).first()
        role = selectors.topology_role(user, fresh)
        assert (role is not None) == (listed is not None), (name, topology.name, role)
        if listed is not None:
            assert listed.my_role == role, (name, listed.my_role, role)
            assert selectors.topology_get(user=user, pk=topology.pk).my_role == role
        else:
            with pytest.raises(Http404):
                selectors.topology_get(user=user, pk=topology.pk)


def test_a_mark_answers_only_its_requester(world, django_assert_num_queries):
    """The viewer's checked topology answers the viewer's role from its mark (no query); given
    to the stranger it is checked again (404 through the selectors, None as a role), and the
    selectors taking ``topology=`` refetch it for him rather than trust it."""
    viewer, stranger = world.users["viewer"], world.users["stranger"]
    topology = selectors.topology_get(user=viewer, pk=world.topology.pk)
    with django_assert_num_queries(0):
        assert selectors.topology_role(viewer, topology) == "viewer"
        assert not selectors.topology_can(viewer, topology, "edit")
    assert selectors.topology_role(stranger, topology) is None
    for read in (selectors.revision_list, selectors.scenario_list, selectors.recent_jobs):
        with pytest.raises(Http404):
            read(user=stranger, topology=topology)
    visitor = ShareLinkVisitor(world.links["result_link"])
    with pytest.raises(Http404):
        selectors.revision_list(user=visitor, topology=topology)


def test_a_mark_is_dropped_when_the_owner_changes(world):
    """A transfer changes ``owner`` in memory: the old owner's mark no longer answers."""
    alice, zed = world.users["owner"], world.users["zed"]
    topology = selectors.topology_get(user=alice, pk=world.topology.pk)
    assert selectors.topology_role(alice, topology) == "owner"
    topology.owner = zed
    assert selectors.topology_role(alice, topology) is None
    assert not selectors.is_checked_for(alice, topology)


def test_a_viewer_gets_no_owner_only_lists_from_a_checked_topology(world):
    """``topology=`` still applies the action's rule: the grant list and audit trail need
    ``audit``, which a viewer's checked topology does not give (403), an editor's does."""
    from django.core.exceptions import PermissionDenied

    viewer, editor = world.users["viewer"], world.users["editor"]
    topology = selectors.topology_get(user=viewer, pk=world.topology.pk)
    for read in (selectors.share_list, selectors.audit_list):
        with pytest.raises(PermissionDenied):
            read(user=viewer, topology=topology)
    access = selectors.topology_access(user=viewer, topology=topology)
    assert access["shares"] == [] and access["audit"] == []
    topology = selectors.topology_get(user=editor, pk=world.topology.pk)
    assert len(selectors.share_list(user=editor, topology=topology)) == len(world.shares)


@pytest.mark.parametrize("name", SQL_ROLE_PRINCIPALS)
def test_single_job_and_revision_reads_follow_the_rule(world, name):
    """``job_get`` / ``revision_get`` (read by key, checked in memory) answer exactly the jobs
    and revisions the SQL lists hold: alice's for those who see her topology, the result link's
    one job and its revision, bob's for nobody here but bob."""
    user = _principal(world, name)
    listed_jobs = set(selectors.job_list(user=user).values_list("pk", flat=True))
    for job in (world.job, world.queued_job, world.secret_job):
        try:
            selectors.job_get(user=user, pk=job.pk)
            seen = True
        except Http404:
            seen = False
        assert seen == (job.pk in listed_jobs), (name, job.pk)
    for topology in (world.topology, world.secret):
        try:
            revision = selectors.revision_get(user=user, topology_pk=topology.pk, number=1)
            seen = True
        except Http404:
            seen = False
        visible = selectors.visible_topologies(user).filter(pk=topology.pk).exists()
        result_revision = (name == "result_link" and topology.pk == world.topology.pk
                           and world.job.revision.number == 1)
        assert seen == (visible or result_revision), (name, topology.name)
        if seen:
            assert revision.topology_id == topology.pk
