"""Docs of ``/auth/token/`` (``api.views.tokens.AuthTokenView``: get, post, delete)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api import serializers as s
from api.schema.helpers import errors, example

__all__ = ["get", "post", "delete"]

_TOKEN = {"token": "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", "created": "2026-01-05T10:00:00Z"}

get = extend_schema(summary="Your API token (null when you have none)",
                    responses={200: s.TokenSerializer, **errors(403)},
                    examples=[example("token", _TOKEN)])

post = extend_schema(summary="Create a token, replacing any previous one", request=None,
                     responses={201: s.TokenSerializer, **errors(403)},
                     examples=[example("created", _TOKEN, status=201)])

delete = extend_schema(summary="Revoke your token", request=None,
                       responses={204: None, **errors(403)})
