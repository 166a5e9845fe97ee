"""nccl-tests' JSON result file: read it (a real run, like its stdout) and write one from a
prediction, so a predicted sweep can be handed to whatever reads nccl-tests results.

Recent nccl-tests write, besides the stdout table, one JSON object per run (NVIDIA/nccl-tests
``src/util.cu``, ``JSON_FILE_VERSION 2``)::

    {"version": 2, "start_time": "...", "args": ["./all_reduce_perf", "-b", "8", ...],
     "env": ["NCCL_ALGO=Ring", ...], "nccl_version": 22703,
     "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 8, "maximum_bytes": 8589934592,
                "step_factor": 2, "warmup_iters": 5, "iterations": 20, ...,
                "devices": [{"rank": 0, "group": 0, "pid": 1, "hostname": "node-1", "device": 0,
                             "device_hex": "...", "device_info": "NVIDIA H100 80GB HBM3"}, ...]},
     "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
                  "out_of_place": {"time": 37.1, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
                  "in_place": {...}, "actual_iterations": 20, "experiment_name": "..."}, ...],
     "out_of_bounds": {"count": 0, "okay": "true"},
     "average_bus_bandwidth": {"bandwidth": 123.4, "okay": "unchecked"}, "errors": [], ...}

Times are µs, bandwidths GB/s; ``time`` reads ``cpu_time`` with ``-C 1``; a NaN is written as
the string ``"nan"``; ``out_of_place`` may be ``null``; ``*_per_iter`` percentile objects may
follow each side (kept, not needed here). ``devices`` has one entry per process (the first rank
of its line), so the ranks are ``len(devices) × nthreads × ngpus``.

:func:`parse_json` returns the same :class:`~designer.engine.io.nccl_tests_log.ParsedLog` as the
stdout reader; :func:`parse_run` takes either. :func:`prediction_json` writes a prediction in
this format: ``args``/``env`` as the run would have been launched, one device per rank,
``in_place`` equal to ``out_of_place`` (a prediction has no in-place difference), ``nwrong``
null (nothing was checked), ``actual_iterations`` 0, and the engine's algorithm and protocol
under an extra ``fabricscope`` key per result.
"""
from __future__ import annotations

import json
import math
import re

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.nccl_tests_log import MAX_LOG_BYTES, ParsedLog, parse_log

__all__ = ["JSON_FILE_VERSION", "parse_json", "parse_run", "prediction_json"]

#: The nccl-tests JSON version this module reads and writes (``src/util.cu``).
JSON_FILE_VERSION = 2
_BINARY = re.compile(r"(?:^|/)([a-z_]+?)_perf\w*$")
_SIDES = ("out_of_place", "in_place")


def parse_run(text: str, op: str | None = None) -> ParsedLog:
    """A real run from nccl-tests' stdout or its JSON file (a text starting with ``{``).

    Raises
    ------
    ImportFormatError
        Located problems of either reader.
    """
    return parse_json(text, op) if text.lstrip().startswith("{") else parse_log(text, op)


def parse_json(text: str, op: str | None = None) -> ParsedLog:
    """Parse an nccl-tests JSON result file.

    Parameters
    ----------
    text : str
        The file's text.
    op : str, optional
        The op when ``args`` does not name a ``<op>_perf`` binary.

    Returns
    -------
    ParsedLog
        ``rows`` with the stdout reader's fields (``line`` None), ``ranks``, ``avg_busbw_gbs``.

    Raises
    ------
    ImportFormatError
        Not JSON, too large, or a missing / mistyped field, each located (``results[3].out_of_place.
        time: must be a number``).
    """
    if len(text) > MAX_LOG_BYTES:
        raise ImportFormatError("nccl-tests JSON too large", [Problem("input", f"{len(text):,} characters, over "
                                                                               f"the limit of {MAX_LOG_BYTES:,}")])
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = f"line {exc.lineno}" if hasattr(exc, "lineno") else "input"
        raise ImportFormatError("not JSON", [Problem(where, f"not valid JSON: {getattr(exc, 'msg', exc)}")]) from None
    if not isinstance(doc, dict):
        raise ImportFormatError("not an nccl-tests JSON file", [Problem("input", "must be a JSON object")])
    problems: list[Problem] = []
    rows = _rows(doc.get("results"), problems)
    ranks = _ranks(doc.get("config"), problems)
    average = _average(doc.get("average_bus_bandwidth"), problems)
    if problems:
        raise ImportFormatError("not a valid nccl-tests JSON file", problems)
    return ParsedLog(op=_op(doc.get("args")) or op, rows=rows, ranks=ranks, avg_busbw_gbs=average)


def _op(args) -> str | None:
    if not isinstance(args, list) or not args or not isinstance(args[0], str):
        return None
    match = _BINARY.search(args[0])
    return match.group(1) if match else None


def _number(value, where: str, problems: list, *, nullable: bool = True):
    """A JSON number (``"nan"`` and null: None), else a located problem."""
    if value is None and nullable:
        return None
    if isinstance(value, str) and value.strip().lower() == "nan":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    problems.append(Problem(where, f"must be a number, got {json.dumps(value)[:40]}"))
    return None


def _int(value, where: str, problems: list):
    """An integer field (``root`` is written as a padded string: ``"    -1"``)."""
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    problems.append(Problem(where, f"must be an integer, got {json.dumps(value)[:40]}"))
    return None


def _rows(results, problems: list) -> list[dict]:
    if not isinstance(results, list) or not results:
        problems.append(Problem("results", "must be a non-empty list of per-size records"))
        return []
    return [row for k, record in enumerate(results)
            if (row := _record(record, f"results[{k}]", problems)) is not None]


def _record(record, where: str, problems: list) -> dict | None:
    if not isinstance(record, dict):
        problems.append(Problem(where, "must be an object"))
        return None
    row = {"size_bytes": _int(record.get("size"), f"{where}.size", problems),
           "count": _int(record.get("count"), f"{where}.count", problems),
           "type": record.get("type") if isinstance(record.get("type"), str) else None,
           "redop": record.get("redop") if isinstance(record.get("redop"), str) else None,
           "root": _int(record["root"], f"{where}.root", problems) if "root" in record else None,
           "line": None}
    if row["type"] is None:
        problems.append(Problem(f"{where}.type", "must be a string (float, half, ...)"))
    for side in _SIDES:
        row[side] = _side(record.get(side), f"{where}.{side}", problems)
    if row["out_of_place"] is None and row["in_place"] is None:
        problems.append(Problem(where, "has neither out_of_place nor in_place figures"))
    return row


def _side(value, where: str, problems: list) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(Problem(where, "must be an object or null"))
        return None
    key = "time" if "time" in value or "cpu_time" not in value else "cpu_time"
    return {"time_us": _number(value.get(key), f"{where}.{key}", problems, nullable=False),
            "algbw_gbs": _number(value.get("alg_bw"), f"{where}.alg_bw", problems, nullable=False),
            "busbw_gbs": _number(value.get("bus_bw"), f"{where}.bus_bw", problems, nullable=False),
            "wrong": _number(value.get("nwrong"), f"{where}.nwrong", problems)}


def _ranks(config, problems: list) -> int | None:
    if config is None:
        return None
    if not isinstance(config, dict):
        problems.append(Problem("config", "must be an object"))
        return None
    devices = config.get("devices")
    if not isinstance(devices, list) or not devices:
        return None
    per_process = 1
    for key in ("nthreads", "ngpus"):
        value = config.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            problems.append(Problem(f"config.{key}", "must be an integer >= 1"))
            return None
        per_process *= value
    return len(devices) * per_process


def _average(average, problems: list) -> float | None:
    if average is None:
        return None
    if not isinstance(average, dict):
        problems.append(Problem("average_bus_bandwidth", "must be an object"))
        return None
    return _number(average.get("bandwidth"), "average_bus_bandwidth.bandwidth", problems)


def prediction_json(rows: list[dict], *, op: str, args: list[str], env: list[str], devices: list[dict],
                    config: dict) -> dict:
    """A prediction as an nccl-tests JSON result object (see the module docstring).

    Parameters
    ----------
    rows : list of dict
        Predicted rows (``size_bytes``, ``count``, ``type``, ``redop``, ``root``, ``time_us``,
        ``algbw_gbs``, ``busbw_gbs``, ``algorithm``, ``protocol``).
    op : str
        The nccl-tests op (``all_reduce`` …); ``args[0]`` names its binary when ``args`` is empty.
    args, env : list of str
        The command line and ``NAME=VALUE`` settings the prediction stands for.
    devices : list of dict
        One per rank: ``hostname``, ``device`` (local index), ``device_info`` (GPU model).
    config : dict
        ``minimum_bytes``, ``maximum_bytes`` and ``step_factor`` or ``step_bytes``.

    Returns
    -------
    dict
        The JSON object (``json.dumps`` it).
    """
    results = []
    for r in rows:
        side = {"time": r["time_us"], "alg_bw": r["algbw_gbs"], "bus_bw": r["busbw_gbs"], "nwrong": None}
        results.append({"size": r["size_bytes"], "count": r["count"], "type": r["type"], "redop": r["redop"],
                        "root": f"{r['root']:6d}", "out_of_place": side, "in_place": dict(side),
                        "actual_iterations": 0, "experiment_name": "fabricscope prediction",
                        "fabricscope": {"algorithm": r.get("algorithm"), "protocol": r.get("protocol")}})
    mean = sum(r["busbw_gbs"] for r in rows) / len(rows) if rows else 0.0
    ranked = [{"rank": k, "group": 0, "pid": 0, "hostname": d.get("hostname") or "", "device": d.get("device", 0),
               "device_hex": "", "device_info": d.get("device_info") or ""} for k, d in enumerate(devices)]
    return {"version": JSON_FILE_VERSION, "generator": "fabricscope prediction",
            "args": list(args) or [f"{op}_perf"], "env": list(env), "nccl_version": None,
            "config": {"nthreads": 1, "ngpus": 1, **config, "devices": ranked}, "results": results,
            "out_of_bounds": {"count": 0, "okay": "true"},
            "average_bus_bandwidth": {"bandwidth": mean, "okay": "unchecked"}, "errors": []}
