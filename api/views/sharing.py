"""Sharing: grants (``/topologies/<id>/shares/``) and read-only links (``/links/``).

Grants are listed to the owner and editors, changed by the owner only; links (bearer secrets)
are the owner's only. The selectors raise 404 for an unseen topology, 403 for a missing role.
"""
from __future__ import annotations

from rest_framework import status, viewsets
from rest_framework.response import Response

from api import serializers as s
from api.permissions import IsAuthenticatedUser
from api.schema import sharing as doc
from api.views.base import ApiMixin, body_ref, valid_data
from designer import selectors, services

__all__ = ["ShareViewSet", "ShareLinkViewSet"]


@doc.shares
class ShareViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.ShareSerializer
    permission_classes = [IsAuthenticatedUser]
    filter_backends: list = []
    pagination_class = None

    def list(self, request, topology_pk):
        rows = selectors.share_list(user=request.user, topology_pk=topology_pk)
        return Response(s.ShareSerializer(rows, many=True).data)

    def create(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="manage")
        data = valid_data(s.ShareCreateSerializer, request.data)
        share = services.share_grant(topology=topology, actor=request.user, role=data["role"],
                                     user=data.get("user"), group=data.get("group"))
        return Response(s.ShareSerializer(share).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, topology_pk, pk):
        share = selectors.share_get(user=request.user, topology_pk=topology_pk, pk=pk,
                                    action="manage")
        data = valid_data(s.ShareUpdateSerializer, request.data, partial=True)
        if "role" in data:  # a PATCH without fields changes nothing (as the schema says)
            share = services.share_update(share=share, actor=request.user, role=data["role"])
        return Response(s.ShareSerializer(share).data)

    def destroy(self, request, topology_pk, pk):
        share = selectors.share_get(user=request.user, topology_pk=topology_pk, pk=pk,
                                    action="manage")
        services.share_revoke(share=share, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@doc.share_links
class ShareLinkViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.ShareLinkSerializer
    permission_classes = [IsAuthenticatedUser]
    filter_backends: list = []
    pagination_class = None

    def list(self, request, topology_pk):
        rows = selectors.share_link_list(user=request.user, topology_pk=topology_pk)
        return Response(s.ShareLinkSerializer(rows, many=True).data)

    def create(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="manage")
        data = valid_data(s.ShareLinkCreateSerializer, request.data)
        job = None
        if data.get("job") is not None:
            job = body_ref(selectors.job_get, request.user, data["job"], "job")
        link, token = services.share_link_create(
            topology=topology, actor=request.user, job=job, expires_at=data.get("expires_at"),
            label=data.get("label", ""))
        body = s.ShareLinkSerializer(link).data
        body.update({"token": token, "url": request.build_absolute_uri(f"/s/{token}/")})
        return Response(body, status=status.HTTP_201_CREATED)

    def destroy(self, request, topology_pk, pk):
        link = selectors.share_link_get(user=request.user, topology_pk=topology_pk, pk=pk)
        services.share_link_revoke(link=link, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
