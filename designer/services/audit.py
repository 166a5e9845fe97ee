"""The audit trail's one writer.

A module of its own, below the others, because topologies, jobs and sharing all append events:
``sharing`` re-exports :func:`audit_record` with the rest of the sharing services.
"""
from __future__ import annotations

from designer.models import AuditEvent, Topology

__all__ = ["audit_record"]


def audit_record(*, topology: Topology | None, actor, action: str, summary: str,
                 details: dict | None = None) -> AuditEvent:
    """Append an audit event (``designer.models.AuditEvent``); returns it.

    Parameters
    ----------
    topology : Topology or None
        The topology concerned; its name is copied so the event outlives it.
    actor : User or None
        Who acted; anonymous actors (share-link visitors) are stored as None.
    action : str
        A ``designer.choices.AuditAction`` value (e.g. ``"revision.save"``).
    summary : str
        One line for people, cut to 500 characters.
    details : dict, optional
        Machine-readable extras (ids, roles).
    """
    return AuditEvent.objects.create(
        topology=topology, topology_name=topology.name if topology else "",
        actor=actor if getattr(actor, "is_authenticated", False) else None, action=action,
        summary=summary[:500], details=details or {})
