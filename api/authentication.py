"""Token authentication accepting both ``Authorization: Token <key>`` and ``Bearer <key>``.

Keys are hashed, expiring, scoped API tokens (``designer.services.tokens``; created on the
profile page, by ``POST /api/v1/auth/token/`` or ``manage.py api_token create``). A ``read``
token may only GET/HEAD/OPTIONS: the scope is checked here, where every API request is
authenticated, so no view can forget it.
"""
from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header

from rest_framework.permissions import SAFE_METHODS

__all__ = ["BearerTokenAuthentication", "ShareLinkAuthentication"]


class BearerTokenAuthentication(TokenAuthentication):
    """``Bearer`` (or DRF's ``Token``) + an API key. A subclass of DRF's class only so that the
    schema documents it as HTTP bearer; the key check is :func:`designer.services.tokens.api_token_authenticate`.

    ``request.auth`` is the :class:`designer.models.ApiToken`.
    """

    keyword = "Bearer"
    keywords = ("token", "bearer")

    def authenticate(self, request):
        auth = get_authorization_header(request).split()
        if not auth or auth[0].lower().decode(errors="replace") not in self.keywords:
            return None  # not ours: let session authentication (or anonymous) handle it
        if len(auth) != 2:
            raise exceptions.AuthenticationFailed(
                "invalid Authorization header: expected 'Bearer <token>' or 'Token <token>'")
        try:
            key = auth[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("invalid token: not ASCII") from None
        token = self.authenticate_credentials(key)
        _require_scope(token, request.method)
        return token.user, token

    def authenticate_credentials(self, key):
        from designer import services
        from designer.services.tokens import ApiTokenRejected

        try:
            return services.api_token_authenticate(key)
        except ApiTokenRejected as exc:
            # "invalid_token" keeps DRF's generic code; an expired key says so (its holder has
            # the key, so nothing is disclosed) and what to do about it.
            code = "token_expired" if exc.code == "token_expired" else "authentication_failed"
            raise exceptions.AuthenticationFailed(str(exc), code=code) from None

    def authenticate_header(self, request) -> str:
        # Present on every 401: tells clients which scheme to use (RFC 6750).
        return 'Bearer realm="api"'


def _require_scope(token, method: str) -> None:
    if token.scope == "read" and method not in SAFE_METHODS:
        raise exceptions.PermissionDenied(
            f"this API token ({token.name!r}, {token.prefix}…) has the read scope: it may GET, "
            f"HEAD and OPTIONS only, not {method}; use a token with the write scope",
            code="insufficient_scope")


class ShareLinkAuthentication:
    """A read-only share link: ``X-Share-Token: <token>`` or ``?share=<token>``.

    The requester becomes a :class:`designer.selectors.ShareLinkVisitor` (no account), which the
    selectors let see the linked topology or result only. Listed first: a request that carries a
    token asked for link access, whatever else it carries.

    An unknown, revoked, expired or empty token is a 401 ``invalid_share_link`` (the same answer
    for each, so nothing is disclosed about which), even next to a valid bearer token: a bad
    credential is refused, never silently swapped for another one, or a script checking that a
    revoked link is dead would be answered with its owner's view and conclude the link works.
    """

    def authenticate(self, request):
        from django.http import Http404

        from designer.selectors import ShareLinkVisitor, share_link_resolve

        token = request.META.get("HTTP_X_SHARE_TOKEN")
        if token is None:
            token = request.query_params.get("share")
        if token is None:
            return None
        try:
            link = share_link_resolve(token.strip())
        except Http404 as exc:
            raise exceptions.AuthenticationFailed(str(exc), code="invalid_share_link") from None
        return ShareLinkVisitor(link), link

    def authenticate_header(self, request):
        # DRF takes the first authenticator's header for 401s: keep announcing Bearer.
        return BearerTokenAuthentication().authenticate_header(request)
