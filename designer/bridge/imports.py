"""Uploaded files read by the engine: a server description (NCCL XML, ``nvidia-smi topo -m``,
hwloc, rocm-smi) into a one-host document, and a SimAI/AICB workload into a job."""
from __future__ import annotations

from designer.bridge.common import engine_errors

__all__ = ["import_host", "import_simai_job"]


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
