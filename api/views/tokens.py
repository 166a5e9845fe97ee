"""``/auth/token/``: your own API token."""
from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.schema import tokens as doc
from api.views.base import ApiMixin
from designer import selectors, services

__all__ = ["AuthTokenView"]


class AuthTokenView(ApiMixin, APIView):
    """Your own API token: see it, create/rotate it, revoke it."""

    @doc.get
    def get(self, request):
        return Response(_token_body(selectors.api_token_get(user=request.user)))

    @doc.post
    def post(self, request):
        token = services.api_token_rotate(user=request.user)
        return Response(_token_body(token), status=status.HTTP_201_CREATED)

    @doc.delete
    def delete(self, request):
        services.api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _token_body(token) -> dict:
    return {"token": token.key if token else None, "created": token.created if token else None}
