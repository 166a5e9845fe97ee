"""How the schema documents share-link access (``api.authentication.ShareLinkAuthentication``).

Every API view reads an ``X-Share-Token`` first, but only reads (GET/HEAD) of views whose
permission is ``IsUserOrShareLinkReader`` let a link holder in (not the audit trail, which needs
the ``audit`` role); everywhere else a link is a 403.
So ``shareLink`` is listed as a way in on those operations only: listing it on every operation
would promise link holders writes and account endpoints they are refused.
"""
from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from api.permissions import SAFE_METHODS, IsUserOrShareLinkReader

__all__ = ["ShareLinkScheme", "accepts_share_links"]


def accepts_share_links(view, method: str) -> bool:
    """True when a share-link visitor may call ``method`` on ``view``.

    Reads of reader views, except actions that need more than the ``view`` role
    (``role_actions``, e.g. the audit trail): a link holder gets a 403 there.
    """
    readers = any(isinstance(p, IsUserOrShareLinkReader) for p in view.get_permissions())
    role = getattr(view, "role_actions", {}).get(getattr(view, "action", None), "view")
    return readers and method.upper() in SAFE_METHODS and role == "view"


class ShareLinkScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ShareLinkAuthentication"
    name = "shareLink"

    def get_security_requirement(self, auto_schema):
        if not accepts_share_links(auto_schema.view, auto_schema.method):
            return None
        return {self.name: []}

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-Share-Token",
                "description": "a read-only share link's token (or ?share=<token>): GETs of "
                               "the shared topology or result only. An unknown, revoked, "
                               "expired or empty token is a 401 invalid_share_link, whatever "
                               "other credentials the request carries."}
