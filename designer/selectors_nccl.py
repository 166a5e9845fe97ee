"""nccl-tests side by side for a topology the requester may view (pages and API share it).

A predicted 8 B–8 GiB sweep is 31 steady-state solves of one collective; on up to
:data:`MAX_INLINE_HOSTS` hosts that takes well under a few seconds, so it runs inside the request.
Bigger topologies are refused with a message instead of tying up a web worker.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError

from designer import bridge
from designer.models import Topology

__all__ = ["ALGORITHMS", "MAX_INLINE_HOSTS", "MAX_LOG_BYTES", "OPS", "nccl_tests_prediction"]

#: Hosts up to which a sweep runs inline (2×DGX-H100 8 B–8 GiB: ~0.5 s; 16 hosts: a few s).
MAX_INLINE_HOSTS = 16
#: Largest nccl-tests stdout accepted (a full sweep with NCCL_DEBUG=INFO is ~200 kB).
MAX_LOG_BYTES = 1024 * 1024
OPS = [("all_reduce", "all_reduce"), ("all_gather", "all_gather"), ("reduce_scatter", "reduce_scatter"),
       ("alltoall", "alltoall"), ("sendrecv", "sendrecv")]
ALGORITHMS = [("auto", "auto"), ("ring", "ring"), ("tree", "tree"), ("nvls", "nvls"),
              ("nvlstree", "nvlstree")]


def nccl_tests_prediction(*, topology: Topology, op: str, min_bytes, max_bytes, factor: int,
                          algorithm: str, log: str | None = None) -> dict:
    """Predicted nccl-tests rows for the topology's current revision (and a run side by side).

    The caller has already checked that the requester may view ``topology``
    (:func:`designer.selectors.topology_get_for` with ``action="view"``).

    Returns
    -------
    dict
        See :func:`designer.bridge.nccl_tests_sweep`.

    Raises
    ------
    ValidationError
        No revision yet, more than :data:`MAX_INLINE_HOSTS` hosts, a log over
        :data:`MAX_LOG_BYTES`, or the engine's located errors (``EngineValidationError``).
    """
    if topology.current_revision_id is None:
        raise ValidationError("this topology has no revision yet: save one in the editor first")
    if topology.host_count > MAX_INLINE_HOSTS:
        raise ValidationError(f"nccl-tests predictions run inline for up to {MAX_INLINE_HOSTS} hosts; this "
                              f"topology has {topology.host_count}. Run a scenario (a background job) instead.")
    if log is not None and len(log.encode("utf-8")) > MAX_LOG_BYTES:
        raise ValidationError({"log": [f"the log is larger than {MAX_LOG_BYTES // 1024} KiB"]})
    return bridge.nccl_tests_sweep(document=topology.current_revision.document, op=op, min_bytes=min_bytes,
                                   max_bytes=max_bytes, factor=factor, algorithm=algorithm, log=log or None)
