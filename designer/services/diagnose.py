"""Submitting a diagnosis: measured nccl-tests runs of a saved topology, explained on a worker.

A diagnosis is a job of kind ``diagnose`` (docs/FORMATS.md, "Diagnosis") on the topology's
current revision. Its input is checked through the bridge before anything is written: the logs
are parsed (``runs[1].log: line 37: ...``) and the engine's cheap ``diagnosis_plan`` checks op,
hosts and rows, so a bad run is a located error and nothing is saved. What the job keeps is
what the engine reads: ``inputs`` holds the parsed runs (``{"runs": [...]}``, the place a
scenario job keeps its workload), ``parameters`` the op, options and the plan's figures (the
place a sweep keeps its classes). The run itself goes through the shared machinery
(:mod:`designer.services.runner`): heartbeat, progress, exactly-once finish, reaper.
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from designer import bridge
from designer.choices import JobKind
from designer.models import SimulationJob, Topology
from designer.services.jobs import job_queue

__all__ = ["MAX_DIAGNOSE_RUNS", "MAX_DIAGNOSE_LOG_BYTES", "DIAGNOSE_OPTION_KEYS", "job_submit_diagnose"]

#: Measured runs one diagnosis explains at most: each is a curve every candidate is fitted to.
MAX_DIAGNOSE_RUNS = 8
#: Largest log accepted per run (as the nccl-tests page: a full sweep with NCCL_DEBUG=INFO is ~200 kB).
MAX_DIAGNOSE_LOG_BYTES = 1024 * 1024
#: The nccl-tests options of the runs the engine takes (docs/FORMATS.md, "Diagnosis").
DIAGNOSE_OPTION_KEYS = ("algorithm", "protocol", "channels", "nic_policy")


def job_submit_diagnose(*, topology: Topology, user: AbstractBaseUser, runs: list[dict],
                        op: str = "all_reduce", options: dict | None = None) -> SimulationJob:
    """Queue a diagnosis of measured ``runs`` on ``topology``'s current revision.

    The caller has checked that ``user`` may run jobs on ``topology``.

    Parameters
    ----------
    runs : list of dict
        ``{"label", "hosts", "log"}`` (nccl-tests stdout) or ``{"label", "hosts", "rows"}``
        (``[{"bytes", "busbw_gbps", "time_us"}]``); ``hosts`` None or empty: the whole design.
    op : str
        The collective the runs measured (``all_reduce``…).
    options : dict, optional
        ``algorithm``, ``protocol``, ``channels``, ``nic_policy`` of the runs.

    Returns
    -------
    SimulationJob
        Queued (``kind="diagnose"``, no scenario).

    Raises
    ------
    ValidationError
        No revision, too many or too large runs, unknown option keys, or the engine's located
        problems (``EngineValidationError``); nothing is written.
    BrokerUnavailable
        The job queue did not answer (503 before anything is written, or the job recorded failed).
    """
    revision = topology.current_revision
    if revision is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    options = _checked_options(options)
    _check_sizes(runs)
    engine_runs = bridge.diagnosis_runs(runs, op=op)
    plan = bridge.diagnosis_check(document=revision.document, runs=engine_runs, op=op, options=options)
    return job_queue(kind=JobKind.DIAGNOSE, topology=topology, revision=revision, scenario=None,
                     user=user, inputs={"runs": engine_runs},
                     parameters={"op": op, "options": options, "plan": plan},
                     summary=f"diagnose job {{job}} of {len(engine_runs)} measured run(s)",
                     details={"runs": len(engine_runs)})


def _check_sizes(runs: list[dict]) -> None:
    """At least one run, at most :data:`MAX_DIAGNOSE_RUNS`, each log at most
    :data:`MAX_DIAGNOSE_LOG_BYTES` (checked before any parsing)."""
    if not runs:
        raise ValidationError({"runs": ["send at least one measured run (an nccl-tests log)"]})
    if len(runs) > MAX_DIAGNOSE_RUNS:
        raise ValidationError({"runs": [f"{len(runs)} runs; at most {MAX_DIAGNOSE_RUNS} are diagnosed at once"]})
    for i, run in enumerate(runs):
        log = run.get("log")
        if log is not None and len(log.encode("utf-8")) > MAX_DIAGNOSE_LOG_BYTES:
            raise ValidationError({f"runs[{i}].log": [
                f"larger than {MAX_DIAGNOSE_LOG_BYTES // 1024} KiB"]})


def _checked_options(options: dict | None) -> dict:
    """The options without empty values; unknown keys are refused (the engine would ignore them)."""
    options = {k: v for k, v in (options or {}).items() if v not in (None, "", "auto")}
    unknown = sorted(set(options) - set(DIAGNOSE_OPTION_KEYS))
    if unknown:
        raise ValidationError({"options": [f"unknown option {', '.join(unknown)} "
                                           f"(choose from {', '.join(DIAGNOSE_OPTION_KEYS)})"]})
    return options
