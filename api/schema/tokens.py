"""Docs of ``/auth/token/`` (``api.views.tokens``: get, post, delete; delete_one for
``/auth/token/{id}/``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api import serializers as s
from api.schema.helpers import errors, example

__all__ = ["get", "post", "delete", "delete_one"]

_INFO = {"id": 7, "name": "ci", "prefix": "fsk_Ab12Cd34", "scope": "read",
         "created": "2026-01-05T10:00:00Z", "expires": "2026-04-05T10:00:00Z",
         "last_used": "2026-01-06T08:12:00Z"}
_CREATED = {**_INFO, "last_used": None,
            "token": "fsk_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv1"}

get = extend_schema(summary="Your API tokens (never their keys)", operation_id="auth_token_list",
                    responses={200: s.TokenSerializer(many=True), **errors(403)},
                    examples=[example("tokens", [_INFO])])

post = extend_schema(
    summary="Create an API token; its key is in this answer only",
    description=(
        "Signed in (session or a write token): the token is yours. Not signed in: send your "
        "`username` and `password` (sign-in lockout applies). A token of the same `name` is "
        "replaced. A token created with a token cannot outlive it, nor have a wider scope."),
    request=s.TokenCreateSerializer,
    responses={201: s.TokenCreatedSerializer, **errors(400, 403)},
    examples=[example("read-only for CI", {"name": "ci", "scope": "read", "days": 30},
                      request=True),
              example("with a password", {"username": "alice", "password": "…",
                                          "name": "notebook"}, request=True),
              example("created", _CREATED, status=201)])

delete = extend_schema(summary="Revoke all your API tokens", request=None,
                       operation_id="auth_token_destroy_all",
                       responses={204: None, **errors(403)})

delete_one = extend_schema(summary="Revoke one of your API tokens", request=None,
                           operation_id="auth_token_destroy",
                           responses={204: None, **errors(403, 404)})
