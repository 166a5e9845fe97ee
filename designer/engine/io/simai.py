"""SimAI / ASTRA-sim 1.0 workload files (the text AICB writes) → a Fabricscope job.

Format (ASTRA-sim 1.0 workload input, ``docs`` of astra-sim; SimAI ``example/*.txt``)::

    HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 ga: 1 all_gpus: 8 ...
    <number of layers>
    <name> <reserved> <fwd compute> <fwd comm type> <fwd comm bytes> <ig compute> <ig comm type>
        <ig comm bytes> <wg compute> <wg comm type> <wg comm bytes> <wg update time>

Header keys: ``model_parallel_NPU_group`` (TP size), ``ep``, ``pp``, ``vpp``, ``ga`` (gradient
accumulation steps = micro-batches), ``all_gpus``, ``checkpoints``, ``checkpoint_initiates``,
``pp_comm`` (bytes each pipeline send carries). Any other key is a located error.

Communication groups follow SimAI's ``Workload.cc``: in the forward and input-gradient columns a
bare type (``ALLREDUCE``, ``ALLGATHER``, ``REDUCESCATTER``, ``ALLTOALL``) runs over the TP group;
in the weight-gradient column over the DP group; the suffix ``_EP`` means the EP group, ``_DP_EP``
the expert-data-parallel group (``edp``); ``NONE`` (size 0) is no communication. Sizes are bytes
(nccl-tests' size of the collective). Compute times are ASTRA-sim cycles; SimAI runs one cycle per
nanosecond, so they are read as ``time_unit_s`` = 1e-9 s by default.

The job: per micro-batch, the layers' forward (compute, then its communication) in order, then
the layers in reverse for the input gradient (compute, communication) and the weight gradient
(compute; its communication overlaps the following layers, as ASTRA-sim issues it without
waiting); after the last micro-batch every weight-gradient communication and the update times
finish the step. Every rank runs the same per-rank file (SPMD), so each collective runs over all
its groups at once; ``pp`` > 1 adds, per micro-batch, a ``pp_comm``-byte send from every stage
to the next after the forward, and back before the backward (a p2p pattern over the ``pp``
groups). This is a per-rank, all-stages-in-lockstep reading: the pipeline bubble is not modelled.
"""
from __future__ import annotations

import io
import math
import re

from designer.engine.document.bounds import MAX_BYTES, MAX_SECONDS, magnitude_problem
from designer.engine.errors import ImportFormatError, LimitExceeded, Problem
from designer.engine.io.bounded_text import check_text_size

__all__ = ["COMM_TYPES", "HEADER_KEYS", "MAX_CYCLES", "MAX_HEADER_VALUE", "MAX_PHASES", "MAX_PROBLEMS", "MAX_TEXT_CHARS",
           "parse_simai", "simai_job"]

HEADER_KEYS = {"model_parallel_NPU_group", "ep", "pp", "vpp", "ga", "all_gpus", "checkpoints",
               "checkpoint_initiates", "pp_comm"}
KNOWN_MODES = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER", "MICRO", "DATA")
COMM_TYPES = {"ALLREDUCE": "allreduce", "ALLGATHER": "allgather", "REDUCESCATTER": "reducescatter",
              "ALLTOALL": "alltoall"}
# A job above this many phases is refused (the event loop re-solves at every phase boundary).
MAX_PHASES = 50_000
# Header values (GPU counts, sizes, ga): 10 ASCII digits at most, so int() never meets Python's
# 4,300-digit limit (a ValueError, a 500) and no count is absurd before the topology is consulted.
MAX_HEADER_VALUE = 2 ** 32
# Problems listed per file: enough to fix a file, bounded for a file of garbage.
MAX_PROBLEMS = 20
# Compute times in cycles: MAX_SECONDS at SimAI's 1 ns per cycle.
MAX_CYCLES = MAX_SECONDS * 10 ** 9
# Largest upload read, in characters: a file at MAX_PHASES phases has ~17,000 layer lines of
# ~150 characters (2.5 MB).
MAX_TEXT_CHARS = 8 * 1024 * 1024
_SIZE_COLUMNS = (4, 7, 10)
_TIME_COLUMNS = (2, 5, 8, 11)
_COLUMNS = ("name", "reserved", "fwd compute time", "fwd comm type", "fwd comm size", "ig compute time",
            "ig comm type", "ig comm size", "wg compute time", "wg comm type", "wg comm size", "wg update time")


def parse_simai(text: str) -> dict:
    """Header and layers of a workload file.

    Returns
    -------
    dict
        ``mode``, ``header`` (key → int), ``layers`` (list of dicts: ``name``, ``fwd``, ``ig``,
        ``wg`` = ``(compute, group, kind, bytes)``, ``update``).

    Raises
    ------
    ImportFormatError
        Located at ``line N`` (and the column name) for anything unexpected.
    """
    check_text_size(text, "SimAI workload", max_chars=MAX_TEXT_CHARS)
    # Lines are read lazily and parsing stops early: a 4 MB file of a million bad lines made a
    # million problems (1 GB and a 200 MB error message) before this.
    lines = ((n + 1, ln.strip()) for n, ln in enumerate(io.StringIO(text, newline=None)) if ln.strip())
    first, second = next(lines, None), next(lines, None)
    if second is None:
        raise ImportFormatError("not a SimAI workload", [Problem("line 1", "expected a header line and a layer count")])
    mode, header = _header(*first)
    n_line, count = second
    if not re.fullmatch(r"[0-9]{1,10}", count):
        raise ImportFormatError("bad layer count", [Problem(f"line {n_line}", f"expected the layer count, got {count[:40]!r}")])
    if 3 * int(count) + 1 > MAX_PHASES:      # three compute phases per layer, at least
        raise LimitExceeded("job too large", [Problem(f"line {n_line}", f"{int(count):,} layers make more than "
                                                                      f"{MAX_PHASES:,} phases (the limit)")])
    layers, problems, seen = [], [], 0
    for n, line in lines:
        seen += 1
        if seen > int(count) or len(problems) >= MAX_PROBLEMS:
            continue                  # count the remaining lines only
        try:
            layers.append(_layer(n, line))
        except ImportFormatError as exc:
            problems.extend(exc.problems[:MAX_PROBLEMS - len(problems)])
    if len(problems) >= MAX_PROBLEMS:
        problems.append(Problem("", f"stopped after {MAX_PROBLEMS} problems"))
    elif not problems and seen != int(count):
        problems.append(Problem(f"line {n_line}", f"says {count} layers, the file has {seen}"))
    if problems:
        raise ImportFormatError("invalid SimAI workload", problems)
    return {"mode": mode, "header": header, "layers": layers}


def _header(n: int, line: str) -> tuple[str, dict]:
    tokens = line.split()
    mode = tokens[0]
    if mode not in KNOWN_MODES:
        raise ImportFormatError("unknown workload type", [Problem(f"line {n}", f"unknown parallelism type {mode!r} "
                                                                  f"(expected one of {', '.join(KNOWN_MODES)})")])
    header, problems, rest = {}, [], tokens[1:]
    k = 0
    while k < len(rest) and len(problems) < MAX_PROBLEMS:
        key = rest[k].rstrip(":")
        value = rest[k + 1] if k + 1 < len(rest) else None
        if key not in HEADER_KEYS:
            problems.append(Problem(f"line {n}", f"unknown header field {key!r}"))
        elif value is None or not re.fullmatch(r"[0-9]{1,10}", value) or int(value) > MAX_HEADER_VALUE:
            problems.append(Problem(f"line {n}", f"header field {key!r} needs an integer in "
                                    f"0..{MAX_HEADER_VALUE:,}, got {value[:40] if value else value!r}"))
        else:
            header[key] = int(value)
        k += 2
    for key in ("model_parallel_NPU_group", "all_gpus"):
        if key not in header and not problems:
            problems.append(Problem(f"line {n}", f"missing header field {key!r}"))
    for key in ("model_parallel_NPU_group", "pp", "ep", "all_gpus"):
        if header.get(key) == 0:     # a divisor of all_gpus (0 was a ZeroDivisionError, a 500)
            problems.append(Problem(f"line {n}", f"header field {key!r} must be >= 1"))
    if problems:
        raise ImportFormatError("invalid SimAI header", problems)
    return mode, header


def _layer(n: int, line: str) -> dict:
    cols = line.split()
    if len(cols) != len(_COLUMNS):
        raise ImportFormatError("bad layer", [Problem(f"line {n}", f"expected {len(_COLUMNS)} columns "
                                                      f"({', '.join(_COLUMNS)}), got {len(cols)}")])
    problems = []

    def number(i):
        # 400 digits parse as inf: refused here, at the line, not later at a phase.
        if (not re.fullmatch(r"-?\d+(\.\d+)?", cols[i]) or float(cols[i]) < 0 and i != 1
                or not math.isfinite(float(cols[i]))):
            problems.append(Problem(f"line {n}", f"{_COLUMNS[i]}: expected a finite number >= 0, got {cols[i][:40]!r}"))
            return 0.0
        too_large = _column_bound_problem(n, i, float(cols[i]))
        if too_large is not None:
            problems.append(too_large)
            return 0.0
        return float(cols[i])

    def comm(i, default_group):
        text = cols[i]
        if text == "NONE":
            return None, None
        base, _, suffix = text.partition("_")
        group = {"": default_group, "EP": "ep", "DP_EP": "edp"}.get(suffix)
        if base not in COMM_TYPES or group is None:
            problems.append(Problem(f"line {n}", f"{_COLUMNS[i]}: unsupported communication type {text!r} "
                                    f"(supported: {', '.join(COMM_TYPES)}, with _EP or _DP_EP, or NONE)"))
            return None, None
        return group, COMM_TYPES[base]

    number(1)
    out = {"name": cols[0], "line": n, "update": number(11)}
    for slot, (t, c, s), default in (("fwd", (2, 3, 4), "tp"), ("ig", (5, 6, 7), "tp"), ("wg", (8, 9, 10), "dp")):
        group, kind = comm(c, default)
        out[slot] = (number(t), group, kind, number(s))
    if problems:
        raise ImportFormatError("bad layer", problems)
    return out


def _column_bound_problem(n: int, i: int, value: float) -> Problem | None:
    """A ``line N`` problem for a size over :data:`~designer.engine.document.bounds.MAX_BYTES` or
    a time over :data:`MAX_CYCLES` (finite 1e308-byte sizes summed to inf downstream)."""
    if i in _SIZE_COLUMNS:
        found = magnitude_problem(_COLUMNS[i], value, MAX_BYTES, "B")
    elif i in _TIME_COLUMNS:
        found = magnitude_problem(_COLUMNS[i], value, MAX_CYCLES, "cycles")
    else:
        return None
    return None if found is None else Problem(f"line {n}", f"{found.path}: {found.message}")


def simai_job(text: str, *, time_unit_s: float = 1e-9) -> dict:
    """The ``{"job": {...}}`` workload (docs/FORMATS.md, Jobs) of a SimAI workload file.

    Raises
    ------
    ImportFormatError
        See :func:`parse_simai`; ``all_gpus`` not divisible by TP × PP.
    LimitExceeded
        More than :data:`MAX_PHASES` phases.
    """
    parsed = parse_simai(text)
    h, layers = parsed["header"], parsed["layers"]
    tp, pp, ep = h["model_parallel_NPU_group"], h.get("pp", 1), h.get("ep", 1)
    if h["all_gpus"] % (tp * pp):
        raise ImportFormatError("bad header", [Problem("line 1", f"all_gpus {h['all_gpus']} is not a multiple of "
                                                                 f"model_parallel_NPU_group × pp = {tp * pp}")])
    layout = {"tp": tp, "pp": pp, "dp": h["all_gpus"] // (tp * pp), "ep": ep}
    micro_batches = max(1, h.get("ga", 1))
    # Counted before anything is built: ``ga: 4000000000`` made the builder loop for hours.
    phases = micro_batches * _phases_per_micro_batch(layers, pp, h.get("pp_comm", 0)) + 1
    if phases > MAX_PHASES:
        raise LimitExceeded("job too large", [Problem("line 2", f"the job would have {phases:,} phases "
                                                                f"(limit {MAX_PHASES:,}); lower ga or the layer count")])
    builder = _Builder(time_unit_s)
    for i in range(micro_batches):
        builder.micro_batch(i, layers, pp, h.get("pp_comm", 0))
    builder.finish(layers)
    return {"job": {"name": parsed["mode"], "source": "simai", "layout": layout, "phases": builder.phases}}


def _phases_per_micro_batch(layers: list, pp: int, pp_comm: int) -> int:
    """Phases :meth:`_Builder.micro_batch` adds: three computes per layer, a phase per
    communication that sends bytes, and two pipeline sends when ``pp`` > 1."""
    comms = sum(1 for layer in layers for slot in ("fwd", "ig", "wg")
                if layer[slot][1] is not None and layer[slot][3] > 0)
    return 3 * len(layers) + comms + (2 if pp > 1 and pp_comm else 0)


class _Builder:
    """Phases in a chain (compute → communication → next), weight-gradient comm off the chain."""

    def __init__(self, unit: float):
        self.unit, self.phases, self.last, self.wg = unit, [], None, []

    def _add(self, pid, compute=0.0, pattern=None, chain=True) -> str:
        phase = {"id": pid, "after": [self.last] if self.last else []}
        if compute:
            phase["compute_s"] = compute * self.unit
        if pattern:
            phase["patterns"] = [pattern]
        self.phases.append(phase)
        if chain:
            self.last = pid
        return pid

    def _comm(self, pid, slot, chain=True):
        _, group, kind, size = slot
        if group is None or size <= 0:
            return None
        return self._add(pid, pattern={"id": pid, "kind": kind, "bytes": size, "groups": {"layout": group}}, chain=chain)

    def micro_batch(self, i, layers, pp, pp_comm) -> None:
        for k, layer in enumerate(layers):
            self._add(f"m{i}.f{k}", layer["fwd"][0])
            self._comm(f"m{i}.f{k}.comm", layer["fwd"])
        if pp > 1 and pp_comm:
            self._pp_send(f"m{i}.pp_fwd", pp_comm, False)
            self._pp_send(f"m{i}.pp_bwd", pp_comm, True)
        for k in reversed(range(len(layers))):
            layer = layers[k]
            self._add(f"m{i}.ig{k}", layer["ig"][0])
            self._comm(f"m{i}.ig{k}.comm", layer["ig"])
            self._add(f"m{i}.wg{k}", layer["wg"][0])
            wg = self._comm(f"m{i}.wg{k}.comm", layer["wg"], chain=False)
            if wg:
                self.wg.append(wg)

    def _pp_send(self, pid, size, reverse) -> None:
        # Stage s → s ± 1 in every pp group: one p2p pattern over the pp groups.
        self._add(pid, pattern={"id": pid, "kind": "p2p", "bytes": float(size), "groups": {"layout": "pp"},
                                "reverse": reverse})

    def finish(self, layers) -> None:
        update = sum(layer["update"] for layer in layers)
        phase = {"id": "update", "after": [self.last, *self.wg] if self.last else list(self.wg)}
        if update:
            phase["compute_s"] = update * self.unit
        self.phases.append(phase)
