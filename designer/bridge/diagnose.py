"""Diagnosis through the one door: measured nccl-tests runs → the faults that explain them.

The engine's :mod:`designer.engine.analysis.diagnose` (docs/FORMATS.md, "Diagnosis") compares
each measured curve with the healthy prediction of the design and ranks candidate faults (a NIC,
a link, a switch port degraded or down) by how well their predicted curve fits the measurement.
This module turns what a user sent (nccl-tests stdout or its JSON result file, or rows as JSON)
into the engine's ``runs``, checks them cheaply before anything is saved
(:func:`diagnosis_check`), and runs a ``diagnose`` job on a worker (:func:`run_diagnose`).

Errors are located under the request's own names: ``runs[1].log: line 37: expected 13 columns,
got 4`` for a log, the engine's own paths (``runs[0].hosts[2]: unknown host "h9"``) otherwise.
"""
from __future__ import annotations

from designer.bridge.common import Progress, engine_errors, json_safe
from designer.engine.errors import EngineError
from designer.exceptions import EngineValidationError

__all__ = ["diagnosis_runs", "diagnosis_check", "run_diagnose"]


def diagnosis_runs(items: list[dict], *, op: str) -> list[dict]:
    """The engine's ``runs`` from what a user sent.

    Parameters
    ----------
    items : list of dict
        One per measured run: ``label`` (str), ``hosts`` (list of host ids or None: the whole
        design) and either ``log`` (nccl-tests stdout or its JSON result file) or ``rows`` (``[{"bytes",
        "busbw_gbps", "time_us"}]``, already measured figures as JSON).
    op : str
        The collective (``all_reduce``…): a log that names no binary is read as this op.

    Returns
    -------
    list of dict
        ``{"label", "hosts", "gpus", "rows"}`` each (busbw in GB/s, time in µs), plus ``op`` and
        ``ranks`` for a log: the engine's input, and what the job stores.

    Raises
    ------
    EngineValidationError
        Every log that is not nccl-tests output, located as ``runs[i].log: line N: ...``.
    """
    runs, problems = [], []
    for i, item in enumerate(items):
        if item.get("log") is None:
            runs.append(_run(item, [dict(r) for r in item.get("rows") or []]))
            continue
        try:
            parsed = _log_run(item["label"], item["log"], op)
        except EngineError as exc:
            problems += [{"path": f"runs[{i}].log", "message": line} for line in exc.lines()]
            continue
        # The log's own op and rank count stay with the run: the engine checks them against
        # the op asked for and the GPUs the run's hosts hold.
        runs.append({**parsed, **_run(item, parsed["rows"])})
    if problems:
        raise EngineValidationError(code="import_format", message="not a valid nccl-tests output",
                                    details=problems)
    return runs


def _run(item: dict, rows: list[dict]) -> dict:
    hosts = item.get("hosts")
    return {"label": str(item.get("label") or ""), "hosts": list(hosts) if hosts else None,
            "gpus": list(item["gpus"]) if item.get("gpus") else None, "rows": rows}


def _log_run(label: str, text: str, op: str) -> dict:
    """One log — nccl-tests stdout, or its JSON result file (a text starting with ``{``) — as the
    engine's run (rows, and the log's ``op`` and ``ranks``); parsed first, so a bad log is
    reported as such."""
    from designer.engine.io.nccl_tests_json import parse_run

    parsed = parse_run(text, op=op)
    return _runs_from_logs([(label, parsed)])[0]


def _runs_from_logs(pairs: list[tuple]) -> list[dict]:
    """Engine ``runs_from_logs``: ``(label, ParsedLog)`` pairs → runs (out-of-place busbw per size)."""
    from designer.engine.analysis.diagnose import runs_from_logs

    return runs_from_logs(pairs)


def diagnosis_check(*, document: dict, runs: list[dict], op: str, options: dict | None) -> dict:
    """What a diagnosis of ``runs`` on ``document`` will cost, or why it cannot run.

    Returns
    -------
    dict
        ``{"candidates", "sizes", "runs", "estimate_s"}`` (engine ``diagnosis_plan``).

    Raises
    ------
    EngineValidationError
        The engine's located problems (unknown op or host, rows without sizes…).
    """
    from designer.engine.analysis.diagnose import diagnosis_plan

    with engine_errors():
        return json_safe(diagnosis_plan(document, runs, op=op, options=options or None))


def run_diagnose(job, progress: Progress) -> dict:
    """Run a ``diagnose`` job: its revision's document, its stored runs and options.

    ``progress(fraction, message)`` is the job's (it stops the run on a cancel). Returns the
    engine's diagnosis as plain JSON, with ``format`` ``fabricscope.diagnosis/1`` added so a
    stored result says what it is.
    """
    from designer.engine.analysis.diagnose import diagnose

    params = job.parameters or {}
    with engine_errors():
        out = diagnose(job.revision.document, list((job.inputs or {}).get("runs") or []),
                       op=params.get("op") or "all_reduce", dtype=params.get("dtype") or "float",
                       options=params.get("options") or None, progress=progress,
                       top=int(params.get("top") or 10))
    return {"format": "fabricscope.diagnosis/1", **json_safe(out)}
