"""``/topologies/<id>/revisions/``: list, get one with its document, save a new one.

One revision is answered with its document as the stored text (``designer.editor_document``),
spliced after the other fields: a 2,048-host design (~40 MB) is not parsed and encoded again
(1.73 s of CPU that way). The answer is the same JSON, ``document`` last as before. A save
answers the same way, or without the document when asked ``Prefer: return=minimal`` (the
editor, which holds what it saved).
"""
from __future__ import annotations

from django.http import HttpResponse
from rest_framework import status, viewsets
from rest_framework.filters import OrderingFilter
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from api import serializers as s
from api.permissions import IsUserOrShareLinkReader, TopologyRole
from api.schema import revisions as doc
from api.views.base import ApiMixin, valid_data
from designer import editor_document, selectors, services
from designer.models import TopologyRevision

__all__ = ["RevisionViewSet"]


@doc.viewset
class RevisionViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.RevisionSerializer
    filter_backends = [OrderingFilter]
    ordering_fields = ["number", "created_at"]
    ordering = ["-number"]
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return TopologyRevision.objects.none()
        return selectors.revision_list(user=self.request.user,
                                       topology_pk=self.kwargs["topology_pk"])

    def list(self, request, topology_pk):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.RevisionSerializer(page, many=True).data)

    def retrieve(self, request, topology_pk, number):
        revision = selectors.revision_get(user=request.user, topology_pk=topology_pk, number=number,
                                          with_document=False)
        return _with_document(revision)

    @doc.create
    def create(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        self.check_object_permissions(request, topology)
        data = valid_data(s.RevisionCreateSerializer, request.data)
        revision = services.revision_save(topology=topology, user=request.user,
                                          document=data.get("document"),
                                          patch=data.get("patch"),
                                          base_revision=data["base_revision"],
                                          message=data["message"])
        if _prefers_minimal(request):   # the editor: it holds the document it saved
            return Response(s.RevisionSerializer(revision).data, status=status.HTTP_201_CREATED,
                            headers={"Preference-Applied": "return=minimal"})
        return _with_document(revision, status=status.HTTP_201_CREATED)


def _prefers_minimal(request) -> bool:
    """``Prefer: return=minimal`` (RFC 7240): answer a save without the document (a
    100,000-GPU design's is 259 MB)."""
    return any(p.strip().lower() == "return=minimal"
               for p in request.headers.get("Prefer", "").split(","))


def _with_document(revision: TopologyRevision, status: int = 200) -> HttpResponse:
    """The revision's fields and its document as stored text (``editor_document.document_text``:
    never parsed and encoded again; a patched revision composed from its base's item store),
    ``document`` last."""
    head = JSONRenderer().render(s.RevisionSerializer(revision).data)   # b'{...}'
    text = editor_document.document_text(revision.topology_id, revision.pk)
    return HttpResponse(b"".join((head[:-1], b',"document":', text, b"}")),
                        content_type="application/json", status=status)
