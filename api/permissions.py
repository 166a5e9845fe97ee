"""Who may do what, for the API. The rules themselves live in ``designer.selectors``
(``ROLE_ACTIONS``, ``topology_require``); these classes only say which action an endpoint needs
and ask the selectors, so pages and the API cannot drift apart.

- Invisible objects are 404s (the selectors raise them; ids do not leak).
- Visible but not allowed: 403 with the standard error shape (Django's ``PermissionDenied``,
  translated by ``api.exception_handlers``).
- A share-link visitor (``?share=<token>`` or ``X-Share-Token``) may only read: every write is a
  403, and what it may read is whatever the selectors show a ``ShareLinkVisitor``.
"""
from __future__ import annotations

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission, IsAuthenticated

from designer import selectors
from designer.selectors import ShareLinkVisitor

__all__ = ["IsAuthenticatedUser", "IsUserOrShareLinkReader", "TopologyRole", "CanEditTopology",
           "SAFE_METHODS"]

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class IsAuthenticatedUser(IsAuthenticated):
    message = "authentication required: log in, or send 'Authorization: Bearer <token>'"

    def has_permission(self, request, view) -> bool:
        if isinstance(request.user, ShareLinkVisitor):
            raise PermissionDenied("a share link opens only the shared topology or result; "
                                   "sign in for this")
        return super().has_permission(request, view)


class IsUserOrShareLinkReader(BasePermission):
    """A signed-in user, or a share-link visitor reading (GET/HEAD/OPTIONS) only."""

    message = IsAuthenticatedUser.message

    def has_permission(self, request, view) -> bool:
        if isinstance(request.user, ShareLinkVisitor):
            if request.method in SAFE_METHODS:
                return True
            raise PermissionDenied("share links are read-only")
        return bool(request.user and request.user.is_authenticated)


class TopologyRole(BasePermission):
    """Object check: the requester's role on the object's topology allows the endpoint's action.

    The action is ``view.role_actions[view.action]`` when the view declares one (e.g.
    ``{"create": "run"}`` for job submission), else ``view`` for reads and ``edit`` for writes.
    A view may also define ``role_action(request, obj) -> str`` for rules that depend on the
    object (cancelling one's own job needs ``run``, anyone's needs ``edit``).
    """

    def has_object_permission(self, request, view, obj) -> bool:
        selectors.object_require(request.user, obj, self.action_for(request, view, obj))
        return True

    @staticmethod
    def action_for(request, view, obj) -> str:
        if hasattr(view, "role_action"):
            action = view.role_action(request, obj)
            if action:
                return action
        declared = getattr(view, "role_actions", {}).get(getattr(view, "action", None))
        if declared:
            return declared
        return "view" if request.method in SAFE_METHODS else "edit"


# Kept for existing imports: writes need edit rights, reads need view rights.
CanEditTopology = TopologyRole
