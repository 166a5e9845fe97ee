"""Large topology builds as jobs: the New page's cluster over ``MAX_BUILD_HOSTS`` hosts, or over
``FABRICSCOPE_BUILD_MAX_ELEMENTS`` nodes + links (a heavy template), is built, validated and
saved on a worker, with progress (docs/PERFORMANCE.md, "100,000 GPUs in the
browser"; docs/RELIABILITY.md, "Exactly-once completion").

:func:`topology_start` is the New page's one call: a build within both inline limits
(``MAX_BUILD_HOSTS`` hosts, ``FABRICSCOPE_BUILD_MAX_ELEMENTS`` nodes + links, the estimate
``limits.check_build`` refuses by) runs in the request
(:func:`designer.services.topologies.topology_new`); a larger one, up to
``FABRICSCOPE_BUILD_JOB_MAX_HOSTS`` hosts and ``FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS`` nodes +
links, creates the topology with no revision and queues a job of kind ``build``.

The REST API's ``POST /api/v1/topologies/build-job/`` (``api/views/builds.py``) calls
:func:`topology_build_submit` directly, for any size up to the job's limits.

:func:`build_run` (called by the runner) builds the document, then writes the first revision and
the job's success in one transaction, only while this run still owns the job and the topology
still has no revision: a failed, cancelled or superseded build saves nothing, and its topology
stays empty with the failed job on it (the explicit marker; deleting the topology removes both).
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from designer import bridge
from designer.choices import JobKind, JobState
from designer.models import SimulationJob, Topology
from designer.ops import limits
from designer.ops.errors import BrokerUnavailable, BuildTooLarge
from designer.params import check_printable
from designer.services.jobs import job_queue
from designer.services.runs import Run
from designer.services.topologies import revision_append, store_items, topology_create, topology_new

__all__ = ["topology_start", "topology_build_submit", "build_run", "job_build_limits"]

# The fewest bytes a node or link takes in a stored document: measured 122-166 over the catalog's
# templates (canonical JSON, 2026-12-06: amd-mi300x 121.7, dgx-b200 122.4, dgx-h100 124.5,
# gb200-nvl72 165.9), so a build job's lower bound on its document never over-counts.
MIN_BYTES_PER_ELEMENT = 100


def job_build_limits() -> dict:
    """The limits of a build job: above either inline limit (``MAX_BUILD_HOSTS`` hosts,
    ``FABRICSCOPE_BUILD_MAX_ELEMENTS`` nodes + links; 0 = no element limit), up to these."""
    from designer.bridge.facts import MAX_BUILD_HOSTS

    return {"inline_hosts": MAX_BUILD_HOSTS, "inline_elements": settings.FABRICSCOPE_BUILD_MAX_ELEMENTS,
            "max_hosts": settings.FABRICSCOPE_BUILD_JOB_MAX_HOSTS,
            "max_elements": settings.FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS}


def _needs_job(*, template: str, hosts, options: dict | None) -> bool:
    """Whether a cluster is over an inline limit: more hosts than ``MAX_BUILD_HOSTS``, or more
    nodes + links than one request may build (a heavy template under the host limit: 200
    GB200 NVL72 racks). The element count is ``limits.build_elements``, the estimate
    ``limits.check_build`` would refuse the inline build by, so no spec falls between the two."""
    if isinstance(hosts, bool) or not isinstance(hosts, int):
        return False  # topology_new reports the bad value, located
    bound = job_build_limits()
    if hosts > bound["inline_hosts"]:
        return True
    elements = limits.build_elements(template=template, hosts=hosts, options=options)
    return bool(bound["inline_elements"]) and elements > bound["inline_elements"]


def topology_start(*, owner: AbstractBaseUser, name: str, description: str = "", source: str,
                   template: str = "", hosts: int | None = None, fabric: str = "rail-optimized",
                   options: dict | None = None) -> tuple[Topology, SimulationJob | None]:
    """The New page's topology: ``(topology, None)`` when made in the request, or
    ``(empty topology, queued build job)`` for a cluster over an inline limit (hosts or
    nodes + links: :func:`_needs_job`).

    Raises as :func:`topology_new` and :func:`topology_build_submit`.
    """
    common = {"owner": owner, "name": name, "description": description}
    if source == "cluster" and _needs_job(template=template, hosts=hosts, options=options):
        job = topology_build_submit(template=template, hosts=hosts, fabric=fabric, options=options,
                                    **common)
        return job.topology, job
    return topology_new(source=source, template=template, hosts=hosts, fabric=fabric,
                        options=options, **common), None


def topology_build_submit(*, owner: AbstractBaseUser, name: str, template: str, hosts: int,
                          fabric: str = "rail-optimized", options: dict | None = None,
                          description: str = "") -> SimulationJob:
    """Create topology ``name`` with no revision and queue the job that builds its first one.

    The spec is checked whole before anything is written: the host and element limits
    (estimated from the one-host template), the spec itself (``bridge.plan_preview``: the
    engine's located errors, counted without building a device), the owner's quota and job
    count. Nothing is written when any fails.

    Raises
    ------
    BuildTooLarge
        More than ``FABRICSCOPE_BUILD_JOB_MAX_HOSTS`` hosts or ``FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS``
        nodes + links (400, naming the limit).
    EngineValidationError
        A spec the engine refuses (located).
    QuotaExceeded, TooManyJobs, BrokerUnavailable
        As :func:`topology_create` and ``jobs.job_queue``.
    """
    elements = _check_job_build(template=template, hosts=hosts, options=options)
    check_printable(name)
    # Refused now, not after minutes of a worker's build: even at the fewest bytes a node or link
    # takes, the document would pass the owner's storage quota (checked again, exactly, at the save).
    limits.check_storage_quota(user=owner, adding_bytes=elements * MIN_BYTES_PER_ELEMENT,
                               what=f"this build (at least {MIN_BYTES_PER_ELEMENT} bytes a node or link)")
    bridge.plan_preview(template=template, hosts=hosts, fabric=fabric, options=options or {})
    spec = {"name": name, "template": template, "hosts": hosts, "fabric": fabric,
            "options": options or {}}
    with transaction.atomic():  # a refused job (too many, no broker) leaves no topology
        topology = topology_create(owner=owner, name=name, description=description)
        job = job_queue(kind=JobKind.BUILD, topology=topology, revision=None, scenario=None,
                        user=owner, inputs=spec, parameters={},
                        summary=f"build job {{job}} of {hosts:,} x {template}, {fabric} fabric",
                        details={"hosts": hosts, "template": template})
    if not transaction.get_connection().in_atomic_block:  # published after the commit: check it
        job.refresh_from_db(fields=["state", "message", "error", "finished_at"])
        if job.state == JobState.FAILED:
            raise BrokerUnavailable(
                f"the job queue became unreachable while build job {job.pk} was being queued; "
                f"the job is recorded as failed and topology {name!r} is empty; delete it and "
                "submit again in a minute", details={"job": job.pk, "retry_after_s": 30})
    return job


def _check_job_build(*, template: str, hosts: int, options: dict | None) -> int:
    """The build's estimated nodes + links, once its hosts and elements are within the job's limits."""
    if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
        raise ValidationError({"hosts": "a positive number of hosts is required"})
    bound = job_build_limits()
    if hosts > bound["max_hosts"]:
        raise BuildTooLarge(
            f"{hosts:,} hosts: a build job makes at most {bound['max_hosts']:,} hosts "
            "(FABRICSCOPE_BUILD_JOB_MAX_HOSTS; 12,500 DGX-H100 = 100,000 GPUs); build fewer hosts "
            "or use the CLI's build command", details={"hosts": hosts, "limit_hosts": bound["max_hosts"]})
    elements = limits.build_elements(template=template, hosts=hosts, options=options)
    if elements > bound["max_elements"]:
        raise BuildTooLarge(
            f"{hosts:,} hosts of {template} make about {elements:,} nodes and links; a build job "
            f"makes at most {bound['max_elements']:,} (FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS): build "
            "fewer hosts", details={"hosts": hosts, "elements": elements,
                                    "limit_elements": bound["max_elements"]})
    return elements


def build_run(job: SimulationJob, run: Run) -> bool:
    """Build job ``job``'s topology and save it as the first revision, ending the job as
    succeeded; False (nothing written) when the run no longer owns the job.

    Raises what the build raises (the runner ends the job as failed with its text) and
    :class:`designer.exceptions.JobCancelled` from the progress callback.
    """
    spec = job.inputs
    document = bridge.build_cluster_lean(
        name=spec["name"], template=spec["template"], hosts=spec["hosts"], fabric=spec["fabric"],
        options=spec.get("options") or {}, progress=run.progress)
    run.progress(0.7, f"saving {len(document['nodes']):,} nodes and {len(document['links']):,} links")
    text = bridge.canonical_json_bytes(document)
    checksum = bridge.document_checksum(document, text)
    message = f"generated: {spec['hosts']} x {spec['template']}, {spec['fabric']} fabric"
    with transaction.atomic():
        locked = SimulationJob.objects.select_for_update().filter(pk=job.pk).first()
        if (locked is None or locked.state != JobState.RUNNING or locked.attempts != run.attempt
                or locked.cancel_requested):
            return False
        topology = Topology.objects.select_for_update().get(pk=job.topology_id)
        if topology.revision_number:
            raise ValidationError(f"topology {topology.name!r} already has revision "
                                  f"r{topology.revision_number}: the build saves only a first revision")
        limits.check_storage_quota(user=topology.owner, adding_bytes=len(text))
        del text
        revision = revision_append(topology, locked.submitted_by, document, message, checksum=checksum)
        locked.revision = revision
        elapsed = (timezone.now() - locked.started_at).total_seconds() if locked.started_at else 0.0
        fields = locked.transition(JobState.SUCCEEDED, message=(
            f"built {topology.host_count:,} hosts ({topology.gpu_count:,} GPUs, "
            f"{topology.node_count:,} nodes, {topology.link_count:,} links) in {elapsed:.1f} s"))
        locked.progress, locked.error = 100, ""
        locked.save(update_fields=[*fields, "revision", "progress", "error"])
    store_items(revision.pk, document, checksum)   # so the first edits need not read it back
    return True
