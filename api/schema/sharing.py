"""Docs of ``/topologies/<id>/shares/`` and ``/links/`` (``api.views.sharing``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view

from api import serializers as s
from api.schema.helpers import errors, example

__all__ = ["shares", "share_links"]

shares = extend_schema_view(
    list=extend_schema(summary="Who a topology is shared with (owner and editors)",
                       responses={200: s.ShareSerializer(many=True), **errors(403, 404)}),
    create=extend_schema(summary="Share with a user or a team (owner only)",
                         request=s.ShareCreateSerializer,
                         responses={201: s.ShareSerializer, **errors(400, 403, 404)},
                         examples=[example("viewer", {"username": "bob", "role": "viewer"},
                                           request=True),
                                   example("team editor", {"group": "infra", "role": "editor"},
                                           request=True)]),
    partial_update=extend_schema(summary="Change a grant's role (owner only)",
                                 request=s.ShareUpdateSerializer,
                                 examples=[example("make editor", {"role": "editor"},
                                                   request=True)],
                                 responses={200: s.ShareSerializer, **errors(400, 403, 404)}),
    destroy=extend_schema(summary="Revoke a grant (owner only)",
                          responses={204: None, **errors(403, 404)}),
)

share_links = extend_schema_view(
    list=extend_schema(summary="Read-only share links of a topology (owner only)",
                       responses={200: s.ShareLinkSerializer(many=True), **errors(403, 404)}),
    create=extend_schema(
        summary="Create a read-only link to the topology or to one job's result (owner only)",
        description="The token is returned once (`token`, `url`); only its hash is stored. "
                    "Pages: `/s/<token>/`; API reads: `X-Share-Token: <token>` or `?share=`.",
        request=s.ShareLinkCreateSerializer,
        responses={201: s.ShareLinkSerializer, **errors(400, 403, 404)},
        examples=[example("result link for a week", {"job": 12,
                                                     "expires_at": "2026-01-12T10:00:00Z"},
                          request=True)]),
    destroy=extend_schema(summary="Revoke a link (owner only)",
                          responses={204: None, **errors(403, 404)}),
)
