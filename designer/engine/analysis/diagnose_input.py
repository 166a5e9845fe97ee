"""The input of a diagnosis, checked: measured nccl-tests runs and the run options
(docs/FORMATS.md, "Diagnosis").

A run is ``{"label", "hosts", "gpus", "rows": [{"bytes", "busbw_gbps", "time_us"}]}`` (plus, from
a parsed log, ``op`` and ``ranks``); every problem is reported at once, located
(``runs[1].rows[3].bytes: sizes must increase``), and nothing is diagnosed on bad input.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from designer.engine.analysis.nccl_tests import MAX_CHANNELS, MAX_SIZES, PROTOCOL_CHOICES, busbw_factor
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.model.topology import Topology
from designer.engine.routing import NIC_POLICIES

__all__ = ["MAX_RUNS", "DIAGNOSABLE_OPS", "Run", "check_runs", "check_options", "runs_from_logs"]

#: More runs than this are refused: each run is simulated once per candidate class.
MAX_RUNS = 64
#: Ops a diagnosis takes: the collectives whose plan NCCL re-initialized on the faulty machine the
#: engine predicts (send/recv is plain point-to-point; the rooted ones are not tried here yet).
DIAGNOSABLE_OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
_OPTION_KEYS = ("algorithm", "protocol", "channels", "nic_policy")


@dataclass
class Run:
    """One checked run: its label, hosts (None: the whole design), its ranks (GPU ids), sizes
    (bytes, increasing) and measured busbw (GB/s) per size."""

    label: str
    hosts: frozenset | None
    gpus: list
    sizes: list
    busbw: np.ndarray


def runs_from_logs(pairs) -> list[dict]:
    """Runs from parsed nccl-tests logs.

    Parameters
    ----------
    pairs : list of (str, ParsedLog)
        ``(label, parse_log(text))`` (:func:`designer.engine.io.nccl_tests_log.parse_log`).

    Returns
    -------
    list of dict
        ``{"label", "hosts": None, "gpus": None, "op", "ranks", "rows": [{"bytes", "busbw_gbps",
        "time_us"}]}`` from the out-of-place columns (in-place when out-of-place is missing).
    """
    out = []
    for label, parsed in pairs:
        rows = []
        for r in parsed.rows:
            figures = r.get("out_of_place") or r.get("in_place") or {}
            rows.append({"bytes": r["size_bytes"], "busbw_gbps": figures.get("busbw_gbs"),
                         "time_us": figures.get("time_us")})
        out.append({"label": str(label), "hosts": None, "gpus": None, "op": parsed.op, "ranks": parsed.ranks,
                    "rows": rows})
    return out


def check_options(op: str, options) -> tuple[dict, list[Problem]]:
    """The run options as pattern fields and NIC policy, and their problems."""
    problems = []
    if op not in DIAGNOSABLE_OPS:
        problems.append(Problem("op", f"cannot diagnose {op!r} (choose from {', '.join(DIAGNOSABLE_OPS)})"))
    options = {} if options is None else options
    if not isinstance(options, dict):
        return {}, problems + [Problem("options", "must be an object")]
    extra = sorted(set(options) - set(_OPTION_KEYS))
    if extra:
        problems.append(Problem("options", f"unknown field(s) {extra} (choose from {', '.join(_OPTION_KEYS)})"))
    knobs = {"algorithm": options.get("algorithm") or "auto", "protocol": options.get("protocol") or "auto",
             "channels": options.get("channels"), "nic_policy": options.get("nic_policy") or "affinity"}
    if not isinstance(knobs["algorithm"], str):
        problems.append(Problem("options.algorithm", "must be an algorithm name"))
    if knobs["protocol"] not in PROTOCOL_CHOICES:
        problems.append(Problem("options.protocol", f"unknown protocol (choose from {', '.join(PROTOCOL_CHOICES)})"))
    ch = knobs["channels"]
    if ch is not None and (not isinstance(ch, int) or isinstance(ch, bool) or not 1 <= ch <= MAX_CHANNELS):
        problems.append(Problem("options.channels", f"must be an integer from 1 to {MAX_CHANNELS}"))
    if knobs["nic_policy"] not in NIC_POLICIES:
        problems.append(Problem("options.nic_policy", f"unknown policy (choose from {', '.join(NIC_POLICIES)})"))
    return knobs, problems


def check_runs(topo: Topology, runs, op: str) -> list[Run]:
    """Checked runs.

    Raises
    ------
    InvalidScenario
        Every problem, located: no runs, a host or GPU not in the design, fewer than 2 ranks,
        empty rows, sizes not increasing, a negative or missing busbw, an op or rank count that
        does not match.
    """
    problems: list[Problem] = []
    if not isinstance(runs, list) or not runs:
        raise InvalidScenario("no runs", [Problem("runs", "give at least one measured run")])
    if len(runs) > MAX_RUNS:
        raise InvalidScenario("too many runs", [Problem("runs", f"{len(runs)} runs; at most {MAX_RUNS}")])
    out = [_run(topo, raw, op, f"runs[{k}]", k, problems) for k, raw in enumerate(runs)]
    if problems:
        raise InvalidScenario("bad runs", problems)
    return out


def _run(topo: Topology, raw, op: str, where: str, k: int, problems: list) -> Run | None:
    if not isinstance(raw, dict):
        problems.append(Problem(where, "must be an object"))
        return None
    label = raw.get("label") if isinstance(raw.get("label"), str) and raw.get("label") else f"run {k + 1}"
    if raw.get("op") and raw["op"] != op:
        problems.append(Problem(f"{where}.op", f"{label} is an {raw['op']}_perf run; diagnosing {op}"))
    hosts, gpus = _participants(topo, raw, where, problems)
    if gpus is not None and len(gpus) < 2:
        problems.append(Problem(where, f"{label}: {len(gpus)} GPU(s); nccl-tests needs at least 2 ranks"))
    ranks = raw.get("ranks")
    if gpus is not None and isinstance(ranks, int) and ranks >= 2 and ranks != len(gpus):
        problems.append(Problem(f"{where}.ranks", f"{label} ran on {ranks} ranks; its hosts hold {len(gpus)} GPUs "
                                                  "(give the run's hosts)"))
    sizes, busbw = _rows(raw.get("rows"), f"{where}.rows", op, len(gpus or ()) or 2, problems)
    if gpus is None or sizes is None:
        return None
    return Run(label, hosts, gpus, sizes, busbw)


def _participants(topo: Topology, raw: dict, where: str, problems: list) -> tuple[frozenset | None, list | None]:
    """(the run's hosts or None for the whole design, its GPU ids) — None, None on a problem."""
    hosts, gpus = raw.get("hosts"), raw.get("gpus")
    all_gpus = [topo.node_ids[i] for i in topo.nodes_of_kind("gpu")]
    if hosts is not None and not _known(hosts, topo.hosts(), f"{where}.hosts", "host", problems, shown=True):
        return None, None
    if gpus is not None:
        if not _known(gpus, all_gpus, f"{where}.gpus", "GPU", problems):
            return None, None
        host_set = frozenset(topo.node_host[topo.node_index[g]] for g in gpus)
        return (frozenset(hosts) & host_set if hosts else host_set), list(gpus)
    if hosts is None:
        return None, all_gpus
    chosen = set(hosts)
    return frozenset(hosts), [g for g in all_gpus if topo.node_host[topo.node_index[g]] in chosen]


def _known(ids, design: list[str], where: str, what: str, problems: list, *, shown: bool = False) -> bool:
    """Whether ``ids`` is a non-empty list of ids of the design (each unknown one a problem)."""
    if not isinstance(ids, list) or not ids:
        problems.append(Problem(where, f"must be a non-empty list of {what} ids, or null"))
        return False
    known = set(design)
    hint = f" (the design has {', '.join(design[:4])}{' …' if len(design) > 4 else ''})" if shown else ""
    bad = [(j, i) for j, i in enumerate(ids) if i not in known]
    for j, i in bad:
        problems.append(Problem(f"{where}[{j}]", f"unknown {what} {i!r}{hint}"))
    return not bad


def _rows(rows, where: str, op: str, ranks: int, problems: list) -> tuple[list | None, np.ndarray | None]:
    if not isinstance(rows, list) or not rows:
        problems.append(Problem(where, "no rows: a run needs at least one measured size"))
        return None, None
    if len(rows) > MAX_SIZES:
        problems.append(Problem(where, f"{len(rows)} sizes; at most {MAX_SIZES}"))
        return None, None
    before = len(problems)
    sizes, busbw = [], []
    for j, row in enumerate(rows):
        here = f"{where}[{j}]"
        size = row.get("bytes") if isinstance(row, dict) else None
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            problems.append(Problem(f"{here}.bytes", "must be a positive whole number of bytes"))
            continue
        if sizes and size <= sizes[-1]:
            problems.append(Problem(f"{here}.bytes", f"sizes must increase ({size} after {sizes[-1]})"))
            continue
        value = _busbw(row, size, op, ranks, here, problems)
        sizes.append(size)
        busbw.append(value)
    if len(problems) > before:
        return None, None
    return sizes, np.array(busbw, dtype=np.float64)


def _busbw(row: dict, size: int, op: str, ranks: int, here: str, problems: list) -> float:
    """The row's busbw (GB/s); from nccl-tests' time column when the printed busbw rounds to 0
    (small sizes print ``0.00``), as nccl-tests computes it: size / time × the op's factor."""
    value, time_us = row.get("busbw_gbps"), row.get("time_us")
    if value is not None and (not _number(value) or value < 0):
        problems.append(Problem(f"{here}.busbw_gbps", "must be a finite number >= 0 (GB/s)"))
        return math.nan
    if time_us is not None and (not _number(time_us) or time_us < 0):
        problems.append(Problem(f"{here}.time_us", "must be a finite number >= 0 (µs)"))
        return math.nan
    if value:
        return float(value)
    if time_us:
        return size / (time_us * 1e3) * busbw_factor(op, ranks)
    problems.append(Problem(f"{here}.busbw_gbps", "missing or 0 with no time: nothing measured at this size"))
    return math.nan


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
