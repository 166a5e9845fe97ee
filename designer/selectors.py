"""Every read in Fabricscope, filtered by what the requesting user may see.

The visibility rule lives in :func:`visible_topologies` only; everything else (revisions,
scenarios, jobs, results) is visible through its topology. Objects a user may not see raise
``Http404`` (never 403: their existence is not disclosed). List querysets defer large JSON.
"""
from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from designer.models import (
    Scenario, SimulationJob, SimulationResult, Topology, TopologyRevision)

__all__ = [
    "visible_topologies", "topology_list", "topology_get", "revision_list", "revision_get",
    "scenario_list", "scenario_get", "job_list", "job_get", "result_get",
]


def visible_topologies(user) -> QuerySet[Topology]:
    """The one place that says which topologies ``user`` may read (for now: their own)."""
    if user is None or not user.is_authenticated:
        return Topology.objects.none()
    return Topology.objects.filter(owner=user)


def topology_list(*, user) -> QuerySet[Topology]:
    """Topologies visible to ``user``, most recently changed first (no documents loaded)."""
    return visible_topologies(user).select_related("owner")


def topology_get(*, user, pk: int) -> Topology:
    """One visible topology, or Http404."""
    return _get(topology_list(user=user), pk)


def revision_list(*, user, topology_pk: int) -> QuerySet[TopologyRevision]:
    """Revisions of a visible topology, newest first, without their documents."""
    topology = topology_get(user=user, pk=topology_pk)
    return (TopologyRevision.objects.filter(topology=topology).defer("document")
            .select_related("author").order_by("-number"))


def revision_get(*, user, topology_pk: int, number: int) -> TopologyRevision:
    """One revision (with its document) by number, or Http404."""
    revision = (TopologyRevision.objects.select_related("topology", "author")
                .filter(topology__in=visible_topologies(user), topology_id=topology_pk,
                        number=number).first())
    if revision is None:
        raise Http404("no such revision")
    return revision


def scenario_list(*, user, topology_pk: int | None = None) -> QuerySet[Scenario]:
    """Scenarios on visible topologies (optionally of one topology)."""
    rows = Scenario.objects.filter(topology__in=visible_topologies(user))
    if topology_pk is not None:
        rows = rows.filter(topology_id=topology_pk)
    return rows.select_related("topology", "revision").defer("revision__document")


def scenario_get(*, user, pk: int) -> Scenario:
    return _get(scenario_list(user=user), pk)


def job_list(*, user, topology_pk: int | None = None, scenario_pk: int | None = None,
             state: str | None = None) -> QuerySet[SimulationJob]:
    """Jobs on visible topologies, newest first; never loads inputs or results."""
    rows = SimulationJob.objects.filter(topology__in=visible_topologies(user))
    if topology_pk is not None:
        rows = rows.filter(topology_id=topology_pk)
    if scenario_pk is not None:
        rows = rows.filter(scenario_id=scenario_pk)
    if state is not None:
        rows = rows.filter(state=state)
    return (rows.select_related("topology", "scenario", "revision")
            .only(*_JOB_LIST_FIELDS).order_by("-created_at", "-pk"))


_JOB_LIST_FIELDS = (
    "pk", "kind", "state", "progress", "message", "created_at", "started_at", "finished_at",
    "attempts", "cancel_requested", "topology__id", "topology__name", "scenario__id",
    "scenario__name", "revision__id", "revision__number", "submitted_by_id", "chunks_total",
    "topology_id", "scenario_id", "revision_id",
)


def job_get(*, user, pk: int) -> SimulationJob:
    """One visible job with everything but its result, or Http404."""
    return _get(SimulationJob.objects.filter(topology__in=visible_topologies(user))
                .select_related("topology", "scenario", "revision")
                .defer("revision__document"), pk)


def result_get(*, user, job_pk: int) -> SimulationResult:
    """The result of a visible job, or Http404 (also while the job has none yet)."""
    return _get(SimulationResult.objects.filter(job__topology__in=visible_topologies(user)),
                job_pk)


def _get(rows: QuerySet, pk):
    obj = rows.filter(pk=pk).first()
    if obj is None:
        raise Http404(f"no such {rows.model._meta.verbose_name}")
    return obj


# --- API tokens (added by the REST API task) -------------------------------------------------------

def api_token_get(*, user):
    """The user's DRF API token, or None (``rest_framework.authtoken``)."""
    from rest_framework.authtoken.models import Token

    return Token.objects.filter(user=user).first()


__all__ += ["api_token_get"]
