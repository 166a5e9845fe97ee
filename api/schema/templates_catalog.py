"""Docs of ``/templates/``, ``/catalog/`` and ``/validate/`` (``api.views.templates_catalog``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from api import serializers as s
from api.schema.examples import EXAMPLE_DOCUMENT
from api.schema.helpers import LIST_ERRORS, errors, example

__all__ = ["template_list", "template_retrieve", "template_host", "catalog", "validate"]

template_list = extend_schema(
    summary="List host templates (paginated like every list)",
    responses={200: s.TemplateSerializer(many=True), **errors(*LIST_ERRORS, 403)})

template_retrieve = extend_schema(
    summary="Get a host template",
    parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH)],
    responses={200: s.TemplateSerializer, **errors(403, 404)})

template_host = extend_schema(
    summary="One host of a template as a document (for the editor's 'add host')",
    parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH),
                OpenApiParameter("host_id", {"type": "string",
                                             "pattern": r"^[A-Za-z0-9_.:-]{1,64}$"},
                                 default="h0",
                                 description="id of the host group (node ids become "
                                             "<host_id>/gpu0 …)")],
    responses={200: s.HostDocumentSerializer, **errors(400, 403, 404)})

catalog = extend_schema(
    summary="The link technology catalog, node kinds and group kinds",
    responses={200: OpenApiTypes.OBJECT, **errors(403)},
    examples=[example("catalog", {"basis_default": "effective", "techs": {
        "pcie5x16": {"raw_gbps": 512.0, "effective_gbps": 504.0}}})])

validate = extend_schema(
    summary="Validate a topology document without saving it (editor)",
    request=s.ValidateSerializer,
    responses={200: s.ValidationReportSerializer, **errors(400, 403, 413, 415)},
    examples=[
        example("document", {"document": EXAMPLE_DOCUMENT}, request=True),
        example("invalid", {"valid": False, "problems": [
            {"path": "links[1].b", "message": 'unknown node "sw9"'}]})])
