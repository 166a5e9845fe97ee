"""Token authentication accepting both ``Authorization: Token <key>`` and ``Bearer <key>``.

Keys are DRF authtoken keys (``manage.py drf_create_token USER``, or ``/api/v1/auth/token/``).
"""
from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header

__all__ = ["BearerTokenAuthentication"]


class BearerTokenAuthentication(TokenAuthentication):
    """DRF's TokenAuthentication with ``Bearer`` accepted as a synonym of ``Token``."""

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
        return self.authenticate_credentials(key)

    def authenticate_header(self, request) -> str:
        # Present on every 401: tells clients which scheme to use (RFC 6750).
        return 'Bearer realm="api"'
