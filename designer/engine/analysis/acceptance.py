"""Acceptance spec of a design: per op and size, the least bus bandwidth (and the most time) a
healthy cluster of this design must show in nccl-tests, and the check of real runs against it.

A bring-up script runs nccl-tests on the new cluster and :func:`check` with the spec of its design:
every size must reach ``min_busbw_gbs = predicted × (1 − BANDWIDTH_TOLERANCE)`` and stay under
``max_time_us = predicted × (1 + LATENCY_TOLERANCE)``. The tolerances are the ones the fidelity
benchmark judges the engine's predictions by (docs/FIDELITY.md: a bandwidth figure within ±10 %,
a latency figure within ±25 %; ``designer/engine/benchmarks/fidelity_cases.json`` ``tolerances``,
:data:`designer.engine.analysis.nccl_tests.CURVE_TOLERANCE_PCT`): a run below the floor is further
from the prediction than the engine's own error on published runs, so it points at the cluster.

The spec (``fabricscope.acceptance/1``, docs/FORMATS.md) is JSON; :func:`spec_csv` writes the
same rows as CSV for a spreadsheet. Measured figures are nccl-tests' out-of-place columns (the
fidelity benchmark's first choice too); a row with a non-zero ``#wrong`` fails whatever its speed.
"""
from __future__ import annotations

import math

from designer.engine.analysis.nccl_tests import CURVE_TOLERANCE_PCT, OPS, compile_topology, predict_sweep
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.traffic.workloads import resolve_selector

__all__ = ["SPEC_FORMAT", "BANDWIDTH_TOLERANCE", "LATENCY_TOLERANCE", "CSV_COLUMNS", "acceptance_spec",
           "spec_csv", "check_spec", "check", "verdict_lines"]

SPEC_FORMAT = "fabricscope.acceptance/1"
#: Relative bandwidth tolerance (docs/FIDELITY.md, bandwidth class: ±10 %).
BANDWIDTH_TOLERANCE = CURVE_TOLERANCE_PCT / 100.0
#: Relative time tolerance (docs/FIDELITY.md, latency class: ±25 %).
LATENCY_TOLERANCE = 0.25
#: Columns of :func:`spec_csv`.
CSV_COLUMNS = ("op", "size_bytes", "algorithm", "protocol", "predicted_busbw_gbs", "min_busbw_gbs",
               "predicted_time_us", "max_time_us")
_ROW_NUMBERS = ("size_bytes", "min_busbw_gbs", "max_time_us")


def _spec_row(row: dict) -> dict:
    return {"size_bytes": row["size_bytes"], "algorithm": row["algorithm"], "protocol": row["protocol"],
            "predicted_busbw_gbs": row["busbw_gbs"],
            "min_busbw_gbs": row["busbw_gbs"] * (1.0 - BANDWIDTH_TOLERANCE),
            "predicted_time_us": row["time_us"], "max_time_us": row["time_us"] * (1.0 + LATENCY_TOLERANCE)}


def acceptance_spec(topology_or_build, ops, *, min_bytes="8", max_bytes="8G", factor: int = 2,
                    dtype: str = "float", participants=None, design: str = "") -> dict:
    """The acceptance spec of a design.

    Parameters
    ----------
    topology_or_build : Topology or dict
        As :func:`designer.engine.analysis.nccl_tests.compile_topology` (compiled once).
    ops : iterable of str
        nccl-tests ops (``all_reduce``, ``all_gather``, … :data:`nccl_tests.OPS`).
    min_bytes, max_bytes, factor, dtype
        The sizes, as nccl-tests' ``-b``, ``-e``, ``-f``, ``-d``.
    participants : dict, optional
        Selector of the ranks (default every GPU).
    design : str
        A label of the design, kept in the spec.

    Returns
    -------
    dict
        ``format``, ``design``, ``ranks``, ``dtype``, ``tolerance`` (``busbw``, ``time``:
        fractions), ``ops``: op → rows of ``size_bytes``, ``algorithm``, ``protocol``,
        ``predicted_busbw_gbs``, ``min_busbw_gbs`` (GB/s), ``predicted_time_us``, ``max_time_us`` (µs).

    Raises
    ------
    InvalidScenario, InvalidWorkload, InvalidTopology
        Bad ops or sizes (located), or a collective that cannot run on the design.
    """
    ops = list(ops)
    if not ops:
        raise InvalidScenario("no op", [Problem("ops", "give at least one op")])
    bad = [op for op in ops if op not in OPS]
    if bad:
        raise InvalidScenario("bad op", [Problem("ops", f"unknown op {bad[0]!r} (choose from {', '.join(OPS)})")])
    topo = compile_topology(topology_or_build)
    ranks = len(resolve_selector(topo, participants or {"kind": "gpu"}, "participants"))
    out = {"format": SPEC_FORMAT, "design": design or topo.name or "", "ranks": ranks, "dtype": dtype,
           "tolerance": {"busbw": BANDWIDTH_TOLERANCE, "time": LATENCY_TOLERANCE}, "ops": {}}
    for op in ops:
        rows = predict_sweep(topo, op, min_bytes=min_bytes, max_bytes=max_bytes, factor=factor, dtype=dtype,
                             participants=participants)
        out["ops"][op] = [_spec_row(r) for r in rows]
    return out


def spec_csv(spec: dict) -> str:
    """The spec's rows as CSV (:data:`CSV_COLUMNS`; bandwidths GB/s, times µs)."""
    lines = [",".join(CSV_COLUMNS)]
    for op, rows in spec["ops"].items():
        for r in rows:
            lines.append(",".join([op, str(r["size_bytes"]), str(r["algorithm"]), str(r["protocol"])]
                                  + [f"{r[c]:.6g}" for c in CSV_COLUMNS[4:]]))
    return "\n".join(lines) + "\n"


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_spec(spec) -> dict:
    """The spec, checked (every problem located: ``ops.all_reduce[3].min_busbw_gbs: ...``).

    Raises
    ------
    InvalidScenario
        Not an acceptance spec, or a row without its numbers.
    """
    if not isinstance(spec, dict) or spec.get("format") != SPEC_FORMAT:
        raise InvalidScenario("not an acceptance spec", [Problem("format", f'expected "{SPEC_FORMAT}"')])
    problems = []
    ops = spec.get("ops")
    if not isinstance(ops, dict) or not ops:
        problems.append(Problem("ops", "must be an object of op -> rows"))
        ops = {}
    for op, rows in ops.items():
        if op not in OPS:
            problems.append(Problem(f"ops.{op}", f"unknown op (choose from {', '.join(OPS)})"))
        if not isinstance(rows, list):
            problems.append(Problem(f"ops.{op}", "must be a list of rows"))
            continue
        for k, row in enumerate(rows):
            for key in _ROW_NUMBERS:
                if not isinstance(row, dict) or not _number(row.get(key)) or row.get(key) < 0:
                    problems.append(Problem(f"ops.{op}[{k}].{key}", "must be a non-negative number"))
    if not _number(spec.get("ranks")) and spec.get("ranks") is not None:
        problems.append(Problem("ranks", "must be a number"))
    if problems:
        raise InvalidScenario("bad acceptance spec", problems)
    return spec


def _verdict(row: dict, measured: dict | None) -> dict:
    out = {"size_bytes": row["size_bytes"], "min_busbw_gbs": row["min_busbw_gbs"], "max_time_us": row["max_time_us"]}
    if measured is None or measured.get("busbw_gbs") is None:
        return {**out, "busbw_gbs": None, "time_us": None, "passed": False, "reason": "no measured figures (N/A)"}
    busbw, time_us, wrong = measured["busbw_gbs"], measured.get("time_us"), measured.get("wrong")
    reasons = []
    if busbw < row["min_busbw_gbs"]:
        reasons.append(f"busbw {busbw:g} < {row['min_busbw_gbs']:.4g} GB/s")
    if time_us is not None and time_us > row["max_time_us"]:
        reasons.append(f"time {time_us:g} > {row['max_time_us']:.4g} us")
    if wrong:
        reasons.append(f"{wrong:g} wrong results")
    return {**out, "busbw_gbs": busbw, "time_us": time_us, "passed": not reasons, "reason": "; ".join(reasons)}


def check(spec: dict, runs: list) -> dict:
    """Real nccl-tests runs against the spec, per size.

    Parameters
    ----------
    spec : dict
        An acceptance spec (:func:`acceptance_spec`; checked with :func:`check_spec`).
    runs : list of (str, ParsedLog)
        Label (file name) and parsed log (:func:`designer.engine.io.nccl_tests_log.parse_log`).

    Returns
    -------
    dict
        ``passed`` (every checked size of every run passed), ``runs``: per run ``label``, ``op``,
        ``rows`` (per size in both: ``size_bytes``, measured ``busbw_gbs``/``time_us``, the spec's
        ``min_busbw_gbs``/``max_time_us``, ``passed``, ``reason``), ``failed_sizes``,
        ``missing_sizes`` (in the spec, not in the run), ``extra_sizes`` (in the run only).

    Raises
    ------
    InvalidScenario
        A bad spec; a run of an op the spec lacks, of another rank count, or sharing no size
        with the spec (located by the run's label).
    """
    check_spec(spec)
    results = [_check_run(spec, label, parsed) for label, parsed in runs]
    return {"passed": bool(results) and all(r["passed"] for r in results), "runs": results}


def _check_run(spec: dict, label: str, parsed) -> dict:
    rows = spec["ops"].get(parsed.op)
    if rows is None:
        what = f"a {parsed.op} run" if parsed.op else "the log names no nccl-tests binary"
        raise InvalidScenario("op not in spec", [Problem(label, f"{what}; the spec has {', '.join(spec['ops'])}")])
    if parsed.ranks and spec.get("ranks") and parsed.ranks != spec["ranks"]:
        raise InvalidScenario("ranks differ", [Problem(label, f"{parsed.ranks} ranks; the spec is for "
                                                              f"{spec['ranks']} (busbw factors differ)")])
    measured = {r["size_bytes"]: r["out_of_place"] for r in parsed.rows}
    expected = {r["size_bytes"]: r for r in rows}
    both = sorted(set(measured) & set(expected))
    if not both:
        raise InvalidScenario("no common size", [Problem(label, "no size of the run is in the spec "
                                                                "(same -b/-e/-f and -d as the spec?)")])
    verdicts = [_verdict(expected[s], measured[s]) for s in both]
    failed = [v["size_bytes"] for v in verdicts if not v["passed"]]
    return {"label": label, "op": parsed.op, "passed": not failed, "rows": verdicts, "failed_sizes": failed,
            "missing_sizes": sorted(set(expected) - set(measured)), "extra_sizes": sorted(set(measured) - set(expected))}


def verdict_lines(result: dict) -> list[str]:
    """Human-readable lines of :func:`check`'s result: one per size, a summary per run, then
    ``PASS``/``FAIL``."""
    lines = []
    for run in result["runs"]:
        lines.append(f"# {run['label']}: {run['op']}")
        lines.append(f"{'size':>14} {'busbw':>9} {'min':>9} {'time_us':>11} {'max_us':>11}  verdict")
        for v in run["rows"]:
            busbw = "N/A" if v["busbw_gbs"] is None else f"{v['busbw_gbs']:.2f}"
            time_us = "N/A" if v["time_us"] is None else f"{v['time_us']:.2f}"
            verdict = "pass" if v["passed"] else f"FAIL ({v['reason']})"
            lines.append(f"{v['size_bytes']:>14} {busbw:>9} {v['min_busbw_gbs']:>9.2f} {time_us:>11} "
                         f"{v['max_time_us']:>11.2f}  {verdict}")
        summary = "all sizes pass" if run["passed"] else f"failed sizes: {', '.join(map(str, run['failed_sizes']))}"
        if run["missing_sizes"]:
            summary += f"; {len(run['missing_sizes'])} spec sizes not in the run"
        lines.append(f"# {run['label']}: {summary}")
    lines.append("PASS" if result["passed"] else "FAIL")
    return lines
