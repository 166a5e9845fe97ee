"""Sharing: grants, read-only share links, ownership transfer, forks, the audit trail.

Callers have checked the actor's role with ``designer.selectors.topology_require`` (the one
place the rules live); these functions enforce only invariants of the data (never share with
the owner, one grant per grantee, links shown once, a transfer target without a clashing name).
Every change appends an audit event (:func:`audit_record`, kept in ``audit`` because topologies
and jobs write the trail too).
"""
from __future__ import annotations

import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from designer.choices import AuditAction, ShareRole
from designer.models import Scenario, ShareLink, SimulationJob, Topology, TopologyShare
from designer.ops import limits
from designer.params import check_printable
from designer.selectors import share_link_hash
from designer.services.audit import audit_record
from designer.services.topologies import revision_append

__all__ = ["audit_record", "share_grant", "share_update", "share_revoke", "share_link_create",
           "share_link_revoke", "topology_transfer", "topology_fork"]


def share_grant(*, topology: Topology, actor: AbstractBaseUser, role: str,
                user: AbstractBaseUser | None = None, group=None) -> TopologyShare:
    """Give ``user`` or ``group`` (exactly one) ``role`` on ``topology``; an existing grant of
    the same grantee changes role instead. Returns the grant.

    Raises
    ------
    ValidationError
        No or two grantees, the owner as grantee, an unknown role.
    """
    if (user is None) == (group is None):
        raise ValidationError({"grantee": "give either a user or a team (group)"})
    if role not in ShareRole.values:
        raise ValidationError({"role": f"choose among {', '.join(ShareRole.values)}"})
    if user is not None and user.pk == topology.owner_id:
        raise ValidationError({"user": "the owner already has every right"})
    with transaction.atomic():
        share, created = TopologyShare.objects.select_for_update().get_or_create(
            topology=topology, user=user, group=group,
            defaults={"role": role, "created_by": actor})
        if not created and share.role == role:
            return share
        old = share.role
        if not created:
            share.role = role
            share.save(update_fields=["role", "updated_at"])
        action = AuditAction.SHARE_GRANT if created else AuditAction.SHARE_CHANGE
        text = (f"shared with {share.grantee} as {role}" if created
                else f"{share.grantee}: {old} -> {role}")
        audit_record(topology=topology, actor=actor, action=action, summary=text,
                     details={"share": share.pk, "role": role, **_grantee(share)})
    return share


def _grantee(share) -> dict:
    return ({"user": share.user.get_username()} if share.user_id
            else {"group": share.group.name})


def share_update(*, share, actor: AbstractBaseUser, role: str) -> TopologyShare:
    """Change the role of an existing grant."""
    grantee = {"user": share.user} if share.user_id else {"group": share.group}
    return share_grant(topology=share.topology, actor=actor, role=role, **grantee)


def share_revoke(*, share, actor: AbstractBaseUser) -> None:
    """Remove a grant: the grantee loses access at once (their next request is a 404)."""
    with transaction.atomic():
        audit_record(topology=share.topology, actor=actor, action=AuditAction.SHARE_REVOKE,
                     summary=f"revoked {share.grantee} ({share.role})",
                     details={"share": share.pk, "role": share.role, **_grantee(share)})
        share.delete()


def share_link_create(*, topology: Topology, actor: AbstractBaseUser,
                      job: SimulationJob | None = None, expires_at=None, label: str = ""):
    """Create a read-only link to ``topology`` (or to ``job``'s result). Returns (link, token):
    the token is ``secrets.token_urlsafe(32)`` and only its sha256 is stored, so show it now."""
    if job is not None and job.topology_id != topology.pk:
        raise ValidationError({"job": "the job belongs to another topology"})
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationError({"expires_at": "must be in the future"})
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        link = ShareLink(topology=topology, job=job, token_hash=share_link_hash(token),
                         label=label[:200], created_by=actor, expires_at=expires_at)
        link.full_clean()
        link.save()
        what = f"the result of job {job.pk}" if job is not None else "the topology"
        audit_record(topology=topology, actor=actor, action=AuditAction.LINK_CREATE,
                     summary=f"read-only link {link.pk} to {what}"
                             + (f", expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""),
                     details={"link": link.pk, "job": job.pk if job else None})
    return link, token


def share_link_revoke(*, link, actor: AbstractBaseUser) -> ShareLink:
    """Revoke a link (kept, marked revoked, so the audit trail and list still show it)."""
    if link.revoked_at is not None:
        return link
    link.revoked_at = timezone.now()
    with transaction.atomic():
        link.save(update_fields=["revoked_at"])
        audit_record(topology=link.topology, actor=actor, action=AuditAction.LINK_REVOKE,
                     summary=f"revoked read-only link {link.pk}", details={"link": link.pk})
    return link


def topology_transfer(*, topology: Topology, actor: AbstractBaseUser,
                      new_owner: AbstractBaseUser) -> Topology:
    """Make ``new_owner`` the owner. Their own grant (if any) is removed; the previous owner
    keeps editor access (they can be revoked like anyone else).

    Raises
    ------
    ValidationError
        ``new_owner`` already owns it, is inactive, or owns a topology with the same name.
    """
    if new_owner.pk == topology.owner_id:
        raise ValidationError({"user": "already the owner"})
    if not new_owner.is_active:
        raise ValidationError({"user": "that account is disabled"})
    if Topology.objects.filter(owner=new_owner, name=topology.name).exists():
        raise ValidationError({"user": f"{new_owner.get_username()} already has a topology "
                                       f"named {topology.name!r}; rename one first"})
    with transaction.atomic():
        locked = Topology.objects.select_for_update().get(pk=topology.pk)
        previous = locked.owner
        TopologyShare.objects.filter(topology=locked, user=new_owner).delete()
        locked.owner = new_owner
        locked.save(update_fields=["owner", "updated_at"])
        TopologyShare.objects.update_or_create(
            topology=locked, user=previous, defaults={"role": ShareRole.EDITOR, "created_by": actor})
        audit_record(topology=locked, actor=actor, action=AuditAction.OWNER_TRANSFER,
                     summary=f"ownership {previous.get_username()} -> {new_owner.get_username()}"
                             f" ({previous.get_username()} keeps editor access)",
                     details={"from": previous.get_username(), "to": new_owner.get_username()})
    topology.owner, topology.updated_at = new_owner, locked.updated_at
    return topology


def topology_fork(*, topology: Topology, user: AbstractBaseUser, name: str | None = None
                  ) -> Topology:
    """Copy the current revision and its scenarios into a new topology owned by ``user``.

    Scenarios written for an older revision are not copied (their targets may not exist in the
    current document). The new topology's name defaults to ``"<name> (fork)"``, numbered when
    the user already has one.
    """
    source = topology.current_revision
    name = (name or "").strip() or _fork_name(topology.name, user)
    check_printable(name)
    with transaction.atomic():
        limits.check_topology_quota(user=user)  # a fork is the forker's: it counts against their quota
        fork = Topology(owner=user, name=name, description=topology.description,
                        plan_placements=topology.plan_placements)  # the floor plan's hand edits too
        fork.full_clean()
        if source is not None:
            limits.check_storage_quota(user=user,
                                       adding_bytes=limits.document_bytes(source.document))
        fork.save()
        if source is not None:
            revision = revision_append(
                fork, user, source.document,
                f"forked from {topology.owner.get_username()}/{topology.name} r{source.number}")
            for scenario in Scenario.objects.filter(topology=topology, revision=source):
                Scenario.objects.create(
                    topology=fork, revision=revision, name=scenario.name,
                    description=scenario.description, workload=scenario.workload,
                    routing=scenario.routing, failures=scenario.failures, mode=scenario.mode,
                    latency=scenario.latency, created_by=user)
        audit_record(topology=topology, actor=user, action=AuditAction.TOPOLOGY_FORK,
                     summary=f"forked by {user.get_username()} as {name!r}",
                     details={"fork": fork.pk, "revision": source.number if source else None})
    return fork


def _fork_name(name: str, user) -> str:
    taken = set(Topology.objects.filter(owner=user, name__startswith=name[:180])
                .values_list("name", flat=True))
    base = f"{name[:180]} (fork)"
    n = 2
    candidate = base
    while candidate in taken:
        candidate, n = f"{name[:180]} (fork {n})", n + 1
    return candidate
