"""Who may do what. Visibility itself lives in ``designer.selectors`` (invisible objects are
404s); these classes add the checks that remain once an object is visible.

Until sharing lands every visible topology is the user's own, so visible implies editable;
:class:`CanEditTopology` is where the viewer/editor distinction will go.
"""
from __future__ import annotations

from rest_framework.permissions import BasePermission, IsAuthenticated

__all__ = ["IsAuthenticatedUser", "CanEditTopology"]

_SAFE = ("GET", "HEAD", "OPTIONS")


class IsAuthenticatedUser(IsAuthenticated):
    message = "authentication required: log in, or send 'Authorization: Bearer <token>'"


class CanEditTopology(BasePermission):
    """Writes to a topology (and its revisions, scenarios and jobs) need edit rights on it."""

    message = "you may view this topology but not change it"

    def has_object_permission(self, request, view, obj) -> bool:
        if request.method in _SAFE:
            return True
        topology = getattr(obj, "topology", obj)
        return topology.owner_id == request.user.pk
