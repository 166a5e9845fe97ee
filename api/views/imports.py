"""Importing a server description: ``/topologies/import/`` and ``/topologies/import-preview/``.

The two actions live on :class:`~api.views.topologies.TopologyViewSet` (mixed in from here),
so their URLs, permissions and throttles are the topology viewset's.
"""
from __future__ import annotations

from rest_framework import status
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from api import serializers as s
from api.schema import imports as doc
from designer import bridge, services

__all__ = ["TopologyImportActions"]

_PARSERS = [MultiPartParser, FormParser, JSONParser]


class TopologyImportActions:
    """``import`` (parse and save a new topology) and ``import-preview`` (parse only)."""

    @doc.import_
    @action(detail=False, methods=["post"], url_path="import", parser_classes=_PARSERS,
            filter_backends=[])
    def import_(self, request):
        data, result = _parsed(s.ImportSerializer, request)
        topology = services.topology_create(
            owner=request.user, name=data["name"], description=data["description"],
            document=result.document, message=f"imported from {result.format}")
        body = {"topology": s.TopologySerializer(topology).data, "format": result.format,
                "warnings": result.warnings}
        return Response(body, status=status.HTTP_201_CREATED)

    @doc.import_preview
    @action(detail=False, methods=["post"], url_path="import-preview", parser_classes=_PARSERS,
            filter_backends=[])
    def import_preview(self, request):
        _, result = _parsed(s.ImportPreviewSerializer, request)
        # "matrix": the imported host's path classes next to the file's own (nvidia-smi).
        return Response({"document": result.document, "format": result.format,
                         "warnings": result.warnings, "matrix": result.matrix})


def _parsed(serializer_class, request):
    """The validated request and the engine's import of its file or text."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    data = serializer.validated_data
    result = bridge.import_host(
        content=serializer.content(), format=data.get("format"), host_id=data["host_id"],
        name=data["name"], field="file" if "file" in data else "text")
    return data, result
