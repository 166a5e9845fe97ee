"""nccl-tests' own terms: its binaries, element types, reduction operators, size loop and the
``size``/``count``/``algbw``/``busbw`` arithmetic of each binary.

Sources: nccl-tests ``doc/PERFORMANCE.md``
(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md) and each binary's
``src/<op>.cu`` (``GetCollByteCount``, ``GetBw``), ``src/common.cu`` (``-b -e -i -f``):

=============== ================= ========================== ===================
op              engine kind       ``size`` column (S)        busbw / (S / t)
=============== ================= ========================== ===================
all_reduce      allreduce         per-rank buffer            2(n−1)/n
all_gather      allgather         total (n × per-rank)       (n−1)/n
reduce_scatter  reducescatter     total (n × per-rank)       (n−1)/n
alltoall        alltoall          total (n × per-peer)       (n−1)/n
sendrecv        p2p               per-rank buffer            1
broadcast       broadcast         the root's buffer          1
reduce          reduce            per-rank buffer            1
gather          gather            total (n × per-rank)       (n−1)/n
scatter         scatter           total (n × per-rank)       (n−1)/n
hypercube       hypercube         total (n × per-rank)       (n−1)/n
=============== ================= ========================== ===================

``algbw = S / t`` for every op but hypercube, whose ``GetBw`` counts the ``n−1`` per-rank
blocks a rank receives (``algbw = (n−1)/n × S / t``) with factor 1, so its algbw equals its
busbw. The ``count`` column is per rank for the "total" ops (gather and scatter keep whole
16-byte blocks per rank, hypercube whole 4-element blocks — ``src/scatter.cu``,
``src/hypercube.cu``). The reduction operator (``-o``) changes what is computed, not what is
moved, so it does not change the modelled time; it is echoed in the ``redop`` column.
"""
from __future__ import annotations

import math
import re

from designer.engine.errors import InvalidScenario, InvalidWorkload, Problem

__all__ = ["MAX_SIZES", "OPS", "REDOPS", "ROOTED_OPS", "TYPE_BYTES", "algbw_factor", "busbw_factor",
           "elements", "parse_size", "redop_column", "sweep_sizes"]

#: nccl-tests op (binary ``<op>_perf``) → engine pattern kind.
OPS = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter",
       "alltoall": "alltoall", "sendrecv": "p2p", "broadcast": "broadcast", "reduce": "reduce",
       "gather": "gather", "scatter": "scatter", "hypercube": "hypercube"}
#: Ops with a root rank (``-r``).
ROOTED_OPS = ("broadcast", "reduce", "gather", "scatter")
#: Bytes per element of nccl-tests' ``-d`` types.
TYPE_BYTES = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "bfloat16": 2, "float": 4, "int32": 4,
              "uint32": 4, "int": 4, "double": 8, "int64": 8, "uint64": 8}
#: nccl-tests' ``-o`` reduction operators (echoed; they do not change the modelled time).
REDOPS = ("sum", "prod", "min", "max", "avg")
#: A sweep of more sizes than this is refused (8 B…8 GiB doubling is 31).
MAX_SIZES = 64
_REDUCING = {"all_reduce", "reduce_scatter", "reduce"}
_PER_RANK = {"all_gather", "reduce_scatter", "alltoall", "gather", "scatter", "hypercube"}
# Per-rank blocks are whole multiples of this many bytes (gather, scatter) / elements (hypercube).
_BLOCK_BYTES = {"gather": 16, "scatter": 16}
_BLOCK_ELEMENTS = {"hypercube": 4}
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def _unknown_op(op: str) -> InvalidWorkload:
    return InvalidWorkload(f"unknown op {op!r}", [Problem("op", f"unknown op {op!r} (choose from {', '.join(OPS)})")])


def busbw_factor(op: str, n: int) -> float:
    """nccl-tests' ``busbw / algbw`` for ``op`` on ``n`` ranks (dimensionless; see the table)."""
    if op not in OPS:
        raise _unknown_op(op)
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in _PER_RANK and op != "hypercube":
        return (n - 1) / n
    return 1.0


def algbw_factor(op: str, n: int) -> float:
    """nccl-tests' ``algbw / (S / t)``: (n−1)/n for hypercube, 1 for every other op."""
    if op not in OPS:
        raise _unknown_op(op)
    return (n - 1) / n if op == "hypercube" else 1.0


def redop_column(op: str, redop: str) -> str:
    """The ``redop`` column: the operator for reducing ops, ``none`` for the others."""
    return redop if op in _REDUCING else "none"


def parse_size(text, where: str = "size") -> int:
    """A byte count as nccl-tests' ``-b``/``-e``/``-i`` take it: ``8``, ``64K``, ``8M``, ``8G``
    (K/M/G/T are powers of 1024, as in nccl-tests ``parsesize``).

    Raises
    ------
    InvalidScenario
        Not a non-negative size.
    """
    if isinstance(text, bool):
        text = "?"
    if isinstance(text, (int, float)):
        if text >= 0 and math.isfinite(text):
            return int(text)
        text = str(text)
    match = _SIZE.match(str(text))
    if not match:
        raise InvalidScenario(f"bad size {text!r}", [Problem(where, f"bad size {text!r} (like 8, 64K, 8M, 8G)")])
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def sweep_sizes(min_bytes: int, max_bytes: int, factor: int | None = 2, step_bytes: int | None = None) -> list[int]:
    """The requested sizes of nccl-tests' loop (before rounding to whole elements), bytes:
    ``size *= factor`` (``-f``), or ``size += step_bytes`` (``-i``) when ``step_bytes`` is given
    and ``factor`` is None or 1 — nccl-tests adds ``stepbytes`` unless ``stepfactor > 1``.

    Raises
    ------
    InvalidScenario
        ``min_bytes`` < 1 or > ``max_bytes``, a bad ``factor``/``step_bytes``, or more than
        :data:`MAX_SIZES` sizes.
    """
    additive = step_bytes is not None and factor in (None, 1)
    problems = _sweep_problems(min_bytes, max_bytes, factor, step_bytes, additive)
    if problems:
        raise InvalidScenario("bad sweep", problems)
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size = size + step_bytes if additive else size * factor
        if len(sizes) > MAX_SIZES:
            knob = "step_bytes" if additive else "factor"
            raise InvalidScenario("too many sizes", [Problem(knob, f"the sweep has more than {MAX_SIZES} sizes; "
                                                                   f"raise {knob} or narrow the range")])
    return sizes


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _sweep_problems(min_bytes, max_bytes, factor, step_bytes, additive) -> list[Problem]:
    problems = []
    if additive:
        if not _is_int(step_bytes) or step_bytes < 1:
            problems.append(Problem("step_bytes", "must be an integer >= 1 byte"))
    elif not _is_int(factor) or factor < 2:
        problems.append(Problem("factor", "must be an integer >= 2 (or give step_bytes for an additive sweep)"))
    if min_bytes < 1:
        problems.append(Problem("min_bytes", "must be at least 1 byte"))
    if max_bytes < min_bytes:
        problems.append(Problem("max_bytes", f"must be >= min_bytes ({min_bytes})"))
    return problems


def elements(op: str, size: int, n: int, type_bytes: int) -> tuple[int, int]:
    """(``size`` column in bytes, ``count`` column in elements) for a requested size."""
    count = size // type_bytes
    if op not in _PER_RANK:
        return count * type_bytes, count
    per_rank = count // n
    if op in _BLOCK_BYTES:
        per_rank -= per_rank % max(1, _BLOCK_BYTES[op] // type_bytes)
    if op in _BLOCK_ELEMENTS:
        per_rank -= per_rank % _BLOCK_ELEMENTS[op]
    return per_rank * n * type_bytes, per_rank
