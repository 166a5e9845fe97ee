"""Engine answers computed inside a request (nccl-tests predictions, goodput plans, NCCL log
checks, physical plans), bounded so a web worker is never tied up; nothing is saved. Callers
have checked that the requester may view the topology (``topology_get_for``).
"""
from __future__ import annotations

from django.core.exceptions import ValidationError

from designer import bridge
from designer.models import Topology

__all__: list[str] = []


# --- nccl-tests predictions (pages and API) ---------------------------------------------------------
# A predicted 8 B–8 GiB sweep is 31 steady-state solves of one collective; on up to
# MAX_INLINE_HOSTS hosts that takes well under a few seconds, so it runs inside the request.
# Bigger topologies are refused with a message instead of tying up a web worker.

#: Hosts up to which a sweep runs inline.
MAX_INLINE_HOSTS = 16
#: Largest nccl-tests stdout accepted (a full sweep with NCCL_DEBUG=INFO is ~200 kB).
MAX_LOG_BYTES = 1024 * 1024
#: Runs overlaid on one prediction at most: each is parsed (linear in its size) and drawn as its own
#: trace; together they are predicted once at the union of their sizes (at most 64).
MAX_NCCL_LOGS = 6
NCCL_PROTOCOLS = [("auto", "auto"), ("LL", "LL"), ("LL128", "LL128"), ("Simple", "Simple")]
NCCL_OPS = [(op, op) for op in ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast",
                                 "reduce", "gather", "scatter", "hypercube")]
#: nccl-tests' -o reduction operators (echoed; the engine's time does not depend on them).
NCCL_REDOPS = [(op, op) for op in ("sum", "prod", "min", "max", "avg")]
#: The engine's NIC policies ("" = the default, affinity).
NCCL_NIC_POLICIES = [("", "default (affinity)"), ("affinity", "affinity"), ("own_nic", "own_nic (PXN off)"),
                     ("pxn", "pxn"), ("any", "any"), ("static", "static")]
NCCL_ALGORITHMS = [("auto", "auto"), ("ring", "ring"), ("tree", "tree"), ("nvls", "nvls"),
                   ("nvlstree", "nvlstree")]


def nccl_tests_prediction(*, topology: Topology, op: str, min_bytes, max_bytes, factor: int,
                          algorithm: str, log: str | None = None, logs: list[tuple[str, str]] | None = None,
                          protocol: str = "auto", channels: int | None = None, **options) -> dict:
    """Predicted nccl-tests rows for the topology's current revision (and runs side by side).

    The caller has already checked that the requester may view ``topology``
    (:func:`topology_get_for` with ``action="view"``).

    Parameters
    ----------
    log : str, optional
        One run's stdout.
    logs : list of (str, str), optional
        Up to :data:`MAX_NCCL_LOGS` runs as ``(file name, stdout)``, overlaid on one prediction.
    protocol, channels
        NCCL's protocol and channel count forced on the prediction (see
        :func:`designer.bridge.nccl_tests_sweep`).
    **options
        ``root``, ``redop``, ``env``, ``hosts_subset``, ``nic_policy`` (see
        :func:`designer.bridge.nccl_tests_sweep`).

    Returns
    -------
    dict
        See :func:`designer.bridge.nccl_tests_sweep`.

    Raises
    ------
    ValidationError
        No revision yet, more than :data:`MAX_INLINE_HOSTS` hosts, a log over
        :data:`MAX_LOG_BYTES`, more than :data:`MAX_NCCL_LOGS` logs, or the engine's located
        errors (``EngineValidationError``).
    """
    if topology.current_revision_id is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    if topology.host_count > MAX_INLINE_HOSTS:
        raise ValidationError(f"nccl-tests predictions run inline for up to {MAX_INLINE_HOSTS} hosts; this "
                              f"topology has {topology.host_count}. Run a scenario (a background job) instead.")
    runs = ([("run", log)] if log else []) + list(logs or [])
    if len(runs) > MAX_NCCL_LOGS:
        raise ValidationError({"log": [f"{len(runs)} logs; at most {MAX_NCCL_LOGS} are overlaid at once"]})
    for name, text in runs:
        if len(text.encode("utf-8")) > MAX_LOG_BYTES:
            raise ValidationError({"log": [f"{name}: the log is larger than {MAX_LOG_BYTES // 1024} KiB"]})
    return bridge.nccl_tests_sweep(document=topology.current_revision.document, op=op, min_bytes=min_bytes,
                                   max_bytes=max_bytes, factor=factor, algorithm=algorithm, logs=runs,
                                   protocol=protocol, channels=channels, **options)


__all__ += ["MAX_INLINE_HOSTS", "MAX_LOG_BYTES", "MAX_NCCL_LOGS", "NCCL_OPS", "NCCL_ALGORITHMS", "NCCL_PROTOCOLS",
            "NCCL_REDOPS", "NCCL_NIC_POLICIES", "nccl_tests_prediction"]


#: Hosts of a design planned inline by ``goodput_prediction``: its two storage simulations and
#: unit counts take ~1.5 s CPU at 256 DGX-H100 (docs/PERFORMANCE.md, "Goodput plan").
MAX_GOODPUT_HOSTS = 256


def goodput_prediction(*, topology: Topology, plan: dict) -> dict:
    """The goodput plan (``fabricscope.goodput/1``) of ``plan`` on the topology's current revision.

    The caller has already checked that the requester may view ``topology``. Nothing is saved.

    Raises
    ------
    ValidationError
        No revision yet, more than :data:`MAX_GOODPUT_HOSTS` hosts, or the engine's located
        errors (``EngineValidationError``: ``rates.nic.afr: must be a finite number >= 0``).
    """
    if topology.current_revision_id is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    if topology.host_count > MAX_GOODPUT_HOSTS:
        raise ValidationError(f"goodput plans run inline for up to {MAX_GOODPUT_HOSTS} hosts; this topology "
                              f"has {topology.host_count}: use `python -m designer.engine goodput` instead.")
    return bridge.goodput_plan(document=topology.current_revision.document, plan=plan)


__all__ += ["MAX_GOODPUT_HOSTS", "goodput_prediction"]


# --- NCCL debug logs checked against a design (API) -----------------------------------------------
# Bounds of one check: characters and lines of all logs together (16 ranks' init at NCCL_DEBUG=INFO
# is ~1–2 MB; 4 MiB reads in ~0.2 s), files (one per rank of a 64-rank run), design hosts.
MAX_NCCL_LOG_CHARS, MAX_NCCL_LOG_LINES, MAX_NCCL_LOG_FILES, MAX_NCCL_LOG_HOSTS = 4 * 1024 * 1024, 200_000, 64, 256


def nccl_log_report(*, topology: Topology, logs: list[tuple[str, str]], graph_dump: str | None = None) -> dict:
    """NCCL_DEBUG=INFO ``logs`` of one run (``(file name, text)``) checked against the current
    revision (``fabricscope.nccl-log-check/1``); nothing saved. The caller has checked that the
    requester may view ``topology``. Raises ValidationError: no revision, over the bounds above,
    or the engine's located problems (``logs``: ``run.log: line 7: …``)."""
    if topology.current_revision_id is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    if topology.host_count > MAX_NCCL_LOG_HOSTS:
        raise ValidationError(f"NCCL logs are checked inline against designs of up to {MAX_NCCL_LOG_HOSTS} hosts; "
                              f"this one has {topology.host_count}: use `python -m designer.engine nccl-log`.")
    chars = sum(len(text) for _, text in logs)
    lines = sum(text.count("\n") + 1 for _, text in logs)
    if not logs or len(logs) > MAX_NCCL_LOG_FILES:
        raise ValidationError({"logs": [f"{len(logs)} logs; give 1 to {MAX_NCCL_LOG_FILES}"]})
    if chars > MAX_NCCL_LOG_CHARS or lines > MAX_NCCL_LOG_LINES:
        raise ValidationError({"logs": [f"{chars:,} characters in {lines:,} lines; at most {MAX_NCCL_LOG_CHARS:,} "
                                        f"characters and {MAX_NCCL_LOG_LINES:,} lines are checked at once"]})
    return bridge.nccl_log_check(document=topology.current_revision.document, logs=logs, graph_dump=graph_dump)


__all__ += ["MAX_NCCL_LOG_CHARS", "MAX_NCCL_LOG_LINES", "MAX_NCCL_LOG_FILES", "MAX_NCCL_LOG_HOSTS",
            "nccl_log_report"]


# --- Physical plan (page and API): 2,048 DGX H100 plan in ~2 s (docs/PERFORMANCE.md, "Physical plan")
MAX_PLAN_HOSTS = 2048


def physical_plan(*, topology: Topology, request: dict | None = None, csv: bool = False):
    """The physical plan (``fabricscope.plan/1``; as CSV text when ``csv``) of the current revision with ``request``'s
    overrides and the saved placements unless ``request`` has its own; nothing saved. The caller checked that the user
    may view ``topology``. ValidationError: no revision, over MAX_PLAN_HOSTS hosts, or the engine's located problems."""
    if topology.current_revision_id is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    if topology.host_count > MAX_PLAN_HOSTS:
        raise ValidationError(f"plans run inline for up to {MAX_PLAN_HOSTS} hosts; this topology has "
                              f"{topology.host_count}: use `python -m designer.engine plan` instead.")
    out = bridge.physical_plan(document=topology.current_revision.document, request=request,
                               saved=topology.plan_placements)
    return bridge.plan_cables_csv(out) if csv else out


__all__ += ["MAX_PLAN_HOSTS", "physical_plan"]
