"""Uploaded files read by the engine: a server description (NCCL XML, ``nvidia-smi topo -m``,
hwloc, rocm-smi) into a one-host document, and a SimAI/AICB workload or Chakra traces into a job."""
from __future__ import annotations

from designer.bridge.common import engine_errors

__all__ = ["import_host", "import_simai_job", "import_chakra_job", "CHAKRA_MAX_RANK_FILES", "CHAKRA_MAX_HOSTS"]

#: Rank files one upload converts (the API and the scenario page): Django's
#: ``DATA_UPLOAD_MAX_NUMBER_FILES`` (100) counts the groups file too; larger traces go through
#: ``python -m designer.engine import-workload --format chakra``.
CHAKRA_MAX_RANK_FILES = 99
#: Hosts of a design an upload maps ranks onto (the design is compiled for its GPU order).
CHAKRA_MAX_HOSTS = 1024


def import_host(*, content: str | bytes, format: str | None, host_id: str, name: str,
                field: str):
    """Parse an uploaded NCCL XML / nvidia-smi / hwloc file into a one-host document.

    Raises EngineValidationError under ``field`` when the file cannot be read.
    """
    from designer.engine.io import import_text

    with engine_errors(field):
        return import_text(content, format=format, host_id=host_id, name=name)


def import_simai_job(text: str) -> dict:
    """A SimAI / AICB workload text (the format of SimAI's ``example/*.txt``) as a job workload
    ``{"job": {...}}``.

    Raises EngineValidationError (one located message per problem) when the text is not one.
    """
    from designer.engine.io.simai import simai_job

    with engine_errors():
        return simai_job(text)


def import_chakra_job(*, document: dict, traces: list[tuple[str, bytes]], groups: bytes | None) -> dict:
    """Uploaded Chakra ``.et`` traces (one per rank, ``(file name, content)``) and the
    communicator-group JSON as a job on ``document``'s GPUs (rank ``r`` = its ``r``-th GPU):
    ``{"workload": {"job": ...}, "summary": {...}, "warnings": [...]}``. Only the uploaded bytes
    are read, never a path. Raises EngineValidationError under ``traces`` (located: rank, file,
    byte offset) when the traces, the groups or the design do not fit."""
    from designer.engine.analysis.nccl_tests import compile_topology
    from designer.engine.io.chakra import chakra_job
    from designer.engine.traffic.jobs.ranks import rank_gpu_ids

    with engine_errors("traces"):
        result = chakra_job(traces, groups, rank_gpu_ids(compile_topology(document)))
    return {"workload": result.workload, "summary": result.summary, "warnings": result.warnings}
