"""``POST /topologies/<id>/explore/``: a grid of designs × a job mix → an explore job (202)."""
from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.permissions import IsAuthenticatedUser
from api.schema import explore as doc
from api.serializers.explore import ExploreRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import selectors, services
from designer.ops.throttling import JobSubmitThrottle

__all__ = ["ExploreView"]


class ExploreView(ApiMixin, APIView):
    """Submits a job: anyone who may run jobs on the topology (404 to whoever cannot see it),
    at the job-submission rate. The job and its result are read through ``/jobs/<id>/``."""

    permission_classes = (IsAuthenticatedUser,)

    def get_throttles(self):
        return [*super().get_throttles(), JobSubmitThrottle()]

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="run")
        data = dict(valid_data(ExploreRequestSerializer, request.data))
        chunks = data.pop("chunks", None)
        grid_request = {k: v for k, v in request.data.items() if k in data or k in ("format", "options")}
        job = services.job_submit_explore(topology=topology, user=request.user, request=grid_request,
                                          chunks=chunks)
        return Response(s.JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
