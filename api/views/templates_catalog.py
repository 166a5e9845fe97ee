"""``/templates/``, ``/catalog/`` and ``/validate/``: the engine's reference data, read-only."""
from __future__ import annotations

import re

from django.http import Http404
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.pagination import ApiPagination
from api.schema import templates_catalog as doc
from api.views.base import ApiMixin, valid_data
from designer import bridge
from designer.bridge import facts

__all__ = ["TemplateViewSet", "CatalogView", "ValidateView"]


class TemplateViewSet(ApiMixin, viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_.-]+"
    lookup_field = "name"
    pagination_class = ApiPagination  # declared, so the schema shows the paginated shape too

    @doc.template_list
    def list(self, request):
        paginator = self.pagination_class()
        rows = list(facts.template_details().values())
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(page)

    @doc.template_retrieve
    def retrieve(self, request, name):
        return Response(_template(name))

    @doc.template_host
    @action(detail=True, methods=["get"])
    def host(self, request, name):
        _template(name)
        host_id = _host_id(request.query_params.get("host_id", "h0"))
        document = bridge.host_document(template=name, host_id=host_id)
        return Response({"template": name, "host_id": host_id, "document": document})


def _template(name: str) -> dict:
    templates = facts.template_details()
    if name not in templates:
        raise Http404(f"no template {name!r} (choose from {', '.join(sorted(templates))})")
    return templates[name]


def _host_id(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", value):
        raise ValidationError({"host_id": ["1-64 letters, digits, _ . : -"]})
    return value


class CatalogView(ApiMixin, APIView):
    @doc.catalog
    def get(self, request):
        return Response(facts.catalog())


class ValidateView(ApiMixin, APIView):
    @doc.validate
    def post(self, request):
        data = valid_data(s.ValidateSerializer, request.data)
        problems = bridge.validate_document(data["document"])
        return Response({"valid": not problems, "problems": problems})
