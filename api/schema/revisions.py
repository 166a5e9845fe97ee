"""Docs of ``/topologies/<id>/revisions/`` (``api.views.revisions.RevisionViewSet``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view

from api import serializers as s
from api.schema.examples import EXAMPLE_DOCUMENT
from api.schema.helpers import errors, example

__all__ = ["viewset", "create"]

viewset = extend_schema_view(
    list=extend_schema(summary="List a topology's revisions (newest first, no documents)",
                       responses={200: s.RevisionSerializer(many=True), **errors(404)}),
    retrieve=extend_schema(summary="Get one revision with its document",
                           responses={200: s.RevisionDetailSerializer, **errors(404)}),
)

create = extend_schema(
    summary="Save a new revision edited from base_revision",
    request=s.RevisionCreateSerializer,
    responses={201: s.RevisionDetailSerializer, **errors(400, 403, 404, 409, 413, 415)},
    examples=[example("save", {"document": EXAMPLE_DOCUMENT, "base_revision": 3,
                               "message": "moved nic2 to socket 1"}, request=True)])
