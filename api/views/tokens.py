"""``/auth/token/``: your API tokens. List them (never their keys), create one (the key is in
that answer only), revoke one or all. Creating also works without an account session: a
username and password in the body (sign-in lockout applies) get a token in one call."""
from __future__ import annotations

from django.contrib.auth import authenticate
from rest_framework import exceptions, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.permissions import IsAuthenticatedUser
from api.schema import tokens as doc
from api.views.base import ApiMixin, valid_data
from designer import selectors, services
from designer.accounts import client_ip, lock_status, locked_message
from designer.models import ApiToken
from designer.ops.throttling import AnonThrottle, SignInThrottle, UserThrottle

__all__ = ["AuthTokenView", "AuthTokenDetailView"]


class AuthTokenView(ApiMixin, APIView):
    """Your API tokens: list, create (rotate by name), revoke all."""

    throttle_classes = [AnonThrottle, UserThrottle, SignInThrottle]  # POST: per address and account

    def get_permissions(self):
        # An anonymous POST may carry a username and password; the view checks them.
        if self.request.method == "POST":
            return [AllowAny()]
        return [IsAuthenticatedUser()]

    @doc.get
    def get(self, request):
        tokens = selectors.api_tokens_list(user=request.user)
        return Response(s.TokenSerializer(tokens, many=True).data)

    @doc.post
    def post(self, request):
        data = valid_data(s.TokenCreateSerializer, request.data)
        user = _requester(request, data)
        within = request.auth if isinstance(request.auth, ApiToken) else None
        token = services.api_token_create(user=user, name=data["name"], scope=data["scope"],
                                          days=data.get("days"), within=within)
        body = s.TokenCreatedSerializer(token).data
        return Response(body, status=status.HTTP_201_CREATED)

    @doc.delete
    def delete(self, request):
        services.api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AuthTokenDetailView(ApiMixin, APIView):
    """One of your API tokens: revoke it."""

    @doc.delete_one
    def delete(self, request, pk: int):
        services.api_token_revoke(user=request.user, pk=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _requester(request, data: dict):
    """Who the new token is for: the username and password's account when given, else the
    signed-in requester (a share-link visitor is not one: IsAuthenticatedUser says why)."""
    if "username" not in data:
        if not IsAuthenticatedUser().has_permission(request, None):
            raise exceptions.NotAuthenticated()
        return request.user
    user = authenticate(request._request, username=data["username"], password=data["password"])
    if user is not None:
        return user
    lock = lock_status(data["username"], client_ip(request._request))
    message = locked_message(lock) if lock is not None else "invalid username or password"
    raise exceptions.AuthenticationFailed(message)
