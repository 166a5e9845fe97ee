"""Chakra execution traces (MLCommons) → a Fabricscope job.

Format (mlcommons/chakra ``schema/protobuf/et_def.proto``; the feeder ``et_feeder`` reads it the
same way): one ``.et`` file per rank, a stream of varint-length-prefixed protobuf messages — a
``GlobalMetadata`` first, then one ``Node`` per operation::

    Node { uint64 id = 1; string name = 2; NodeType type = 3; repeated uint64 ctrl_deps = 4;
           repeated uint64 data_deps = 5; uint64 start_time_micros = 6; uint64 duration_micros = 7;
           IOInfo inputs = 8; IOInfo outputs = 9; repeated AttributeProto attr = 10; ... }

with ``attr`` entries ``comm_type`` (``CollectiveCommType``), ``comm_size`` (bytes), ``comm_src``,
``comm_dst`` (ranks) and ``pg_name`` (the communicator). The communicator-group file is JSON,
``{"<pg_name>": [ranks...]}``, as Chakra's PyTorch converter writes it. The wire format is read by
:mod:`designer.engine.io.protowire` (bounded, no ``protobuf`` package).

The job (docs/FORMATS.md, Jobs): one phase per node id (``n<id>``, ``label`` the node's name),
``after`` its control and data dependencies. A ``COMP_NODE`` (and ``MEM_LOAD``/``MEM_STORE``,
local work) computes for its ``duration_micros``; a ``COMM_COLL_NODE`` runs its collective
(``ALL_REDUCE`` → allreduce, ``ALL_GATHER`` → allgather, ``REDUCE_SCATTER``/``_BLOCK`` →
reducescatter, ``ALL_TO_ALL`` → alltoall, ``BROADCAST``/``REDUCE``/``GATHER``/``SCATTER`` → the
rooted kinds, rooted at the group's first rank) of ``comm_size`` bytes over its communicator;
``COMM_SEND_NODE``/``COMM_RECV_NODE`` of one id form a p2p pattern of the send side's pairs;
``METADATA_NODE`` and ``BARRIER`` order phases only. Rank ``r`` is ``gpu_ids[r]``, the design's
GPUs in rank order.

Ranks are merged by node id, the way an SPMD program's traces line up: every rank must give a
node id the same class (compute, collective, p2p, other); a phase lasts as long as its slowest
rank's compute; a collective whose ranks name different communicators runs over all of them at
once (one pattern, several groups). Traces are read one rank at a time and folded into that
merge, so memory grows with the nodes of one rank, not with ranks × nodes; a rank whose file is
byte-identical to one already read is not decoded again. Traces whose ranks run different
programs (pipeline stages with different node ids for the same step) are outside this reading.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from designer.engine.errors import ImportFormatError, LimitExceeded, Problem
from designer.engine.io.protowire import (FIXED32, FIXED64, LENGTH, VARINT, WireError, fixed32_float,
                                          fixed64_double, length_end, packed_varints, read_varint, skip_field,
                                          to_signed64, zigzag)
from designer.engine.io.simai import MAX_PHASES

__all__ = ["NODE_TYPES", "COLLECTIVES", "MAX_RANKS", "MAX_TRACE_BYTES", "MAX_NODES_PER_RANK", "MAX_GROUPS_BYTES",
           "ChakraImport", "read_trace", "parse_groups", "chakra_job"]

NODE_TYPES = {0: "INVALID_NODE", 1: "METADATA_NODE", 2: "MEM_LOAD_NODE", 3: "MEM_STORE_NODE", 4: "COMP_NODE",
              5: "COMM_SEND_NODE", 6: "COMM_RECV_NODE", 7: "COMM_COLL_NODE", 8: "STORAGE_NODE", 9: "BATCH_NODE",
              10: "CHECKPOINT_NODE"}
#: CollectiveCommType → pattern kind (None: BARRIER, an ordering point without data).
COLLECTIVES = {0: "allreduce", 1: "reduce", 2: "allgather", 3: "gather", 4: "scatter", 5: "broadcast",
               6: "alltoall", 7: "reducescatter", 8: "reducescatter", 9: None}
_ROOTED = {"reduce", "gather", "scatter", "broadcast"}
# Node type → how it is merged: local time, a collective, a point-to-point transfer, or order only.
_CLASS = {1: "order", 2: "compute", 3: "compute", 4: "compute", 5: "p2p", 6: "p2p", 7: "coll",
          8: "compute", 9: "compute", 10: "compute"}
#: Most ranks read (Chakra traces of the largest published runs have a few thousand ranks).
MAX_RANKS = 65_536
#: Largest single rank file, in bytes (50,000 nodes of ~200 bytes is 10 MB).
MAX_TRACE_BYTES = 256 * 1024 * 1024
#: Most nodes one rank may hold (the job is then still bounded by its phase limit).
MAX_NODES_PER_RANK = 1_000_000
#: Largest communicator-group file, in bytes.
MAX_GROUPS_BYTES = 16 * 1024 * 1024
_MAX_NAME = 256
_MAX_PROBLEMS = 20
_INT_FIELDS = {7, 9, 11, 13}         # int32, int64, uint32, uint64 values of AttributeProto
_WANTED = {"comm_type", "comm_size", "comm_src", "comm_dst", "pg_name"}


@dataclass
class ChakraImport:
    """What :func:`chakra_job` returns.

    Attributes
    ----------
    workload : dict
        ``{"job": {...}}`` — a scenario's ``workload``.
    summary : dict
        ``ranks``, ``distinct_rank_files`` (SPMD ranks share one), ``nodes`` (node type →
        count over every rank), ``phases``, ``bytes_by_collective`` (kind → bytes summed over
        every rank's nodes), ``groups`` (communicators used → size).
    warnings : list of str
    """

    workload: dict
    summary: dict
    warnings: list = field(default_factory=list)


def _where(label: str, pos: int) -> str:
    return f"{label} byte {pos:,}"


def read_trace(data: bytes, label: str = "trace"):
    """The nodes of one rank's ``.et`` bytes, in file order.

    Yields
    ------
    tuple
        ``(offset, id, name, type, deps, duration_us, attrs)`` per node, ``deps`` a tuple of
        node ids (control then data), ``attrs`` the wanted attributes (name → value).

    Raises
    ------
    ImportFormatError
        Located at ``<label> byte N``: empty file, truncated varint or message, a length past
        the end, an unknown node type, too many nodes.
    """
    if len(data) > MAX_TRACE_BYTES:
        raise ImportFormatError("trace too large", [Problem(label, f"{len(data):,} bytes, over the limit of "
                                                            f"{MAX_TRACE_BYTES:,}")])
    buf, end = memoryview(data), len(data)
    try:
        start, pos = length_end(buf, 0, end)          # GlobalMetadata
    except WireError as exc:
        raise _located(label, exc, "no GlobalMetadata message") from None
    count = 0
    while pos < end:
        count += 1
        if count > MAX_NODES_PER_RANK:
            raise LimitExceeded("trace too large", [Problem(_where(label, pos), f"more than {MAX_NODES_PER_RANK:,} "
                                                                                "nodes in one rank")])
        try:
            start, pos = length_end(buf, pos, end)
            yield (start, *_node(buf, start, pos))
        except WireError as exc:
            raise _located(label, exc) from None


def _located(label: str, exc: WireError, prefix: str = "") -> ImportFormatError:
    what = f"{prefix}: {exc.message}" if prefix else exc.message
    return ImportFormatError("malformed Chakra trace", [Problem(_where(label, exc.offset), what)])


def _node(buf, pos: int, end: int) -> tuple:
    """``(id, name, type, deps, duration_us, attrs)`` of the Node in ``buf[pos:end]``."""
    nid, name, ntype, dur, deps, attrs = 0, "", 0, 0, [], {}
    node_start = pos
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        f, wt = key >> 3, key & 7
        if wt == VARINT and f in (1, 3, 4, 5, 7):
            v, pos = read_varint(buf, pos, end)
            if f == 1:
                nid = v
            elif f == 3:
                ntype = v
            elif f == 7:
                dur = v
            else:
                deps.append(v)
        elif wt == LENGTH and f in (2, 4, 5, 10):
            s, pos = length_end(buf, pos, end)
            if f == 10:
                _attr(buf, s, pos, attrs)
            elif f == 2:
                name = _text(buf, s, min(pos, s + 4 * _MAX_NAME))[:_MAX_NAME]
            else:
                deps.extend(packed_varints(buf, s, pos))
        else:
            pos = skip_field(buf, wt, pos, end)
    if ntype not in _CLASS:
        raise WireError(node_start, f"node {nid}: unknown node type {ntype} "
                                    f"({NODE_TYPES.get(ntype, 'not in the schema')})")
    return nid, name, ntype, tuple(deps), dur, attrs


def _text(buf, start: int, stop: int) -> str:
    return bytes(buf[start:stop]).decode("utf-8", errors="replace")


def _attr(buf, pos: int, end: int, attrs: dict) -> None:
    """Fold one AttributeProto into ``attrs`` when its name is one the import reads."""
    name, value = None, None
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        f, wt = key >> 3, key & 7
        if f == 1 and wt == LENGTH:
            s, pos = length_end(buf, pos, end)
            name = _text(buf, s, pos) if pos - s <= 64 else None
        elif wt == VARINT:
            v, pos = read_varint(buf, pos, end)
            value = to_signed64(v) if f in _INT_FIELDS else zigzag(v) if f in (15, 17) else bool(v) if f == 27 else v
        elif f == 29 and wt == LENGTH:
            s, pos = length_end(buf, pos, end)
            value = _text(buf, s, min(pos, s + 4 * _MAX_NAME))[:_MAX_NAME]
        elif f == 3 and wt == FIXED64:
            value, pos = fixed64_double(buf, pos, end), pos + 8
        elif f == 5 and wt == FIXED32:
            value, pos = fixed32_float(buf, pos, end), pos + 4
        else:
            pos = skip_field(buf, wt, pos, end)
    if name in _WANTED:
        attrs[name] = value


def parse_groups(text: str | bytes, label: str = "groups") -> dict:
    """The communicator groups: pg name → list of ranks.

    Raises
    ------
    ImportFormatError
        Located at ``<label>["<pg>"][k]``: not JSON, not an object of rank lists, a rank that is
        not an integer >= 0, a rank listed twice in one group, a file over the size limit.
    """
    if len(text) > MAX_GROUPS_BYTES:
        raise ImportFormatError("groups file too large", [Problem(label, f"{len(text):,} bytes, over the limit "
                                                                  f"of {MAX_GROUPS_BYTES:,}")])
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ImportFormatError("bad groups file", [Problem(label, f"not JSON ({str(exc)[:80]})")]) from None
    if not isinstance(raw, dict):
        raise ImportFormatError("bad groups file", [Problem(label, 'expected {"<pg_name>": [ranks...]}')])
    problems, out = [], {}
    for pg, ranks in raw.items():
        where = f"{label}[{pg[:_MAX_NAME]!r}]"
        if len(pg) > _MAX_NAME or not isinstance(ranks, list) or not ranks:
            problems.append(Problem(where, f"expected a non-empty list of ranks under a name of at most "
                                           f"{_MAX_NAME} characters"))
            continue
        bad = [k for k, r in enumerate(ranks) if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < MAX_RANKS]
        if bad:
            problems.append(Problem(f"{where}[{bad[0]}]", f"expected a rank in 0..{MAX_RANKS - 1}, got {ranks[bad[0]]!r}"))
        elif len(set(ranks)) != len(ranks):
            problems.append(Problem(where, "lists a rank twice"))
        else:
            out[pg] = ranks
        if len(problems) >= _MAX_PROBLEMS:
            break
    if problems:
        raise ImportFormatError("bad groups file", problems)
    return out


def trace_rank(name: str) -> int | None:
    """The rank in a trace file name (``trace.3.et``, ``rank_3.et``, ``3.et``), or None."""
    m = re.search(r"(\d{1,6})(?:\.et)?$", name)
    return int(m.group(1)) if m else None


class _Merge:
    """Nodes of every rank folded by node id: ``entries[id] = [order, class, name, dur_us, kind,
    size, pgs, pairs, deps]``, plus the summary counts."""

    def __init__(self, groups: dict, ranks: int):
        self.groups, self.ranks = groups, ranks
        self.entries: dict = {}
        self.types: dict = {}
        self.bytes: dict = {}
        self.used: set = set()
        self.warnings: list = []

    def add_rank(self, rank: int, label: str, nodes) -> None:
        seen_ids, deps_all = set(), []
        entries, types = self.entries, self.types
        for off, nid, name, ntype, deps, dur, attrs in nodes:
            types[ntype] = types.get(ntype, 0) + 1
            if nid in seen_ids:
                raise _bad(label, off, f"node id {nid} appears twice")
            seen_ids.add(nid)
            cls = _CLASS[ntype]
            e = entries.get(nid)
            if e is None:
                if len(entries) >= MAX_PHASES:
                    raise LimitExceeded("trace too large", [Problem(_where(label, off), f"more than {MAX_PHASES:,} "
                                                                    "distinct nodes (the job's phase limit)")])
                e = entries[nid] = [len(entries), cls, name, 0, None, 0, set(), set(), set(deps)]
            elif e[1] != cls:
                raise _bad(label, off, f"node {nid} is a {NODE_TYPES[ntype]} here but a {e[1]} node on another rank "
                                       "(ranks must run the same program: SPMD traces only)")
            else:
                e[8].update(deps)
            if dur > e[3]:
                e[3] = dur
            if deps:
                deps_all.append((off, nid, deps))
            if cls == "coll":
                self._coll(e, rank, label, off, nid, attrs)
            elif cls == "p2p":
                self._p2p(e, rank, label, off, nid, ntype, attrs)
        for off, nid, deps in deps_all:
            for d in deps:
                if d not in seen_ids:
                    raise _bad(label, off, f"node {nid} depends on node {d}, which this rank does not have")

    def _coll(self, e, rank, label, off, nid, attrs) -> None:
        ctype = attrs.get("comm_type")
        if ctype not in COLLECTIVES:
            raise _bad(label, off, f"node {nid}: collective without a known comm_type (got {ctype!r})")
        kind = COLLECTIVES[ctype]
        if e[4] is None:
            e[4] = kind or "barrier"
        elif e[4] != (kind or "barrier"):
            raise _bad(label, off, f"node {nid}: {kind or 'barrier'} here, {e[4]} on another rank")
        size = _size(attrs, label, off, nid)
        e[5] = max(e[5], size)
        pg = attrs.get("pg_name")
        pg = str(pg) if pg is not None else None
        if pg is not None and pg not in self.groups:
            raise _bad(label, off, f"node {nid}: communicator {pg!r} is not in the groups file")
        if pg is not None and rank not in self.groups[pg]:
            raise _bad(label, off, f"node {nid}: communicator {pg!r} does not hold rank {rank}")
        e[6].add(pg)
        if kind:
            self.bytes[kind] = self.bytes.get(kind, 0) + size

    def _p2p(self, e, rank, label, off, nid, ntype, attrs) -> None:
        peer_key = "comm_dst" if ntype == 5 else "comm_src"
        peer = attrs.get(peer_key)
        if not isinstance(peer, int) or not 0 <= peer < self.ranks or peer == rank:
            raise _bad(label, off, f"node {nid}: {peer_key} {peer!r} is not another rank in 0..{self.ranks - 1}")
        size = _size(attrs, label, off, nid)
        e[5] = max(e[5], size)
        e[7].add((rank, peer) if ntype == 5 else (peer, rank))
        if ntype == 5:
            self.bytes["p2p"] = self.bytes.get("p2p", 0) + size


def _size(attrs, label, off, nid) -> int:
    size = attrs.get("comm_size", 0)
    if not isinstance(size, int) or not 0 <= size <= 1 << 50:
        raise _bad(label, off, f"node {nid}: comm_size {size!r} is not a byte count in 0..2^50")
    return size


def _bad(label: str, off: int, message: str) -> ImportFormatError:
    return ImportFormatError("invalid Chakra trace", [Problem(_where(label, off), message)])


def chakra_job(traces, groups_text: str | bytes | None, gpu_ids: list[str], *, name: str = "chakra") -> ChakraImport:
    """A job of Chakra ``.et`` traces, ranks mapped onto ``gpu_ids``.

    Parameters
    ----------
    traces : list of (str, bytes or callable)
        ``(file name, content)`` per rank; the rank is the number at the end of the name
        (``trace.3.et``), or the position in the list when the names carry none. A callable
        content is called when that rank is read (one rank in memory at a time).
    groups_text : str or bytes or None
        The communicator-group JSON; None when no node names a ``pg_name``.
    gpu_ids : list of str
        The design's GPU ids in rank order.

    Raises
    ------
    ImportFormatError
        Located (file, byte offset, node id): malformed wire data, unknown node type, ranks
        missing or twice, more ranks than GPUs, a communicator that does not hold its rank,
        dependencies on absent nodes, ranks that disagree on a node.
    LimitExceeded
        More ranks, bytes or distinct nodes than the limits.
    """
    ranked = _rank_files(traces, len(gpu_ids))
    groups = parse_groups(groups_text) if groups_text is not None else {}
    _check_group_ranks(groups, len(ranked))
    merge = _Merge(groups, len(ranked))
    digests: dict = {}
    distinct: set = set()
    for rank, (label, content) in enumerate(ranked):
        data = content() if callable(content) else content
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ImportFormatError("bad trace", [Problem(label, "expected the bytes of a .et file")])
        digest = hashlib.blake2b(data, digest_size=16).digest()
        distinct.add(digest)
        nodes = digests.get(digest)
        if nodes is None:
            nodes = list(read_trace(data, f"rank {rank} ({label})"))
            if not nodes:
                raise ImportFormatError("empty trace", [Problem(f"rank {rank} ({label})", "no Node after the metadata")])
            if len(digests) < 4:          # SPMD ranks with identical files decode once
                digests[digest] = nodes
        merge.add_rank(rank, f"rank {rank} ({label})", nodes)
    phases = _phases(merge, gpu_ids)
    summary = {"ranks": len(ranked), "distinct_rank_files": len(distinct),
               "nodes": {NODE_TYPES[t]: c for t, c in sorted(merge.types.items())}, "phases": len(phases),
               "bytes_by_collective": dict(sorted(merge.bytes.items())),
               "groups": {pg: len(groups[pg]) for pg in sorted(merge.used)}}
    return ChakraImport({"job": {"name": name, "source": "chakra", "phases": phases}}, summary, merge.warnings)


def _rank_files(traces, gpus: int) -> list:
    traces = list(traces)
    if not traces:
        raise ImportFormatError("no trace", [Problem("traces", "give one .et file per rank")])
    if len(traces) > MAX_RANKS:
        raise LimitExceeded("too many ranks", [Problem("traces", f"{len(traces):,} files, over {MAX_RANKS:,}")])
    ranks = [trace_rank(str(n)) for n, _ in traces]
    if None in ranks or len(set(ranks)) != len(ranks):
        ranks = list(range(len(traces)))
    by_rank = dict(zip(ranks, traces))
    missing = [r for r in range(len(traces)) if r not in by_rank]
    if missing:
        raise ImportFormatError("ranks missing", [Problem("traces", f"files for ranks 0..{len(traces) - 1} "
                                                          f"expected; rank {missing[0]} has none "
                                                          f"({by_rank[max(by_rank)][0]!r} is rank {max(by_rank)})")])
    if len(traces) > gpus:
        raise ImportFormatError("more ranks than GPUs", [Problem("traces", f"{len(traces):,} ranks, the design has "
                                                                 f"{gpus:,} GPUs")])
    return [(str(by_rank[r][0]), by_rank[r][1]) for r in range(len(traces))]


def _check_group_ranks(groups: dict, ranks: int) -> None:
    for pg, members in groups.items():
        high = max(members)
        if high >= ranks:
            raise ImportFormatError("groups and traces disagree", [Problem(
                f"groups[{pg!r}][{members.index(high)}]", f"rank {high} has no trace ({ranks} rank files given)")])


def _phases(merge: _Merge, gpu_ids: list[str]) -> list[dict]:
    phases = []
    for nid, e in merge.entries.items():
        _, cls, name, dur, kind, size, pgs, pairs, deps = e
        ph = {"id": f"n{nid}", "after": [f"n{d}" for d in sorted(deps)]}
        if name:
            ph["label"] = name
        if cls == "compute" and dur:
            ph["compute_s"] = dur / 1_000_000
        elif cls == "coll" and kind != "barrier" and size > 0:
            ph["patterns"] = _collective(merge, nid, kind, size, pgs, gpu_ids)
        elif cls == "p2p" and pairs and size > 0:
            ph["patterns"] = _p2p_patterns(nid, size, pairs, gpu_ids)
        if not ph.get("patterns"):
            ph.pop("patterns", None)
        phases.append(ph)
    return phases


def _collective(merge: _Merge, nid, kind: str, size: int, pgs: set, gpu_ids: list[str]) -> list[dict]:
    """One pattern over the node's communicators (the world when it names none); a rooted kind,
    which runs on one communicator, gets one pattern per communicator."""
    groups = []
    for pg in sorted(pgs, key=str):
        ranks = merge.groups[pg] if pg is not None else list(range(merge.ranks))
        if pg is not None:
            merge.used.add(pg)
        if len(ranks) > 1:
            groups.append([gpu_ids[r] for r in ranks])
    flat = [g for grp in groups for g in grp]
    if len(set(flat)) != len(flat):
        raise ImportFormatError("overlapping communicators", [Problem(
            f"node {nid}", f"its ranks name communicators {sorted(map(str, pgs))} that share a rank; one "
                           "collective cannot run on both")])
    if kind in _ROOTED:
        return [{"id": f"n{nid}.g{k}", "kind": kind, "bytes": size, "participants": {"ids": g}}
                for k, g in enumerate(groups)]
    return [{"id": f"n{nid}", "kind": kind, "bytes": size, "groups": groups}] if groups else []


def _p2p_patterns(nid, size: int, pairs: set, gpu_ids: list[str]) -> list[dict]:
    """Send pairs split into rounds of disjoint pairs (a p2p pattern's groups must not share a
    GPU), each round one pattern of two-member groups (member 0 sends to member 1)."""
    rounds: list = []
    for src, dst in sorted(pairs):
        for busy, members in rounds:
            if src not in busy and dst not in busy:
                busy.update((src, dst))
                members.append([gpu_ids[src], gpu_ids[dst]])
                break
        else:
            rounds.append(({src, dst}, [[gpu_ids[src], gpu_ids[dst]]]))
    return [{"id": f"n{nid}.p{k}", "kind": "p2p", "bytes": size, "groups": members}
            for k, (_, members) in enumerate(rounds)]
