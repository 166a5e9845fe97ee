"""``POST /topologies/<id>/diagnose/``: measured nccl-tests runs → a diagnosis job (202)."""
from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.permissions import IsAuthenticatedUser
from api.schema import diagnose as doc
from api.serializers.diagnose import DiagnoseRequestSerializer, upload_data
from api.views.base import ApiMixin, valid_data
from designer import selectors, services
from designer.ops.throttling import JobSubmitThrottle

__all__ = ["DiagnoseView"]


class DiagnoseView(ApiMixin, APIView):
    """Submits a job: anyone who may run jobs on the topology (404 to whoever cannot see it),
    at the job-submission rate. The job and its result are read through ``/jobs/<id>/``."""

    permission_classes = (IsAuthenticatedUser,)

    def get_throttles(self):
        return [*super().get_throttles(), JobSubmitThrottle()]

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="run")
        body = upload_data(request.data, request.FILES) if request.FILES else request.data
        data = valid_data(DiagnoseRequestSerializer, body)
        job = services.job_submit_diagnose(topology=topology, user=request.user, runs=data["runs"],
                                           op=data["op"], options=dict(data.get("options") or {}))
        return Response(s.JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
