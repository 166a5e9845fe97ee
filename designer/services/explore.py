"""Submitting a design-space exploration: a grid of fabric options × a job mix, run in chunks.

An exploration is a job of kind ``explore`` (docs/FORMATS.md, "Design-space explorer") on a
topology: the topology says who may run it and see it, and its current revision's build options
fill in the grid's base (``bridge.explore_check``). The request is checked whole before anything
is written (an absurd grid is a located error and nothing is saved); the job keeps the checked
request in ``inputs`` and the chunk count in ``parameters``. The run goes through the sweep
machinery (:mod:`designer.services.sweeps`): points split into ``SweepChunk`` rows, each its own
task, exactly once, resumable, merged by the last chunk to finish.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from designer import bridge
from designer.choices import JobKind
from designer.models import SimulationJob, Topology
from designer.services.jobs import MAX_SWEEP_CHUNKS, job_queue

__all__ = ["job_submit_explore"]


def job_submit_explore(*, topology: Topology, user: AbstractBaseUser, request: dict,
                       chunks: int | None = None) -> SimulationJob:
    """Queue an exploration of ``request`` (a grid request) around ``topology``'s current design.

    The caller has checked that ``user`` may run jobs on ``topology``.

    Parameters
    ----------
    request : dict
        The grid request (``base``, ``grid``, ``jobs`` or ``workload``, ``routing``, ``plan``);
        base options it leaves out come from the current revision's fabric block.
    chunks : int, optional
        Chunks to split the points into (default ``FABRICSCOPE_SWEEP_CHUNKS``; at most one per point).

    Returns
    -------
    SimulationJob
        Queued (``kind="explore"``, no scenario).

    Raises
    ------
    ValidationError
        No revision, a bad chunk count, or the engine's located problems
        (``EngineValidationError``: ``grid.switch[1]: unknown switch model``); nothing is written.
    BrokerUnavailable
        The job queue did not answer.
    """
    revision = topology.current_revision
    if revision is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    chunks = settings.FABRICSCOPE_SWEEP_CHUNKS if chunks is None else chunks
    if isinstance(chunks, bool) or not isinstance(chunks, int) or not 1 <= chunks <= MAX_SWEEP_CHUNKS:
        raise ValidationError({"chunks": f"must be between 1 and {MAX_SWEEP_CHUNKS}"})
    checked = bridge.explore_check(request, revision.document)
    return job_queue(kind=JobKind.EXPLORE, topology=topology, revision=revision, scenario=None,
                     user=user, inputs=checked, parameters={"chunks": chunks},
                     summary=f"explore job {{job}} of {checked['points_total']} design point(s)",
                     details={"points": checked["points_total"]})
