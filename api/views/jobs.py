"""``/jobs/``: list, get, submit (simulate, sweep, compare), cancel, result, figures."""
from __future__ import annotations

from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from api import serializers as s
from api.exception_handlers import ApiError
from api.filters import JobFilter
from api.permissions import IsUserOrShareLinkReader, TopologyRole
from api.schema import jobs as doc
from api.views.base import ID, ApiMixin, body_ref, query_int, valid_data
from designer import selectors, services
from designer.choices import JobKind, JobState
from designer.bridge import results
from designer.figures.base import figures_key
from designer.figures.result import job_figures
from designer.models import Scenario, SimulationJob
from designer.ops.throttling import JobSubmitThrottle
from designer.services.results import result_figures

__all__ = ["JobViewSet", "RESULT_VIEWS"]

RESULT_VIEWS = ("full", "summary")


@doc.viewset
class JobViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.JobSerializer
    filterset_class = JobFilter
    search_fields = ["message", "scenario__name", "topology__name"]
    ordering_fields = ["created_at", "started_at", "finished_at", "state", "kind", "progress"]
    ordering = ["-created_at", "-pk"]
    lookup_value_regex = ID
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]

    role_actions = {"create": "run"}

    def get_queryset(self):
        return selectors.job_list(user=self.request.user)

    def role_action(self, request, obj) -> str | None:
        """Cancelling: one's own job needs "run" (viewers may), anyone's needs "edit"."""
        if self.action == "cancel" and isinstance(obj, SimulationJob):
            return selectors.job_cancel_action(request.user, obj)
        return None

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action == "create":
            throttles.append(JobSubmitThrottle())
        return throttles

    def _job(self, pk) -> SimulationJob:
        job = selectors.job_get(user=self.request.user, pk=pk)
        self.check_object_permissions(self.request, job)
        return job

    def list(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.JobListSerializer(page, many=True).data)

    def retrieve(self, request, pk):
        return Response(s.JobSerializer(self._job(pk)).data)

    @doc.create
    def create(self, request):
        data = valid_data(s.JobCreateSerializer, request.data)
        scenario = body_ref(selectors.scenario_get, request.user, data["scenario"], "scenario")
        self.check_object_permissions(request, scenario)
        job = _submit(scenario, request.user, data)
        return Response(s.JobSerializer(job).data, status=status.HTTP_201_CREATED)

    @doc.cancel
    @action(detail=True, methods=["post"], filter_backends=[])
    def cancel(self, request, pk):
        job = services.job_cancel(job=self._job(pk), user=request.user)
        return Response(s.JobSerializer(job).data)

    @doc.result
    @action(detail=True, methods=["get"], filter_backends=[])
    def result(self, request, pk):
        """The whole document (the same fields however it is stored); ``?view=summary``: without
        its per-flow and per-resource parts (``flows``, ``resources``, ``diff``, ``latency``),
        which are then not read from the database at all."""
        view = request.query_params.get("view", "full")
        if view not in RESULT_VIEWS:
            raise ValidationError({"view": [f"choose one of {', '.join(RESULT_VIEWS)}"]})
        job = _finished_job(self._job(pk))
        if job.kind == JobKind.BUILD:  # a build's result is the topology it made
            return Response(s.BuildResultSerializer(job).data)
        row = selectors.result_get(user=request.user, job_pk=job.pk)
        if view == "summary":
            return Response(results.summary_of(row.data))
        return Response(row.document())

    @doc.figures
    @action(detail=True, methods=["get"], filter_backends=[])
    def figures(self, request, pk):
        job = _finished_job(self._job(pk))
        selected = query_int(request, "failure", default=-1)
        result = selectors.result_get(user=request.user, job_pk=job.pk)

        def build(row) -> dict:
            document = selectors.revision_get(user=request.user, topology_pk=job.topology_id,
                                              number=job.revision.number).document
            return job_figures(row.document(), job.kind, topology_doc=document,
                               selected=None if selected < 0 else selected)
        if job.kind == JobKind.SIMULATE:  # the figures the result page shows, built once
            return Response(result_figures(job_id=job.pk, key=figures_key("result"), build=build))
        return Response(build(result))


def _submit(scenario: Scenario, user, data: dict) -> SimulationJob:
    kind = data["kind"]
    if kind == JobKind.SWEEP:
        return services.job_submit_sweep(scenario=scenario, user=user, over=data["over"],
                                         chunks=data.get("chunks"), degrade=data.get("degrade"))
    if kind == JobKind.COMPARE:
        policies = data.get("policies") or ("affinity", "pxn", "any")
        return services.job_submit_compare(scenario=scenario, user=user, policies=policies)
    return services.job_submit_simulate(scenario=scenario, user=user)


def _finished_job(job: SimulationJob) -> SimulationJob:
    """The job if it succeeded; a 409 saying where it stands otherwise."""
    if job.state == JobState.SUCCEEDED:
        return job
    details = {"state": job.state, "progress": job.progress}
    if job.state in (JobState.QUEUED, JobState.RUNNING):
        raise ApiError(status_code=409, code="job_not_finished", details=details,
                       message=f"job {job.pk} is {job.state} ({job.progress}%): "
                               "no result yet; poll the job until it succeeds")
    details["error"] = job.error
    raise ApiError(status_code=409, code="no_result", details=details,
                   message=f"job {job.pk} {job.state} and has no result: {job.message}")
