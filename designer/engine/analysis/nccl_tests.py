"""nccl-tests side by side: predicted sweeps in nccl-tests' terms, and comparison with a real run.

`nccl-tests <https://github.com/NVIDIA/nccl-tests>`_ (``all_reduce_perf -b 8 -e 8G -f 2``) prints
one row per message size: ``size count type redop root``, then ``time algbw busbw #wrong`` out of
place and again in place. :func:`predict_sweep` produces the same rows from the engine: one
one-pattern scenario per size through :func:`designer.engine.analysis.simulate.simulate` (so whatever
algorithm selection and latency model the engine has, the sweep uses), the topology compiled once
and reused. :func:`designer.engine.io.nccl_tests_log.parse_log` reads a real run's stdout and
:func:`compare` lines the two up per size.

Definitions (nccl-tests ``doc/PERFORMANCE.md``,
https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):

- ``S`` is nccl-tests' ``size`` column: the per-rank buffer for all-reduce, send/recv,
  broadcast and reduce, the *total* array (``count_per_rank × n × sizeof(type)``) for
  all-gather, reduce-scatter, all-to-all, gather, scatter and hypercube — the same number the
  engine's pattern ``bytes`` means (``workloads.py``);
- ``algbw = S / t`` (GB/s = 10⁹ B/s, ``t`` the collective's time; hypercube ``(n−1)/n × S / t``);
- ``busbw = algbw × factor``: all-reduce ``2(n−1)/n``; all-gather, reduce-scatter, all-to-all,
  gather, scatter ``(n−1)/n``; send/recv, broadcast, reduce, hypercube ``1`` (the table of
  :mod:`designer.engine.analysis.nccl_tests_ops`).

Sizes follow nccl-tests' loop: ``size = min; size <= max; size *= factor`` (or ``size +=
step_bytes``, ``-i``), each rounded down to a whole number of elements (and, for the
gathered/scattered ops, of elements per rank), as the ``count`` column shows (nccl-tests
``src/*.cu`` ``GetCollByteCount``). The rooted ops take nccl-tests' ``-r`` root rank; the
reduction operator (``-o``) is echoed in the ``redop`` column and does not change the time (it
changes the arithmetic, not the bytes moved).
"""
from __future__ import annotations

import re

from designer.engine.analysis.nccl_tests_ops import (
    MAX_SIZES,
    OPS,
    REDOPS,
    ROOTED_OPS,
    TYPE_BYTES,
    algbw_factor,
    busbw_factor,
    elements,
    parse_size,
    redop_column,
    sweep_sizes,
)
from designer.engine.errors import (
    EngineError,
    InvalidScenario,
    InvalidWorkload,
    Problem,
)
from designer.engine.model.topology import Topology

__all__ = [
    "MAX_CHANNELS",
    "MAX_SIZES",
    "PROTOCOL_CHOICES",
    "OPS",
    "REDOPS",
    "ROOTED_OPS",
    "TYPE_BYTES",
    "busbw_factor",
    "compare",
    "curve_summary",
    "compile_topology",
    "parse_size",
    "participant_ids",
    "predict_sweep",
    "side_by_side",
    "sweep_sizes",
]

#: Largest ``channels`` a sweep takes: NCCL's ``MAXCHANNELS`` (32; docs/ENGINE.md, "Size-dependent
#: bandwidth"). More would only build flows NCCL never runs.
MAX_CHANNELS = 32
#: ``protocol`` values of a sweep: ``auto`` (the engine picks per size, as NCCL's tuner) or one of
#: NCCL's protocols (``NCCL_PROTO``).
PROTOCOL_CHOICES = ("auto", "LL", "LL128", "Simple")
# Ops NCCL runs as point-to-point sends: no ring/tree channels to count, no algorithm to choose;
# send/recv has no protocol knob.
_NO_CHANNELS = {"alltoall", "sendrecv", "gather", "scatter", "hypercube"}
_PATTERN_ID = "nccl"


def compile_topology(topology_or_build) -> Topology:
    """A compiled :class:`Topology` from a Topology, a topology document, or ``{"build": {"template":
    ..., "hosts": N, ...}}`` (the arguments of :func:`designer.engine.model.fabrics.build_cluster`).

    Raises
    ------
    InvalidTopology, InvalidScenario
    """
    if isinstance(topology_or_build, Topology):
        return topology_or_build
    if isinstance(topology_or_build, dict) and "build" in topology_or_build:
        from designer.engine.traffic.scenario import normalize_scenario

        # normalize_scenario owns the {"build": ...} shorthand and its located errors.
        return normalize_scenario({"topology": topology_or_build}).topology
    if not isinstance(topology_or_build, dict):
        raise InvalidScenario("bad topology", [Problem("topology", "must be a topology document")])
    return Topology.from_document(topology_or_build)


def participant_ids(topo: Topology, participants) -> list[str]:
    """The ranks' node ids, in rank order, of a participants selector (default every GPU)."""
    from designer.engine.traffic.workloads import resolve_selector

    chosen = resolve_selector(topo, participants or {"kind": "gpu"}, "participants")
    return [topo.node_ids[int(i)] for i in chosen]


def _patterns(op: str, size: int, ranks: list[str], algorithm: str, protocol: str = "auto",
              channels: int | None = None, root: int = 0, gpus_per_thread: int = 1,
              allowed: list[str] | None = None) -> list[dict]:
    """The workload for one size: one collective pattern, or one p2p per ring neighbour for
    send/recv (nccl-tests' sendrecv: every rank sends S to the next and receives S from the
    previous, all at once). ``root``: the rank (index into ``ranks``) of a rooted op;
    ``allowed``: the algorithms ``auto`` chooses from (a list narrower than ``[algorithm]``)."""
    kind = OPS[op]
    if kind == "p2p" and gpus_per_thread != 1:
        raise InvalidScenario("bad nccl-tests sweep", [Problem("gpus_per_thread", f"{op} is predicted as "
                                                                "independent sends: leave it at 1")])
    if kind == "p2p":
        return [{"id": f"{_PATTERN_ID}{k}", "kind": "p2p", "src": src, "dst": ranks[(k + 1) % len(ranks)],
                 "bytes": size} for k, src in enumerate(ranks)]
    pattern = {"id": _PATTERN_ID, "kind": kind, "participants": {"ids": ranks}, "bytes": size}
    if op in ROOTED_OPS:
        pattern["root"] = ranks[root]
    # "auto" is the contract's default (docs/FORMATS.md, Scenario): leaving the field out asks for it and
    # keeps working on an engine whose validator predates the value.
    if algorithm != "auto":
        pattern["algorithm"] = algorithm
    elif allowed and allowed != [algorithm]:
        pattern["algorithms"] = list(allowed)
    if protocol != "auto":
        pattern["protocol"] = protocol
    if channels is not None:
        pattern["channels"] = channels
    if gpus_per_thread != 1:
        pattern["gpus_per_thread"] = gpus_per_thread
    return [pattern]


def _measure(result: dict) -> dict:
    """Time (s), algorithm, protocol and the engine's own algbw/busbw of the swept pattern(s)."""
    entries = list(result["summary"]["patterns"].values())
    broken = [e for e in entries if not e.get("complete", True) or e.get("completion_s") is None]
    if broken:
        reason = broken[0].get("reason") or "the collective does not complete"
        raise InvalidWorkload("collective does not complete", [Problem("topology", reason)])
    slowest = max(entries, key=lambda e: e["completion_s"])
    return {"time_s": float(slowest["completion_s"]), "algorithm": slowest.get("algorithm"),
            "protocol": slowest.get("protocol")}


def _row(op: str, size: int, count: int, dtype: str, n: int, got: dict, algorithm: str,
         redop: str = "sum", root: int = 0) -> dict:
    """One nccl-tests row: algbw and busbw by nccl-tests' own arithmetic (nccl_tests_ops)."""
    t = got["time_s"]
    algbw = size / t / 1e9 * algbw_factor(op, n) if size and t > 0 else 0.0
    busbw = algbw * busbw_factor(op, n)
    return {"size_bytes": size, "count": count, "type": dtype, "redop": redop_column(op, redop),
            "root": root if op in ROOTED_OPS else -1, "time_us": t * 1e6, "algbw_gbs": float(algbw),
            "busbw_gbs": float(busbw), "algorithm": got["algorithm"] or (algorithm if algorithm != "auto" else None),
            "protocol": got["protocol"]}


def _check_op(op: str, dtype: str, protocol: str = "auto", channels: int | None = None,
              redop: str = "sum") -> None:
    problems = []
    if op not in OPS:
        problems.append(Problem("op", f"unknown op {op!r} (choose from {', '.join(OPS)})"))
    if dtype not in TYPE_BYTES:
        problems.append(Problem("dtype", f"unknown type {dtype!r} (choose from {', '.join(TYPE_BYTES)})"))
    if redop not in REDOPS:
        problems.append(Problem("redop", f"unknown reduction {redop!r} (choose from {', '.join(REDOPS)})"))
    problems += _knob_problems(op, protocol, channels)
    if problems:
        raise InvalidScenario("bad nccl-tests sweep", problems)


def _knob_problems(op: str, protocol: str, channels) -> list[Problem]:
    """The protocol and channel count asked of the prediction, checked against what the op takes."""
    problems = []
    if protocol not in PROTOCOL_CHOICES:
        problems.append(Problem("protocol", f"unknown protocol {protocol!r} "
                                            f"(choose from {', '.join(PROTOCOL_CHOICES)})"))
    elif protocol != "auto" and op == "sendrecv":
        problems.append(Problem("protocol", "sendrecv takes no protocol (point-to-point sends); leave it on auto"))
    if channels is None:
        return problems
    if not isinstance(channels, int) or isinstance(channels, bool) or not 1 <= channels <= MAX_CHANNELS:
        problems.append(Problem("channels", f"must be an integer from 1 to {MAX_CHANNELS} (NCCL's MAXCHANNELS)"))
    elif op in _NO_CHANNELS:
        problems.append(Problem("channels", f"{op} takes no channel count (NCCL runs it as point-to-point "
                                            "sends); leave it empty"))
    return problems


def _check_root(root, n: int) -> None:
    """A rank of the run. Like nccl-tests, an op without a root takes ``-r`` and prints -1."""
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < n:
        raise InvalidScenario("bad root", [Problem("root", f"must be a rank from 0 to {n - 1} (nccl-tests -r)")])


def predict_sweep(topology_or_build, op: str, *, min_bytes=None, max_bytes=None, factor: int | None = 2,
                  participants=None, algorithm: str = "auto", dtype: str = "float", routing: dict | None = None,
                  sizes: list[int] | None = None, protocol: str = "auto", channels: int | None = None,
                  root: int = 0, redop: str = "sum", step_bytes=None, algorithms=None,
                  gpus_per_thread: int = 1, fastest_of=None) -> list[dict]:
    """Predicted nccl-tests rows for ``op`` from ``min_bytes`` to ``max_bytes``.

    Parameters
    ----------
    topology_or_build : Topology or dict
        See :func:`compile_topology`; compiled once and reused for every size.
    op : str
        An nccl-tests binary of :data:`OPS` (``all_reduce`` … ``hypercube``).
    min_bytes, max_bytes : int or str
        Sizes in bytes (``"8G"`` accepted, as nccl-tests' ``-b``/``-e``).
    factor : int or None
        Multiplication factor between sizes (``-f``); None or 1 with ``step_bytes``: additive.
    step_bytes : int or str, optional
        Additive increment between sizes (``-i``), used when ``factor`` is None or 1.
    participants : dict, optional
        Selector of the ranks, in rank order (default every GPU, ``{"kind": "gpu"}``).
    algorithm : str
        ``auto`` (the engine's choice) or an algorithm name the engine accepts for the op.
    algorithms : sequence of str, optional
        With ``algorithm="auto"``: the algorithms allowed (``NCCL_ALGO=Ring,Tree``,
        ``NCCL_NVLS_ENABLE=0``); per size NCCL's model (or the hosts' tuner plugin) chooses
        among those, as NCCL does — which need not be the fastest of them.
    fastest_of : sequence of str, optional
        Instead of NCCL's choice: per size each of these algorithms that runs here is predicted
        alone and the fastest kept (the tuner export names the engine's best, not NCCL's pick).
    dtype : str
        Element type (``-d``); sets the ``count`` column and the rounding of sizes.
    routing : dict, optional
        The scenario's ``routing`` (NIC policy, multipath, seed).
    sizes : list of int, optional
        Explicit sizes in bytes instead of ``min_bytes``…``max_bytes`` (e.g. a real run's
        ``size`` column, to compare at exactly its sizes).
    protocol : {"auto", "LL", "LL128", "Simple"}
        ``auto`` lets the engine pick per size (NCCL's tuner); a name forces it, as
        ``NCCL_PROTO`` does. Not for ``sendrecv``.
    channels : int, optional
        Channels (rings / trees) the collective runs on, 1…:data:`MAX_CHANNELS`, as
        ``NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS``; default the engine's own count. Not for
        the point-to-point ops.
    root : int
        Root rank of a rooted op (``-r``; broadcast, reduce, gather, scatter), 0…n−1; the other
        ops take it and print -1, as nccl-tests does.
    redop : {"sum", "prod", "min", "max", "avg"}
        Echoed in the ``redop`` column of reducing ops; it does not change the time.
    gpus_per_thread : int
        GPUs one host thread drives (``-g``; default 1, one process per GPU): a row's time is at
        least that thread's issue time (:mod:`designer.engine.traffic.collectives.launch`). Not
        for ``sendrecv``.

    Returns
    -------
    list of dict
        One row per size: ``size_bytes``, ``count``, ``type``, ``redop``, ``root``, ``time_us``
        (µs), ``algbw_gbs``, ``busbw_gbs`` (GB/s, 10⁹ B/s), ``algorithm``, ``protocol`` (None when
        the engine does not report one), ``requested_bytes`` (the size asked for, before
        rounding to whole elements per rank).

    Raises
    ------
    InvalidScenario, InvalidWorkload, InvalidTopology
        Bad arguments (located: ``min_bytes``, ``op``, ``algorithm``, ``root`` …) or a collective
        that cannot complete on this topology.
    """
    _check_op(op, dtype, protocol, channels, redop)
    sizes = _requested(min_bytes, max_bytes, factor, sizes, step_bytes)
    topo = compile_topology(topology_or_build)
    ranks = participant_ids(topo, participants)
    if len(ranks) < 2:
        raise InvalidWorkload("too few ranks", [Problem("participants", "nccl-tests needs at least 2 ranks")])
    _check_root(root, len(ranks))
    if algorithms is not None and fastest_of is not None:
        raise InvalidScenario("bad nccl-tests sweep", [Problem("fastest_of", "give algorithms (NCCL's "
                                                                "choice) or fastest_of, not both")])
    pool = _algorithm_pool(op, algorithm, fastest_of)
    allowed = _algorithm_pool(op, algorithm, algorithms)   # [algorithm] when nothing narrows it
    rows = []
    for requested in sizes:
        size, count = elements(op, requested, len(ranks), TYPE_BYTES[dtype])
        got = _fastest(topo, routing, [_patterns(op, size, ranks, a, protocol, channels, root, gpus_per_thread,
                                                 allowed) for a in pool])
        rows.append({**_row(op, size, count, dtype, len(ranks), got, algorithm, redop, root),
                     "requested_bytes": requested})
    return rows


def _algorithm_pool(op: str, algorithm: str, algorithms) -> list[str]:
    """The algorithms of ``algorithms`` that implement ``op`` (with ``algorithm="auto"``), else
    ``[algorithm]``; a located error when none does."""
    if algorithms is None or algorithm != "auto" or op in _NO_CHANNELS:
        # NCCL applies no algorithm to point-to-point ops (nccl_env.check_env_for_op refuses NCCL_ALGO on
        # them); NCCL_NVLS_ENABLE=0 leaves them as they are.
        return [algorithm]
    from designer.engine.traffic.collectives import candidates

    pool = [a for a in candidates(OPS[op]) if a in set(algorithms)]
    if not pool:
        raise InvalidScenario("no algorithm allowed", [Problem("algorithms", f"none of {', '.join(algorithms)} "
                                                                             f"implements {op}")])
    return pool


def _simulate(topo, routing, workload) -> dict:
    from designer.engine.analysis.simulate import simulate

    scenario = {"topology": topo, "workload": workload, "options": {"max_flows_listed": 0}}
    if routing:
        scenario["routing"] = routing
    try:
        return _measure(simulate(scenario))
    except EngineError as exc:
        raise type(exc)(exc.message, [_relocate(p) for p in exc.problems]) from None


def _fastest(topo, routing, workloads: list[list[dict]]) -> dict:
    """The fastest of the candidate workloads (one per allowed algorithm); with several, one that
    does not run here is left out, and the reasons are raised when none runs."""
    if len(workloads) == 1:
        return _simulate(topo, routing, workloads[0])
    best, errors = None, []
    for workload in workloads:
        try:
            got = _simulate(topo, routing, workload)
        except InvalidWorkload as exc:
            errors.append(exc)
            continue
        if best is None or got["time_s"] < best["time_s"]:
            best = got
    if best is None:
        raise InvalidWorkload("no allowed algorithm runs here", [p for e in errors for p in e.problems])
    return best


def _requested(min_bytes, max_bytes, factor, sizes, step_bytes=None) -> list[int]:
    if sizes is None:
        if min_bytes is None or max_bytes is None:
            raise InvalidScenario("bad sweep", [Problem("min_bytes" if min_bytes is None else "max_bytes",
                                                        "required (or give explicit sizes)")])
        step = None if step_bytes is None else parse_size(step_bytes, "step_bytes")
        return sweep_sizes(parse_size(min_bytes, "min_bytes"), parse_size(max_bytes, "max_bytes"), factor, step)
    sizes = sorted({parse_size(s, f"sizes[{k}]") for k, s in enumerate(sizes)})
    if len(sizes) > MAX_SIZES:
        raise InvalidScenario("too many sizes", [Problem("sizes", f"more than {MAX_SIZES} sizes")])
    return sizes


def _relocate(problem: Problem) -> Problem:
    """``workload[0].algorithm`` → ``algorithm``: the caller gave arguments, not a scenario."""
    path = re.sub(r"^workload\[\d+\]\.?", "", problem.path)
    return Problem(path, problem.message)


def compare(measured_rows: list[dict], predicted_rows: list[dict], *, key: str = "busbw_gbs") -> list[dict]:
    """Measured against predicted, per size present in both.

    Parameters
    ----------
    measured_rows : list of dict
        Rows of :func:`designer.engine.io.nccl_tests_log.parse_log` (``out_of_place`` values used).
    predicted_rows : list of dict
        Rows of :func:`predict_sweep`.
    key : str
        The figure compared for ``error_pct`` (``busbw_gbs`` by default; ``time_us``, ``algbw_gbs``).

    Returns
    -------
    list of dict
        Per size (ascending): ``size_bytes``, ``measured`` and ``predicted`` (each ``time_us``,
        ``algbw_gbs``, ``busbw_gbs``), ``algorithm`` (predicted), ``error_pct`` = 100 × (predicted −
        measured) / measured for ``key`` (None when the measured value is 0 or missing), and
        ``time_error_pct`` likewise for time.
    """
    predicted = {r.get("requested_bytes", r["size_bytes"]): r for r in predicted_rows}
    out, seen = [], set()
    for row in sorted(measured_rows, key=lambda r: r["size_bytes"]):
        size = row["size_bytes"]
        pred = predicted.get(size)
        if pred is None or size in seen:
            continue
        seen.add(size)
        meas = row.get("out_of_place", row)
        figures = ("time_us", "algbw_gbs", "busbw_gbs")
        out.append({"size_bytes": size, "count": row.get("count"),
                    "measured": {k: meas.get(k) for k in figures},
                    "predicted": {k: pred[k] for k in figures}, "algorithm": pred.get("algorithm"),
                    "error_pct": _error(meas.get(key), pred[key]),
                    "time_error_pct": _error(meas.get("time_us"), pred["time_us"])})
    return out


# A bandwidth figure within ±10 % of the run counts as matched: the tolerance docs/FIDELITY.md
# judges bandwidth predictions by.
CURVE_TOLERANCE_PCT = 10.0


def curve_summary(comparison: list[dict], *, tolerance_pct: float = CURVE_TOLERANCE_PCT) -> dict:
    """How well a predicted curve follows a run, over every size of :func:`compare`.

    Returns
    -------
    dict
        ``sizes`` (compared rows with an error), ``within`` (those within ``tolerance_pct``),
        ``tolerance_pct``, ``median_abs_error_pct``, ``worst_abs_error_pct`` and
        ``worst_size_bytes`` (busbw error; None without rows), ``median_abs_time_error_pct``.
        One number per curve would hide where it misses, so the worst size is named.
    """
    rows = [r for r in comparison if r["error_pct"] is not None]
    worst = max(rows, key=lambda r: abs(r["error_pct"]), default=None)
    times = [abs(r["time_error_pct"]) for r in comparison if r.get("time_error_pct") is not None]
    return {"sizes": len(rows), "tolerance_pct": tolerance_pct,
            "within": sum(abs(r["error_pct"]) <= tolerance_pct for r in rows),
            "median_abs_error_pct": _median([abs(r["error_pct"]) for r in rows]),
            "worst_abs_error_pct": abs(worst["error_pct"]) if worst else None,
            "worst_size_bytes": worst["size_bytes"] if worst else None,
            "median_abs_time_error_pct": _median(times)}


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered, mid = sorted(values), len(values) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def _error(measured, predicted) -> float | None:
    if measured is None or predicted is None or not measured:
        return None
    return 100.0 * (predicted - measured) / measured


def side_by_side(topology_or_build, op: str, *, min_bytes, max_bytes, factor: int | None = 2,
                 algorithm: str = "auto", dtype: str = "float", log=None, logs=None, protocol: str = "auto",
                 channels: int | None = None, step_bytes=None, root: int = 0, redop: str = "sum",
                 participants=None, routing: dict | None = None, algorithms=None, gpus_per_thread: int = 1) -> dict:
    """A predicted sweep and, with real runs, each run and its comparison at exactly its sizes.

    Parameters
    ----------
    topology_or_build, op, min_bytes, max_bytes, factor, algorithm, dtype, protocol, channels
        As :func:`predict_sweep`. The runs' op (from their binary name) replaces ``op``.
    step_bytes, root, redop, participants, routing, algorithms, gpus_per_thread
        As :func:`predict_sweep`.
    log : str or ParsedLog, optional
        One real nccl-tests stdout or JSON result file (parsed with
        :func:`designer.engine.io.nccl_tests_json.parse_run`); the same as ``logs=[("run", log)]``.
    logs : list of (str, str or ParsedLog), optional
        Several runs, each ``(name, log)`` (the name is the file's, for the legend), overlaid on
        one prediction. They must be runs of one collective.

    Returns
    -------
    dict
        ``op``, ``ranks`` (participants), ``algorithm``, ``protocol``, ``channels``, ``root``,
        ``redop``, ``gpus_per_thread`` (as asked),
        ``rows`` (the sweep), ``runs`` (per run: ``name``, ``measured`` (its rows),
        ``measured_op``, ``measured_ranks`` (None when the log does not say), ``comparison``
        (:func:`compare` against a prediction at the run's sizes and type), ``curve``
        (:func:`curve_summary`)), and the first run's ``measured``, ``measured_op``,
        ``measured_ranks``, ``comparison`` and ``curve`` at the top level (None / [] without a run).

    Raises
    ------
    InvalidScenario, InvalidWorkload, InvalidTopology, ImportFormatError
        Also ``log``: a run of an op the engine cannot predict, runs of different collectives, or
        runs with more than :data:`MAX_SIZES` distinct sizes together.
    """
    runs = _parsed_runs(op, log, logs)
    op = _runs_op(op, runs)
    topo = compile_topology(topology_or_build)
    knobs = {"algorithm": algorithm, "protocol": protocol, "channels": channels, "root": root, "redop": redop,
             "gpus_per_thread": gpus_per_thread}
    extra = {"participants": participants, "routing": routing, "algorithms": algorithms}
    rows = predict_sweep(topo, op, min_bytes=min_bytes, max_bytes=max_bytes, factor=factor, dtype=dtype,
                         step_bytes=step_bytes, **knobs, **extra)
    out = {"op": op, "ranks": len(participant_ids(topo, participants)), **knobs, "rows": rows, "runs": [],
           "measured": None, "measured_op": None, "measured_ranks": None, "comparison": [], "curve": None}
    predicted = _predicted_at_run_sizes(topo, op, runs, dtype, {**knobs, **extra})
    for name, parsed in runs:
        comparison = compare(parsed.rows, predicted[_run_type(parsed, dtype)])
        out["runs"].append({"name": name, "measured": parsed.rows, "measured_op": parsed.op,
                            "measured_ranks": parsed.ranks, "comparison": comparison,
                            "curve": curve_summary(comparison)})
    if out["runs"]:
        out.update({k: v for k, v in out["runs"][0].items() if k != "name"})
    return out


def _parsed_runs(op: str, log, logs) -> list[tuple[str, object]]:
    from designer.engine.io.nccl_tests_json import parse_run

    pairs = ([("run", log)] if log is not None else []) + list(logs or [])
    return [(str(name), parse_run(text, op=op) if isinstance(text, str) else text) for name, text in pairs]


def _runs_op(op: str, runs: list) -> str:
    """The collective the runs are of (their binary names), which the prediction then follows."""
    named = [(name, parsed.op) for name, parsed in runs if parsed.op]
    for name, run_op in named:
        if run_op not in OPS:
            raise InvalidScenario("unsupported op", [Problem("log", f"{name}: a {run_op}_perf run cannot be "
                                                                    f"predicted (supported: {', '.join(OPS)})")])
    if len({run_op for _, run_op in named}) > 1:
        (first, op_a), (other, op_b) = named[0], next(n for n in named if n[1] != named[0][1])
        raise InvalidScenario("runs of different collectives", [Problem(
            "log", f"{other} is an {op_b}_perf run and {first} an {op_a}_perf run: overlay runs of one collective")])
    return named[0][1] if named else op


def _run_type(parsed, dtype: str) -> str:
    kind = parsed.rows[0]["type"]
    return kind if kind in TYPE_BYTES else dtype


def _predicted_at_run_sizes(topo, op: str, runs: list, dtype: str, knobs: dict) -> dict[str, list[dict]]:
    """One prediction per element type at the union of the runs' sizes: runs of one sweep share
    their sizes, so N overlaid runs cost about one run's solves, not N."""
    sizes: dict[str, set[int]] = {}
    for _, parsed in runs:
        sizes.setdefault(_run_type(parsed, dtype), set()).update(r["size_bytes"] for r in parsed.rows)
    total = sum(len(v) for v in sizes.values())
    if total > MAX_SIZES:
        raise InvalidScenario("too many sizes", [Problem("log", f"the runs have {total} distinct sizes together; "
                                                                f"at most {MAX_SIZES} are predicted")])
    return {kind: predict_sweep(topo, op, sizes=sorted(values), dtype=kind, **knobs)
            for kind, values in sizes.items()}
