"""NCCL tuner-plugin configuration from the engine's predictions: per collective and size range,
the algorithm the engine predicts fastest for this design (each predicted alone), with its
protocol and channel count.

The format is the CSV of NCCL's example tuner plugin (NVIDIA/nccl ``ext-tuner/example/README.md``
and ``plugin.c``, https://github.com/NVIDIA/nccl/tree/master/ext-tuner/example), one
configuration per line, ``#`` comments and blank lines ignored::

    collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
    allreduce,0,65536,tree,ll128,16,4,32,-1,-1

- ``collective_type``: ``broadcast``, ``reduce``, ``allgather``, ``reducescatter``, ``allreduce``
  (this engine models the last three; see :data:`TUNER_OPS`);
- ``min_bytes``/``max_bytes``: the range, both ends inclusive (the plugin matches
  ``minBytes <= nBytes <= maxBytes``, parsed with ``strtoull``). NCCL's ``nBytes`` is
  ``elementSize × ncclFuncMaxSendRecvCount`` (``enqueue.cc``): the per-rank buffer of an
  all-reduce, the whole gathered buffer of an all-gather / reduce-scatter — nccl-tests' ``size``
  column, the engine's pattern ``bytes``;
- ``algorithm``: ``tree``, ``ring``, ``collnet_direct``, ``collnet_chain``, ``nvls``,
  ``nvls_tree``, ``pat``; ``protocol``: ``ll``, ``ll128``, ``simple``;
- ``channels``: a channel count, or ``-1`` to keep NCCL's own;
- ``nNodes``/``nRanks``: the communicator the line applies to (``-1``: any); written as this
  design's hosts and ranks, since the choices were predicted for exactly that;
- ``numPipeOps``/``regBuff`` (optional since the 10-field format): written ``-1`` (any).

How ranges are made: the engine predicts at the sizes of an nccl-tests sweep
(:func:`designer.engine.analysis.nccl_tests.predict_sweep`, ``min``…``max`` by ``factor``);
sample ``s_i`` stands for the sizes ``(s_{i-1}, s_i]`` (a size between two samples takes the
choice of the next larger one), the first range starts at 0 and the last ends at
:data:`SIZE_MAX`; consecutive samples with the same (algorithm, protocol, channels) merge into
one line. Channels: ring and tree at a size run on
:func:`designer.engine.traffic.collectives.sizing.channels_in_use` of the algorithm's full count,
NVLS / NVLS-tree on their full count; CollNet and PAT (whose channel counts the engine does not
model) and RCCL hosts (their own channel rules) keep ``-1``.
"""
from __future__ import annotations

from designer.engine.analysis.nccl_tests import compile_topology, predict_sweep
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.traffic.collectives import ALGORITHMS
from designer.engine.traffic.collectives.common import group_of
from designer.engine.traffic.collectives.sizing import channels_full, channels_in_use, runs_rccl
from designer.engine.traffic.workloads import resolve_selector

__all__ = ["COLUMNS", "TUNER_OPS", "ALGORITHM_NAMES", "PROTOCOL_NAMES", "SIZE_MAX", "tuner_rows", "tuner_csv"]

#: The example plugin's 10 fields, in order (``plugin.c`` ``CONFIG_FIELD_*``).
COLUMNS = ("collective_type", "min_bytes", "max_bytes", "algorithm", "protocol", "channels", "nNodes",
           "nRanks", "numPipeOps", "regBuff")
#: nccl-tests op → the plugin's collective name, for the collectives this engine predicts.
TUNER_OPS = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter"}
#: Engine algorithm → the plugin's name (the engine's CollNet is CollNet Direct: collnet.py).
ALGORITHM_NAMES = {"ring": "ring", "tree": "tree", "collnet": "collnet_direct", "nvls": "nvls",
                   "nvlstree": "nvls_tree", "pat": "pat"}
#: Engine protocol → the plugin's name.
PROTOCOL_NAMES = {"LL": "ll", "LL128": "ll128", "Simple": "simple"}
#: Upper end of the last range: ``size_t``'s maximum on a 64-bit host (``strtoull`` reads it).
SIZE_MAX = 2 ** 64 - 1


def _check_ops(ops) -> list[str]:
    ops = list(ops)
    bad = [op for op in ops if op not in TUNER_OPS]
    if bad or not ops:
        raise InvalidScenario("bad tuner ops", [Problem(
            "ops", f"unknown op {bad[0]!r} (choose from {', '.join(TUNER_OPS)})" if bad else "no op given")])
    return ops


def _channels(topo, ranks, op: str, row: dict, with_channels: bool) -> int:
    """Channels the engine runs ``row``'s algorithm on at its size (-1: keep NCCL's)."""
    algorithm = row["algorithm"]
    if not with_channels or algorithm not in ("ring", "tree", "nvls", "nvlstree"):
        return -1
    group = group_of(topo, {"kind": TUNER_OPS[op], "bytes": row["size_bytes"], "participants": ranks})
    if runs_rccl(topo, group):
        return -1
    full = channels_full(topo, group, algorithm)
    return channels_in_use(full, row["size_bytes"], algorithm, row["protocol"], group.n)


def _choice(topo, ranks, op: str, row: dict, with_channels: bool) -> tuple[str, str, int]:
    algorithm, protocol = ALGORITHM_NAMES.get(row["algorithm"]), PROTOCOL_NAMES.get(row["protocol"])
    if algorithm is None or protocol is None:
        raise InvalidScenario("no tuner name", [Problem(
            "ops", f"{op} at {row['size_bytes']} B: the engine chose {row['algorithm']}/{row['protocol']}, "
                   "which NCCL's tuner plugin has no name for")])
    return algorithm, protocol, _channels(topo, ranks, op, row, with_channels)


def _merge(choices: list[tuple[int, tuple]]) -> list[tuple[int, int, tuple]]:
    """``(sample size, choice)`` in size order → ``(min, max, choice)`` ranges, inclusive,
    covering 0…:data:`SIZE_MAX` with no gap or overlap."""
    ranges = []
    low = 0
    for k, (size, choice) in enumerate(choices):
        high = SIZE_MAX if k == len(choices) - 1 else size
        if ranges and ranges[-1][2] == choice:
            ranges[-1] = (ranges[-1][0], high, choice)
        else:
            ranges.append((low, high, choice))
        low = high + 1
    return ranges


def tuner_rows(topology_or_build, *, ops=tuple(TUNER_OPS), min_bytes="8", max_bytes="8G", factor: int = 2,
               participants=None, routing: dict | None = None, channels: bool = True) -> list[dict]:
    """Tuner-plugin lines (one dict per CSV line, keys :data:`COLUMNS`) from the engine's choices.

    Parameters
    ----------
    topology_or_build : Topology or dict
        As :func:`designer.engine.analysis.nccl_tests.compile_topology` (compiled once).
    ops : iterable of str
        nccl-tests op names among :data:`TUNER_OPS`.
    min_bytes, max_bytes : int or str
        The sampled sizes in bytes (``"8G"`` accepted), as nccl-tests' ``-b``/``-e``.
    factor : int
        Multiplication factor between samples (``-f``).
    participants : dict, optional
        Selector of the ranks (default every GPU).
    routing : dict, optional
        The scenario's ``routing`` (NIC policy, multipath, seed).
    channels : bool
        Write the engine's channel count; False writes ``-1`` (keep NCCL's).

    Returns
    -------
    list of dict
        Per op, size ranges in increasing order; ``min_bytes``/``max_bytes`` inclusive, the
        first from 0, the last to :data:`SIZE_MAX`.

    Raises
    ------
    InvalidScenario, InvalidWorkload, InvalidTopology
        A bad op, size or topology (located), or a choice the plugin cannot name.
    """
    ops = _check_ops(ops)
    topo = compile_topology(topology_or_build)
    ranks = resolve_selector(topo, participants or {"kind": "gpu"}, "participants")
    nodes = len({topo.node_host[int(i)] for i in ranks})
    out = []
    for op in ops:
        # Each algorithm predicted on its own and the fastest kept: the file overrides NCCL's
        # choice, so it names what the engine predicts fastest, not what NCCL (or a net plugin's
        # tuner) would pick anyway.
        sweep = predict_sweep(topo, op, min_bytes=min_bytes, max_bytes=max_bytes, factor=factor,
                              participants=participants, routing=routing, fastest_of=ALGORITHMS)
        choices = [(row["size_bytes"], _choice(topo, ranks, op, row, channels)) for row in sweep]
        for low, high, (algorithm, protocol, nch) in _merge(choices):
            out.append(dict(zip(COLUMNS, (TUNER_OPS[op], low, high, algorithm, protocol, nch, nodes,
                                          len(ranks), -1, -1))))
    return out


def tuner_csv(rows: list[dict], comment: str = "") -> str:
    """The plugin's CSV text of :func:`tuner_rows`: ``#`` comment lines (``comment``, then the
    column names), one line per row, no spaces (the plugin splits on commas only)."""
    lines = [f"# {line}" for line in comment.splitlines() if line.strip()]
    lines.append("# " + ",".join(COLUMNS))
    lines += [",".join(str(row[c]) for c in COLUMNS) for row in rows]
    return "\n".join(lines) + "\n"
