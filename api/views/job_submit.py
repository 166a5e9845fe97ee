"""What every API view that submits a job shares: ``POST /topologies/<id>/<kind>/`` (diagnose,
explore) and ``POST /topologies/build-job/`` (a build, whose topology the job creates)."""
from __future__ import annotations

from typing import Callable

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.permissions import IsAuthenticatedUser
from api.views.base import ApiMixin
from designer import selectors
from designer.models import SimulationJob, Topology
from designer.ops.throttling import JobSubmitThrottle

__all__ = ["JobSubmitView"]


class JobSubmitView(ApiMixin, APIView):
    """Submits a job: anyone who may run jobs on the topology (404 to whoever cannot see it),
    at the job-submission rate. The job and its result are read through ``/jobs/<id>/``.

    A subclass's ``post`` (which carries its schema) checks its body and calls :meth:`accepted`
    with the service call that queues the job (or :meth:`queued` when no topology exists yet)."""

    permission_classes = (IsAuthenticatedUser,)

    def get_throttles(self):
        return [*super().get_throttles(), JobSubmitThrottle()]

    def accepted(self, request, topology_pk,
                 submit: Callable[[Topology], SimulationJob]) -> Response:
        """202 with the queued job; the topology is looked up (and the right to run on it
        checked) before ``submit`` reads the body, so a stranger learns nothing from a 400."""
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="run")
        return self.queued(submit(topology))

    @staticmethod
    def queued(job: SimulationJob) -> Response:
        """202 with the job, and its status URL in ``Location`` too (what to poll)."""
        body = s.JobSerializer(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
