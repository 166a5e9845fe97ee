"""NCCL debug logs through the one door: log texts (and a graph dump) + a revision's document →
the engine's ``fabricscope.nccl-log-check/1`` report.

The engine reads the logs (:mod:`designer.engine.io.nccl_debug_log`) and checks them against the
compiled design (:mod:`designer.engine.analysis.nccl_log_check`). A log it cannot read becomes
an :class:`designer.exceptions.EngineValidationError` under the field ``logs`` (``run.log: line
7: a connection line cut short …``), a bad graph dump under ``graph_dump``, and nothing is saved.
"""
from __future__ import annotations

from designer.bridge.common import engine_errors, json_safe

__all__ = ["nccl_log_check"]


def nccl_log_check(*, document: dict, logs: list[tuple[str, str]], graph_dump: str | None = None) -> dict:
    """The summary of ``logs`` (``(file name, text)`` pairs of one run) and its mismatches with
    ``document``.

    Raises
    ------
    EngineValidationError
        Located problems of the logs (field ``logs``), of the graph dump (``graph_dump``) or of
        the document.
    """
    from designer.engine.analysis.nccl_log_check import check_log
    from designer.engine.io.nccl_debug_log import parse_logs
    from designer.engine.io.nccl_graph_dump import parse_graph_dump
    from designer.engine.model.topology import Topology

    with engine_errors(field="logs"):
        log = parse_logs(logs)
    graphs = None
    if graph_dump:
        with engine_errors(field="graph_dump"):
            graphs = parse_graph_dump(graph_dump)
    with engine_errors():
        return json_safe(check_log(log, Topology.from_document(document), graphs))
